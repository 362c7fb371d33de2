#!/usr/bin/env python3
"""A second corpus shape for the memory-model checks: many small collections.

gen_corpus.py makes a production-like mix dominated by strings. This one fills
a private redis-server with --keys keys (default 1.2 M) that are nearly all
small listpack / intset collections, the shape where allocator rounding of
small blobs decides most of the estimate:

- 32 % hashes of 2-30 fields (listpack), 0.3 % with 200-600 fields (hashtable);
- 21 % sorted sets of 2-40 members (listpack), 0.2 % with 150-300 (skiplist);
- 20 % sets: half intsets of 2-60 integers, half string sets of 2-40 members
  (listpack on 7.2+, hashtable on 7.0);
- 20 % lists of 1-80 elements (one quicklist node; a listpack on 7.2+);
- 7 % short strings (int, embstr, raw);
- 10 % of all keys carry a TTL far in the future.

Content is a pure function of --seed. Starts the server on 127.0.0.1 (free
port, temporary --dir), SAVEs, copies the dump to --out, always shuts the
server down. Standard library only; uses gen_corpus.py's RESP pipeline.

    python3 benches/gen_small_collections.py --out /tmp/small.rdb --keys 1200000 --seed 14
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_corpus import Pipeline, Server, enc, enc_var, keyspace, save  # noqa: E402

T0 = 2_000_000_000_000  # 2033: nothing expires while the corpus is in use


POOL = bytes(random.Random(0).choice(b"abcdefghijklmnopqrstuvwxyz0123456789:_-") for _ in range(1 << 16))


def word(rng: random.Random, lo: int, hi: int) -> bytes:
    n = rng.randint(lo, hi)
    at = rng.randrange(len(POOL) - n)
    return POOL[at:at + n]


def fill(pipe: Pipeline, rng: random.Random, keys: int) -> None:
    for i in range(keys):
        r = rng.random()
        if r < 0.32:
            key = b"h:%d" % i
            n = rng.randint(200, 600) if r < 0.003 else rng.randint(2, 30)
            items = []
            for f in range(n):
                items += [b"f%d" % f, word(rng, 1, 40) if rng.random() < 0.7 else b"%d" % rng.randint(0, 10**9)]
            pipe.add(enc_var((b"HSET", key), items))
        elif r < 0.53:
            key = b"z:%d" % i
            n = rng.randint(150, 300) if r < 0.322 else rng.randint(2, 40)
            items = []
            for m in range(n):
                score = b"%d" % rng.randint(0, 10**6) if rng.random() < 0.5 else b"%.3f" % (rng.random() * 1000)
                items += [score, word(rng, 3, 24) + b"%d" % m]
            pipe.add(enc_var((b"ZADD", key), items))
        elif r < 0.63:
            key = b"si:%d" % i
            items = [b"%d" % rng.randint(-10**12, 10**12) if rng.random() < 0.2 else b"%d" % rng.randint(0, 60000)
                     for _ in range(rng.randint(2, 60))]
            pipe.add(enc_var((b"SADD", key), items))
        elif r < 0.73:
            key = b"ss:%d" % i
            items = [word(rng, 2, 30) + b"%d" % m for m in range(rng.randint(2, 40))]
            pipe.add(enc_var((b"SADD", key), items))
        elif r < 0.93:
            key = b"l:%d" % i
            items = [word(rng, 1, 50) if rng.random() < 0.8 else b"%d" % rng.randint(0, 10**6)
                     for _ in range(rng.randint(1, 80))]
            pipe.add(enc_var((b"RPUSH", key), items))
        else:
            key = b"s:%d" % i
            c = rng.random()
            val = b"%d" % rng.randint(0, 10**12) if c < 0.3 else word(rng, 1, 40 if c < 0.8 else 200)
            pipe.add(enc(b"SET", key, val))
        if rng.random() < 0.10:
            pipe.add(enc(b"PEXPIREAT", key, b"%d" % (T0 + rng.randint(0, 30 * 86_400_000))))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--keys", type=int, default=1_200_000)
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--server", default="/usr/bin/redis-server")
    ap.add_argument("--timeout", type=float, default=600)
    args = ap.parse_args(argv)
    workdir = tempfile.mkdtemp(prefix="gen-small-")
    server = Server(args.server, workdir, "dump.rdb")
    pipe = None
    t = time.monotonic()
    try:
        server.start()
        pipe = Pipeline(server.port, args.timeout)
        fill(pipe, random.Random(args.seed), args.keys)
        pipe.sync()
        if pipe.errors:
            print("gen_small_collections: %d command errors, first: %s" % (pipe.errors, pipe.first_errors[:3]),
                  file=sys.stderr)
            return 1
        size = save(pipe, os.path.join(workdir, "dump.rdb"))
        ks = keyspace(pipe)
        out = os.path.abspath(args.out)
        shutil.copyfile(os.path.join(workdir, "dump.rdb"), out + ".tmp")
        os.replace(out + ".tmp", out)
        print("wrote %s: %d bytes, keyspace %s, %.0f s" % (out, size, ks, time.monotonic() - t))
        return 0
    finally:
        if pipe is not None:
            pipe.close()
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
