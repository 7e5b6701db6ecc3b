"""The record: JSON Lines, one entry per message or connection event.

A message entry: `{"i": N, "t": SECONDS, "dir": "c2s"|"s2c", "size": BYTES, "msg": {...}}`, where `t`
counts from the start of the record's first connection, `size` is the line's length on the wire
(newline included) and `msg` is the message with the run's secrets masked (`safety.redact`). A line
longer than the size cut keeps only the envelope (`jsonrpc`, `id`, `method`, `error`, and the few
keys the judge reads: `nextCursor`, `cursor`, `protocolVersion`, `capabilities`, `uri`, `name`,
`requestId`) and `"cut": {"size": N, "sha256": HEX}` for the rest. A line that is not JSON keeps
`"text"` (masked, inert, at most `TEXT_LIMIT` characters) and its `sha256`. Connection events:
`{"event": "start"|"exit"|"reconnect"|"skipped", "t": ..., ...}`.

The judge reads exactly these entries, live and offline, so `--replay` of a record gives the
findings the live run gave. The file is created 0600 and written as the run goes (each entry one
write, flushed), so a record of a host that crashed is still readable up to its last message.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Iterator
from typing import IO, Any

import orjson

from mcpprobe.safety.redact import Redactor, secret_values
from mcpprobe.safety.sanitize import visible
from mcpprobe.tap.frames import Oversize

C2S = "c2s"  # client to server: what the host wrote
S2C = "s2c"  # server to client: what the server wrote on stdout
DEFAULT_CUT = 256 * 1024
TEXT_LIMIT = 1000
_KEPT_KEYS = ("nextCursor", "cursor", "protocolVersion", "capabilities", "uri", "name", "requestId")


class RecordError(Exception):
    """A record that cannot be read (not there, not a record): `message` says which line and why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def secrets_of(command: list[str], environ: dict[str, str]) -> list[str]:
    """The secrets of a tap run: credential-like environment variables (what a host's config gives the
    server: `GITHUB_TOKEN`...) and the values of credential-like options of the server's command
    (`--token VALUE`, `--api-key=VALUE`)."""
    pairs = list(environ.items())
    for index, word in enumerate(command):
        if not word.startswith("-"):
            continue
        if "=" in word:
            name, _, value = word.partition("=")
            pairs.append((name.lstrip("-"), value))
        elif index + 1 < len(command):
            pairs.append((word.lstrip("-"), command[index + 1]))
    return secret_values(pairs)


def _kept(part: Any) -> dict[str, Any]:
    if not isinstance(part, dict):
        return {}
    return {key: part[key] for key in _KEPT_KEYS if key in part and _length(part[key]) <= 4096}


def _length(value: Any) -> int:
    return len(json.dumps(value, default=str))


def _envelope(message: Any, size: int, digest: str) -> dict[str, Any]:
    """What a message past the cut keeps."""
    if not isinstance(message, dict):
        return {"cut": {"size": size, "sha256": digest}}
    kept: dict[str, Any] = {key: message[key] for key in ("jsonrpc", "id", "method") if key in message}
    error = message.get("error")
    if error is not None and _length(error) <= 4096:
        kept["error"] = error
    for part in ("result", "params"):
        if part in message:
            kept[part] = _kept(message[part])
    kept["cut"] = {"size": size, "sha256": digest}
    return kept


def message_entry(index: int, t: float, direction: str, line: bytes | Oversize, redactor: Redactor,
                  cut: int) -> dict[str, Any]:
    """The record's entry for one line read on the wire."""
    # To the microsecond, as round(t, 6) (but for a tie at half of one), at a quarter of its cost.
    entry: dict[str, Any] = {"i": index, "t": round(t * 1e6) / 1e6, "dir": direction}
    if isinstance(line, Oversize):
        entry["size"] = line.size
        entry["text"] = _text(line.head, redactor)
        entry["cut"] = {"size": line.size, "sha256": line.sha256}
        return entry
    entry["size"] = len(line)
    try:
        message = orjson.loads(line)  # the usual, and fast; the newline after it is whitespace to JSON
    except orjson.JSONDecodeError:
        try:
            message = _loads(line.rstrip(b"\r\n"))
        except ValueError:
            entry["text"] = _text(line.rstrip(b"\r\n"), redactor)
            entry["sha256"] = hashlib.sha256(line).hexdigest()
            return entry
    if redactor:
        text = line.rstrip(b"\r\n").decode("utf-8", "replace")
        masked = redactor(text)
        if masked != text:
            with contextlib.suppress(ValueError):
                message = _loads(masked.encode("utf-8", "surrogatepass"))
    if len(line) > cut:
        message = _envelope(message, len(line), hashlib.sha256(line).hexdigest())
    entry["msg"] = message
    return entry


def _loads(data: bytes) -> Any:
    """JSON, fast; what orjson refuses but JSON allows (an escaped lone surrogate, NaN as Python's json reads
    it, nesting past orjson's limit) through the standard library. ValueError for what is not JSON."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise ValueError(str(exc)) from None


def _dumps(entry: dict[str, Any]) -> bytes:
    try:
        return orjson.dumps(entry, option=orjson.OPT_APPEND_NEWLINE)
    except (TypeError, orjson.JSONEncodeError):  # a lone surrogate from a peer: \uXXXX, as JSON allows
        return json.dumps(entry, ensure_ascii=True, default=str).encode("ascii") + b"\n"


def _text(data: bytes, redactor: Redactor) -> str:
    text = redactor(data[: TEXT_LIMIT * 4].decode("utf-8", "replace"))
    return visible(text)[:TEXT_LIMIT]


def open_private(path: str, *, append: bool) -> IO[bytes]:
    """The record file, created 0600 (exactly, whatever the umask), appended to or started anew."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags, 0o600)
    with contextlib.suppress(OSError):
        if os.path.isfile(path):
            os.fchmod(fd, 0o600)
    return os.fdopen(fd, "ab" if append else "wb", buffering=0)


class RecordWriter:
    """Writes entries as they come; a failed write stops the record (said once), never the relay."""

    def __init__(self, handle: IO[bytes]) -> None:
        self._handle = handle
        self.error: str | None = None

    def write(self, entry: dict[str, Any]) -> None:
        if self.error is not None:
            return
        try:
            self._handle.write(_dumps(entry))
        except (OSError, ValueError, RecursionError) as exc:
            self.error = getattr(exc, "strerror", None) or str(exc)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._handle.close()


def start_event(command: list[str], redactor: Redactor, *, reconnect: bool) -> dict[str, Any]:
    return {"event": "reconnect" if reconnect else "start", "t": 0.0,
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "transport": "stdio", "command": [redactor(word) for word in command]}


def read_record(path: str) -> Iterator[dict[str, Any]]:
    """The entries of a record, in order; RecordError for a file that is not one."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below, after the last entry
    except OSError as exc:
        raise RecordError(f"cannot read the record {path}: {exc.strerror or exc}") from None
    with handle:
        for number, raw in enumerate(handle, 1):
            if not raw.strip():
                continue
            try:
                entry = _loads(raw)
            except ValueError:
                raise RecordError(f"{path}, line {number}: not JSON: not a record of mcpprobe tap") from None
            if not isinstance(entry, dict) or not ("event" in entry or "dir" in entry):
                raise RecordError(f"{path}, line {number}: not an entry of a record of mcpprobe tap") from None
            yield entry


def record_offset(path: str) -> float:
    """Where a record appended to goes on: the last `t` in it (0 for none), so `t` keeps growing."""
    last = 0.0
    with contextlib.suppress(RecordError):
        for entry in read_record(path):
            t = entry.get("t")
            if isinstance(t, (int, float)):
                last = max(last, float(t))
    return last
