"""`--protocol auto` against the SDK's own `mode="auto"` (mcp.client._probe.negotiate_auto).

Both clients meet the same real server processes, one for each way real servers answer the
`server/discover` that comes before `initialize`, and must settle on the same era and version
wherever the SDK connects at all. Where the SDK cannot connect, mcpprobe says why.

Slow starts are explicit (FIXTURE_START_DELAY, `sleep`) and far longer than mcpprobe's
--discover-timeout here, and each test checks from the server's side that the slow path really
ran (the initialize mcpprobe sent while discover was unanswered), so no result rests on timing luck.
"""

from __future__ import annotations

import shlex
from typing import Any

import anyio
import pytest

from tests.conftest import PY, ROOT, fixture_cmd, fixture_http, http_server, recorded, run_cli

SDK_SERVER = ROOT / "tests" / "fixtures" / "sdk_server.py"
MODERN = ("modern", "2026-07-28")
LEGACY = ("legacy", "2025-11-25")


def sdk_auto(server: Any, *, discover_timeout: float | None = None, monkeypatch: Any = None) -> tuple[str, str]:
    """(era, version) the SDK's mode="auto" settles on; raises what the SDK raises."""
    import mcp
    import mcp.client.session

    if discover_timeout is not None:
        # The SDK waits 10 s for server/discover; its own knob, shortened for silent servers.
        monkeypatch.setattr(mcp.client.session, "DISCOVER_TIMEOUT_SECONDS", discover_timeout)

    async def connect() -> tuple[str, str]:
        async with mcp.Client(server, mode="auto", cache=None) as client:
            era = "modern" if client.session.discover_result is not None else "legacy"
            return era, client.protocol_version

    return anyio.run(connect)


def sdk_error_code(server: Any) -> int:
    """The JSON-RPC code of the MCPError the SDK's mode="auto" connect fails with."""
    from mcp.shared.exceptions import MCPError

    with pytest.raises(BaseExceptionGroup) as raised:
        sdk_auto(server)
    matched = raised.value.subgroup(lambda exc: isinstance(exc, MCPError))
    assert matched is not None, raised.value
    errors = []

    def walk(group: BaseException) -> None:
        for exc in getattr(group, "exceptions", [group]):
            walk(exc) if isinstance(exc, BaseExceptionGroup) else errors.append(exc)

    walk(matched)
    return errors[0].code


def stdio(argv: list[str], env: dict[str, str] | None = None) -> Any:
    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(command=argv[0], args=argv[1:], env=env)


def probe(argv: list[str], *extra: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    env_args = [a for k, v in (env or {}).items() for a in ("--env", f"{k}={v}")]
    result = run_cli(["probe", "--json", *env_args, *extra, "--", *argv])
    return result.exit_code, result.json


def era_of(doc: dict[str, Any]) -> tuple[str, str]:
    return doc["era"], doc["protocolVersion"]


def codes(doc: dict[str, Any]) -> list[str]:
    return [f["code"] for f in doc["findings"]]


# scenario, what both must settle on, mcpprobe's extra options, the SDK's discover wait (None: its 10 s)
AGREE = [
    ("modern", MODERN, [], None),  # answers discover
    ("full", LEGACY, [], None),  # -32601 to discover
    ("modern-retry", MODERN, [], None),  # -32022 naming a mutual version, then a result
    ("discover-empty", LEGACY, [], None),  # {}: no DiscoverResult
    ("discover-handshake-only", LEGACY, [], None),  # supportedVersions lists handshake versions only
    ("discover-refused-handshake", LEGACY, [], None),  # -32022 naming handshake versions
    ("legacy-silent-discover", LEGACY, ["--discover-timeout", "0.5"], 1.0),  # never answers unknown requests
    ("modern-init-refused", MODERN, ["--discover-timeout", "0.5"], 1.0),  # -32022 to initialize: re-probe
]


@pytest.mark.parametrize("scenario, expected, extra, sdk_wait", AGREE, ids=[row[0] for row in AGREE])
def test_same_era_as_the_sdk_over_stdio(scenario, expected, extra, sdk_wait, monkeypatch):
    assert sdk_auto(stdio(fixture_cmd(scenario)), discover_timeout=sdk_wait, monkeypatch=monkeypatch) == expected
    code, doc = probe(fixture_cmd(scenario), *extra)
    assert code == 0, doc
    assert era_of(doc) == expected
    assert doc["eraReason"]


def test_same_era_as_the_sdk_with_a_real_sdk_server():
    assert sdk_auto(stdio([PY, str(SDK_SERVER)])) == MODERN
    code, doc = probe([PY, str(SDK_SERVER)])
    assert code == 0 and era_of(doc) == MODERN


def test_disjoint_modern_versions_fail_in_both():
    assert sdk_error_code(stdio(fixture_cmd("discover-refused-disjoint"))) == -32022
    code, doc = probe(fixture_cmd("discover-refused-disjoint"))
    assert code == 5
    assert doc["error"]["code"] == "unsupported-version"
    assert "2099-01-01" in doc["error"]["message"]


@pytest.mark.parametrize("scenario, expected", [("modern", MODERN), ("legacy-http-400", LEGACY),
                                                ("legacy-http-503", LEGACY)])
def test_same_era_as_the_sdk_over_http(scenario, expected):
    with fixture_http(scenario) as url:
        assert sdk_auto(url) == expected
        result = run_cli(["probe", "--json", url])
    doc = result.json
    assert result.exit_code == 0 and era_of(doc) == expected


def test_http_400_to_discover_is_its_answer_at_once():
    """FastMCP 2.x: HTTP 400 with a JSON-RPC error whose id is "server-error", not ours."""
    with fixture_http("legacy-http-400") as url:
        # A wait for an answer that already came would cost the whole --discover-timeout.
        result = run_cli(["probe", "--json", "--discover-timeout", "30", url])
    doc = result.json
    assert result.exit_code == 0 and era_of(doc) == LEGACY
    assert doc["eraReason"].startswith("server/discover was answered with error -32600")
    assert "protocol-violation" not in codes(doc)
    assert "era-fallback" not in codes(doc)
    discover = [t for t in doc["timings"] if t["phase"] == "discover"]
    assert discover and not discover[0].get("unanswered")


def test_slow_modern_server_is_adopted_from_its_late_discover_answer(tmp_path):
    record = tmp_path / "rec.jsonl"
    env = {"FIXTURE_START_DELAY": "3", "FIXTURE_RECORD": str(record)}
    code, doc = probe(fixture_cmd("modern"), "--discover-timeout", "0.5", env=env)
    assert code == 0, doc
    assert era_of(doc) == MODERN
    # The slow path really ran: initialize went out while discover was unanswered ...
    assert recorded(record)[:2] == ["server/discover", "initialize"]
    # ... and nothing more was needed: one discover, no re-probe.
    assert recorded(record).count("server/discover") == 1
    assert "later than the 0.5 s --discover-timeout" in doc["eraReason"]
    assert "era-fallback" not in codes(doc)
    assert sdk_auto(stdio(fixture_cmd("modern"), {"FIXTURE_START_DELAY": "3"})) == MODERN


def test_slow_sdk_server_is_modern_not_refused():
    """The SDK's server locks a connection modern on discover and then refuses initialize
    with -32022: the late discover answer decides, and the run succeeds."""
    argv = ["sh", "-c", f"sleep 3; exec {shlex.quote(PY)} {shlex.quote(str(SDK_SERVER))}"]
    code, doc = probe(argv, "--discover-timeout", "0.5")
    assert code == 0, doc
    assert era_of(doc) == MODERN
    assert "later than the 0.5 s --discover-timeout" in doc["eraReason"]
    assert "rpc-error" not in codes(doc)
    assert sdk_auto(stdio(argv)) == MODERN


def test_initialize_refused_with_32022_reprobes_once(tmp_path):
    record = tmp_path / "rec.jsonl"
    code, doc = probe(fixture_cmd("modern-init-refused"), "--discover-timeout", "0.5",
                      env={"FIXTURE_RECORD": str(record)})
    assert code == 0 and era_of(doc) == MODERN
    assert recorded(record)[:3] == ["server/discover", "initialize", "server/discover"]
    assert doc["eraReason"].startswith("initialize was answered with -32022")


def test_silence_costs_the_wait_once_and_says_what_legacy_saves():
    code, doc = probe(fixture_cmd("legacy-silent-discover"), "--discover-timeout", "0.5")
    assert code == 0 and era_of(doc) == LEGACY
    fallback = [f for f in doc["findings"] if f["code"] == "era-fallback"]
    assert len(fallback) == 1
    assert "--protocol legacy would save up to 0.5 s" in fallback[0]["message"]
    assert fallback[0]["detail"]["waitedSeconds"] == 0.5
    assert [t.get("unanswered") for t in doc["timings"] if t["phase"] == "discover"] == [True]


def test_server_dying_on_discover_is_started_again(tmp_path):
    """An old SDK (mcp 1.2) exits on a request before initialize. The SDK cannot connect;
    mcpprobe starts the server again with initialize and reports the defect."""
    assert sdk_error_code(stdio(fixture_cmd("legacy-dies-on-unknown"))) == -32000  # Connection closed
    # Each start leaves a background child in the server's process group and records its
    # pid; the second start notes whether the first one's child still lived.
    pidfile, alive = tmp_path / "child.pid", tmp_path / "first-still-alive"
    script = (
        f'if [ -f {pidfile} ]; then s=$(sed -n "s/^State:[[:space:]]*\\(.\\).*/\\1/p" /proc/$(cat {pidfile})/status '
        f'2>/dev/null); if [ -n "$s" ] && [ "$s" != Z ]; then touch {alive}; fi; fi; '
        f"sleep 60 & echo $! > {pidfile}; "
        f"exec {shlex.quote(PY)} {shlex.quote(str(fixture_cmd('legacy-dies-on-unknown')[1]))} legacy-dies-on-unknown"
    )
    result = run_cli(["probe", "--json", "--", "sh", "-c", script])
    doc = result.json
    assert result.exit_code == 0, doc
    assert era_of(doc) == LEGACY
    crash = [f for f in doc["findings"] if f["code"] == "discover-crash"]
    assert len(crash) == 1 and crash[0]["severity"] == "warning"
    assert "cannot connect" in crash[0]["message"]
    assert doc["eraReason"].startswith("the server ended on server/discover (exit status 1)")
    # The first process's dying words are not this run's failure.
    assert doc["serverStderr"] == []
    assert "Traceback" not in result.stderr
    assert not alive.exists(), "the first server's process group outlived the restart"
    assert [t["phase"] for t in doc["timings"]][:4] == ["connect", "discover", "restart", "initialize"]


def test_server_dying_on_every_start_is_a_connection_failure():
    code, doc = probe(fixture_cmd("crash-on-start"))
    assert code == 4
    assert "discover-crash" not in codes(doc)
    assert "cannot open config" in "\n".join(doc["serverStderr"])


DISCOVER_RESULTS = [
    {},
    {"supportedVersions": ["2026-07-28"]},
    {"supportedVersions": "2026-07-28", "capabilities": {}},
    {"supportedVersions": ["2026-07-28", 7], "capabilities": {}},
    {"supportedVersions": ["2026-07-28"], "capabilities": []},
    {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": True}},
    {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {"listChanged": "yes please"}}},
    {"supportedVersions": ["2026-07-28"], "capabilities": {"resources": {"subscribe": None}}},
    {"supportedVersions": ["2026-07-28"], "capabilities": {"experimental": {"x": 1}}},
    {"supportedVersions": ["2026-07-28"], "capabilities": {"custom": 5}},
    {"supportedVersions": ["2026-07-28"], "capabilities": {}, "instructions": 3},
    {"supportedVersions": ["2026-07-28"], "capabilities": {}, "ttlMs": 1.5},
    {"supportedVersions": ["2026-07-28"], "capabilities": {}, "ttlMs": 60000, "cacheScope": "shared"},
    {"supportedVersions": ["2026-07-28"], "capabilities": {}, "cacheScope": "public", "resultType": "complete"},
    {"supportedVersions": ["2026-07-28"], "capabilities": {}, "_meta": []},
    {"supportedVersions": [], "capabilities": {}},
]


@pytest.mark.parametrize("result", DISCOVER_RESULTS, ids=[str(i) for i in range(len(DISCOVER_RESULTS))])
def test_discover_results_are_read_as_the_sdk_reads_them(result):
    """mcpprobe checks a discover result in plain Python (the SDK's models cost a third of a
    second to import): it must accept exactly what mcp_types.DiscoverResult accepts."""
    import mcp_types
    from pydantic import ValidationError

    from mcpprobe.client.negotiate import discover_result_problem

    try:
        mcp_types.DiscoverResult.model_validate(dict(result))
        sdk_accepts = True
    except ValidationError:
        sdk_accepts = False
    assert (discover_result_problem(dict(result)) is None) == sdk_accepts


def test_slow_legacy_server_answering_discover_late_is_legacy_without_a_wait_finding(tmp_path):
    """A legacy server slower to start than the wait: its late -32601 is kept as evidence, the
    initialize sent meanwhile decides, and no era-fallback is claimed (legacy would save nothing)."""
    record = tmp_path / "rec.jsonl"
    env = {"FIXTURE_START_DELAY": "3", "FIXTURE_RECORD": str(record)}
    code, doc = probe(fixture_cmd("full"), "--discover-timeout", "0.5", env=env)
    assert code == 0, doc
    assert era_of(doc) == LEGACY
    assert recorded(record)[:2] == ["server/discover", "initialize"]
    assert doc["eraReason"].startswith("no answer to server/discover within 0.5 s; fell back to initialize")
    assert "server/discover was answered with error -32601" in doc["eraReason"]
    assert "era-fallback" not in codes(doc)
    assert sdk_auto(stdio(fixture_cmd("full"), {"FIXTURE_START_DELAY": "3"})) == LEGACY


def test_a_session_the_parallel_initialize_opened_is_dropped_when_discover_wins(tmp_path):
    """Over HTTP, initialize goes out while server/discover is still unanswered; its response headers
    (with Mcp-Session-Id) come at once, its answer never, and discover's answer then makes the run
    2026-07-28, which has no sessions. That session id must not travel with the era's requests (this
    server refuses them with 400), and the session is ended with DELETE when mcpprobe closes."""
    log = tmp_path / "requests.log"
    with http_server([PY, str(ROOT / "tests" / "fixtures" / "stream_server.py"), "late-discover-session"],
                     env={"FIXTURE_LOG": str(log), "FIXTURE_DISCOVER_DELAY": "1.5"}) as url:
        result = run_cli(["list", "tools", "--json", "--discover-timeout", "0.3", url])
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.json["era"] == "modern" and [t["name"] for t in result.json["items"]] == ["work"]
    assert log.read_text().splitlines() == ["DELETE sess-1"]
