"""What `mcpprobe load` shows: the live line, the final table and histogram for people, the OpenMetrics
text and the HTML page. Pure functions of the outcome (mcpprobe.load.run.LoadOutcome); the JSON
document is built in mcpprobe.render.jsondoc with the others.

Every figure is mcpprobe's own (numbers, the operation labels the user typed); server text (the
server's name, error messages) is made inert before it is shown.
"""

from __future__ import annotations

from datetime import datetime
from html import escape
from typing import TYPE_CHECKING, Any

from mcpprobe.safety.sanitize import visible

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

    from mcpprobe.load.run import LoadOutcome
    from mcpprobe.render.cells import Safe
    from mcpprobe.render.html import Redact

QUANTILES = (("min", "min"), ("p50", "p50"), ("p90", "p90"), ("p99", "p99"), ("p999", "p99.9"), ("max", "max"))
HISTOGRAM_ROWS = 16
BAR = 40


def duration(micros: float | None, extra: int = 0) -> str:
    """812 µs, 1.23 ms, 45.6 ms, 2.50 s (`extra` more decimals: 45.63 ms)."""
    if micros is None:
        return "-"
    if micros < 1000:
        return f"{micros:.{extra}f} µs"
    if micros < 10_000:
        return f"{micros / 1000:.{2 + extra}f} ms"
    if micros < 1_000_000:
        return f"{micros / 1000:.{1 + extra}f} ms"
    return f"{micros / 1e6:.{2 + extra}f} s"


def bounds(micros: list[int]) -> list[str]:
    """The histogram's upper bounds as `duration`s, with as many more decimals as it takes for no two
    to read the same (bins 50 µs wide near 200 ms: 202.85 ms, 202.90 ms, not 202.9 ms twice)."""
    for extra in range(4):
        labels = [duration(value, extra) for value in micros]
        if len(set(labels)) == len(labels):
            break
    return labels


def _percent(errors: int, requests: int) -> str:
    if not requests:
        return "-"
    share = 100 * errors / requests
    return "0%" if errors == 0 else f"{share:.2g}%" if share < 10 else f"{share:.0f}%"


def live_line(live: dict[str, Any], width: int | None = None) -> str:
    """One line of figures so far, for a terminal's stderr (rewritten in place). Shorter than
    `width`: a line the terminal wraps cannot be rewritten (the carriage return goes back only to
    the start of its last row), so the figures lose their padding, then the last ones, to fit."""
    latency = live.get("latencyUs") or {}
    phase = "warm-up " if live.get("warmup") else ""
    parts = [f"{phase}{live['elapsed']:6.1f} s", f"{live['done']:>8,} done", f"{live['rate']:>9,.0f}/s",
             f"p50 {duration(latency.get('p50')):>9}", f"p99 {duration(latency.get('p99')):>9}",
             f"errors {live['errors']:,} ({_percent(live['errors'], live['requests'])})",
             f"in flight {live['inFlight']}"]
    line = "  ".join(parts)
    if width is None or len(line) < width:
        return line
    parts = [" ".join(part.split()) for part in parts]
    while len(parts) > 1 and len("  ".join(parts)) >= width:
        parts.pop()
    return "  ".join(parts)[:max(width - 1, 0)]


def _how(outcome: LoadOutcome) -> str:
    plan = outcome.plan
    if plan is None:
        return ""
    loop = (f"open loop at {plan.rate:g}/s (at most {plan.concurrency} in flight)" if plan.rate
            else f"closed loop, concurrency {plan.concurrency}")
    bounds = []
    if plan.requests is not None:
        bounds.append(f"{plan.requests:,} requests")
    if plan.bounded_duration is not None:
        bounds.append(f"{plan.bounded_duration:g} s")
    extra = f", warm-up {plan.warmup:g} s" if plan.warmup else ""
    connections = f", {plan.connections} connections" if plan.connections > 1 else ""
    return f"{loop}, up to {' or '.join(bounds)}{extra}{connections}"


def render_load(out: Console, err: Console, outcome: LoadOutcome, safe: Safe,
                named: tuple[str, str] | None = None, merged: dict[str, Any] | None = None) -> None:
    from rich.measure import Measurement
    from rich.table import Table
    from rich.text import Text

    from mcpprobe.render.human import render_error, render_findings, render_stderr_tail

    snapshot = outcome.snapshot
    if snapshot is not None:
        info = snapshot.server_info or {}
        name = " ".join(str(info.get(k)) for k in ("name", "version") if isinstance(info.get(k), str))
        head = Text(visible(name or (named[0] if named else snapshot.target)))
        head += Text(f" over {snapshot.transport}" + (f", protocol {snapshot.protocol_version}"
                                                       if snapshot.protocol_version else ""), style="dim")
        _labeled(out, "Server ", head)
    if merged is not None:
        _merged_head(out, merged)
    else:
        _labeled(out, "Load   ", Text(_how(outcome)))
    if outcome.interrupted:
        out.print(Text("interrupted: the figures are what was measured until then", style="yellow"))
    overall = outcome.overall
    if overall is not None:
        table = Table(box=None, pad_edge=False, header_style="bold", show_edge=False)
        for header in ("operation", "requests", "errors", "throughput", *(label for _, label in QUANTILES)):
            table.add_column(header, justify="left" if header == "operation" else "right", no_wrap=True)
        rows = [*outcome.operations, {"operation": "all", **overall}] if len(outcome.operations) > 1 \
            else [{**overall, "operation": outcome.operations[0]["operation"] if outcome.operations else "all"}]
        for row in rows:
            latency = row["latencyUs"]
            table.add_row(row["operation"], f"{row['requests']:,}",
                          f"{row['errors']:,} ({_percent(row['errors'], row['requests'])})",
                          f"{row['throughput']:,.1f}/s", *(duration(latency[key]) for key, _ in QUANTILES))
        out.print()
        if Measurement.get(out, out.options.update_width(10_000), table).maximum <= out.width:
            out.print(table)
        else:  # a narrow terminal: a block per operation instead of columns cut to nothing
            for row in rows:
                _operation_block(out, row)
        kinds = overall["errorsByKind"]
        if kinds:
            _labeled(out, "Errors ", Text(", ".join(f"{k} × {n:,}" for k, n in kinds.items())))
        _labeled(out, "Clock  ", Text(_flowing(_clock(outcome), out.width - 7), style="dim"))
        _histogram(out, outcome)
        _samples(out, outcome)
        for judged in outcome.slos:
            mark = Text("✔ met   ", style="green") if judged["met"] else Text("✖ missed", style="bold red")
            _labeled(out, "SLO    ", mark + Text(f" {judged['slo']}"))
    if merged is not None:
        _workers(out, merged["merged"]["workers"])
    render_findings(out, outcome.all_findings(), safe)  # after a blank line of its own
    render_error(err, outcome)
    if outcome.error is None:
        render_stderr_tail(err, outcome.stderr_tail)


def _merged_head(out: Console, merged: dict[str, Any]) -> None:
    """`load --merge`: which server (as the runs name it) and how many runs were pooled."""
    from rich.text import Text

    server = merged.get("server") or {}
    target = server.get("name") or merged.get("target") or "?"
    transport = f" over {merged['transport']}" if merged.get("transport") else ""
    head = Text(visible(str(target))) + Text(transport, style="dim")
    _labeled(out, "Server ", head)
    runs = merged["merged"]["runs"]
    _labeled(out, "Merged ", Text(f"{runs} runs: percentiles of all their requests pooled (histograms added), "
                                  "throughput over the union of their measured windows"))


def _workers(out: Console, workers: list[dict[str, Any]]) -> None:
    """A line per merged run: its file, requests, throughput, p50/p99 and exit code."""
    from rich.text import Text

    out.print()
    out.print(Text("Runs", style="bold"))
    for index, worker in enumerate(workers, 1):
        latency = worker["latencyUs"]
        out.print(Text(f"  {index}. ") + Text(visible(str(worker["file"])))
                  + Text(f"  {worker['requests']:,} requests, {worker['throughput']:,.1f}/s, p50 "
                         f"{duration(latency['p50'])}, p99 {duration(latency['p99'])}, exit {worker['exitCode']}",
                         style="dim"))


def _clock(outcome: LoadOutcome) -> list[str]:
    """The clock line's phrases (`_flowing` breaks between them, never inside a figure)."""
    clock, client = outcome.clock, outcome.client
    parts: list[str] = []
    if clock.get("firstAnswerMs") is not None:
        parts += [f"first answer after {clock['firstAnswerMs']:.0f} ms ",
                  f"(connected in {clock['connectMs']:.0f} ms); "]
    if clock.get("measuredSeconds") is not None:
        parts.append(f"measured {clock['measuredSeconds']:.2f} s; ")
    if client:
        per = client.get("cpuPerRequestUs")
        parts.append(f"client CPU {client['cpuSeconds']:.2f} s ")
        parts += ([f"({client['cpuShare']:.0%} of a core, ", f"{duration(per)} per request)"] if per is not None
                  else [f"({client['cpuShare']:.0%} of a core)"])
    if parts:
        parts[-1] = parts[-1].removesuffix("; ")
    return parts


def _flowing(phrases: list[str], width: int) -> str:
    """`phrases` (each with its own trailing separator) as lines of at most `width` columns, broken
    between phrases: a figure and its unit ("95 µs", "1 → 1") stay on one line, which wrapping at any
    space did not keep on a 60-column terminal. A phrase wider than a line is left to wrap."""
    lines: list[str] = []
    line = ""
    for phrase in phrases:
        if line and len((line + phrase).rstrip()) > width:
            lines.append(line.rstrip())
            line = ""
        line += phrase
    lines.append(line.rstrip())
    return "\n".join(lines)


def _labeled(out: Console, label: str, value: Text) -> None:
    """`label` in bold, then `value`, which wraps under itself on a narrow terminal, never back
    to the first column."""
    from rich.table import Table
    from rich.text import Text

    grid = Table.grid()
    grid.add_column(width=len(label), no_wrap=True)
    grid.add_column(ratio=1)
    grid.add_row(Text(label, style="bold"), value)
    out.print(grid)


def _operation_block(out: Console, row: dict[str, Any]) -> None:
    """One operation's figures as lines that wrap between figures, never inside one."""
    from rich.text import Text

    latency = row["latencyUs"]
    name = visible(row["operation"])
    # Broken between figures, the later lines indented under the name (a long name, `get-prompt NAME
    # K=V`, once sent "210.3/s" back to the first column on a 60-column terminal).
    lines = _flowing([f"{name}  ", f"{row['requests']:,} requests, ",
                      f"{row['errors']:,} errors ({_percent(row['errors'], row['requests'])}), ",
                      f"{row['throughput']:,.1f}/s"], out.width - 2).split("\n")
    out.print(Text(name, style="bold") + Text(lines[0][len(name):]))
    for line in lines[1:]:
        out.print(Text("  " + line))
    figures = [f"{label} {duration(latency[key])}" for key, label in QUANTILES]
    half = (len(figures) + 1) // 2
    for part in (figures[:half], figures[half:]):
        out.print(Text("  " + "  ".join(part), style="dim"))


def _histogram(out: Console, outcome: LoadOutcome) -> None:
    from rich.text import Text

    histogram = outcome.histogram
    if histogram is None or not histogram.count:
        return
    bins = histogram.coarse(HISTOGRAM_ROWS)
    top = max(b["count"] for b in bins) or 1
    out.print()
    _labeled(out, "Latency ", Text("(log-spaced bins; count, and the share up to each)", style="dim"))
    seen = 0
    labels = bounds([b["toUs"] for b in bins])
    width = max(len(label) for label in labels)
    # The bars take what the line leaves after the bound (4 + width + 1) and the count and share
    # (17), at most BAR: a row never wraps, even on a 60-column terminal.
    room = max(8, min(BAR, out.width - (4 + width + 1) - 17))
    for b, label in zip(bins, labels, strict=True):
        seen += b["count"]
        bar = "█" * round(room * b["count"] / top) if b["count"] else ""
        if b["count"] and not bar:
            bar = "▏"
        out.print(Text(f"  < {label:>{width}} ") + Text(f"{bar:<{room}}", style="cyan")
                  + Text(f" {b['count']:>8,}  {100 * seen / histogram.count:5.1f}%", style="dim"))


def _samples(out: Console, outcome: LoadOutcome) -> None:
    from rich.text import Text

    samples = outcome.samples
    if not samples:
        return
    first, last = samples[0], samples[-1]
    phrases = [f"memory {first.rss / 2**20:.1f} → {last.rss / 2**20:.1f} MiB, ",
               f"open files {first.fds} → {last.fds}, ", f"threads {first.threads} → {last.threads}, ",
               f"processes {last.processes} ", f"({len(samples)} samples)"]
    _labeled(out, "Server ", Text(_flowing(phrases, out.width - 7), style="dim"))


# ----- OpenMetrics -----

Family = tuple[str, str, str, list[tuple[str, dict[str, str], float]]]  # name, type, help, (suffix, labels, value)


def load_families(outcome: LoadOutcome) -> list[Family]:
    """The load run's metric families, without the `server` label: summary quantiles and counters per
    operation (and `all`), the SLOs, the client's CPU, the server's last sample. `--format openmetrics`
    writes them (render_openmetrics); the exporter's `load` module serves them (mcpprobe.exporter.web)."""
    rows = [*outcome.operations]
    if outcome.overall is not None:
        rows.append({"operation": "all", **outcome.overall})
    out: list[Family] = []

    def family(name: str, kind: str, help_text: str, samples: list[tuple[str, dict[str, str], float]]) -> None:
        out.append((name, kind, help_text, samples))

    family("mcpprobe_load_requests", "counter", "requests answered or failed in the measured window",
           [("_total", {"operation": r["operation"]}, r["requests"]) for r in rows])
    family("mcpprobe_load_errors", "counter", "failed requests by kind: rpc CODE, isError, timeout, http STATUS, "
           "transport, protocol", [("_total", {"operation": r["operation"], "kind": kind}, n)
                                   for r in rows for kind, n in r["errorsByKind"].items()])
    latency: list[tuple[str, dict[str, str], float]] = []
    for r in rows:
        figures = r["latencyUs"]
        for key, q in (("p50", "0.5"), ("p90", "0.9"), ("p99", "0.99"), ("p999", "0.999")):
            if figures[key] is not None:
                latency.append(("", {"operation": r["operation"], "quantile": q}, figures[key] / 1e6))
        latency.append(("_count", {"operation": r["operation"]}, r["requests"]))
        latency.append(("_sum", {"operation": r["operation"]}, (figures["mean"] or 0) * r["requests"] / 1e6))
    family("mcpprobe_load_latency_seconds", "summary", "request latency from when it was due to its answer", latency)
    family("mcpprobe_load_throughput_requests_per_second", "gauge", "requests per second in the measured window",
           [("", {"operation": r["operation"]}, r["throughput"]) for r in rows])
    if outcome.slos:
        family("mcpprobe_load_slo_met", "gauge", "1 when the --slo objective was met, else 0",
               [("", {"slo": s["slo"]}, 1 if s["met"] else 0) for s in outcome.slos])
    if outcome.client:
        family("mcpprobe_load_client_cpu_seconds", "counter", "CPU time mcpprobe itself spent on the load",
               [("_total", {}, outcome.client["cpuSeconds"])])
    if outcome.samples:
        last = outcome.samples[-1]
        family("mcpprobe_load_server_resident_bytes", "gauge", "resident memory of the stdio server's process tree",
               [("", {}, last.rss)])
        family("mcpprobe_load_server_open_fds", "gauge", "open file descriptors of the stdio server's process tree",
               [("", {}, last.fds)])
    return out


def render_openmetrics(outcome: LoadOutcome, *, now: float, named: tuple[str, str] | None = None) -> str:
    """The families of `load_families`, the exit code and the time, each sample labelled with `server`:
    the config name of a `-s NAME` server, else the URL or command, as `probe --format openmetrics` has it."""
    server = named[0] if named else outcome.snapshot.target if outcome.snapshot is not None else ""
    families: list[Family] = [
        *load_families(outcome),
        ("mcpprobe_load_exit_code", "gauge", "the exit code of mcpprobe load (docs/exit-codes.md)",
         [("", {}, int(outcome.exit_code))]),
        ("mcpprobe_load_last_run_timestamp_seconds", "gauge", "when this load run finished",
         [("", {}, round(now, 3))])]
    lines: list[str] = []
    for name, kind, help_text, samples in families:
        lines.extend([f"# TYPE {name} {kind}", f"# HELP {name} {help_text}"])
        lines.extend(f"{name}{suffix}{_labels({'server': server, **labels})} {_number(value)}"
                     for suffix, labels, value in samples)
    lines.append("# EOF")
    return "\n".join(lines)


def _labels(labels: dict[str, str]) -> str:
    from mcpprobe.render.openmetrics import escape_label

    return "{" + ",".join(f'{k}="{escape_label(str(v))}"' for k, v in labels.items()) + "}"


def _number(value: float) -> str:
    if float(value).is_integer():
        return str(int(value))
    return repr(round(float(value), 9))


# ----- HTML -----

SVG_CSS = """
svg.chart{width:100%;height:auto;max-width:48rem;display:block;margin:.5rem 0}
svg.chart .bar{fill:var(--info)}svg.chart .axis{stroke:var(--line)}svg.chart text{fill:var(--muted);font-size:11px}
svg.chart .rate{fill:none;stroke:var(--info);stroke-width:2}svg.chart .p99{fill:none;stroke:var(--warn);stroke-width:2}
svg.chart .rss{fill:none;stroke:var(--ok);stroke-width:2}svg.chart .err{fill:var(--bad)}
""".strip()


def render_load_html(outcome: LoadOutcome, *, redact: Redact, generated: datetime,
                     named: tuple[str, str] | None = None) -> str:
    """One self-contained page: the table, the histogram and the interval chart as inline SVG (no script,
    nothing fetched), the server's memory, the SLOs and the findings; `redact` masks the run's secrets."""
    from mcpprobe import __version__
    from mcpprobe.render.html import CSS, Page, findings_block, page_policy

    page = Page(redact)
    css = CSS + "\n" + SVG_CSS
    target = named[0] if named else outcome.snapshot.target if outcome.snapshot is not None else "?"
    code = int(outcome.exit_code)
    title = f"mcpprobe load: {page.text(target, 80)}"
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f'<meta http-equiv="Content-Security-Policy" content="{page_policy(css)}">',
             '<meta name="referrer" content="no-referrer">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             '<meta name="color-scheme" content="light dark">',
             f"<title>{title}</title>", f"<style>{css}</style></head><body><main>",
             f"<header><h1>{title}</h1><p class=\"muted\">mcpprobe {escape(__version__)} · "
             f"{generated.strftime('%Y-%m-%d %H:%M:%S UTC')} · {escape(_how(outcome))} · exit {code}</p></header>"]
    if outcome.overall is not None:
        parts.append('<div class="wide"><table><thead><tr><th>operation</th><th class="num">requests</th>'
                     '<th class="num">errors</th><th class="num">throughput</th>'
                     + "".join(f'<th class="num">{label}</th>' for _, label in QUANTILES) + "</tr></thead><tbody>")
        for row in [*outcome.operations, {"operation": "all", **outcome.overall}]:
            latency = row["latencyUs"]
            parts.append(f"<tr><th>{page.text(row['operation'], 120)}</th><td class=\"num\">{row['requests']:,}</td>"
                         f"<td class=\"num\">{row['errors']:,}</td><td class=\"num\">{row['throughput']:,.1f}/s</td>"
                         + "".join(f'<td class="num">{escape(duration(latency[k]))}</td>' for k, _ in QUANTILES)
                         + "</tr>")
        parts.append("</tbody></table></div>")
        parts.append("<h3>Latency histogram</h3>" + _histogram_svg(outcome))
        if outcome.intervals:
            parts.append("<h3>Over time</h3><p class=\"muted\">throughput (blue, left scale) and p99 latency "
                         "(amber, right scale) per interval</p>" + _intervals_svg(outcome))
        if outcome.samples:
            parts.append("<h3>Server memory</h3>" + _samples_svg(outcome))
        if outcome.slos:
            parts.append("<h3>SLOs</h3><ul>" + "".join(
                f"<li class=\"{'ok' if s['met'] else 'bad'}\">{'met' if s['met'] else 'missed'}: "
                f"{page.text(s['slo'])}</li>" for s in outcome.slos) + "</ul>")
    parts.extend(findings_block(page, outcome.all_findings(), "Findings"))
    parts.append("<footer>Finding codes: docs/findings.md of mcpprobe. This page loads nothing from the network."
                 "</footer></main></body></html>")
    return "\n".join(parts)


def _histogram_svg(outcome: LoadOutcome) -> str:
    assert outcome.histogram is not None
    bins = outcome.histogram.coarse(30)
    if not bins:
        return "<p class=\"muted\">no requests measured</p>"
    width, height, left, bottom = 720, 220, 10, 30
    top = max(b["count"] for b in bins) or 1
    step = (width - 2 * left) / len(bins)
    shapes = []
    for i, b in enumerate(bins):
        h = (height - bottom - 10) * b["count"] / top
        x = left + i * step
        shapes.append(f'<rect class="bar" x="{x:.1f}" y="{height - bottom - h:.1f}" width="{max(step - 1, 1):.1f}" '
                      f'height="{h:.1f}"><title>{escape(duration(b["fromUs"]))} to {escape(duration(b["toUs"]))}: '
                      f'{b["count"]:,}</title></rect>')
    for i in range(0, len(bins), max(1, len(bins) // 6)):
        x = left + i * step
        shapes.append(f'<text x="{x:.1f}" y="{height - 10}">{escape(duration(bins[i]["fromUs"]))}</text>')
    return (f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" aria-label="latency histogram">'
            f'<line class="axis" x1="{left}" y1="{height - bottom}" x2="{width - left}" y2="{height - bottom}"/>'
            + "".join(shapes) + "</svg>")


def _polyline(points: list[tuple[float, float]], css: str) -> str:
    return f'<polyline class="{css}" points="{" ".join(f"{x:.1f},{y:.1f}" for x, y in points)}"/>'


def _intervals_svg(outcome: LoadOutcome) -> str:
    rows = outcome.intervals
    width, height, pad = 720, 220, 30
    end = rows[-1]["t"] or 1
    top_rate = max(r["throughput"] for r in rows) or 1
    top_p99 = max((r["p99Us"] or 0) for r in rows) or 1

    def x(t: float) -> float:
        return pad + (width - 2 * pad) * t / end

    def y(v: float, top: float) -> float:
        return height - pad - (height - 2 * pad) * v / top

    rate = [(x(r["t"]), y(r["throughput"], top_rate)) for r in rows]
    p99 = [(x(r["t"]), y(r["p99Us"] or 0, top_p99)) for r in rows]
    errors = "".join(f'<circle class="err" cx="{x(r["t"]):.1f}" cy="{height - pad:.1f}" r="3"><title>'
                     f'{r["errors"]:,} errors</title></circle>' for r in rows if r["errors"])
    return (f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" aria-label="throughput and p99 over time">'
            f'<line class="axis" x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}"/>'
            + _polyline(rate, "rate") + _polyline(p99, "p99") + errors
            + f'<text x="2" y="{pad - 8}">{top_rate:,.0f}/s</text>'
            + f'<text x="{width - pad - 60}" y="{pad - 8}">{escape(duration(top_p99))}</text>'
            + f'<text x="{width - pad - 30}" y="{height - 8}">{end:.0f} s</text></svg>')


def _samples_svg(outcome: LoadOutcome) -> str:
    samples = outcome.samples
    width, height, pad = 720, 160, 30
    end = samples[-1].t or 1
    top = max(s.rss for s in samples) or 1
    points = [(pad + (width - 2 * pad) * s.t / end, height - pad - (height - 2 * pad) * s.rss / top) for s in samples]
    return (f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" aria-label="server resident memory">'
            f'<line class="axis" x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}"/>'
            + _polyline(points, "rss") + f'<text x="2" y="{pad - 8}">{top / 2**20:.1f} MiB</text>'
            + f'<text x="{width - pad - 30}" y="{height - 8}">{end:.0f} s</text></svg>')
