"""`mcpprobe check --suite-fixtures`: the conformance suite's fixtures, judged where the server lists
them (tests/fixtures/suite_fixture_server.py, a real SDK server over stdio and streamable HTTP): the
right fixture passes every `suite.*` check, each broken mode fails exactly its check and nothing
else, nothing is sent without the flag or for a fixture that is not listed, the tools are called
only by the one rule for calling tools (--yes), and sampling and elicitation are declared only with
the flag."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import ROOT, checked, http_server, run_cli

SUITE_SERVER = ROOT / "tests" / "fixtures" / "suite_fixture_server.py"
CHECK_SERVER = ROOT / "tests" / "fixtures" / "check_server.py"
BAD = ("fail", "warn", "error")
LEGACY_ONLY = ("suite.tools-call-with-logging", "suite.tools-call-sampling", "suite.tools-call-elicitation")
NOVEMBER_ONLY = ("suite.elicitation-sep1034-defaults", "suite.elicitation-sep1330-enums")

# mode -> (the check it breaks, the protocol it is run at)
SUITE_BROKEN = {
    "simple-text-empty": ("suite.tools-call-simple-text", "modern"),
    "simple-text-needs-args": ("suite.tools-call-simple-text", "2025-11-25"),
    "image-no-mime": ("suite.tools-call-image", "2025-11-25"),
    "audio-mp3": ("suite.tools-call-audio", "modern"),
    "embedded-no-mime": ("suite.tools-call-embedded-resource", "2025-11-25"),
    "mixed-no-image": ("suite.tools-call-mixed-content", "modern"),
    "error-not-flagged": ("suite.tools-call-error", "2025-11-25"),
    "logging-two": ("suite.tools-call-with-logging", "2025-11-25"),
    "progress-two": ("suite.tools-call-with-progress", "2025-11-25"),
    "progress-flat": ("suite.tools-call-with-progress", "modern"),
    "sampling-skipped": ("suite.tools-call-sampling", "2025-06-18"),
    "elicitation-skipped": ("suite.tools-call-elicitation", "2025-11-25"),
    "sep1034-no-default": ("suite.elicitation-sep1034-defaults", "2025-11-25"),
    "sep1330-titled-enum": ("suite.elicitation-sep1330-enums", "2025-11-25"),
    "json-schema-stripped": ("suite.json-schema-2020-12", "modern"),
    "text-resource-empty": ("suite.resources-read-text", "2025-11-25"),
    "binary-resource-empty": ("suite.resources-read-binary", "modern"),
    "template-ignores-id": ("suite.resources-templates-read", "2025-11-25"),
    "prompt-simple-empty": ("suite.prompts-get-simple", "modern"),
    "prompt-args-ignored": ("suite.prompts-get-with-args", "2025-11-25"),
    "prompt-resource-missing": ("suite.prompts-get-embedded-resource", "modern"),
    "prompt-image-missing": ("suite.prompts-get-with-image", "2025-11-25"),
    "completion-error": ("suite.completion-complete", "modern"),
    # 2026-07-28 only: the input-required-result scenarios (SEP-2322)
    "mrtr-elicitation-no-content": ("suite.input-required-result-basic-elicitation", "modern"),
    "mrtr-sampling-at-once": ("suite.input-required-result-basic-sampling", "modern"),
    "mrtr-roots-as-elicitation": ("suite.input-required-result-basic-list-roots", "modern"),
    "mrtr-no-state": ("suite.input-required-result-request-state", "modern"),
    "mrtr-two-inputs": ("suite.input-required-result-multiple-input-requests", "modern"),
    "mrtr-same-state": ("suite.input-required-result-multi-round", "modern"),
    "mrtr-missing-error": ("suite.input-required-result-missing-input-response", "modern"),
    "mrtr-prompt-at-once": ("suite.input-required-result-non-tool-request", "modern"),
    "mrtr-no-result-type": ("suite.input-required-result-result-type", "modern"),
    "mrtr-tampered-accepted": ("suite.input-required-result-tampered-state", "modern"),
    "mrtr-capabilities-ignored": ("suite.input-required-result-capability-check", "modern"),
    "mrtr-extra-error": ("suite.input-required-result-ignore-extra-params", "modern"),
    "mrtr-invalid-accepted": ("suite.input-required-result-validate-input", "modern"),
    "mrtr-list-input-required": ("suite.input-required-result-unsupported-methods", "modern"),
}
# The SHOULDs of SEP-2322's error handling: a warning, exit 0.
SHOULD_MODES = ("mrtr-missing-error", "mrtr-extra-error", "mrtr-invalid-accepted")
# Where one wrong answer breaks more than one rule, as in the suite: a first answer without resultType
# also fails basic-elicitation (the suite's R() reads resultType) and the MUST that every result says it;
# a prompts/list that answers input-required lists no prompts.
ALSO = {"mrtr-no-result-type": {"suite.input-required-result-basic-elicitation", "lifecycle.result-type"},
        "mrtr-list-input-required": {"listing.complete"}}
MRTR_IDS = tuple(check_id for mode, (check_id, _) in SUITE_BROKEN.items() if mode.startswith("mrtr-"))
SUITE_BROKEN_IDS = {check_id for check_id, _ in SUITE_BROKEN.values()}
NOT_BROKEN = ("ok", "sep1034-huge", "mrtr-many-inputs")


def run_suite_check(target: list[str], *options: str, protocol: str) -> tuple[int, dict]:
    result = run_cli(["check", "--json", "--timeout", "10", "--protocol", protocol, *options, *target])
    assert result.stdout, result.stderr
    return result.exit_code, checked(json.loads(result.stdout))


def stdio(mode: str = "ok", record: Path | None = None) -> list[str]:
    env = [f"--env=SDK_FIXTURE_RECORD={record}"] if record else []
    return [*env, "--", sys.executable, str(SUITE_SERVER), mode]


def statuses(doc: dict) -> dict[str, str]:
    return {entry["id"]: entry["status"] for entry in doc["checks"]}


def suite_statuses(doc: dict) -> dict[str, str]:
    return {cid: status for cid, status in statuses(doc).items() if cid.startswith("suite.")}


def received(record: Path) -> list[dict]:
    return [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []


def test_every_suite_check_has_a_breaking_mode() -> None:
    from mcpprobe.check.catalogue import CHECKS
    from tests.fixtures.suite_fixture_server import MODES

    assert {check.id for check in CHECKS if check.family == "suite"} == SUITE_BROKEN_IDS
    assert set(SUITE_BROKEN) == set(MODES) - set(NOT_BROKEN)


@pytest.mark.parametrize("protocol", ["2025-06-18", "2025-11-25", "modern"])
def test_the_right_fixture_passes_every_suite_check_over_stdio(protocol: str) -> None:
    code, doc = run_suite_check(stdio(), "--suite-fixtures", "--yes", protocol=protocol)
    found = suite_statuses(doc)
    assert len(found) == 35
    version = doc["protocolVersion"]
    not_here = {*(LEGACY_ONLY if version == "2026-07-28" else ()),
                *(MRTR_IDS if version != "2026-07-28" else ()),
                *(NOVEMBER_ONLY if version != "2025-11-25" else ()),
                *(("suite.json-schema-2020-12",) if version == "2025-06-18" else ())}
    assert {cid for cid, status in found.items() if status == "n/a"} == not_here
    assert {cid: s for cid, s in found.items() if cid not in not_here and s != "pass"} == {}, doc["checks"]
    assert not [e for e in doc["checks"] if e["status"] in BAD], [e for e in doc["checks"] if e["status"] in BAD]
    assert code == 0


@pytest.mark.parametrize("protocol", ["2025-11-25", "modern"])
def test_the_right_fixture_passes_every_suite_check_over_streamable_http(protocol: str) -> None:
    with http_server([sys.executable, str(SUITE_SERVER), "ok", "--http", "0"]) as url:
        code, doc = run_suite_check([url], "--suite-fixtures", "--yes", "--only", "suite", protocol=protocol)
    found = suite_statuses(doc)
    assert {cid: s for cid, s in found.items() if s not in ("pass", "n/a")} == {}, doc["checks"]
    assert sum(1 for s in found.values() if s == "pass") == (21 if protocol == "2025-11-25" else 16 + len(MRTR_IDS))
    assert code == 0


@pytest.mark.parametrize("mode", sorted(SUITE_BROKEN))
def test_each_suite_check_fails_on_its_mode_and_nothing_else(mode: str) -> None:
    check_id, protocol = SUITE_BROKEN[mode]
    code, doc = run_suite_check(stdio(mode), "--suite-fixtures", "--yes", protocol=protocol)
    found = statuses(doc)
    entry = next(e for e in doc["checks"] if e["id"] == check_id)
    if mode in SHOULD_MODES:
        assert entry["status"] == "warn", entry
        assert "SHOULD" in entry["message"] or "did not complete" in entry["message"], entry
    else:
        assert entry["status"] == "fail", entry
        assert any(words in entry["message"] for words in ("the suite's fixture contract", "MUST increase",
                                                           "MUST NOT send")), entry
    assert {cid: s for cid, s in found.items() if cid != check_id and s in BAD} == {
        cid: "fail" for cid in ALSO.get(mode, ())}
    assert code == (0 if mode in SHOULD_MODES else 1)


def test_a_broken_fixture_fails_over_streamable_http_too() -> None:
    with http_server([sys.executable, str(SUITE_SERVER), "sep1330-titled-enum", "--http", "0"]) as url:
        code, doc = run_suite_check([url], "--suite-fixtures", "--yes", "--only", "suite", protocol="2025-11-25")
    bad = {cid: s for cid, s in suite_statuses(doc).items() if s not in ("pass", "n/a")}
    assert bad == {"suite.elicitation-sep1330-enums": "fail"}
    assert code == 1


def test_without_the_flag_nothing_is_sent_and_nothing_more_is_declared(tmp_path: Path) -> None:
    record = tmp_path / "received.jsonl"
    code, doc = run_suite_check(stdio(record=record), protocol="2025-11-25")
    found = suite_statuses(doc)
    assert {found.pop(cid) for cid in MRTR_IDS} == {"n/a"}  # 2026-07-28 only
    assert set(found.values()) == {"skipped"}
    assert {e["message"] for e in doc["checks"] if e["id"] in found} == {
        "the conformance suite's fixtures are judged only with --suite-fixtures; nothing sent"}
    messages = received(record)
    assert not [m for m in messages if m.get("method") == "tools/call"]
    # (the other checks read and expand what is listed, as always; nothing of the suite's own requests)
    assert not [m for m in messages if m.get("method") == "resources/read"
                and m["params"]["uri"] == "test://template/123/data"]
    assert not [m for m in messages if m.get("method") == "prompts/get" and "testValue1" in json.dumps(m)]
    initialize = next(m for m in messages if m.get("method") == "initialize")
    assert not {"sampling", "elicitation"} & set(initialize["params"]["capabilities"])
    assert code == 0


def test_with_the_flag_sampling_and_elicitation_are_declared_and_answered(tmp_path: Path) -> None:
    record = tmp_path / "received.jsonl"
    code, doc = run_suite_check(stdio(record=record), "--suite-fixtures", "--yes", "--only",
                                "suite.tools-call-sampling,suite.tools-call-elicitation", protocol="2025-11-25")
    assert suite_statuses(doc) == {"suite.tools-call-sampling": "pass", "suite.tools-call-elicitation": "pass"}
    messages = received(record)
    initialize = next(m for m in messages if m.get("method") == "initialize")
    assert {"sampling", "elicitation"} <= set(initialize["params"]["capabilities"])
    # each of the server's two requests was answered (a response, not left hanging)
    assert len([m for m in messages if "response" in m]) >= 2
    detail = {e["id"]: e["detail"] for e in doc["checks"]}
    assert detail["suite.tools-call-sampling"]["requests"] == ["sampling/createMessage"]
    assert detail["suite.tools-call-elicitation"]["requests"] == ["elicitation/create"]
    assert code == 0


def test_the_fixture_tools_are_called_only_by_the_rule_for_calling_tools(tmp_path: Path) -> None:
    # Not marked read-only, no terminal, no --yes: refused, nothing sent, the check an error (exit 3);
    # the resources and prompts, which call no tool, are judged all the same.
    record = tmp_path / "received.jsonl"
    code, doc = run_suite_check(stdio(record=record), "--suite-fixtures", protocol="2025-11-25")
    found = suite_statuses(doc)
    tool_checks = {cid for cid in found if cid.startswith(("suite.tools-call", "suite.elicitation"))}
    assert {found[cid] for cid in tool_checks} == {"error"}
    entry = next(e for e in doc["checks"] if e["id"] == "suite.tools-call-simple-text")
    assert "pass --yes" in entry["message"] and entry["detail"]["exitCode"] == 3
    assert found["suite.resources-read-text"] == found["suite.prompts-get-simple"] == "pass"
    assert not [m for m in received(record) if m.get("method") == "tools/call"]
    # nor what would have prepared a call (the suite's logging/setLevel debug before test_tool_with_logging)
    assert not [m for m in received(record) if m.get("method") == "logging/setLevel"
                and m["params"]["level"] == "debug"]
    assert code == 3


def test_a_server_without_the_fixtures_is_not_judged() -> None:
    code, doc = run_suite_check(["--", sys.executable, str(CHECK_SERVER), "ok"], "--suite-fixtures", "--yes",
                                protocol="2025-11-25")
    found = suite_statuses(doc)
    assert {found.pop(cid) for cid in MRTR_IDS} == {"n/a"}  # 2026-07-28 only
    assert set(found.values()) == {"skipped"}
    simple = next(e for e in doc["checks"] if e["id"] == "suite.tools-call-simple-text")
    assert simple["message"] == "the server does not list the suite's fixture for this scenario; nothing sent"
    assert simple["detail"] == {"fixture": "test_simple_text", "kind": "tool"}
    assert code == 0


def test_a_server_without_tools_sends_no_tool_request(tmp_path: Path) -> None:
    record = tmp_path / "received.jsonl"
    result = run_cli(["check", "--json", "--timeout", "10", "--protocol", "legacy", "--suite-fixtures", "--yes",
                      f"--env=CHECK_RECORD={record}", "--env=CHECK_CAPS=resources", "--", sys.executable,
                      str(CHECK_SERVER), "ok"])
    doc = checked(json.loads(result.stdout))
    simple = next(e for e in doc["checks"] if e["id"] == "suite.tools-call-simple-text")
    assert simple["status"] == "skipped" and "did not declare 'tools'" in simple["message"]
    assert not [line for line in record.read_text().splitlines() if '"tools/' in line]
    assert result.exit_code == 0


def test_a_schema_larger_than_what_is_kept_is_not_judged() -> None:
    code, doc = run_suite_check(stdio("sep1034-huge"), "--suite-fixtures", "--yes", "--only",
                                "suite.elicitation-sep1034-defaults", protocol="2025-11-25")
    entry = doc["checks"][0]
    assert entry["status"] == "skipped", entry
    assert "more than mcpprobe keeps (65536); not judged" in entry["message"]
    assert len(json.dumps(doc)) < 50_000  # the schema is nowhere in the document
    assert code == 0


def test_the_logging_fixture_gets_the_lowest_level_first_as_the_suite_asks(tmp_path: Path) -> None:
    record = tmp_path / "received.jsonl"
    code, doc = run_suite_check(stdio(record=record), "--suite-fixtures", "--yes", "--only",
                                "suite.tools-call-with-logging", protocol="2025-11-25")
    entry = doc["checks"][0]
    assert (entry["status"], entry["detail"]["logMessages"]) == ("pass", 3), entry
    methods = [(m.get("method"), (m.get("params") or {}).get("level") or (m.get("params") or {}).get("name"))
               for m in received(record) if m.get("method") in ("logging/setLevel", "tools/call")]
    assert methods == [("logging/setLevel", "debug"), ("tools/call", "test_tool_with_logging")]
    assert code == 0


@pytest.mark.parametrize("mode", ["ok", "logging-two", "progress-flat", "sampling-skipped", "elicitation-skipped",
                                  "sep1034-no-default", "simple-text-needs-args", "template-ignores-id",
                                  "mrtr-capabilities-ignored", "mrtr-two-inputs"])
def test_stdio_and_streamable_http_give_the_same_verdicts(mode: str) -> None:
    # The requests and notifications of a call come on the call's own stream over HTTP: the same verdicts.
    protocol = SUITE_BROKEN[mode][1] if mode in SUITE_BROKEN else "2025-11-25"
    _, over_stdio = run_suite_check(stdio(mode), "--suite-fixtures", "--yes", "--only", "suite", protocol=protocol)
    with http_server([sys.executable, str(SUITE_SERVER), mode, "--http", "0"]) as url:
        _, over_http = run_suite_check([url], "--suite-fixtures", "--yes", "--only", "suite", protocol=protocol)
    assert suite_statuses(over_http) == suite_statuses(over_stdio)
    failed = {cid for cid, status in suite_statuses(over_http).items() if status == "fail"}
    assert failed == ({SUITE_BROKEN[mode][0]} if mode in SUITE_BROKEN else set())


# ----- 2026-07-28: the input-required-result scenarios (SEP-2322) -----


def _calls_of(messages: list[dict], name: str) -> list[dict]:
    return [m["params"] for m in messages if m.get("method") in ("tools/call", "prompts/get")
            and m["params"].get("name") == name]


def test_input_required_rounds_are_answered_as_the_flag_declares(tmp_path: Path) -> None:
    # Roots are declared (the one fixed root) only with the flag; elicitation declined, sampling a fixed
    # text, roots/list that root; the requestState echoed unchanged; a retry is a new request (new id).
    record = tmp_path / "received.jsonl"
    code, doc = run_suite_check(stdio(record=record), "--suite-fixtures", "--yes", "--only",
                                "suite.input-required-result-multiple-input-requests,"
                                "suite.input-required-result-basic-list-roots", protocol="modern")
    assert set(suite_statuses(doc).values()) == {"pass"}, doc["checks"]
    messages = received(record)
    first, retry = _calls_of(messages, "test_input_required_result_multiple_inputs")
    caps = first["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    assert {"roots", "sampling", "elicitation"} <= set(caps)
    responses = retry["inputResponses"]
    assert responses["user_name"] == {"action": "decline"}
    assert responses["greeting"]["model"] == "mcpprobe-fixed"
    assert responses["client_roots"]["roots"][0]["uri"] == "file:///test/root"
    assert "inputResponses" not in first and isinstance(retry["requestState"], str)
    ids = [m["id"] for m in messages if m.get("method") == "tools/call"]
    assert len(ids) == len(set(ids))
    assert code == 0


def test_without_the_flag_no_root_is_declared_and_no_input_required_fixture_is_called(tmp_path: Path) -> None:
    record = tmp_path / "received.jsonl"
    code, doc = run_suite_check(stdio(record=record), protocol="modern")
    found = {cid: s for cid, s in suite_statuses(doc).items() if cid in MRTR_IDS}
    assert set(found.values()) == {"skipped"} and len(found) == len(MRTR_IDS)
    messages = received(record)
    assert not [m for m in messages if m.get("method") == "tools/call"]
    # (the prompts family expands every listed prompt, as always; never a retry with input responses)
    assert not [m for m in messages if "inputResponses" in (m.get("params") or {})]
    caps = [m["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] for m in messages
            if isinstance(m.get("params"), dict) and "_meta" in m["params"]]
    assert caps and not any({"roots", "sampling", "elicitation"} & set(c) for c in caps)
    assert code == 0


def test_input_required_fixtures_are_called_only_by_the_rule_for_calling_tools(tmp_path: Path) -> None:
    record = tmp_path / "received.jsonl"
    code, doc = run_suite_check(stdio(record=record), "--suite-fixtures", "--only", "suite", protocol="modern")
    found = suite_statuses(doc)
    tools = set(MRTR_IDS) - {"suite.input-required-result-non-tool-request",
                             "suite.input-required-result-unsupported-methods"}
    assert {found[cid] for cid in tools} == {"error"}
    entry = next(e for e in doc["checks"] if e["id"] == "suite.input-required-result-tampered-state")
    assert "pass --yes" in entry["message"] and entry["detail"]["exitCode"] == 3
    # the prompt and the two lists call no tool: judged all the same
    assert found["suite.input-required-result-non-tool-request"] == "pass"
    assert found["suite.input-required-result-unsupported-methods"] == "pass"
    assert not [m for m in received(record) if m.get("method") == "tools/call"]
    assert code == 3


def test_the_crafted_requests_are_sent_as_the_suite_sends_them(tmp_path: Path) -> None:
    record = tmp_path / "received.jsonl"
    code, doc = run_suite_check(stdio(record=record), "--suite-fixtures", "--yes", "--only",
                                "suite.input-required-result-tampered-state,suite.input-required-result-capability-check,"
                                "suite.input-required-result-validate-input", protocol="modern")
    assert set(suite_statuses(doc).values()) == {"pass"}, doc["checks"]
    messages = received(record)
    first, tampered = _calls_of(messages, "test_input_required_result_tampered_state")
    assert "requestState" not in first and tampered["requestState"].endswith("-TAMPERED")
    (narrowed,) = _calls_of(messages, "test_input_required_result_capabilities")
    assert narrowed["_meta"]["io.modelcontextprotocol/clientCapabilities"] == {"sampling": {}}
    invalid = [c.get("inputResponses", "absent") for c in _calls_of(messages, "test_input_required_result_elicitation")]
    assert invalid == [{"user_name": 12345}, None]
    assert code == 0


def test_a_broken_input_required_fixture_fails_over_streamable_http_too() -> None:
    with http_server([sys.executable, str(SUITE_SERVER), "mrtr-same-state", "--http", "0"]) as url:
        code, doc = run_suite_check([url], "--suite-fixtures", "--yes", "--only", "suite", protocol="modern")
    bad = {cid: s for cid, s in suite_statuses(doc).items() if s not in ("pass", "n/a")}
    assert bad == {"suite.input-required-result-multi-round": "fail"}
    assert code == 1


def test_more_input_requests_than_mcpprobe_answers_are_not_answered(tmp_path: Path) -> None:
    record = tmp_path / "received.jsonl"
    code, doc = run_suite_check(stdio("mrtr-many-inputs", record=record), "--suite-fixtures", "--yes", "--only",
                                "suite.input-required-result-multiple-input-requests", protocol="modern")
    entry = doc["checks"][0]
    assert entry["status"] == "skipped", entry
    assert "asked for 40 inputs in one round, more than mcpprobe answers (16)" in entry["message"]
    assert len(_calls_of(received(record), "test_input_required_result_multiple_inputs")) == 1  # no retry
    assert code == 0


def test_a_modern_server_without_the_input_required_fixtures_is_not_judged_on_them() -> None:
    # (the unsupported-methods scenario needs no fixture: two lists, judged on any server)
    sdk_server = ROOT / "tests" / "fixtures" / "sdk_server.py"
    code, doc = run_suite_check(["--", sys.executable, str(sdk_server)], "--suite-fixtures", "--yes", "--only",
                                ",".join(MRTR_IDS), protocol="modern")
    found = suite_statuses(doc)
    assert found.pop("suite.input-required-result-unsupported-methods") == "pass"
    assert set(found.values()) == {"skipped"} and len(found) == len(MRTR_IDS) - 1
    entry = next(e for e in doc["checks"] if e["id"] == "suite.input-required-result-non-tool-request")
    assert entry["detail"] == {"fixture": "test_input_required_result_prompt", "kind": "prompt"}
    assert code == 0


def test_roots_named_with_root_are_the_ones_answered(tmp_path: Path) -> None:
    record = tmp_path / "received.jsonl"
    code, doc = run_suite_check(stdio(record=record), "--suite-fixtures", "--yes", "--root", "file:///srv/project",
                                "--only", "suite.input-required-result-basic-list-roots", protocol="modern")
    assert suite_statuses(doc) == {"suite.input-required-result-basic-list-roots": "pass"}, doc["checks"]
    _, retry = _calls_of(received(record), "test_input_required_result_list_roots")
    assert [r["uri"] for r in retry["inputResponses"]["client_roots"]["roots"]] == ["file:///srv/project"]
    assert code == 0


def test_a_fixture_tool_named_with_call_too_is_called_once(tmp_path: Path) -> None:
    """--call and --suite-fixtures naming the same tool: one tools/call of it in the run (the server's
    own record counts them). The suite's check judges --call's call when it sent the suite's arguments
    (the sampling request it made included); with other arguments, or for the logging fixture (whose
    log messages the suite watches at its own level), it is skipped, saying why."""
    record = tmp_path / "received.jsonl"
    names = ("test_simple_text", "test_sampling", "test_elicitation", "test_tool_with_logging")
    code, doc = run_suite_check(
        stdio(record=record), "--suite-fixtures", "--yes", "--call", "test_simple_text",
        "--call", "test_sampling prompt='Test prompt for sampling'", "--call", "test_elicitation message=other",
        "--call", "test_tool_with_logging", "--only", "tools.call-named,suite.tools-call-simple-text,"
        "suite.tools-call-sampling,suite.tools-call-elicitation,suite.tools-call-with-logging", protocol="2025-11-25")
    calls = [m["params"]["name"] for m in received(record) if m.get("method") == "tools/call"]
    assert sorted(calls) == sorted(names), calls
    found = statuses(doc)
    assert found == {"tools.call-named": "pass", "suite.tools-call-simple-text": "pass",
                     "suite.tools-call-sampling": "pass", "suite.tools-call-elicitation": "skipped",
                     "suite.tools-call-with-logging": "skipped"}, doc["checks"]
    entry = {e["id"]: e for e in doc["checks"]}
    assert entry["suite.tools-call-sampling"]["detail"]["requests"] == ["sampling/createMessage"]
    assert "not with the arguments the suite sends" in entry["suite.tools-call-elicitation"]["message"]
    assert "once per run" in entry["suite.tools-call-with-logging"]["message"]
    assert entry["suite.tools-call-simple-text"]["evidence"]  # the call it judged, as its evidence
    assert code == 0


def test_an_input_required_fixture_named_with_call_too_is_not_called_again(tmp_path: Path) -> None:
    """The same for a 2026-07-28 input-required scenario: its rounds are its own, so a tool --call
    already called is not run by the scenario (skipped, saying why): the tools/call requests of the run
    are those of --call alone, as the server's record shows."""
    tool = "test_input_required_result_tampered_state"

    def tool_calls(*only: str) -> tuple[int, dict]:
        record = tmp_path / f"received-{len(only)}.jsonl"
        _, doc = run_suite_check(stdio(record=record), "--suite-fixtures", "--yes", "--call", tool,
                                 "--only", ",".join(only), protocol="modern")
        return len([m for m in received(record) if m.get("method") == "tools/call"]), doc

    alone, _ = tool_calls("tools.call-named")
    both, doc = tool_calls("tools.call-named", "suite.input-required-result-tampered-state")
    assert alone >= 1 and both == alone
    entry = next(e for e in doc["checks"] if e["id"] == "suite.input-required-result-tampered-state")
    assert entry["status"] == "skipped" and "called once per run" in entry["message"], entry
