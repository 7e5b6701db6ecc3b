"""A transport is used only with the revisions that define it: the legacy HTTP+SSE transport exists in
the revisions of the `initialize` handshake only (2026-07-28 defines stdio and streamable HTTP), so
over it mcpprobe never sends `server/discover` and never picks a 2026-07-28 version."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import PY, http_server, run_cli

DEMO_SSE = [PY, "-m", "mcpprobe.demo", "--sse", "0"]


def _sent(trace: Path) -> list[str]:
    return [method for method in ("server/discover", "initialize", "tools/list")
            if trace.exists() and f'"method": "{method}"' in trace.read_text().replace('":"', '": "')]


def test_auto_over_sse_sends_initialize_alone(tmp_path: Path) -> None:
    trace = tmp_path / "trace.log"
    with http_server(DEMO_SSE) as url:
        assert url.endswith("/sse")
        result = run_cli(["probe", "--json", "--trace", str(trace), url])
    assert result.exit_code == 0, result.stderr
    doc = result.json
    assert doc["transport"] == "sse" and doc["era"] == "legacy"
    assert doc["protocolVersion"] != "2026-07-28" and doc["client"]["requestedVersion"] == "2025-11-25"
    assert "HTTP+SSE transport" in doc["eraReason"] and "server/discover is not sent" in doc["eraReason"]
    assert "negotiation" not in doc and [t["phase"] for t in doc["timings"]][:2] == ["connect", "initialize"]
    sent = _sent(trace)
    assert "initialize" in sent and "server/discover" not in sent, trace.read_text()[:2000]


@pytest.mark.parametrize("protocol", ["modern", "2026-07-28"])
def test_a_modern_protocol_over_sse_is_refused_before_anything_is_sent(tmp_path: Path, protocol: str) -> None:
    trace = tmp_path / "trace.log"
    with http_server(DEMO_SSE) as url:
        result = run_cli(["probe", "--protocol", protocol, "--trace", str(trace), url])
        checked = run_cli(["check", "--json", "--protocol", protocol, url])
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert "HTTP+SSE" in result.stderr and "--transport http" in result.stderr, result.stderr
    assert _sent(trace) == [], trace.read_text()
    assert checked.exit_code == 2 and checked.json["exitCode"] == 2
