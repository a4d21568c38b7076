#!/usr/bin/env python3
"""Every relative link of README.md and docs/*.md leads somewhere: the file exists and, when the link
names an anchor, the file has a heading of that anchor (GitHub's: lower case, punctuation dropped,
spaces made '-').

usage: links.py SOURCE_DIR
"""
import glob
import os
import re
import sys


def anchors(path):
    found, fenced = set(), False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (m := re.match(r"#+ (.*)", line)):
            found.add(re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-"))
    return found


def main():
    root = sys.argv[1]
    pages = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    problems, links = [], 0
    for page in pages:
        text = re.sub(r"```.*?```", lambda m: "\n" * m.group(0).count("\n"), open(page, encoding="utf-8").read(), flags=re.S)
        for n, line in enumerate(text.splitlines(), 1):
            for target in re.findall(r"\]\(([^)\s]+)\)", line):
                if re.match(r"[a-z]+:", target):
                    continue
                links += 1
                file, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(page), file)) if file else page
                where = f"{os.path.relpath(page, root)}:{n}: {target}"
                if not os.path.exists(dest):
                    problems.append(f"{where}: no file {os.path.relpath(dest, root)}")
                elif anchor and (not dest.endswith(".md") or anchor not in anchors(dest)):
                    problems.append(f"{where}: {os.path.relpath(dest, root)} has no heading #{anchor}")
    for p in problems:
        print(p)
    if problems:
        print(f"FAIL: {len(problems)} links lead nowhere")
        sys.exit(1)
    print(f"PASS: {links} links of {len(pages)} pages lead somewhere")


if __name__ == "__main__":
    main()
