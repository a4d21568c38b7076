#!/usr/bin/env python3
"""Checks the dependency graph ARCHITECTURE.md allows against the code, in every build.

The graph is the fenced block under "### The library graph" in ARCHITECTURE.md: one line per CMake
target of the sources, `target -> dep dep …`, the targets it may use directly (what they may use, it
may use too). Every source file belongs to the target whose add_library/add_executable lists it (a
header to the target of its .cpp, or the one listing the header itself when it has none). Refused,
each named with the file and the line: a source file of no target, an #include of a file of a target
the includer's target may not use, an #include of a header private to another folder (*_internal.hpp),
and a target_link_libraries of an arec_* target the graph does not allow.

It also checks that ARCHITECTURE.md's table "Where things live" names every source file: a cell
`folder/stem`, then bare stems of the same folder (`oci/digest`, `oci`).

`includes.py ROOT` checks ROOT. `includes.py --self-test ROOT` also proves the check can fail: it
copies ROOT's sources, adds a forbidden include, and expects the check to name it.
"""
import os
import re
import shutil
import sys
import tempfile

SOURCE_DIRS = None  # the folders that hold targets, found from the graph


def read_graph(root):
    text = open(os.path.join(root, "ARCHITECTURE.md"), encoding="utf-8").read()
    m = re.search(r"^### The library graph\n.*?^```\n(.*?)^```", text, re.S | re.M)
    if not m:
        sys.exit("ARCHITECTURE.md: no fenced block under \"### The library graph\"")
    graph = {}
    for n, line in enumerate(m.group(1).splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if "->" not in line:
            sys.exit(f"ARCHITECTURE.md library graph line {n}: expected 'target -> deps', got {line!r}")
        target, deps = line.split("->", 1)
        graph[target.strip()] = set(deps.split())
    for target, deps in graph.items():
        for d in deps:
            if d not in graph:
                sys.exit(f"ARCHITECTURE.md library graph: {target} -> {d}, which the graph does not list")
    return graph


def closure(graph):
    allowed = {}
    for target in graph:
        seen, todo = set(), list(graph[target])
        while todo:
            d = todo.pop()
            if d not in seen:
                seen.add(d)
                todo.extend(graph[d])
        allowed[target] = seen
    return allowed


CMAKE_TARGET = re.compile(r"\badd_(library|executable)\(\s*([A-Za-z0-9_:]+)([^)]*)\)", re.S)
CMAKE_LINK = re.compile(r"\btarget_link_libraries\(\s*([A-Za-z0-9_]+)([^)]*)\)", re.S)


def strip_cmake_comments(text):
    return re.sub(r"#[^\n]*", "", text)


def read_targets(root, folders):
    """file (relative to root) -> target; target -> [(linked target, CMakeLists, line)]."""
    owner, links = {}, {}
    for folder in folders:
        path = os.path.join(root, folder, "CMakeLists.txt")
        if not os.path.exists(path):
            continue
        raw = open(path, encoding="utf-8").read()
        text = strip_cmake_comments(raw)
        for m in CMAKE_TARGET.finditer(text):
            name, args = m.group(2), m.group(3).split()
            if "ALIAS" in args or "INTERFACE" in args or "IMPORTED" in args:
                continue
            for a in args:
                if re.fullmatch(r"[A-Za-z0-9_./-]+\.(cpp|hpp)", a):
                    owner[os.path.normpath(os.path.join(folder, a))] = name
        for m in CMAKE_LINK.finditer(text):
            line = text[: m.start()].count("\n") + 1
            for dep in re.findall(r"\b(arec_[a-z_]+)\b", m.group(2)):
                if dep != "arec_warnings":
                    links.setdefault(m.group(1), []).append((dep, f"{folder}/CMakeLists.txt", line))
    # A header belongs to the target of its .cpp unless a target lists it itself.
    for f, t in list(owner.items()):
        if f.endswith(".cpp"):
            owner.setdefault(f[:-4] + ".hpp", t)
    return owner, links


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def source_folders(root):
    return sorted({f for f in os.listdir(root) if os.path.isfile(os.path.join(root, f, "CMakeLists.txt"))} -
                  {"tests", "examples", "cmake-module"} - {f for f in os.listdir(root) if f.startswith("build")})


def check(root):
    graph = read_graph(root)
    allowed = closure(graph)
    folders = source_folders(root)
    owner, links = read_targets(root, folders)
    problems = []
    for folder in folders:
        for name in sorted(os.listdir(os.path.join(root, folder))):
            if not name.endswith((".cpp", ".hpp")):
                continue
            rel = os.path.join(folder, name)
            mine = owner.get(rel)
            if mine is None:
                problems.append(f"{rel}: belongs to no target (list it in {folder}/CMakeLists.txt)")
                continue
            if mine not in graph:
                problems.append(f"{rel}: its target {mine} is not in ARCHITECTURE.md's library graph")
                continue
            text = open(os.path.join(root, rel), encoding="utf-8").read()
            for m in INCLUDE.finditer(text):
                inc = os.path.normpath(m.group(1))
                if inc.endswith("_internal.hpp") and os.path.dirname(inc) != folder:
                    line = text[: m.start()].count("\n") + 1
                    problems.append(f'{rel}:{line}: #include "{m.group(1)}", a header private to {os.path.dirname(inc)}/')
                    continue
                theirs = owner.get(inc)
                if theirs is None or theirs == mine or theirs in allowed[mine]:
                    continue
                line = text[: m.start()].count("\n") + 1
                problems.append(f'{rel}:{line}: #include "{m.group(1)}" makes {mine} use {theirs}, '
                                f"which ARCHITECTURE.md's library graph does not allow")
    for target, deps in sorted(links.items()):
        if target not in graph:
            continue
        for dep, where, line in deps:
            if dep in graph and dep not in allowed[target]:
                problems.append(f"{where}:{line}: {target} links {dep}, which ARCHITECTURE.md's library graph does not allow")
    return problems


def listed_files(root):
    """The folder/stem names of the table "Where things live"."""
    text = open(os.path.join(root, "ARCHITECTURE.md"), encoding="utf-8").read()
    m = re.search(r"^### Where things live\n(.*?)^#", text, re.S | re.M)
    if not m:
        return None
    names = set()
    for row in m.group(1).splitlines():
        if not row.startswith("| `"):
            continue
        folder = None
        for token in re.findall(r"`([^`]+)`", row.split("|")[1]):
            if "/" in token:
                folder, token = token.rsplit("/", 1)
            if folder:
                names.add(f"{folder}/{token}")
    return names


def check_listed(root):
    names = listed_files(root)
    if names is None:
        return ["ARCHITECTURE.md: no table under \"### Where things live\""]
    problems = []
    for folder in source_folders(root):
        for name in sorted(os.listdir(os.path.join(root, folder))):
            stem, ext = os.path.splitext(name)
            if ext in (".cpp", ".hpp") and f"{folder}/{stem}" not in names:
                problems.append(f"{folder}/{name}: not named in ARCHITECTURE.md's \"Where things live\"")
    return sorted(set(problems))


def self_test(root):
    """The check names a forbidden include (addressing may not use the store) and a private header
    included from another folder (cli may not include registry-client's transfer_internal.hpp)."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "tree")
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".git", "build*", "tests"))
        victim = os.path.join(copy, "addressing", "text_position.cpp")
        with open(victim, "a", encoding="utf-8") as f:
            f.write('\n#include "store/store.hpp"\n')
        private = os.path.join(copy, "cli", "main.cpp")
        with open(private, "a", encoding="utf-8") as f:
            f.write('\n#include "registry-client/transfer_internal.hpp"\n')
        problems = check(copy)
        found = [p for p in problems if p.startswith("addressing/text_position.cpp:") and "store/store.hpp" in p]
        if not found:
            print("self-test: a forbidden include (store/store.hpp in addressing/text_position.cpp) went unnoticed")
            return False
        print(f"self-test: a forbidden include is refused: {found[0]}")
        found = [p for p in problems if p.startswith("cli/main.cpp:") and "transfer_internal.hpp" in p]
        if not found:
            print("self-test: a private header (registry-client/transfer_internal.hpp in cli/main.cpp) went unnoticed")
            return False
        print(f"self-test: a private header of another folder is refused: {found[0]}")
        return True


def main():
    args = sys.argv[1:]
    selftest = args[:1] == ["--self-test"]
    root = os.path.abspath(args[-1] if args and args[-1] != "--self-test" else ".")
    problems = check(root) + check_listed(root)
    for p in problems:
        print(p)
    ok = not problems
    if ok:
        print("the includes and links of every target follow ARCHITECTURE.md's library graph, which names every source file")
    if selftest:
        ok = self_test(root) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
