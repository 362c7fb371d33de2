#!/usr/bin/env python3
"""Several files in one run: `rdblens report` on K copies of one dump (the
shards of a cluster) at --threads 1 and 2, best of N wall times, and the
speed-up of 2 threads over 1. Also times the per-shard workflow: K
`report --summary-only` runs, their summary size, and one `merge`.

    cargo build --release -p rdblens
    python3 benches/bench_shards.py /tmp/bench/dump-20mb.rdb [--copies 1 2 4 8] [--runs 3]

Without a dump path, one is generated first with benches/gen_corpus.py
(needs redis-server): `--generate-mb 20` (default) into --workdir.

"cores busy" is CPU seconds (user + system) over wall seconds: the walker
thread that finds entry boundaries runs beside the workers, so even
--threads 1 keeps a little more than one core busy.

The copies are real copies (not links) in --workdir (default: a temporary
directory), so each has its own page-cache pages, as shards on one disk
would. Page cache is warm: every configuration runs once before it is timed.
Prints Markdown tables for docs/performance.md.
"""
import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "rdblens")


def timed(cmd, runs, with_cpu=False):
    """Best wall time of `runs` runs, after one warm-up run (and the CPU
    seconds, user + system, of that run)."""
    best = None
    for i in range(runs + 1):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if proc.returncode not in (0, 1):
            sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode()[-500:]}")
        if i > 0 and (best is None or wall < best[0]):
            best = (wall, cpu)
    return best if with_cpu else best[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dump", nargs="?", help="the dump to copy (default: generate one)")
    ap.add_argument("--copies", type=int, nargs="+", default=[1, 2, 4, 8])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workdir", help="where copies go (default: a temporary directory)")
    ap.add_argument("--generate-mb", type=int, default=20)
    args = ap.parse_args()
    if not os.path.exists(BIN):
        sys.exit(f"{BIN} missing: cargo build --release -p rdblens")
    work = args.workdir or tempfile.mkdtemp(prefix="rdblens-shards-")
    os.makedirs(work, exist_ok=True)
    dump = args.dump
    if dump is None:
        dump = os.path.join(work, f"dump-{args.generate_mb}mb.rdb")
        if not os.path.exists(dump):
            subprocess.run(
                [sys.executable, os.path.join(ROOT, "benches", "gen_corpus.py"),
                 "--out", dump, "--size-mb", str(args.generate_mb), "--seed", "3"],
                check=True,
            )
    size = os.path.getsize(dump)
    kmax = max(args.copies)
    copies = []
    for i in range(kmax):
        path = os.path.join(work, f"node-{i + 1}.rdb")
        if not os.path.exists(path) or os.path.getsize(path) != size:
            shutil.copyfile(dump, path)
        copies.append(path)
    print(f"dump: {dump} ({size / 1e6:.1f} MB), {os.cpu_count()} cores, best of {args.runs}")
    print()
    print("### One run over K files (`rdblens report FILE... --format json -q`)")
    print()
    head = "| files | MB | " + " | ".join(
        f"{t} thread{'s' if t > 1 else ''}: wall (cores busy)" for t in args.threads
    )
    head += " | speed-up | MB/s at " + str(max(args.threads)) + " |"
    print(head)
    print("|" + "---:|" * (4 + len(args.threads)))
    for k in args.copies:
        files = copies[:k]
        runs = []
        for t in args.threads:
            cmd = [BIN, "report", *files, "--format", "json", "-q", "--threads", str(t), "-o", os.devnull]
            runs.append(timed(cmd, args.runs, with_cpu=True))
        mb = size * k / 1e6
        cells = " | ".join(f"{w:.2f} s ({c / w:.2f})" for w, c in runs)
        print(f"| {k} | {mb:.0f} | {cells} | {runs[0][0] / runs[-1][0]:.2f}x | {mb / runs[-1][0]:.0f} |")
    print()
    # The per-shard workflow: one summary per shard (on its own host, so one
    # after the other here, each with every thread), then one merge.
    k = kmax
    summaries = []
    total_summary = 0.0
    for i, path in enumerate(copies[:k]):
        out = os.path.join(work, f"node-{i + 1}.json")
        total_summary += timed([BIN, "report", path, "--summary-only", "-q", "-o", out], args.runs)
        summaries.append(out)
    summary_bytes = os.path.getsize(summaries[0])
    merge_json = timed([BIN, "merge", *summaries, "--format", "json", "-o", os.devnull], args.runs)
    merge_table = timed([BIN, "merge", *summaries, "-o", os.devnull], args.runs)
    print(f"### Per shard, then merge ({k} shards)")
    print()
    print("| step | wall | notes |")
    print("|---|---:|---|")
    print(f"| `report --summary-only`, per shard | {total_summary / k:.2f} s | summary {summary_bytes / 1024:.0f} KiB |")
    print(f"| `merge` of {k} summaries, JSON report | {merge_json:.2f} s | |")
    print(f"| `merge` of {k} summaries, tables | {merge_table:.2f} s | |")
    if not args.workdir:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
