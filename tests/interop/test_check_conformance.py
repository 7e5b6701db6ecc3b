"""`mcpprobe check` agrees with the official conformance suite's server mode.

The suite's server scenarios that need no fixture tools of its own (the others ask for tools,
resources and prompts named `test_*` that only its reference server has) run against
server-everything over streamable HTTP, and so does `mcpprobe check --unsafe`; for each scenario
the suite's verdict (every check SUCCESS, or not) must be mcpprobe's verdict on the checks that
judge the same rule. The table is docs/commands/check.md's "Agreement with the conformance suite".
The suite acts only as a client here (it listens on nothing), and server-everything is bound to
127.0.0.1 by the loopback preload.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import BIND_LOOPBACK, checked, http_server, run_cli

pytestmark = [pytest.mark.conformance, pytest.mark.interop]

# suite scenario -> the mcpprobe check ids that judge the same rule ("handshake": the connection itself)
AGREEMENT: dict[str, tuple[str, ...]] = {
    "server-initialize": ("handshake",),
    "ping": ("lifecycle.ping",),
    "logging-set-level": ("logging.set-level",),
    "tools-list": ("listing.complete", "tools.input-schema"),
    "resources-list": ("listing.complete",),
    "resources-subscribe": ("resources.subscribe",),
    "resources-unsubscribe": ("resources.subscribe",),
    "prompts-list": ("listing.complete",),
    "dns-rebinding-protection": ("http.origin",),
    "server-sse-multiple-streams": ("http.concurrent-requests",),
}
# What both say of server-everything 2026.8.31: it does not validate Origin (nor Host), which
# 2025-11-25 words as "If the `Origin` header is present and invalid, servers **MUST** respond with
# HTTP 403 Forbidden" (basic/transports, Security Warning). Every other scenario passes.
EXPECTED = {scenario: "pass" for scenario in AGREEMENT} | {"dns-rebinding-protection": "fail"}


def _suite_verdict(conformance, url: str, scenario: str, out: Path) -> tuple[str, list[dict]]:
    run = conformance.server(url, scenario, out)
    assert run.checks, f"{scenario}: the suite recorded no checks (exit {run.exit_code}): {run.output[-2000:]}"
    return ("pass" if all(c["status"] == "SUCCESS" for c in run.checks) else "fail"), run.checks


def _mcpprobe_verdict(doc: dict, ids: tuple[str, ...]) -> str:
    found = {c["id"]: c["status"] for c in doc["checks"]}
    found["handshake"] = "pass" if doc.get("protocolVersion") and not doc.get("error") else "fail"
    verdicts = [found[i] for i in ids]
    assert "error" not in verdicts and all(v in ("pass", "fail", "warn") for v in verdicts), verdicts
    return "pass" if all(v == "pass" for v in verdicts) else "fail"


def test_check_agrees_with_the_conformance_suite(conformance, everything: Path, tmp_path: Path) -> None:
    env = {"PORT": "0", "NODE_OPTIONS": f"--require {BIND_LOOPBACK}", "BIND_LOOPBACK_ANNOUNCE": "1"}
    with http_server(["node", str(everything), "streamableHttp"], env=env) as base:
        url = f"{base}/mcp"
        result = run_cli(["check", "--json", "--level", "may", "--unsafe", "--protocol", "2025-11-25",
                          "--timeout", "30", url])
        doc = checked(json.loads(result.stdout))
        table = {}
        for scenario, ids in AGREEMENT.items():
            suite, checks = _suite_verdict(conformance, url, scenario, tmp_path / scenario)
            table[scenario] = (suite, _mcpprobe_verdict(doc, ids), checks)
    disagreements = {s: (suite, ours) for s, (suite, ours, _) in table.items() if suite != ours}
    assert disagreements == {}, {s: table[s][2] for s in disagreements}
    assert {s: suite for s, (suite, _, _) in table.items()} == EXPECTED
