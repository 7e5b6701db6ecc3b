"""The timing waterfall (mcpprobe.render.waterfall): bars where and as long as the phases were."""

from __future__ import annotations

import re

from mcpprobe.client.session import Timing
from mcpprobe.render.waterfall import DURATIONS, LABELS, WIDTH, waterfall_svg


def _bars(svg: str) -> list[tuple[str, float, float]]:
    return [(cls, float(x), float(w)) for cls, x, w in
            re.findall(r'<rect class="bar (\w+)" x="([\d.]+)" y="[\d.]+" width="([\d.]+)"', svg)]


def test_bars_are_placed_at_their_start_and_scaled_by_their_length():
    t0 = 1000.0
    timings = [Timing("connect", 10.0, at=t0), Timing("initialize", 10.0, {"version": "2025-11-25"}, at=t0 + 0.010),
               Timing("list tools", 20.0, {"pages": 1}, at=t0 + 0.020), Timing("list prompts", 5.0, at=t0 + 0.020)]
    svg = waterfall_svg(timings, "demo", "w1")
    scale = (WIDTH - LABELS - DURATIONS) / 40.0
    assert _bars(svg) == [("connect", LABELS, round(10 * scale, 1)),
                          ("handshake", round(LABELS + 10 * scale, 1), round(10 * scale, 1)),
                          ("list", round(LABELS + 20 * scale, 1), round(20 * scale, 1)),
                          ("list", round(LABELS + 20 * scale, 1), round(5 * scale, 1))]
    assert "<title>initialize: 10 ms, from 10 ms (2025-11-25)</title>" in svg
    assert '<title id="w1">Timing of demo: 40 ms from connecting to the last answer</title>' in svg


def test_an_unanswered_discover_is_drawn_apart_and_nothing_unplaced_is_drawn():
    timings = [Timing("discover", 2000.0, {"unanswered": True}, at=5.0), Timing("initialize", 3.0, at=5.1),
               Timing("call", 4.0)]  # no start known: not drawn
    svg = waterfall_svg(timings, "<x>", "w2")
    assert [cls for cls, _, _ in _bars(svg)] == ["unanswered", "handshake"]
    assert "(not answered)" in svg and "Timing of &lt;x&gt;" in svg
    assert waterfall_svg([Timing("call", 4.0)], "x", "w3") == ""
