#!/usr/bin/env python3
"""Does rdblens find the allocator build, and predict used_memory, on the dumps a server writes?

    python3 benches/check_allocator.py --rdblens target/release/rdblens \
        --server debian=/usr/bin/redis-server --server source=/opt/redis-7.0.15/src/redis-server \
        --keys 10000,100000,1000000 --work /tmp/alloc

For each server build, each shape (`cache`: benches/gen_corpus.py, mostly
strings; `collections`: benches/gen_collections.py) and each key count:

1. the generator fills a server of that build over one pipelined client
   connection and runs SAVE on it (the `filled` dump: its used-mem holds
   that busy client's query and reply buffers too);
2. a server of that build loads the `filled` dump, then writes it again by
   SAVE (`save`) and BGSAVE (`bgsave`) from a fresh connection, and through
   `redis-cli --rdb` (`rdb-cli`: the server sends it as to a replica, with
   a replica client and a replication backlog in used_memory);
3. every dump is loaded into a fresh server of the same build, whose
   `used_memory` right after the load is the truth;
4. `rdblens report --format json DUMP` (no flags) gives the allocator it
   chose (quantum, basis) and its predicted used_memory.

Prints one row a dump: keys, the server's used_memory after loading, the
dump's used-mem, the quantum expected (given per build with
`--server NAME=BIN` and `--quantum NAME=Q`; "debian" 16, any other 8 by
default), the quantum chosen and why, the prediction and its error. Exits 1
if any dump gets the wrong quantum or an error over `--tolerance` (0.5 %).
Dumps already in --work are reused (delete them to start again). Standard
library only; the generators live beside this script.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gen_corpus import Server, enc  # noqa: E402  (the generators' own server handling)

# Dump size per key, roughly, for each shape's generator (MiB per 1,000 keys).
MIB_PER_KKEY = {"cache": 0.38, "collections": 0.46}
GENERATOR = {"cache": "gen_corpus.py", "collections": "gen_collections.py"}


def call(port: int, *args: bytes | str, timeout: float = 600) -> bytes:
    import socket
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(enc(*[a if isinstance(a, bytes) else a.encode() for a in args]))
        buf = b""
        while True:
            chunk = s.recv(1 << 16)
            if not chunk:
                break
            buf += chunk
            if buf.startswith((b"+", b"-", b":")) and buf.endswith(b"\r\n"):
                break
            if buf.startswith(b"$"):
                head, _, rest = buf.partition(b"\r\n")
                if len(rest) >= int(head[1:]) + 2:
                    break
        return buf


def info_field(port: int, section: str, name: str) -> str:
    text = call(port, "INFO", section).decode()
    for line in text.splitlines():
        if line.startswith(name + ":"):
            return line.split(":", 1)[1].strip()
    raise KeyError(name)


def wait_loaded(port: int):
    while info_field(port, "persistence", "loading") == "1":
        time.sleep(0.1)


def loaded_used_memory(binary: str, dump: str) -> int:
    """used_memory of a fresh server of `binary` right after loading `dump`."""
    with tempfile.TemporaryDirectory() as work:
        shutil.copy(dump, os.path.join(work, "dump.rdb"))
        server = Server(binary, work, "dump.rdb")
        server.start(wait_s=600)
        try:
            wait_loaded(server.port)
            return int(info_field(server.port, "memory", "used_memory"))
        finally:
            server.stop()


def resave(binary: str, dump: str, save_out: str, bgsave_out: str, cli_out: str):
    """Loads `dump` into a server of `binary`, writes it by SAVE, BGSAVE and `redis-cli --rdb`."""
    cli = os.path.join(os.path.dirname(binary), "redis-cli")
    if not os.path.exists(cli):
        cli = shutil.which("redis-cli") or "redis-cli"
    with tempfile.TemporaryDirectory() as work:
        shutil.copy(dump, os.path.join(work, "dump.rdb"))
        server = Server(binary, work, "dump.rdb")
        server.start(wait_s=600)
        try:
            wait_loaded(server.port)
            if not call(server.port, "SAVE").startswith(b"+OK"):
                raise RuntimeError("SAVE failed")
            shutil.copy(os.path.join(work, "dump.rdb"), save_out)
            # The reply comes after the fork: in progress until the child is done.
            call(server.port, "BGSAVE")
            while info_field(server.port, "persistence", "rdb_bgsave_in_progress") != "0":
                time.sleep(0.1)
            if info_field(server.port, "persistence", "rdb_last_bgsave_status") != "ok":
                raise RuntimeError("BGSAVE failed")
            shutil.copy(os.path.join(work, "dump.rdb"), bgsave_out)
            subprocess.run([cli, "-p", str(server.port), "--rdb", cli_out + ".tmp"], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            os.replace(cli_out + ".tmp", cli_out)
        finally:
            server.stop()


def generate(shape: str, binary: str, keys: int, out: str, seed: int):
    size_mb = keys / 1000 * MIB_PER_KKEY[shape]
    cmd = [sys.executable, os.path.join(HERE, GENERATOR[shape]), "--out", out,
           "--size-mb", "%.2f" % size_mb, "--seed", str(seed), "--server", binary]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def analyse(rdblens: str, dump: str) -> dict:
    out = subprocess.run([rdblens, "report", "--format", "json", "--quiet", dump],
                         check=True, stdout=subprocess.PIPE).stdout
    doc = json.loads(out)
    f = doc["files"][0]
    return {
        "keys": doc["totals"]["keys"],
        "used_mem": int(f["aux"].get("used-mem", 0)),
        "quantum": f["allocator"]["quantum"],
        "basis": f["allocator"]["basis"],
        "predicted": f["used_memory"]["predicted"],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rdblens", default="target/release/rdblens")
    ap.add_argument("--server", action="append", required=True, metavar="NAME=BIN")
    ap.add_argument("--quantum", action="append", default=[], metavar="NAME=Q")
    ap.add_argument("--shape", action="append", choices=sorted(GENERATOR))
    ap.add_argument("--keys", default="10000,100000,1000000")
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--work", required=True)
    ap.add_argument("--tolerance", type=float, default=0.005)
    args = ap.parse_args()
    servers = dict(s.split("=", 1) for s in args.server)
    quanta = {name: (16 if name == "debian" else 8) for name in servers}
    quanta.update({n: int(q) for n, q in (s.split("=", 1) for s in args.quantum)})
    os.makedirs(args.work, exist_ok=True)
    failed = 0
    print("build\tshape\tkeys\tmethod\tloaded_used_memory\tused_mem\texpected_q\tchosen_q\tbasis"
          "\tpredicted\terror_pct")
    for name, binary in servers.items():
        for shape in args.shape or sorted(GENERATOR):
            for keys in (int(k) for k in args.keys.split(",")):
                stem = os.path.join(args.work, "%s-%s-%d" % (name, shape, keys))
                dumps = {m: "%s-%s.rdb" % (stem, m) for m in ("filled", "save", "bgsave", "rdb-cli")}
                if not os.path.exists(dumps["filled"]):
                    generate(shape, binary, keys, dumps["filled"], args.seed)
                if not all(os.path.exists(d) for d in dumps.values()):
                    resave(binary, dumps["filled"], dumps["save"], dumps["bgsave"], dumps["rdb-cli"])
                for method, dump in dumps.items():
                    truth = loaded_used_memory(binary, dump)
                    got = analyse(args.rdblens, dump)
                    err = (got["predicted"] - truth) / truth
                    ok = got["quantum"] == quanta[name] and abs(err) <= args.tolerance
                    failed += not ok
                    print("%s\t%s\t%d\t%s\t%d\t%d\t%d\t%d\t%s\t%d\t%+.3f%s" % (
                        name, shape, got["keys"], method, truth, got["used_mem"], quanta[name],
                        got["quantum"], got["basis"], got["predicted"], 100 * err,
                        "" if ok else "\tFAIL"), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
