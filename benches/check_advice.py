#!/usr/bin/env python3
"""Check `rdblens advise` against a real redis-server (docs/advisor.md).

Starts a private redis-server on 127.0.0.1 (free port, temporary --dir, no
persistence of its own, `CONFIG SET latency-tracking no`) on a copy of
--dump (or empty), adds the keys a collection dump has none of so that
every scheme gets plans (big strings, streams, long lists, sprawling
namespaces: --extras), SAVEs, restarts the server on that dump, runs
`rdblens advise --format json` on it, and then applies --per-scheme plans
of every scheme with the server's own commands, one plan at a time:

  U0  used_memory before the plan
      build the buckets from the original (HSCAN/SSCAN + HSET/SADD by CRC32
      of the member modulo N; ZRANGE by rank + ZADD by score range; LRANGE +
      RPUSH; GETRANGE + SET; XRANGE + XADD; SCAN + MGET + HSET)
  U1  used_memory with both
      UNLINK the original (a namespace: its keys, in batches)
  U2  used_memory after

used_memory is read from a fresh connection once the lazy free is done
(`INFO memory` lazyfree_pending_objects == 0) and the server's cron has
run (1.2 s; the connection that copied the data is closed first, so its
buffers are not counted). Measured: used_memory_before = U1 - U2 (what
deleting the original freed), used_memory_after = U1 - U0 (what the buckets
added), saved = U0 - U2; MEMORY USAGE (SAMPLES 0) summed over the original
before and the buckets after; OBJECT ENCODING of every bucket; the fullest
bucket's element count against the plan's max_per_bucket. Prints one table
(Markdown) and a summary; exits 1 if a memory figure is off by more than
--tolerance (2 %). The server is always shut down, also on error. Standard
library only; the RESP client and server handling are gen_corpus.py's.

    python3 benches/gen_collections.py --out /tmp/coll.rdb --size-mb 200 --seed 1
    python3 benches/check_advice.py --rdblens target/release/rdblens \\
        --dump /tmp/coll.rdb --markdown /tmp/advice-check.md
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_corpus import Pipeline, Server, _parse_reply, enc  # noqa: E402

SCHEMES = ["hash-buckets", "score-ranges", "list-ranges", "string-parts", "stream-split", "namespace-hashes"]
# The rule settings the plans are made with: big-collection at 1,000 so
# the collection dump's smaller giants get plans too; namespaces of 2,000+
# small strings.
RULE_SETS = ["big-collection.warn=1000", "small-key-sprawl.min-keys=2000"]


def many(p: Pipeline, cmds: list[tuple]) -> list:
    """Runs `cmds` pipelined, in batches of 1,000; returns their replies."""
    out = []
    for i in range(0, len(cmds), 1000):
        batch = cmds[i:i + 1000]
        p.sync()
        p.sock.sendall(b"".join(enc(*[a if isinstance(a, bytes) else str(a).encode() for a in c])
                                for c in batch))
        for _ in batch:
            while True:
                r = _parse_reply(p.rbuf, p.rpos)
                if r is not None:
                    value, p.rpos = r
                    out.append(value)
                    break
                p._recv(block=True)
    return out


def info_field(port: int, section: str, field: str) -> int:
    """One integer field of INFO, from a fresh connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(enc(b"INFO", section.encode()))
        buf = b""
        while True:
            buf += s.recv(65536)
            r = _parse_reply(bytearray(buf), 0)
            if r is not None:
                text = r[0].decode()
                break
    return int(text.split(field + ":")[1].split()[0])


def settled_used_memory(port: int) -> int:
    """used_memory once lazy freeing is done and the cron has run."""
    deadline = time.monotonic() + 120
    while info_field(port, "memory", "lazyfree_pending_objects") and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.2)
    return info_field(port, "memory", "used_memory")


def add_extras(p: Pipeline, rng: random.Random):
    """Keys of the schemes a collection dump has none or few of."""
    words = [b"alpha", b"bravo", b"charlie", b"delta", b"echo", b"foxtrot", b"golf", b"hotel"]
    for i in range(12):  # big strings: string-parts
        n = rng.randint(12_000, 200_000)
        p.add(enc(b"SET", b"adv:str:%d" % i, bytes(rng.getrandbits(8) % 26 + 97 for _ in range(n))))
    for i in range(10):  # streams: stream-split
        for j in range(rng.randint(6_000, 12_000)):
            p.add(enc(b"XADD", b"adv:stream:%d" % i, b"*", b"entity", b"user:%d" % rng.randrange(10**6),
                      b"action", rng.choice(words), b"amount", b"%d" % rng.randrange(10**5)))
    for i in range(8):  # long lists: list-ranges (with the dump's four)
        items = [b"job:%d:%s" % (rng.randrange(10**9), rng.choice(words)) for _ in range(rng.randint(6_000, 30_000))]
        for k in range(0, len(items), 1000):
            p.add(enc(b"RPUSH", b"adv:list:%d" % i, *items[k:k + 1000]))
    for i in range(10):  # sprawling namespaces: namespace-hashes
        for j in range(rng.randint(3_000, 12_000)):
            value = b"%d" % rng.randrange(20_000) if i % 3 == 0 else b"v:%s" % (b"x" * rng.randint(4, 40))
            p.add(enc(b"SET", b"advns%d:%d" % (i, 100_000 + j * 7), value))
    p.sync()


def crc(member: bytes, n: int) -> int:
    return zlib.crc32(member) % n


def scan_all(p: Pipeline, cmd: str, key: bytes | None = None, match: bytes | None = None) -> list:
    """Every item of SCAN (`key` None) or of an HSCAN/SSCAN of `key` (a
    flat list: keys, members, or field/value pairs)."""
    out, cursor = [], b"0"
    while True:
        head = (cmd,) if key is None else (cmd, key)
        tail = ("MATCH", match) if match is not None else ()
        cursor, items = p.call(*head, cursor, *tail, "COUNT", "1000")
        out += items
        if cursor == b"0":
            return out


def namespace_keys(p: Pipeline, plan: dict) -> list[bytes]:
    """The namespace's small strings, the buckets being written left out."""
    stem = plan["key_pattern"].split("<")[0].encode()
    prefix = plan["namespace"].encode() + b":"
    return [k for k in scan_all(p, "SCAN", match=prefix + b"*") if not k.startswith(stem)]


def build(p: Pipeline, plan: dict) -> tuple[list[bytes], list[bytes]]:
    """Writes the plan's buckets from the original; returns (originals, buckets)."""
    n, scheme = plan["buckets"], plan["scheme"]
    stem = plan["key_pattern"].split("<")[0].encode()
    buckets = [stem + b"%d" % i for i in range(n)]
    if scheme == "namespace-hashes":
        prefix = plan["namespace"].encode() + b":"
        keys = namespace_keys(p, plan)
        for i in range(0, len(keys), 1000):
            batch = keys[i:i + 1000]
            for k, v in zip(batch, p.call("MGET", *batch)):
                field = k[len(prefix):]
                p.add(enc(b"HSET", buckets[crc(field, n)], field, v))
        p.sync()
        return keys, buckets
    key = plan["key"].encode()
    t = plan["type"]
    if scheme == "hash-buckets" and t == "hash":
        items = scan_all(p, "HSCAN", key)
        for f, v in zip(items[0::2], items[1::2]):
            p.add(enc(b"HSET", buckets[crc(f, n)], f, v))
    elif scheme == "hash-buckets":
        for m in scan_all(p, "SSCAN", key):
            p.add(enc(b"SADD", buckets[crc(m, n)], m))
    elif scheme == "score-ranges":
        # Bounds in the sorted set's own order, (score, member): Python
        # compares bytes as Redis compares members (memcmp, then length).
        size = plan["per_bucket"]
        bounds = []
        for i in range(1, n):
            m, s = p.call("ZRANGE", key, i * size, i * size, "WITHSCORES")
            bounds.append((float(s), m))
        total = p.call("ZCARD", key)
        for start in range(0, total, 1000):
            items = p.call("ZRANGE", key, start, start + 999, "WITHSCORES")
            for m, s in zip(items[0::2], items[1::2]):
                p.add(enc(b"ZADD", buckets[bisect.bisect_right(bounds, (float(s), m))], s, m))
    elif scheme == "list-ranges":
        size = plan["per_bucket"]
        total = p.call("LLEN", key)
        for start in range(0, total, 1000):
            items = p.call("LRANGE", key, start, min(start + 999, total - 1))
            for j, v in enumerate(items):
                p.add(enc(b"RPUSH", buckets[(start + j) // size], v))
    elif scheme == "string-parts":
        size = plan["per_bucket"]
        for i in range(n):
            p.add(enc(b"SET", buckets[i], p.call("GETRANGE", key, i * size, (i + 1) * size - 1)))
    elif scheme == "stream-split":
        last = b"-"
        while True:
            entries = p.call("XRANGE", key, last, "+", "COUNT", "1000")
            entries = [e for e in entries if e[0] != last]
            if not entries:
                break
            for eid, fields in entries:
                entity = fields[1]  # the first field's value: the entity id
                p.add(enc(b"XADD", buckets[crc(entity, n)], eid, *fields))
            last = entries[-1][0]
    else:
        raise ValueError("unknown scheme %s" % scheme)
    p.sync()
    return [key], buckets


SIZE_OF = {"hash": "HLEN", "set": "SCARD", "zset": "ZCARD", "list": "LLEN", "string": "STRLEN",
           "stream": "XLEN"}


def measure(port: int, plan: dict) -> dict:
    p = Pipeline(port, timeout=600)
    originals = [plan["key"].encode()] if plan["kind"] == "key" else namespace_keys(p, plan)
    usage_before = sum(int(r or 0) for r in many(p, [("MEMORY", "USAGE", k, "SAMPLES", "0") for k in originals]))
    p.close()
    u0 = settled_used_memory(port)
    p = Pipeline(port, timeout=600)
    originals, buckets = build(p, plan)
    p.close()
    u1 = settled_used_memory(port)
    p = Pipeline(port, timeout=600)
    for i in range(0, len(originals), 1000):
        p.add(enc(b"UNLINK", *originals[i:i + 1000]))
    p.sync()
    p.close()
    u2 = settled_used_memory(port)
    p = Pipeline(port, timeout=600)
    usage_after = sum(int(r or 0) for r in many(p, [("MEMORY", "USAGE", k, "SAMPLES", "0") for k in buckets]))
    encodings = many(p, [("OBJECT", "ENCODING", k) for k in buckets])
    size_cmd = "HLEN" if plan["kind"] == "namespace" else SIZE_OF[plan["type"]]
    sizes = [int(x) for x in many(p, [(size_cmd, k) for k in buckets])]
    # Leave the server as it was for the next plan's baseline: drop the buckets.
    for i in range(0, len(buckets), 1000):
        p.add(enc(b"UNLINK", *buckets[i:i + 1000]))
    p.sync()
    p.close()
    in_plan = sum(1 for e in encodings if e and e.decode() == plan["encoding_after"])
    return {
        "used_before": u1 - u2, "used_after": u1 - u0, "saved": u0 - u2,
        "usage_before": usage_before, "usage_after": usage_after,
        "in_encoding": in_plan, "fullest": max(sizes) if sizes else 0,
    }


def err(predicted: int, real: int) -> float:
    return (predicted - real) / real if real else 0.0


def off(what: str, predicted: int, real: int, m: dict) -> float:
    """The error of a figure: relative to the real figure, but for `saved`
    relative to the memory at stake (the real used_memory_before): a split
    that saves little is the difference of two big figures, and 1 % of
    either can be most of the difference."""
    if what == "saved":
        return (predicted - real) / m["used_before"] if m["used_before"] else 0.0
    return err(predicted, real)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rdblens", default="target/release/rdblens")
    ap.add_argument("--server", "--redis-server", dest="server", default="/usr/bin/redis-server")
    ap.add_argument("--dump", help="an RDB file to start from (copied; default: an empty server)")
    ap.add_argument("--jemalloc-quantum", choices=["8", "16"], default=None,
                    help="passed to rdblens (default: the allocator the report detects)")
    ap.add_argument("--per-scheme", type=int, default=10, help="plans applied per scheme")
    ap.add_argument("--schemes", default=",".join(SCHEMES), help="the schemes checked, comma-separated")
    ap.add_argument("--no-extras", action="store_true", help="do not add the extra keys")
    ap.add_argument("--tolerance", type=float, default=0.02)
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--markdown", help="also write the table here")
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="rdblens-advice-")
    dump = os.path.join(work, "advice.rdb")
    if args.dump:
        shutil.copyfile(args.dump, dump)
    server = Server(args.server, work, "advice.rdb")
    rows, failed = [], False
    try:
        server.start(wait_s=300)
        p = Pipeline(server.port, timeout=600)
        version = p.call("INFO", "server").decode().split("redis_version:")[1].split()[0]
        if not args.no_extras:
            add_extras(p, random.Random(args.seed))
        p.call("SAVE")
        p.close()
        # Restart on the dump: the plans' "before" is the keys as loaded.
        server.stop()
        server.start(wait_s=300)
        p = Pipeline(server.port, timeout=600)
        p.call("CONFIG", "SET", "latency-tracking", "no")
        p.close()
        cmd = [args.rdblens, "advise", "-q", "--format", "json", dump]
        for s in RULE_SETS:
            cmd[2:2] = ["--set", s]
        if args.jemalloc_quantum:
            cmd[2:2] = ["--jemalloc-quantum", args.jemalloc_quantum]
        t0 = time.monotonic()
        plans = json.loads(subprocess.run(cmd, check=True, capture_output=True, timeout=3600).stdout)
        advise_s = time.monotonic() - t0
        chosen = []
        for scheme in args.schemes.split(","):
            chosen += [pl for pl in plans["plans"] if pl["scheme"] == scheme][:args.per_scheme]
        for plan in chosen:
            m = measure(server.port, plan)
            figures = [("used before", plan["used_memory_before"], m["used_before"]),
                       ("used after", plan["used_memory_after"], m["used_after"]),
                       ("saved", plan["saved"], m["saved"]),
                       ("usage before", plan["memory_before"], m["usage_before"]),
                       ("usage after", plan["memory_after"], m["usage_after"])]
            bad = [what for what, pr, real in figures if abs(off(what, pr, real, m)) > args.tolerance]
            failed |= bool(bad)
            rows.append((plan, m, figures, bad))
            print("%-28s %s" % (plan.get("key") or plan["namespace"], "ok" if not bad else "off: " + ", ".join(bad)),
                  file=sys.stderr, flush=True)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)

    lines = [
        "redis-server %s (%s); rdblens target %s, jemalloc quantum %d; advise took %.0f s; "
        "tolerance %.0f%%" % (version, args.server, plans["target"], plans["jemalloc_quantum"], advise_s,
                              args.tolerance * 100),
        "",
        "| key or namespace | scheme | N | encoding: buckets in it | fullest / planned max | "
        "used_memory before: plan / real | after: plan / real | saved: plan / real (error: share of before) | "
        "MEMORY USAGE before: plan / real | after: plan / real |",
        "|---|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for plan, m, figures, bad in rows:
        cells = ["%d / %d (%+.2f%%)%s" % (pr, real, off(what, pr, real, m) * 100,
                                         " **off**" if what in bad else "")
                 for what, pr, real in figures]
        lines.append("| %s | %s | %d | %s: %d/%d | %d / %d | %s |" % (
            plan.get("key") or plan["namespace"] + ":*", plan["scheme"], plan["buckets"],
            plan["encoding_after"], m["in_encoding"], plan["buckets"], m["fullest"],
            plan["max_per_bucket"], " | ".join(cells)))
    summary = []
    for what in ["used before", "used after", "saved", "usage before", "usage after"]:
        errs = [abs(off(w, pr, real, m)) for _, m, figures, _ in rows for w, pr, real in figures if w == what]
        within = sum(1 for e in errs if e <= args.tolerance)
        summary.append("%s within %.0f%%: %d of %d (worst %.2f%%)" % (
            what, args.tolerance * 100, within, len(errs), max(errs, default=0) * 100))
    summary += ["", "| scheme | plans | worst error: used_memory before | after | saved | MEMORY USAGE before | after "
                "| every bucket in its encoding | fullest within the maximum |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for scheme in args.schemes.split(","):
        mine = [r for r in rows if r[0]["scheme"] == scheme]
        if not mine:
            continue
        worst = ["%.2f%%" % (max(abs(off(w, pr, real, m)) for _, m, figures, _ in mine
                                 for w, pr, real in figures if w == what) * 100)
                 for what in ["used before", "used after", "saved", "usage before", "usage after"]]
        summary.append("| %s | %d | %s | %d | %d |" % (
            scheme, len(mine), " | ".join(worst),
            sum(1 for plan, m, _, _ in mine if m["in_encoding"] == plan["buckets"]),
            sum(1 for plan, m, _, _ in mine if m["fullest"] <= plan["max_per_bucket"])))
    summary.append("")
    encoded = sum(1 for plan, m, _, _ in rows if m["in_encoding"] == plan["buckets"])
    under = sum(1 for plan, m, _, _ in rows if m["fullest"] <= plan["max_per_bucket"])
    summary.append("every bucket in the planned encoding: %d of %d plans" % (encoded, len(rows)))
    summary.append("fullest bucket within the planned maximum: %d of %d plans" % (under, len(rows)))
    text = "\n".join(lines + [""] + summary)
    print(text)
    if args.markdown:
        tmp = args.markdown + ".tmp"
        with open(tmp, "w") as f:
            f.write(text + "\n")
        os.replace(tmp, args.markdown)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
