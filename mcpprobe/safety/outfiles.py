"""Files the user asked for (`read -o`, `call --save`, `get-prompt --save`, `probe --save-snapshot`):
written whole or not at all.

A file is written to a temporary file in the same directory, synced, then renamed over the target
(`os.replace`, atomic on POSIX and Windows), and the directory is synced where it can be, so a
failure part-way (a full disk, a killed process, a power cut) leaves the previous file intact: a
snapshot kept as a CI baseline is never replaced by half of one. A private file (a stored token) is
created with mode 0600 and keeps it, whatever the umask or the previous file's mode: it is never
readable by others, not even for a moment.
Special files (`/dev/stdout`, a FIFO) cannot be replaced, and are written directly; a FIFO that
nobody reads is a failure at once, not a wait that no signal ends. A name mcpprobe made (a stored
token, a `{server}` file name that came from a config) is never followed through a symbolic link,
and a server's name becomes one path component, never a path (`server_path`). Every failure is a
`WriteFailed` with one line that names the path; the caller still shows the result.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path
from urllib.parse import quote


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


def path_component(name: str) -> str:
    """`name` (a server's, from a config anyone may have written) as one file name: every character
    but letters, digits, `_`, `-`, `.` and `~` percent-encoded (`/` too, and `%` itself, so two names
    never meet), a leading dot as well (`..`, `.hidden`). Empty is `server`."""
    encoded = quote(name, safe="~")
    if encoded.startswith("."):
        encoded = "%2E" + encoded[1:]
    return encoded or "server"


def server_path(template: str, name: str | None) -> str:
    """`template` with each `{server}` replaced by `name` as one path component (docs/ci.md)."""
    return template.replace("{server}", path_component(name or "server"))


def write_file(path: str | os.PathLike[str], data: bytes, *, private: bool = False,
               follow_links: bool = True) -> None:
    """Write `data` to `path` atomically (see the module's docstring). Missing parent directories
    are created. A symbolic link the user named stays a link: the file it points to is replaced;
    with `follow_links=False` (a name mcpprobe made) a link there is refused. A replaced file keeps
    its permissions; a private one is the user's alone (0600)."""
    shown = os.fspath(path)
    if not follow_links and os.path.islink(path):
        raise WriteFailed(f"cannot write {shown}: it is a symbolic link, and this name was not given by you: "
                          "not followed")
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
    """A device or FIFO, written in place. Opened without blocking: a FIFO with no reader would
    otherwise hold the open until one comes (ENXIO says there is none); once open, the writes block
    as usual, and a signal still interrupts them."""
    try:
        fd = os.open(target, os.O_WRONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise WriteFailed(f"cannot write {shown}: it is a FIFO that nobody is reading") from None
        raise WriteFailed(f"cannot write {shown}: {_why(exc)}") from None
    try:
        os.set_blocking(fd, True)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
    except OSError as exc:
        raise WriteFailed(f"cannot write {shown}: {_why(exc)}") from None
