"""`mcpprobe get-prompt`: the prompt must be listed, its declared arguments are checked before
sending, messages are shown by role and content type, and completions are asked only when declared.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from conftest import fixture_cmd, http_server, recorded, run_cli

from tests.e2e.invoke.test_call import PY, SDK, recording, sdk_cmd


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with http_server([PY, str(SDK), "--http", "0"]) as server_url:
        yield server_url


def test_expanded_messages_with_roles(url):
    result = run_cli(["get-prompt", "greet", "name=Ann", "style=pirate", url])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == ["A greeting", "[user]", "Greet Ann in a pirate style."]


def test_every_content_type_in_messages(url, tmp_path):
    result = run_cli(["get-prompt", "review", "code=print(1)", "language=python", url])
    assert result.exit_code == 0
    out = result.stdout
    assert "[assistant]" in out and "Looks fine at first sight." in out
    assert "[embedded resource] fixture://snippet" in out and "print(1)" in out
    assert "[image image/png, 73 bytes" in out
    saved = tmp_path / "saved"
    result = run_cli(["get-prompt", "review", "code=x", "language=go", "--save", str(saved), "--json", url])
    assert [entry["type"] for entry in result.json["saved"]] == ["image"]


def test_json_gives_the_raw_result(url):
    result = run_cli(["get-prompt", "plain", "--json", url])
    doc = result.json
    assert doc["command"] == "get-prompt" and doc["exitCode"] == 0
    assert doc["result"]["messages"] == [{"role": "user", "content": {"type": "text", "text": "Hello."}}]
    assert doc["request"]["params"]["name"] == "plain"
    assert doc["prompt"]["name"] == "plain"


def test_missing_required_arguments_are_listed_and_nothing_is_sent(tmp_path):
    record = tmp_path / "record.jsonl"
    result = run_cli(["get-prompt", "review", "--json", *recording(record), *sdk_cmd("--no-completions")])
    assert result.exit_code == 3
    error = result.json["error"]
    assert error["code"] == "invalid-arguments"
    assert error["detail"]["missing"] == ["code", "language"]
    assert "missing required arguments code, language" in error["message"]
    sent = recorded(record)
    assert "prompts/list" in sent and "prompts/get" not in sent


def test_unknown_arguments_are_refused_unless_forced(url):
    result = run_cli(["get-prompt", "greet", "name=Ann", "colour=red", url])
    assert result.exit_code == 3
    assert "unknown argument colour (declared: name, style)" in result.stderr
    result = run_cli(["get-prompt", "greet", "name=Ann", "colour=red", "--force", "--json", url])
    assert result.exit_code == 0
    assert result.json["request"]["params"]["arguments"] == {"name": "Ann", "colour": "red"}
    assert "forced" in result.codes()


def test_unknown_prompt_is_refused_with_suggestions(url):
    result = run_cli(["get-prompt", "gret", "name=Ann", url])
    assert result.exit_code == 3
    assert "did you mean 'greet'?" in result.stderr


def test_server_error_for_a_forced_prompt_is_exit_5(url):
    result = run_cli(["get-prompt", "greet", "--force", "--json", url])
    assert result.exit_code == 5
    assert result.json["error"]["detail"]["rpcCode"] == -32602


def test_completion_of_a_prompt_argument(url):
    result = run_cli(["get-prompt", "review", "--complete", "language=", "code=x", "--json", url])
    assert result.exit_code == 0
    doc = result.json
    assert doc["completion"]["values"] == ["python", "rust", "go", "javascript"]
    assert doc["request"]["params"] == {**doc["request"]["params"], "ref": {"type": "ref/prompt", "name": "review"},
                                        "argument": {"name": "language", "value": ""},
                                        "context": {"arguments": {"code": "x"}}}
    human = run_cli(["get-prompt", "greet", "--complete", "style=p", url])
    assert human.stdout.split() == ["pirate"]
    assert "1 value of 1" in human.stderr
    result = run_cli(["get-prompt", "greet", "--complete", "colour=", url])
    assert result.exit_code == 3 and "not a prompt argument" in result.stderr


def test_completion_needs_the_capability_and_sends_nothing(tmp_path):
    record = tmp_path / "record.jsonl"
    result = run_cli(["get-prompt", "greet", "--complete", "style=", *recording(record),
                      *sdk_cmd("--no-completions")])
    assert result.exit_code == 3
    assert "needs the 'completions' capability" in result.stderr
    assert "completion/complete" not in recorded(record)


def test_undeclared_prompts_capability_is_refused(tmp_path):
    record = tmp_path / "record.jsonl"
    result = run_cli(["get-prompt", "x", "--env", f"FIXTURE_RECORD={record}", "--", *fixture_cmd("tools-only")])
    assert result.exit_code == 3
    assert not {"prompts/list", "prompts/get"} & set(recorded(record))


def test_legacy_era_over_stdio():
    result = run_cli(["get-prompt", "greet", "name=Bo", "--protocol", "legacy", "--json", *sdk_cmd()])
    assert result.exit_code == 0
    assert result.json["era"] == "legacy"
    assert result.json["result"]["messages"][0]["content"]["text"] == "Greet Bo in a casual style."


@pytest.mark.interop
def test_everything_args_prompt(everything):
    node = ["--", "node", str(everything)]
    result = run_cli(["get-prompt", "args-prompt", "city=Paris", "state=TX", *node])
    assert result.exit_code == 0
    assert "Paris" in result.stdout
    result = run_cli(["get-prompt", "args-prompt", *node])
    assert result.exit_code == 3 and "missing required argument city" in result.stderr
    result = run_cli(["get-prompt", "completable-prompt", "--complete", "department=E", *node])
    assert result.exit_code == 0 and "Engineering" in result.stdout
