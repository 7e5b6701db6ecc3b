"""A load run's figures: what each request counts as (latency, and an error by kind), an operation's
(or the whole run's) figures, and when a failed request means the server is gone."""

from __future__ import annotations

from typing import Any

from mcpprobe.errors import ConnectionFailed, ProbeError, RequestTimeout, RpcError
from mcpprobe.load.histogram import Histogram


class Stats:
    """One operation's (or the whole run's) figures: latencies and errors by kind."""

    __slots__ = ("histogram", "errors")

    def __init__(self) -> None:
        self.histogram = Histogram()
        self.errors: dict[str, int] = {}

    def add(self, micros: int, kind: str | None) -> None:
        self.histogram.record(micros)
        if kind is not None:
            self.errors[kind] = self.errors.get(kind, 0) + 1

    def figures(self, seconds: float) -> dict[str, Any]:
        h = self.histogram
        errors = sum(self.errors.values())
        return {
            "requests": h.count, "ok": h.count - errors, "errors": errors,
            "errorRate": round(errors / h.count, 6) if h.count else 0.0,
            "errorsByKind": dict(sorted(self.errors.items())),
            "throughput": round(h.count / seconds, 3) if seconds > 0 else 0.0,
            "latencyUs": {"min": h.minimum, "p50": h.quantile(0.5), "p90": h.quantile(0.9),
                          "p99": h.quantile(0.99), "p999": h.quantile(0.999), "max": h.maximum,
                          "mean": None if h.count == 0 else round(h.total / h.count, 1)},
        }


def server_gone(exc: ProbeError | None) -> bool:
    """A request that could not even connect (streamable HTTP: a new connection refused): nothing
    listens there any more, so the run has lost its server (exit 4, the figures until then), where a
    connection that broke mid-answer is one request's `transport` error and the run goes on."""
    return isinstance(exc, ConnectionFailed) and exc.detail.get("stage") == "connect"


def went_away(exc: ProbeError) -> ConnectionFailed:
    """What a run says when its server is gone (`server_gone`): that it went away during the run,
    then why, since "cannot connect" alone reads as if the run never had a server."""
    return ConnectionFailed(f"the server went away during the run: {exc.message}", detail=dict(exc.detail))


def error_kind(exc: ProbeError) -> str:
    """How a failed request is counted: `rpc CODE`, `timeout`, `http STATUS`, `transport` or `protocol`.
    Every HTTP answer with an error status is `http STATUS`, a 404 for a session the server no longer
    knows too (the server answered; it is no broken connection)."""
    if isinstance(exc, RpcError):
        return f"rpc {exc.rpc_code}"
    if isinstance(exc, RequestTimeout):
        return "timeout"
    status = exc.detail.get("status")
    if isinstance(status, int):
        return f"http {status}"
    if isinstance(exc, ConnectionFailed):
        return "transport"
    return "protocol"
