"""The exporter under a real Prometheus: the Debian package `prometheus`, started on 127.0.0.1 with
its own storage, scraping fixture servers through the exporter every 3 s (multi-target relabeling,
targets from the exporter's /sd refreshed every second), asserted through Prometheus' own query API.
3 s rather than 1 s: a stdio probe starts a Python server, which on a loaded machine can take more
than a second, and a probe cut short by its deadline would only make the waits longer."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.exporter.test_exporter import _server, _write, exporter, get
from tests.prometheus import eventually, needs_prometheus, query
from tests.prometheus import prometheus as run_prometheus

pytestmark = needs_prometheus


@contextmanager
def prometheus(tmp_path: Path, exporter_url: str) -> Iterator[str]:
    """Prometheus scraping the exporter's /probe every 3 s (multi-target relabeling, targets from its
    /sd) and its own /metrics."""
    address = exporter_url.split("://", 1)[1]
    with run_prometheus(tmp_path, [
        {"job_name": "mcp", "metrics_path": "/probe", "scrape_interval": "3s", "scrape_timeout": "3s",
         "http_sd_configs": [{"url": f"{exporter_url}/sd", "refresh_interval": "1s"}],
         "relabel_configs": [
             {"source_labels": ["__address__"], "target_label": "__param_target"},
             {"source_labels": ["__param_target"], "target_label": "instance"},
             {"target_label": "__address__", "replacement": address},
         ]},
        {"job_name": "mcpprobe-exporter", "static_configs": [{"targets": [address]}]},
    ]) as url:
        yield url


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
