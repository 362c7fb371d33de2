#!/usr/bin/env python3
"""Generate a collection-heavy Redis RDB dump: the second benchmark shape.

    python3 benches/gen_collections.py --out /tmp/bench/collections.rdb --size-mb 1400 --seed 1

Where benches/gen_corpus.py makes a cache-like dump (mostly strings, a few
giant keys), this one is made of collections: about 2.8 M keys holding 40 M+
elements at the default 1,400 MiB (1.47 GB):

- many small collections in the server's compact encodings: listpack hashes
  (user profiles, carts), intsets (id sets), listpack sorted sets (small
  leaderboards) and single-node quicklists (recent-activity lists), a few
  plain strings (counters) between them;
- tens of giant collections in the big encodings: hashtable hashes of up to
  200 k fields, hashtable sets of up to 300 k members (integer and string
  members), skiplist sorted sets of up to 475 k members, and four quicklists
  of 1.2 M elements each;
- a third of the small keys carry an expiry (spread over 30 days).

Written by a private redis-server (the Server and Pipeline of gen_corpus.py:
loopback, temporary --dir, `--save ''`), on --port if given; the logical
content is a pure function of --seed and --size-mb. Giants scale linearly
with --size-mb / 1400 below the default size.
"""
from __future__ import annotations

import argparse
import math
import os
import random
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_corpus import MIB, WORDS, FIRST, LAST, COUNTRIES, PLANS, Pipeline, Server, enc, enc_var, save  # noqa: E402

T0 = 2_000_000_000_000            # 2033-05-18: nothing expires meanwhile
SPREAD_MS = 30 * 86_400_000
FULL_MB = 1400                    # the size the giant tier is laid out for


class Collections:
    def __init__(self, pipe: Pipeline, rng: random.Random):
        self.p = pipe
        self.rng = rng
        self.est = 0              # running estimate of raw payload bytes
        self.keys = 0
        self.elements = 0
        self.expiring = 0
        self.next_id = 0
        self.kinds: dict[str, int] = {}
        r = rng
        # Pools: rng.choices over them is fast, and their repetition makes the
        # listpacks compress like real ones.
        self.words = [w.encode() for w in WORDS]
        self.tokens = [b"%s:%016x" % (r.choice(WORDS).encode(), r.getrandbits(64)) for _ in range(100_000)]
        self.emails = [b"%s.%s%d@example.com" % (r.choice(FIRST).encode(), r.choice(LAST).encode(), r.randrange(10**5))
                       for _ in range(20_000)]
        self.fields = [b"pref:%s" % w for w in self.words] + [b"f%d" % i for i in range(64)]
        sentence = lambda: b" ".join(r.choices(self.words, k=r.randint(3, 14)))[:64]
        self.phrases = [sentence() for _ in range(20_000)]
        self.json = [b'{"sku":"SKU-%06d","qty":%d,"p":%d.%02d,"u":%d,"t":%d,"ref":"%08x"}'
                     % (r.randrange(10**6), r.randint(1, 9), r.randrange(500), r.randrange(100),
                        r.randrange(10**7), 1_700_000_000 + r.randrange(10**8), r.getrandbits(32))
                     for _ in range(50_000)]

    # -- bookkeeping -----------------------------------------------------------
    def key(self, kind: str, items: list, nbytes_extra: int = 0, exp=None):
        self.keys += 1
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        self.est += sum(map(len, items)) + 2 * len(items) + 20 + nbytes_extra
        if exp is not None:
            self.expiring += 1

    def expiry(self, p: float):
        if self.rng.random() >= p:
            return None
        return T0 + self.rng.randrange(SPREAD_MS)

    def send(self, cmd: bytes, key: bytes, items: list, exp, chunk: int = 2000):
        for i in range(0, len(items), chunk):
            self.p.add(enc_var((cmd, key), items[i:i + chunk]))
        if exp is not None:
            self.p.add(enc(b"PEXPIREAT", key, b"%d" % exp))

    def size(self, median: float, sigma: float, lo: int, hi: int) -> int:
        v = int(self.rng.lognormvariate(math.log(median), sigma))
        return lo if v < lo else hi if v > hi else v

    # -- small collections (compact encodings) ---------------------------------
    def u_profile(self):
        """Listpack hash: a user profile of 6-40 short fields."""
        r = self.rng
        self.next_id += r.randint(1, 3)
        uid = self.next_id
        items = [b"name", b"%s %s" % (r.choice(FIRST).encode(), r.choice(LAST).encode()),
                 b"email", r.choice(self.emails),
                 b"country", r.choice(COUNTRIES).encode(),
                 b"plan", r.choice(PLANS).encode(),
                 b"created", b"%d" % (1_500_000_000 + r.randrange(200_000_000)),
                 b"logins", b"%d" % r.randrange(5000)]
        for f in r.sample(self.fields, self.size(6, 0.8, 0, 34)):
            items += [f, r.choice(self.phrases) if r.random() < 0.7 else b"%d" % r.randrange(10**6)]
        exp = self.expiry(0.3)
        self.send(b"HSET", b"user:%d:profile" % uid, items, exp)
        self.elements += len(items) // 2
        self.key("hash/listpack", items, exp=exp)

    def u_cart(self):
        """Listpack hash: SKU -> quantity, or SKU -> small JSON."""
        r = self.rng
        self.next_id += 1
        n = self.size(8, 0.9, 1, 120)
        items = []
        for sku in r.sample(range(100_000, 999_999), n):
            items += [b"SKU-%d" % sku, b"%d" % r.randint(1, 9) if r.random() < 0.7 else r.choice(self.json)]
        exp = self.expiry(0.5)
        self.send(b"HSET", b"cart:%d" % self.next_id, items, exp)
        self.elements += n
        self.key("hash/listpack", items, exp=exp)

    def u_idset(self):
        """Intset: ids (follows, likes) of 1-512 integers, mostly 64-bit
        (snowflake-like), some 32- and 16-bit."""
        r = self.rng
        self.next_id += 1
        n = self.size(10, 1.1, 1, 512)
        roll = r.random()
        lo, hi = (10**17, 10**18) if roll < 0.7 else (1, 2**31 - 1) if roll < 0.9 else (1, 30_000)
        members = [b"%d" % m for m in r.sample(range(lo, hi), n)]
        exp = self.expiry(0.2)
        self.send(b"SADD", b"user:%d:follows" % self.next_id, members, exp)
        self.elements += n
        self.key("set/intset", members, exp=exp)

    def u_small_zset(self):
        """Listpack sorted set: a small leaderboard of up to 128 members."""
        r = self.rng
        self.next_id += 1
        n = self.size(16, 1.0, 1, 128)
        items = []
        floats = r.random() < 0.4
        for m in r.sample(self.tokens, n):
            items += [b"%.2f" % (r.random() * 1000) if floats else b"%d" % r.randrange(100_000), m]
        exp = self.expiry(0.3)
        self.send(b"ZADD", b"lb:room:%d" % self.next_id, items, exp)
        self.elements += n
        self.key("zset/listpack", items, exp=exp)

    def u_small_list(self):
        """Quicklist of one listpack node: recent activity, 1-300 entries."""
        r = self.rng
        self.next_id += 1
        n = self.size(12, 1.0, 1, 300)
        base = r.randrange(10**9)
        roll = r.random()
        if roll < 0.3:
            items = [b"%d" % (base + r.randrange(10**6)) for _ in range(n)]
        elif roll < 0.6:
            items = r.choices(self.tokens, k=n)
        else:
            items = r.choices(self.json, k=n)
        exp = self.expiry(0.4)
        self.send(b"RPUSH", b"recent:%d" % self.next_id, items, exp)
        self.elements += n
        self.key("list/quicklist", items, exp=exp)

    def u_counter(self):
        r = self.rng
        self.next_id += 1
        key = b"counter:%d" % self.next_id
        val = b"%d" % r.randrange(10**7)
        exp = self.expiry(0.5)
        if exp is None:
            self.p.add(enc(b"SET", key, val))
        else:
            self.p.add(enc(b"SET", key, val, b"PXAT", b"%d" % exp))
        self.key("string", [val], exp=exp)

    UNITS = [(14, "u_profile"), (10, "u_cart"), (26, "u_idset"), (14, "u_small_zset"),
             (26, "u_small_list"), (10, "u_counter")]

    def fill(self, until_est: int):
        methods = [getattr(self, m) for _, m in self.UNITS]
        weights = [w for w, _ in self.UNITS]
        while self.est < until_est:
            for m in self.rng.choices(methods, weights, k=200):
                m()

    # -- giants (big encodings) ------------------------------------------------
    def giants(self, scale: float):
        r = self.rng
        t = time.monotonic()
        log = lambda what: print("  %-44s est %7.1f MiB, %5.1f M elements, %.0fs" %
                                 (what, self.est / MIB, self.elements / 1e6, time.monotonic() - t), flush=True)
        # Four quicklists of 1.2 M elements: ids, tokens, small JSON.
        for name in ("q:ingest", "q:events", "q:retry", "feed:global"):
            n = int(1_200_000 * scale)
            key = name.encode()
            nbytes = 0
            for i in range(0, n, 2000):
                k = min(2000, n - i)
                roll = r.random()
                if roll < 0.5:
                    items = [b"%d" % v for v in r.choices(range(10**12), k=k)]
                elif roll < 0.85:
                    items = r.choices(self.tokens, k=k)
                else:
                    items = r.choices(self.json, k=k)
                self.p.add(enc_var((b"RPUSH", key), items))
                nbytes += sum(map(len, items)) + 2 * k
            self.elements += n
            self.keys += 1
            self.est += nbytes
            self.kinds["list/quicklist (giant)"] = self.kinds.get("list/quicklist (giant)", 0) + 1
        log("4 lists of %d" % int(1_200_000 * scale))
        # Hashtable hashes up to 200 k fields.
        sizes = [200_000, 150_000, 120_000] + [r.randint(5_000, 90_000) for _ in range(21)]
        for i, n in enumerate(sizes):
            n = max(600, int(n * scale))
            items = []
            if i % 2:
                for uid in r.sample(range(1, 50_000_000), n):
                    items += [b"%s%d" % (r.choice(self.emails)[:12], uid), b"%d" % uid]
            else:
                for sku in r.sample(range(1, 50_000_000), n):
                    items += [b"sku:%d" % sku, r.choice(self.json) if r.random() < 0.3 else b"%d" % r.randrange(10**6)]
            self.send(b"HSET", b"index:%d" % i, items, None)
            self.elements += n
            self.key("hash/hashtable (giant)", items)
        log("%d hashes, largest %d" % (len(sizes), max(sizes)))
        # Hashtable sets up to 300 k members: integers past the intset limit, and strings.
        sizes = [300_000, 250_000, 180_000] + [r.randint(5_000, 100_000) for _ in range(21)]
        for i, n in enumerate(sizes):
            n = max(600, int(n * scale))
            if i % 2:
                members = [b"%d" % m for m in r.sample(range(1, 10**9), n)]
            else:
                members = [b"%s:%d" % (r.choice(self.words), m) for m in r.sample(range(1, 10**9), n)]
            self.send(b"SADD", b"members:%d" % i, members, None)
            self.elements += n
            self.key("set/hashtable (giant)", members)
        log("%d sets, largest %d" % (len(sizes), max(sizes)))
        # Skiplist sorted sets up to 475 k members.
        sizes = [475_000, 400_000, 250_000] + [r.randint(5_000, 120_000) for _ in range(17)]
        for i, n in enumerate(sizes):
            n = max(200, int(n * scale))
            items = []
            floats = i % 3 == 0
            for pid in r.sample(range(1, 50_000_000), n):
                items += [b"%.4f" % (r.random() * 1e6) if floats else b"%d" % r.randrange(10**7), b"player:%d" % pid]
            self.send(b"ZADD", b"lb:global:%d" % i, items, None)
            self.elements += n
            self.key("zset/skiplist (giant)", items)
        log("%d sorted sets, largest %d" % (len(sizes), max(sizes)))


def run(args) -> int:
    t_start = time.monotonic()
    target = int(args.size_mb * MIB)
    rng = random.Random(args.seed)
    out = os.path.abspath(args.out)
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="gen_collections.")
    dump = os.path.join(workdir, "dump.rdb")
    server = Server(args.server, workdir, "dump.rdb", port=args.port)
    pipe = None
    try:
        server.start()
        print("redis-server pid %d on 127.0.0.1:%d, dir %s" % (server.proc.pid, server.port, workdir), flush=True)
        pipe = Pipeline(server.port, timeout=args.timeout)
        version = pipe.call(b"INFO", b"server").decode().split("redis_version:")[1].split()[0]
        pipe.call(b"FLUSHALL")
        gen = Collections(pipe, rng)
        gen.giants(min(1.0, args.size_mb / FULL_MB))
        pipe.sync()
        size = save(pipe, dump)
        print("  giants: dump %.1f MiB (est %.1f MiB)" % (size / MIB, gen.est / MIB), flush=True)
        ratio, last_size, last_est, frac = 0.6, size, gen.est, 0.4
        for step in range(8):
            remaining = target - size
            if remaining <= 0.02 * target:
                break
            gen.fill(int(gen.est + frac * remaining / ratio))
            pipe.sync()
            size = save(pipe, dump)
            if gen.est > last_est:
                ratio = max(0.05, (size - last_size) / (gen.est - last_est))
            print("  step %d: dump %.1f MiB, %d keys, %.1f M elements, ratio %.3f, %.0fs" %
                  (step, size / MIB, gen.keys, gen.elements / 1e6, ratio, time.monotonic() - t_start), flush=True)
            last_size, last_est, frac = size, gen.est, 1.0
        shutil.copyfile(dump, out + ".tmp")
        os.replace(out + ".tmp", out)
        print("wrote %s" % out)
        print("  server     redis %s" % version)
        print("  keys       %d, %d with an expiry" % (gen.keys, gen.expiring))
        print("  elements   %d (collection members, fields, list entries)" % gen.elements)
        print("  dump size  %d bytes (%.1f MiB, target %.1f MiB)" % (size, size / MIB, target / MIB))
        print("  time       %.1f s" % (time.monotonic() - t_start))
        print("  kinds      " + ", ".join("%s=%d" % kv for kv in sorted(gen.kinds.items(), key=lambda kv: -kv[1])))
        return 0
    finally:
        if pipe is not None:
            pipe.close()
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--size-mb", type=float, default=FULL_MB, help="target dump size in MiB (default %d)" % FULL_MB)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--port", type=int, default=0, help="loopback port of the private server (default: a free one)")
    ap.add_argument("--server", default="/usr/bin/redis-server")
    ap.add_argument("--timeout", type=float, default=600)
    args = ap.parse_args(argv)
    if args.size_mb <= 0:
        ap.error("--size-mb must be positive")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
