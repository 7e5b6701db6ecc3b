"""What a person sees when a command goes wrong: messages that name the fix."""

from __future__ import annotations

import sys

import pytest

from tests.conftest import run_cli


@pytest.mark.parametrize("args, suggestion", [
    (["probe", "npx", "-y", "pkg"], "mcpprobe probe -- npx -y pkg"),
    (["probe", "--timeout", "5", "--json", "npx", "-y", "pkg"], "mcpprobe probe --timeout 5 --json -- npx -y pkg"),
    (["list", "tools", "uvx", "--from", "x", "srv"], "mcpprobe list tools -- uvx --from x srv"),
])
def test_an_option_of_the_server_command_suggests_the_separator(args: list[str], suggestion: str) -> None:
    result = run_cli(args)
    assert result.exit_code == 2
    assert suggestion in result.stderr and "after '--'" in result.stderr


def test_an_unknown_option_of_mcpprobe_itself_is_reported_as_before() -> None:
    result = run_cli(["probe", "--bogus"])
    assert result.exit_code == 2 and "--bogus" in result.stderr and "after '--'" not in result.stderr


@pytest.mark.parametrize("word, url", [
    ("127.0.0.1:3101/mcp", "http://127.0.0.1:3101/mcp"),
    ("localhost:8000", "http://localhost:8000"),
    ("mcp.example.com/mcp", "https://mcp.example.com/mcp"),
])
def test_an_address_without_a_scheme_suggests_the_url(word: str, url: str) -> None:
    result = run_cli(["probe", word])
    assert result.exit_code == 2
    assert f"mcpprobe probe {url}" in result.stderr and "-- " + word not in result.stderr


def test_a_file_name_still_suggests_the_separator() -> None:
    result = run_cli(["probe", "server.py"])
    assert result.exit_code == 2 and "mcpprobe probe -- server.py" in result.stderr


def test_a_server_that_ends_before_the_handshake_gets_one_wording_and_an_environment_hint() -> None:
    """A server that ends saying nothing: the one guess left is the minimal environment it got."""
    silent = [sys.executable, "-c", "import sys; sys.exit(1)"]
    for protocol in ("legacy", "auto"):
        result = run_cli(["probe", "--json", "--protocol", protocol, "--", *silent])
        assert result.exit_code == 4
        error = result.json["error"]
        assert error["message"] == "the server process ended (exit status 1)"
        assert "-e KEY=VALUE" in error["detail"]["hint"] and "--inherit-env" in error["detail"]["hint"]
    human = run_cli(["probe", "--protocol", "legacy", "--", *silent])
    assert "hint: " in human.stderr and "--inherit-env" in human.stderr
    inherited = run_cli(["probe", "--json", "--inherit-env", "--protocol", "legacy", "--", *silent])
    assert "hint" not in inherited.json["error"]["detail"]  # it had everything already


def test_a_server_killed_by_a_signal_is_said_to_be_killed_not_to_have_an_exit_status() -> None:
    """Once "the server process ended (exit status killed by SIGKILL)": the phrase names the signal."""
    killed = [sys.executable, "-c",
              "import os, signal, sys; sys.stdin.readline(); os.kill(os.getpid(), signal.SIGKILL)"]
    result = run_cli(["probe", "--json", "--protocol", "legacy", "--", *killed])
    assert result.exit_code == 4
    assert result.json["error"]["message"] == "the server process ended (killed by SIGKILL)"
    assert result.json["error"]["detail"]["exitStatus"] == -9


def test_a_server_that_says_what_it_lacks_gets_that_hint_not_a_guess() -> None:
    from tests.conftest import fixture_cmd

    for protocol in ("legacy", "auto"):
        result = run_cli(["probe", "--json", "--protocol", protocol, "--", *fixture_cmd("crash-on-start")])
        assert result.exit_code == 4
        hint = result.json["error"]["detail"]["hint"]
        assert "cannot find the file /etc/nope.yaml" in hint and "--inherit-env" not in hint


def test_a_cold_launcher_that_times_out_suggests_more_time(tmp_path) -> None:
    # A stand-in for the first `npx -y pkg` on a fresh machine: it downloads for longer than allowed.
    npx = tmp_path / "npx"
    npx.write_text("#!/bin/sh\nexec sleep 60\n")
    npx.chmod(0o755)
    result = run_cli(["probe", "--json", "--connect-timeout", "1", "--protocol", "legacy", "--",
                      str(npx), "-y", "@example/server"])
    assert result.exit_code == 6
    assert "--connect-timeout 120" in result.json["error"]["detail"]["hint"]
    other = tmp_path / "my-server"
    other.write_text("#!/bin/sh\nexec sleep 60\n")
    other.chmod(0o755)
    plain = run_cli(["probe", "--json", "--connect-timeout", "1", "--protocol", "legacy", "--", str(other)])
    assert plain.exit_code == 6 and "hint" not in plain.json["error"]["detail"]


def test_structured_content_is_shown_once_and_as_exact_json() -> None:
    import json

    from tests.conftest import fixture_cmd

    result = run_cli(["call", "locate", "--force", "--yes", "--protocol", "legacy", "--", *fixture_cmd("tools-only")])
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert out.count("table.txt") == 1, out  # the text block that repeats it is not printed again
    assert "structuredContent (also sent as a text block):" in out
    shown = json.loads(out.split("structuredContent (also sent as a text block):", 1)[1])
    assert shown == {"path": "C:\\new\\table.txt", "note": "line one\nline two"}
    assert '"C:\\\\new\\\\table.txt"' in out and "\nline two" not in out


def test_a_watch_log_line_keeps_its_level_apart_from_the_message() -> None:
    from mcpprobe.render.formats import renderer
    from mcpprobe.render.interface import Format, View, WatchEvent

    shown = [renderer(Format.HUMAN)(WatchEvent({"event": "log", "kind": "server", "level": level,
                                                "data": f"{level.title()}-level message"}), View(width=200)).text()
             for level in ("emergency", "info")]
    assert "emergency Emergency-level message" in shown[0], shown
    assert "info      Info-level message" in shown[1], shown


def test_a_forced_list_does_not_say_nothing_was_sent() -> None:
    from tests.conftest import fixture_cmd

    result = run_cli(["list", "prompts", "--force", "--protocol", "legacy", "--", *fixture_cmd("tools-only")])
    assert "nothing sent" not in result.stdout
    assert "not declared; sent with --force and answered -32601" in result.stdout
    assert "list prompts" in result.stderr + result.stdout and "(1 request)" in result.stdout


def test_the_header_and_the_timing_count_pages_the_same_way() -> None:
    from tests.conftest import fixture_cmd

    result = run_cli(["list", "tools", "--protocol", "legacy", "--", *fixture_cmd("error-page2")])
    assert result.exit_code == 1
    assert "3 items, incomplete, 1 page read, page 2 failed" in result.stdout
    assert "list tools" in result.stdout and "(2 requests)" in result.stdout and "p.)" not in result.stdout


def _junk_server(tmp_path, lines: int) -> list[str]:
    import base64
    import json
    import sys

    from tests.conftest import ROOT

    junk = "".join(f"debug: step {n}\n" for n in range(lines)).encode()
    answer = (b'{"jsonrpc":"2.0","id":{ID},"result":{"protocolVersion":"2025-11-25","capabilities":{},'
              b'"serverInfo":{"name":"junk","version":"1"}}}\n')
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"frames": [base64.b64encode(junk + answer).decode()], "then": "answer"}))
    return [sys.executable, str(ROOT / "tests" / "fixtures" / "garbage_server.py"), str(plan)]


def test_stray_output_is_one_finding_with_a_count_and_its_evidence(tmp_path) -> None:
    server = _junk_server(tmp_path, 25)
    doc = run_cli(["probe", "--json", "--protocol", "legacy", "--", *server]).json
    stray = [f for f in doc["findings"] if f["code"] == "non-protocol-output"]
    assert len(stray) == 1, stray
    assert stray[0]["detail"]["count"] == 25 and stray[0]["detail"]["sample"] == "debug: step 0"
    assert "debug: step 19" in stray[0]["detail"]["samples"]
    human = run_cli(["probe", "--protocol", "legacy", "--", *server])
    assert human.stdout.count("non-protocol-output") == 1
    assert "(25 times)" in human.stdout and 'sample "debug: step 0"' in human.stdout


def test_findings_show_their_evidence_and_identical_ones_collapse() -> None:
    from mcpprobe.findings import Finding
    from mcpprobe.render.cells import Safe
    from mcpprobe.render.human import collapsed, finding_line
    from mcpprobe.safety.redact import Redactor

    safe = Safe(Redactor(()))
    cursor = Finding("list-incomplete", "page 2 returned a cursor that was already used", kind="tools",
                     detail={"cursor": "c-2", "page": 2})
    assert 'cursor "c-2"' in finding_line(cursor, safe).plain
    item = Finding("invalid-item", "item 3 is broken", kind="tools", detail={"id": "fetch", "index": 3})
    assert 'id "fetch"' in finding_line(item, safe).plain
    same = [Finding("duplicate-item", "x repeats", kind="tools")] * 3
    ((first, count),) = collapsed(same)
    assert count == 3 and "(×3)" in finding_line(first, safe, count).plain


def test_a_basic_challenge_says_to_send_an_authorization_header_first() -> None:
    import sys

    from tests.conftest import ROOT, http_server

    with http_server([sys.executable, str(ROOT / "tests" / "fixtures" / "http_oddities.py"), "basic-auth"]) as url:
        result = run_cli(["probe", "--json", "--protocol", "legacy", url])
    assert result.exit_code == 7
    codes = [f["code"] for f in result.json["findings"] if f["code"].startswith("auth-")]
    assert codes[0] == "auth-required", codes  # before the metadata lookups that the 401 caused
    assert "send an Authorization header" in result.json["findings"][0]["message"]
    assert "Authorization: Basic" in result.json["error"]["message"]


def test_call_names_the_fix_for_a_command_or_an_address_among_its_arguments() -> None:
    command = run_cli(["call", "add", "a=2", "uvx", "some-server", "--stdio"])
    assert command.exit_code == 2 and "-- uvx some-server --stdio" in command.stderr
    address = run_cli(["call", "add", "a=2", "127.0.0.1:3101/mcp"])
    assert address.exit_code == 2 and "http://127.0.0.1:3101/mcp" in address.stderr
