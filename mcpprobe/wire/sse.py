"""An incremental parser for Server-Sent Events (the WHATWG event-stream format)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Event:
    event: str
    data: str
    id: str | None = None


class EventParser:
    """Feed bytes, get complete events. Handles CRLF, CR and LF line ends and multi-line data."""

    def __init__(self, max_event_bytes: int) -> None:
        self._buffer = b""
        self._data: list[str] = []
        self._size = 0
        self._event = ""
        self._id: str | None = None
        self._max = max_event_bytes
        self._pending_cr = False

    def feed(self, chunk: bytes) -> list[Event]:
        if self._pending_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        self._pending_cr = chunk.endswith(b"\r")
        self._buffer += chunk
        events: list[Event] = []
        while True:
            positions = [p for p in (self._buffer.find(b"\n"), self._buffer.find(b"\r")) if p >= 0]
            if not positions:
                break
            end = min(positions)
            line = self._buffer[:end]
            step = 2 if self._buffer[end : end + 2] == b"\r\n" else 1
            self._buffer = self._buffer[end + step :]
            event = self._line(line.decode("utf-8", errors="replace"))
            if event is not None:
                events.append(event)
        if len(self._buffer) + self._size > self._max:
            raise ValueError(f"event larger than {self._max} bytes")
        return events

    def _line(self, line: str) -> Event | None:
        if not line:
            if not self._data:
                self._event = ""
                return None
            event = Event(self._event or "message", "\n".join(self._data), self._id)
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
        elif name == "id":
            self._id = value
        return None
