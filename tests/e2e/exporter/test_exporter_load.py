"""The exporter's `load` module: a real exporter process on 127.0.0.1, scraped over HTTP, running a short
load against the load fixture server (tests/fixtures/load_server.py) over stdio.

Counts are exact (the budget decides them, not the clock): the default budget of 50 requests, the
weights of the work, one error in ten `flaky` calls. Only read-only tools are called. The budget's
bounds are refused at start when exceeded, the duration bounds a run whose requests would not, the
second scrape within the module's min_interval (60 s by default) sends nothing, and no server
outlives its probe.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from mcpprobe.exporter.settings import LOAD_REQUESTS
from tests.conftest import PY, ROOT, run_cli
from tests.e2e.exporter.test_exporter import _write, exporter, get, value

LOAD = ROOT / "tests" / "fixtures" / "load_server.py"


def _load_server(tmp_path: Path, *args: str, **env: str) -> dict[str, Any]:
    return {"command": PY, "args": [str(LOAD), *args],
            "env": {"LOAD_PID_FILE": str(tmp_path / "server.pid"), **env}}


def _gone(tmp_path: Path) -> bool:
    pid = int((tmp_path / "server.pid").read_text())
    deadline = time.monotonic() + 10
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return not Path(f"/proc/{pid}").exists()


def test_a_load_module_serves_the_figures_of_its_default_budget(tmp_path: Path) -> None:
    modules = """
modules:
  load:
    check: load
    protocol: legacy
    work: ["call work @3", "call flaky", "ping"]
    slos: ["p99<30s", "errors<1%"]
"""
    with exporter(tmp_path, {"fix": _load_server(tmp_path)}, modules) as url:
        code, _, text = get(f"{url}/probe?target=fix&module=load")
        assert code == 200, text
        assert _gone(tmp_path), "the stdio server outlived its probe"
        requests = {op: value(text, "mcpprobe_load_requests_total", operation=op)
                    for op in ("call work", "call flaky", "ping", "all")}
        assert requests == {"call work": 30, "call flaky": 10, "ping": 10, "all": LOAD_REQUESTS}
        assert value(text, "mcpprobe_load_errors_total", operation="call flaky", kind="rpc -32603") == 1
        assert value(text, "mcpprobe_load_errors_total", operation="call work") is None
        assert value(text, "mcpprobe_load_latency_seconds_count", operation="all", server="fix") == LOAD_REQUESTS
        p50 = value(text, "mcpprobe_load_latency_seconds", operation="all", quantile="0.5")
        assert p50 is not None and 0 < p50 < 30
        assert value(text, "mcpprobe_load_throughput_requests_per_second", operation="all") > 0
        assert value(text, "mcpprobe_load_slo_met", slo="p99<30s") == 1
        assert value(text, "mcpprobe_load_slo_met", slo="errors<1%") == 0
        # A missed SLO is a finding and exit 1, as for `mcpprobe load --slo`.
        assert value(text, "mcpprobe_exit_code") == 1 and value(text, "mcpprobe_up") == 1
        assert value(text, "mcpprobe_findings_by_code", code="slo-missed") == 1
        assert value(text, "mcpprobe_load_server_resident_bytes") > 0
        # The module's min_interval (60 s unless set): the next scrape sends nothing.
        started = (tmp_path / "server.pid").stat().st_mtime_ns
        _, _, again = get(f"{url}/probe?target=fix&module=load")
        assert value(again, "mcpprobe_result_cached") == 1
        assert value(again, "mcpprobe_load_requests_total", operation="all") == LOAD_REQUESTS
        assert (tmp_path / "server.pid").stat().st_mtime_ns == started, "a cached answer started a server"
        _, _, own = get(f"{url}/metrics")
        assert value(own, "mcpprobe_exporter_probes_total", target="fix", module="load") == 1


def test_a_load_module_calls_only_read_only_tools(tmp_path: Path) -> None:
    called = tmp_path / "called"
    modules = "modules:\n  write: {check: load, work: [\"call write\"]}\n"
    server = _load_server(tmp_path, LOAD_MARK=str(called), LOAD_MARK_AFTER="1")
    with exporter(tmp_path, {"fix": server}, modules) as url:
        _, _, text = get(f"{url}/probe?target=fix&module=write")
    assert value(text, "mcpprobe_exit_code") == 3
    assert value(text, "mcpprobe_findings_by_code", code="not-confirmed") == 1
    assert value(text, "mcpprobe_load_requests_total", operation="all") is None
    assert not called.exists(), "no tools/call may reach the server"


def test_the_duration_bounds_a_load_module_within_its_deadline(tmp_path: Path) -> None:
    # 20 ms a call, one at a time, 10,000 requests allowed: the 1 s duration ends the run, not the count.
    modules = """
modules:
  slow: {check: load, work: ["call work"], requests: 10000, duration: 1, concurrency: 1, timeout: 8}
"""
    with exporter(tmp_path, {"fix": _load_server(tmp_path, "--delay-ms", "20", "--serial")}, modules) as url:
        started = time.monotonic()
        _, _, text = get(f"{url}/probe?target=fix&module=slow")
        took = time.monotonic() - started
    done = value(text, "mcpprobe_load_requests_total", operation="all")
    assert value(text, "mcpprobe_exit_code") == 0, text
    assert done is not None and 1 <= done <= 50, done  # at most 1 s / 20 ms, plus the one in flight
    assert took < 8, "the run must end within the module's timeout"
    assert _gone(tmp_path)


def test_an_open_loop_load_module(tmp_path: Path) -> None:
    modules = "modules:\n  paced: {check: load, work: [\"call work\"], rate: 20, duration: 1, requests: 1000}\n"
    with exporter(tmp_path, {"fix": _load_server(tmp_path, "--delay-ms", "5")}, modules) as url:
        _, _, text = get(f"{url}/probe?target=fix&module=paced")
    assert value(text, "mcpprobe_load_requests_total", operation="all") == 20, "20/s for 1 s: the schedule's count"
    assert value(text, "mcpprobe_exit_code") == 0


@pytest.mark.parametrize(("module", "words"), [
    ("{check: load}", "needs work"),
    ("{check: load, work: [\"shell rm\"]}", "begins with one of"),
    ("{check: load, work: [\"call work @0\"]}", "not between 1 and"),
    ("{check: load, work: [\"ping now\"]}", "ping takes nothing"),
    ("{check: load, work: [\"call work\"], requests: 20000}", "requests is at most 10000"),
    ("{check: load, work: [\"call work\"], duration: 120}", "duration is at most 60"),
    ("{check: load, work: [\"call work\"], concurrency: 500}", "concurrency is at most 64"),
    ("{check: load, work: [\"call work\"], rate: 5000}", "rate is at most 1000"),
    ("{check: load, work: [\"call work\"], duration: 5, timeout: 5}", "leaves no time to connect"),
    ("{check: load, work: [\"call work\"], slos: [\"p99<50\"]}", "a latency needs a unit"),
    ("{check: probe, requests: 5}", "requests applies to check 'load' only"),
])
def test_a_load_module_outside_its_bounds_is_a_usage_error(tmp_path: Path, module: str, words: str) -> None:
    config = _write(tmp_path / "servers.json", {"fix": _load_server(tmp_path)})
    (tmp_path / "exporter.yaml").write_text(f"modules:\n  m: {module}\n", encoding="utf-8")
    done = run_cli(["exporter", "--config", str(config), "--exporter-config", str(tmp_path / "exporter.yaml")])
    assert done.exit_code == 2 and words in done.stderr, done.stderr
    assert not (tmp_path / "server.pid").exists()
