"""The stdio transport: a child process speaking newline-delimited JSON-RPC.

The child runs in a session (process group) of its own, so that whatever it spawns (npx spawns
node, shells spawn servers) is ended with it on every exit path. Its stderr is drained all the
time, so a flood can never stall it, and only a bounded part of it is kept for error messages:
its first lines, its last ones and the error-looking lines between (`wire/stderrlog.py`).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel
import orjson

from mcpprobe.errors import ConnectionFailed, ProtocolFailure
from mcpprobe.safety.redact import Redactor, SplitWrites
from mcpprobe.wire import loop_internals, orphans, prestart
from mcpprobe.wire.decode import MAX_NESTING, TooDeep, decode_message, encode_line, refuse_too_deep
from mcpprobe.wire.shutdown import STDOUT_DRAIN_SECONDS, Shutdown, exit_status_now
from mcpprobe.wire.stderrlog import StderrEntry, StderrKeeper
from mcpprobe.wire.target import StdioTarget
from mcpprobe.wire.transport import Sink, TransportInfo

# Process groups still alive; the CLI's last act ends any left (see `reap_all`).
_LIVE_GROUPS: set[int] = set()
# The orphans marker of every server running (or starting: pid 0) -> its pid (see wire/orphans.py).
_LIVE_SERVERS: dict[str, int] = {}
# Time a server gets to exit by itself after EOF on its stdin before SIGTERM. A server that
# exits on EOF does so within a few milliseconds (3-6 ms for a standard-library server on a
# loaded 2-core machine); servers built on the Python or TypeScript SDK take 350-600 ms and get
# SIGTERM with any grace below that. The result is shown meanwhile, but mcpprobe's exit waits.
EXIT_GRACE_SECONDS = 0.05
TERM_GRACE_SECONDS = 2.0


# What the pipe to a server may hold, unwritten, before `send_nowait` leaves a message to `send`,
# which waits for the server to read (and so is bounded by --timeout).
NOWAIT_BUFFER_BYTES = 64 * 1024


def _asyncio_reader(stdout: object) -> asyncio.StreamReader | None:
    """The asyncio reader under an adopted server's stdout (_PipeReader, ours) or under anyio's."""
    return stdout.reader if isinstance(stdout, _PipeReader) else loop_internals.anyio_reader(stdout)


def _asyncio_writer(stdin: object) -> asyncio.StreamWriter | None:
    """The asyncio writer under an adopted server's stdin (_PipeWriter, ours) or under anyio's."""
    return stdin.writer if isinstance(stdin, _PipeWriter) else loop_internals.anyio_writer(stdin)


def reap_all() -> None:
    """Kill every process group we started that may still be alive, and every descendant that
    escaped its group. Safe to call repeatedly."""
    for pgid in list(_LIVE_GROUPS):
        _signal_group(pgid, signal.SIGKILL)
        _LIVE_GROUPS.discard(pgid)
    _LIVE_SERVERS.clear()
    orphans.sweep_now(_LIVE_SERVERS)


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


class StdioTransport:
    def __init__(
        self,
        target: StdioTarget,
        *,
        max_message_bytes: int,
        stderr_mode: str = "tail",
        stderr_writer: Callable[[str], None] | None = None,
        redactor: Redactor | None = None,
    ) -> None:
        self.target = target
        # The run's secrets, masked in the server's stdout lines kept and its stderr passed through.
        self._redact = redactor if redactor is not None else Redactor(())
        self.info = TransportInfo("stdio", {"command": list(target.command)})
        self._max = max_message_bytes
        self._stderr_mode = stderr_mode
        self._stderr_writer = stderr_writer
        self._stderr = StderrKeeper()
        self._process: Any = None
        self._pgid: int | None = None
        self._sink: Sink | None = None
        self._send_lock = anyio.Lock(fast_acquire=True)  # no turn of the event loop when uncontended
        self._closing = False
        self._eof_at: float | None = None
        self._marker = orphans.new_marker()
        self._outbox: list[bytes] = []  # queue_nowait's messages, written together by _flush
        self._writer: asyncio.StreamWriter | None = None
        self._reading = False  # the reader is handing on a chunk's lines: it flushes after the last
        self._partial = bytearray()  # the start of a line whose end has not come yet
        self._stdout_ended: anyio.Event | None = None  # set when the reader of stdout has ended
        self._ended_before_eof: int | None = None  # the exit status, when the server ended before EOF
        self._shutdown: Shutdown | None = None
        # Whether stdout is read as its pipe's protocol receives it (`_read_direct`), not chunk by chunk.
        self.stdout_read_directly = False

    async def start(self, task_group: Any, sink: Sink) -> None:
        self._sink = sink
        command = list(self.target.command)
        env = self.target.environment()
        executable = shutil.which(command[0], path=env.get("PATH"))
        if executable is None:
            where = f" (in {self.target.cwd})" if self.target.cwd else ""
            raise ConnectionFailed(
                f"cannot start the server: command not found: {command[0]}{where}",
                detail={"command": command},
            )
        orphans.become_subreaper()
        early = prestart.take([executable, *command[1:]], env, self.target.cwd)
        if early is not None:  # started by the console script, exactly as below, before the imports
            popen, self._marker = early
            try:
                self._process = await _AdoptedProcess(popen).connect()
            except BaseException:
                _signal_group(popen.pid, signal.SIGKILL)
                popen.wait()
                raise
        env[orphans.MARKER] = self._marker
        _LIVE_SERVERS[self._marker] = 0
        try:
            self._process = self._process or await anyio.open_process(
                [executable, *command[1:]],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self.target.cwd,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            _LIVE_SERVERS.pop(self._marker, None)
            raise ConnectionFailed(
                f"cannot start the server {command[0]!r}: {exc.strerror or exc}", detail={"command": command}
            ) from None
        _LIVE_SERVERS[self._marker] = self._process.pid
        self._pgid = self._process.pid
        _LIVE_GROUPS.add(self._pgid)
        self.info.detail["pid"] = self._process.pid
        self._stdout_ended = anyio.Event()
        task_group.start_soon(self._read_stdout)
        task_group.start_soon(self._read_stderr)
        task_group.start_soon(self._watch_exit)

    def set_protocol_version(self, version: str) -> None:
        """stdio carries no version header."""

    async def send(self, message: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        import json

        data = (json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n").encode()
        async with self._send_lock:
            try:
                await self._process.stdin.send(data)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                with anyio.move_on_after(0.5):
                    await self._process.wait()
                raise self._gone("stdin") from None

    def send_nowait(self, message: dict[str, Any]) -> bool:
        """Write `message` at once, without a turn of the event loop, when that cannot block: the
        pipe takes it into its buffer and nothing else is being sent or waiting to be. False when it
        would have to wait (the caller sends it with `send`). The hot path of `mcpprobe load`."""
        writer = self._stdin_writer()
        if writer is None or writer.is_closing() or self._send_lock.locked() or self._closing:
            return False
        if writer.transport.get_write_buffer_size() > NOWAIT_BUFFER_BYTES:
            return False
        writer.write(encode_line(message))
        return True

    def queue_nowait(self, message: dict[str, Any], headers: dict[str, str] | None = None) -> bool:
        """Queue `message` to be written with the others queued in this turn of the event loop: one
        write (one system call) for all the answers' follow-ups that one chunk of stdout brings. False
        when the pipe is gone or closing. `mcpprobe load` keeps at most its concurrency in flight, so
        what waits in the pipe's buffer is bounded by that. stdio carries no headers."""
        return self.queue_line(encode_line(message))

    def queue_line(self, line: bytes) -> bool:
        """As queue_nowait, for a message already encoded as its line (`encode_line`'s bytes)."""
        if self._closing:
            return False
        writer = self._stdin_writer()
        if writer is None or writer.is_closing():
            return False
        if not self._outbox and not self._reading:
            asyncio.get_running_loop().call_soon(self._flush)
        self._outbox.append(line)
        return True

    def flush(self) -> None:
        """Write what queue_nowait queued, now (before the connection closes)."""
        self._flush()

    def _flush(self) -> None:
        if not self._outbox:
            return
        data, self._outbox = b"".join(self._outbox), []
        writer = self._stdin_writer()
        if writer is not None and not writer.is_closing():
            writer.write(data)

    def _stdin_writer(self) -> asyncio.StreamWriter | None:
        """The asyncio writer under the server's stdin (loop_internals), looked up once per process:
        the hot paths of `mcpprobe load` (send_nowait, queue_line, _flush) write through it."""
        if self._writer is None and self._process is not None:
            self._writer = _asyncio_writer(self._process.stdin)
        return self._writer

    def _gone(self, stream: str) -> ConnectionFailed:
        """One wording however the end was noticed (a write to stdin failed, stdout closed, the
        process was reaped): the process ended, with its exit status once it is known."""
        status = self._process.returncode if self._process is not None else None
        if status is None:
            return ConnectionFailed(f"the server closed its {stream}", detail={"exitStatus": None})
        return ConnectionFailed(f"the server process ended ({describe_status(status)})",
                                detail={"exitStatus": status})

    async def _read_stdout(self) -> None:
        """Hand every line of the server's stdout to the connection, until it ends."""
        try:
            await self._read_stdout_lines()
        finally:
            if self._stdout_ended is not None:
                self._stdout_ended.set()

    async def _read_stdout_lines(self) -> None:
        assert self._sink is not None
        reader = _asyncio_reader(self._process.stdout)
        try:
            fits = await self._read_direct(reader) if reader is not None else None
            if fits is None:  # not a reader whose internals are known (wire/loop_internals.py)
                fits = await self._read_chunks()
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            fits = True
        if not fits:
            self._sink.closed(ProtocolFailure(
                f"the server sent a message larger than the limit of {self._max} bytes (--max-message-size)"))
            await self._terminate()
            return
        if self._partial.strip():
            self._line(bytes(self._partial))
        if self._closing:
            return
        with anyio.move_on_after(0.5):
            await self._process.wait()
        self._sink.closed(self._gone("stdout"))

    async def _read_direct(self, reader: asyncio.StreamReader) -> bool | None:
        """The lines handed on as the pipe's protocol receives them (in its `data_received` turn, through
        the StreamReader's `feed_data`): no buffering in the StreamReader and no task woken per chunk,
        the hot path of `mcpprobe load`. Ends at EOF, or when the pipe is closed or fails (as EOF).
        A bug while handing on (an exception) is raised here, in the reader task, as `_read_chunks`
        would raise it. False when a message is larger than the limit; None, with nothing read, when
        the reader cannot be taken over (`loop_internals.divert`)."""
        ended: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

        def feed_data(data: bytes) -> None:
            if ended.done():
                return
            try:
                fits = self._take(data)
            except Exception as exc:  # noqa: BLE001 - raised by the task below, never lost in the loop's log
                ended.set_exception(exc)
                return
            if not fits:
                ended.set_result(False)

        def feed_eof() -> None:
            if not ended.done():
                ended.set_result(True)

        if not loop_internals.divert(reader, feed_data, feed_eof):
            return None
        self.stdout_read_directly = True
        return await ended

    async def _read_chunks(self) -> bool:
        """The lines handed on chunk by chunk, from a stream that is not asyncio's own."""
        async for chunk in self._process.stdout:
            if not self._take(chunk):
                return False
        return True

    def _take(self, data: bytes) -> bool:
        """Hand on the complete lines of what came (with what was left of the last chunk), then write
        at once what they queued (a load's next requests: one write for a chunk of answers, in this
        turn rather than the next). False when a message is larger than the limit."""
        partial = self._partial
        if partial:
            if b"\n" not in data:  # a long message coming in pieces: kept, not copied again per piece
                partial += data
                return len(partial) <= self._max
            partial += data
            data = bytes(partial)
            partial.clear()
        lines = data.split(b"\n")
        rest = lines.pop()
        self._reading = True
        try:
            for line in lines:
                if len(line) > self._max:
                    return False
                self._line(line)
        finally:
            self._reading = False
        partial += rest
        self._flush()
        return len(partial) <= self._max

    async def _watch_exit(self) -> None:
        """The server process ending is the end, even when a child of it still holds stdout open."""
        await self._process.wait()
        await anyio.sleep(0.2)  # let the reader deliver what the server wrote before it exited
        if not self._closing and self._sink is not None:
            self._sink.closed(self._gone("stdout"))

    def _line(self, line: bytes) -> None:
        assert self._sink is not None
        if line.count(b"[") + line.count(b"{") <= MAX_NESTING:
            # The common case, at C speed: orjson takes what json takes (a trailing CR is whitespace to
            # both), bar NaN/Infinity, lone surrogates and integers past 64 bits, which fall to the
            # exact path below, as a blank line does.
            try:
                message = orjson.loads(line)
            except orjson.JSONDecodeError:
                pass
            else:
                self._sink.message(message, 0)  # orjson reads no NaN, Infinity or 1e400
                return
        line = line.rstrip(b"\r")
        if not line.strip():
            return
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            self._sink.bad_output("a line on stdout that is not valid UTF-8",
                                  self._redact(line[:4096].decode("utf-8", "replace"))[:200])
            return
        try:
            decoded = decode_message(text)
        except TooDeep as exc:
            self._sink.bad_output(f"a line on stdout that is not JSON-RPC: {exc}", self._redact(text)[:200])
            refuse_too_deep(self._sink, text, exc)
            return
        except ValueError:
            self._sink.bad_output("a line on stdout that is not JSON-RPC", self._redact(text)[:200])
            return
        self._sink.message(decoded.value, decoded.flags)

    async def _read_stderr(self) -> None:
        live = self._stderr_writer if self._stderr_mode == "live" else None
        # Live: decoded across chunk boundaries, and masked across them too (a secret the server
        # writes in two pieces is still one secret).
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        pieces = SplitWrites(self._redact)
        try:
            async for chunk in self._process.stderr:
                if live is not None:
                    live(pieces.feed(decoder.decode(chunk)))
                elif self._stderr_mode == "tail":
                    self._stderr.feed(chunk)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass
        finally:
            if live is not None:
                live(pieces.end(decoder.decode(b"", final=True)))

    def stderr_tail(self, lines: int = 20) -> list[StderrEntry]:
        """The server's stderr shortened to about `lines` lines, its first ones and its last ones;
        none when it was shown live or not wanted."""
        return self._stderr.lines(lines) if self._stderr_mode == "tail" else []

    def stderr_said(self) -> list[str]:
        """Every line of the server's stderr that was kept, to read what it said."""
        return self._stderr.said() if self._stderr_mode == "tail" else []

    async def begin_close(self) -> None:
        """EOF on the server's stdin, the spec's first step of a stdio shutdown; no waiting."""
        self._closing = True
        if self._process is None or self._eof_at is not None:
            return
        self._ended_before_eof = exit_status_now(self._process)
        self._eof_at = time.monotonic()
        with anyio.CancelScope(shield=True), contextlib.suppress(
                anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            await self._process.stdin.aclose()

    async def shut_down(self, limit: float) -> Shutdown:
        """The specification's stdio shutdown, done once (later calls give the same record): EOF on
        the server's stdin, up to `limit` seconds for it to exit by itself, then up to
        STDOUT_DRAIN_SECONDS for its stdout to end, so that what it wrote while exiting has reached
        the connection before anything is judged (`check`). A server still running at `limit` is
        left to `aclose` (SIGTERM)."""
        if self._shutdown is not None:
            return self._shutdown
        await self.begin_close()
        process = self._process
        if process is None or self._eof_at is None:
            self._shutdown = Shutdown(None, None, stdout_ended=True)
            return self._shutdown
        with anyio.move_on_after(limit):
            await process.wait()
        exited_after = time.monotonic() - self._eof_at if process.returncode is not None else None
        if self._ended_before_eof is not None:
            exited_after = None  # it had ended before: no exit after EOF to measure
        ended = self._stdout_ended
        if ended is not None and process.returncode is not None:
            with anyio.move_on_after(STDOUT_DRAIN_SECONDS):
                await ended.wait()
        self._shutdown = Shutdown(self._ended_before_eof, exited_after,
                                  stdout_ended=ended is None or ended.is_set())
        return self._shutdown

    async def aclose(self) -> None:
        """Close stdin, give the server a short grace to exit on its own, then end its group."""
        if self._process is None:
            self._closing = True
            return
        await self.begin_close()
        assert self._eof_at is not None
        with anyio.CancelScope(shield=True):
            grace = EXIT_GRACE_SECONDS - (time.monotonic() - self._eof_at)
            if grace > 0:
                with anyio.move_on_after(grace):
                    await self._process.wait()
            await self._terminate()

    async def _terminate(self) -> None:
        """End the whole process group: SIGTERM, a grace period, then SIGKILL."""
        process, pgid = self._process, self._pgid
        if pgid is None:
            return
        with anyio.CancelScope(shield=True):
            family = orphans.group_members(self._marker, pgid)
            if process.returncode is None:
                _signal_group(pgid, signal.SIGTERM)
                with anyio.move_on_after(TERM_GRACE_SECONDS):
                    await process.wait()
            # The leader may be gone while its children (npx's node, a shell's server) live on.
            _signal_group(pgid, signal.SIGKILL)
            if process.returncode is None:
                with anyio.move_on_after(1):
                    await process.wait()
            _LIVE_GROUPS.discard(pgid)
            # Descendants that left the group (setsid, a daemon's double fork) still carry the
            # server's marker: end them too, so that nothing the server started outlives it.
            _LIVE_SERVERS.pop(self._marker, None)
            await orphans.sweep(_LIVE_SERVERS, family)
            # Closes the pipes through asyncio's transport, so nothing is left for the garbage
            # collector to close after the loop has gone (which would print a traceback).
            with anyio.move_on_after(1), contextlib.suppress(OSError, anyio.BrokenResourceError):
                await process.aclose()


class _PipeReader(anyio.abc.ByteReceiveStream):
    """An adopted server's stdout or stderr: an asyncio pipe transport, as anyio's own Process has."""

    def __init__(self, reader: asyncio.StreamReader, transport: asyncio.BaseTransport) -> None:
        self.reader, self._transport = reader, transport

    async def receive(self, max_bytes: int = 65536) -> bytes:
        data = await self.reader.read(max_bytes)
        if not data:
            raise anyio.EndOfStream
        return data

    async def aclose(self) -> None:
        self._transport.close()
        await anyio.lowlevel.checkpoint()


class _PipeWriter(anyio.abc.ByteSendStream):
    """An adopted server's stdin."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer

    async def send(self, item: bytes) -> None:
        if self.writer.is_closing():
            raise anyio.ClosedResourceError
        self.writer.write(item)
        await self.writer.drain()

    async def aclose(self) -> None:
        # As anyio's own stdin stream: close, without waiting for what is still buffered to be
        # written. A server that stopped reading never takes it, and the wait (shielded, at
        # shutdown) would never end; ending the process group closes the pipe.
        self.writer.close()
        await anyio.lowlevel.checkpoint()


class _AdoptedProcess:
    """A server started before the imports (`mcpprobe.wire.prestart`), with the part of anyio's
    Process interface the transport uses. Its exit is awaited on a pidfd (Linux only)."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self._popen = popen
        self.pid = popen.pid
        self.stdin: Any = None
        self.stdout: Any = None
        self.stderr: Any = None

    async def connect(self) -> _AdoptedProcess:
        loop = asyncio.get_running_loop()

        async def reader(pipe: Any) -> _PipeReader:
            stream = asyncio.StreamReader(limit=2**16, loop=loop)
            transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream), pipe)
            return _PipeReader(stream, transport)

        transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), self._popen.stdin)
        self.stdin = _PipeWriter(asyncio.StreamWriter(transport, protocol, None, loop))
        self.stdout = await reader(self._popen.stdout)
        self.stderr = await reader(self._popen.stderr)
        return self

    @property
    def returncode(self) -> int | None:
        return self._popen.poll()

    async def wait(self) -> int:
        while (status := self._popen.poll()) is None:
            pidfd = os.pidfd_open(self.pid)  # a zombie still has one; only we reap it
            try:
                await anyio.wait_readable(pidfd)
            finally:
                os.close(pidfd)
        return status

    async def aclose(self) -> None:
        for stream in (self.stdin, self.stdout, self.stderr):
            if stream is not None:
                await stream.aclose()
        await self.wait()


def describe_status(status: int) -> str:
    """How a process ended, as a phrase: "exit status 1", or "killed by SIGKILL" (a negative returncode)."""
    if status < 0:
        try:
            return f"killed by {signal.Signals(-status).name}"
        except ValueError:
            return f"killed by signal {-status}"
    return f"exit status {status}"


def write_stderr_text(text: str, stream: Any = None) -> None:
    """Pass the server's stderr through (already masked), with control characters made visible."""
    from mcpprobe.safety.sanitize import visible

    if not text:
        return
    stream = stream or sys.stderr
    stream.write(visible(text, multiline=True))
    stream.flush()
