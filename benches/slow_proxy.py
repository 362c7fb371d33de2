#!/usr/bin/env python3
"""A TCP proxy on loopback whose every connection carries at most --mbps
megabytes a second from the server to the client: a store far away, where
one connection's speed is the store's to set (S3 serves about 50-100 MB/s a
connection), in front of a store on this machine.

    python3 benches/slow_proxy.py --listen 9124 --upstream 9123 --mbps 50

Stops on Ctrl-C. Used by docs/object-storage.md to show what reading an
object in parts at once does when the connection, not the analysis, sets
the pace.
"""
import argparse
import socket
import threading
import time

CHUNK = 64 * 1024


def pump(src, dst, rate):
    """Copies src to dst, at most `rate` bytes a second when rate is set."""
    started, sent = time.monotonic(), 0
    try:
        while True:
            data = src.recv(CHUNK)
            if not data:
                break
            dst.sendall(data)
            sent += len(data)
            if rate:
                ahead = sent / rate - (time.monotonic() - started)
                if ahead > 0:
                    time.sleep(ahead)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve(client, upstream, rate):
    server = socket.create_connection(("127.0.0.1", upstream))
    threading.Thread(target=pump, args=(client, server, 0), daemon=True).start()
    pump(server, client, rate)
    client.close()
    server.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--listen", type=int, required=True)
    ap.add_argument("--upstream", type=int, required=True)
    ap.add_argument("--mbps", type=float, required=True, help="MB (10^6 bytes) a second per connection")
    args = ap.parse_args()
    rate = args.mbps * 1e6
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", args.listen))
    listener.listen(64)
    while True:
        client, _ = listener.accept()
        threading.Thread(target=serve, args=(client, args.upstream, rate), daemon=True).start()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
