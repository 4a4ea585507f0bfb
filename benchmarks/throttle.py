"""A link of a given speed and latency in front of a local server, for the benchmarks.

    with throttled("http://127.0.0.1:8123/", LINKS["4g"]) as url:   # http://127.0.0.1:<other port>/
        ...   # the browser opens url; every byte to and from the server crosses the shaped link

How it shapes: a throttling TCP proxy written here (asyncio, in a thread of the benchmark's own
process), not tc. It changes nothing on the machine (no qdisc on lo, no root, no namespace: the
machine's loopback is shared with other people's tests), and it goes away with the process, even on
Ctrl-C. Only the connections made to the proxy's port are shaped.

The link it models: one bottleneck per direction, shared by every connection the browser opens
(a token bucket, as tc's tbf: `rate` bits per second, `burst` bytes), and a propagation delay of
`latency` seconds per round trip (half each way, added to every chunk as it crosses, so data in
flight is pipelined, not serialised). Data is forwarded in chunks of at most 16 KB, in the order the
connections asked for the link, so parallel downloads share it fairly. The TCP handshake with the
proxy itself is not delayed: a new connection costs one round trip less than on a real link (the
browser keeps its six connections open, so this is a few round trips per visit).

The counters (`Throttle.sent` bytes to the client, `received` from it) are the link's, headers
included.
"""
from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

CHUNK = 16 * 1024


@dataclass(frozen=True)
class Link:
    name: str
    rate: float | None       # bits per second, each direction; None: as fast as loopback
    latency: float = 0.0     # seconds added per round trip
    burst: int = 64 * 1024   # bytes the bucket holds (tbf's burst)

    def describe(self) -> str:
        if self.rate is None:
            return f"{self.name} (127.0.0.1, not shaped)"
        return f"{self.name} ({self.rate / 1e6:g} Mbit/s, +{self.latency * 1000:.0f} ms RTT)"


LINKS = {
    "loopback": Link("loopback", None),
    "broadband": Link("broadband", 50e6, 0.010),
    "4g": Link("4g", 20e6, 0.050),
    "slow": Link("slow", 5e6, 0.100),
    "classroom": Link("classroom", 100e6, 0.005),    # one 100 Mbit/s Wi-Fi for a whole class
}


class Bucket:
    """A token bucket shared by the connections of one direction: take(n) returns when n bytes may
    go. Reservations are made in call order (a virtual clock), so no connection starves."""

    def __init__(self, rate_bits: float, burst: int):
        self.rate = rate_bits / 8          # bytes per second
        self.burst = burst
        self.free_at = time.monotonic()    # when the link has sent everything reserved so far

    async def take(self, n: int) -> None:
        now = time.monotonic()
        # an idle link has at most `burst` bytes of credit
        self.free_at = max(self.free_at, now - self.burst / self.rate) + n / self.rate
        wait = self.free_at - now
        if wait > 0:
            await asyncio.sleep(wait)


class Throttle:
    """The proxy: listens on 127.0.0.1 (a free port), forwards to (host, port) through `link`."""

    def __init__(self, host: str, port: int, link: Link):
        self.target = (host, port)
        self.link = link
        self.sent = 0          # bytes to the client (the download)
        self.received = 0      # bytes from the client
        self.connections = 0
        self.errors: list[str] = []
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True, name="throttle")
        self.server = None
        self.tasks: set[asyncio.Task] = set()

    # lifecycle ---------------------------------------------------------------------------------

    def start(self) -> int:
        self.thread.start()
        self.down = self.up = None
        if self.link.rate:
            self.down = Bucket(self.link.rate, self.link.burst)
            self.up = Bucket(self.link.rate, self.link.burst)
        future = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._connection, "127.0.0.1", 0), self.loop)
        self.server = future.result(timeout=10)
        return self.server.sockets[0].getsockname()[1]

    def stop(self) -> None:
        async def close():
            self.server.close()
            for task in list(self.tasks):
                task.cancel()
            await asyncio.gather(*self.tasks, return_exceptions=True)
        if self.server is not None:
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(close(), self.loop).result(timeout=10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        if not self.thread.is_alive():
            self.loop.close()

    # forwarding --------------------------------------------------------------------------------

    async def _connection(self, client_r, client_w):
        task = asyncio.current_task()
        self.tasks.add(task)
        self.connections += 1
        try:
            server_r, server_w = await asyncio.wait_for(asyncio.open_connection(*self.target), 10)
        except (OSError, asyncio.TimeoutError) as error:
            self.errors.append(f"connect: {error!r}")
            client_w.close()
            self.tasks.discard(task)
            return
        try:
            await asyncio.gather(self._pipe(client_r, server_w, self.up, "received"),
                                 self._pipe(server_r, client_w, self.down, "sent"))
        except (asyncio.CancelledError, Exception):
            pass
        finally:
            for w in (client_w, server_w):
                w.close()
            self.tasks.discard(task)

    async def _pipe(self, reader, writer, bucket: Bucket | None, counter: str):
        """reader -> writer, each chunk delayed by half the round trip and paced by the bucket.
        A reader task and a writer task with a bounded queue between them: chunks in flight
        overlap (the delay is the link's length, not a pause per chunk)."""
        delay = self.link.latency / 2
        queue: asyncio.Queue = asyncio.Queue(maxsize=256)     # 4 MB in flight at most

        async def read():
            try:
                while True:
                    data = await reader.read(CHUNK)
                    if not data:
                        break
                    if bucket:
                        await bucket.take(len(data))      # the bottleneck, in order of arrival
                    await queue.put((time.monotonic() + delay, data))
            except (ConnectionError, OSError):
                pass
            finally:
                await queue.put((time.monotonic() + delay, b""))

        async def write():
            while True:
                due, data = await queue.get()
                wait = due - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                if not data:
                    with contextlib.suppress(OSError, RuntimeError):
                        if writer.can_write_eof():
                            writer.write_eof()
                    return
                writer.write(data)
                setattr(self, counter, getattr(self, counter) + len(data))
                await writer.drain()

        reading = asyncio.ensure_future(read())
        try:
            await write()
        except (ConnectionError, OSError):
            pass
        finally:
            reading.cancel()
            await asyncio.gather(reading, return_exceptions=True)


@contextlib.contextmanager
def throttled(base_url: str, link: Link):
    """Yields a base URL that reaches `base_url` (http://127.0.0.1:PORT/…) through `link`; the
    loopback link yields base_url itself (no proxy)."""
    if link.rate is None and not link.latency:
        yield base_url
        return
    with throttle_for(base_url, link) as (url, _):
        yield url


@contextlib.contextmanager
def throttle_for(base_url: str, link: Link):
    """As throttled(), yielding (url, the Throttle) to read its byte counters."""
    parts = urlsplit(base_url)
    proxy = Throttle(parts.hostname, parts.port, link)
    port = proxy.start()
    try:
        yield base_url.replace(f"{parts.hostname}:{parts.port}", f"127.0.0.1:{port}", 1), proxy
    finally:
        proxy.stop()
