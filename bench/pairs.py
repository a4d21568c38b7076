#!/usr/bin/env python3
"""Times two commands in alternating pairs and prints their medians as JSON.

A shared machine's speed drifts over seconds (here one command's runs ranged from 71 to 116 ms); timed
one block after the other (as hyperfine does), two equal commands can differ by a fifth, and even the
ratio of two medians taken across the same runs moved by 0.17. Run in pairs, A then B, then B then A,
the two runs of a pair see the same machine, so the ratio is the median of the pairs' ratios.

  pairs.py [--runs N] [--warmup N] [--prepare SHELL-COMMAND] COMMAND-A COMMAND-B

Each COMMAND is split into words (no shell) and run with its output discarded; a failure stops the run.
Prints {"a": {"wall": s, "cpu": s}, "b": {...}, "ratio": {"wall": A/B, "cpu": A/B}, "runs": N}: medians
of the runs in seconds, and of the pairs' ratios; cpu is user + system.
"""
import argparse
import json
import resource
import shlex
import statistics
import subprocess
import sys
import time


def timed(words, prepare):
    if prepare:
        subprocess.run(prepare, shell=True, check=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(words, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"pairs.py: {shlex.join(words)} failed ({done.returncode}): {done.stderr.decode(errors='replace')}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--prepare", default="")
    p.add_argument("a")
    p.add_argument("b")
    args = p.parse_args()
    commands = [shlex.split(args.a), shlex.split(args.b)]
    for _ in range(args.warmup):
        for words in commands:
            timed(words, args.prepare)
    times = [[], []]
    for i in range(args.runs):
        order = (0, 1) if i % 2 == 0 else (1, 0)
        for k in order:
            times[k].append(timed(commands[k], args.prepare))
    out = {"runs": args.runs}
    for key, series in zip(("a", "b"), times):
        out[key] = {"wall": statistics.median(t[0] for t in series), "cpu": statistics.median(t[1] for t in series)}
    out["ratio"] = {kind: statistics.median(a[k] / b[k] for a, b in zip(*times)) for k, kind in enumerate(("wall", "cpu"))}
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
