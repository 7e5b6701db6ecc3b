"""`mcpprobe check`: each check fails (or warns) on a fixture server that breaks exactly its rule, and on
nothing else; nothing is ever sent for a capability the server did not declare; the catalogue and
its generated pages agree."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import ROOT, checked, run_cli

CHECK_SERVER = ROOT / "tests" / "fixtures" / "check_server.py"
BAD = ("fail", "warn")
# Modes of a right server whose optional parts give a note, not a verdict against it.
RIGHT_BUT_NOTED = ("setlevel-absent", "templates-absent", "sample-rejected")


def check_cmd(mode: str = "ok") -> list[str]:
    return [sys.executable, str(CHECK_SERVER), mode]


def run_check(mode: str, *options: str, protocol: str = "legacy", env: dict[str, str] | None = None) -> tuple[
        int, dict]:
    server_env = [f"--env={key}={value}" for key, value in (env or {}).items()]
    result = run_cli(["check", "--json", "--level", "may", "--timeout", "5", "--protocol", protocol, *options,
                      *server_env, "--", *check_cmd(mode)])
    assert result.stdout, result.stderr
    doc = checked(json.loads(result.stdout))
    return result.exit_code, doc


def statuses(doc: dict) -> dict[str, str]:
    return {entry["id"]: entry["status"] for entry in doc["checks"]}


# mode -> (check id, expected status, protocol, extra options)
BROKEN = {
    "ping-broken": ("lifecycle.ping", "fail", "legacy", ()),
    "no-result-type": ("lifecycle.result-type", "fail", "modern", ()),
    "unknown-method-result": ("lifecycle.unknown-method", "fail", "modern", ()),
    "invalid-params-ignored": ("lifecycle.invalid-params", "warn", "legacy", ()),
    "id-truncated": ("lifecycle.request-id-echo", "fail", "legacy", ()),
    "cancel-breaks": ("lifecycle.cancel-in-flight", "fail", "modern", ()),
    "stdout-noise": ("lifecycle.stdout-clean", "fail", "legacy", ()),
    "linger": ("lifecycle.stdin-close-exit", "warn", "modern", ()),
    "stdout-at-exit": ("lifecycle.stdout-clean", "fail", "legacy", ()),
    "crash-late": ("lifecycle.unknown-method", "fail", "legacy", ()),
    "cursor-ignored": ("pagination.invalid-cursor", "warn", "legacy", ()),
    "list-broken": ("listing.complete", "fail", "modern", ()),
    "unstable": ("listing.stable", "warn", "legacy", ()),
    "bad-icon": ("listing.icons", "warn", "legacy", ()),
    "bad-tool-name": ("tools.name-rules", "warn", "modern", ()),
    "bad-input-schema": ("tools.input-schema", "fail", "legacy", ()),
    "bad-output-schema": ("tools.output-schema", "fail", "modern", ()),
    "call-broken": ("tools.call-named", "fail", "legacy", ("--call", "echo message=hi")),
    "read-broken": ("resources.read-listed", "warn", "modern", ()),
    "mime-mismatch": ("resources.mime-type", "warn", "legacy", ()),
    "template-broken": ("resources.template-expands", "warn", "modern", ()),
    "not-found-wrong": ("resources.unknown-uri", "fail", "modern", ()),
    "subscribe-broken": ("resources.subscribe", "fail", "legacy", ()),
    "prompt-broken": ("prompts.get-listed", "warn", "legacy", ()),
    "complete-broken": ("completion.complete", "fail", "modern", ()),
    "setlevel-broken": ("logging.set-level", "warn", "legacy", ()),
    "tasks-list-broken": ("tasks.list", "fail", "legacy", ()),
    "unknown-task-wrong": ("tasks.unknown-task", "fail", "legacy", ()),
    "unportable": ("portability.schema-constructs", "warn", "modern", ()),
    "no-cache-hints": ("listing.cache-hints", "fail", "modern", ()),
    "no-server-info": ("lifecycle.server-info", "warn", "modern", ()),
    "bad-content": ("tools.call-content", "fail", "modern", ("--call", "echo message=all-content")),
    "bad-message": ("prompts.message-content", "fail", "legacy", ()),
}


def test_every_check_has_a_breaking_fixture() -> None:
    from mcpprobe.check.catalogue import CHECKS
    from tests.e2e.check.test_check_http import BROKEN_IDS
    from tests.e2e.check.test_check_streams import STREAMS_BROKEN_IDS
    from tests.e2e.check.test_check_suite import SUITE_BROKEN_IDS
    from tests.e2e.check.test_check_tasks_ext import TASKS_EXT_BROKEN_IDS
    from tests.fixtures.check_server import MODES

    covered = {check_id for check_id, *_ in BROKEN.values()} | BROKEN_IDS | TASKS_EXT_BROKEN_IDS | SUITE_BROKEN_IDS \
        | STREAMS_BROKEN_IDS
    assert covered == {check.id for check in CHECKS}
    assert set(BROKEN) == set(MODES) - {"ok", *RIGHT_BUT_NOTED}


@pytest.mark.parametrize("protocol", ["legacy", "modern"])
def test_a_right_server_passes_every_check(protocol: str) -> None:
    code, doc = run_check("ok", "--call", "echo message=hi", protocol=protocol)
    assert code == 0, doc
    assert not [entry for entry in doc["checks"] if entry["status"] in (*BAD, "error")], doc["checks"]
    assert doc["command"] == "check" and doc["summary"]["pass"] >= 20


@pytest.mark.parametrize("mode", sorted(BROKEN))
def test_each_check_fails_on_its_fixture_and_nothing_else(mode: str) -> None:
    check_id, expected, protocol, options = BROKEN[mode]
    code, doc = run_check(mode, *options, protocol=protocol)
    found = statuses(doc)
    assert found[check_id] == expected, [e for e in doc["checks"] if e["id"] == check_id]
    others = {cid: status for cid, status in found.items() if cid != check_id and status in (*BAD, "error")}
    assert others == {}
    entry = next(e for e in doc["checks"] if e["id"] == check_id)
    assert entry["specUrl"].startswith(f"https://modelcontextprotocol.io/specification/{doc['protocolVersion']}/")
    # A failed MUST is exit 1; a warning alone is exit 0 (and 1 with --strict).
    assert code == (1 if expected == "fail" else 0)


def not_implemented_notes(doc: dict) -> list[dict]:
    return [f for f in doc["findings"] if f["code"] == "not-implemented"]


def test_logging_set_level_left_out_is_a_note_not_a_pass_nor_a_failure() -> None:
    """No revision obliges a server that declares `logging` to implement `logging/setLevel` (the
    client MAY send it): -32601 there is an optional part left out. The seeds ask that a declared
    capability answered with Method not found be recorded: the not-implemented note (info), the
    check skipped (nothing to judge), never a silent pass, never a warning or a failure."""
    code, doc = run_check("setlevel-absent", protocol="legacy")
    entry = next(e for e in doc["checks"] if e["id"] == "logging.set-level")
    assert entry["status"] == "skipped" and "optional part of 'logging'" in entry["message"], entry
    (note,) = not_implemented_notes(doc)
    assert note["severity"] == "info" and note["kind"] == "server"
    assert note["detail"]["method"] == "logging/setLevel" and note["detail"]["capability"] == "logging"
    assert "answered logging/setLevel with -32601" in note["message"]
    assert code == 0 and doc["exitCode"] == 0
    _, right = run_check("ok", protocol="legacy")
    assert statuses(right)["logging.set-level"] == "pass" and not_implemented_notes(right) == []


@pytest.mark.parametrize("protocol", ["legacy", "modern"])
def test_templates_left_out_is_the_same_note_in_check_probe_and_list(protocol: str) -> None:
    """resources/templates/list answered -32601 under a declared `resources`: an optional part of the
    capability. check used to fail listing.complete (MUST, exit 1) while the note said "not an error";
    now check passes it, and check, probe and list carry the one not-implemented note, word for word."""
    code, doc = run_check("templates-absent", protocol=protocol)
    found = statuses(doc)
    assert found["listing.complete"] == "pass" and found["resources.template-expands"] == "skipped"
    complete = next(e for e in doc["checks"] if e["id"] == "listing.complete")
    assert "resources/templates/list answered -32601: an optional part of 'resources'" in complete["message"]
    assert complete["specUrl"].endswith("/server/utilities/pagination#operations-supporting-pagination")
    assert {cid: s for cid, s in found.items() if s in (*BAD, "error")} == {}
    assert code == 0 and doc["exitCode"] == 0
    (note,) = not_implemented_notes(doc)
    assert (note["severity"], note["kind"], note["detail"]["rpcCode"]) == ("info", "templates", -32601)
    server = ["--protocol", protocol, "--timeout", "5", "--", *check_cmd("templates-absent")]
    probe = run_cli(["probe", "--json", *server])
    listed = run_cli(["list", "templates", "--json", *server])
    for result in (probe, listed):
        other = checked(json.loads(result.stdout))
        assert result.exit_code == 0 and not_implemented_notes(other) == [note]
    assert checked(json.loads(probe.stdout))["kinds"]["templates"]["state"] == "not-implemented"


def test_sample_arguments_refused_as_invalid_params_are_not_the_server_s_fault() -> None:
    """--sample-arguments makes values up; a server that refuses them with -32602 is right to: the
    prompt is not judged (named in the message), never a warning."""
    code, doc = run_check("sample-rejected", "--sample-arguments", protocol="legacy")
    entry = next(e for e in doc["checks"] if e["id"] == "prompts.get-listed")
    assert entry["status"] == "pass", entry
    assert "1 refused the argument values mcpprobe made up with error -32602" in entry["message"]
    assert entry["message"].endswith("not judged: summarize") and code == 0
    # Another answer to made-up values is still judged: prompt-broken answers -32603.
    _, broken = run_check("prompt-broken", "--sample-arguments", protocol="legacy")
    assert statuses(broken)["prompts.get-listed"] == "warn"


def test_strict_makes_a_warning_exit_1() -> None:
    code, doc = run_check("cursor-ignored", "--strict")
    assert statuses(doc)["pagination.invalid-cursor"] == "warn"
    assert code == 1


def test_the_not_found_error_follows_the_revision() -> None:
    """2025-11-25 and earlier: -32002 ("Resource not found: `-32002`", a SHOULD), so an empty
    contents list is a warning; 2026-07-28: "servers MUST NOT return an empty contents array"."""
    _, legacy = run_check("not-found-wrong", protocol="legacy")
    assert statuses(legacy)["resources.unknown-uri"] == "warn"
    _, modern = run_check("not-found-wrong", protocol="modern")
    entry = next(e for e in modern["checks"] if e["id"] == "resources.unknown-uri")
    assert entry["status"] == "fail" and entry["level"] == "MUST"


ALLOWED_ALWAYS = {"initialize", "notifications/initialized", "server/discover", "ping", "mcpprobe/no-such-method",
                  "notifications/cancelled"}
NEEDS = {"tools/": "tools", "resources/": "resources", "prompts/": "prompts", "completion/": "completions",
         "logging/": "logging", "tasks/": "tasks"}


@pytest.mark.parametrize(("caps", "protocol"), [("", "legacy"), ("", "modern"), ("tools", "legacy"),
                                                ("resources", "modern"), ("prompts", "legacy")])
def test_no_check_sends_a_request_for_an_undeclared_capability(tmp_path: Path, caps: str, protocol: str) -> None:
    record = tmp_path / "received.jsonl"
    options = ("--call", "echo message=hi") if "tools" in caps else ()
    code, doc = run_check("ok", *options, "--unsafe", protocol=protocol,
                          env={"CHECK_RECORD": str(record), "CHECK_CAPS": caps})
    declared = set(filter(None, caps.split(",")))
    received = [json.loads(line)["method"] for line in record.read_text().splitlines()]
    for method in received:
        if method in ALLOWED_ALWAYS:
            continue
        need = next(cap for prefix, cap in NEEDS.items() if method.startswith(prefix))
        assert need in declared, f"{method} sent although {need!r} was not declared"
    skipped = {e["id"] for e in doc["checks"] if e["status"] == "skipped"}
    if not declared:
        assert {"listing.complete", "tools.input-schema", "resources.read-listed", "prompts.get-listed"} <= skipped
    assert code == 0


def test_only_skip_and_level_select_checks() -> None:
    _, doc = run_check("ok", "--only", "lifecycle", "--skip", "lifecycle.ping")
    ids = set(statuses(doc))
    assert ids and all(i.startswith("lifecycle.") for i in ids) and "lifecycle.ping" not in ids
    result = run_cli(["check", "--json", "--level", "must", "--protocol", "legacy", "--", *check_cmd()])
    assert {e["level"] for e in result.json["checks"]} == {"MUST"}


def test_an_unknown_check_id_is_a_usage_error() -> None:
    result = run_cli(["check", "--only", "lifecycle.nope", "--", *check_cmd()])
    assert result.exit_code == 2
    assert "no such check or family" in result.stderr


def test_evidence_is_inert() -> None:
    _, doc = run_check("unknown-method-result", protocol="legacy")
    entry = next(e for e in doc["checks"] if e["id"] == "lifecycle.unknown-method")
    assert entry["evidence"] and "mcpprobe/no-such-method" in entry["evidence"][0]["sent"]
    assert "\x1b" not in json.dumps(doc)


def test_junit_has_one_testcase_per_check() -> None:
    import xml.etree.ElementTree as ET

    result = run_cli(["check", "--format", "junit", "--protocol", "legacy", "--", *check_cmd("ping-broken")])
    root = ET.fromstring(result.stdout)
    cases = root.findall(".//testcase")
    names = [case.get("name") for case in cases]
    assert "lifecycle.ping" in names and names[0] == "connection"
    failed = [case.get("name") for case in cases if case.find("failure") is not None]
    assert failed == ["lifecycle.ping"]
    assert result.exit_code == 1


def test_html_report_has_a_checks_section() -> None:
    result = run_cli(["check", "--format", "html", "--protocol", "legacy", "--", *check_cmd("ping-broken")])
    assert result.exit_code == 1
    assert 'id="checks-0"' in result.stdout and "lifecycle.ping" in result.stdout


def test_the_check_pages_are_generated_from_the_catalogue() -> None:
    from mcpprobe.check.docs import pages

    for path, text in pages().items():
        assert (ROOT / "docs" / path).read_text(encoding="utf-8") == text, (
            f"docs/{path} is out of date: run python -m mcpprobe.check.docs")


@pytest.mark.parametrize("protocol", ["legacy", "modern"])
def test_the_demo_server_passes_in_both_eras(protocol: str) -> None:
    result = run_cli(["check", "--json", "--level", "may", "--protocol", protocol, "--", sys.executable, "-m",
                      "mcpprobe.demo"])
    doc = checked(json.loads(result.stdout))
    assert doc["era"] == protocol
    assert result.exit_code == 0
    assert not [c for c in doc["checks"] if c["status"] in ("fail", "error")]


def test_a_fleet_is_checked_server_by_server(tmp_path: Path) -> None:
    """--all: one check document per server; the fleet's exit code is the worst member's."""
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {
        "good": {"command": sys.executable, "args": [str(CHECK_SERVER), "ok"]},
        "bad": {"command": sys.executable, "args": [str(CHECK_SERVER), "ping-broken"]},
    }}), encoding="utf-8")
    result = run_cli(["check", "--json", "--all", "--config", str(config), "--protocol", "legacy"])
    docs = checked(json.loads(result.stdout))
    by_name = {doc["server"]["name"]: doc for doc in docs}
    assert by_name["good"]["exitCode"] == 0 and by_name["bad"]["exitCode"] == 1
    assert statuses(by_name["bad"])["lifecycle.ping"] == "fail"
    assert result.exit_code == 1
    human = run_cli(["check", "--all", "--config", str(config), "--protocol", "legacy"])
    assert "fail lifecycle.ping" in human.stdout and human.exit_code == 1


def test_rate_must_be_positive() -> None:
    result = run_cli(["check", "--rate", "0", "--", *check_cmd()])
    assert result.exit_code == 2


def test_a_named_tool_that_is_not_listed_is_refused_and_nothing_is_called(tmp_path: Path) -> None:
    record = tmp_path / "received.jsonl"
    code, doc = run_check("ok", "--call", "no_such_tool", env={"CHECK_RECORD": str(record)})
    entry = next(e for e in doc["checks"] if e["id"] == "tools.call-named")
    assert entry["status"] == "error" and "not among" in entry["message"]
    assert "tools/call" not in record.read_text()
    assert code == 3


def test_a_refused_named_call_does_not_advise_force_which_check_ignores(tmp_path: Path) -> None:
    """`call` says "use --force to send tools/call anyway"; `check` ignores --force, so its verdict
    once gave advice that changed nothing (the same refusal, exit 3, nothing sent)."""
    record = tmp_path / "received.jsonl"
    code, doc = run_check("ok", "--force", "--call", "no_such_tool", env={"CHECK_RECORD": str(record)})
    entry = next(e for e in doc["checks"] if e["id"] == "tools.call-named")
    assert entry["status"] == "error" and "Nothing was sent." in entry["message"]
    assert "--force" not in entry["message"]
    assert "tools/call" not in record.read_text()
    assert code == 3


def test_for_people_the_session_s_findings_are_shown_and_leave_the_exit_code_to_the_checks() -> None:
    """A server whose serverInfo carries terminal escapes: `check --json` had its suspicious-text
    findings, and the human output now shows them too, made inert, as `probe` does."""
    hostile = ROOT / "tests" / "fixtures" / "hostile_server.py"
    human = run_cli(["check", "--protocol", "legacy", "--timeout", "10", "--", sys.executable, str(hostile),
                     "escapes"])
    assert "\x1b" not in human.stdout
    findings = human.stdout.split("\nFindings\n", 1)
    assert len(findings) == 2, human.stdout
    assert "warning suspicious-text  serverInfo: name contains escape sequence" in findings[1]
    doc = checked(json.loads(run_cli(["check", "--json", "--protocol", "legacy", "--timeout", "10", "--",
                                      sys.executable, str(hostile), "escapes"]).stdout))
    assert human.exit_code == doc["exitCode"]
    assert {f["code"] for f in doc["findings"]} == {"suspicious-text"}


def test_evidence_keeps_the_first_and_the_last_exchanges_and_counts_those_between() -> None:
    # 15 calls, each answered wrong: the deciding last ones are in --json, and what the people's
    # output says is left to --json is there.
    calls = [option for i in range(1, 16) for option in ("--call", f"echo message=m{i}")]
    code, doc = run_check("call-broken", "--only", "tools.call-named", "--yes", *calls)
    entry = next(e for e in doc["checks"] if e["id"] == "tools.call-named")
    assert code == 1 and entry["status"] == "fail"
    shown = [json.loads(item["sent"])["params"]["arguments"]["message"] for item in entry["evidence"]]
    assert shown == ["m1", "m2", "m3", "m4", *(f"m{i}" for i in range(8, 16))]
    assert entry["evidenceOmitted"] == 3
    human = run_cli(["check", "--only", "tools.call-named", "--yes", "--timeout", "5", "--protocol", "legacy",
                     *calls, "--", *check_cmd("call-broken")], env={"COLUMNS": "200"})
    assert "…(12 earlier exchanges; --json shows 9 of them)" in human.stdout
    assert '"m15"' in human.stdout and '"m12"' not in human.stdout


def test_a_check_of_few_exchanges_omits_none() -> None:
    code, doc = run_check("call-broken", "--only", "tools.call-named", "--call", "echo message=hi")
    entry = next(e for e in doc["checks"] if e["id"] == "tools.call-named")
    assert len(entry["evidence"]) == 1 and entry["evidenceOmitted"] == 0


def test_the_values_sent_on_purpose_are_quoted_as_json_not_python() -> None:
    _, doc = run_check("cursor-ignored")
    messages = {entry["id"]: entry["message"] for entry in doc["checks"]}
    assert 'the string id "mcpprobe-id-7" and' in messages["lifecycle.request-id-echo"]
    assert '("mcpprobe-invalid-cursor") was answered with a result' in messages["pagination.invalid-cursor"]


def test_the_suite_coverage_table_is_generated_and_names_real_checks() -> None:
    from mcpprobe.check.catalogue import CHECKS
    from mcpprobe.check.scenarios import SCENARIOS, SUITE_VERSIONS, Coverage, replaced

    page = (ROOT / "docs" / "commands" / "check.md").read_text(encoding="utf-8")
    assert replaced(page) == page, "docs/commands/check.md's scenario table is out of date: run " \
                                   "python -m mcpprobe.check.scenarios"
    ids = {check.id for check in CHECKS}
    for row in SCENARIOS:
        assert set(row.checks) <= ids, (row.name, set(row.checks) - ids)
        assert row.versions and set(row.versions) <= set(SUITE_VERSIONS), row.name
        assert row.note, row.name
        if row.coverage in (Coverage.COVERED, Coverage.PARTLY):
            assert row.checks or row.name == "server-initialize", row.name
    assert len({row.name for row in SCENARIOS}) == len(SCENARIOS)


@pytest.mark.parametrize("protocol", ["legacy", "modern"])
def test_a_named_call_with_every_content_type_passes_call_content(protocol: str) -> None:
    code, doc = run_check("ok", "--call", "echo message=all-content", "--only", "tools.call-content",
                          protocol=protocol)
    entry = doc["checks"][0]
    assert (code, entry["id"], entry["status"]) == (0, "tools.call-content", "pass"), entry
    assert "every content block (5)" in entry["message"]
