#!/usr/bin/env python3
"""Checks that no C++ source file of the tree is over 700 lines.

A file that grows past that is doing more than one thing: split it by what it does (a private
`*_internal.hpp` holds what the parts share), as store/history.cpp and history_schema.cpp are.

`sizes.py ROOT` checks every .cpp and .hpp under ROOT (build directories and hidden ones left out).
`sizes.py --self-test ROOT` also proves the check can fail: it copies ROOT's sources, grows one file
past the limit, and expects the check to name it.
"""
import os
import shutil
import sys
import tempfile

LIMIT = 700


def skipped(name):
    return name.startswith(".") or name.startswith("build") or name == "node_modules"


def check(root):
    problems = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not skipped(d))
        for name in sorted(files):
            if not name.endswith((".cpp", ".hpp")):
                continue
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8", errors="replace") as f:
                lines = sum(1 for _ in f)
            if lines > LIMIT:
                rel = os.path.relpath(path, root)
                problems.append(f"{rel}: {lines} lines, over {LIMIT}: split it by what it does")
    return problems


def self_test(root):
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "tree")
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".*", "build*", "node_modules"))
        victim = os.path.join(copy, "util", "paths.cpp")
        with open(victim, "a", encoding="utf-8") as f:
            f.write("// grown\n" * (LIMIT + 1))
        found = [p for p in check(copy) if p.startswith("util/paths.cpp:")]
        if not found:
            print("self-test: util/paths.cpp grown past the limit went unnoticed")
            return False
        print(f"self-test: a file over the limit is refused: {found[0]}")
        return True


def main():
    args = sys.argv[1:]
    selftest = args[:1] == ["--self-test"]
    root = os.path.abspath(args[-1] if args and args[-1] != "--self-test" else ".")
    problems = check(root)
    for p in problems:
        print(p)
    ok = not problems
    if ok:
        print(f"every C++ source file is at most {LIMIT} lines")
    if selftest:
        ok = self_test(root) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
