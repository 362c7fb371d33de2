#!/usr/bin/env python3
"""Generate a large, production-like Redis RDB dump for the rdblens benchmarks.

Starts a private redis-server on 127.0.0.1 (free port, temporary --dir, no
persistence of its own), fills it over one pipelined RESP connection, runs SAVE
and copies the dump to --out.  The server is always shut down, also on error.

Only the Python 3.11 standard library is used (own tiny RESP writer/reader).

    python3 benches/gen_corpus.py --out /tmp/bench/dump-250mb.rdb --size-mb 250 --seed 1

The logical content (keys, values, expiries, stream IDs, member order of
commands) is a pure function of --seed and --size-mb (random.Random(seed)).
The dump bytes are not bit-identical between runs: Redis writes ctime /
used-mem aux fields, orders hashtable-encoded keys, fields and members by its
per-process random hash seed, and stores stream consumer seen-times and PEL
delivery times from the wall clock.

Size: --size-mb is in MiB (2**20 bytes).  The generator keeps a running
estimate of the bytes it writes, calibrates it against real SAVEs and tops up
until the dump is within a few percent of the target.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

MIB = 1 << 20

# Expiry times: far in the future (2033-05-18), so nothing expires while the
# dump is being produced or analysed.
T0 = 2_000_000_000_000
# 2 % of all keys expire inside this one second (a quarter of them on the very
# same millisecond), 5 % inside this one minute.
CLUSTER_SECOND = T0 + 7 * 86_400_000 + 12_345_000          # whole second
CLUSTER_MINUTE = T0 + 40_000 + 3 * 86_400_000               # whole minute
SPREAD_MS = 30 * 86_400_000                                 # others: 30 days

# Base for stream IDs (explicit IDs keep the content deterministic).
STREAM_T0 = 1_700_000_000_000

# Redis 7.x defaults that decide encodings (for reference; we do not change them):
# hash-max-listpack-entries 512 / -value 64, zset-max-listpack-entries 128 /
# -value 64, set-max-intset-entries 512, set-max-listpack-entries 128 (7.2+),
# list-max-listpack-size -2.

WORDS = """
the of and to in is you that it he was for on are as with his they at be this
have from or one had by word but not what all were we when your can said there
use an each which she do how their if will up other about out many then them
these so some her would make like him into time has look two more write go see
number no way could people my than first water been call who oil its now find
long down day did get come made may part account order payment invoice user
session cache token refresh expired active pending shipped delivered cancelled
cart checkout product category price discount coupon shipping address street
city country region latency request response error warning info debug trace
service queue worker job retry timeout backoff leader follower replica shard
cluster node primary secondary metrics counter gauge histogram bucket label
alpha beta gamma delta epsilon zeta theta lambda sigma omega red green blue
black white yellow purple orange premium basic enterprise trial free monthly
yearly""".split()

FIRST = "anna ben clara david emma felix greta hugo ida jonas karla leo mia noah olga paul rosa sam tina ulf vera will xenia yusuf zoe".split()
LAST = "smith muller garcia rossi novak kowalski jansen silva dubois ivanov nielsen horvat popescu papadopoulos yilmaz tanaka kim chen singh okafor".split()
COUNTRIES = "DE FR US GB NL ES IT PL SE JP BR IN CA AU CH AT BE DK FI NO".split()
PLANS = ["free", "basic", "pro", "enterprise", "trial"]
EVENTS = ["page_view", "click", "signup", "login", "logout", "purchase", "add_to_cart", "search", "share", "error"]
GAMES = ["chess", "poker", "tetris", "snake", "racer", "quiz", "sudoku", "golf", "darts", "bowling",
         "pinball", "solitaire", "mahjong", "blitz", "arena", "kart", "tanks", "farm", "pirates", "words"]
QUEUES = ["email", "sms", "push", "webhook", "thumbnail", "transcode", "billing", "export", "import",
          "reindex", "cleanup", "audit", "notify", "sync", "crawl", "ingest"]


# --------------------------------------------------------------------------
# RESP
# --------------------------------------------------------------------------

class RespError(Exception):
    pass


def enc(*args: bytes) -> bytes:
    """Encode one command as a RESP array of bulk strings."""
    parts = [b"*%d\r\n" % len(args)]
    for a in args:
        parts.append(b"$%d\r\n%b\r\n" % (len(a), a))
    return b"".join(parts)


def enc_var(head: tuple, items) -> bytes:
    """Encode a variadic command: head args followed by many items."""
    parts = [b"*%d\r\n" % (len(head) + len(items))]
    parts += [b"$%d\r\n%b\r\n" % (len(a), a) for a in head]
    parts += [b"$%d\r\n%b\r\n" % (len(a), a) for a in items]
    return b"".join(parts)


def _skip_reply(buf, pos: int) -> int:
    """Position after one complete reply starting at pos, or -1 if incomplete."""
    e = buf.find(b"\r\n", pos)
    if e < 0:
        return -1
    t = buf[pos]
    if t == 36:  # $bulk
        n = int(buf[pos + 1:e])
        if n < 0:
            return e + 2
        end = e + 4 + n
        return end if end <= len(buf) else -1
    if t == 42:  # *array
        n = int(buf[pos + 1:e])
        p = e + 2
        for _ in range(max(n, 0)):
            if p >= len(buf):
                return -1
            p = _skip_reply(buf, p)
            if p < 0:
                return -1
        return p
    return e + 2  # + - : (RESP2 only)


def _parse_reply(buf, pos: int):
    """(value, newpos) or None if incomplete.  Errors come back as RespError."""
    if pos >= len(buf):
        return None
    e = buf.find(b"\r\n", pos)
    if e < 0:
        return None
    t = buf[pos]
    line = bytes(buf[pos + 1:e])
    if t == 43:
        return line, e + 2
    if t == 45:
        return RespError(line.decode(errors="replace")), e + 2
    if t == 58:
        return int(line), e + 2
    if t == 36:
        n = int(line)
        if n < 0:
            return None, e + 2
        end = e + 4 + n
        if end > len(buf):
            return None
        return bytes(buf[e + 2:e + 2 + n]), end
    if t == 42:
        n = int(line)
        if n < 0:
            return None, e + 2
        p = e + 2
        out = []
        for _ in range(n):
            r = _parse_reply(buf, p)
            if r is None:
                return None
            out.append(r[0])
            p = r[1]
        return out, p
    raise RespError("unexpected reply type byte %r" % chr(t))


class Pipeline:
    """One connection; commands are buffered and sent in big batches, replies
    are consumed whenever they are available (and forcibly when too many are
    outstanding), so the server works while we generate the next batch."""

    FLUSH_BYTES = 4 * MIB
    MAX_PENDING = 400_000
    LOW_PENDING = 50_000

    def __init__(self, port: int, timeout: float):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.timeout = timeout
        self.poller = select.poll()
        self.poller.register(self.sock, select.POLLIN)
        self.out: list[bytes] = []
        self.out_bytes = 0
        self.pending = 0          # commands sent whose reply was not read yet
        self.unsent = 0           # commands buffered but not sent
        self.commands = 0         # total commands issued
        self.rbuf = bytearray()
        self.rpos = 0
        self.errors = 0
        self.first_errors: list[str] = []

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    # -- sending -----------------------------------------------------------
    def add(self, data: bytes, ncmds: int = 1):
        self.out.append(data)
        self.out_bytes += len(data)
        self.unsent += ncmds
        if self.out_bytes >= self.FLUSH_BYTES:
            self.flush()

    def flush(self):
        if self.out:
            data = b"".join(self.out)
            self.out.clear()
            self.out_bytes = 0
            self.sock.sendall(data)
            self.pending += self.unsent
            self.commands += self.unsent
            self.unsent = 0
        self._drain(block=False)
        if self.pending > self.MAX_PENDING:
            self._drain(block=True, until=self.LOW_PENDING)

    # -- receiving ---------------------------------------------------------
    def _recv(self, block: bool) -> bool:
        if not block and not self.poller.poll(0):
            return False
        chunk = self.sock.recv(4 * MIB)  # bounded by the socket timeout
        if not chunk:
            raise ConnectionError("redis-server closed the connection")
        if self.rpos and self.rpos == len(self.rbuf):
            self.rbuf = bytearray(chunk)
            self.rpos = 0
        else:
            self.rbuf += chunk
        return True

    def _consume(self):
        buf = self.rbuf
        pos = self.rpos
        n = len(buf)
        pending = self.pending
        while pending and pos < n:
            p = _skip_reply(buf, pos)
            if p < 0:
                break
            if buf[pos] == 45:  # '-'
                self._error(bytes(buf[pos + 1:p - 2]))
            pos = p
            pending -= 1
        self.pending = pending
        if pos > 8 * MIB:
            del buf[:pos]
            pos = 0
        self.rpos = pos

    def _error(self, msg: bytes):
        self.errors += 1
        if len(self.first_errors) < 5:
            self.first_errors.append(msg.decode(errors="replace"))

    def _drain(self, block: bool, until: int = 0):
        self._consume()
        while self.pending > until:
            if not self._recv(block):
                return
            self._consume()

    def sync(self):
        """Send everything and wait for all replies."""
        self.flush()
        self._drain(block=True, until=0)
        if self.errors:
            raise RespError("%d command(s) failed, first: %s" % (self.errors, self.first_errors))

    def call(self, *args) -> object:
        """Run one command synchronously and return its parsed reply."""
        self.sync()
        self.sock.sendall(enc(*[a if isinstance(a, bytes) else str(a).encode() for a in args]))
        self.commands += 1
        while True:
            r = _parse_reply(self.rbuf, self.rpos)
            if r is not None:
                value, self.rpos = r
                if isinstance(value, RespError):
                    raise value
                return value
            self._recv(block=True)


# --------------------------------------------------------------------------
# server process
# --------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, binary: str, workdir: str, dbfilename: str, port: int = 0):
        self.binary = binary
        self.workdir = workdir
        self.dbfilename = dbfilename
        self.proc: subprocess.Popen | None = None
        self.fixed_port = port    # 0: a free port picked at start
        self.port = 0
        self.log = os.path.join(workdir, "redis.log")

    def start(self, wait_s: float = 20.0):
        last = ""
        for _ in range(1 if self.fixed_port else 5):
            self.port = self.fixed_port or free_port()
            cmd = [self.binary,
                   "--bind", "127.0.0.1", "--port", str(self.port),
                   "--save", "", "--appendonly", "no",
                   "--dir", self.workdir, "--dbfilename", self.dbfilename,
                   "--daemonize", "no", "--protected-mode", "yes",
                   "--logfile", self.log]
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + wait_s
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break
                try:
                    with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                        s.sendall(enc(b"PING"))
                        if s.recv(64).startswith(b"+PONG"):
                            return
                except OSError:
                    pass
                time.sleep(0.05)
            last = self._log_tail()
            self.stop()
        raise RuntimeError("could not start %s; log tail:\n%s" % (self.binary, last))

    def _log_tail(self) -> str:
        try:
            with open(self.log, "rb") as f:
                return f.read()[-2000:].decode(errors="replace")
        except OSError:
            return ""

    def stop(self):
        """SHUTDOWN NOSAVE, then SIGTERM, then SIGKILL; every wait bounded."""
        p = self.proc
        if p is None:
            return
        self.proc = None
        if p.poll() is None:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=5) as s:
                    s.settimeout(5)
                    s.sendall(enc(b"SHUTDOWN", b"NOSAVE"))
                    try:
                        s.recv(64)
                    except OSError:
                        pass
            except OSError:
                pass
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait(timeout=10)


# --------------------------------------------------------------------------
# content
# --------------------------------------------------------------------------

class Content:
    """Value factories.  Text-like values are slices of pools built once from
    the seeded RNG (fast, and compressible like real text); incompressible
    values come from rng.randbytes."""

    POOL_BYTES = 1_500_000

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.words_pool = self._build_words()
        self.json_pool = self._build_json()
        self.html_pool = self._build_html()

    def _sentence(self, k: int) -> str:
        return " ".join(self.rng.choices(WORDS, k=k))

    def _build_words(self) -> bytes:
        parts, n = [], 0
        while n < self.POOL_BYTES:
            s = self._sentence(self.rng.randint(4, 18)).capitalize() + ". "
            parts.append(s)
            n += len(s)
        return "".join(parts).encode()

    def _build_json(self) -> bytes:
        r = self.rng
        parts, n, i = [], 0, 0
        while n < self.POOL_BYTES:
            k = i % 3
            if k == 0:
                first, last = r.choice(FIRST), r.choice(LAST)
                d = {"id": r.randrange(1, 10_000_000), "name": f"{first.title()} {last.title()}",
                     "email": f"{first}.{last}{r.randrange(1000)}@example.com",
                     "plan": r.choice(PLANS), "country": r.choice(COUNTRIES),
                     "created_at": 1_600_000_000 + r.randrange(100_000_000),
                     "tags": r.sample(WORDS, r.randint(0, 4)), "active": r.random() < 0.8,
                     "score": round(r.random() * 100, 2)}
            elif k == 1:
                d = {"event": r.choice(EVENTS), "user_id": r.randrange(1, 10_000_000),
                     "ts": 1_700_000_000_000 + r.randrange(10**10),
                     "props": {"page": "/" + "/".join(r.choices(WORDS, k=r.randint(1, 3))),
                               "ref": r.choice(["google", "direct", "newsletter", "twitter", None]),
                               "ua": r.choice(["Mozilla/5.0 (X11; Linux x86_64)",
                                               "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0)",
                                               "okhttp/4.12.0", "curl/8.5.0"])}}
            else:
                d = {"sku": "SKU-%06d" % r.randrange(10**6), "title": self._sentence(r.randint(2, 6)),
                     "price": round(r.uniform(1, 500), 2), "qty": r.randint(1, 9),
                     "currency": r.choice(["EUR", "USD", "GBP"])}
            s = json.dumps(d, separators=(",", ":")) + "\n"
            parts.append(s)
            n += len(s)
            i += 1
        return "".join(parts).encode()

    def _build_html(self) -> bytes:
        r = self.rng
        parts, n = [], 0
        while n < self.POOL_BYTES:
            s = ('<div class="card card-%s"><h2>%s</h2><p>%s</p><a href="/p/%d">more</a></div>\n'
                 % (r.choice(WORDS), self._sentence(r.randint(2, 6)).title(),
                    self._sentence(r.randint(8, 40)), r.randrange(10**6)))
            parts.append(s)
            n += len(s)
        return ("<!doctype html><html><head><title>page</title></head><body>\n" + "".join(parts)).encode()

    # -- factories -----------------------------------------------------------
    def _slice(self, pool: bytes, n: int) -> bytes:
        n = max(1, min(n, len(pool) - 1))
        off = self.rng.randrange(len(pool) - n)
        return pool[off:off + n]

    def text(self, n: int) -> bytes:
        return self._slice(self.words_pool, n)

    def json(self, n: int) -> bytes:
        return self._slice(self.json_pool, n)

    def html(self, n: int) -> bytes:
        return self._slice(self.html_pool, n)

    def rand(self, n: int) -> bytes:
        return self.rng.randbytes(n)

    def size(self, median: float, sigma: float, lo: int = 1, hi: int = 100_000) -> int:
        """Log-normal size, clamped."""
        v = int(self.rng.lognormvariate(math.log(median), sigma))
        return lo if v < lo else hi if v > hi else v

    def string_value(self, median: float = 90, sigma: float = 1.0) -> bytes:
        """Typical string value: mostly 20-500 bytes, 1 % heavy tail to 100 KB,
        a mix of integers, JSON, prose and random bytes."""
        r = self.rng.random()
        if r < 0.08:
            return b"%d" % self.rng.randrange(-1000, 10**self.rng.randint(1, 12))
        if self.rng.random() < 0.01:
            n = self.size(8000, 1.2, 1000, 100_000)
        else:
            n = self.size(median, sigma, 3, 100_000)
        if r < 0.50:
            return self.json(n)
        if r < 0.75:
            return self.text(n)
        return self.rand(n)


# --------------------------------------------------------------------------
# generator
# --------------------------------------------------------------------------

class Generator:
    def __init__(self, pipe: Pipeline, rng: random.Random, target: int):
        self.p = pipe
        self.rng = rng
        self.c = Content(rng)
        self.target = target
        self.est = 0                 # running estimate (raw payload bytes)
        self.keys = 0
        self.expiring = 0
        self.db = 0
        self.stats: dict[str, int] = {}
        # id counters (increasing with random gaps -> unique, realistic)
        self.next_user = 1000
        self.next_page = 1
        self.next_ip = (10 << 24) + 1
        self.next_order = 5_000_000
        self.next_feed = 1
        self.next_lb = 0
        self.next_q = 0
        self.next_misc = 0
        self.chunk = 0

    # -- bookkeeping ---------------------------------------------------------
    def select(self, db: int):
        if db != self.db:
            self.p.add(enc(b"SELECT", b"%d" % db))
            self.db = db

    def _count(self, ns: str, nbytes: int, expiry):
        self.keys += 1
        self.est += nbytes + 8
        self.stats[ns] = self.stats.get(ns, 0) + 1
        if expiry is not None:
            self.expiring += 1
            self.est += 9

    def expiry(self, p: float):
        """Absolute unix ms or None.  Among expiring keys 1/30 land in one
        shared second and 1/12 in one shared minute, i.e. 2 % and 5 % of all
        keys when ~60 % of the keys expire."""
        rng = self.rng
        if rng.random() >= p:
            return None
        u = rng.random()
        if u < 1 / 30:
            return CLUSTER_SECOND if u < 1 / 120 else CLUSTER_SECOND + rng.randrange(1000)
        if u < 1 / 30 + 1 / 12:
            return CLUSTER_MINUTE + rng.randrange(60_000)
        return T0 + rng.randrange(SPREAD_MS)

    def set_string(self, ns: str, key: bytes, val: bytes, exp):
        if exp is None:
            self.p.add(b"*3\r\n$3\r\nSET\r\n$%d\r\n%b\r\n$%d\r\n%b\r\n" % (len(key), key, len(val), val))
        else:
            e = b"%d" % exp
            self.p.add(b"*5\r\n$3\r\nSET\r\n$%d\r\n%b\r\n$%d\r\n%b\r\n$4\r\nPXAT\r\n$%d\r\n%b\r\n"
                       % (len(key), key, len(val), val, len(e), e))
        self._count(ns, len(key) + len(val), exp)

    def variadic(self, cmd: bytes, key: bytes, items: list, chunk: int = 1000):
        """cmd key item... in chunks (items already flattened)."""
        if chunk % 2:
            chunk += 1  # keep field/value and score/member pairs together
        for i in range(0, len(items), chunk):
            self.p.add(enc_var((cmd, key), items[i:i + chunk]))

    def collection(self, ns: str, cmd: bytes, key: bytes, items: list, exp, chunk: int = 1000):
        if not items:
            return
        self.variadic(cmd, key, items, chunk)
        if exp is not None:
            self.p.add(enc(b"PEXPIREAT", key, b"%d" % exp))
        self._count(ns, len(key) + sum(map(len, items)) + 2 * len(items), exp)

    # -- namespaces (filler units) ---------------------------------------------
    def u_cache_page(self):
        rng, c = self.rng, self.c
        self.next_page += rng.randint(1, 4)
        key = b"cache:page:%d" % self.next_page
        r = rng.random()
        if r < 0.05:
            val = b"%d" % rng.randrange(10**9)
        elif rng.random() < 0.015:
            val = c.html(c.size(12_000, 1.0, 2_000, 100_000))
        else:
            n = c.size(220, 1.1, 20, 100_000)
            val = c.html(n) if r < 0.65 else c.json(n) if r < 0.9 else c.rand(n)
        self.set_string("cache:page", key, val, self.expiry(0.75))

    def u_session(self):
        rng, c = self.rng, self.c
        key = b"session:%032x" % rng.getrandbits(128)
        if rng.random() < 0.7:
            val = c.json(c.size(160, 0.7, 20, 20_000))
        else:
            val = c.rand(c.size(96, 0.5, 16, 4096))  # encrypted blob
        self.set_string("session", key, val, self.expiry(0.97))

    def u_rate(self):
        rng = self.rng
        self.next_ip += rng.randint(1, 40)
        ip = self.next_ip
        key = b"rate:%d.%d.%d.%d" % (ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255)
        self.set_string("rate", key, b"%d" % int(rng.expovariate(1 / 20)), self.expiry(0.95))

    def u_user(self):
        rng, c = self.rng, self.c
        self.next_user += rng.randint(1, 3)
        uid = self.next_user
        first, last = rng.choice(FIRST), rng.choice(LAST)
        fields = [b"name", b"%s %s" % (first.title().encode(), last.title().encode()),
                  b"email", b"%s.%s%d@example.com" % (first.encode(), last.encode(), uid),
                  b"country", rng.choice(COUNTRIES).encode(),
                  b"plan", rng.choice(PLANS).encode(),
                  b"created_at", b"%d" % (1_500_000_000 + rng.randrange(200_000_000)),
                  b"last_login", b"%d" % (1_690_000_000 + rng.randrange(20_000_000)),
                  b"logins", b"%d" % int(rng.expovariate(1 / 50)),
                  b"score", b"%.2f" % (rng.random() * 1000)]
        for _ in range(rng.randint(0, 10)):
            fields += [b"pref:%s" % rng.choice(WORDS).encode(), rng.choice(WORDS).encode()]
        if rng.random() < 0.08:   # a long bio turns the hash into a hashtable
            fields += [b"bio", c.text(c.size(250, 0.6, 70, 4000))]
        self.collection("user:*:profile", b"HSET", b"user:%d:profile" % uid, fields, self.expiry(0.05))
        if rng.random() < 0.35:
            n = c.size(40, 1.0, 1, 3000)        # > 512 -> hashtable, else intset
            members = [b"%d" % m for m in rng.sample(range(1, 50_000_000), n)]
            self.collection("user:*:friends", b"SADD", b"user:%d:friends" % uid, members, None)
        if rng.random() < 0.10:
            members = [w.encode() for w in rng.sample(WORDS, rng.randint(1, 30))]
            self.collection("user:*:tags", b"SADD", b"user:%d:tags" % uid, members, self.expiry(0.2))

    def u_order(self):
        rng, c = self.rng, self.c
        self.next_order += rng.randint(1, 7)
        key = b"order:%d:items" % self.next_order
        n = c.size(3, 0.8, 1, 60)
        if rng.random() < 0.7:
            items = [c.json(c.size(110, 0.4, 40, 600)) for _ in range(n)]
            self.collection("order:*:items", b"RPUSH", key, items, self.expiry(0.3))
        else:
            items = []
            for sku in rng.sample(range(100_000, 999_999), n):
                items += [b"SKU-%d" % sku, b"%d" % rng.randint(1, 5)]
            self.collection("order:*:items", b"HSET", key, items, self.expiry(0.3))

    def u_feed(self):
        rng, c = self.rng, self.c
        self.next_feed += rng.randint(1, 5)
        n = c.size(60, 1.0, 1, 5000)
        base = rng.randrange(10**9)
        if rng.random() < 0.8:
            items = [b"%d" % (base + rng.randrange(10**7)) for _ in range(n)]
        else:
            items = [c.json(c.size(80, 0.5, 20, 400)) for _ in range(min(n, 500))]
        self.collection("feed", b"LPUSH", b"feed:%d" % self.next_feed, items, self.expiry(0.25))

    def u_leaderboard(self):
        rng, c = self.rng, self.c
        self.next_lb += 1
        key = b"lb:%s:%d" % (rng.choice(GAMES).encode(), self.next_lb)
        n = c.size(40, 0.8, 2, 128) if rng.random() < 0.85 else c.size(600, 1.0, 129, 8000)
        items = []
        floats = rng.random() < 0.4
        for pid in rng.sample(range(1, 20_000_000), n):
            items += [b"%.3f" % (rng.random() * 10_000) if floats else b"%d" % rng.randrange(100_000),
                      b"player:%d" % pid]
        self.collection("lb", b"ZADD", key, items, self.expiry(0.4))

    def u_queue(self):
        rng, c = self.rng, self.c
        self.next_q += 1
        key = b"q:%s:%d" % (rng.choice(QUEUES).encode(), self.next_q)
        n = c.size(15, 1.2, 1, 2000)
        items = [c.json(c.size(120, 0.5, 30, 2000)) for _ in range(n)]
        self.collection("q", b"RPUSH", key, items, None)

    UNITS = [  # (weight by key count, method)
        (27, "u_cache_page"),
        (24, "u_session"),
        (14, "u_rate"),
        (16, "u_user"),
        (7, "u_order"),
        (4, "u_feed"),
        (0.6, "u_leaderboard"),
        (0.3, "u_queue"),
    ]

    def fill(self, until_est: int):
        """Filler: skewed namespace mix until the running estimate reaches
        until_est.  Chunks of 100 units; 1 in 32 chunks goes to db1, 1 in 200 to db2."""
        rng = self.rng
        methods = [getattr(self, m) for _, m in self.UNITS]
        weights = [w for w, _ in self.UNITS]
        while self.est < until_est:
            self.chunk += 1
            self.select(1 if self.chunk % 32 == 5 else 2 if self.chunk % 200 == 17 else 0)
            for m in rng.choices(methods, weights, k=100):
                m()
        self.select(0)

    # -- fixed part: giant and big collections ---------------------------------------
    def fixed(self, giant: float, big: float):
        rng, c = self.rng, self.c
        log = lambda what: print("  %-40s est %7.1f MiB" % (what, self.est / MIB), flush=True)

        # one giant list (1M elements at full scale): job ids, tokens, some JSON
        n = int(1_000_000 * giant)
        key = b"q:bulk-import"
        for i in range(0, n, 1000):
            items = []
            for _ in range(min(1000, n - i)):
                r = rng.random()
                if r < 0.6:
                    items.append(b"%d" % rng.randrange(10**9))
                elif r < 0.9:
                    items.append(b"task:%08x" % rng.getrandbits(32))
                else:
                    items.append(c.json(c.size(90, 0.5, 30, 400)))
            self.variadic(b"RPUSH", key, items)
            self.est += sum(map(len, items)) + 2 * len(items)
        self._count("q", len(key), None)
        log("giant list %d" % n)

        # one giant hash (200k fields): email -> user id
        n = int(200_000 * giant)
        items = []
        for uid in rng.sample(range(1, 50_000_000), n):
            items += [b"%s.%s%d@example.com" % (rng.choice(FIRST).encode(), rng.choice(LAST).encode(), uid),
                      b"%d" % uid]
        self.collection("user:index", b"HSET", b"user:index:email", items, None)
        log("giant hash %d" % n)

        # one giant zset (200k members)
        n = int(200_000 * giant)
        items = []
        for pid in rng.sample(range(1, 50_000_000), n):
            items += [b"%.4f" % rng.lognormvariate(7, 1.5), b"player:%d" % pid]
        self.collection("lb", b"ZADD", b"lb:global", items, None)
        log("giant zset %d" % n)

        # a few big lists (100k+ elements at full scale)
        for name in ("q:email:backlog", "q:webhook:retry", "feed:firehose"):
            n = int(rng.randint(100_000, 180_000) * big)
            key = name.encode()
            for i in range(0, n, 1000):
                items = [b"%d" % rng.randrange(10**12) if rng.random() < 0.5 else
                         c.json(c.size(35, 0.4, 10, 200)) for _ in range(min(1000, n - i))]
                self.variadic(b"RPUSH", key, items)
                self.est += sum(map(len, items)) + 2 * len(items)
            self._count(name.split(":")[0], len(key), None)
        log("big lists")

        # big hashes: many small fields (> 512 fields) ...
        for _ in range(max(2, int(25 * big))):
            self.next_user += rng.randint(1, 3)
            n = max(600, int(rng.randint(600, 5000) * big))   # > 512 fields
            items = []
            for item in rng.sample(range(1, 10_000_000), n):
                items += [b"item:%d" % item, b"%d" % (1_690_000_000 + rng.randrange(10**7))]
            self.collection("user:*:history", b"HSET", b"user:%d:history" % self.next_user, items,
                            self.expiry(0.3))
        # ... and few fields with big values (> 64 bytes)
        for _ in range(max(2, int(25 * big))):
            self.next_misc += 1
            items = []
            for f in range(max(5, int(rng.randint(5, 200) * big))):
                items += [b"frag:%d" % f, c.html(c.size(600, 0.8, 65, 20_000))]
            self.collection("cache:fragments", b"HSET", b"cache:fragments:%d" % self.next_misc, items,
                            self.expiry(0.6))
        log("big hashes")

        # big sets: ints beyond the intset limit, and strings
        for i in range(max(2, int(8 * big))):
            n = max(600, int(rng.randint(2000, 30_000) * big))  # > 512 ints: hashtable
            members = [b"%d" % m for m in rng.sample(range(1, 100_000_000), n)]
            self.collection("online", b"SADD", b"online:shard:%d" % i, members, None)
        for i in range(max(2, int(8 * big))):
            members = [b"%s:%x" % (rng.choice(WORDS).encode(), rng.getrandbits(40))
                       for _ in range(max(200, int(rng.randint(1000, 20_000) * big)))]
            self.collection("tag", b"SADD", b"tag:%s:%d:members" % (rng.choice(WORDS).encode(), i),
                            members, None)
        log("big sets")

        # big zsets (skiplist)
        for i in range(max(2, int(10 * big))):
            items = []
            n = max(200, int(rng.randint(1000, 20_000) * big))  # > 128: skiplist
            for pid in rng.sample(range(1, 20_000_000), n):
                items += [b"%d" % rng.randrange(1_000_000), b"player:%d" % pid]
            self.collection("lb", b"ZADD", b"lb:%s:alltime" % GAMES[i % len(GAMES)].encode(), items, None)
        log("big zsets")

        # streams with consumer groups
        for si, name in enumerate(("events:clicks", "events:orders", "events:audit", "q:stream:jobs")):
            self.stream(name.encode(), int(rng.randint(20_000, 60_000) * big), si)
        log("streams")

    def stream(self, key: bytes, n: int, si: int):
        rng, c = self.rng, self.c
        ms = STREAM_T0 + si * 10**9
        ids = []
        nbytes = 0
        for _ in range(max(n, 10)):
            ms += rng.randint(0, 50)
            seq = rng.randint(0, 2) if rng.random() < 0.1 else 0
            if ids and ids[-1][0] == ms:
                seq = ids[-1][1] + 1
            sid = b"%d-%d" % (ms, seq)
            ids.append((ms, seq))
            fields = [b"event", rng.choice(EVENTS).encode(),
                      b"user", b"%d" % rng.randrange(10**7),
                      b"ts", b"%d" % ms]
            if rng.random() < 0.5:
                fields += [b"payload", c.json(c.size(80, 0.6, 10, 1000))]
            nbytes += sum(map(len, fields))
            self.p.add(enc_var((b"XADD", key, sid), fields))
        # a few deleted entries (tombstones inside the listpacks)
        dels = [b"%d-%d" % ids[i] for i in sorted(rng.sample(range(len(ids)), max(1, len(ids) // 500)))]
        self.p.add(enc_var((b"XDEL", key), dels))
        # consumer groups: read part of the stream, acknowledge some of it
        ngroups = rng.randint(1, 3)
        for g in range(ngroups):
            group = b"group-%d" % g
            self.p.add(enc(b"XGROUP", b"CREATE", key, group, b"0"))
            for ci in range(rng.randint(1, 4)):
                cnt = rng.randint(10, 1500)
                self.p.add(enc(b"XREADGROUP", b"GROUP", group, b"consumer-%d" % ci,
                               b"COUNT", b"%d" % cnt, b"STREAMS", key, b">"))
        self.p.add(enc(b"XGROUP", b"CREATE", key, b"tail-group", b"$"))
        self.p.sync()  # XACK needs to know what was delivered: ack the oldest PEL entries
        for g in range(ngroups):
            pend = self.p.call(b"XPENDING", key, b"group-%d" % g, b"-", b"+", b"300")
            if pend:
                acks = [e[0] for e in pend if rng.random() < 0.5]
                if acks:
                    self.p.add(enc_var((b"XACK", key, b"group-%d" % g), acks))
        self._count("stream", len(key) + nbytes + 20 * len(ids), None)

    def extra_dbs(self):
        """db15: a handful of config-style keys."""
        self.select(15)
        for i in range(20):
            self.set_string("config", b"config:feature:%d" % i, b"%d" % (i % 2), None)
        self.collection("config", b"HSET", b"config:limits",
                        [b"max_upload", b"104857600", b"max_conn", b"10000", b"ratio", b"0.75"], None)
        self.select(0)


# --------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------

def keyspace(pipe: Pipeline) -> dict[str, dict[str, int]]:
    info = pipe.call(b"INFO", b"keyspace").decode()
    out = {}
    for line in info.splitlines():
        if line.startswith("db") and ":" in line:
            name, kv = line.split(":", 1)
            out[name] = {k: int(v) for k, v in (p.split("=") for p in kv.split(",")) if k in ("keys", "expires")}
    return out


def save(pipe: Pipeline, path: str) -> int:
    pipe.call(b"SAVE")
    return os.path.getsize(path)


def run(args) -> int:
    t_start = time.monotonic()
    target = int(args.size_mb * MIB)
    rng = random.Random(args.seed)
    out = os.path.abspath(args.out)
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="gen_corpus.")
    dbfilename = "dump.rdb"
    dump = os.path.join(workdir, dbfilename)
    server = Server(args.server, workdir, dbfilename)
    pipe = None
    try:
        server.start()
        print("redis-server pid %d on 127.0.0.1:%d, dir %s" % (server.proc.pid, server.port, workdir), flush=True)
        pipe = Pipeline(server.port, timeout=args.timeout)
        version = pipe.call(b"INFO", b"server").decode().split("redis_version:")[1].split()[0]
        pipe.call(b"FLUSHALL")

        gen = Generator(pipe, rng, target)
        # giants scale linearly below 250 MiB, the "big" tier with sqrt,
        # both shrunk further if the fixed part would exceed ~35 % of the target
        # (raw size at full scale: ~34 MiB giants + ~36 MiB big tier)
        s = min(1.0, args.size_mb / 250.0)
        giant, big = s, min(1.0, math.sqrt(s))
        while (34 * giant + 36 * big) * MIB > 0.35 * target and big > 0.001:
            giant, big = giant * 0.8, big * 0.8
        print("target %.1f MiB; giant scale %.3f, big scale %.3f" % (target / MIB, giant, big), flush=True)
        gen.fixed(giant, big)
        gen.extra_dbs()
        pipe.sync()
        size_fixed = save(pipe, dump)
        est_fixed = gen.est
        print("  fixed part: dump %.1f MiB (est %.1f MiB)" % (size_fixed / MIB, est_fixed / MIB), flush=True)

        # filler, calibrated against real SAVEs
        ratio = 0.7          # initial guess: dump bytes per estimated byte
        last_size, last_est = size_fixed, est_fixed
        size = size_fixed
        frac = 0.35          # first filler step only fills part of the way
        for step in range(8):
            remaining = target - size
            if remaining <= 0.02 * target:
                break
            goal = gen.est + frac * remaining / ratio
            gen.fill(int(goal))
            pipe.sync()
            size = save(pipe, dump)
            if gen.est > last_est:
                ratio = max(0.05, (size - last_size) / (gen.est - last_est))
            print("  step %d: dump %.1f MiB, %d keys, ratio %.3f, %.0fs" %
                  (step, size / MIB, gen.keys, ratio, time.monotonic() - t_start), flush=True)
            last_size, last_est = size, gen.est
            frac = 1.0

        ks = keyspace(pipe)
        shutil.copyfile(dump, out + ".tmp")
        os.replace(out + ".tmp", out)
        elapsed = time.monotonic() - t_start
        nkeys = sum(v["keys"] for v in ks.values())
        nexp = sum(v.get("expires", 0) for v in ks.values())
        print("wrote %s" % out)
        print("  server     redis %s" % version)
        print("  keys       %d (%s)" % (nkeys, ", ".join("%s=%d" % (k, v["keys"]) for k, v in sorted(ks.items()))))
        print("  expiring   %d (%.1f %%)" % (nexp, 100.0 * nexp / max(nkeys, 1)))
        print("  dump size  %d bytes (%.1f MiB, target %.1f MiB)" % (size, size / MIB, target / MIB))
        print("  commands   %d (%.0f/s)" % (pipe.commands, pipe.commands / elapsed))
        print("  time       %.1f s" % elapsed)
        top = sorted(gen.stats.items(), key=lambda kv: -kv[1])
        print("  namespaces " + ", ".join("%s=%d" % kv for kv in top))

        if args.check:
            checker = os.path.join(os.path.dirname(args.server), "redis-check-rdb")
            if not os.path.exists(checker):
                checker = shutil.which("redis-check-rdb") or checker
            r = subprocess.run([checker, out], capture_output=True, text=True, timeout=600)
            tail = (r.stdout + r.stderr).strip().splitlines()[-1:] or [""]
            print("  check      %s: exit %d, %s" % (os.path.basename(checker), r.returncode, tail[0]))
            if r.returncode != 0:
                return 1
        return 0
    finally:
        if pipe is not None:
            pipe.close()
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="where to write the dump")
    ap.add_argument("--size-mb", type=float, default=250, help="target dump size in MiB (default 250)")
    ap.add_argument("--seed", type=int, default=1, help="RNG seed (default 1)")
    ap.add_argument("--server", default="/usr/bin/redis-server", help="redis-server binary")
    ap.add_argument("--timeout", type=float, default=300, help="socket timeout in seconds (default 300)")
    ap.add_argument("--check", action="store_true", help="run redis-check-rdb on the result")
    args = ap.parse_args(argv)
    if args.size_mb <= 0:
        ap.error("--size-mb must be positive")

    def on_signal(signum, _frame):
        print("gen_corpus: got signal %d, stopping" % signum, file=sys.stderr, flush=True)
        raise SystemExit(128 + signum)  # unwinds through the finally blocks
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    try:
        return run(args)
    except (RespError, OSError, RuntimeError, subprocess.SubprocessError) as e:
        print("gen_corpus: error: %s" % e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
