"""`mcpprobe check` and the official suite's server mode on a server of another SDK, and the same
server's verdicts over stdio and over streamable HTTP.

FastMCP 4.2.3 (the `fastmcp` package, tests/fixtures/fastmcp_server.py) speaks 2025-11-25 and
2026-07-28. For each version, the suite scenarios that need none of the suite's own fixture tools run
against it over streamable HTTP with the suite release that scores them (mcpprobe/check/scenarios.py
says which), and so does `mcpprobe check --unsafe`; the verdicts must be equal, scenario by scenario,
but where DIFFERENT gives the reason (docs/commands/check.md, "Coverage of the conformance suite").
server-everything's agreement over HTTP is tests/interop/test_check_conformance.py's.

Then stdio against HTTP: every check the catalogue does not tie to a transport gives the same status
over stdio as over streamable HTTP, on FastMCP 4.2.3 and on server-everything, at the revision each
negotiates; what the suite cannot judge over stdio is judged there alike.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import (
    BIND_LOOPBACK,
    CONFORMANCE_VERSION,
    ROOT,
    checked,
    http_server,
    python_server_env,
    run_cli,
)

from mcpprobe.check.catalogue import BY_ID, TRANSPORTS
from mcpprobe.check.scenarios import SCENARIOS
from tests.interop.test_real_servers import fastmcp_http

pytestmark = [pytest.mark.conformance, pytest.mark.interop]

FASTMCP_SERVER = ROOT / "tests" / "fixtures" / "fastmcp_server.py"
ROWS = {row.name: row for row in SCENARIOS}
JUDGED = {
    "2025-11-25": ("server-initialize", "ping", "logging-set-level", "tools-list", "resources-list", "prompts-list",
                   "resources-subscribe", "resources-unsubscribe", "dns-rebinding-protection",
                   "server-session-lifecycle"),
    "2026-07-28": ("tools-list", "resources-list", "prompts-list", "dns-rebinding-protection", "caching",
                   "http-header-validation", "sep-2164-resource-not-found"),
}
# Where the two differ on this server, and why: never a false alarm of mcpprobe's.
UNDECLARED = ("the suite sends resources/subscribe to a server that did not declare `resources.subscribe` and "
              "fails its -32601; 2025-11-25 (server/resources, Capabilities) makes `subscribe` optional and "
              "basic/lifecycle says both parties MUST 'only use capabilities that were successfully negotiated': "
              "mcpprobe sends nothing and says `n/a`")
DIFFERENT = {
    ("2025-11-25", "resources-subscribe"): UNDECLARED,
    ("2025-11-25", "resources-unsubscribe"): UNDECLARED,
}
# What both say of FastMCP 4.2.3: it validates neither Origin nor Host, which 2025-11-25 words as "If the
# `Origin` header is present and invalid, servers **MUST** respond with HTTP 403 Forbidden" (basic/
# transports, Security Warning), and 2026-07-28 the same (basic/transports/streamable-http).
FAILED = {("2025-11-25", "dns-rebinding-protection"), ("2026-07-28", "dns-rebinding-protection")}


def _suite(scenario: str, version: str, release, prerelease):
    row = ROWS[scenario]
    return release if version in row.versions.get(CONFORMANCE_VERSION, ()) else prerelease


def _suite_says(suite, url: str, scenario: str, version: str, out: Path) -> tuple[str, list[dict]]:
    run = suite.server(url, scenario, out, spec_version=version)
    assert run.checks, f"{scenario}: the suite recorded no checks (exit {run.exit_code}): {run.output[-2000:]}"
    return ("pass" if all(c["status"] == "SUCCESS" for c in run.checks) else "fail"), run.checks


def _ours(doc: dict, scenario: str) -> str:
    found = {c["id"]: c["status"] for c in doc["checks"]}
    found["handshake"] = "pass" if doc.get("protocolVersion") and not doc.get("error") else "fail"
    statuses = [found[i] for i in (ROWS[scenario].checks or ("handshake",))]
    assert "error" not in statuses, (scenario, statuses)
    if all(s in ("n/a", "skipped") for s in statuses):
        return "n/a"
    return "pass" if all(s in ("pass", "n/a", "skipped") for s in statuses) else "fail"


def _check(target: list[str], protocol: str) -> tuple[int, dict]:
    result = run_cli(["check", "--json", "--level", "may", "--unsafe", "--connect-timeout", "60", "--timeout", "60",
                      "--protocol", protocol, *target])
    return result.exit_code, checked(json.loads(result.stdout))


@pytest.mark.parametrize("version", sorted(JUDGED))
def test_check_and_the_suite_agree_on_fastmcp4_over_http(version: str, conformance, conformance_prerelease,
                                                         tmp_path: Path) -> None:
    python = python_server_env("fastmcp-4.2.3")
    protocol = "modern" if version == "2026-07-28" else version
    with fastmcp_http(python, "http") as url:
        _, doc = _check([url], protocol)
    assert doc["protocolVersion"] == version
    table = {}
    for scenario in JUDGED[version]:
        with fastmcp_http(python, "http") as url:  # a fresh server: the suite leaves sessions behind
            suite = _suite(scenario, version, conformance, conformance_prerelease)
            verdict, checks = _suite_says(suite, url, scenario, version, tmp_path / version / scenario)
        table[scenario] = (verdict, _ours(doc, scenario), checks)
    for scenario, (suite, ours, checks) in table.items():
        if (version, scenario) in DIFFERENT:
            assert (suite, ours) == ("fail", "n/a"), (scenario, suite, ours, checks)
        else:
            assert suite == ours, (scenario, suite, ours, checks)
            assert suite == ("fail" if (version, scenario) in FAILED else "pass"), (scenario, checks)


def _independent(doc: dict) -> dict[str, str]:
    """The statuses of the checks the catalogue ties to no transport (`Check.transports` is all of them)."""
    return {c["id"]: c["status"] for c in doc["checks"]
            if c["id"] in BY_ID and BY_ID[c["id"]].transports == TRANSPORTS}


def test_fastmcp4_says_the_same_over_stdio_and_http() -> None:
    python = python_server_env("fastmcp-4.2.3")
    _, over_stdio = _check(["--", str(python), str(FASTMCP_SERVER), "stdio"], "auto")
    with fastmcp_http(python, "http") as url:
        _, over_http = _check([url], "auto")
    assert over_stdio["protocolVersion"] == over_http["protocolVersion"] == "2026-07-28"
    stdio, http = _independent(over_stdio), _independent(over_http)
    assert stdio and stdio == http


def test_server_everything_says_the_same_over_stdio_and_http(everything: Path) -> None:
    _, over_stdio = _check(["--", "node", str(everything)], "auto")
    env = {"PORT": "0", "NODE_OPTIONS": f"--require {BIND_LOOPBACK}", "BIND_LOOPBACK_ANNOUNCE": "1"}
    with http_server(["node", str(everything), "streamableHttp"], env=env) as base:
        _, over_http = _check([f"{base}/mcp"], "auto")
    assert over_stdio["protocolVersion"] == over_http["protocolVersion"]
    stdio, http = _independent(over_stdio), _independent(over_http)
    assert stdio and stdio == http
