"""`load --metrics-listen`: a run's figures as OpenMetrics while it runs. Two real workers against one
HTTP fixture, scraped by a real Prometheus: histogram_quantile over the sum of their buckets agrees,
to a bucket, with `load --merge` of their documents."""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from mcpprobe.load.live import BOUNDARIES
from tests.conftest import PY, ROOT, checked, fixture_http, run_cli
from tests.prometheus import eventually, get, needs_prometheus, prometheus, query

LISTENING = re.compile(r"live metrics on http://([^/]+)/metrics")


class Worker:
    """`mcpprobe load --json --metrics-listen 127.0.0.1:0` as a process; its address read from stderr."""

    def __init__(self, url: str, out: Path, *extra: str) -> None:
        argv = [PY, "-m", "mcpprobe", "load", "--json", "--list", "tools", "--metrics-listen", "127.0.0.1:0",
                "--protocol", "legacy", *extra, url]
        self.out = out
        self.process = subprocess.Popen(argv, stdout=out.open("w"), stderr=subprocess.PIPE, text=True, cwd=ROOT)
        self.stderr: list[str] = []
        self.address: str | None = None
        self._found = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr.append(line)
            if (match := LISTENING.search(line)) and self.address is None:
                self.address = match.group(1)
                self._found.set()
        self._found.set()

    def listening(self) -> str:
        assert self._found.wait(60) and self.address is not None, "".join(self.stderr)
        return self.address

    def finished(self) -> dict[str, Any]:
        assert self.process.wait(120) == 0, "".join(self.stderr)
        return checked(json.loads(self.out.read_text()))


def _live_bucket(micros: float) -> int:
    """Which live bucket a latency falls in (its index among BOUNDARIES, len for +Inf)."""
    return next((i for i, edge in enumerate(BOUNDARIES) if micros < edge), len(BOUNDARIES))


def test_the_endpoint_serves_openmetrics_during_the_run_and_the_last_figures_until_scraped(tmp_path: Path) -> None:
    from prometheus_client.openmetrics.parser import text_string_to_metric_families

    with fixture_http("full") as url:
        worker = Worker(url, tmp_path / "run.json", "--duration", "2", "--run-id", "r1", "--worker", "w1",
                        "--metrics-linger", "60")
        address = worker.listening()
        assert get(f"http://{address}/other")[0] == 404
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # the run ends, then holds its last figures for a scrape
            code, headers, text = get(f"http://{address}/metrics")
            assert code == 200 and headers["content-type"].startswith("application/openmetrics-text")
            families = {f.name: f for f in text_string_to_metric_families(text)}
            if families["mcpprobe_load_live_finished"].samples[0].value == 1:
                break
            time.sleep(0.2)
        doc = worker.finished()
    requests = families["mcpprobe_load_live_requests"].samples[0]
    assert requests.labels == {"run": "r1", "worker": "w1", "operation": "list tools"}
    assert requests.value == doc["overall"]["requests"] > 0
    buckets = [s for s in families["mcpprobe_load_live_latency_seconds"].samples if s.name.endswith("_bucket")]
    assert len(buckets) == len(BOUNDARIES) + 1 and buckets[-1].value == doc["overall"]["requests"]
    assert [s.value for s in buckets] == sorted(s.value for s in buckets)  # cumulative


def test_a_worker_that_is_never_scraped_ends_after_the_linger(tmp_path: Path) -> None:
    started = time.monotonic()
    with fixture_http("full") as url:
        worker = Worker(url, tmp_path / "run.json", "--requests", "5", "--metrics-linger", "1")
        worker.listening()
        assert worker.finished()["overall"]["requests"] == 5
    assert time.monotonic() - started < 60


def test_bad_addresses_are_usage_errors_before_anything_starts() -> None:
    for value in ("nowhere", "127.0.0.1:99999", "127.0.0.1:x", "192.0.2.1:0"):  # the last: not this machine's
        result = run_cli(["load", "--list", "tools", "--metrics-listen", value, "--", PY, "-c", "pass"])
        assert result.exit_code == 2 and "--metrics-listen" in result.stderr, (value, result.stderr)


@needs_prometheus
def test_prometheus_over_two_workers_agrees_with_the_merged_document(tmp_path: Path) -> None:
    targets = tmp_path / "targets.json"
    targets.write_text("[]")
    scrape = [{"job_name": "load", "file_sd_configs": [{"files": [str(targets)], "refresh_interval": "1s"}]}]
    with fixture_http("full") as url, prometheus(tmp_path, scrape) as prom:
        workers = [Worker(url, tmp_path / f"w{i}.json", "--duration", "4", "--concurrency", "2", "--run-id", "t",
                          "--worker", f"w{i}", "--metrics-linger", "90") for i in range(2)]
        targets.write_text(json.dumps([{"targets": [w.listening() for w in workers]}]))
        documents = [w.finished() for w in workers]  # each ends once Prometheus scraped its last figures
        files = [str(w.out) for w in workers]
        merged = run_cli(["load", "--merge", "--json", *files]).json
        total = merged["overall"]["requests"]
        assert total == sum(d["overall"]["requests"] for d in documents) > 0
        final = 'sum(max_over_time(mcpprobe_load_live_requests_total{run="t"}[10m]))'
        eventually(prom, final, lambda r: bool(r) and float(r[0]["value"][1]) == total)
        for key, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99)):
            expr = (f"histogram_quantile({q}, sum by (le) "
                    '(max_over_time(mcpprobe_load_live_latency_seconds_bucket{run="t"}[10m])))')
            (result,) = query(prom, expr)
            from_prometheus = float(result["value"][1]) * 1e6
            from_merge = merged["overall"]["latencyUs"][key]
            assert abs(_live_bucket(from_prometheus) - _live_bucket(from_merge)) <= 1, (key, from_prometheus,
                                                                                        from_merge)


@pytest.mark.parametrize("value", ["--run-id", "--worker"])
def test_labels_with_any_text_stay_valid_openmetrics(value: str, tmp_path: Path) -> None:
    from prometheus_client.openmetrics.parser import text_string_to_metric_families

    with fixture_http("full") as url:
        worker = Worker(url, tmp_path / "run.json", "--requests", "3", value, 'a"b\\c\nd', "--metrics-linger", "30")
        address = worker.listening()
        text = get(f"http://{address}/metrics")[2]
        worker.process.terminate()
        worker.process.wait(60)
    families = {f.name: f for f in text_string_to_metric_families(text)}
    labels = families["mcpprobe_load_live_finished"].samples[0].labels
    assert 'a"b\\c\nd' in labels.values()
