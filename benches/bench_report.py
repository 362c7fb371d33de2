#!/usr/bin/env python3
"""Whole-command benchmark: rdblens beside the crates.io `rdb` crate, in one run.

For each dump (the cache-like corpus of gen_corpus.py and the
collection-heavy one of gen_collections.py), runs in rounds, interleaved so
that a change of machine load hits every command alike:

- the `rdb` crate's command-line tool, parse only (`rdb --format nil DUMP`);
- `rdblens report` (every section, JSON) at 1 and at 2 threads;
- `rdblens keys` (CSV);
- with `--section S` (repeatable), a 2-thread report of those sections;

and prints, per dump, the median wall time, CPU seconds, MB/s and peak
anonymous memory of each, then the ratios the performance issue asks for:
full report vs rdb, 1 -> 2 thread speed-up, keys CSV vs rdb (from the
medians, and again from each command's fastest round). The load
average before and after is printed with the figures: on a shared machine
absolute times move, ratios measured in one run hold better.

    cargo build --release -p rdblens
    cargo install rdb --version ^0.4 --locked --root /tmp/rdbtool   # the `rdb` binary
    python3 benches/bench_report.py /tmp/bench/dump-1gb-s4.rdb /tmp/bench/collections.rdb \\
        --rdb /tmp/rdbtool/bin/rdb --runs 3

Peak RssAnon (anonymous memory, not counting the mapped file's pages) and
VmRSS are sampled from /proc/PID/status every 5 ms, in one more round of
every command after the timed ones: the sampling loop takes CPU time from
a 2-core machine's cores (2-thread reports of prod-1g: median 1.053 s
sampled against 1.046 s not, 7 interleaved pairs; 1 thread 1.930 against
1.924 s). CPU seconds come from getrusage of the child. `--rdblens BIN` measures another build (e.g. the
main branch's, for a before/after in one run: `--rdblens A --rdblens B`).
"""
import argparse
import os
import resource
import statistics
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


def warm(path):
    subprocess.run(["cat", path], stdout=subprocess.DEVNULL, check=True)


def run(cmd, cold=None, memory=False):
    """Returns (wall s, cpu s, peak RssAnon KiB, peak RSS KiB); the peaks
    are 0 unless `memory` (sampled, see the module docs). `cold`: a file
    evicted from the page cache first."""
    if cold:
        evict(cold)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = peak_total = 0
    while memory and proc.poll() is None:
        anon, total = rss_kb(proc.pid)
        peak, peak_total = max(peak, anon), max(peak_total, total)
        time.sleep(0.005)
    proc.wait()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.read().decode()[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, peak, peak_total


def median_run(samples, peaks):
    """Median wall and CPU over the timed runs, and the peaks of the
    memory-sampled run."""
    return (statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples),
            peaks[2], peaks[3])


def load():
    return "%.2f %.2f %.2f" % os.getloadavg()


def cases_for(dump, builds, rdb, sections):
    out = []
    if rdb:
        out.append(("rdb crate: `rdb --format nil`", [rdb, "--format", "nil", dump]))
    for label, exe in builds:
        out += [
            (f"{label}report, 1 thread", [exe, "report", dump, "--threads", "1", "--format", "json", "-o", "/dev/null", "-q"]),
            (f"{label}report, 2 threads", [exe, "report", dump, "--threads", "2", "--format", "json", "-o", "/dev/null", "-q"]),
            (f"{label}keys --format csv", [exe, "keys", dump, "--format", "csv", "-q"]),
        ]
        for sec in sections:
            out.append((f"{label}report --section {sec}, 2 threads",
                        [exe, "report", dump, "--threads", "2", "--format", "json", "--section", sec,
                         "-o", "/dev/null", "-q"]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dumps", nargs="+")
    ap.add_argument("--runs", type=int, default=3, help="rounds; figures are medians (default 3)")
    ap.add_argument("--rdb", help="the rdb crate's binary (cargo install rdb --version ^0.4); omitted: no baseline")
    ap.add_argument("--rdblens", action="append", default=[],
                    help="rdblens binary to measure (repeatable; default target/release/rdblens)")
    ap.add_argument("--giant", action="append", default=[],
                    help="also measure memory on this dump (one giant value: benches/gen_giants.py)")
    ap.add_argument("--cold", action="store_true", help="add a cold-cache 2-thread report per dump")
    ap.add_argument("--parse-bench", action="store_true", help="also run parse-bench on each dump")
    ap.add_argument("--section", action="append", default=[],
                    help="also a 2-thread report of these sections (repeatable, e.g. ttl or ttl,expiry)")
    args = ap.parse_args()
    exes = args.rdblens or [os.path.join(BIN, "rdblens")]
    builds = [("" if len(exes) == 1 else f"[{i}] ", exe) for i, exe in enumerate(exes)]
    for i, exe in enumerate(exes):
        if len(exes) > 1:
            print(f"[{i}] = {exe}")
    print(f"{os.cpu_count()} cores, page cache warm, medians of {args.runs} interleaved rounds (memory: one more, sampled); "
          f"load average at start: {load()}")
    for dump in args.dumps:
        size = os.path.getsize(dump)
        mb = size / 1e6
        cases = cases_for(dump, builds, args.rdb, args.section)
        warm(dump)
        samples = {name: [] for name, _ in cases}
        for _ in range(args.runs):
            for name, cmd in cases:
                samples[name].append(run(cmd))
        peaks = {name: run(cmd, memory=True) for name, cmd in cases}
        print()
        print(f"### {os.path.basename(dump)} ({mb:.1f} MB); load average after: {load()}")
        print()
        print("| command | wall s | CPU s | MB/s | peak RssAnon MiB | peak RSS MiB |")
        print("|---|---:|---:|---:|---:|---:|")
        med = {}
        for name, _ in cases:
            m = med[name] = median_run(samples[name], peaks[name])
            wall, cpu, anon, total = m
            print(f"| {name} | {wall:.2f} | {cpu:.2f} | {mb / wall:.0f} | {anon / 1024:.0f} | {total / 1024:.0f} |")
        if args.cold:
            name, cmd = next(c for c in cases if c[0].endswith("report, 2 threads"))
            wall, cpu, anon, total = run(cmd, cold=dump, memory=True)
            print(f"| {name}, cold cache | {wall:.2f} | {cpu:.2f} | {mb / wall:.0f} | {anon / 1024:.0f} | {total / 1024:.0f} |")
            warm(dump)
        print()
        for label, _ in builds:
            one, two = med[f"{label}report, 1 thread"][0], med[f"{label}report, 2 threads"][0]
            keys = med[f"{label}keys --format csv"][0]
            line = f"{label}ratios: 1 -> 2 threads {one / two:.2f}x"
            if args.rdb:
                base = med["rdb crate: `rdb --format nil`"][0]
                line += f"; report (2 threads) vs rdb {base / two:.2f}x; keys csv vs rdb {base / keys:.2f}x"
            # Per-round ratios too: each round's commands ran back to back.
            per_round = [s1[0] / s2[0] for s1, s2 in zip(samples[f"{label}report, 1 thread"], samples[f"{label}report, 2 threads"])]
            line += f" (1 -> 2 per round: {', '.join('%.2f' % r for r in per_round)})"
            print(line)
            # Each command's fastest round: the one least slowed by other
            # tenants of a shared machine (the first performance issue's
            # figures were best of 5). Printed beside the medians, not instead.
            best = {name: min(s[0] for s in samples[name]) for name, _ in cases}
            one, two = best[f"{label}report, 1 thread"], best[f"{label}report, 2 threads"]
            line = f"{label}best of {args.runs}: 1 -> 2 threads {one / two:.2f}x"
            if args.rdb:
                base = best["rdb crate: `rdb --format nil`"]
                keys = best[f"{label}keys --format csv"]
                line += f"; report (2 threads) vs rdb {base / two:.2f}x; keys csv vs rdb {base / keys:.2f}x"
            print(line)
        sys.stdout.flush()
        if args.parse_bench:
            print()
            subprocess.run([os.path.join(BIN, "parse-bench"), dump, "--runs", str(args.runs)], check=True)
    for giant in args.giant:
        gsize = os.path.getsize(giant)
        warm(giant)
        print()
        print("| command | wall s | CPU s | MB/s | peak RssAnon MiB | peak RSS MiB |")
        print("|---|---:|---:|---:|---:|---:|")
        for label, exe in builds:
            cmd = [exe, "report", giant, "--threads", "2", "--top", "1000", "--depth", "4",
                   "--format", "json", "-o", "/dev/null", "-q"]
            wall, cpu, anon, total = run(cmd, memory=True)
            print(f"| {label}report --top 1000 --depth 4, {os.path.basename(giant)} ({gsize / 1e6:.0f} MB) "
                  f"| {wall:.2f} | {cpu:.2f} | {gsize / 1e6 / wall:.0f} | {anon / 1024:.0f} | {total / 1024:.0f} |")
    print()
    print(f"load average at end: {load()}")


if __name__ == "__main__":
    main()
