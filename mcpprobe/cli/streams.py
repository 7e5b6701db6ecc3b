"""Standard output and error whose reader may go away: the one place that handles a closed pipe.

`mcpprobe probe --all | head -1`, `mcpprobe read URI 2>&1 | head -5`: the reader stops reading and
the next write fails with EPIPE. That must change nothing about the run: what mcpprobe still has to
say is dropped, the work goes on, and the exit code is the one the run earns, the same as unpiped.
So `main` wraps both standard streams once, before anything is printed, and no other code handles
BrokenPipeError for them. `watch` asks `reader_gone()` to stop when its output is no longer read.
A write that fails otherwise (stdout on a full disk) drops the rest the same way; the command then
says so and exits 2, as for an output file that cannot be written (`write_error`).

Standard library only: loaded by every start, `--help` included.
"""

from __future__ import annotations

import contextlib
import os
import select
import stat
import sys
from collections.abc import Iterable
from typing import Any, BinaryIO, TextIO


class _Pipe:
    """What the guards of one stream share: whether its reader went away."""

    def __init__(self, fileno: int | None) -> None:
        self.fileno = fileno
        self.gone = False
        self.error: OSError | None = None  # a write that failed otherwise (a full disk): said at the end

    def failed(self, exc: OSError) -> None:
        """A write failed for another reason than a reader that went away: the rest is dropped
        likewise, and the command says why once its work is done (`write_error`)."""
        if self.error is None:
            self.error = exc
        self.close()

    def close(self) -> None:
        """Point the descriptor at /dev/null, so that data still buffered (flushed at exit by the
        interpreter) goes nowhere instead of failing again."""
        self.gone = True
        if self.fileno is None:
            return
        with contextlib.suppress(OSError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.fileno)
            os.close(devnull)


class _GuardedBinary:
    """The `.buffer` of a guarded text stream (binary resource contents go there)."""

    def __init__(self, raw: BinaryIO, pipe: _Pipe) -> None:
        self._raw = raw
        self._pipe = pipe

    def write(self, data: bytes | bytearray | memoryview) -> int:
        if not self._pipe.gone:
            try:
                return int(self._raw.write(data))
            except BrokenPipeError:
                self._pipe.close()
            except OSError as exc:
                self._pipe.failed(exc)
        return len(data)

    def flush(self) -> None:
        if not self._pipe.gone:
            try:
                self._raw.flush()
            except BrokenPipeError:
                self._pipe.close()
            except OSError as exc:
                self._pipe.failed(exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


class GuardedStream:
    """A text stream that drops what is written once its reader has gone (EPIPE), silently."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        try:
            fileno: int | None = stream.fileno()
        except (AttributeError, OSError, ValueError):
            fileno = None
        self._pipe = _Pipe(fileno)
        raw = getattr(stream, "buffer", None)
        self.buffer = _GuardedBinary(raw, self._pipe) if raw is not None else None

    @property
    def reader_gone(self) -> bool:
        return self._pipe.gone

    def write(self, text: str) -> int:
        if not self._pipe.gone:
            try:
                return int(self._stream.write(text))
            except BrokenPipeError:
                self._pipe.close()
            except OSError as exc:
                self._pipe.failed(exc)
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if not self._pipe.gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._pipe.close()
            except OSError as exc:
                self._pipe.failed(exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def guard_standard_streams() -> None:
    """Wrap sys.stdout and sys.stderr (once; the process's entry point calls this first)."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, GuardedStream):
            setattr(sys, name, GuardedStream(stream))


def pipe_closed(stream: TextIO | None = None) -> bool:
    """Whether the reader of `stream` (default: stdout) went away, even before anything was written
    to it: poll() reports POLLERR on the write end of a pipe whose read end is closed."""
    stream = sys.stdout if stream is None else stream
    if reader_gone(stream):
        return True
    if not hasattr(select, "poll"):
        return False
    try:
        fd = stream.fileno()
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return False
        poller = select.poll()
        poller.register(fd, 0)  # no events asked for: only the error conditions are reported
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):
        return False


def write_error(stream: object = None) -> OSError | None:
    """Why writing to `stream` (default: stdout) failed, other than a reader that went away."""
    stream = sys.stdout if stream is None else stream
    while stream is not None:
        if isinstance(stream, GuardedStream):
            return stream._pipe.error
        stream = getattr(stream, "_stream", None)  # through the redacting wrapper
    return None


def reader_gone(stream: object = None) -> bool:
    """Whether the reader of `stream` (default: stdout) went away; False for an unguarded stream."""
    stream = sys.stdout if stream is None else stream
    while stream is not None:
        if isinstance(stream, GuardedStream):
            return stream.reader_gone
        stream = getattr(stream, "_stream", None)  # through the redacting wrapper
    return False
