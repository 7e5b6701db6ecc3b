"""Cutting a byte stream back into newline-delimited messages, with memory bounded.

The relay hands copies of what it read, in the pieces it read them; a message may span many pieces
or share one with others. A line longer than `limit` is not kept: only its size, its SHA-256 digest
and its first bytes, so a flood or one huge message costs at most `limit` bytes per direction.
After a gap (pieces the observer could not take in time), the framer drops the partial line it
held and resumes after the next newline: what it hands on afterwards is whole messages again.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

HEAD_BYTES = 256


@dataclass(frozen=True)
class Oversize:
    """A line past the framer's limit: what is known of it."""

    size: int
    sha256: str
    head: bytes


class LineFramer:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._buffer = bytearray()
        self._digest: hashlib._Hash | None = None  # set while a line is past the limit
        self._size = 0
        self._head = b""
        self._resync = False  # after a gap: drop everything up to the next newline

    def gap(self) -> None:
        """Pieces were lost: the line being gathered is not whole; resume after the next newline."""
        self._buffer.clear()
        self._digest = None
        self._size = 0
        self._resync = True

    def feed(self, data: bytes) -> list[bytes | Oversize]:
        out: list[bytes | Oversize] = []
        start = 0
        if self._resync:
            cut = data.find(b"\n")
            if cut < 0:
                return out
            self._resync = False
            start = cut + 1
        if self._buffer or self._digest is not None:  # the end of a line begun in an earlier piece
            cut = data.find(b"\n", start)
            if cut < 0:
                self._gather(data, start, len(data))
                return out
            self._gather(data, start, cut + 1)
            out.append(self._take())
            start = cut + 1
        # Whole lines in this piece: sliced from it, not gathered (the usual case, and the cheap one).
        find, limit = data.find, self.limit
        while (cut := find(b"\n", start)) >= 0:
            stop = cut + 1
            line = data[start:stop]
            out.append(line if stop - start <= limit else Oversize(len(line), hashlib.sha256(line).hexdigest(),
                                                                      line[:HEAD_BYTES]))
            start = stop
        if start < len(data):
            self._gather(data, start, len(data))
        return out

    def end(self) -> bytes | Oversize | None:
        """What is left when the stream ends: a last line without its newline, if any."""
        if self._digest is None and not self._buffer:
            return None
        return self._take()

    def _gather(self, data: bytes, start: int, stop: int) -> None:
        if start >= stop:
            return
        if self._digest is not None:
            self._digest.update(data[start:stop])
            self._size += stop - start
            return
        self._buffer += data[start:stop]
        if len(self._buffer) > self.limit:
            self._digest = hashlib.sha256(self._buffer)
            self._size = len(self._buffer)
            self._head = bytes(self._buffer[:HEAD_BYTES])
            self._buffer = bytearray()

    def _take(self) -> bytes | Oversize:
        if self._digest is not None:
            taken: bytes | Oversize = Oversize(self._size, self._digest.hexdigest(), self._head)
            self._digest = None
            self._size = 0
            self._head = b""
            return taken
        line = bytes(self._buffer)
        self._buffer.clear()
        return line
