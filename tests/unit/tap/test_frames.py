"""Cutting the relay's copies back into lines: pieces, huge lines, gaps."""

from __future__ import annotations

import hashlib

from mcpprobe.tap.frames import LineFramer, Oversize


def test_lines_split_across_pieces_come_out_whole() -> None:
    framer = LineFramer(1000)
    assert framer.feed(b'{"a":') == []
    assert framer.feed(b'1}\n{"b"') == [b'{"a":1}\n']
    assert framer.feed(b":2}\n\n") == [b'{"b":2}\n', b"\n"]
    assert framer.end() is None
    assert framer.feed(b"tail") == []
    assert framer.end() == b"tail"


def test_a_line_past_the_limit_is_kept_as_size_digest_and_head() -> None:
    framer = LineFramer(100)
    line = b"x" * 250 + b"\n"
    out = framer.feed(line[:120]) + framer.feed(line[120:] + b"ok\n")
    assert out[1] == b"ok\n"
    big = out[0]
    assert isinstance(big, Oversize)
    assert big.size == len(line) and big.sha256 == hashlib.sha256(line).hexdigest()
    assert big.head == line[:big.head.__len__()] and len(big.head) <= 256


def test_after_a_gap_the_framer_resumes_at_the_next_newline() -> None:
    framer = LineFramer(1000)
    assert framer.feed(b'{"half') == []
    framer.gap()
    assert framer.feed(b'rest of a lost line"}\n{"next":1}\n') == [b'{"next":1}\n']
