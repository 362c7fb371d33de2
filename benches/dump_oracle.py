#!/usr/bin/env python3
"""Per-key oracle of any dump: load DUMP into a scratch redis-server (the state MEMORY USAGE
describes after a reload), then SCAN every db and pipeline TYPE, OBJECT ENCODING and
MEMORY USAGE key SAMPLES 0. Writes OUT: db TAB hex(key) TAB type TAB encoding TAB memory_usage,
one line a key, and prints used_memory and the sum of MEMORY USAGE.  Standard library only.

    python3 benches/dump_oracle.py DUMP OUT [--server redis-server] [--port 7393] [--freed]
                                            [--used-memory-out FILE]

--freed adds a sixth column: the bytes used_memory drops by when the key is deleted (what
the key really adds to used_memory, where MEMORY USAGE is a formula), measured key by key
as DUMP, DEL, then RESTORE with its TTL (so the keyspace never shrinks), one round trip
each: slow, for fixtures. --used-memory-out writes used_memory after the load to FILE.

The server must be able to read the dump's RDB version (Debian's redis-server reads up to RDB 10),
and its expiries must lie in the future (keys already expired are dropped on load)."""
import argparse, os, shutil, socket, subprocess, sys, tempfile, time
ap = argparse.ArgumentParser()
ap.add_argument('dump'); ap.add_argument('out')
ap.add_argument('--server', default='redis-server'); ap.add_argument('--port', type=int, default=7393)
ap.add_argument('--freed', action='store_true'); ap.add_argument('--used-memory-out')
ARGS = ap.parse_args()
PORT = ARGS.port
def enc(*args):
    out = [b'*%d\r\n' % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b'$%d\r\n%s\r\n' % (len(a), a))
    return b''.join(out)
class Conn:
    def __init__(s):
        s.sock = socket.create_connection(('127.0.0.1', PORT)); s.buf = b''; s.pos = 0
    def send(s, data): s.sock.sendall(data)
    def _line(s):
        while True:
            i = s.buf.find(b'\r\n', s.pos)
            if i >= 0:
                l = s.buf[s.pos:i]; s.pos = i + 2; return l
            s._more()
    def _more(s):
        s.buf = s.buf[s.pos:]; s.pos = 0
        d = s.sock.recv(1 << 20)
        if not d: raise EOFError
        s.buf += d
    def read(s):
        l = s._line(); t = l[:1]
        if t in (b'+', b'-'): return l[1:].decode()
        if t == b':': return int(l[1:])
        if t == b'$':
            n = int(l[1:])
            if n < 0: return None
            while len(s.buf) - s.pos < n + 2: s._more()
            v = s.buf[s.pos:s.pos + n]; s.pos += n + 2; return v
        if t == b'*':
            n = int(l[1:]); return [s.read() for _ in range(n)]
        raise ValueError(l)
def used_memory(c):
    c.send(enc('INFO', 'memory')); mem = c.read()
    mem = mem.decode() if isinstance(mem, bytes) else str(mem)
    return int([l.split(':')[1] for l in mem.splitlines() if l.startswith('used_memory:')][0])
def freed_by(c, k):
    """Bytes used_memory drops by when k is deleted; k is then restored as it was. A buffer the
    server frees or grows meanwhile (a client's query buffer) shows in one measurement, so it
    is measured up to three times until two agree; where none do (a skiplist's node levels or a
    hash table's rehash are drawn anew by each RESTORE), the first, of the key as loaded."""
    c.send(enc('PTTL', k)); ttl = c.read()
    c.send(enc('DUMP', k)); payload = c.read()
    seen = []
    for _ in range(3):
        before = used_memory(c)
        c.send(enc('DEL', k)); c.read()
        after = used_memory(c)
        c.send(enc('RESTORE', k, max(ttl, 0), payload)); r = c.read()
        if r != 'OK': sys.exit('RESTORE %r: %r' % (k, r))
        if before - after in seen: return before - after
        seen.append(before - after)
    return seen[0]
def main():
    work = tempfile.mkdtemp(prefix='dump-oracle-')
    os.symlink(os.path.abspath(ARGS.dump), os.path.join(work, 'dump.rdb'))
    subprocess.run([ARGS.server, '--port', str(PORT), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no',
                    '--dir', work, '--dbfilename', 'dump.rdb', '--daemonize', 'yes',
                    '--pidfile', os.path.join(work, 'server.pid'), '--logfile', os.path.join(work, 'server.log')], check=True)
    c = None
    pidfile = os.path.join(work, 'server.pid')
    for i in range(7200):
        try:
            c = Conn(); c.send(enc('PING'))
            if c.read() == 'PONG': break
        except (OSError, EOFError, ValueError):
            c = None
        # A server that failed to load the dump exits: stop waiting for it.
        try:
            os.kill(int(open(pidfile).read()), 0)
        except (OSError, ValueError):
            if i > 10: break
        time.sleep(0.5)
    if c is None:
        log = os.path.join(work, 'server.log')
        sys.exit('the server did not start or load the dump:\n' + (open(log).read()[-2000:] if os.path.exists(log) else ''))
    try:
        while True:
            c.send(enc('INFO', 'persistence')); info = c.read()
            info = info.decode() if isinstance(info, bytes) else str(info)
            if '\nloading:0' in info: break
            time.sleep(0.5)
        t0 = time.time(); n = 0; total = 0
        used_after_load = used_memory(c)
        if ARGS.used_memory_out:
            with open(ARGS.used_memory_out, 'w') as f:
                f.write('%d\n' % used_after_load)
        c.send(enc('CONFIG', 'GET', 'databases')); dbs = int(c.read()[1])
        with open(ARGS.out, 'w') as out:
            for db in range(dbs):
                c.send(enc('SELECT', db)); c.read()
                cursor = b'0'
                while True:
                    c.send(enc('SCAN', cursor, 'COUNT', 5000)); cursor, keys = c.read()
                    cmds = []
                    for k in keys:
                        cmds += [enc('TYPE', k), enc('OBJECT', 'ENCODING', k), enc('MEMORY', 'USAGE', k, 'SAMPLES', 0)]
                    c.send(b''.join(cmds))
                    rows = []
                    for k in keys:
                        t = c.read(); e = c.read(); m = c.read()
                        e = e.decode() if isinstance(e, bytes) else e
                        rows.append((k, t, e, m)); n += 1
                        total += m if isinstance(m, int) else 0
                    for k, t, e, m in rows:
                        freed = '\t%d' % freed_by(c, k) if ARGS.freed else ''
                        out.write('%d\t%s\t%s\t%s\t%s%s\n' % (db, k.hex(), t, e, m, freed))
                    if cursor == b'0': break
        print('oracle: %d keys in %.0f s; sum of MEMORY USAGE %d; used_memory %d' % (n, time.time() - t0, total, used_after_load))
    finally:
        try:
            c.send(enc('SHUTDOWN', 'NOSAVE'))
        except OSError:
            pass
        time.sleep(0.5); shutil.rmtree(work, ignore_errors=True)
main()
