#!/usr/bin/env python3
"""Paired timing of two whole commands: A and B run alternately, N times
each (A, B, B, A, A, B... so that neither always runs first), and the
median of the per-pair ratios A/B is printed beside each command's
medians (wall, user, system seconds). A ratio above 1 means B is faster.

On a shared machine the load moves from one minute to the next; a pair
runs within seconds, so the ratio of a pair is steadier than either time.
This is how docs/performance.md's "paired" figures are measured.

    python3 benches/paired.py -n 11 \\
        --a 'target/release/rdblens report --format json --threads 1 /tmp/bench/dump-1gb-s4.rdb' \\
        --b 'target/release/rdblens report --format json --threads 2 /tmp/bench/dump-1gb-s4.rdb'

Each command's standard output is read and thrown away (as a pipe, the
way a user's `| head` or redirect would take it); a command that fails
stops the measurement.
"""
import argparse
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time


def run(cmd):
    """(wall, user, system) seconds of one run of `cmd`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    # stderr to a temporary file: read after the exit, it cannot fill a
    # pipe while stdout is drained.
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err)
        while proc.stdout.read(1 << 20):
            pass
        proc.wait()
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            err.seek(0)
            sys.exit(f"{shlex.join(cmd)} failed ({proc.returncode}): {err.read().decode()[-500:]}")
    return wall, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=9, help="pairs (default 9)")
    ap.add_argument("--a", required=True, help="command A (one shell-quoted string)")
    ap.add_argument("--b", required=True, help="command B")
    args = ap.parse_args()
    if args.n < 1:
        sys.exit("-n: at least 1 pair")
    a, b = shlex.split(args.a), shlex.split(args.b)
    runs = {"A": [], "B": []}
    for i in range(args.n):
        order = (("A", a), ("B", b)) if i % 2 == 0 else (("B", b), ("A", a))
        for name, cmd in order:
            runs[name].append(run(cmd))
    print(f"{args.n} pairs, alternating")
    print("| | wall s | user s | system s |")
    print("|---|---:|---:|---:|")
    for name in ("A", "B"):
        cols = list(zip(*runs[name]))
        print(f"| {name} | " + " | ".join(f"{statistics.median(c):.3f}" for c in cols) + " |")
    ratios = [ra[0] / rb[0] for ra, rb in zip(runs["A"], runs["B"])]
    print(f"A/B wall: median {statistics.median(ratios):.3f} (pairs {min(ratios):.3f}-{max(ratios):.3f})")


if __name__ == "__main__":
    main()
