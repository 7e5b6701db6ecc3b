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


def test_lines_are_the_same_whatever_the_pieces() -> None:
    """Whole lines in one piece are sliced from it, lines across pieces are gathered: both give the same lines,
    and the same Oversize for a line past the limit, at its exact size (the limit itself is not past it)."""
    stream = (b'{"a":1}\n' + b"y" * 299 + b"\n" + b"x" * 400 + b"\n" + b"\n" + b'{"b":2}\r\n' + b"z" * 350 + b"\n"
              + b"tail")

    def cut(pieces: list[bytes]) -> list[bytes | Oversize | None]:
        framer = LineFramer(300)
        out: list[bytes | Oversize | None] = []
        for piece in pieces:
            out += framer.feed(piece)
        return [*out, framer.end()]

    whole = cut([stream])
    assert whole == cut([stream[i:i + 1] for i in range(len(stream))])  # a byte at a time
    assert whole == cut([stream[i:i + 7] for i in range(0, len(stream), 7)])
    assert whole[:2] == [b'{"a":1}\n', b"y" * 299 + b"\n"]  # 300 bytes with its newline: at the limit, kept
    big = whole[2]
    assert isinstance(big, Oversize) and big.size == 401
    assert big.sha256 == hashlib.sha256(b"x" * 400 + b"\n").hexdigest() and big.head == b"x" * 256
    assert whole[3:5] == [b"\n", b'{"b":2}\r\n']
    assert isinstance(whole[5], Oversize) and whole[5].size == 351
    assert whole[6] == b"tail"
