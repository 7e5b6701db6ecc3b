"""probe --lint on real fixture servers: one poisoned server, and a fleet where one shadows another."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import FIXTURE, PY, run_cli
from tests.e2e.fleet.test_fleet import _config

POISONED = ["--", PY, str(FIXTURE), "poisoned"]
EXPECTED = {"lint-annotations-conflict", "lint-annotation-vs-name", "lint-conceal-from-user",
            "lint-read-sensitive-file", "lint-shouting-markup", "lint-tokens"}


def _lint_codes(doc: dict[str, object]) -> set[str]:
    findings = doc["findings"]
    assert isinstance(findings, list)
    return {f["code"] for f in findings if f["code"].startswith(("lint-", "fleet-"))}


def test_lint_finds_the_poisoned_tool_and_keeps_exit_zero() -> None:
    result = run_cli(["probe", "--lint", "--json", "--protocol", "legacy", *POISONED])
    assert result.exit_code == 0, result.stderr
    assert _lint_codes(result.json) == EXPECTED
    shout = next(f for f in result.json["findings"] if f["code"] == "lint-shouting-markup")
    assert shout["severity"] == "warning" and shout["detail"] == {
        "field": "description", "item": "add", "evidence": "<IMPORTANT>"}


def test_no_lint_without_the_option_and_strict_exits_one() -> None:
    plain = run_cli(["probe", "--json", "--protocol", "legacy", *POISONED])
    assert plain.exit_code == 0 and _lint_codes(plain.json) == set()
    strict = run_cli(["probe", "--lint=strict", "--json", "--protocol", "legacy", *POISONED])
    assert strict.exit_code == 1
    assert {f["severity"] for f in strict.json["findings"] if f["code"] == "lint-shouting-markup"} == {"error"}


def test_lint_on_a_clean_server_only_counts_tokens() -> None:
    result = run_cli(["probe", "--lint", "--token-budget", "1", "--json", "--protocol", "legacy",
                      "--", PY, str(FIXTURE), "full"])
    assert result.exit_code == 0
    assert _lint_codes(result.json) == {"lint-token-budget"}


def test_token_budget_needs_lint() -> None:
    result = run_cli(["probe", "--token-budget", "5", "--", PY, str(FIXTURE), "full"])
    assert result.exit_code == 2 and "--token-budget needs --lint" in result.stderr


def test_fleet_shadowing_between_two_real_servers(tmp_path: Path) -> None:
    config = _config(tmp_path, {"calc": "full", "evil": "poisoned"})
    result = run_cli(["probe", "-s", "calc", "-s", "evil", "--lint", "--config", str(config), "--json",
                      "--protocol", "legacy"])
    assert result.exit_code == 0, result.stderr
    calc, evil = result.json
    shadow = [f for f in calc["findings"] if f["code"] == "fleet-shadowed-tool"]
    assert [(f["detail"]["item"], f["detail"]["servers"]) for f in shadow] == [("add", ["calc", "evil"])]
    assert "also offered by evil" in shadow[0]["message"]
    foreign = [f for f in evil["findings"] if f["code"] == "fleet-names-foreign-tool"]
    assert [(f["detail"]["item"], f["detail"]["names"], f["detail"]["server"]) for f in foreign] == [
        ("add", ["echo"], "calc")]
    # Without --lint a fleet says nothing of it.
    plain = run_cli(["probe", "-s", "calc", "-s", "evil", "--config", str(config), "--json", "--protocol", "legacy"])
    assert all(not _lint_codes(doc) for doc in plain.json)
