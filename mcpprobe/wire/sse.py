"""An incremental parser for Server-Sent Events (the WHATWG event-stream format)."""

from __future__ import annotations

from dataclasses import dataclass

from mcpprobe.safety.numbers import digits

MAX_RETRY_MS = 24 * 3600 * 1000  # the longest `retry:` taken: a day


@dataclass
class Event:
    event: str
    data: str
    id: str | None = None


class EventParser:
    """Feed bytes, get complete events. Handles CRLF, CR and LF line ends and multi-line data.

    Keeps the stream's state a reconnection needs: `last_event_id` (the WHATWG "last event ID
    buffer", which outlives the event that set it) and `retry_ms` (the reconnection time the
    server asked for with `retry:`). An event larger than `max_event_bytes` raises ValueError as
    soon as that many bytes have arrived: the parser never holds more than the limit, and reads
    each byte once (a single 64 MiB line costs what 64 MiB cost, not its square).
    """

    def __init__(self, max_event_bytes: int) -> None:
        self._buffer = bytearray()
        self._scanned = 0  # bytes of _buffer already searched for a line end
        self._data: list[str] = []
        self._size = 0
        self._event = ""
        self._max = max_event_bytes
        self._pending_cr = False
        self.last_event_id: str | None = None
        self.retry_ms: int | None = None
        self.refused_retry: str | None = None  # a `retry:` value out of range, until the transport reports it

    def reconnected(self) -> None:
        """A new connection continues the stream: a half-received event from the old one is
        dropped; the last event id and the reconnection time are kept."""
        self._buffer.clear()
        self._scanned = 0
        self._data, self._size, self._event = [], 0, ""
        self._pending_cr = False

    def feed(self, chunk: bytes) -> list[Event]:
        if self._pending_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        if not chunk:
            return []
        self._pending_cr = chunk.endswith(b"\r")
        self._buffer += chunk
        events: list[Event] = []
        start = 0
        while True:
            end = self._line_end(max(start, self._scanned))
            if end < 0:
                break
            line = bytes(self._buffer[start:end])
            step = 2 if self._buffer[end : end + 2] == b"\r\n" else 1
            start = end + step
            self._scanned = start
            event = self._line(line.decode("utf-8", errors="replace"))
            if event is not None:
                events.append(event)
        if start:
            del self._buffer[:start]
        self._scanned = len(self._buffer)
        if len(self._buffer) + self._size > self._max:
            raise ValueError(f"event larger than {self._max} bytes")
        return events

    def _line_end(self, offset: int) -> int:
        lf = self._buffer.find(b"\n", offset)
        cr = self._buffer.find(b"\r", offset, lf if lf >= 0 else len(self._buffer))
        return cr if cr >= 0 else lf

    def _line(self, line: str) -> Event | None:
        if not line:
            if not self._data:
                self._event = ""
                return None
            event = Event(self._event or "message", "\n".join(self._data), self.last_event_id)
            self._data, self._size, self._event = [], 0, ""
            return event
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
            self._size += len(value)
            if self._size > self._max:
                raise ValueError(f"event larger than {self._max} bytes")
        elif name == "event":
            self._event = value
        elif name == "id" and "\x00" not in value:
            self.last_event_id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            # WHATWG: only digits count. Past a day (or 15 digits) it is no reconnection time anyone
            # waits for: kept out (the default wait applies), and noted for the transport to report.
            retry = digits(value, MAX_RETRY_MS)
            if retry is None:
                self.refused_retry = value[:40] + ("..." if len(value) > 40 else "")
            else:
                self.retry_ms = retry
        return None
