"""`load --metrics-listen`: the run's figures as OpenMetrics while it runs, for Prometheus to scrape
from every worker and add up.

Counters and one histogram per operation, labelled with the run id and the worker, only for measured
requests (after the warm-up), as the JSON document counts them. The histogram's buckets are the same
in every run and are unions of the fixed layout's (mcpprobe.load.histogram), so Prometheus computes
the fleet's percentiles with `histogram_quantile(q, sum by (le) (rate(..._bucket[w])))` and they
agree with `load --merge` to a bucket. Boundaries: four per power of two from 128 µs to 64 s; a
latency is whole microseconds, and one of exactly a boundary counts in the bucket above it.

The endpoint is a few lines of HTTP/1.1 on a socket the command line bound (so a bad address is a
usage error before anything starts): GET /metrics, one answer per connection, a request head of at
most 8 KiB read within 5 s. When the run has ended it keeps answering until a scrape that began
after the end has been served (the last figures reach Prometheus), at most `linger` seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from typing import Any

import anyio

from mcpprobe.load.histogram import LINEAR, bounds_of, bucket_of

CONTENT_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8"
MAX_HEAD = 8192
HEAD_SECONDS = 5.0


def _boundaries() -> list[int]:
    """Upper bounds in microseconds: 2**k * (1 + j/4), each the upper bound of a bucket of the layout."""
    edges = []
    for k in range(7, 26):
        for j in range(4):
            edges.append((1 << k) + j * (1 << (k - 2)))
    edges.append(1 << 26)
    for edge in edges:  # each is where a layout bucket ends: the live buckets are unions of them
        assert edge < LINEAR or bounds_of(bucket_of(edge))[0] == edge
    return edges


BOUNDARIES = _boundaries()
_LAST_INDEX = [bucket_of(edge) - 1 for edge in BOUNDARIES]  # the last layout bucket below each boundary


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


class LiveMetrics:
    """Reads the runner's figures on each scrape; the runner is set once the load is about to start."""

    def __init__(self, sock: socket.socket, labels: dict[str, str], linger: float) -> None:
        self.sock = sock
        self.labels = labels
        self.linger = linger
        self.runner: Any = None  # mcpprobe.load.run.Runner
        self.ended: float | None = None  # monotonic: when the run ended
        self._seen_after_end = anyio.Event()
        self._server: asyncio.AbstractServer | None = None

    @property
    def address(self) -> str:
        host, port = self.sock.getsockname()[:2]
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

    async def __aenter__(self) -> LiveMetrics:
        self._server = await asyncio.start_server(self._answer, sock=self.sock)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()

    async def finish(self) -> None:
        """The run has ended: wait (at most `linger`) until a scrape begun after now has been answered."""
        self.ended = time.monotonic()
        with anyio.move_on_after(self.linger):
            await self._seen_after_end.wait()

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        began = time.monotonic()
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_SECONDS)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, OSError):
            writer.close()
            return
        if len(head) > MAX_HEAD:
            writer.close()
            return
        words = head.split(b"\r\n", 1)[0].split()
        if len(words) >= 2 and words[0] == b"GET" and words[1].split(b"?")[0] == b"/metrics":
            status, body, content_type = "200 OK", self.render().encode(), CONTENT_TYPE
        else:
            status, body, content_type = "404 Not Found", b"not found: GET /metrics\n", "text/plain; charset=utf-8"
        try:
            writer.write(f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
                         "Connection: close\r\n\r\n".encode() + body)
            await writer.drain()
        except OSError:
            pass
        finally:
            writer.close()
        if status.startswith("200") and self.ended is not None and began >= self.ended:
            self._seen_after_end.set()

    def render(self) -> str:
        """The OpenMetrics exposition of the figures so far."""
        base = ",".join(f'{key}="{_escape(value)}"' for key, value in self.labels.items())
        lines = ["# TYPE mcpprobe_load_live_requests counter",
                 "# HELP mcpprobe_load_live_requests measured requests answered or failed, per operation"]
        runner = self.runner
        rows = [] if runner is None else list(zip(runner.operations, runner.per_op, strict=True))
        for op, stats in rows:
            lines.append(f'mcpprobe_load_live_requests_total{{{base},operation="{_escape(op.label)}"}} '
                         f"{stats.histogram.count}")
        lines += ["# TYPE mcpprobe_load_live_errors counter",
                  "# HELP mcpprobe_load_live_errors measured requests that failed, per operation and kind"]
        for op, stats in rows:
            for kind, n in sorted(stats.errors.items()):
                lines.append(f'mcpprobe_load_live_errors_total{{{base},operation="{_escape(op.label)}",'
                             f'kind="{_escape(kind)}"}} {n}')
        lines += ["# TYPE mcpprobe_load_live_latency_seconds histogram",
                  "# HELP mcpprobe_load_live_latency_seconds latency of measured requests (buckets the same in "
                  "every run)"]
        for op, stats in rows:
            histogram = stats.histogram
            counts = histogram.counts
            labels = f'{base},operation="{_escape(op.label)}"'
            cumulative, index = 0, 0
            for edge, last in zip(BOUNDARIES, _LAST_INDEX, strict=True):
                while index <= last:
                    cumulative += counts[index]
                    index += 1
                lines.append(f'mcpprobe_load_live_latency_seconds_bucket{{{labels},le="{edge / 1e6:g}"}} {cumulative}')
            lines.append(f'mcpprobe_load_live_latency_seconds_bucket{{{labels},le="+Inf"}} {histogram.count}')
            lines.append(f"mcpprobe_load_live_latency_seconds_count{{{labels}}} {histogram.count}")
            lines.append(f"mcpprobe_load_live_latency_seconds_sum{{{labels}}} {histogram.total / 1e6}")
        lines += ["# TYPE mcpprobe_load_live_in_flight gauge",
                  "# HELP mcpprobe_load_live_in_flight requests in flight now",
                  f"mcpprobe_load_live_in_flight{{{base}}} {0 if runner is None else runner.in_flight}",
                  "# TYPE mcpprobe_load_live_finished gauge",
                  "# HELP mcpprobe_load_live_finished 1 once the run has ended (its figures are final)",
                  f"mcpprobe_load_live_finished{{{base}}} {int(self.ended is not None)}",
                  "# EOF"]
        return "\n".join(lines) + "\n"
