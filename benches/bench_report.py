#!/usr/bin/env python3
"""Whole-command benchmark: wall time, CPU seconds, MB/s and peak RssAnon.

Runs, on one dump and in one go: the rdblens report (every section) at 1 and
2 threads, rdblens keys (CSV), the parse-only walk (parse-bench), and the
crates.io `rdb` crate parse-only baseline (inside parse-bench), printing a
Markdown table for docs/performance.md.

    cargo build --release -p rdblens -p rdblens-bench
    python3 benches/bench_report.py /tmp/bench/dump-1gb.rdb [--runs 3]

Peak RssAnon (anonymous memory, not counting the mapped file's pages) is
sampled from /proc/PID/status every 5 ms; CPU seconds come from
getrusage of the child.
"""
import argparse
import os
import resource
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release")


def rss_kb(pid):
    """(RssAnon, VmRSS) of a process in KiB: anonymous memory, and the whole
    resident set including the mapped file's pages."""
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


def evict(path):
    """Drops the file's pages from the page cache (no root needed), for cold runs."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def run(cmd, cold=None):
    """Returns (wall s, cpu s, peak RssAnon KiB, peak RSS KiB). `cold`: a
    file evicted from the page cache first."""
    if cold:
        evict(cold)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = peak_total = 0
    while proc.poll() is None:
        anon, total = rss_kb(proc.pid)
        peak, peak_total = max(peak, anon), max(peak_total, total)
        time.sleep(0.005)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.read().decode()[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, peak, peak_total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dump")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--giant", action="append", default=[],
                    help="also measure memory on this dump (one giant value: benches/gen_giants.py)")
    ap.add_argument("--no-cold", action="store_true", help="skip the cold-cache run")
    args = ap.parse_args()
    size = os.path.getsize(args.dump)
    rdblens = os.path.join(BIN, "rdblens")
    cases = [
        ("report, 1 thread", [rdblens, "report", args.dump, "--threads", "1", "--format", "json", "-o", "/dev/null", "-q"]),
        ("report, 2 threads", [rdblens, "report", args.dump, "--threads", "2", "--format", "json", "-o", "/dev/null", "-q"]),
        ("keys --format csv", [rdblens, "keys", args.dump, "-q"]),
    ]
    # Warm the page cache.
    subprocess.run(["cat", args.dump], stdout=subprocess.DEVNULL, check=True)
    print(f"dump: {args.dump} ({size / 1e6:.1f} MB), best of {args.runs} runs, page cache warm, {os.cpu_count()} cores")
    print()
    print("| command | wall s | CPU s | MB/s | peak RssAnon MiB | peak RSS MiB |")
    print("|---|---:|---:|---:|---:|---:|")
    results = {}

    def row(name, best, mb):
        wall, cpu, anon, total = best
        print(f"| {name} | {wall:.2f} | {cpu:.2f} | {mb / wall:.0f} | {anon / 1024:.0f} | {total / 1024:.0f} |")
        sys.stdout.flush()

    for name, cmd in cases:
        best = min((run(cmd) for _ in range(args.runs)), key=lambda r: r[0])
        results[name] = best
        row(name, best, size / 1e6)
    if not args.no_cold:
        # Cold: the dump is read from the disk (one run: it evicts the cache).
        row("report, 2 threads, cold cache", run(cases[1][1], cold=args.dump), size / 1e6)
        subprocess.run(["cat", args.dump], stdout=subprocess.DEVNULL, check=True)
    for giant in args.giant:
        gsize = os.path.getsize(giant)
        subprocess.run(["cat", giant], stdout=subprocess.DEVNULL, check=True)
        cmd = [rdblens, "report", giant, "--threads", "2", "--top", "1000", "--depth", "4",
               "--format", "json", "-o", "/dev/null", "-q"]
        row(f"report --top 1000 --depth 4, {os.path.basename(giant)} ({gsize / 1e6:.0f} MB)",
            run(cmd), gsize / 1e6)
    one, two = results["report, 1 thread"][0], results["report, 2 threads"][0]
    print()
    print(f"scaling 1 -> 2 threads: {one / two:.2f}x")
    print()
    sys.stdout.flush()
    subprocess.run([os.path.join(BIN, "parse-bench"), args.dump, "--runs", str(args.runs)], check=True)


if __name__ == "__main__":
    main()
