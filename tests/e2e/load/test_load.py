"""`mcpprobe load`: real servers over stdio and HTTP, every option, and the figures checked against what
the fixture server did (tests/fixtures/load_server.py: answers concurrently, or serially, with a fixed
delay; fails every tenth call; hangs; leaks).

No verdict here depends on the machine's speed: counts are exact (the schedule decides them, not the
clock), latency bounds are one-sided or generous (a loaded 2-core machine adds milliseconds, never
subtracts them), and the run that is interrupted is interrupted once the server has seen the load.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from mcpprobe.load.histogram import RELATIVE_ERROR, Histogram, bounds_of, bucket_of
from mcpprobe.load.slo import SloSyntax, parse
from mcpprobe.load.work import interleave
from tests.conftest import (
    BIND_LOOPBACK,
    PY,
    ROOT,
    checked,
    fixture_http,
    http_server,
    interrupted,
    recorded,
    run_cli,
)

LOAD = ROOT / "tests" / "fixtures" / "load_server.py"


def server(*args: str) -> list[str]:
    return ["--", PY, str(LOAD), *args]


def load(args: list[str], *server_args: str, env: dict[str, str] | None = None) -> tuple[int, Any, str]:
    """Run `mcpprobe load --json` in-process; (exit code, document, stderr). `env` goes to the server (-e).
    A server that was started is checked gone afterwards (no orphan)."""
    pid_file = Path("/tmp") / f"mcpprobe-load-{os.getpid()}-{time.monotonic_ns()}.pid"
    given = {"LOAD_PID_FILE": str(pid_file), **(env or {})}
    options = [word for key, value in given.items() for word in ("-e", f"{key}={value}")]
    result = run_cli(["load", "--json", *options, *args, *server(*server_args)])
    doc = checked(json.loads(result.stdout)) if result.stdout.strip() else None
    if result.exit_code != 2:
        assert pid_file.exists(), "the server was never started"
    if pid_file.exists():
        pid = int(pid_file.read_text())
        pid_file.unlink()
        assert not Path(f"/proc/{pid}").exists(), "the server outlived mcpprobe load"
    return result.exit_code, doc, result.stderr


def codes(doc: Any) -> list[str]:
    return [f["code"] for f in doc["findings"]]


# ----- the histogram, the SLO syntax and the mix: pure functions -----


def test_histogram_relative_error_is_bounded_everywhere() -> None:
    for value in [*range(0, 3000), *(int(1.37 ** k) for k in range(20, 70)), 2**32 - 1]:
        low, high = bounds_of(bucket_of(value))
        assert low <= value < high
        histogram = Histogram()
        histogram.record(value)
        histogram.record(value)
        middle = histogram.quantile(0.5)
        assert middle is not None and abs(middle - value) <= max(1, value * RELATIVE_ERROR)


def test_histogram_quantiles_of_a_known_distribution() -> None:
    histogram = Histogram()
    for value in range(1, 100_001):  # 1 µs .. 100 ms, uniform
        histogram.record(value)
    for q in (0.5, 0.9, 0.99, 0.999):
        got = histogram.quantile(q)
        assert got is not None and abs(got - q * 100_000) <= q * 100_000 * RELATIVE_ERROR + 1
    assert (histogram.minimum, histogram.maximum, histogram.count) == (1, 100_000, 100_000)
    assert sum(b["count"] for b in histogram.coarse(20)) == 100_000
    assert len(histogram.counts) < 4000  # bounded, whatever the count


def test_histogram_rows_never_read_the_same() -> None:
    # A tool that answers in 203 ms give or take 1 ms (a task polled at a fixed interval): its bins
    # are ~80 µs wide, and at duration's 3 digits two rows read "< 202.9 ms".
    from mcpprobe.render.load import HISTOGRAM_ROWS, bounds, duration

    histogram = Histogram()
    for value in (202_800, 203_250, 203_300, 203_310, 204_100, 204_120):
        histogram.record(value)
    tops = [b["toUs"] for b in histogram.coarse(HISTOGRAM_ROWS)]
    assert len({duration(top) for top in tops}) < len(tops)  # what the rows read before
    labels = bounds(tops)
    assert len(set(labels)) == len(labels) and all(label.endswith(" ms") for label in labels)
    assert bounds([3_060, 3_790, 4_700]) == ["3.06 ms", "3.79 ms", "4.70 ms"]  # no decimals added when not needed
    assert duration(45_630) == "45.6 ms" and duration(45_630, 1) == "45.63 ms"


def test_samples_stay_evenly_spaced_and_bounded_however_long_the_run() -> None:
    from mcpprobe.load.sampler import KEEP, Sample, Samples

    samples, t = Samples(0.25), 0.0
    for _ in range(KEEP * 3):  # taken as the runner takes them: one every `period`, which grows
        samples.add(Sample(t, 1, 1, 1, 1, True))
        t += samples.period
    assert len(samples.kept) <= KEEP and samples.period == 8.0 and samples.kept[0].t == 0
    gaps = {round(b.t - a.t, 6) for a, b in zip(samples.kept, samples.kept[1:], strict=False)}
    assert gaps == {8.0}  # thinned five times: evenly spaced still, from the run's start


def test_a_histogram_read_back_from_its_buckets_is_the_same() -> None:
    histogram = Histogram()
    for value in (3, 255, 256, 1_000, 40_000, 40_001, 9_999_999):
        histogram.record(value)
    again = Histogram()
    for bucket in histogram.to_json()["buckets"]:
        again.add_bucket(bucket["fromUs"], bucket["toUs"], bucket["count"])
    again.bound(histogram.minimum, histogram.maximum)
    assert again.counts == histogram.counts and [again.quantile(q) for q in (0.1, 0.5, 0.9)] == [
        histogram.quantile(q) for q in (0.1, 0.5, 0.9)]
    with pytest.raises(ValueError):
        again.add_bucket(256, 257, 1)  # not a bucket of the layout ([256, 258) is)


def test_slo_syntax() -> None:
    assert parse("p99<50ms").value == pytest.approx(0.05)
    assert parse("p99.9 <= 2s").metric == "p99.9"
    assert parse("errors<0.1%").percent
    assert not parse("errors<=5").percent
    assert parse("throughput>500/s").value == 500
    for bad in ("p99<50", "latency<5ms", "p99~5ms", "errors<5ms", "throughput>5ms", ""):
        with pytest.raises(SloSyntax):
            parse(bad)


def test_weights_interleave_evenly() -> None:
    cycle = interleave([3, 1])
    assert sorted(cycle) == [0, 0, 0, 1] and cycle != [0, 0, 0, 1][::-1]
    assert [interleave([1, 2, 1]).count(i) for i in range(3)] == [1, 2, 1]


# ----- closed loop, the work, the figures -----


def test_closed_loop_counts_every_request_and_documents_them() -> None:
    code, doc, _ = load(["--call", "work", "--concurrency", "5", "--requests", "200"])
    assert code == 0, doc["findings"]
    overall = doc["overall"]
    assert overall["requests"] == overall["ok"] == 200 and overall["errors"] == 0
    assert sum(b["count"] for b in doc["histogram"]["buckets"]) == 200
    latency = overall["latencyUs"]
    assert 0 < latency["min"] <= latency["p50"] <= latency["p90"] <= latency["p99"] <= latency["max"]
    assert doc["settings"]["loop"] == "closed" and doc["settings"]["concurrency"] == 5
    assert doc["clock"]["firstAnswerMs"] >= doc["clock"]["connectMs"] > 0
    assert doc["clientCost"]["cpuSeconds"] > 0 and doc["serverSamples"], "a stdio server is sampled"
    assert doc["era"] in ("legacy", "modern")


def test_every_operation_kind_mixed_by_weight() -> None:
    args = ["--call", "work @2", "--read", "load://static", "--list", "tools", "--get-prompt", "greet name=x",
            "--ping", "@3", "--requests", "160", "--concurrency", "4", "--protocol", "legacy"]
    code, doc, _ = load(args)
    assert code == 0, doc["findings"]
    by_op = {op["operation"]: op for op in doc["operations"]}
    assert {k: v["requests"] for k, v in by_op.items()} == {
        "call work": 40, "read load://static": 20, "list tools": 20, "get-prompt greet": 20, "ping": 60}
    assert by_op["list tools"]["method"] == "tools/list" and by_op["ping"]["weight"] == 3
    assert all(op["errors"] == 0 for op in doc["operations"])


def test_modern_era_sends_the_load_with_its_envelope() -> None:
    code, doc, _ = load(["--call", "work", "--requests", "50", "--protocol", "modern"])
    assert code == 0 and doc["era"] == "modern" and doc["overall"]["ok"] == 50


def test_errors_counted_by_kind_and_rate() -> None:
    code, doc, _ = load(["--call", "flaky", "--call", "sometimes", "--requests", "200", "--concurrency", "3"])
    assert code == 0, "without an SLO, request errors are figures, not a failure of the run"
    by_op = {op["operation"]: op for op in doc["operations"]}
    assert by_op["call flaky"]["errorsByKind"] == {"rpc -32603": 10}
    assert by_op["call sometimes"]["errorsByKind"] == {"isError": 10}
    assert doc["overall"]["errorsByKind"] == {"isError": 10, "rpc -32603": 10}
    assert doc["overall"]["errorRate"] == pytest.approx(0.1)


def test_a_timeout_is_counted_not_hung() -> None:
    started = time.monotonic()
    code, doc, _ = load(["--call", "hang", "--call", "work", "--requests", "6", "--concurrency", "6",
                         "--timeout", "0.5"])
    assert code == 0
    assert doc["operations"][0]["errorsByKind"] == {"timeout": 3}
    assert doc["operations"][1]["ok"] == 3
    assert doc["overall"]["latencyUs"]["max"] >= 500_000  # a timeout counts the time it took
    assert time.monotonic() - started < 30


def test_duration_bounds_a_closed_loop_and_intervals_are_rows() -> None:
    code, doc, _ = load(["--call", "work", "--duration", "1.5", "--interval", "0.5"], "--delay-ms", "5")
    assert code == 0
    assert 1.4 <= doc["clock"]["measuredSeconds"] < 10
    rows = doc["intervals"]
    assert len(rows) >= 3 and sum(r["requests"] for r in rows) == doc["overall"]["requests"]
    assert all(r["requests"] > 0 for r in rows[:-1])


# ----- open loop: the rate is kept, and latency is not hidden -----


def test_open_loop_below_capacity_measures_the_servers_delay() -> None:
    code, doc, _ = load(["--call", "work", "--rate", "20", "--duration", "3"], "--delay-ms", "20")
    assert code == 0
    assert doc["overall"]["requests"] == 60, "one request every 50 ms for 3 s, neither more nor less"
    p50 = doc["overall"]["latencyUs"]["p50"]
    assert p50 >= 19_000, p50
    assert doc["settings"]["loop"] == "open"
    # The bound above: within 10 ms of the delay on a quiet machine. On a busy one the client's own
    # scheduling delays are in every figure, so the same server measured one request at a time (a
    # closed loop, nothing ever queued or late) in the same test is the yardstick: an open loop that
    # queued, sent late or measured from the wrong moment lands far past either (the test below).
    code, closed, _ = load(["--call", "work", "--requests", "30", "--concurrency", "1"], "--delay-ms", "20")
    assert code == 0
    assert p50 <= max(30_000, closed["overall"]["latencyUs"]["p50"] + 5_000), (p50, closed["overall"]["latencyUs"])


def test_open_loop_above_capacity_shows_latency_growing() -> None:
    # A serial server answers one call per 20 ms (50/s); 200/s for 1 s is four times that. With one
    # request allowed in flight, a client that measured from when it sent (coordinated omission) would
    # report about 20 ms; from when each request was due, the queue shows: about 15 ms more per request.
    code, doc, _ = load(["--call", "work", "--rate", "200", "--duration", "1", "--concurrency", "1",
                         "--interval", "0.5"], "--delay-ms", "20", "--serial")
    assert code == 0
    overall = doc["overall"]
    assert overall["requests"] == 200
    assert overall["latencyUs"]["p50"] > 500_000, overall["latencyUs"]
    assert overall["latencyUs"]["max"] > 2_000_000
    assert "schedule-not-kept" in codes(doc)
    p99s = [r["p99Us"] for r in doc["intervals"] if r["p99Us"] is not None]
    assert p99s[-1] > p99s[0], "latency grows while the queue does"


def test_warmup_is_sent_but_not_counted() -> None:
    code, doc, _ = load(["--call", "work", "--rate", "40", "--warmup", "1", "--duration", "1", "--interval", "0.5"])
    assert code == 0
    assert doc["overall"]["requests"] == 40
    assert any(r["warmup"] for r in doc["intervals"]) and not doc["intervals"][-1]["warmup"]
    assert sum(r["requests"] for r in doc["intervals"]) == 80


# ----- SLOs -----


def test_slos_met_exit_zero() -> None:
    code, doc, _ = load(["--call", "work", "--requests", "50", "--slo", "p99<30s", "--slo", "errors<1%",
                         "--slo", "throughput>1/s"])
    assert code == 0 and [s["met"] for s in doc["slos"]] == [True, True, True]
    assert "slo-missed" not in codes(doc)


def test_slos_missed_are_findings_and_exit_one() -> None:
    code, doc, _ = load(["--call", "flaky", "--requests", "50", "--slo", "p50<1us", "--slo", "errors<=1",
                         "--slo", "throughput>100000000/s", "--slo", "max<30s"])
    assert code == 1
    assert [s["met"] for s in doc["slos"]] == [False, False, False, True]
    missed = [f for f in doc["findings"] if f["code"] == "slo-missed"]
    assert len(missed) == 3 and missed[0]["severity"] == "error"


def test_bad_slo_is_a_usage_error_before_anything_starts() -> None:
    code, doc, stderr = load(["--call", "work", "--slo", "p99<50"])
    assert code == 2 and doc is None and "a latency needs a unit" in stderr


# ----- the checks of each operation: refused, nothing sent -----


@pytest.mark.parametrize(("args", "code", "finding"), [
    (["--call", "nosuch"], 3, "not-in-catalog"),
    (["--call", "write"], 3, "not-confirmed"),
    (["--read", "load://missing"], 3, "not-in-catalog"),
    (["--get-prompt", "greet"], 3, "invalid-arguments"),
    (["--ping", "--protocol", "modern"], 3, "not-declared"),
])
def test_refused_before_any_load(args: list[str], code: int, finding: str, tmp_path: Path) -> None:
    called = tmp_path / "called"
    exit_code, doc, _ = load([*args, "--requests", "10"], env={"LOAD_MARK": str(called), "LOAD_MARK_AFTER": "1"})
    assert exit_code == code and finding in codes(doc)
    assert not called.exists(), "no tools/call may reach the server"
    assert doc["overall"] is None and doc["operations"] == []


def test_yes_calls_a_tool_not_marked_read_only() -> None:
    code, doc, _ = load(["--call", "write", "--yes", "--requests", "10"])
    assert code == 0 and doc["overall"]["ok"] == 10


def test_list_of_an_undeclared_kind_is_refused() -> None:
    result = run_cli(["load", "--json", "--list", "prompts", "--requests", "5", "--",
                      PY, str(ROOT / "tests" / "fixtures" / "fixture_server.py"), "tools-only"])
    assert result.exit_code == 3 and "not-declared" in result.codes()


@pytest.mark.parametrize(("args", "message"), [
    ([], "give the work"),
    (["--call", "work", "--connections", "2"], "is for HTTP servers"),
    (["--ping", "bogus"], "--ping takes nothing"),
    (["--call", "work @0"], "not between 1 and"),
    (["--list", "widgets"], "expects one of"),
    (["--call", "work x:=[", "--requests", "1"], "--call"),
    (["--call", "work", "--concurrency", "0"], "greater than 0"),
    (["--call", "work", "--format", "junit"], "does not apply"),
])
def test_usage_errors(args: list[str], message: str) -> None:
    result = run_cli(["load", *args, *server()])
    assert result.exit_code == 2 and message in result.stderr


# ----- over HTTP: several sessions -----


def test_connections_are_sessions_of_their_own(tmp_path: Path) -> None:
    record = tmp_path / "record"
    with fixture_http("full", env={"FIXTURE_RECORD": str(record)}) as url:
        result = run_cli(["load", "--json", "--list", "tools", "--requests", "60", "--concurrency", "6",
                          "--connections", "3", "--protocol", "legacy", url])
    assert result.exit_code == 0, result.stderr
    assert result.json["overall"]["ok"] == 60 and result.json["transport"] == "http"
    methods = recorded(record)
    assert methods.count("initialize") == 3 and methods.count("tools/list") == 60


def test_a_named_server_is_labelled_by_its_name_in_json_openmetrics_and_html(tmp_path: Path) -> None:
    """`load -s NAME` names the server as `probe` and `check` do: its config name (and file) in the JSON
    document, the `server` label of the metrics, the page's title; not the command that started it."""
    config = tmp_path / "servers.yaml"
    config.write_text(json.dumps({"servers": {"steady": {"command": PY, "args": [str(LOAD)]}}}))
    base = ["load", "--config", str(config), "-s", "steady", "--list", "tools", "--requests", "5"]
    document = run_cli([*base, "--json"])
    assert document.exit_code == 0, document.stderr
    assert checked(document.json)["server"] == {"name": "steady", "source": str(config)}
    metrics = run_cli([*base, "--format", "openmetrics"]).stdout
    samples = [line for line in metrics.splitlines() if line.startswith("mcpprobe_load_")]
    assert samples and all('server="steady"' in line for line in samples), samples[:3]
    page = run_cli([*base, "--format", "html"]).stdout
    assert "<title>mcpprobe load: steady</title>" in page and str(LOAD) not in page.split("</header>")[0]


# ----- the server's resources, and what the client spent -----


def test_a_server_that_leaks_memory_per_call_is_flagged() -> None:
    # An 8 s soak at 50/s with the default --interval (a row a second): the samples do not follow it.
    code, doc, _ = load(["--call", "leak", "--rate", "50", "--duration", "8"], "--leak-kib", "200")
    assert code == 0, "a leak is a warning: the run itself worked"
    leaks = [f for f in doc["findings"] if f["code"] == "server-leak"]
    assert len(leaks) == 1 and leaks[0]["detail"]["resource"] == "memory"
    assert leaks[0]["detail"]["bytesPerRequest"] > 100 * 1024 and len(doc["serverSamples"]) >= 24
    assert doc["serverSamples"][-1]["rssBytes"] > doc["serverSamples"][0]["rssBytes"] + 30 * 2**20


def test_a_server_that_does_not_leak_is_not_flagged() -> None:
    code, doc, _ = load(["--call", "work", "--rate", "50", "--duration", "8"])
    assert code == 0 and "server-leak" not in codes(doc) and len(doc["serverSamples"]) >= 24


@pytest.mark.interop
def test_server_everything_is_not_flagged(everything: Path) -> None:
    result = run_cli(["load", "--json", "--call", "get-sum a=1 b=2", "--rate", "300", "--duration", "6",
                      "--", "node", str(everything)])
    assert result.exit_code == 0, result.stderr
    doc = result.json
    assert doc["overall"]["ok"] == 1800 and "server-leak" not in result.codes()


# ----- the other formats -----


def test_openmetrics_parses() -> None:
    from prometheus_client.openmetrics.parser import text_string_to_metric_families

    result = run_cli(["load", "--format", "openmetrics", "--call", "flaky", "--requests", "20", "--slo",
                      "p99<30s", *server()])
    assert result.exit_code == 0
    families = {f.name: f for f in text_string_to_metric_families(result.stdout)}
    requests = {s.labels["operation"]: s.value for s in families["mcpprobe_load_requests"].samples}
    assert requests == {"call flaky": 20, "all": 20}
    errors = [s for s in families["mcpprobe_load_errors"].samples if s.labels["operation"] == "all"]
    assert [(s.labels["kind"], s.value) for s in errors] == [("rpc -32603", 2)]
    quantiles = {s.labels.get("quantile") for s in families["mcpprobe_load_latency_seconds"].samples}
    assert {"0.5", "0.99"} <= quantiles
    assert families["mcpprobe_load_slo_met"].samples[0].value == 1


def test_html_has_inline_svg_and_no_script() -> None:
    result = run_cli(["load", "--format", "html", "--call", "work", "--requests", "30", "--interval", "0.1",
                      *server("--delay-ms", "10")])
    assert result.exit_code == 0
    page = result.stdout
    assert page.count("<svg") >= 2 and "<script" not in page and "http://" not in page.replace(
        "http://www.w3.org", "")


def test_human_output_has_the_table_and_the_histogram() -> None:
    result = run_cli(["load", "--call", "work", "--call", "flaky", "--requests", "40", *server()])
    assert result.exit_code == 0
    out = result.stdout
    assert "call work" in out and "call flaky" in out and "p99.9" in out and "Latency" in out and "█" in out
    assert "rpc -32603 × 2" in out


# ----- Ctrl-C -----


def test_ctrl_c_reports_what_was_measured(tmp_path: Path) -> None:
    mark, pid_file = tmp_path / "mark", tmp_path / "pid"
    proc = interrupted(["load", "--json", "-e", f"LOAD_MARK={mark}", "-e", f"LOAD_PID_FILE={pid_file}", "--call",
                        "work", "--duration", "120", "--concurrency", "2", *server("--delay-ms", "2")],
                       lambda _: mark.exists(), what="the load reached the server", wait=60)
    assert mark.exists(), "the load never reached the server"
    assert proc.returncode == 130, proc.stderr
    assert "Traceback" not in proc.stderr
    doc = checked(json.loads(proc.stdout))
    assert doc["interrupted"] is True and doc["exitCode"] == 130
    assert doc["overall"]["requests"] >= 48
    assert not Path(f"/proc/{int(pid_file.read_text())}").exists(), "the server outlived the interrupted load"


# ----- over HTTP: the connections are kept -----


@contextlib.contextmanager
def counting_proxy(upstream: str) -> Iterator[tuple[str, list[int]]]:
    """A TCP forwarder on 127.0.0.1 in front of `upstream` (http://HOST:PORT/PATH); yields its own URL
    and a one-item list counting the connections it accepted."""
    parts = urlsplit(upstream)
    accepted = [0]
    listener = socket.create_server(("127.0.0.1", 0))

    def pipe(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def serve() -> None:
        with contextlib.suppress(OSError):
            while True:
                client, _ = listener.accept()
                accepted[0] += 1
                server_side = socket.create_connection((parts.hostname, parts.port))
                threading.Thread(target=pipe, args=(client, server_side), daemon=True).start()
                threading.Thread(target=pipe, args=(server_side, client), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}{parts.path}", accepted
    finally:
        listener.close()


def test_http_answers_in_event_streams_keep_their_connection(everything: Path) -> None:
    """server-everything answers each POST with an event stream that ends after the answer: read to
    its end, the connection serves the next request (before, each request opened a new one)."""
    env = {"PORT": "0", "NODE_OPTIONS": f"--require {BIND_LOOPBACK}", "BIND_LOOPBACK_ANNOUNCE": "1"}
    with http_server(["node", str(everything), "streamableHttp"], env=env) as base, \
            counting_proxy(f"{base}/mcp") as (url, accepted):
        result = run_cli(["load", "--json", "--call", "get-sum a=1 b=2", "--requests", "40", "--concurrency", "1",
                          "--protocol", "legacy", url])
    assert result.exit_code == 0, result.stderr
    assert result.json["overall"]["ok"] == 40
    assert accepted[0] < 10, f"{accepted[0]} TCP connections for 40 requests one at a time"


def test_the_live_line_fits_a_narrow_terminal_so_that_it_is_rewritten_in_place() -> None:
    """On a terminal, each tick rewrites the live line (carriage return, erase line). A line wider
    than the terminal wraps, and the carriage return then goes back only to its last row: each
    tick left a row behind on a 60-column terminal. Every version of the line is shorter than it."""
    from mcpprobe.render.load import live_line
    from tests.e2e.hostile.test_terminal_safety import run_in_pty

    code, shown = run_in_pty(["load", "--ping", "--protocol", "legacy", "--duration", "2.5", *server()],
                             env={"COLUMNS": "60"})
    assert code == 0, shown
    ticks = [piece.split("\r")[0].split("\n")[0] for piece in shown.split("\x1b[2K")[1:]]
    ticks = [tick for tick in ticks if " done" in tick]  # the last erase is followed by the report
    assert len(ticks) >= 2, shown
    assert all(len(tick) < 60 for tick in ticks), ticks
    # Wide enough, the figures keep their columns and all of them are there.
    live = {"elapsed": 4.0, "done": 26915, "rate": 7412.3, "latencyUs": {"p50": 82, "p99": 1570}, "errors": 0,
            "requests": 26915, "inFlight": 1}
    assert live_line(live, 160) == live_line(live) and live_line(live).endswith("in flight 1")
    assert live_line(live, 60) == "4.0 s  26,915 done  7,412/s  p50 82 µs  p99 1.57 ms"
