#!/usr/bin/env python3
"""Dumps with one giant value, for the memory targets of the benchmarks.

    python3 benches/gen_giants.py --kind string --out /tmp/bench/giant-string.rdb
    python3 benches/gen_giants.py --kind list --out /tmp/bench/giant-list.rdb

`string`: one 1 GiB string (`--mib`), built with APPEND (the server runs
with proto-max-bulk-len 2gb so the value may pass 512 MB), of mixed random
words so that LZF compresses it a little, as real payloads do.
`list`: one list of 10 M elements (`--elements`), short varied members,
written with pipelined RPUSH. Both plus a few ordinary keys around them.
Uses the Server and Pipeline of gen_corpus.py (private redis-server on
loopback, `--save ''`).
"""
import argparse
import os
import random
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_corpus import MIB, Pipeline, Server, enc, save  # noqa: E402


def fill_string(pipe, rng, mib):
    words = [w.encode() for w in "alpha beta gamma delta order user cart price token session".split()]
    chunk = b" ".join(rng.choice(words) + str(rng.randrange(10**6)).encode() for _ in range(150_000))
    chunk = (chunk * (MIB // len(chunk) + 1))[:MIB]
    for i in range(mib):
        pipe.add(enc(b"APPEND", b"giant:string", chunk[i % 97:] + chunk[: i % 97]))
        if i % 16 == 15:
            pipe.sync()


def fill_list(pipe, rng, elements):
    batch = 1000
    for start in range(0, elements, batch):
        items = [b"item:%d:%d" % (start + j, rng.randrange(10**9)) for j in range(min(batch, elements - start))]
        pipe.add(enc(b"RPUSH", b"giant:list", *items))
    pipe.sync()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kind", choices=["string", "list"], required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--mib", type=int, default=1024, help="string size in MiB (default 1024)")
    ap.add_argument("--elements", type=int, default=10_000_000, help="list length (default 10 M)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--server", default="/usr/bin/redis-server")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    workdir = tempfile.mkdtemp(prefix="gen_giants.")
    server = Server(args.server, workdir, "dump.rdb")
    try:
        server.start()
        pipe = Pipeline(server.port, timeout=600)
        pipe.call(b"CONFIG", b"SET", b"proto-max-bulk-len", b"2147483648")
        for i in range(1000):
            pipe.add(enc(b"SET", b"small:%d" % i, b"v%d" % rng.randrange(10**6)))
        if args.kind == "string":
            fill_string(pipe, rng, args.mib)
        else:
            fill_list(pipe, rng, args.elements)
        pipe.sync()
        size = save(pipe, os.path.join(workdir, "dump.rdb"))
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        shutil.move(os.path.join(workdir, "dump.rdb"), args.out)
        print("wrote %s (%.1f MB)" % (args.out, size / 1e6))
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
