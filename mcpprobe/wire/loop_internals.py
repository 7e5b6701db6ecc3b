"""Every read or write of a private attribute of anyio or asyncio that mcpprobe makes, in one place.

`mcpprobe load` over stdio hands the server's stdout on as the pipe's protocol receives it and writes
its requests without a turn of the event loop (wire/stdio.py, the hot path). Neither library offers
that publicly, so this module reaches under them. Each function checks what it relies on before it
relies on it, and answers None (or False) when a version has changed it: the caller then takes the
ordinary path (anyio's `receive` and `send`), slower, never wrong. tests/unit/wire/test_loop_internals.py
fails when the installed versions stop matching, so that a change is noticed rather than silently slow.

What it relies on, checked against anyio 4.16.0 (`anyio/_backends/_asyncio.py`) and CPython 3.11.7,
3.12.1 and 3.13.0 (`Lib/asyncio/streams.py`, `Lib/asyncio/subprocess.py`), alike in all three, read in
their sources and run (a `cat` process opened with anyio, its reader diverted, on each; and with anyio
4.5.0, the oldest pyproject.toml allows, on 3.12):

- anyio: `StreamReaderWrapper._stream` (an `asyncio.StreamReader`) and `StreamWriterWrapper._stream` (an
  `asyncio.StreamWriter`), the streams of the Process that `anyio.open_process` gives on asyncio.
- asyncio `StreamReader._buffer` (a bytearray: what arrived and was not read yet) and `StreamReader._eof`
  (a bool: `feed_eof` was called), both set in `__init__`; the class has no `__slots__`.
- asyncio's protocols feed a reader through the instance's methods, looked up at each call:
  `SubprocessStreamProtocol.pipe_data_received` and `StreamReaderProtocol.data_received` call
  `reader.feed_data(data)`; `pipe_connection_lost`/`connection_lost` call `reader.feed_eof()` or
  `reader.set_exception(exc)`; anyio's `StreamReaderWrapper.aclose` calls `set_exception`. So methods
  set on the instance replace the class's for that reader alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable


def anyio_reader(stream: object) -> asyncio.StreamReader | None:
    """The asyncio StreamReader under one of anyio's receive streams (`StreamReaderWrapper._stream`); None
    when `stream` is not one, or anyio keeps it otherwise now."""
    reader = getattr(stream, "_stream", None)
    return reader if isinstance(reader, asyncio.StreamReader) else None


def anyio_writer(stream: object) -> asyncio.StreamWriter | None:
    """The asyncio StreamWriter under one of anyio's send streams (`StreamWriterWrapper._stream`); None when
    `stream` is not one, or anyio keeps it otherwise now."""
    writer = getattr(stream, "_stream", None)
    return writer if isinstance(writer, asyncio.StreamWriter) else None


def divertible(reader: object) -> bool:
    """Whether `reader` is an asyncio StreamReader whose state is kept as `divert` knows it: `_buffer` and
    `_eof` in the instance's own attributes, where methods can be set too."""
    state = getattr(reader, "__dict__", None)
    return (isinstance(reader, asyncio.StreamReader) and isinstance(state, dict)
            and isinstance(state.get("_buffer"), bytearray) and isinstance(state.get("_eof"), bool))


def divert(reader: object, feed_data: Callable[[bytes], None], feed_eof: Callable[[], None]) -> bool:
    """Have `reader`'s protocol call `feed_data` with each chunk it receives and `feed_eof` at its end (EOF,
    the pipe lost or closed: `set_exception` is an end too), instead of buffering them in the reader for a
    task to read. What the reader already holds is handed on first, and its end if it came. False, with
    nothing changed, when the reader is not as this module knows it (`divertible`)."""
    if not divertible(reader):
        return False
    state = vars(reader)
    buffer: bytearray = state["_buffer"]
    early, at_eof = bytes(buffer), state["_eof"]
    buffer.clear()

    def set_exception(exc: BaseException) -> None:
        feed_eof()

    state["feed_data"] = feed_data
    state["feed_eof"] = feed_eof
    state["set_exception"] = set_exception
    if early:
        feed_data(early)
    if at_eof:
        feed_eof()
    return True
