"""`mcpprobe call`: checked against the capability, the complete tool list and the inputSchema
before anything is sent; every result shape, both eras, progress, confirmation and Ctrl-C.

All against real servers: tests/fixtures/sdk_server.py (SDK low-level server, stdio and HTTP),
tests/fixtures/fixture_server.py for undeclared capabilities, and server-everything.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import ROOT, Result, fixture_cmd, http_server, recorded, run_cli

from mcpprobe.cli.main import cli

PY = sys.executable
SDK = ROOT / "tests" / "fixtures" / "sdk_server.py"
# The commands as a real process.
RUNNER = [PY, "-m", "mcpprobe"]


def sdk_cmd(*extra: str) -> list[str]:
    return ["--", PY, str(SDK), *extra]


def recording(path: Path) -> list[str]:
    return ["--env", f"SDK_FIXTURE_RECORD={path}"]


def invoke(args: list[str], *, input: str | bytes | None = None) -> tuple[int, bytes, str]:
    """Like run_cli, with stdin and the raw bytes of stdout."""
    result = CliRunner().invoke(cli, args, input=input, catch_exceptions=False)
    assert "Traceback" not in result.stderr, result.stderr
    return result.exit_code, result.stdout_bytes, result.stderr


def finding(doc: dict[str, Any], code: str) -> dict[str, Any]:
    found = [f for f in doc["findings"] if f["code"] == code]
    assert found, f"no {code} finding in {doc['findings']}"
    return found[0]


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with http_server([PY, str(SDK), "--http", "0"]) as server_url:
        yield server_url


def call_json(url: str, *args: str) -> tuple[Result, dict[str, Any]]:
    result = run_cli(["call", *args, "--json", url])
    return result, result.json


# ----- success, coercion, argument sources -----


def test_typed_tool_with_output_schema(url):
    result, doc = call_json(url, "add", "a=2", "b=40")
    assert result.exit_code == 0, result.stderr
    assert doc["command"] == "call" and doc["ok"] is True and doc["sent"] is True
    assert doc["request"]["method"] == "tools/call"
    assert doc["request"]["params"]["arguments"] == {"a": 2, "b": 40}
    assert doc["result"]["structuredContent"] == {"sum": 42}
    assert doc["structuredContent"] == {"sum": 42} and doc["isError"] is False
    assert doc["confirmation"] == "read-only"
    assert doc["catalog"]["tools"] == {"state": "complete", "listCompleted": True, "count": 14, "pages": 4}
    assert doc["tool"]["annotations"]["readOnlyHint"] is True
    assert [t["phase"] for t in doc["timings"]][-1] == "call"
    assert not [f for f in doc["findings"] if f["severity"] == "error"]


def test_key_value_coerced_by_schema(url):
    result, doc = call_json(url, "configure", "enabled=yes", "ratio=0.5", "count=3", 'tags=["a","b"]',
                            'options={"x": 1}', "nothing=null", "label=123", "either=7", "--yes")
    assert result.exit_code == 0, result.stderr
    expected = {"enabled": True, "ratio": 0.5, "count": 3, "tags": ["a", "b"], "options": {"x": 1},
                "nothing": None, "label": "123", "either": 7}
    assert doc["request"]["params"]["arguments"] == expected
    assert json.loads(doc["result"]["content"][0]["text"]) == expected
    assert doc["confirmation"] == "--yes"


def test_not_read_only_without_a_terminal_is_refused_and_recorded_as_non_interactive(url):
    result, doc = call_json(url, "delete_everything")
    assert result.exit_code == 3
    assert doc["confirmation"] == "non-interactive" and doc["sent"] is False
    assert doc["error"]["code"] == "not-confirmed" and "--yes" in doc["error"]["message"]


def test_args_from_json_file_and_stdin_with_pairs_on_top(url, tmp_path):
    path = tmp_path / "args.json"
    path.write_text('{"a": 1, "b": 2}')
    code, out, err = invoke(["call", "add", "--args", f"@{path}", "b=5", "--json", url])
    assert code == 0, err
    assert json.loads(out)["structuredContent"] == {"sum": 6}
    code, out, err = invoke(["call", "add", "--args", "-", "--json", url], input='{"a": 10, "b": 20}')
    assert code == 0, err
    assert json.loads(out)["structuredContent"] == {"sum": 30}
    code, out, err = invoke(["call", "add", "--args", '{"a": 3, "b": 4}', "--json", url])
    assert json.loads(out)["structuredContent"] == {"sum": 7}


@pytest.mark.parametrize("args, message", [
    (["--args", "[1, 2]"], "expected a JSON object"),
    (["--args", "[1, 2]"], "expected a JSON object, got an array"),  # JSON's word, not Python's "list"
    (["--args", '"text"'], "expected a JSON object, got a string"),
    (["--args", "{nope"], "not valid JSON"),
    (["--args", "@/nonexistent/args.json"], "cannot read"),
    (["a:={bad"], "expects JSON"),
    (["not-a-pair"], "neither KEY=VALUE nor a server URL"),
])
def test_bad_argument_syntax_is_usage_exit_2(url, args, message):
    code, out, err = invoke(["call", "add", *args, url])
    assert code == 2
    assert message in err


# ----- refusals: exit 3, nothing sent -----


def test_invalid_arguments_are_refused_and_nothing_is_sent(tmp_path):
    record = tmp_path / "record.jsonl"
    result = run_cli(["call", "add", "a=x", "--json", *recording(record), *sdk_cmd()])
    assert result.exit_code == 3
    doc = result.json
    assert doc["sent"] is False
    assert doc["error"]["code"] == "invalid-arguments"
    violations = doc["error"]["detail"]["violations"]
    assert {"path": "$.a", "message": '"x" is not of type "integer"'} in violations
    assert any(v["path"] == "$" and '"b" is a required property' in v["message"] for v in violations)
    sent = recorded(record)
    assert "tools/list" in sent and "tools/call" not in sent


def test_unknown_tool_is_refused_with_suggestions_and_nothing_is_sent(tmp_path):
    record = tmp_path / "record.jsonl"
    result = run_cli(["call", "ech", "message=hi", *recording(record), *sdk_cmd()])
    assert result.exit_code == 3
    assert "did you mean 'echo'?" in result.stderr
    assert "tools/call" not in recorded(record)
    # every page was read before deciding: the list has 4 pages
    assert recorded(record).count("tools/list") == 4


def test_force_sends_an_unknown_tool_and_reports_the_rpc_error(url):
    result, doc = call_json(url, "no_such_tool", "--force", "--yes")  # not listed: not known read-only
    assert result.exit_code == 5
    assert finding(doc, "forced")["severity"] == "warning"
    assert doc["error"]["code"] == "rpc-error"
    assert doc["error"]["detail"]["rpcCode"] == -32602


def test_force_sends_invalid_arguments(url):
    result, doc = call_json(url, "echo", "message:=5", "--force")
    assert doc["sent"] is True
    assert "forced" in result.codes()


def test_undeclared_tools_capability_is_refused_and_nothing_is_sent(tmp_path):
    record = tmp_path / "record.jsonl"
    result = run_cli(["call", "echo", "message=hi", "--json", "--env", f"FIXTURE_RECORD={record}",
                      "--", *fixture_cmd("none")])
    assert result.exit_code == 3
    assert result.json["error"]["code"] == "not-declared"
    assert not {"tools/list", "tools/call"} & set(recorded(record))


def test_schema_dialect_comes_from_dollar_schema(url):
    # draft-07 `dependencies` is not a 2020-12 keyword: it is enforced only because of $schema.
    result, doc = call_json(url, "draft07", "a=1")
    assert result.exit_code == 3
    assert doc["error"]["detail"]["dialect"] == "http://json-schema.org/draft-07/schema#"
    assert '"b" is a dependency of "a"' in doc["error"]["message"]
    assert call_json(url, "draft07", "a=1", "b=2")[0].exit_code == 0


def test_unusable_schema_is_a_warning_and_the_call_goes_on(url):
    result, doc = call_json(url, "odd_schema", "x=1")
    assert result.exit_code == 0, result.stderr
    warning = [f for f in doc["findings"] if f["code"] == "unusable-schema"]
    assert warning and warning[0]["severity"] == "warning"
    assert "not validated" in warning[0]["message"]


# ----- results -----


def test_output_schema_mismatch_is_found_beyond_the_first_page(url):
    result, doc = call_json(url, "wrong_output")
    assert result.exit_code == 1
    f = finding(doc, "output-schema-mismatch")
    assert f["detail"]["violations"] == [{"path": "$.count", "message": '"three" is not of type "integer"'}]
    result, doc = call_json(url, "missing_output")
    assert result.exit_code == 1
    assert "no structuredContent" in finding(doc, "output-schema-mismatch")["message"]


def test_is_error_is_exit_1_with_the_error_text(url):
    result = run_cli(["call", "fail", url])
    assert result.exit_code == 1
    assert "the disk is full" in result.stdout
    assert "isError" in result.stderr and "tool-error" in result.stderr
    result, doc = call_json(url, "fail")
    assert doc["isError"] is True and finding(doc, "tool-error")["severity"] == "error"


def test_json_rpc_error_is_exit_5_with_code_and_message(url):
    result, doc = call_json(url, "rpc_fail")
    assert result.exit_code == 5
    assert doc["error"]["code"] == "rpc-error"
    assert "-32603" in doc["error"]["message"] and "internal failure in rpc_fail" in doc["error"]["message"]


def test_every_content_type_is_rendered_and_binary_never_dumped(url, tmp_path):
    result = run_cli(["call", "media", url])
    assert result.exit_code == 0
    out = result.stdout
    assert "Here is everything:" in out
    assert "[image image/png, 73 bytes" in out and "[audio audio/wav, 52 bytes" in out
    assert "[resource link] fixture://readme" in out
    assert "[embedded resource] fixture://readme" in out and "Fixture readme." in out
    assert "64 bytes of binary data" in out
    assert "iVBOR" not in out  # no base64 PNG
    saved = tmp_path / "saved"
    result = run_cli(["call", "media", "--save", str(saved), "--json", url])
    files = {entry["type"]: Path(entry["path"]) for entry in result.json["saved"]}
    assert files["image"].read_bytes().startswith(b"\x89PNG")
    assert files["audio"].read_bytes().startswith(b"RIFF")
    assert files["resource"].stat().st_size == 64


def test_progress_resets_the_timeout(url):
    # 4 steps of 0.3 s take 1.2 s; the timeout is 0.5 s, reset by each progress notification.
    result, doc = call_json(url, "slow", "steps=4", "delay_ms=300", "--timeout", "0.5")
    assert result.exit_code == 0, doc["error"]
    assert [e["progress"] for e in doc["progress"]] == [1, 2, 3, 4]
    assert doc["progress"][0]["total"] == 4 and doc["progress"][0]["message"] == "step 1 of 4"
    result, doc = call_json(url, "slow", "steps=2", "delay_ms=800", "--timeout", "0.5")
    assert result.exit_code == 6
    assert doc["error"]["code"] == "timeout"


# ----- input required (2026-07-28 InputRequiredResult; legacy server requests) -----


@pytest.mark.parametrize("protocol", ["modern", "legacy"])
def test_elicitation_is_refused_unless_asked(url, protocol):
    result, doc = call_json(url, "confirm_action", "--protocol", protocol)
    assert result.exit_code == 1
    f = finding(doc, "input-required-refused")
    assert "did not declare the 'elicitation' capability" in f["message"]
    assert doc["client"]["capabilities"] == {}
    assert doc["inputRequests"][0]["method"] == "elicitation/create"


@pytest.mark.parametrize("protocol", ["modern", "legacy"])
@pytest.mark.parametrize("mode, answer", [
    ("decline", {"action": "decline"}),
    ("defaults", {"action": "accept", "content": {"confirm": False, "reason": "none given"}}),
])
def test_elicit_declares_and_answers(url, protocol, mode, answer):
    result, doc = call_json(url, "confirm_action", "--protocol", protocol, "--elicit", mode)
    assert result.exit_code == 0, doc["findings"]
    assert doc["client"]["capabilities"] == {"elicitation": {"form": {}}}
    assert doc["result"]["content"][0]["text"] == f"elicitation answer: {json.dumps(answer, sort_keys=True)}"
    assert doc["inputRequests"][0]["answer"] == answer
    assert finding(doc, "input-required")["severity"] == "info"
    if protocol == "modern":
        # the retry carried the answer and the echoed requestState
        assert doc["request"]["params"]["inputResponses"] == {"confirm": answer}
        assert doc["request"]["params"]["requestState"] == "confirm-1"


def test_a_server_that_keeps_asking_for_input_is_answered_but_recorded_only_so_far(url):
    """A server may ask for input again and again during one call: each request is answered, the first
    MAX_KEPT_REQUESTS are recorded, the rest counted in one finding, so memory stays bounded."""
    from mcpprobe.operations.input import MAX_KEPT_REQUESTS

    result, doc = call_json(url, "confirm_action", f"times={MAX_KEPT_REQUESTS + 20}", "--protocol", "legacy",
                            "--elicit", "decline")
    assert result.exit_code == 0, doc["findings"]
    assert doc["result"]["content"][0]["text"] == 'elicitation answer: {"action": "decline"}'
    assert len(doc["inputRequests"]) == MAX_KEPT_REQUESTS
    past = [f for f in doc["findings"] if f["code"] == "input-required" and "notKept" in f.get("detail", {})]
    assert [f["detail"]["notKept"] for f in past] == [20]
    assert len([f for f in doc["findings"] if f["code"] == "input-required"]) == MAX_KEPT_REQUESTS + 1


@pytest.mark.parametrize("protocol", ["modern", "legacy"])
def test_sampling_is_always_refused(url, protocol):
    result, doc = call_json(url, "ask_model", "--protocol", protocol, "--elicit", "decline")
    assert result.exit_code == 1
    assert "never declares 'sampling'" in finding(doc, "input-required-refused")["message"]


# ----- confirmation on a terminal, Ctrl-C -----


def test_confirmation_decision():
    from mcpprobe.operations.checks import confirmation_needed

    read_only = {"name": "t", "annotations": {"readOnlyHint": True}}
    writer = {"name": "t", "annotations": {"destructiveHint": True}}
    assert confirmation_needed(read_only, yes=False, interactive=True) == "read-only"
    assert confirmation_needed(writer, yes=False, interactive=True) == "prompt"
    assert confirmation_needed({"name": "t"}, yes=False, interactive=True) == "prompt"
    assert confirmation_needed(writer, yes=True, interactive=True) == "--yes"
    assert confirmation_needed(writer, yes=False, interactive=False) == "non-interactive"


def run_on_terminal(argv: list[str], answer: str | None, timeout: float = 30,
                    env: dict[str, str] | None = None, enter: str = "\r") -> tuple[int, str]:
    """Run `argv` with stdin, stdout and stderr on a pseudo-terminal; type `answer` (then `enter`) at
    the question."""
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.chdir(ROOT)
        os.execvpe(argv[0], argv, {**os.environ, "COLUMNS": "200", **(env or {})})
    output = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if not ready:
                continue
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            output += chunk
            if answer is not None and b"Call it?" in output:
                os.write(fd, (answer + enter).encode())
                answer = None
    finally:
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), output.decode(errors="replace")


@pytest.mark.parametrize("answer, code", [("n", 3), ("y", 0)])
def test_terminal_asks_before_a_tool_not_marked_read_only(tmp_path, answer, code):
    record = tmp_path / "record.jsonl"
    status, output = run_on_terminal(
        [*RUNNER, "call", "delete_everything", *recording(record), *sdk_cmd()], answer)
    assert "is not marked read-only. It claims to be destructive. Call it? [y/N]" in output
    assert "destructiveHint: true" in output and "not verified by mcpprobe" in output
    assert status == code, output
    if answer == "n":
        assert "not confirmed" in output
        assert "tools/call" not in recorded(record)
    else:
        assert "Would delete everything" in output
        assert "tools/call" in recorded(record)


def test_end_of_input_at_the_question_is_no_and_ends_its_line(tmp_path):
    record = tmp_path / "record.jsonl"
    status, output = run_on_terminal(
        [*RUNNER, "call", "delete_everything", *recording(record), *sdk_cmd()], "\x04", enter="")  # Ctrl-D
    assert status == 3, output
    assert "tools/call" not in recorded(record)
    lines = re.sub(r"\x1b\[[0-9;]*m", "", output).splitlines()
    question = next(line for line in lines if "Call it? [y/N]" in line)
    assert "not confirmed" not in question, output  # the error is not glued to the question
    assert any(line.startswith("error: ") and "not confirmed" in line for line in lines), output


def interrupt_slow_call(record, *extra: str) -> tuple[subprocess.Popen, str, str]:
    """Start a slow tool call, wait until the server has it and mcpprobe has received progress (its
    trace shows the notification), then Ctrl-C."""
    trace = record.with_name("trace.log")
    proc = subprocess.Popen([*RUNNER, "call", "slow", "steps=100", "delay_ms=100", "--trace", str(trace), *extra,
                             *recording(record), *sdk_cmd()],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def progress_received() -> bool:
        lines = trace.read_text().splitlines() if trace.exists() else []
        return any(" recv " in line and '"notifications/progress"' in line for line in lines)

    try:
        deadline = time.monotonic() + 60
        while not ("tools/call" in recorded(record) and progress_received()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "tools/call" in recorded(record) and progress_received()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc, out, err


def test_ctrl_c_cancels_the_request_and_exits_130(tmp_path):
    record = tmp_path / "record.jsonl"
    proc, _, stderr = interrupt_slow_call(record)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    entries = [json.loads(line) for line in record.read_text().splitlines()]
    call_id = next(e["id"] for e in entries if e.get("method") == "tools/call")
    cancels = [e for e in entries if e.get("method") == "notifications/cancelled"]
    assert cancels and cancels[0]["params"]["requestId"] == call_id


# ----- eras and transports -----


def test_stdio_legacy_era(tmp_path):
    result = run_cli(["call", "echo", "message=over stdio", "--protocol", "legacy", "--json", *sdk_cmd()])
    assert result.exit_code == 0
    doc = result.json
    assert doc["era"] == "legacy"
    assert doc["result"]["content"] == [{"type": "text", "text": "over stdio"}]
    assert "_meta" not in doc["request"]["params"] or "io.modelcontextprotocol/protocolVersion" not in \
        doc["request"]["params"]["_meta"]


def test_modern_request_carries_the_envelope(url):
    result, doc = call_json(url, "echo", "message=hi")
    assert doc["era"] == "modern"
    assert doc["request"]["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"


def test_text_is_sanitized_in_the_preview(url):
    result = run_cli(["call", "echo", "message=\x1b[31mred", url])
    assert result.exit_code == 0
    assert "\x1b" not in result.stderr  # the preview shows the escape made visible


# ----- server-everything -----


@pytest.mark.interop
def test_everything_get_sum_and_echo(everything):
    result = run_cli(["call", "get-sum", "a=2", "b=40", "--json", "--", "node", str(everything)])
    assert result.exit_code == 0
    assert "42" in result.json["result"]["content"][0]["text"]
    result = run_cli(["call", "echo", "message=hello", "--", "node", str(everything)])
    assert result.exit_code == 0 and "hello" in result.stdout
    result = run_cli(["call", "get-structured-content", "location=Paris", "--", "node", str(everything)])
    assert result.exit_code == 3 and "is not one of" in result.stderr


def test_ctrl_c_with_json_still_shows_what_was_sent(tmp_path):
    """Interrupted is exit 130, and the document still carries the request and the progress so far."""
    record = tmp_path / "record.jsonl"
    proc, out, stderr = interrupt_slow_call(record, "--json")
    assert proc.returncode == 130, stderr
    doc = json.loads(out)
    assert doc["exitCode"] == 130 and doc["interrupted"] is True
    assert doc["sent"] is True and doc["request"]["method"] == "tools/call"
    assert doc["result"] is None and doc["progress"]
