#!/usr/bin/env python3
"""callproxy.py UPSTREAM N [METHOD] — a loopback gRPC (HTTP/2) proxy that lets the first N - 1 calls through
and no more; with METHOD (a gRPC method's name, such as MutateRows), the first N - 1 calls of that method,
and every call of any other.

Listens on a free loopback port and prints its address (host:port) on stdout. Each connection is relayed
to UPSTREAM (host:port). It reads the client's HTTP/2 frames (the 24-byte preface, then 9-byte frame
headers): a HEADERS frame on a stream id the client has not used yet starts a call, whose method is the
end of its :path header (read with HPACK's rules: the header block refers to the connection's dynamic
table, which the proxy keeps as the server does; gRPC sends no Huffman-coded path). Calls are counted over
all connections; when call N starts, the connection is closed, both sides, before that frame is passed
on, and so is every later connection at its first counted call: the server never sees call N or any after
it, and the client gets UNAVAILABLE, whatever the timing. Each refusal is logged as a line "refused" on
stderr. For tests of what a command leaves behind when a call fails (tests/bigtable/schema.sh), and of a
mount's queued deletes failing (tests/bigtable/defer.sh)."""
import socket
import sys
import threading

upstream_host, upstream_port = sys.argv[1].rsplit(":", 1)
allowed = int(sys.argv[2]) - 1
method = sys.argv[3] if len(sys.argv) > 3 else None
calls = [0]
lock = threading.Lock()
PREFACE = 24

# HPACK (RFC 7541): the static table's names (appendix A), for the sizes of the dynamic table's entries.
STATIC = [None, ":authority", ":method", ":method", ":path", ":path", ":scheme", ":scheme", ":status",
          ":status", ":status", ":status", ":status", ":status", ":status", "accept-charset", "accept-encoding",
          "accept-language", "accept-ranges", "accept", "access-control-allow-origin", "age", "allow",
          "authorization", "cache-control", "content-disposition", "content-encoding", "content-language",
          "content-length", "content-location", "content-range", "content-type", "cookie", "date", "etag",
          "expect", "expires", "from", "host", "if-match", "if-modified-since", "if-none-match", "if-range",
          "if-unmodified-since", "last-modified", "link", "location", "max-forwards", "proxy-authenticate",
          "proxy-authorization", "range", "referer", "refresh", "retry-after", "server", "set-cookie",
          "strict-transport-security", "transfer-encoding", "user-agent", "vary", "via", "www-authenticate"]
STATIC_VALUES = {2: b"GET", 3: b"POST", 4: b"/", 5: b"/index.html"}


class Hpack:
    """A connection's HPACK decoding state: the dynamic table, newest first."""

    def __init__(self):
        self.table = []
        self.size = 0
        self.max = 4096

    def _evict(self):
        while self.size > self.max and self.table:
            name, value = self.table.pop()
            self.size -= len(name) + len(value) + 32

    def _entry(self, i):
        if 0 < i < len(STATIC):
            return STATIC[i].encode(), STATIC_VALUES.get(i, b"")
        i -= len(STATIC)
        return self.table[i] if 0 <= i < len(self.table) else (b"", b"")

    @staticmethod
    def _int(b, pos, bits):
        mask = (1 << bits) - 1
        v = b[pos] & mask
        pos += 1
        if v < mask:
            return v, pos
        shift = 0
        while True:
            c = b[pos]
            pos += 1
            v += (c & 0x7F) << shift
            shift += 7
            if not c & 0x80:
                return v, pos

    def _str(self, b, pos):
        n, p = self._int(b, pos, 7)
        return bytes(b[p:p + n]), p + n  # (a Huffman-coded string stays coded)

    def path(self, block):
        """The :path of header block BLOCK (bytes), or None; the dynamic table updated."""
        pos, path = 0, None
        while pos < len(block):
            c = block[pos]
            if c & 0x80:  # indexed
                i, pos = self._int(block, pos, 7)
                name, value = self._entry(i)
            elif c & 0xE0 == 0x20:  # dynamic table size update
                self.max, pos = self._int(block, pos, 5)
                self._evict()
                continue
            else:  # a literal: with incremental indexing (01), without (0000) or never indexed (0001)
                bits = 6 if c & 0x40 else 4
                i, pos = self._int(block, pos, bits)
                if i:
                    name = self._entry(i)[0]
                else:
                    name, pos = self._str(block, pos)
                value, pos = self._str(block, pos)
                if c & 0x40:
                    self.table.insert(0, (name, value))
                    self.size += len(name) + len(value) + 32
                    self._evict()
            if name == b":path":
                path = value
        return path


def header_block(frame):
    """The header block fragment of HEADERS frame FRAME (header included): padding and priority removed."""
    flags, payload = frame[4], frame[9:]
    pad = 0
    if flags & 0x08:  # PADDED
        pad = payload[0]
        payload = payload[1:]
    if flags & 0x20:  # PRIORITY
        payload = payload[5:]
    return payload[: len(payload) - pad]


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
    hpack = Hpack()
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
                if len(buf) < 9 + length:
                    break
                if kind == 1:  # HEADERS: read for the dynamic table even when not a new call
                    path = hpack.path(header_block(bytes(buf[: 9 + length])))
                    if stream > last_stream:  # on a new stream: a call
                        last_stream = stream
                        counted = method is None or (path or b"").endswith(b"/" + method.encode())
                        with lock:
                            calls[0] += counted
                            refuse = counted and calls[0] > allowed
                        if refuse:
                            print("refused", file=sys.stderr, flush=True)
                            raise OSError("refused")
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
