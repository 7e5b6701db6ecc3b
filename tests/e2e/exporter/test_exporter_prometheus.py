"""The exporter under a real Prometheus: the Debian package `prometheus`, started on 127.0.0.1 with
its own storage, scraping fixture servers through the exporter every 3 s (multi-target relabeling,
targets from the exporter's /sd refreshed every second), asserted through Prometheus' own query API.
3 s rather than 1 s: a stdio probe starts a Python server, which on a loaded machine can take more
than a second, and a probe cut short by its deadline would only make the waits longer."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.exporter.test_exporter import _server, _write, exporter, get

PROMETHEUS = shutil.which("prometheus")
pytestmark = pytest.mark.skipif(
    PROMETHEUS is None, reason="needs the prometheus binary (Debian: apt-get install prometheus; .ci/run does)")


def _listening_on(log: Path) -> str | None:
    """The address Prometheus says it bound (it logs the real one when given port 0), or None yet."""
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("msg") == "Listening on" and entry.get("component") == "web":
            return str(entry["address"])
    return None


@contextmanager
def prometheus(tmp_path: Path, exporter_url: str) -> Iterator[str]:
    address = exporter_url.split("://", 1)[1]
    config = {
        "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
        "scrape_configs": [
            {"job_name": "mcp", "metrics_path": "/probe", "scrape_interval": "3s", "scrape_timeout": "3s",
             "http_sd_configs": [{"url": f"{exporter_url}/sd", "refresh_interval": "1s"}],
             "relabel_configs": [
                 {"source_labels": ["__address__"], "target_label": "__param_target"},
                 {"source_labels": ["__param_target"], "target_label": "instance"},
                 {"target_label": "__address__", "replacement": address},
             ]},
            {"job_name": "mcpprobe-exporter", "static_configs": [{"targets": [address]}]},
        ],
    }
    (tmp_path / "prometheus.yml").write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML
    # Port 0, and the port read back from Prometheus' log: a port picked here and bound there later
    # could be taken in between by another test worker.
    log_path = tmp_path / "prometheus.log"
    log = log_path.open("w")
    proc = subprocess.Popen([str(PROMETHEUS), f"--config.file={tmp_path / 'prometheus.yml'}",
                             "--web.listen-address=127.0.0.1:0", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                             "--log.level=info", "--log.format=json"],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = ""
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert proc.poll() is None, log_path.read_text()
            if not url and (address := _listening_on(log_path)):
                url = f"http://{address}"
            if url:
                try:
                    if get(f"{url}/-/ready", timeout=5)[0] == 200:
                        break
                except OSError:
                    pass
            time.sleep(0.2)
        else:
            pytest.fail("prometheus did not become ready: " + log_path.read_text()[-2000:])
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        log.close()


def query(url: str, expr: str) -> list[dict[str, Any]]:
    code, _, body = get(f"{url}/api/v1/query?" + urllib.parse.urlencode({"query": expr}), timeout=20)
    assert code == 200, body
    data = json.loads(body)
    assert data["status"] == "success", data
    return data["data"]["result"]


def eventually(url: str, expr: str, check: Any, seconds: float = 90) -> list[dict[str, Any]]:
    """Poll the query until `check(result)` holds; bounded, generous for a loaded machine."""
    deadline = time.monotonic() + seconds
    result: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        result = query(url, expr)
        if check(result):
            return result
        time.sleep(0.5)
    pytest.fail(f"{expr}: still {result} after {seconds} s")


def by_server(result: list[dict[str, Any]]) -> dict[str, float]:
    return {r["metric"].get("server", ""): float(r["value"][1]) for r in result}


def test_prometheus_scrapes_probes_and_forgets_removed_targets(tmp_path: Path) -> None:
    servers = {"full": _server("full"), "broken": _server("crash-on-start"), "gone": _server("tools-only")}
    with exporter(tmp_path, servers, "min_interval: 0\ntimeout_margin: 0.2\n") as exporter_url, \
            prometheus(tmp_path, exporter_url) as url:
        up = eventually(url, "mcpprobe_up", lambda r: by_server(r).get("full") == 1 and "broken" in by_server(r)
                        and by_server(r).get("gone") == 1)
        assert by_server(up)["broken"] == 0
        assert {r["metric"]["instance"] for r in up} == {"full", "broken", "gone"}
        assert all(r["metric"]["job"] == "mcp" for r in up)
        stage = eventually(url, 'mcpprobe_stage{server="broken"} == 1', lambda r: len(r) == 1)
        assert stage[0]["metric"]["stage"] == "connect"
        exit_code = eventually(url, 'mcpprobe_exit_code{server="broken"}', lambda r: len(r) == 1)
        assert float(exit_code[0]["value"][1]) == 4
        items = eventually(url, 'mcpprobe_items{server="full"}', lambda r: len(r) == 4)
        assert {r["metric"]["kind"]: float(r["value"][1]) for r in items}["tools"] == 2
        # The exporter's own metrics, scraped as a second job.
        eventually(url, 'mcpprobe_exporter_probes_total{target="broken"} > 1', lambda r: len(r) == 1)
        eventually(url, 'mcpprobe_exporter_probes_failed_total{target="broken"} > 0', lambda r: len(r) == 1)

        # Every query of the documented Grafana dashboard is accepted and finds series.
        dashboard = json.loads((Path(__file__).parents[3] / "docs" / "grafana-dashboard.json").read_text())
        for panel in dashboard["panels"]:
            for target in panel["targets"]:
                expr = target["expr"].replace("$job", ".*").replace("$instance", ".*")
                query(url, expr)

        _write(tmp_path / "servers.json", {"full": _server("full"), "broken": _server("crash-on-start")})
        assert get(f"{exporter_url}/-/reload", method="POST")[0] == 200
        eventually(url, 'mcpprobe_up{server="gone"}', lambda r: r == [])
        eventually(url, 'up{job="mcp"}', lambda r: {x["metric"]["instance"] for x in r} == {"full", "broken"})
        eventually(url, "mcpprobe_up", lambda r: by_server(r) == {"full": 1.0, "broken": 0.0})


PROMTOOL = shutil.which("promtool")


def _yaml_blocks(page: str) -> list[str]:
    return [block.split("```", 1)[0] for block in page.split("```yaml\n")[1:]]


@pytest.mark.skipif(PROMTOOL is None, reason="needs promtool (Debian: apt-get install prometheus)")
def test_documented_rules_and_scrape_configs_are_valid(tmp_path: Path) -> None:
    """docs/exporter.md's alerting rules and scrape configs, checked by Prometheus' own promtool."""
    import yaml

    page = (Path(__file__).parents[3] / "docs" / "exporter.md").read_text(encoding="utf-8")
    blocks = [yaml.safe_load(b) for b in _yaml_blocks(page) if b.startswith(("groups:", "scrape_configs:"))]
    rules = next(b for b in blocks if isinstance(b, dict) and "groups" in b)
    (tmp_path / "rules.yml").write_text(json.dumps(rules))
    done = subprocess.run([str(PROMTOOL), "check", "rules", str(tmp_path / "rules.yml")], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    scrape = next(b for b in blocks if isinstance(b, dict) and "scrape_configs" in b)
    (tmp_path / "prometheus.yml").write_text(json.dumps(scrape))
    done = subprocess.run([str(PROMTOOL), "check", "config", "--syntax-only", str(tmp_path / "prometheus.yml")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
