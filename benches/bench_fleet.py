#!/usr/bin/env python3
"""Fleet figures for docs/fleet.md.

Many small shards in one report: N dumps (copies of a few generated with
benches/gen_corpus.py, distinct seeds) in one `rdblens report`, its wall
time and peak anonymous memory (RssAnon: not counting the mapped dumps'
pages) and peak RSS:

    cargo build --release -p rdblens
    python3 benches/bench_fleet.py shards --shards 200 --shard-mb 4 --workdir /tmp/fleet

Per-key data: `rdblens keys` of one dump as CSV, as a Parquet dataset
(`-o DIR`) and as one Parquet file, best wall time of --runs, CPU seconds
and output size:

    python3 benches/gen_corpus.py --size-mb 300 --seed 1 --out /tmp/fleet/corpus-300.rdb
    python3 benches/bench_fleet.py keys /tmp/fleet/corpus-300.rdb --runs 3

Prints Markdown table rows.
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


def status_kb(pid):
    """(RssAnon, VmRSS) of a running process in KiB."""
    anon = total = 0
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    anon = int(line.split()[1])
                elif line.startswith("VmRSS:"):
                    total = int(line.split()[1])
    except OSError:
        pass
    return anon, total


def run(cmd):
    """(wall s, CPU s, peak RssAnon KiB, peak RSS KiB), sampled every 5 ms."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak_anon = peak_rss = 0
    while proc.poll() is None:
        anon, rss = status_kb(proc.pid)
        peak_anon, peak_rss = max(peak_anon, anon), max(peak_rss, rss)
        time.sleep(0.005)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.read().decode()[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, peak_anon, peak_rss


def size_of(path):
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)
    return os.path.getsize(path)


def shards(args):
    os.makedirs(args.workdir, exist_ok=True)
    seeds = []
    for seed in range(1, args.seeds + 1):
        path = os.path.join(args.workdir, f"seed-{seed}.rdb")
        if not os.path.exists(path):
            subprocess.run(
                [sys.executable, os.path.join(ROOT, "benches", "gen_corpus.py"), "--out", path,
                 "--size-mb", str(args.shard_mb), "--seed", str(seed)],
                check=True, stdout=subprocess.DEVNULL,
            )
        seeds.append(path)
    shard_dir = os.path.join(args.workdir, f"shards-{args.shards}")
    os.makedirs(shard_dir, exist_ok=True)
    files = []
    for i in range(args.shards):
        path = os.path.join(shard_dir, f"node-{i:03d}.rdb")
        if not os.path.exists(path):
            shutil.copyfile(seeds[i % len(seeds)], path)
        files.append(path)
    total = sum(os.path.getsize(f) for f in files)
    out = os.path.join(args.workdir, "report.json")
    cmd = [args.rdblens, "report", *files, "--format", "json", "-q", "-o", out]
    run(cmd)  # warm the page cache
    wall, cpu, anon, rss = run(cmd)
    print("| shards | total | wall s | CPU s | peak RssAnon | peak RSS |")
    print("|---:|---:|---:|---:|---:|---:|")
    print(f"| {args.shards} | {total / 1e6:.0f} MB | {wall:.2f} | {cpu:.2f} | {anon / 1024:.0f} MiB | {rss / 1024:.0f} MiB |")


def keys(args):
    out_dir = tempfile.mkdtemp(prefix="bench-fleet-", dir=args.workdir)
    formats = [
        ("CSV", ["--format", "csv"], "keys.csv"),
        ("Parquet dataset (`-o DIR`)", ["--format", "parquet"], "dataset"),
        ("Parquet file (`-o FILE.parquet`)", ["--format", "parquet"], "keys.parquet"),
    ]
    print("| output | wall s | CPU s | MB/s of dump | output size | peak RssAnon |")
    print("|---|---:|---:|---:|---:|---:|")
    dump_mb = os.path.getsize(args.dump) / 1e6
    for name, flags, target in formats:
        best = None
        for _ in range(args.runs + 1):
            path = os.path.join(out_dir, target)
            shutil.rmtree(path, ignore_errors=True)
            if os.path.isfile(path):
                os.remove(path)
            result = run([args.rdblens, "keys", args.dump, "-q", *flags, "-o", path])
            if best is None or result[0] < best[0]:
                best = result
            size = size_of(path)
        wall, cpu, anon, _ = best
        print(f"| {name} | {wall:.2f} | {cpu:.2f} | {dump_mb / wall:.0f} | {size / 1e6:.1f} MB | {anon / 1024:.0f} MiB |")
    shutil.rmtree(out_dir)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rdblens", default=BIN)
    sub = parser.add_subparsers(dest="what", required=True)
    s = sub.add_parser("shards", help="many small shards in one report")
    s.add_argument("--shards", type=int, default=200)
    s.add_argument("--shard-mb", type=float, default=4)
    s.add_argument("--seeds", type=int, default=10, help="distinct dumps generated (the rest are copies)")
    s.add_argument("--workdir", default=tempfile.gettempdir())
    k = sub.add_parser("keys", help="keys as CSV and as Parquet")
    k.add_argument("dump")
    k.add_argument("--runs", type=int, default=3)
    k.add_argument("--workdir", default=tempfile.gettempdir())
    args = parser.parse_args()
    shards(args) if args.what == "shards" else keys(args)


if __name__ == "__main__":
    main()
