#!/usr/bin/env python3
"""cutproxy.py UPSTREAM BYTES CUTS — a loopback TCP proxy that breaks connections mid-stream, or stalls.

Listens on a free loopback port and prints its address (host:port) on stdout. Each connection is relayed
to UPSTREAM (host:port); the first CUTS connections are closed abruptly, both sides, once BYTES bytes have
passed through them (either way), each cut logged as a line "cut" on stderr. Later connections pass
through whole. For tests of resumed streams and retried calls (tests/bigtable/copy.sh).

Stalling, for tests of an instance that stops answering (tests/bigtable/stall.sh): SIGUSR1 makes the
proxy stall, logging "stalled": from then on it still accepts connections and reads what either side
sends, but passes nothing on (it holds the bytes), so every call in flight or made later waits for its
deadline. SIGUSR2 ends the stall ("resumed"): what was held is passed on and relaying goes on. While
stalled, the proxy reads the HTTP/2 frames clients send (gRPC's) and counts the calls they start and
have not cancelled: each change is a line "calls N" on stderr (N calls waiting now), so a test sees how
many calls were waiting at once. Python 3's standard library only."""
import signal
import socket
import sys
import threading

upstream_host, upstream_port = sys.argv[1].rsplit(":", 1)
limit = int(sys.argv[2])
cuts_left = [int(sys.argv[3])]
lock = threading.Lock()       # cuts_left, and the stall's state below
stalled = [False]
waiting = [0]                 # calls started during the stall and not cancelled, all connections
relays = set()                # every direction of every connection, for the resume

PREFACE = 24                  # "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", the client's first bytes
HEADERS, RST_STREAM = 0x1, 0x3


def log(line):
    print(line, file=sys.stderr, flush=True)


class Frames:
    """Reads the HTTP/2 frame headers of a client's byte stream, chunk by chunk, and counts the calls
    (streams) begun and cancelled while the proxy is stalled."""

    def __init__(self):
        self.skip = PREFACE   # bytes to pass over: the preface, then each frame's payload
        self.head = b""       # a frame header being gathered (9 bytes)
        self.seen = set()     # stream ids that began
        self.open = set()     # of those, begun during a stall and not cancelled

    def feed(self, data):
        i, n = 0, len(data)
        while i < n:
            if self.skip:
                step = min(self.skip, n - i)
                self.skip -= step
                i += step
                continue
            step = min(9 - len(self.head), n - i)
            self.head += data[i:i + step]
            i += step
            if len(self.head) < 9:
                break
            length = int.from_bytes(self.head[0:3], "big")
            kind = self.head[3]
            stream = int.from_bytes(self.head[5:9], "big") & 0x7FFFFFFF
            self.head = b""
            self.skip = length
            if kind == HEADERS and stream not in self.seen:
                self.seen.add(stream)
                with lock:
                    if stalled[0]:
                        self.open.add(stream)
                        count(+1)
            elif kind == RST_STREAM:
                with lock:
                    if stream in self.open:
                        self.open.discard(stream)
                        count(-1)

    def close(self):
        with lock:
            for _ in self.open:
                count(-1)
            self.open.clear()


def count(delta):
    """Under the lock."""
    waiting[0] += delta
    log("calls %d" % waiting[0])


class Relay:
    """One direction of a connection: what SRC sends goes to DST, or is held while stalled."""

    def __init__(self, dst):
        self.dst = dst
        self.held = []
        self.send_lock = threading.Lock()

    def forward(self, data):
        with self.send_lock:
            with lock:
                hold = stalled[0]
            if hold:
                self.held.append(data)
                return
            self.flush_locked()
            self.dst.sendall(data)

    def flush_locked(self):
        held, self.held = self.held, []
        for data in held:
            self.dst.sendall(data)

    def flush(self):
        with self.send_lock:
            try:
                self.flush_locked()
            except OSError:
                pass


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
    frames = Frames()

    def pump(src, dst, parse):
        relay = Relay(dst)
        with lock:
            relays.add(relay)
        try:
            while not done.is_set():
                data = src.recv(65536)
                if not data:
                    break
                if parse:
                    frames.feed(data)
                if cut:
                    with lock:
                        passed[0] += len(data)
                        over = passed[0] >= limit
                    if over:
                        if not done.is_set():
                            log("cut")
                        break
                relay.forward(data)
        except OSError:
            pass
        with lock:
            relays.discard(relay)
        done.set()
        for s in (src, dst):
            try:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    a = threading.Thread(target=pump, args=(client, server, True), daemon=True)
    b = threading.Thread(target=pump, args=(server, client, False), daemon=True)
    a.start()
    b.start()
    a.join()
    b.join()
    frames.close()
    client.close()
    server.close()


def stall(signum, frame):
    with lock:
        stalled[0] = True
    log("stalled")


def resume(signum, frame):
    with lock:
        stalled[0] = False
        pending = list(relays)
    for r in pending:
        threading.Thread(target=r.flush, daemon=True).start()
    log("resumed")


def main():
    signal.signal(signal.SIGUSR1, stall)
    signal.signal(signal.SIGUSR2, resume)
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(64)
    print("127.0.0.1:%d" % lsock.getsockname()[1], flush=True)
    while True:
        conn, _ = lsock.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


main()
