"""Make untrusted server text safe to show in a terminal.

Everything an MCP server sends (names, descriptions, log lines, errors, content) is
hostile until proven otherwise.  :func:`visible` replaces every character that could
drive the terminal (escape sequences, C1 controls, CR/backspace overwrites) or hide
content from the reader (bidi overrides, zero-width and other default-ignorable
characters, Unicode tag characters, unassigned/private-use/surrogate code points) by a
short, visible ASCII notation.  :func:`findings_for` explains what was found.

Notation:
    C0 controls and DEL   ``\\x1b``, ``\\x07``; tab/newline/CR as ``\\t`` ``\\n`` ``\\r``
    C1 controls           ``\\u0085``
    everything else       ``<U+202E>``, ``<U+E0041>``

A literal backslash is *not* doubled: server text is full of Windows paths and regexes,
and doubling would make ordinary text ugly.  The price is that the two-character text
``\\x1b`` and a real ESC look the same in the output; that ambiguity is harmless (both
render as the same inert text) and :func:`findings_for` reports the real ones.

Standard library only; nothing is computed at import time beyond a few small regexes.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Iterator
from typing import Any

__all__ = ["visible", "plain", "findings_for", "truncate", "clean_tree", "json_dumps"]

# Unicode Default_Ignorable_Code_Point (DerivedCoreProperties.txt).  These render as
# nothing, so any of them can hide text.  Most are category Cf (caught by category
# anyway) but some are letters or marks (Hangul fillers, CGJ, Khmer inherent vowels,
# Mongolian free variation selectors, variation selectors) and must be listed.
_DEFAULT_IGNORABLE: tuple[tuple[int, int], ...] = (
    (0x00AD, 0x00AD),  # soft hyphen
    (0x034F, 0x034F),  # combining grapheme joiner
    (0x061C, 0x061C),  # Arabic letter mark
    (0x115F, 0x1160),  # Hangul choseong/jungseong fillers
    (0x17B4, 0x17B5),  # Khmer inherent vowels
    (0x180B, 0x180F),  # Mongolian free variation selectors and vowel separator
    (0x200B, 0x200F),  # zero-width space/non-joiner/joiner, LRM, RLM
    (0x202A, 0x202E),  # bidi embeddings and overrides
    (0x2060, 0x206F),  # word joiner, invisible operators, bidi isolates, deprecated format chars
    (0x3164, 0x3164),  # Hangul filler
    (0xFE00, 0xFE0F),  # variation selectors 1-16
    (0xFEFF, 0xFEFF),  # zero-width no-break space / BOM
    (0xFFA0, 0xFFA0),  # halfwidth Hangul filler
    (0xFFF0, 0xFFF8),  # unassigned specials
    (0x1BCA0, 0x1BCA3),  # shorthand format controls
    (0x1D173, 0x1D17A),  # musical symbol formatting
    (0xE0000, 0xE0FFF),  # tag characters, variation selectors 17-256, reserved
)

# Categories that are never shown raw: controls, format characters, surrogates,
# private use, unassigned, line/paragraph separators (U+2028/U+2029 act as newlines in
# some terminals and editors).  Cn is judged by the running Python's Unicode database,
# so a character newer than it (e.g. a brand-new emoji) is shown as <U+XXXX>: safe side.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})

_ZWJ = "\u200d"
_VS15, _VS16 = "\ufe0e", "\ufe0f"
_KEYCAP_BASES = frozenset("#*0123456789")

# Printable-per-str.isprintable() characters that we still escape: used by the fast path.
_IGNORABLE_RE = re.compile(
    "[" + "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in _DEFAULT_IGNORABLE) + "]"
)
# The only characters that may be kept depending on their neighbours.
_JOINER_RE = re.compile(f"[{_ZWJ}{_VS15}{_VS16}]")
_JOINER_CPS = frozenset(map(ord, (_ZWJ, _VS15, _VS16)))
# Joiners that need the (slower, Python-level) context check.  Ones sitting between
# pictographs of U+1F300-U+1FAFF (all category So, skin tones Sk) are certainly part of an
# emoji and skipped, so emoji-heavy text stays fast.  Only valid on visible() *output*,
# where unassigned code points in that range are already escaped.
_PICTO = "\U0001F300-\U0001FAFF"
_JOINER_SUSPECT_RE = re.compile(
    f"(?<![{_PICTO}]){_ZWJ}"
    f"|{_ZWJ}(?![\U0001F300-\U0001F3FA\U0001F400-\U0001FAFF])"
    f"|(?<![{_PICTO}])[{_VS15}{_VS16}]"
)
# Notation produced by visible(); truncate() must not cut through one.
_NOTATION_RE = re.compile(r"\\x[0-9a-f]{2}|\\u[0-9a-f]{4}|\\[tnr]|<U\+[0-9A-F]{4,6}>")
# Candidates for findings_for(): anything outside printable ASCII, newline and tab.
_NON_PLAIN_RUN_RE = re.compile(r"[^\x20-\x7e\n\t]+")

_CACHE_LIMIT = 200_000  # cap per-code-point cache so hostile input cannot grow it unboundedly


def _is_default_ignorable(cp: int) -> bool:
    return any(lo <= cp <= hi for lo, hi in _DEFAULT_IGNORABLE)


def _notation(cp: int, multiline: bool) -> str | None:
    """Visible replacement for code point ``cp``, or None if it may be printed as is."""
    if cp < 0x20 or cp == 0x7F:
        if cp == 0x09:
            return None if multiline else "\\t"
        if cp == 0x0A:
            return None if multiline else "\\n"
        if cp == 0x0D:
            # CR is always escaped: a bare CR lets later text overwrite earlier text.
            return "\\r"
        return f"\\x{cp:02x}"
    if cp < 0x7F:
        return None
    if cp <= 0x9F:
        return f"\\u{cp:04x}"  # C1 controls; 0x9b is a one-byte CSI on some terminals
    if _is_default_ignorable(cp) or unicodedata.category(chr(cp)) in _UNSAFE_CATEGORIES:
        return f"<U+{cp:04X}>"
    return None


class _Table(dict[int, Any]):
    """Lazily filled str.translate() table: only code points actually seen are classified."""

    def __init__(self, multiline: bool) -> None:
        super().__init__()
        self.multiline = multiline

    def __missing__(self, cp: int) -> int | str:
        # ZWJ and VS15/VS16 pass through here; visible() decides on them from context.
        rep = None if cp in _JOINER_CPS else _notation(cp, self.multiline)
        value: int | str = cp if rep is None else rep
        if len(self) < _CACHE_LIMIT:
            self[cp] = value
        return value


_SINGLE = _Table(multiline=False)
_MULTI = _Table(multiline=True)


def _is_safe_char(ch: str) -> bool:
    """Printable as is (joiners excluded: their fate depends on context)."""
    return _MULTI[ord(ch)] == ord(ch) and ch not in (_ZWJ, _VS15, _VS16)


def _keeps_joiner(text: str, i: int) -> bool:
    """Whether the ZWJ / emoji variation selector at ``text[i]`` is part of an emoji.

    Variation selectors: VS15/VS16 (U+FE0E/U+FE0F) choose text/emoji presentation and
    follow nearly every emoji ("❤️"), so one of them directly after a visible non-ASCII
    character or a keycap base (#, *, 0-9) is kept.  Every other variation selector
    (VS1-14, VS17-256, a second one in a row, or one after plain ASCII/an escaped
    character) is escaped: runs of variation selectors are the "emoji smuggling" trick
    for hiding arbitrary bytes, and VS1-14/VS17+ (math, CJK ideographic variants) are
    too rare in MCP metadata to be worth the risk.

    ZWJ is kept only inside an emoji ZWJ sequence (symbol [skin tone|VS16] ZWJ symbol,
    as in "👨‍💻"), so ordinary emoji are not mangled; between letters it is escaped.
    """
    ch = text[i]
    if i == 0:
        return False
    prev = text[i - 1]
    if ch in (_VS15, _VS16):
        return prev in _KEYCAP_BASES or (ord(prev) > 0x7F and _is_safe_char(prev))
    # ZWJ
    if i + 1 >= len(text) or unicodedata.category(text[i + 1]) != "So":
        return False
    if prev == _VS16:
        return i >= 2 and unicodedata.category(text[i - 2]) == "So"
    return unicodedata.category(prev) == "So" or 0x1F3FB <= ord(prev) <= 0x1F3FF


def visible(text: str, *, multiline: bool = False) -> str:
    """Return ``text`` with every dangerous or invisible character made visible.

    Newline and tab are kept only when ``multiline`` is true; everything else unsafe is
    replaced by ASCII notation (see module docstring).  Idempotent.
    """
    probe = text
    if multiline and ("\n" in text or "\t" in text):
        probe = text.replace("\n", "").replace("\t", "")
    # Fast path, all in C: isprintable() is False for every Cc/Cf/Cs/Co/Cn/Z* character.
    if probe.isprintable() and not _IGNORABLE_RE.search(probe):
        return text
    table = _MULTI if multiline else _SINGLE
    out = text.translate(table)  # leaves ZWJ/VS15/VS16 alone
    if not _JOINER_RE.search(out):
        return out
    # Judge each joiner against its neighbours *after* translation: an escaped neighbour
    # is now ASCII notation, so a joiner next to it is escaped too, and the result of a
    # second pass is the same (idempotence).
    parts: list[str] = []
    pos = 0
    for m in _JOINER_SUSPECT_RE.finditer(out):
        i = m.start()
        if not _keeps_joiner(out, i):
            parts.append(out[pos:i])
            parts.append(f"<U+{ord(out[i]):04X}>")
            pos = i + 1
    if not parts:
        return out
    parts.append(out[pos:])
    return "".join(parts)


def truncate(text: str, limit: int) -> str:
    """Cut ``text`` to at most ``limit`` characters, ending in ``…(+N)`` for N omitted chars.

    Meant for already-visible() text: never cuts through an escape notation such as
    ``\\x1b`` or ``<U+E0041>``, nor separates an emoji from its kept ZWJ/variation selector.
    """
    if limit < 0:
        raise ValueError("limit must be >= 0")
    if len(text) <= limit:
        return text
    # Reserve room for the widest possible suffix so the result never exceeds the limit.
    keep = cut_at(text, max(limit - len(f"…(+{len(text)})"), 0))
    return f"{text[:keep]}…(+{len(text) - keep})"


def cut_at(text: str, keep: int) -> int:
    """Where to cut already-visible() text to keep at most ``keep`` characters: never inside an
    escape notation such as ``\\x1b`` or ``<U+E0041>``, nor between an emoji and its kept
    ZWJ/variation selector."""
    for m in _NOTATION_RE.finditer(text, max(keep - 10, 0), keep + 10):
        if m.start() < keep < m.end():
            keep = m.start()
            break
    while 0 < keep < len(text) and (text[keep] in (_ZWJ, _VS15, _VS16) or text[keep - 1] == _ZWJ):
        keep -= 1
    return keep


def clean_tree(value: Any) -> Any:
    """Copy a JSON-like value with every string (dict keys too) passed through visible(multiline=True).

    Distinct keys that become equal after sanitising (a real ESC vs the text ``\\x1b``)
    are disambiguated with a `` <dup N>`` suffix, so one cannot hide the other.
    """
    if isinstance(value, str):
        return visible(value, multiline=True)
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            new_key = visible(key, multiline=True) if isinstance(key, str) else key
            if new_key in out:
                n = 2
                while f"{new_key} <dup {n}>" in out:
                    n += 1
                new_key = f"{new_key} <dup {n}>"
            out[new_key] = clean_tree(item)
        return out
    if isinstance(value, list):
        return [clean_tree(item) for item in value]
    if isinstance(value, tuple):
        return tuple(clean_tree(item) for item in value)
    return value


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def json_dumps(value: Any, **options: Any) -> str:
    """json.dumps that never writes NaN or Infinity, which are not JSON (RFC 8259): a server may
    send them (Python's parser and the SDK accept them), and they are written as null."""
    try:
        return json.dumps(value, allow_nan=False, **options)
    except ValueError:
        return json.dumps(_finite(value), allow_nan=False, **options)


# ---------------------------------------------------------------------------------------
# findings_for

_MAX_FINDINGS = 20
_MAX_SCANNED = 10_000
_SCAN_CHUNK = 256
_HIDDEN_PREVIEW = 80

_C0_NAMES = {0x08: "backspace", 0x0D: "carriage return", 0x07: "bell", 0x00: "NUL"}
_C1_KINDS = {0x9B: "CSI", 0x9D: "OSC", 0x90: "DCS", 0x9E: "PM", 0x9F: "APC", 0x98: "SOS", 0x85: "NEL"}
_ESC_KINDS = {"[": "CSI", "P": "DCS", "_": "APC", "^": "PM", "X": "SOS", "\\": "ST"}
_BIDI_OVERRIDES = frozenset(range(0x202A, 0x202F))
_BIDI_ISOLATES = frozenset(range(0x2066, 0x206A))
_BIDI_MARKS = frozenset({0x061C, 0x200E, 0x200F})
_OSC_NUMBER_RE = re.compile(r"\d+")


def _suspect_offsets(text: str) -> Iterator[int]:
    """Offsets of characters visible(multiline=True) would not print as is (plus all joiners).

    Runs of non-ASCII text are checked in chunks with the C-speed isprintable() first, so
    long clean CJK/Arabic/emoji text costs almost nothing.
    """
    for m in _NON_PLAIN_RUN_RE.finditer(text):
        start, end = m.span()
        for lo in range(start, end, _SCAN_CHUNK):
            hi = min(lo + _SCAN_CHUNK, end)
            chunk = text[lo:hi]
            if chunk.isprintable() and not _IGNORABLE_RE.search(chunk):
                continue
            for j, ch in enumerate(chunk, lo):
                cp = ord(ch)
                if _MULTI[cp] != cp or cp in _JOINER_CPS:
                    yield j


def _esc_kind(text: str, i: int) -> str:
    nxt = text[i + 1 : i + 2]
    if nxt == "]":
        m = _OSC_NUMBER_RE.match(text, i + 2)
        num = m.group() if m else ""
        if num == "52":
            return "OSC 52 clipboard write"
        if num == "8":
            return "OSC 8 hyperlink"
        if num in ("0", "1", "2"):
            return f"OSC {num} window title"
        return f"OSC {num}".rstrip()
    return _ESC_KINDS.get(nxt, "")


def _char_name(ch: str) -> str:
    return unicodedata.name(ch, "")


def _is_variation_selector(cp: int) -> bool:
    return 0xFE00 <= cp <= 0xFE0F or 0xE0100 <= cp <= 0xE01EF


def _decode_smuggled(selectors: list[int]) -> str | None:
    """Decode "emoji smuggling": one byte per variation selector (VS1-16 = 0-15, VS17+ = 16+)."""
    data = bytes(cp - 0xFE00 if cp <= 0xFE0F else cp - 0xE0100 + 16 for cp in selectors)
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    # Only worth showing if it looks like text rather than noise.
    return decoded if any(c.isalnum() for c in decoded) else None


def _quote(s: str) -> str:
    return "'" + truncate(visible(s), _HIDDEN_PREVIEW) + "'"


def plain(text: str) -> bool:
    """Whether `text` is printable ASCII, newlines and tabs only: nothing `findings_for` could
    report and nothing `visible(multiline=True)` would change. One regex search, in C."""
    return _NON_PLAIN_RUN_RE.search(text) is None


def findings_for(text: str) -> list[str]:
    """Human-readable reasons why ``text`` looks like terminal manipulation or hidden content.

    Newlines and tabs are not reported (descriptions legitimately contain them), nor is
    the CR of a CRLF.  Repeated occurrences of the same kind are folded into one line.
    Every message is itself safe to print.
    """
    groups: dict[str, list[int]] = {}  # label -> offsets, insertion order = first seen
    tags: list[int] = []
    selectors: list[int] = []

    def add(label: str, offset: int) -> None:
        groups.setdefault(label, []).append(offset)

    suspicious = 0
    for i in _suspect_offsets(text):
        ch = text[i]
        cp = ord(ch)
        if cp in _JOINER_CPS and _keeps_joiner(text, i):
            continue
        suspicious += 1
        if suspicious > _MAX_SCANNED:
            break  # hostile megabytes of controls: the first ones tell the story
        if cp == 0x1B:
            kind = _esc_kind(text, i)
            add(f"escape sequence (ESC{', ' + kind if kind else ''})", i)
        elif cp == 0x0D:
            if text[i + 1 : i + 2] != "\n":
                add("carriage return \\r (can overwrite text on screen)", i)
        elif cp == 0x08:
            add("backspace \\x08 (can overwrite text on screen)", i)
        elif cp < 0x20 or cp == 0x7F:
            name = _C0_NAMES.get(cp)
            add(f"control character {_notation(cp, False)}{' (' + name + ')' if name else ''}", i)
        elif cp <= 0x9F:
            c1 = _C1_KINDS.get(cp)
            add(f"C1 control {_notation(cp, False)}{' (' + c1 + ')' if c1 else ''}", i)
        elif 0xE0000 <= cp <= 0xE007F:
            tags.append(cp)
            add("__tags__", i)
        elif _is_variation_selector(cp):
            selectors.append(cp)
            add("__selectors__", i)
        elif cp in _BIDI_OVERRIDES:
            add(f"bidirectional override U+{cp:04X} {_char_name(ch)}", i)
        elif cp in _BIDI_ISOLATES:
            add(f"bidirectional isolate U+{cp:04X} {_char_name(ch)}", i)
        elif cp in _BIDI_MARKS:
            add(f"bidirectional mark U+{cp:04X} {_char_name(ch)}", i)
        else:
            cat = unicodedata.category(ch)
            if cat == "Cn" and not _is_default_ignorable(cp):
                add("unassigned code point", i)
            elif cat == "Co":
                add("private-use character", i)
            elif cat == "Cs":
                add("lone surrogate", i)
            elif cat in ("Zl", "Zp"):
                add(f"line/paragraph separator U+{cp:04X}", i)
            else:
                add(f"invisible character U+{cp:04X} {_char_name(ch)}".rstrip(), i)

    out: list[str] = []
    for label, offsets in groups.items():
        n = len(offsets)
        if label == "__tags__":
            hidden = "".join(chr(cp - 0xE0000) for cp in tags if 0xE0020 <= cp <= 0xE007E)
            msg = f"{n} invisible Unicode tag character{'s' if n != 1 else ''}"
            if hidden:
                msg += f" (hidden text: {_quote(hidden)})"
        elif label == "__selectors__":
            msg = f"{n} stray variation selector{'s' if n != 1 else ''} (can carry hidden data)"
            decoded = _decode_smuggled(selectors) if n > 1 else None
            if decoded:
                msg += f" (hidden bytes decode to: {_quote(decoded)})"
        else:
            if label in ("unassigned code point", "private-use character", "lone surrogate"):
                label += f" U+{ord(text[offsets[0]]):04X}"
            msg = f"{label} at offset {offsets[0]}"
            if n > 1:
                msg += f" (and {n - 1} more)"
        out.append(visible(msg))
        if len(out) == _MAX_FINDINGS and len(groups) > _MAX_FINDINGS:
            out.append(f"... and {len(groups) - _MAX_FINDINGS} more kinds of suspicious characters")
            break
    if suspicious > _MAX_SCANNED:
        out.append(f"scan stopped after {_MAX_SCANNED} suspicious characters")
    return out


def json_kind(value: Any) -> str:
    """What a JSON value is, in JSON's words, for a message: a peer's 3 is a number and its list an
    array, not a Python int and list."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list | tuple) else "an object" if isinstance(value, dict) else "a value"
