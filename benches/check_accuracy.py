#!/usr/bin/env python3
"""Compare rdblens' per-key memory estimates with a server's own answers.

    python3 benches/check_accuracy.py DUMP ORACLE [--rdblens PATH] [-- EXTRA RDBLENS ARGS]

ORACLE is what benches/dump_oracle.py writes: one line a key,
db TAB hex(key) TAB type TAB encoding TAB memory (MEMORY USAGE key SAMPLES 0
of a server that loaded DUMP). Runs `rdblens keys --format csv DUMP` (plus
any extra arguments, e.g. `--jemalloc-quantum 16`), joins the two by
(db, key) and prints:

- keys compared, keys missing on either side;
- the share of keys whose estimate is byte-exact and within 5 %;
- the total of the estimates against the sum of MEMORY USAGE;
- the same per (type, encoding), and encoding mismatches;
- the header line of `rdblens report` (the allocator it assumed and why).

Exits 1 if any key is missing on either side. Standard library only.
"""

from __future__ import annotations

import argparse
import codecs
import csv
import io
import subprocess
import sys
from collections import defaultdict

TYPE_NAMES = {"sortedset": "zset"}


def read_oracle(path: str) -> dict[tuple[int, bytes], tuple[str, str, int]]:
    out = {}
    with open(path, "rb") as f:
        for line in f:
            db, hexkey, typ, enc, mem = line.rstrip(b"\n").split(b"\t")
            out[(int(db), bytes.fromhex(hexkey.decode()))] = (typ.decode(), enc.decode(), int(mem))
    return out


def read_estimates(rdblens: str, dump: str, extra: list[str]) -> dict[tuple[int, bytes], tuple[str, str, int]]:
    cmd = [rdblens, "keys", "--format", "csv", "--quiet", dump, *extra]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, check=True)
    out = {}
    for row in csv.DictReader(io.TextIOWrapper(io.BytesIO(proc.stdout), encoding="utf-8", newline="")):
        key = row["key"]
        if row["key_escaped"] == "true":
            raw = codecs.escape_decode(key.encode("utf-8"))[0]
        else:
            raw = key.encode("utf-8")
        typ = TYPE_NAMES.get(row["type"], row["type"])
        out[(int(row["database"]), raw)] = (typ, row["encoding"], int(row["size_in_bytes"]))
    return out


def header_line(rdblens: str, dump: str, extra: list[str]) -> str:
    proc = subprocess.run([rdblens, "report", "--quiet", dump, *extra], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL)
    lines = proc.stdout.decode("utf-8", "replace").splitlines()
    return "\n".join(l for l in lines[:6] if "assumed" in l or "accuracy" in l or "estimated for" in l)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dump")
    ap.add_argument("oracle")
    ap.add_argument("--rdblens", default="target/release/rdblens")
    ap.add_argument("extra", nargs="*", help="extra arguments for rdblens (after --)")
    args = ap.parse_args()

    oracle = read_oracle(args.oracle)
    est = read_estimates(args.rdblens, args.dump, args.extra)
    common = oracle.keys() & est.keys()
    only_oracle = len(oracle.keys() - est.keys())
    only_est = len(est.keys() - oracle.keys())

    exact = within5 = 0
    sum_est = sum_mu = 0
    enc_mismatch = 0
    groups = defaultdict(lambda: [0, 0, 0, 0, 0])  # keys, exact, within5, est, mu
    for k in common:
        otyp, oenc, mu = oracle[k]
        _, eenc, e = est[k]
        g = groups[(otyp, oenc)]
        g[0] += 1
        sum_est += e
        sum_mu += mu
        g[3] += e
        g[4] += mu
        if e == mu:
            exact += 1
            g[1] += 1
        if abs(e - mu) <= 0.05 * mu:
            within5 += 1
            g[2] += 1
        if eenc != oenc:
            enc_mismatch += 1

    n = max(len(common), 1)
    print("dump          %s" % args.dump)
    print("rdblens args  %s" % (" ".join(args.extra) or "(none)"))
    head = header_line(args.rdblens, args.dump, args.extra)
    if head:
        print(head)
    print("keys          %d compared, %d only in the oracle, %d only in rdblens" % (len(common), only_oracle, only_est))
    print("byte-exact    %.2f %%" % (100.0 * exact / n))
    print("within 5 %%    %.2f %%" % (100.0 * within5 / n))
    print("total         estimate %d, MEMORY USAGE %d, error %+.4f %%" %
          (sum_est, sum_mu, 100.0 * (sum_est - sum_mu) / max(sum_mu, 1)))
    print("encodings     %d keys with a different encoding" % enc_mismatch)
    print("%-10s %-12s %10s %8s %8s %9s" % ("type", "encoding", "keys", "exact%", "5%", "total err%"))
    for (typ, enc), (keys, ex, w5, e, mu) in sorted(groups.items(), key=lambda kv: -kv[1][4]):
        print("%-10s %-12s %10d %8.2f %8.2f %+9.3f" %
              (typ, enc, keys, 100.0 * ex / keys, 100.0 * w5 / keys, 100.0 * (e - mu) / max(mu, 1)))
    return 1 if only_oracle or only_est else 0


if __name__ == "__main__":
    sys.exit(main())
