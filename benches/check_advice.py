#!/usr/bin/env python3
"""Check `rdblens advise` against a real redis-server (docs/advisor.md).

Starts a private redis-server on 127.0.0.1 (free port, temporary --dir, no
persistence of its own), builds a few big keys and a sprawling namespace,
SAVEs a dump, restarts the server on it, runs `rdblens advise --format json`
on it, then builds the planned layout in the same server (from the loaded
keys, with the plan's CRC32-modulo-N bucketing) and compares:

- each plan's memory_before with the sum of MEMORY USAGE (SAMPLES 0) of the
  original key(s) as loaded,
- each plan's memory_after with the sum of MEMORY USAGE of the planned keys,

both within --tolerance (2% by default). Exits 1 if any comparison fails.
The server is always shut down, also on error. Standard library only; the
RESP client and server handling are gen_corpus.py's.

    python3 benches/check_advice.py --rdblens target/release/rdblens \
        --jemalloc-quantum 16 --markdown /tmp/advice-check.md
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_corpus import Pipeline, Server, enc  # noqa: E402

HASH = "adv:hash:profile"
INTSET = "adv:set:ids"
STRSET = "adv:set:tags"
ZSET = "adv:zset:ranking"
NS = "advns"
NS_KEYS = 200_000


def build_originals(p: Pipeline, rng: random.Random):
    """The keys the plans are made for."""
    for i in range(20_000):
        value = "v%d-%s" % (i, "x" * rng.randint(8, 40))
        p.add(enc(b"HSET", HASH.encode(), b"field:%d" % i, value.encode()))
    for i in range(100_000):
        p.add(enc(b"SADD", INTSET.encode(), b"%d" % (i * 7 + 1_000_000)))
    for i in range(100_000):
        p.add(enc(b"SADD", STRSET.encode(), b"tag:%d:%08x" % (i, rng.getrandbits(32))))
    for i in range(10_000):
        score = b"%d" % rng.randint(0, 10_000_000)
        p.add(enc(b"ZADD", ZSET.encode(), score, b"player:%d" % i))
    for i in range(NS_KEYS):
        value = "u%d:%s" % (i, "y" * rng.randint(5, 30))
        p.add(enc(b"SET", b"%s:%d" % (NS.encode(), i), value.encode()))
    p.sync()


def usage(p: Pipeline, keys) -> int:
    total = 0
    for k in keys:
        r = p.call("MEMORY", "USAGE", k, "SAMPLES", "0")
        total += int(r or 0)
    return total


def originals_usage(p: Pipeline) -> dict:
    return {
        HASH: usage(p, [HASH]), INTSET: usage(p, [INTSET]),
        STRSET: usage(p, [STRSET]), ZSET: usage(p, [ZSET]),
        NS: usage(p, ("%s:%d" % (NS, i) for i in range(NS_KEYS))),
    }


def bucket_of(member: bytes, n: int) -> int:
    return zlib.crc32(member) % n


def build_plan(p: Pipeline, plan: dict) -> list[str]:
    """Builds the planned layout from the original key; returns the new keys."""
    n = plan["buckets"]
    if plan["kind"] == "namespace":
        stem = plan["key_pattern"].split("<")[0]
        cursor = "0"
        while True:
            cursor, keys = p.call("SCAN", cursor, "MATCH", NS + ":*", "COUNT", "1000")
            cursor = cursor.decode()
            # Skip the buckets being written (they match the pattern too).
            keys = [k for k in keys if not k.startswith(stem.encode())]
            if keys:
                values = p.call("MGET", *keys)
                for k, v in zip(keys, values):
                    field = k[len(NS) + 1:]
                    bucket = "%s%d" % (stem, bucket_of(field, n))
                    p.add(enc(b"HSET", bucket.encode(), field, v))
                p.sync()
            if cursor == "0":
                break
        return ["%s%d" % (stem, i) for i in range(n)]
    key = plan["key"]
    t = plan["type"]
    scan, write = {"hash": ("HSCAN", b"HSET"), "set": ("SSCAN", b"SADD"),
                   "zset": ("ZSCAN", b"ZADD")}[t]
    cursor = "0"
    while True:
        cursor, items = p.call(scan, key, cursor, "COUNT", "1000")
        cursor = cursor.decode()
        if t == "set":
            for m in items:
                p.add(enc(write, b"%s:%d" % (key.encode(), bucket_of(m, n)), m))
        else:
            for a, b in zip(items[0::2], items[1::2]):
                bucket = b"%s:%d" % (key.encode(), bucket_of(a, n))
                if t == "hash":
                    p.add(enc(write, bucket, a, b))
                else:
                    p.add(enc(write, bucket, b, a))
        p.sync()
        if cursor == "0":
            break
    return ["%s:%d" % (key, i) for i in range(n)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rdblens", default="target/release/rdblens")
    ap.add_argument("--redis-server", default="/usr/bin/redis-server")
    ap.add_argument("--jemalloc-quantum", choices=["8", "16"], default=None,
                    help="passed to rdblens (Debian's redis-server: 16)")
    ap.add_argument("--tolerance", type=float, default=0.02)
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--markdown", help="also write the comparison table here")
    ap.add_argument("--keep", help="copy the dump here")
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="rdblens-advice-")
    server = Server(args.redis_server, work, "advice.rdb")
    rows = []
    failed = False
    try:
        server.start()
        p = Pipeline(server.port, timeout=300)
        version = p.call("INFO", "server").decode().split("redis_version:")[1].split()[0]
        build_originals(p, random.Random(args.seed))
        live = originals_usage(p)
        p.call("SAVE")
        p.close()
        # Reload the dump: the plan's "before" is the key as loaded (a
        # set, hash or sorted set built with SADD/HSET/ZADD can stay in
        # the middle of an incremental rehash, with both tables counted).
        server.stop()
        server.start()
        p = Pipeline(server.port, timeout=300)
        before = originals_usage(p)
        dump = os.path.join(work, "advice.rdb")
        if args.keep:
            shutil.copyfile(dump, args.keep)
        cmd = [args.rdblens, "advise", "-q", "--format", "json",
               "--set", "small-key-sprawl.min-keys=100000", dump]
        if args.jemalloc_quantum:
            cmd[2:2] = ["--jemalloc-quantum", args.jemalloc_quantum]
        out = subprocess.run(cmd, check=True, capture_output=True, timeout=600).stdout
        plans = json.loads(out)
        for plan in plans["plans"]:
            name = plan.get("key") or plan["namespace"]
            if name not in before:
                continue
            new_keys = build_plan(p, plan)
            time.sleep(1.0)  # let serverCron finish incremental rehashing
            after = usage(p, new_keys)
            for what, predicted, real in (("before", plan["memory_before"], before[name]),
                                          ("after", plan["memory_after"], after)):
                err = (predicted - real) / real if real else 0.0
                ok = abs(err) <= args.tolerance
                failed |= not ok
                rows.append((name, plan["scheme"], plan["buckets"], plan["encoding_after"],
                             what, predicted, real, err, ok,
                             live[name] if what == "before" else None))
        p.close()
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)

    lines = [
        "redis-server %s (%s), rdblens target %s, tolerance %.0f%%" % (
            version, args.redis_server, plans["target"], args.tolerance * 100),
        "",
        "| key or namespace | scheme | N | buckets' encoding | memory | rdblens | MEMORY USAGE | error | as built, before the reload |",
        "|---|---|---:|---|---|---:|---:|---:|---:|",
    ]
    for name, scheme, n, encoding, what, predicted, real, err, ok, built in rows:
        lines.append("| %s | %s | %d | %s | %s | %d | %d | %+.2f%%%s | %s |" % (
            name, scheme, n, encoding, what, predicted, real, err * 100, "" if ok else " FAIL",
            "" if built is None else "%d" % built))
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
