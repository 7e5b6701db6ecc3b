"""The observer: the relay's copies in, record entries, findings and live lines out, on its own thread.

`offer` is what the relay calls for each piece it relays: it appends the copy to a bounded queue (a deque:
one append, no lock, no wake-up of another thread) and returns at once; the observer's thread takes what
is queued every millisecond, in batches. When the queue is full the copy is dropped and counted (the
newlines in it: the messages lost
to judging), the framer of that direction resynchronises at the next newline, and a `skipped` event
goes into the record. Nothing the observer does (a slow disk, a bug in a rule) can reach the relay:
a failure in judging stops judging, said once on the live view, and the relay goes on.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from mcpprobe.findings import Finding
from mcpprobe.safety.redact import Redactor
from mcpprobe.tap.frames import HEAD_BYTES, LineFramer, Oversize
from mcpprobe.tap.judge import Judge
from mcpprobe.tap.record import C2S, S2C, RecordWriter, message_entry

QUEUE_ITEMS = 256  # copies of at most relay.CHUNK bytes each: 16 MiB at most held
POLL_SECONDS = 0.001  # how often the observer looks for copies when there were none
FRAME_LIMIT = 8 * 1024 * 1024  # a line longer than this is judged by its size and digest only

Live = Callable[[dict[str, Any], list[Finding]], None]


class Observer:
    def __init__(self, judge: Judge, redactor: Redactor, *, writer: RecordWriter | None, live: Live | None,
                 cut: int, offset: float = 0.0) -> None:
        self.judge = judge
        self._redact = redactor
        self._writer = writer
        self._live = live
        self._cut = cut
        self._queue: deque[tuple[str, float, bytes, int, dict[str, Any] | None]] = deque()
        self._stopping = False
        self._dropped = {C2S: 0, S2C: 0}  # messages lost since the last copy taken, per direction
        self._framers = {C2S: LineFramer(FRAME_LIMIT), S2C: LineFramer(FRAME_LIMIT)}
        self._index = 0
        self.tally = {C2S: 0, S2C: 0}  # messages seen, per direction
        self._start = time.monotonic() - offset
        self.failure: str | None = None
        self._thread = threading.Thread(target=self._run, name="tap-observer", daemon=True)

    def start(self) -> None:
        self._thread.start()

    # ----- the relay's side: never waits -----

    def offer(self, direction: str, data: bytes) -> None:
        if len(self._queue) < QUEUE_ITEMS:  # one producer per direction: at most one past the bound
            self._queue.append((direction, time.monotonic(), data, self._dropped[direction], None))
            self._dropped[direction] = 0
        else:
            self._dropped[direction] += data.count(b"\n") or 1

    def offer_whole(self, direction: str, data: bytes, http: dict[str, Any]) -> None:
        """One whole message (HTTP: a body, an event's data), or with direction "event" a connection event."""
        if len(self._queue) < QUEUE_ITEMS:
            self._queue.append((direction, time.monotonic(), data, 0, http))
        elif direction in self._dropped:
            self._dropped[direction] += 1

    # ----- the observer's side -----

    def event(self, entry: dict[str, Any]) -> None:
        """A connection event, from the thread that runs the relay (before start, or after stop)."""
        self._handle(entry)

    def stop(self, timeout: float) -> None:
        """Let the observer finish what is queued (at most `timeout` seconds), then end its framers."""
        self._stopping = True
        self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            try:
                direction, at, data, dropped, http = self._queue.popleft()
            except IndexError:
                if self._stopping:
                    self._end()
                    return
                time.sleep(POLL_SECONDS)
                continue
            self._take(direction, at, data, dropped, http)

    def _take(self, direction: str, at: float, data: bytes, dropped: int, http: dict[str, Any] | None) -> None:
        if self.failure is not None:
            return
        try:
            if dropped:
                self._framers[direction].gap()
                self._handle({"event": "skipped", "t": round(at - self._start, 6), "dir": direction,
                              "messages": dropped})
            if http is not None:
                self._whole(direction, at, data, http)
                return
            if not data:
                return
            t = at - self._start
            for line in self._framers[direction].feed(data):  # `_line`, inline: once per message
                entry = message_entry(self._index, t, direction, line, self._redact, self._cut)
                self._index += 1
                self.tally[direction] += 1
                self._handle(entry)
        except Exception as exc:  # noqa: BLE001 - a bug in judging must never reach the relay
            self.failure = f"{type(exc).__name__}: {exc}"

    def _end(self) -> None:
        if self.failure is not None:
            return
        try:
            for name, lost in self._dropped.items():  # dropped after the last copy taken
                if lost:
                    self._handle({"event": "skipped", "t": round(time.monotonic() - self._start, 6), "dir": name,
                                  "messages": lost})
            for name, framer in self._framers.items():
                last = framer.end()
                if last is not None:
                    self._line(name, time.monotonic(), last)
        except Exception as exc:  # noqa: BLE001 - as above
            self.failure = f"{type(exc).__name__}: {exc}"

    def _whole(self, direction: str, at: float, data: bytes, http: dict[str, Any]) -> None:
        if direction == "event":
            rest = dict(http)
            entry = {"event": rest.pop("event", "http"), "t": round(at - self._start, 6)}
            entry.update({key: rest.pop(key) for key in ("bypass", "origin") if key in rest})
            entry["http"] = rest
            self._handle(entry)
            return
        body = data if len(data) <= FRAME_LIMIT else Oversize(len(data), hashlib.sha256(data).hexdigest(),
                                                                data[:HEAD_BYTES])
        entry = message_entry(self._index, at - self._start, direction, body, self._redact, self._cut)
        entry["http"] = http
        self._index += 1
        self.tally[direction] += 1
        self._handle(entry)

    def _line(self, direction: str, at: float, line: bytes | Oversize) -> None:
        entry = message_entry(self._index, at - self._start, direction, line, self._redact, self._cut)
        self._index += 1
        self.tally[direction] += 1
        self._handle(entry)

    def _handle(self, entry: dict[str, Any]) -> None:
        if self._writer is not None:
            self._writer.write(entry)
        found = self.judge.feed(entry)
        if self._live is not None:
            self._live(entry, found)

    def elapsed(self) -> float:
        return time.monotonic() - self._start
