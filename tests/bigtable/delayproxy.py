#!/usr/bin/env python3
"""delayproxy.py UPSTREAM DELAY_MS — a loopback TCP proxy that delays each direction by DELAY_MS, and can
cut every connection at once.

Listens on a free loopback port and prints its address (host:port) on stdout. Each connection is relayed
to UPSTREAM (host:port); every chunk read from either side is written to the other DELAY_MS milliseconds
after it was read, in order, so a request and its answer take 2 x DELAY_MS more than on loopback: the
distance of a cloud region (1 ms: a 2 ms round trip) in front of the Bigtable emulator, for
tests/bigtable/distance.sh and tests/bench/bench_bt_walk.sh. Bandwidth is not limited: a stream costs its
round trips, not its bytes.

Cutting, for tests of a client that must reconnect (tests/bigtable/distance.sh): SIGUSR1 closes every
connection open at that moment abruptly, both sides (what a network partition or a server restart does
to a gRPC channel), and logs "cut N" on stderr, N the connections closed. The proxy goes on listening:
later connections are relayed as before. Python 3's standard library only."""
import asyncio
import signal
import socket
import struct
import sys
import time

upstream_host, upstream_port = sys.argv[1].rsplit(":", 1)
delay = float(sys.argv[2]) / 1000.0
open_writers = set()          # every open connection's two writers (client side, upstream side)


async def pump(reader, writer):
    """Copies READER to WRITER, each chunk DELAY after it was read; ends both when READER ends."""
    queue = asyncio.Queue()

    async def send():
        while True:
            due, data = await queue.get()
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            if data is None:
                break
            writer.write(data)
            await writer.drain()
        writer.close()

    sender = asyncio.ensure_future(send())
    try:
        while True:
            data = await reader.read(65536)
            queue.put_nowait((time.monotonic() + delay, data if data else None))
            if not data:
                break
    except (ConnectionError, OSError):
        queue.put_nowait((time.monotonic(), None))
    try:
        await sender
    except (ConnectionError, OSError):
        pass


async def relay(client_reader, client_writer):
    try:
        up_reader, up_writer = await asyncio.open_connection(upstream_host, int(upstream_port))
    except OSError:
        client_writer.close()
        return
    pair = (client_writer, up_writer)
    open_writers.add(pair)
    try:
        await asyncio.gather(pump(client_reader, up_writer), pump(up_reader, client_writer))
    finally:
        open_writers.discard(pair)


def cut():
    """SIGUSR1: every open connection closed at once, abruptly (a reset, not a goodbye), both sides."""
    pairs = list(open_writers)
    for pair in pairs:
        for writer in pair:
            sock = writer.get_extra_info("socket")
            if sock is not None:      # linger 0: close() sends a reset
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
    print(f"cut {len(pairs)}", file=sys.stderr, flush=True)


async def main():
    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, cut)
    server = await asyncio.start_server(relay, "127.0.0.1", 0)
    host, port = server.sockets[0].getsockname()[:2]
    print(f"{host}:{port}", flush=True)
    async with server:
        await server.serve_forever()


asyncio.run(main())
