"""`mcpprobe check` and the official suite's server mode judge the same server alike, scenario by
scenario, where both judge: tests/fixtures/check_http_server.py over streamable HTTP, right
(`ok`) and broken on purpose, in 2025-11-25 and 2026-07-28; and the scenarios of the suite's own
fixtures on tests/fixtures/suite_fixture_server.py (which implements them), with
`check --suite-fixtures`, right and broken in each of its modes.

Each scenario runs with the suite release that scores it at that version (the latest release
first, else the newest pre-release), against a fixture started for that version alone (the
fixture is one dual-era server whose state follows the last handshake). A scenario's suite verdict
is `pass` when every check it records is SUCCESS, leaving out the suite checks named in IGNORED,
each a documented difference (docs/commands/check.md, "Coverage of the conformance suite");
mcpprobe's is `pass` when every check id the row names passes. The table of scenarios to checks is
mcpprobe/check/scenarios.py's, so a row that claims coverage is held to it here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import CONFORMANCE_PRERELEASE, CONFORMANCE_VERSION, PY, ROOT, checked, http_server, run_cli

from mcpprobe.check.scenarios import SCENARIOS

pytestmark = [pytest.mark.conformance, pytest.mark.interop]

HTTP_SERVER = ROOT / "tests" / "fixtures" / "check_http_server.py"
# The scenarios both judge on this fixture, per spec version. Left out: those that need the suite's
# fixture tools (the fixture has none of them), server-stateless (mcpprobe judges a part of it only,
# and the fixture is known to fail the parts it does not: the coverage table says which).
JUDGED = {
    "2025-11-25": ("server-initialize", "ping", "logging-set-level", "tools-list", "resources-list",
                   "prompts-list", "resources-subscribe", "resources-unsubscribe", "dns-rebinding-protection",
                   "server-session-lifecycle"),
    "2026-07-28": ("tools-list", "resources-list", "prompts-list", "dns-rebinding-protection", "caching",
                   "http-header-validation", "sep-2164-resource-not-found", "server-sse-multiple-streams"),
}
JUDGED["2025-11-25"] += ("server-sse-multiple-streams",)
# Right fixture modes of their own, with the scenarios both judge on each: event streams (priming,
# resumption, several at once), and a tool with an x-mcp-header parameter (mcpprobe: named with --call).
MODE_JUDGED = {
    "sse": {"2025-11-25": ("server-sse-polling", "server-sse-multiple-streams")},
    "sse-polling": {"2025-11-25": ("server-sse-polling", "server-sse-multiple-streams")},
    "param-header": {"2026-07-28": ("http-custom-header-server-validation",)},
}
RIGHT_OF = {"sse-no-priming": "sse", "sse-one-stream": "sse", "sse-polling-no-retry": "sse-polling",
            "param-header-ignored": "param-header"}
MODE_OPTIONS = {"param-header": ("--call", "route region=eu-west")}
# Suite checks that judge what mcpprobe does not, and why (never a false alarm: no MUST or SHOULD in
# the revision's text, or not judged yet).
IGNORED = {
    "sep-2164-data-uri": "2026-07-28 shows the error's data.uri only in an example, with no MUST or SHOULD",
    "sep-2243-server-accepts-whitespace-header-value": "values with surrounding whitespace are not sent (the "
                                                      "HTTP client refuses to write them)",
    "sep-2243-server-decode-base64": "each Base64 case a server must accept runs the tool again: not sent",
    "sep-2243-server-validate-param-match": "its accepted cases (a value without the sentinel's prefix or suffix, "
                                            "taken literally) run the tool again: not sent; its rejected case (the "
                                            "header left out) is http.param-header's",
    "sep-2243-server-reject-invalid-param-chars": "invalid Base64, which a server that decodes and one that does not "
                                                 "both refuse: not sent",
}
# fixture mode -> (version, scenario): the scenario the mode breaks, which both must fail; every other
# scenario both still pass.
BROKEN = {
    "origin-ignored": ("2026-07-28", "dns-rebinding-protection"),
    "method-header-optional": ("2026-07-28", "http-header-validation"),
    "header-value-casefolded": ("2026-07-28", "http-header-validation"),
    "delete-ignored": ("2025-11-25", "server-session-lifecycle"),
    "sse-no-priming": ("2025-11-25", "server-sse-polling"),
    "sse-one-stream": ("2025-11-25", "server-sse-multiple-streams"),
    "sse-polling-no-retry": ("2025-11-25", "server-sse-polling"),
    "param-header-ignored": ("2026-07-28", "http-custom-header-server-validation"),
}
# Broken modes compared on some scenarios only, and why: sse-one-stream keeps each stream open until
# the client closes it and refuses a POST while one is open; the suite's own client reads every stream
# to its end, so each of its scenarios meets that refusal (mcpprobe closes a stream at its response,
# and only http.concurrent-requests holds several open).
BROKEN_SCENARIOS = {"sse-one-stream": ("server-sse-multiple-streams",)}
ROWS = {row.name: row for row in SCENARIOS}


def _suite_for(scenario: str, version: str, release, prerelease):
    row = ROWS[scenario]
    if version in row.versions.get(CONFORMANCE_VERSION, ()):
        return release
    assert version in row.versions[CONFORMANCE_PRERELEASE], (scenario, version)
    return prerelease


def _suite_verdict(suite, url: str, scenario: str, version: str, out: Path) -> tuple[str, list[dict]]:
    run = suite.server(url, scenario, out, spec_version=version)
    checks = run.checks
    assert checks, f"{scenario}: the suite recorded no checks (exit {run.exit_code}): {run.output[-2000:]}"
    judged = [c for c in checks if c["id"] not in IGNORED and c["status"] != "INFO"]  # INFO: no verdict
    return ("pass" if all(c["status"] == "SUCCESS" for c in judged) else "fail"), judged


def _check_ids(scenario: str) -> tuple[str, ...]:
    return ROWS[scenario].checks or ("handshake",)  # server-initialize: the handshake every check runs on


def _scenarios(mode: str, version: str) -> tuple[str, ...]:
    right = RIGHT_OF.get(mode, mode)
    return MODE_JUDGED[right][version] if right in MODE_JUDGED else JUDGED[version]


def _mcpprobe_verdicts(url: str, version: str, mode: str = "ok") -> dict[str, str]:
    result = run_cli(["check", "--json", "--level", "may", "--unsafe", "--timeout", "20", "--protocol",
                      version if version != "2026-07-28" else "modern",
                      *MODE_OPTIONS.get(RIGHT_OF.get(mode, mode), ()), url])
    doc = checked(json.loads(result.stdout))
    assert doc["protocolVersion"] == version, doc.get("error")
    found = {c["id"]: c["status"] for c in doc["checks"]}
    found["handshake"] = "pass" if not doc.get("error") else "fail"
    verdicts = {}
    for scenario in _scenarios(mode, version):
        statuses = [found[i] for i in _check_ids(scenario)]
        # n/a for some of a row's checks only: http.sse-retry asks nothing of a server that does not close
        # its streams early
        assert "error" not in statuses and any(s != "n/a" for s in statuses), (scenario, statuses)
        # skipped: nothing to judge on this server (a check sends nothing where nothing applies)
        verdicts[scenario] = "pass" if all(s in ("pass", "skipped", "n/a") for s in statuses) else "fail"
    return verdicts


def _compare(mode: str, version: str, release, prerelease, tmp_path: Path) -> dict[str, tuple[str, str]]:
    with http_server([PY, str(HTTP_SERVER), mode]) as url:
        ours = _mcpprobe_verdicts(url, version, mode)
    table: dict[str, tuple[str, str]] = {}
    for scenario in BROKEN_SCENARIOS.get(mode, _scenarios(mode, version)):
        # A fresh fixture per scenario: the suite's scenarios leave sessions and subscriptions behind.
        with http_server([PY, str(HTTP_SERVER), mode]) as url:
            suite = _suite_for(scenario, version, release, prerelease)
            verdict, checks = _suite_verdict(suite, url, scenario, version, tmp_path / mode / version / scenario)
        assert verdict == ours[scenario], (scenario, verdict, ours[scenario], checks)
        table[scenario] = (verdict, ours[scenario])
    return table


@pytest.mark.parametrize("version", sorted(JUDGED))
def test_check_and_the_suite_agree_on_the_right_fixture(version: str, conformance, conformance_prerelease,
                                                        tmp_path: Path) -> None:
    table = _compare("ok", version, conformance, conformance_prerelease, tmp_path)
    assert table == {scenario: ("pass", "pass") for scenario in JUDGED[version]}


@pytest.mark.parametrize(("mode", "version"), [(mode, version) for mode in sorted(MODE_JUDGED)
                                                for version in MODE_JUDGED[mode]])
def test_check_and_the_suite_agree_on_the_right_fixture_of_its_own(mode: str, version: str, conformance,
                                                                   conformance_prerelease, tmp_path: Path) -> None:
    table = _compare(mode, version, conformance, conformance_prerelease, tmp_path)
    assert table == {scenario: ("pass", "pass") for scenario in MODE_JUDGED[mode][version]}


@pytest.mark.parametrize("mode", sorted(BROKEN))
def test_check_and_the_suite_agree_on_a_broken_fixture(mode: str, conformance, conformance_prerelease,
                                                       tmp_path: Path) -> None:
    version, broken = BROKEN[mode]
    table = _compare(mode, version, conformance, conformance_prerelease, tmp_path)
    assert table == {scenario: ("fail", "fail") if scenario == broken else ("pass", "pass")
                     for scenario in BROKEN_SCENARIOS.get(mode, _scenarios(mode, version))}


# ----- the suite's fixtures: suite_fixture_server.py and `check --suite-fixtures` -----

SUITE_SERVER = ROOT / "tests" / "fixtures" / "suite_fixture_server.py"
# The scenarios the suite family judges, one check each (suite.<scenario>).
FIXTURE_SCENARIOS = tuple(row.name for row in SCENARIOS if f"suite.{row.name}" in row.checks)
# mode -> the documented difference on the scenario it breaks: (the suite's verdict, mcpprobe's), where
# they differ. progress 0, 50, 50: "The `progress` value **MUST** increase with each notification"
# (2025-06-18 and later); the suite accepts equal values.
FIXTURE_DIFFERENCES = {"progress-flat": ("pass", "fail")}


def _fixture_scenarios(version: str) -> list[str]:
    return [name for name in FIXTURE_SCENARIOS
            if any(version in versions for versions in ROWS[name].versions.values())]


def _fixture_version(scenario: str) -> str:
    """The newest version at which a suite release scores the scenario."""
    return max(v for versions in ROWS[scenario].versions.values() for v in versions)


def _mcpprobe_fixture_verdicts(url: str, version: str) -> dict[str, str]:
    result = run_cli(["check", "--json", "--suite-fixtures", "--yes", "--only", "suite", "--timeout", "20",
                      "--protocol", version if version != "2026-07-28" else "modern", url])
    doc = checked(json.loads(result.stdout))
    assert doc["protocolVersion"] == version, doc.get("error")
    found = {c["id"]: c["status"] for c in doc["checks"]}
    verdicts = {}
    for scenario in _fixture_scenarios(version):
        status = found[f"suite.{scenario}"]
        assert status in ("pass", "fail", "warn"), (scenario, status, doc["checks"])  # judged, never skipped here
        # a SHOULD not met: the suite's WARNING, which is no SUCCESS either
        verdicts[scenario] = "fail" if status == "warn" else status
    return verdicts


def _compare_fixtures(mode: str, version: str, scenarios: list[str], release, prerelease,
                      tmp_path: Path) -> dict[str, tuple[str, str]]:
    table: dict[str, tuple[str, str]] = {}
    # One server for the run: its fixtures keep no state between requests.
    with http_server([PY, str(SUITE_SERVER), mode, "--http", "0"]) as url:
        ours = _mcpprobe_fixture_verdicts(url, version)
        for scenario in scenarios:
            suite = _suite_for(scenario, version, release, prerelease)
            verdict, _ = _suite_verdict(suite, url, scenario, version, tmp_path / mode / version / scenario)
            table[scenario] = (verdict, ours[scenario])
    return table


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_check_and_the_suite_agree_on_the_suite_s_fixtures(version: str, conformance, conformance_prerelease,
                                                           tmp_path: Path) -> None:
    scenarios = _fixture_scenarios(version)
    assert len(scenarios) == (21 if version == "2025-11-25" else 16 + len(MRTR_SCENARIOS))
    table = _compare_fixtures("ok", version, scenarios, conformance, conformance_prerelease, tmp_path)
    assert table == {scenario: ("pass", "pass") for scenario in scenarios}


def _fixture_modes() -> dict[str, str]:
    from tests.fixtures.suite_fixture_server import MODES, RAW_MODES

    return {mode: what.split(":", 1)[0].removeprefix("suite.") for mode, what in MODES.items()
            if not what.startswith(("every fixture", "not broken")) and mode not in RAW_MODES}


@pytest.mark.parametrize("mode", sorted(_fixture_modes()))
def test_check_and_the_suite_agree_on_a_broken_suite_fixture(mode: str, conformance, conformance_prerelease,
                                                             tmp_path: Path) -> None:
    scenario = _fixture_modes()[mode]
    version = _fixture_version(scenario)
    table = _compare_fixtures(mode, version, [scenario], conformance, conformance_prerelease, tmp_path)
    assert table == {scenario: FIXTURE_DIFFERENCES.get(mode, ("fail", "fail"))}


# ----- 2026-07-28: the input-required-result scenarios (SEP-2322) on the same fixture -----

# Scored at 2026-07-28 by the pre-release only; each judged by suite.<scenario> with --suite-fixtures.
# Their right and broken modes run above with the others (test_check_and_the_suite_agree_on_the_suite_s_
# fixtures, ..._on_a_broken_suite_fixture), over streamable HTTP; the modes the fixture answers before
# its SDK sees the request (RAW_MODES: no resultType, invalid input responses taken, an input-required
# prompts/list) exist over stdio only, where the suite cannot go, and are held by
# tests/e2e/check/test_check_suite.py. mcpprobe answers elicitation with a decline where the suite
# accepts with values of its own; the fixture contract keys on the response being there, so the
# verdicts are the same (the test says so).
MRTR_SCENARIOS = tuple(name for name in FIXTURE_SCENARIOS if name.startswith("input-required-result-"))


def test_every_input_required_result_scenario_is_compared() -> None:
    from tests.fixtures.suite_fixture_server import MODES, RAW_MODES

    assert len(MRTR_SCENARIOS) == 14
    assert all(_fixture_version(name) == "2026-07-28" for name in MRTR_SCENARIOS)
    over_http = set(_fixture_modes().values())
    # every scenario but the one whose only breaking mode is stdio's has a broken mode compared here
    assert set(MRTR_SCENARIOS) - over_http == {"input-required-result-result-type",
                                               "input-required-result-validate-input",
                                               "input-required-result-unsupported-methods"}
    assert set(RAW_MODES) <= set(MODES)
