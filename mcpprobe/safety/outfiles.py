"""Files the user asked for (`read -o`, `call --save`, `get-prompt --save`, `probe --save-snapshot`):
written whole or not at all.

A file is written to a temporary file in the same directory, synced, then renamed over the target
(`os.replace`, atomic on POSIX and Windows), and the directory is synced where it can be, so a
failure part-way (a full disk, a killed process, a power cut) leaves the previous file intact: a
snapshot kept as a CI baseline is never replaced by half of one. A private file (a stored token) is
created with mode 0600 and keeps it, whatever the umask or the previous file's mode: it is never
readable by others, not even for a moment.
Special files (`/dev/stdout`, a FIFO) cannot be replaced, and are written directly. Every failure is
a `WriteFailed` with one line that names the path; the caller still shows the result.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path


class WriteFailed(Exception):
    """An output file could not be written; `message` says which and why, in one line."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _blocking_file(path: Path) -> Path | None:
    """The first ancestor of `path` that exists and is not a directory (`FILE/sub`), if any."""
    for parent in reversed(path.parents):
        if parent.exists() and not parent.is_dir():
            return parent
    return None


def ensure_directory(directory: str | os.PathLike[str]) -> Path:
    """`directory`, created with its parents when missing; WriteFailed when it cannot be."""
    path = Path(directory)
    if path.exists() and not path.is_dir():
        raise WriteFailed(f"cannot write into {directory}: it exists and is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        blocking = _blocking_file(path)
        why = f"{blocking} is not a directory" if blocking is not None else _why(exc)
        raise WriteFailed(f"cannot create the directory {directory}: {why}") from None
    return path


def write_file(path: str | os.PathLike[str], data: bytes, *, private: bool = False) -> None:
    """Write `data` to `path` atomically (see the module's docstring). Missing parent directories
    are created. A symbolic link stays a link: the file it points to is replaced. A replaced file
    keeps its permissions; a private one is the user's alone (0600)."""
    shown = os.fspath(path)
    target = Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)
    if target.is_dir():
        raise WriteFailed(f"cannot write {shown}: it is a directory")
    try:
        mode = target.stat().st_mode if target.exists() else None
    except OSError as exc:
        raise WriteFailed(f"cannot write {shown}: {_why(exc)}") from None
    if mode is not None and not stat.S_ISREG(mode):
        _write_special(target, shown, data)
        return
    blocking = _blocking_file(target)
    if blocking is not None:
        raise WriteFailed(f"cannot write {shown}: {blocking} is not a directory")
    ensure_directory(target.parent)
    temp = target.with_name(f".{target.name}.{secrets.token_hex(8)}.tmp")
    # Created with its final permissions (O_EXCL: a new file, never one planted at that name).
    final = 0o600 if private else stat.S_IMODE(mode) if mode is not None else None
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                     0o666 if final is None else final)
    except OSError as exc:
        raise WriteFailed(f"cannot write {shown}: {_why(exc)}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if final is not None:
            os.chmod(temp, final)  # exactly these, not what the umask left of them
        os.replace(temp, target)
        _sync_directory(target.parent)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise WriteFailed(f"cannot write {shown}: {_why(exc)}") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _sync_directory(directory: Path) -> None:
    """Make the rename itself durable. A directory that cannot be opened (Windows) or synced (some
    file systems refuse) has nothing more to give: the file itself is synced already."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_special(target: Path, shown: str, data: bytes) -> None:
    try:
        with open(target, "wb") as handle:
            handle.write(data)
    except OSError as exc:
        raise WriteFailed(f"cannot write {shown}: {_why(exc)}") from None
