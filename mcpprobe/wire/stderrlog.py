"""What a stdio server said on stderr: kept in bounded memory, shown shortened, read for its error.

A server that fails at start often says why first and then prints a usage text or a stack trace
(a cobra command's "Error: ..." then its flags; a launcher's message then Node's stack). Its last
lines alone lose the reason, so three parts are kept: the first lines (`HEAD_LINES`, at most
`HEAD_BYTES`), the last `TAIL_BYTES`, and between them only a count of lines and the first few
that look like errors. Whatever the server writes, memory stays within those bounds, and the work
per byte between them is C-speed counting, plus a scan for error words over the first
`SCAN_BYTES` of it only.

`lines(budget)` gives what is shown: every line when they fit, else lines that look like errors
first (earliest first, at most half the budget), then the first and the last lines, with each
run of lines left out as one `{"elided": N}` entry in its place (blank lines are never shown
and never counted as left out, except inside the unread middle, where every line is counted).
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass

HEAD_LINES = 40
HEAD_BYTES = 16 * 1024
TAIL_BYTES = 64 * 1024
NOTABLE_LINES = 8  # error-looking lines kept from the middle
SCAN_BYTES = 64 * 1024 * 1024  # of the middle scanned for them (about 5 ms a megabyte): a flood costs no more
CARRY_BYTES = 4096  # of a line split between two evicted chunks
SHOWN_LINE_CHARS = 2000  # of one line, when shown

# An entry of what is shown: a line of text, or how many lines were left out at that place.
StderrEntry = str | dict[str, int]

_ERROR_WORDS = (r"\b(?:error|errors|fatal|panic|exception|traceback|failed|failure|cannot|can't|could not|"
                r"unable to|denied|refused|not set|must be set|must be provided|is required|are required|"
                r"missing|no such file|not found|invalid)\b")
_ERROR_TEXT = re.compile(_ERROR_WORDS, re.IGNORECASE)
# The start of each of those words, found by `bytes.find` in the lower-cased middle: a regular
# expression over every line of a flood takes ten times as long (50 ms a megabyte here).
_ERROR_STEMS = (b"error", b"fatal", b"panic", b"exception", b"traceback", b"fail", b"cannot", b"can't",
                b"could not", b"unable to", b"denied", b"refused", b"not set", b"must be", b"required",
                b"missing", b"no such file", b"not found", b"invalid")


def looks_like_error(line: str) -> bool:
    return _ERROR_TEXT.search(line) is not None


def entry_text(entry: StderrEntry) -> str:
    """One entry as a line for people: the line itself, or the count of lines left out there."""
    if isinstance(entry, str):
        return entry
    count = entry.get("elided", 0)
    return f"… {count} line{'' if count == 1 else 's'} left out …"


def elided_count(entries: list[StderrEntry]) -> int:
    return sum(e.get("elided", 0) for e in entries if isinstance(e, dict))


def stderr_heading(entries: list[StderrEntry]) -> str:
    """What comes before the lines shown: "last line" for one, and how many were left out."""
    left_out = elided_count(entries)
    if left_out:
        return (f"first and last lines of the server's stderr ({left_out} line{'' if left_out == 1 else 's'} "
                "left out)")
    if len(entries) == 1:
        return "last line of the server's stderr"
    return f"last {len(entries)} lines of the server's stderr"


@dataclass
class _Item:
    """A line that may be shown (`weight` 1), or a run of `weight` unread lines (`text` None)."""

    text: str | None
    weight: int = 1
    error: bool = False


class StderrKeeper:
    def __init__(self) -> None:
        self._head = bytearray()
        self._head_done = False
        self._tail: deque[bytes] = deque()
        self._tail_size = 0
        self._middle_lines = 0  # complete lines evicted from the tail, blank ones too
        self._middle_scanned = 0  # bytes of the middle scanned for error words
        self._carry = b""  # the start of a middle line whose end has not been evicted yet
        self._split = False  # the tail begins inside a line that began in the middle
        self._notable: list[tuple[int, bytes]] = []  # (middle line index, line)

    def feed(self, chunk: bytes) -> None:
        if not self._head_done:
            self._head += chunk
            if len(self._head) < HEAD_BYTES and self._head.count(b"\n") < HEAD_LINES:
                return
            cut = _head_cut(self._head)
            chunk = bytes(self._head[cut:])
            del self._head[cut:]
            self._head_done = True
            if not chunk:
                return
        self._tail.append(chunk)
        self._tail_size += len(chunk)
        while self._tail_size > TAIL_BYTES:
            # Exactly the excess goes: whole chunks would leave a short last write alone in the tail.
            first = self._tail[0]
            excess = self._tail_size - TAIL_BYTES
            if excess >= len(first):
                self._tail.popleft()
            else:
                self._tail[0], first = first[excess:], first[:excess]
            self._tail_size -= len(first)
            self._evict(first)

    def _evict(self, data: bytes) -> None:
        last = data.rfind(b"\n")
        if last < 0:  # the whole chunk is inside one line
            self._carry += data[:max(0, CARRY_BYTES - len(self._carry))]
            self._split = True
            return
        block = self._carry + data[:last + 1]
        self._carry = data[last + 1:last + 1 + CARRY_BYTES]
        self._split = last + 1 < len(data)
        if len(self._notable) < NOTABLE_LINES and self._middle_scanned < SCAN_BYTES:
            self._middle_scanned += len(block)
            self._scan(block)
        self._middle_lines += block.count(b"\n")

    def _scan(self, block: bytes) -> None:
        """Keep the lines of `block` (whole lines) that look like errors, up to `NOTABLE_LINES`."""
        lowered = block.lower()
        start = 0
        for _ in range(4 * NOTABLE_LINES):  # a word found where it is no error word ("errorless") costs a turn
            hits = [found for stem in _ERROR_STEMS if (found := lowered.find(stem, start)) >= 0]
            if not hits:
                return
            first = min(hits)
            begin = block.rfind(b"\n", 0, first) + 1
            end = block.find(b"\n", first)
            line = block[begin:end if end >= 0 else len(block)]
            if looks_like_error(_text(line)):
                self._notable.append((self._middle_lines + block.count(b"\n", 0, begin), line[:SHOWN_LINE_CHARS * 4]))
                if len(self._notable) >= NOTABLE_LINES:
                    return
            if end < 0:
                return
            start = end + 1

    def _items(self) -> list[_Item]:
        items = [_line_item(line) for line in _text(self._head).splitlines()]
        tail = _text(b"".join(self._tail)).splitlines()
        middle = self._middle_lines
        if self._split and tail:  # its first line began in the middle: counted there, not shown
            tail = tail[1:]
            middle += 1
        at = 0
        for index, line in self._notable:
            if index > at:
                items.append(_Item(None, index - at))
            items.append(_line_item(_text(line)))
            at = index + 1
        if middle > at:
            items.append(_Item(None, middle - at))
        items.extend(_line_item(line) for line in tail)
        return [item for item in items if item.text is None or item.text.strip()]

    def said(self) -> list[str]:
        """Every line kept (first, error-looking, last), for reading what the server said."""
        return [item.text for item in self._items() if item.text is not None]

    def lines(self, budget: int = 20) -> list[StderrEntry]:
        """At most `budget` lines, the ones left out counted in their place (module docstring)."""
        items = self._items()
        shown = [i for i, item in enumerate(items) if item.text is not None]
        if len(shown) == len(items) and len(shown) <= budget:
            return [_clip(item.text) for item in items if item.text is not None]
        chosen = {i for i in shown if items[i].error}
        chosen = set(sorted(chosen)[:budget // 2])
        rest = [i for i in shown if i not in chosen]
        room = max(0, budget - len(chosen))
        front = room // 2
        chosen.update(rest[:front])
        chosen.update(rest[front:][-(room - front):] if room - front else [])
        out: list[StderrEntry] = []
        left_out = 0
        for i, item in enumerate(items):
            if i in chosen and item.text is not None:
                if left_out:
                    out.append({"elided": left_out})
                    left_out = 0
                out.append(_clip(item.text))
            else:
                left_out += item.weight
        if left_out:
            out.append({"elided": left_out})
        return out


def _head_cut(head: bytearray) -> int:
    """Where the head ends: after its `HEAD_LINES`th line, else after its last whole line within
    `HEAD_BYTES`, else (one line longer than that) at `HEAD_BYTES`."""
    at = -1
    for _ in range(HEAD_LINES):
        found = head.find(b"\n", at + 1, HEAD_BYTES)
        if found < 0:
            break
        at = found
    return at + 1 if at >= 0 else min(len(head), HEAD_BYTES)


def _text(data: bytes | bytearray) -> str:
    return bytes(data).decode("utf-8", errors="replace")


def _line_item(line: str) -> _Item:
    return _Item(line, 1, looks_like_error(line))


def _clip(text: str) -> str:
    return text if len(text) <= SHOWN_LINE_CHARS else text[:SHOWN_LINE_CHARS] + "…"


# ----- reading what the server said: the facts a hint can be chosen from -----

_NAME = r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"  # SLACK_MCP_XOXP_TOKEN: a name no sentence is made of
_NEED = (r"(?:not set|unset|required|missing|must be (?:set|provided|defined|specified|given)|please set|"
         r"undefined|not defined|not provided|not specified|is empty)")
_ENV_WORDS = re.compile(r"\benv(?:ironment)?\b|\benv var", re.IGNORECASE)
_NEED_WORDS = re.compile(_NEED, re.IGNORECASE)
_ANY_NAME = re.compile(rf"(?<![\w\[\-.]){_NAME}\b")
_NAME_AFTER_ENV = re.compile(r"environment variables?[\s:]+['\"`]?([A-Za-z_][A-Za-z0-9_]*)", re.IGNORECASE)
_NAME_THEN_NEED = re.compile(rf"(?<![\w\[\-.])(?:\$\{{?)?({_NAME}|[A-Z]{{3,}})\}}?['\"`]?\s+(?:(?:is|are|was)\s+)?"
                             + _NEED, re.IGNORECASE)
_NEED_THEN_NAME = re.compile(rf"(?:missing|please set|requires?|set the)\s+(?:the\s+)?(?:required\s+)?"
                             rf"(?:environment\s+variables?\s+)?['\"`$]?\{{?({_NAME})\b", re.IGNORECASE)
_KEY_ERROR = re.compile(rf"\bKeyError: '({_NAME}|[A-Z]{{3,}})'")
_NOT_NAMES = {"ERROR", "FATAL", "WARN", "WARNING", "INFO", "DEBUG", "TRACE", "PANIC", "HTTP", "HTTPS", "JSON",
              "MCP", "URL", "API", "NOTE", "USAGE", "TODO"}

_MISSING_FILE = (
    re.compile(r"No such file or directory: '([^']+)'"),  # Python
    re.compile(r"no such file or directory, [a-z]+ '([^']+)'", re.IGNORECASE),  # Node
    re.compile(r"\b(?:open|stat|lstat|read|readlink|chdir)\s+(\S+?): no such file or directory",
               re.IGNORECASE),  # Go
    re.compile(r"(?:file|path|directory|config(?:uration)?(?: file)?)\s+['\"`]?([^\s'\"`]*[/.][^\s'\"`]*?)['\"`]?"
               r"\s+(?:not found|does not exist|doesn't exist|is missing)", re.IGNORECASE),
    re.compile(r"(?:cannot|can't|could not|couldn't|unable to|failed to) (?:open|read|find|load|stat)\s+"
               r"(?:the\s+)?(?:config(?:uration)?\s+|file\s+)*['\"`]?((?:/|\./|\.\./|~/)[^\s'\"`:,]+)",
               re.IGNORECASE),
)
_NO_SUCH_FILE = re.compile(r"no such file or directory|ENOENT|file not found", re.IGNORECASE)
_USAGE = re.compile(r"^\s*(?:usage:|usage of \S+:)", re.IGNORECASE)


@dataclass(frozen=True)
class Said:
    """What the lines of a server's stderr say, as far as a hint needs it."""

    variables: tuple[str, ...] = ()  # environment variables it asks for, in the order named
    variable_line: str | None = None  # the line that asks for them
    missing_file: bool = False
    path: str | None = None  # the file it could not find, when it names it
    usage: bool = False  # it printed a usage text
    first_error: str | None = None  # the first line that looks like an error


def read_said(lines: list[str]) -> Said:
    variables: list[str] = []
    variable_line = path = first_error = None
    missing_file = usage = False
    for line in lines:
        if first_error is None and looks_like_error(line) and not _USAGE.match(line):
            first_error = line.strip()
        named = _variables(line)
        if named and variable_line is None:
            variable_line = line.strip()
        variables.extend(name for name in named if name not in variables)
        if not missing_file and _NO_SUCH_FILE.search(line):
            missing_file = True
        if path is None:
            path = next((m.group(1) for pattern in _MISSING_FILE if (m := pattern.search(line))), None)
            missing_file = missing_file or path is not None
        usage = usage or _USAGE.match(line) is not None
    return Said(tuple(variables), variable_line, missing_file, path, usage, first_error)


def _variables(line: str) -> list[str]:
    """The environment variables a line asks for: "X is not set", "missing X", "environment
    variables X or Y must be provided", Python's `KeyError: 'X'` (from `os.environ['X']`)."""
    found: list[str] = []
    if _NEED_WORDS.search(line):
        if _ENV_WORDS.search(line):
            found += [m.group(1) for m in _NAME_AFTER_ENV.finditer(line)]
            found += _ANY_NAME.findall(line)
        found += [m.group(1) for m in _NAME_THEN_NEED.finditer(line)]
        found += [m.group(1) for m in _NEED_THEN_NAME.finditer(line)]
    found += _KEY_ERROR.findall(line)
    names: list[str] = []
    for name in found:
        if name.isupper() and name not in _NOT_NAMES and not name.startswith("ERR_") and name not in names:
            names.append(name)
    return names
