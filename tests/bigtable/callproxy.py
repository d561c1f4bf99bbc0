#!/usr/bin/env python3
"""callproxy.py UPSTREAM N — a loopback gRPC (HTTP/2) proxy that lets the first N - 1 calls through and
no more.

Listens on a free loopback port and prints its address (host:port) on stdout. Each connection is relayed
to UPSTREAM (host:port). It reads the client's HTTP/2 frames (the 24-byte preface, then 9-byte frame
headers): a HEADERS frame on a stream id the client has not used yet starts a call. Calls are counted over
all connections; when call N starts, the connection is closed, both sides, before that frame is passed
on, and so is every later connection at its first call: the server never sees call N or any after it,
and the client gets UNAVAILABLE, whatever the timing. Each refusal is logged as a line "refused" on
stderr. For tests of what a command leaves behind when a call fails (tests/bigtable/schema.sh)."""
import socket
import sys
import threading

upstream_host, upstream_port = sys.argv[1].rsplit(":", 1)
allowed = int(sys.argv[2]) - 1
calls = [0]
lock = threading.Lock()
PREFACE = 24


def pump_server(server, client):
    try:
        while True:
            data = server.recv(65536)
            if not data:
                break
            client.sendall(data)
    except OSError:
        pass
    for s in (client, server):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def serve(client):
    try:
        server = socket.create_connection((upstream_host, int(upstream_port)))
    except OSError:
        client.close()
        return
    threading.Thread(target=pump_server, args=(server, client), daemon=True).start()
    buf = bytearray()
    preface_done = False
    last_stream = 0
    try:
        while True:
            data = client.recv(65536)
            if not data:
                break
            buf += data
            while True:  # pass on every whole frame (the preface first)
                if not preface_done:
                    if len(buf) < PREFACE:
                        break
                    server.sendall(bytes(buf[:PREFACE]))
                    del buf[:PREFACE]
                    preface_done = True
                    continue
                if len(buf) < 9:
                    break
                length = int.from_bytes(buf[0:3], "big")
                kind = buf[3]
                stream = int.from_bytes(buf[5:9], "big") & 0x7FFFFFFF
                if kind == 1 and stream > last_stream:  # HEADERS on a new stream: a call
                    last_stream = stream
                    with lock:
                        calls[0] += 1
                        refuse = calls[0] > allowed
                    if refuse:
                        print("refused", file=sys.stderr, flush=True)
                        raise OSError("refused")
                if len(buf) < 9 + length:
                    break
                server.sendall(bytes(buf[: 9 + length]))
                del buf[: 9 + length]
    except OSError:
        pass
    for s in (client, server):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()


def main():
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    print("127.0.0.1:%d" % listener.getsockname()[1], flush=True)
    while True:
        client, _ = listener.accept()
        threading.Thread(target=serve, args=(client,), daemon=True).start()


main()
