#!/usr/bin/env python3
"""Every command's options, and the environment variables, agree in the help, the manual page and
docs/commands.md.

usage: options.py AREC BUILD_DIR SOURCE_DIR

Three sides: `arec --help` and `arec help COMMAND` (the "Options:" of each page, and the main page's
"Environment"), the manual page the build wrote (BUILD_DIR/cli/arec.1, the one installed: GLOBAL
OPTIONS, each "arec COMMAND" section, ENVIRONMENT), and docs/commands.md (the sections "Global
options" and "Environment" and one section "`arec COMMAND`" per command, whose table rows name options
or variables in backticks in their first cell). The help and the manual are both made from the
command table, so they part only when one is stale or edited by hand; the docs page is written by
hand, so it is what this test mostly holds to the table. A command, option or variable on one side and
not on another fails, naming it and the side that lacks it. Positional arguments are not compared
(their names are internal to the table); `-h,--help`, which every command takes, is compared among
the global options only, as the manual lists it there once.
"""
import os
import re
import subprocess
import sys

GLOBAL = "(global)"
ENVIRONMENT = "(environment)"
HELP = "-h", "--help"


def run(arec, *args):
    done = subprocess.run([arec, *args], capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        sys.exit(f"arec {' '.join(args)} exited {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def read(path, why=""):
    try:
        return open(path, encoding="utf-8").read()
    except OSError as e:
        sys.exit(f"{path}: {e.strerror}{why}")


def help_options(page):
    """The option names of a help page's "Options:" block (`  -v,--verbose Excludes: --quiet` gives both)."""
    names, inside = set(), False
    for line in page.splitlines():
        if line == "Options:":
            inside = True
        elif inside and not line.strip():
            break
        elif inside and line.startswith("  -"):
            names.update(line.split()[0].split(","))
    return names


def from_help(arec):
    main = run(arec, "--help")
    block = re.search(r"^Subcommands:\n(.*?)\n\n", main, re.S | re.M)
    if not block:
        sys.exit("arec --help: no \"Subcommands:\" list")
    commands = [line.split()[0] for line in block.group(1).splitlines() if line.strip()]
    sides = {GLOBAL: help_options(main)}
    variables = re.search(r"^Environment.*?\n(.*?)(?:\n\n|\Z)", main, re.S | re.M)
    sides[ENVIRONMENT] = set(re.findall(r"^  ([A-Z][A-Z0-9_]+) ", variables.group(1), re.M)) if variables else set()
    for c in commands:
        sides[c] = help_options(run(arec, "help", c)) - set(HELP)
    return sides


def from_manual(path):
    sides, current = {}, None
    lines = read(path, " (the build writes the manual page: target arec_docs)").splitlines()
    for i, line in enumerate(lines):
        if line in (sections := {".SH GLOBAL OPTIONS": GLOBAL, ".SH ENVIRONMENT": ENVIRONMENT}):
            current = sections[line]
            sides[current] = set()
        elif line.startswith(".SH "):
            current = None
        elif m := re.fullmatch(r'\.SS "arec (.+)"', line):
            current = m.group(1).replace("\\-", "-")
            sides[current] = set()
        elif line == ".TP" and current is not None and i + 1 < len(lines):
            # An option's names are the bold words of the line after its .TP (a positional's is italic),
            # a variable's the one word after .B.
            if current == ENVIRONMENT:
                sides[current].update(re.findall(r"^\.B (\S+)$", lines[i + 1]))
                continue
            sides[current].update(n.replace("\\-", "-") for n in re.findall(r"\\fB(.+?)\\fR", lines[i + 1]))
    return sides


def from_docs(path):
    sides, current = {}, None
    for n, line in enumerate(read(path).splitlines(), 1):
        if m := re.fullmatch(r"## `arec ([a-z-]+)`", line):
            current = m.group(1)
            if current in sides:
                sys.exit(f"{path}:{n}: a second section for arec {current}")
            sides[current] = set()
        elif line in (sections := {"## Global options": GLOBAL, "## Environment": ENVIRONMENT}):
            current = sections[line]
            sides[current] = set()
        elif line.startswith("#"):
            current = None
        elif current is not None and line.startswith("|") and not re.match(r"\|\s*(option|variable|---)", line):
            cell = line.split("|")[1]
            pattern = r"`([A-Z][A-Z0-9_]+)`" if current == ENVIRONMENT else r"`(--?[A-Za-z0-9][A-Za-z0-9-]*)"
            names = re.findall(pattern, cell)
            if not names:
                sys.exit(f"{path}:{n}: a row of {current} names nothing in its first cell")
            sides[current].update(names)
    return sides


def compare(sides):
    """One line for each command or option some side has and another lacks."""
    problems = []
    commands = sorted(set().union(*(s.keys() for s in sides.values())), key=lambda c: (c not in (GLOBAL, ENVIRONMENT), c))
    for c in commands:
        where = {GLOBAL: "the global options", ENVIRONMENT: "the environment"}.get(c, f"arec {c}")
        missing = [side for side, s in sides.items() if c not in s]
        if missing:
            problems.append(f"{where}: not in {' or '.join(missing)}")
            continue
        for option in sorted(set().union(*(s[c] for s in sides.values()))):
            for side, s in sides.items():
                if option not in s[c]:
                    problems.append(f"{where}: {option} is not in {side}")
    return problems


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.strip().splitlines()[3])
    arec, build, root = sys.argv[1:]
    manual = os.path.join(build, "cli", "arec.1")
    docs = os.path.join(root, "docs", "commands.md")
    sides = {
        "the help (arec help COMMAND)": from_help(arec),
        f"the manual page ({manual})": from_manual(manual),
        "docs/commands.md": from_docs(docs),
    }
    problems = compare(sides)
    for p in problems:
        print(p)
    if problems:
        print(f"FAIL: {len(problems)} disagreements between the help, the manual page and docs/commands.md")
        sys.exit(1)
    docs = sides["docs/commands.md"]
    count = sum(len(s) for c, s in docs.items() if c != ENVIRONMENT)
    print(f"PASS: {len(docs) - 2} commands, {count} options and {len(docs[ENVIRONMENT])} variables, the same in all three")


if __name__ == "__main__":
    main()
