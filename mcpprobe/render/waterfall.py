"""A timing waterfall as inline SVG: one bar per phase of a server's session (connect, discover,
initialize, each list), placed at when the phase began and as long as it took.

For the HTML report (mcpprobe.render.html): no script, no external reference, no style attribute
(the page's Content-Security-Policy allows its one hashed stylesheet only, which colours the bars
by class). The drawing scales to the width of its box (a viewBox and `width="100%"`), so a phone
never scrolls sideways. Every number is mcpprobe's own; the phase names are escaped all the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

WIDTH = 420  # viewBox units; the drawing is scaled to its box (narrow: its text stays legible on a phone)
LABELS = 100  # the phase names' column
DURATIONS = 52  # room right of the longest bar for its duration
ROW = 22
AXIS = 24

CSS = """
.waterfall{width:100%;height:auto;display:block;max-width:34rem}
.waterfall text{fill:var(--fg);font:12px system-ui,sans-serif}
.waterfall text.muted{fill:var(--muted)}
.waterfall line{stroke:var(--line);stroke-width:1}
.waterfall rect.bar{fill:var(--info)}
.waterfall rect.connect{fill:var(--muted)}
.waterfall rect.handshake{fill:var(--warn)}
.waterfall rect.list{fill:var(--ok)}
.waterfall rect.unanswered{fill:var(--line)}
""".strip()


def _kind(phase: str, detail: dict[str, Any]) -> str:
    if detail.get("unanswered"):
        return "unanswered"
    if phase in ("connect", "restart"):
        return "connect"
    if phase in ("discover", "initialize"):
        return "handshake"
    if phase.startswith("list "):
        return "list"
    return "other"


def _ms(value: float) -> str:
    return f"{value:.0f} ms" if value >= 1 or value == 0 else f"{value:.1f} ms"


def _ticks(total: float) -> list[float]:
    """Round steps (1, 2 or 5 times a power of ten) that fit about four times in `total`."""
    if total <= 0:
        return [0.0]
    raw = total / 4
    power = 10 ** (len(str(int(raw))) - 1) if raw >= 1 else 1
    step = next((m * power for m in (1, 2, 5, 10) if m * power >= raw), 10 * power)
    return [step * i for i in range(int(total // step) + 1)]


def waterfall_svg(timings: Sequence[Any], label: str, ident: str) -> str:
    """The SVG for `timings` (client.session.Timing) that know when they began; "" when none does.
    `label` names the server in the drawing's title (escaped here); `ident` is unique in the page."""
    placed = sorted((t for t in timings if getattr(t, "at", None) is not None), key=lambda t: t.at)
    if not placed:
        return ""
    start = placed[0].at
    total = max((t.at - start) * 1000 + t.ms for t in placed) or 1.0
    scale = (WIDTH - LABELS - DURATIONS) / total
    height = len(placed) * ROW + AXIS
    title = f"Timing of {label}: {_ms(total)} from connecting to the last answer"
    parts = [f'<svg class="waterfall" viewBox="0 0 {WIDTH} {height}" width="100%" role="img" '
             f'aria-labelledby="{ident}" xmlns="http://www.w3.org/2000/svg">',
             f'<title id="{ident}">{escape(title)}</title>']
    for tick in _ticks(total):
        x = LABELS + tick * scale
        parts.append(f'<line x1="{x:.1f}" y1="0" x2="{x:.1f}" y2="{height - AXIS + 4}"/>'
                     f'<text class="muted" x="{x:.1f}" y="{height - 6}" text-anchor="middle">{_ms(tick)}</text>')
    for row, timing in enumerate(placed):
        offset = (timing.at - start) * 1000
        x = LABELS + offset * scale
        width = max(timing.ms * scale, 1.5)  # a phase of no measurable length still shows
        y = row * ROW + 4
        detail = getattr(timing, "detail", {}) or {}
        kind = _kind(timing.phase, detail)
        said = f"{timing.phase}: {_ms(timing.ms)}, from {_ms(offset)}"
        if detail.get("unanswered"):
            said += " (not answered)"
        elif detail.get("version"):
            said += f" ({detail['version']})"
        parts.append(f"<g><title>{escape(said)}</title>"
                     f'<text x="0" y="{y + 13}">{escape(timing.phase)}</text>'
                     f'<rect class="bar {kind}" x="{x:.1f}" y="{y}" width="{width:.1f}" height="{ROW - 8}" rx="2"/>'
                     f'<text class="muted" x="{x + width + 4:.1f}" y="{y + 13}">{_ms(timing.ms)}</text></g>')
    parts.append("</svg>")
    return "".join(parts)
