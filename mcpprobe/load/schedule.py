"""When each request of a load run starts: closed loop or open loop.

Closed loop (no --rate): `concurrency` workers each send a request as soon as their previous one is
answered, so the server's speed sets the pace, and a slow answer delays the requests behind it.

Open loop (--rate R): request i is due at start + i/R, whether or not earlier ones were answered, as
real clients arrive. One dispatcher takes the next slot, waits until it is due and sends it (no task
per request: mcpprobe.load.run's pipeline); when `concurrency` requests are in flight (the cap), the
slot waits for one of them to end, and its latency is still counted from when it was due. That is
what keeps coordinated omission out of the figures: a server that stalls for a second makes every
request due in that second slow, not one. (Over HTTP+SSE, whose POST must be awaited, `concurrency`
workers take the slots instead, the same way.)

A slot measured or not: those due during the warm-up are sent and answered but not counted.
"""

from __future__ import annotations

import math
import time


class Schedule:
    def __init__(self, rate: float | None, requests: int | None, duration: float | None, warmup: float) -> None:
        self.rate = rate
        self.requests = requests
        self.duration = duration
        self.warmup = warmup
        self.open = bool(rate)
        self.start = 0.0
        self.measure_start = 0.0
        self.end = math.inf
        self.issued = 0
        self.measured_issued = 0
        self._stopped = False

    def begin(self, now: float) -> None:
        self.start = now
        self.measure_start = now + self.warmup
        self.end = self.measure_start + self.duration if self.duration is not None else math.inf

    def stop(self) -> None:
        self._stopped = True

    def next(self) -> tuple[int, float, bool] | None:
        """(slot index, when it is due, whether it is measured), or None when the run has no more."""
        if self._stopped:
            return None
        due = self.start + self.issued / self.rate if self.rate else time.perf_counter()
        if due >= self.end:
            return None
        measured = due >= self.measure_start
        if measured:
            if self.requests is not None and self.measured_issued >= self.requests:
                return None
            self.measured_issued += 1
        index = self.issued
        self.issued += 1
        return index, due, measured
