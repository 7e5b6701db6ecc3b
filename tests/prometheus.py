"""A real Prometheus for tests: the Debian package `prometheus`, started on 127.0.0.1 with its own
storage, asserted through its own query API. Without the binary the tests that use it skip."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

PROMETHEUS = shutil.which("prometheus")
needs_prometheus = pytest.mark.skipif(
    PROMETHEUS is None, reason="needs the prometheus binary (Debian: apt-get install prometheus; .ci/run does)")


def get(url: str, *, timeout: float = 60) -> tuple[int, dict[str, str], str]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url), timeout=timeout) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read().decode()


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
def prometheus(tmp_path: Path, scrape_configs: list[dict[str, Any]]) -> Iterator[str]:
    """A real Prometheus on 127.0.0.1 scraping `scrape_configs` (every second unless they say otherwise);
    its URL. Ended (and waited for) afterwards."""
    config = {"global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
              "scrape_configs": scrape_configs}
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
