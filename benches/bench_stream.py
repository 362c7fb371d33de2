#!/usr/bin/env python3
"""Streams through a pipe: what they cost and how they fail.

Three checks, each on the dumps given (standard library only):

`--speed`: `rdblens report DUMP` (the mapped file) against `cat DUMP |
rdblens report -` (the stream), interleaved, `--runs` rounds: the median
wall time of each and its user+sys CPU seconds (the stream's CPU includes
`cat`'s), and the stream's speed as a share of the mapped file's. With
`--url BASE`, also `rdblens report BASE/NAME` (the dump served over HTTP
with its `Content-Length`, e.g. by `python3 -m http.server`: a stream of
declared size). With `--before OTHER_RDBLENS`, every run is made with
that build too, in the same rounds, and printed on a row of its own.

`--memory`: `cat DUMP | rdblens report -` with `TMPDIR` set to an empty
directory of its own. Every 5 ms it samples the report's anonymous memory
(RssAnon) and its open files: the run fails if any open file lies under
TMPDIR (an unlinked `O_TMPFILE` copy is invisible to a directory listing,
not to /proc/PID/fd) or anything is left there, and prints the peak against
the limit of 256 MiB plus the largest value (`--largest-value BYTES`, 0 by
default).

`--kill N`: the stream killed at N random offsets of each dump (`--seed`):
a writer process sends the first bytes up to the offset, then is killed
with SIGKILL. Each report must exit 3 within `--timeout` seconds, with a
JSON report on standard output that says it is incomplete, and the byte
offset where the dump stops on standard error, never a panic.

    python3 benches/bench_stream.py DUMP... --rdblens target/release/rdblens \\
        --speed --memory --kill 20
"""

import argparse
import json
import os
import random
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time

LIMIT_MIB = 256
# The writer: copies the first N bytes of a file to standard output, says
# so on standard error, then waits to be killed.
WRITER = r"""
import os, sys, time
path, n = sys.argv[1], int(sys.argv[2])
with open(path, 'rb') as f:
    left = n
    while left:
        b = f.read(min(left, 1 << 20))
        if not b:
            break
        sys.stdout.buffer.write(b)
        left -= len(b)
sys.stdout.buffer.flush()
sys.stderr.write('sent\n')
sys.stderr.flush()
time.sleep(3600)
"""


def cpu_of_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd, shell=False):
    """(wall s, user+sys CPU s) of one run, which must exit 0."""
    before = cpu_of_children()
    start = time.perf_counter()
    proc = subprocess.run(cmd, shell=shell, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{cmd} failed ({proc.returncode}): {proc.stderr.decode()[-500:]}")
    return wall, cpu_of_children() - before


def speed(dump, builds, runs, args, url):
    subprocess.run(["cat", dump], stdout=subprocess.DEVNULL, check=True)
    extra = " ".join(args)
    name = os.path.basename(dump)
    ways = {"mapped": False, "stream": True}
    if url:
        ways["HTTP"] = False

    def command(rdblens, way):
        if way == "mapped":
            return [rdblens, "report", dump, "--format", "json", "-q"] + args
        if way == "HTTP":
            return [rdblens, "report", f"{url}/{name}", "--format", "json", "-q"] + args
        return f"cat '{dump}' | '{rdblens}' report - --format json -q {extra}"

    times = {(b, w): [] for b in builds for w in ways}
    for _ in range(runs):
        for b in builds:
            for w, shell in ways.items():
                times[(b, w)].append(timed(command(b, w), shell=shell))
    for b in builds:
        med = {
            w: (statistics.median(x for x, _ in times[(b, w)]), statistics.median(c for _, c in times[(b, w)]))
            for w in ways
        }

        def ratio(w):
            return statistics.median(m / x for (m, _), (x, _) in zip(times[(b, "mapped")], times[(b, w)]))

        cells = " | ".join(f"{med[w][0]:.2f} | {med[w][1]:.2f}" for w in ways)
        ratios = " | ".join(f"{ratio(w):.2f}" for w in ways if w != "mapped")
        label = "" if len(builds) == 1 else f" ({os.path.basename(os.path.dirname(os.path.dirname(os.path.dirname(b))))})"
        print(f"| {name}{label} | {cells} | {ratios} |")


def anon_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def files_under(pid, root):
    """The report's open files under `root` (deleted ones included)."""
    found = []
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return found
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith(root + "/") or target.startswith(root + " "):
            found.append(target)
    return found


def memory(dump, rdblens, largest_value):
    with tempfile.TemporaryDirectory(prefix="bench-stream-tmp-") as tmp:
        env = dict(os.environ, TMPDIR=tmp)
        cat = subprocess.Popen(["cat", dump], stdout=subprocess.PIPE)
        proc = subprocess.Popen(
            [rdblens, "report", "-", "--format", "json", "-q"],
            stdin=cat.stdout,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
        )
        cat.stdout.close()
        peak, opened, samples = 0, set(), 0
        while proc.poll() is None:
            peak = max(peak, anon_kib(proc.pid))
            opened.update(files_under(proc.pid, tmp))
            samples += 1
            time.sleep(0.005)
        cat.wait()
        err = proc.stderr.read().decode()
        left = os.listdir(tmp)
    limit = LIMIT_MIB * 1024 + largest_value // 1024
    ok = proc.returncode == 0 and not opened and not left and peak <= limit
    print(
        f"| {os.path.basename(dump)} | {os.path.getsize(dump) / 1e6:,.0f} MB | {peak / 1024:.0f} MiB "
        f"| {limit / 1024:.0f} MiB | {len(opened)} | {len(left)} | {samples} | {'ok' if ok else 'FAILED'} |"
    )
    if not ok:
        print(f"exit {proc.returncode}; open under TMPDIR: {sorted(opened)}; left: {left}; {err[-500:]}")
    return ok


OFFSET = re.compile(r"at byte offset (\d+)")


def kill_at(dump, rdblens, cut, timeout):
    """One stream killed after `cut` bytes: None when it went as it must,
    else what went wrong."""
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, dump, str(cut)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    proc = subprocess.Popen(
        [rdblens, "report", "-", "--format", "json", "-q"],
        stdin=writer.stdout,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    writer.stdout.close()
    writer.stderr.readline()  # "sent": every byte is in the pipe or read
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return f"no answer within {timeout} s (a hang)"
    err = err.decode(errors="replace")
    if "panicked" in err:
        return f"a panic: {err[-300:]}"
    if proc.returncode != 3:
        return f"exit {proc.returncode}: {err[-300:]}"
    try:
        report = json.loads(out)
    except ValueError as e:
        return f"no JSON report ({e})"
    if not report["files"][0].get("incomplete"):
        return "the report does not say it is incomplete"
    m = OFFSET.search(err)
    if not m:
        return f"no offset on standard error: {err[-300:]}"
    if int(m.group(1)) > cut:
        return f"offset {m.group(1)} past the cut at {cut}"
    return None


def kill(dump, rdblens, count, seed, timeout):
    rng = random.Random(f"{seed}:{os.path.basename(dump)}")
    size = os.path.getsize(dump)
    # The first 64 KiB hold the header; a cut there is a refusal (exit 2),
    # not a partial report.
    cuts = sorted(rng.randrange(1 << 16, size - 16) for _ in range(count))
    failed = 0
    start = time.perf_counter()
    for cut in cuts:
        why = kill_at(dump, rdblens, cut, timeout)
        if why:
            failed += 1
            print(f"  {os.path.basename(dump)} cut at {cut}: {why}")
    took = time.perf_counter() - start
    print(
        f"| {os.path.basename(dump)} | {count} | {count - failed} | {failed} | {took:.0f} s |"
    )
    return failed == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dumps", nargs="+")
    ap.add_argument("--rdblens", default="target/release/rdblens")
    ap.add_argument("--speed", action="store_true")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--memory", action="store_true")
    ap.add_argument("--largest-value", type=int, default=0, help="bytes of the dumps' largest value")
    ap.add_argument("--kill", type=int, default=0, metavar="N")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--args", default="", help="more report flags, e.g. '--threads 1'")
    ap.add_argument("--url", default="", help="--speed: the dumps served over HTTP under this base URL too")
    ap.add_argument("--before", default="", help="--speed: another build, run in the same rounds")
    a = ap.parse_args()
    rdblens = os.path.abspath(a.rdblens)
    ok = True
    if a.speed:
        builds = [rdblens] + ([os.path.abspath(a.before)] if a.before else [])
        head = "| dump | mapped wall s | mapped CPU s | stream wall s | stream CPU s (with cat) |"
        rule = "|---|---:|---:|---:|---:|"
        if a.url:
            head += " HTTP wall s | HTTP CPU s |"
            rule += "---:|---:|"
        head += " stream speed / mapped |" + (" HTTP speed / mapped |" if a.url else "")
        rule += "---:|" + ("---:|" if a.url else "")
        print(head)
        print(rule)
        for d in a.dumps:
            speed(d, builds, a.runs, a.args.split(), a.url.rstrip("/"))
    if a.memory:
        print("| dump | size | peak RssAnon | limit | open files under TMPDIR | left there | samples | |")
        print("|---|---:|---:|---:|---:|---:|---:|---|")
        for d in a.dumps:
            ok &= memory(d, rdblens, a.largest_value)
    if a.kill:
        print("| dump | kills | exit 3, partial report, offset | failed | time |")
        print("|---|---:|---:|---:|---:|")
        for d in a.dumps:
            ok &= kill(d, rdblens, a.kill, a.seed, a.timeout)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
