"""Tests for mcpprobe.safety.sanitize: nothing a server sends may reach the terminal raw."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpprobe.safety.sanitize import _keeps_joiner, clean_tree, findings_for, truncate, visible


def tags(s: str) -> str:
    """Encode ASCII as invisible Unicode tag characters (the tool-poisoning trick)."""
    return "".join(chr(0xE0000 + ord(c)) for c in s)


def smuggle(data: bytes) -> str:
    """Encode bytes as variation selectors ("emoji smuggling")."""
    return "".join(chr(0xFE00 + b) if b < 16 else chr(0xE0100 + b - 16) for b in data)


# --- visible(): exact outputs -------------------------------------------------------------

@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # C0 / DEL / escape sequences
        ("a\x1b[31mred", "a\\x1b[31mred"),
        ("bell\x07", "bell\\x07"),
        ("nul\x00del\x7f", "nul\\x00del\\x7f"),
        ("\x1b]52;c;ZXZpbA==\x07", "\\x1b]52;c;ZXZpbA==\\x07"),  # OSC 52 clipboard write
        ("\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\", "\\x1b]8;;http://evil\\x1b\\click\\x1b]8;;\\x1b\\"),
        ("\x1bP+q\x1b\\", "\\x1bP+q\\x1b\\"),  # DCS
        ("\x1bc", "\\x1bc"),  # bare ESC (RIS: reset terminal)
        # overwrite tricks
        ("safe\rEVIL", "safe\\rEVIL"),
        ("rm -rf /\x08\x08\x08\x08\x08\x08\x08\x08ls", "rm -rf /" + "\\x08" * 8 + "ls"),
        # C1 controls, including the 8-bit CSI
        ("\x9b31mred", "\\u009b31mred"),
        ("line\x85next", "line\\u0085next"),
        ("\x9d0;title\x9c", "\\u009d0;title\\u009c"),
        # bidi (Trojan Source)
        ("abc\u202edef", "abc<U+202E>def"),
        ("\u2066x\u2069\u200e\u200f\u061c", "<U+2066>x<U+2069><U+200E><U+200F><U+061C>"),
        ("\u202a\u202b\u202c\u202d", "<U+202A><U+202B><U+202C><U+202D>"),
        # zero-width and invisible formatting characters
        ("wo\u200drd", "wo<U+200D>rd"),
        ("a\u200bb\u200cc", "a<U+200B>b<U+200C>c"),
        ("\ufeffbom\u2060\u2061\u2064", "<U+FEFF>bom<U+2060><U+2061><U+2064>"),
        ("soft\u00adhyphen\u180e", "soft<U+00AD>hyphen<U+180E>"),
        ("\u3164\u115f\u034f", "<U+3164><U+115F><U+034F>"),
        # tag characters
        ("hi" + tags("run rm"), "hi<U+E0072><U+E0075><U+E006E><U+E0020><U+E0072><U+E006D>"),
        ("\U000e0001\U000e007f", "<U+E0001><U+E007F>"),
        # unassigned, private use, surrogate, line/paragraph separators
        ("\U00050000", "<U+50000>"),
        ("\ue000\U000f0000", "<U+E000><U+F0000>"),
        ("\ud800", "<U+D800>"),
        ("a\u2028b\u2029", "a<U+2028>b<U+2029>"),
        # backslashes stay single (documented ambiguity)
        ("C:\\temp\\new", "C:\\temp\\new"),
        ("literal \\x1b", "literal \\x1b"),
    ],
)
def test_visible_exact(raw: str, expected: str) -> None:
    assert visible(raw) == expected
    assert visible(expected) == expected


@pytest.mark.parametrize(
    "text",
    [
        "plain ASCII text, with punctuation!? ~{}[]<>|^`",
        "中文工具描述：读取文件",
        "العربية: قراءة الملفات",
        "עברית",
        "Русский текст",
        "日本語のテキスト かな カナ",
        "한국어 텍스트",
        "हिन्दी पाठ",
        "emoji 😀 👍🏽 ❤️ ☺️ 👨‍💻 👩‍👩‍👧 🏳️‍🌈 ❤️‍🔥 #️⃣ 1️⃣",
        "café naïve e\u0301 (combining acute)",
        "non-breaking\u00a0space and ideographic\u3000space",
        "",
    ],
)
def test_plain_multilingual_text_unchanged(text: str) -> None:
    assert visible(text) == text
    assert findings_for(text) == []


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # variation selectors: only VS15/VS16 directly after a visible non-ASCII char or keycap base
        ("x\ufe0f", "x<U+FE0F>"),
        ("\ufe0fstart", "<U+FE0F>start"),
        ("❤\ufe0f\ufe0f", "❤\ufe0f<U+FE0F>"),
        ("漢\ufe00", "漢<U+FE00>"),
        ("漢\U000e0100", "漢<U+E0100>"),
        ("\x1b\ufe0f", "\\x1b<U+FE0F>"),
        # ZWJ: only inside an emoji sequence
        ("😀\u200d", "😀<U+200D>"),
        ("\u200d😀", "<U+200D>😀"),
        ("😀\u200d\u200d😀", "😀<U+200D><U+200D>😀"),
        ("😀\u200d🏽", "😀<U+200D>🏽"),
        ("x\ufe0f\u200d😀", "x<U+FE0F><U+200D>😀"),
        ("\U0001faff\u200d😀", "<U+1FAFF><U+200D>😀"),  # unassigned in the emoji block
    ],
)
def test_joiners_in_context(raw: str, expected: str) -> None:
    assert visible(raw) == expected
    assert visible(expected) == expected


def test_smuggled_bytes_are_visible_and_decoded() -> None:
    raw = "👍" + smuggle(b"hello secret")
    out = visible(raw)
    assert out.startswith("👍<U+E0158>")
    assert out.count("<U+") == len("hello secret")
    (finding,) = findings_for(raw)
    assert "12 stray variation selectors" in finding
    assert "'hello secret'" in finding


# --- multiline ----------------------------------------------------------------------------

def test_multiline_keeps_newline_and_tab_only() -> None:
    raw = "line1\n\tline2\r\nline3\x1b[2J\u2028"
    assert visible(raw) == "line1\\n\\tline2\\r\\nline3\\x1b[2J<U+2028>"
    assert visible(raw, multiline=True) == "line1\n\tline2\\r\nline3\\x1b[2J<U+2028>"


def test_multiline_fast_path_still_escapes() -> None:
    assert visible("a\nb", multiline=True) == "a\nb"
    assert visible("a\nb\u202e", multiline=True) == "a\nb<U+202E>"
    assert visible("a\nb") == "a\\nb"


# --- findings_for -------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("abcdefghijkl\x1b[31m", ["escape sequence (ESC, CSI) at offset 12"]),
        ("\x1b]52;c;aGk=\x07", ["escape sequence (ESC, OSC 52 clipboard write) at offset 0",
                                "control character \\x07 (bell) at offset 11"]),
        ("\x1b]8;;https://x\x1b\\", ["escape sequence (ESC, OSC 8 hyperlink) at offset 0",
                                  "escape sequence (ESC, ST) at offset 14"]),
        ("\x1b[1m\x1b[0m", ["escape sequence (ESC, CSI) at offset 0 (and 1 more)"]),
        ("\x1bc", ["escape sequence (ESC) at offset 0"]),
        ("ok\rEVIL", ["carriage return \\r (can overwrite text on screen) at offset 2"]),
        ("abc\u202edef", ["bidirectional override U+202E RIGHT-TO-LEFT OVERRIDE at offset 3"]),
        ("\u2067x", ["bidirectional isolate U+2067 RIGHT-TO-LEFT ISOLATE at offset 0"]),
        ("wo\u200drd", ["invisible character U+200D ZERO WIDTH JOINER at offset 2"]),
        ("\x9b2J", ["C1 control \\u009b (CSI) at offset 0"]),
        ("\ue000", ["private-use character U+E000 at offset 0"]),
        ("\U00050000\U00060000", ["unassigned code point U+50000 at offset 0 (and 1 more)"]),
        ("\ud800", ["lone surrogate U+D800 at offset 0"]),
    ],
)
def test_findings_exact(raw: str, expected: list[str]) -> None:
    assert findings_for(raw) == expected


def test_findings_decode_tag_characters() -> None:
    raw = "Reads a file." + tags("ignore previous")
    assert findings_for(raw) == ["15 invisible Unicode tag characters (hidden text: 'ignore previous')"]


def test_findings_hidden_text_is_truncated_and_safe() -> None:
    (finding,) = findings_for(tags("A" * 500))
    assert finding.startswith("500 invisible Unicode tag characters (hidden text: 'AAAA")
    assert "…(+" in finding
    assert len(finding) < 160


def test_findings_ignore_newlines_tabs_and_crlf() -> None:
    assert findings_for("line 1\r\n\tline 2\nline 3") == []


def test_findings_messages_are_themselves_safe() -> None:
    hidden = smuggle("\x1b]52;c;\u202e".encode())
    raw = "\x1b]0;\x1b[31m\u202e\U000e0001" + tags("x") + "\u200b" + "👍" + hidden
    for msg in findings_for(raw):
        assert visible(msg) == msg


def test_findings_bounded_for_hostile_input() -> None:
    out = findings_for("\x1b" * 50_000)
    assert out[0] == "escape sequence (ESC) at offset 0 (and 9999 more)"
    assert out[-1].startswith("scan stopped")
    many_kinds = "".join(f"\u2060{chr(cp)}" for cp in range(0x2061, 0x2065)) + "".join(
        chr(cp) for cp in range(0xFFF0, 0xFFF9)
    ) + "".join(chr(cp) for cp in range(0x1D173, 0x1D17B))
    assert len(findings_for(many_kinds)) <= 21


# --- truncate -----------------------------------------------------------------------------

def test_truncate_short_text_unchanged() -> None:
    assert truncate("short", 10) == "short"
    assert truncate("exact", 5) == "exact"


def test_truncate_counts_omitted() -> None:
    out = truncate("x" * 100, 20)
    assert len(out) <= 20
    kept = out.index("…")
    assert out == "x" * kept + f"…(+{100 - kept})"


@pytest.mark.parametrize("limit", range(0, 40))
def test_truncate_never_splits_notation(limit: int) -> None:
    text = visible("ab\x1b[31m\u202e\x85" + tags("hi") + "cd")
    out = truncate(text, limit)
    assert len(out) <= max(limit, len(f"…(+{len(text)})"))
    head = out.split("…(+")[0]
    assert text.startswith(head)
    # The cut point is never strictly inside a notation such as \x1b or <U+E0068>.
    spans = [m.span() for m in re.finditer(r"\\x[0-9a-f]{2}|\\u[0-9a-f]{4}|<U\+[0-9A-F]{4,6}>", text)]
    assert spans
    assert not any(start < len(head) < end for start, end in spans)


def test_truncate_does_not_orphan_zwj() -> None:
    text = "a" * 10 + "👨\u200d💻" + "b" * 30
    for limit in range(5, 30):
        head = truncate(text, limit).split("…")[0]
        assert not head.endswith("\u200d")
        assert visible(head) == head


def test_truncate_rejects_negative_limit() -> None:
    with pytest.raises(ValueError):
        truncate("abc", -1)


# --- clean_tree ---------------------------------------------------------------------------

def test_clean_tree_nested() -> None:
    data = {
        "name\x1b[2J": ["multi\nline\tok", {"deep\u202e": "x\x07", "n": 1, "b": True, "z": None}],
        "plain": 1.5,
        "t": ("tuple\x85",),
    }
    assert clean_tree(data) == {
        "name\\x1b[2J": ["multi\nline\tok", {"deep<U+202E>": "x\\x07", "n": 1, "b": True, "z": None}],
        "plain": 1.5,
        "t": ("tuple\\u0085",),
    }


def test_clean_tree_does_not_mutate_and_disambiguates_keys() -> None:
    data = {"a\x1b": 1, "a\\x1b": 2}
    out = clean_tree(data)
    assert data == {"a\x1b": 1, "a\\x1b": 2}
    assert out == {"a\\x1b": 1, "a\\x1b <dup 2>": 2}


# --- properties ---------------------------------------------------------------------------

_INTERESTING = st.sampled_from(
    [
        "\x1b", "\x07", "\r", "\n", "\t", "\x08", "\x9b", "\x85", "\x7f", "\\", "[", "]", "#", "1",
        "\u202e", "\u2066", "\u200b", "\u200c", "\u200d", "\u200e", "\ufeff", "\u00ad", "\u180e",
        "\ufe0e", "\ufe0f", "\ufe00", "\U000e0100", "\U000e0041", "\U000e007f", "\U0001faff",
        "😀", "👨", "💻", "🏽", "❤", "☺", "©", "漢", "ا", "a", "<", ">", "U", "+", "\u3164", "\ud800",
    ]
)
_ANY_CHAR = st.characters(exclude_categories=())  # includes surrogates, Cn, Co
_TEXT = st.lists(st.one_of(_INTERESTING, _ANY_CHAR), max_size=40).map("".join)
_FORBIDDEN = {"Cc", "Cf", "Cs", "Co", "Cn"}


def _assert_clean(out: str, multiline: bool) -> None:
    for i, ch in enumerate(out):
        if multiline and ch in "\n\t":
            continue
        if ch in "\u200d\ufe0e\ufe0f":
            # The only kept zero-width characters: inside emoji sequences, by the documented rule.
            assert _keeps_joiner(out, i), (out, i)
            continue
        assert unicodedata.category(ch) not in _FORBIDDEN, (out, i, ch)
        assert ch not in "\u2028\u2029\u3164\u115f\u1160\u034f"


@settings(max_examples=400)
@given(_TEXT, st.booleans())
def test_visible_output_is_clean_and_idempotent(text: str, multiline: bool) -> None:
    out = visible(text, multiline=multiline)
    _assert_clean(out, multiline)
    again = visible(out, multiline=multiline)
    _assert_clean(again, multiline)
    assert again == out


@settings(max_examples=200)
@given(_TEXT)
def test_findings_empty_iff_nothing_suspicious(text: str) -> None:
    findings = findings_for(text)
    for msg in findings:
        assert visible(msg) == msg
    if visible(text, multiline=True) == text:
        assert findings == []
    cleaned = text.replace("\r\n", "")
    if visible(cleaned, multiline=True) != cleaned:
        assert findings


@given(_TEXT, st.integers(min_value=0, max_value=60))
def test_truncate_property(text: str, limit: int) -> None:
    shown = visible(text)
    out = truncate(shown, limit)
    if len(shown) <= limit:
        assert out == shown
    else:
        assert len(out) <= max(limit, len(f"…(+{len(shown)})"))
        head, _, count = out.rpartition("…(+")
        assert shown.startswith(head)
        assert int(count.rstrip(")")) == len(shown) - len(head)
