#!/usr/bin/env python3
"""cutproxy.py UPSTREAM BYTES CUTS — a loopback TCP proxy that breaks connections mid-stream.

Listens on a free loopback port and prints its address (host:port) on stdout. Each connection is relayed
to UPSTREAM (host:port); the first CUTS connections are closed abruptly, both sides, once BYTES bytes have
passed through them (either way), each cut logged as a line "cut" on stderr. Later connections pass
through whole. For tests of resumed streams and retried calls (tests/bigtable/copy.sh)."""
import socket
import sys
import threading

upstream_host, upstream_port = sys.argv[1].rsplit(":", 1)
limit = int(sys.argv[2])
cuts_left = [int(sys.argv[3])]
lock = threading.Lock()


def serve(client):
    try:
        server = socket.create_connection((upstream_host, int(upstream_port)))
    except OSError:
        client.close()
        return
    with lock:
        cut = cuts_left[0] > 0
        if cut:
            cuts_left[0] -= 1
    passed = [0]
    done = threading.Event()

    def pump(src, dst):
        try:
            while not done.is_set():
                data = src.recv(65536)
                if not data:
                    break
                if cut:
                    with lock:
                        passed[0] += len(data)
                        over = passed[0] >= limit
                    if over:
                        if not done.is_set():
                            print("cut", file=sys.stderr, flush=True)
                        break
                dst.sendall(data)
        except OSError:
            pass
        done.set()
        for s in (src, dst):
            try:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    a = threading.Thread(target=pump, args=(client, server), daemon=True)
    b = threading.Thread(target=pump, args=(server, client), daemon=True)
    a.start()
    b.start()
    a.join()
    b.join()
    client.close()
    server.close()


def main():
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(64)
    print("127.0.0.1:%d" % lsock.getsockname()[1], flush=True)
    while True:
        conn, _ = lsock.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


main()
