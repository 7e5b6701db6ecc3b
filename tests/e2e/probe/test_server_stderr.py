"""A dying stdio server's stderr: its first error survives a usage text or a stack trace after it,
what is left out is counted, the hint comes from what the server said, and memory stays bounded.

The servers are real processes (tests/fixtures/stderr_server.py) that write what real servers
write when they cannot start (kubernetes-mcp-server, slack-mcp-server's npm launcher, ...).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys

from conftest import PY, ROOT, checked, run_cli

from mcpprobe.wire.stderrlog import (
    CARRY_BYTES,
    HEAD_BYTES,
    NOTABLE_LINES,
    TAIL_BYTES,
    StderrKeeper,
    read_said,
)

SERVER = ROOT / "tests" / "fixtures" / "stderr_server.py"


def _probe(scenario: str, *options: str, env: dict[str, str] | None = None) -> tuple[dict, str]:
    """The JSON document and the human stderr of a probe of one scenario (both must exit 4)."""
    doc = run_cli(["probe", "--json", "--protocol", "legacy", *options, "--", PY, str(SERVER), scenario], env=env)
    human = run_cli(["probe", "--protocol", "legacy", *options, "--", PY, str(SERVER), scenario], env=env)
    assert doc.exit_code == 4 and human.exit_code == 4, human.stderr
    return doc.json, human.stderr


def _server_lines(scenario: str) -> list[str]:
    proc = subprocess.run([PY, str(SERVER), scenario], capture_output=True, text=True, timeout=30)
    return [line for line in proc.stderr.splitlines() if line.strip()]


def _accounted(entries: list) -> int:
    """Lines shown plus lines counted as left out: every non-blank line the server wrote."""
    return sum(1 if isinstance(e, str) else e["elided"] for e in entries)


def test_an_error_then_sixty_lines_of_usage_keeps_the_error_and_counts_what_is_left_out() -> None:
    doc, human = _probe("usage")
    written = _server_lines("usage")
    stderr = doc["serverStderr"]
    assert stderr[0] == "Error: no current-context is set"
    assert stderr[-1] == written[-1]  # and the end of the usage text
    assert sum(isinstance(e, str) for e in stderr) == 20
    left_out = [e for e in stderr if isinstance(e, dict)]
    assert len(left_out) == 1 and _accounted(stderr) == len(written)
    assert "first and last lines of the server's stderr (38 lines left out):" in human
    assert "  | Error: no current-context is set\n" in human
    assert "  | … 38 lines left out …\n" in human
    hint = doc["error"]["detail"]["hint"]
    assert "usage text" in hint and "no current-context is set" in hint
    assert "minimal environment" not in hint  # nothing the server said points there
    assert "hint: the server printed its usage text" in human
    assert "KUBECONFIG" not in hint  # not set here: nothing to pass


def test_a_variable_set_here_that_the_server_mentions_but_did_not_get_is_named() -> None:
    """KUBECONFIG is not in what a stdio server inherits; a Kubernetes server that says "kubeconfig"
    (in its usage text) while it is set here most likely missed it."""
    doc, _ = _probe("usage", env={"KUBECONFIG": "/tmp/fixture-kubeconfig"})
    hint = doc["error"]["detail"]["hint"]
    assert "no current-context is set" in hint
    assert 'KUBECONFIG is set in mcpprobe\'s environment and the server mentions it' in hint
    assert '-e KUBECONFIG="$KUBECONFIG"' in hint
    passed, _ = _probe("usage", "-e", "KUBECONFIG=/tmp/fixture-kubeconfig", env={"KUBECONFIG": "/tmp/x"})
    assert "KUBECONFIG" not in passed["error"]["detail"]["hint"]


def test_a_required_variable_named_first_is_kept_and_named_in_the_hint() -> None:
    doc, human = _probe("variable")
    assert any("SLACK_MCP_XOXP_TOKEN" in e for e in doc["serverStderr"] if isinstance(e, str))
    assert _accounted(doc["serverStderr"]) == len(_server_lines("variable"))
    hint = doc["error"]["detail"]["hint"]
    assert "SLACK_MCP_XOXP_TOKEN, SLACK_MCP_XOXC_TOKEN, SLACK_MCP_XOXD_TOKEN" in hint
    assert "-e NAME=VALUE" in hint and "set in mcpprobe's environment" not in hint
    assert "hint: the server asks for the environment variables SLACK_MCP_XOXP_TOKEN" in human


def test_a_required_variable_set_here_but_not_passed_says_how_to_pass_it() -> None:
    secret = "xoxp-fixture-value-never-shown"
    doc, human = _probe("variable", env={"SLACK_MCP_XOXP_TOKEN": secret})
    hint = doc["error"]["detail"]["hint"]
    assert 'SLACK_MCP_XOXP_TOKEN is set in mcpprobe\'s environment' in hint
    assert '-e SLACK_MCP_XOXP_TOKEN="$SLACK_MCP_XOXP_TOKEN"' in hint
    assert secret not in hint and secret not in human


def test_a_missing_file_is_named_in_the_hint() -> None:
    doc, human = _probe("missing-file")
    fatal = "2026-09-01T10:00:05Z FATAL open /nonexistent/mcp-fixture/config.toml: no such file or directory"
    assert fatal in doc["serverStderr"]
    assert _accounted(doc["serverStderr"]) == len(_server_lines("missing-file"))
    hint = doc["error"]["detail"]["hint"]
    assert "cannot find the file /nonexistent/mcp-fixture/config.toml" in hint
    assert f"  | {fatal}\n" in human


def test_an_error_then_a_stack_trace_keeps_the_error_and_the_end() -> None:
    doc, human = _probe("stack-trace")
    stderr = doc["serverStderr"]
    assert stderr[0].startswith("Error: connect ECONNREFUSED 127.0.0.1:5432")
    assert stderr[-1] == "Node.js v20.19.2"
    assert _accounted(stderr) == len(_server_lines("stack-trace")) == 47
    assert "  | Error: connect ECONNREFUSED" in human and "lines left out" in human
    # It said what went wrong, and it was not its environment: no guess about one.
    assert "hint" not in doc["error"]["detail"]


def test_an_error_after_the_first_lines_shown_is_still_shown() -> None:
    """Sixteen lines in, past the first lines a budget of 20 shows: kept, as it looks like an error."""
    doc, human = _probe("buried")
    stderr = doc["serverStderr"]
    assert "[start] error: the option --root is required" in stderr
    assert sum(isinstance(e, str) for e in stderr) == 20
    assert [e for e in stderr if isinstance(e, dict)] == [{"elided": 6}, {"elided": 50}]
    assert "the option --root is required" in doc["error"]["detail"]["hint"]


def test_a_server_that_says_nothing_still_gets_the_environment_hint() -> None:
    doc = run_cli(["probe", "--json", "--protocol", "legacy", "--", PY, "-c", "import sys; sys.exit(3)"]).json
    assert "minimal environment" in doc["error"]["detail"]["hint"]
    assert doc["serverStderr"] == []


def test_a_flood_of_stderr_keeps_memory_bounded_and_the_error_in_its_middle() -> None:
    """300 MB of stderr, one error line after the first 20 MB: mcpprobe's memory does not grow
    with it, and the error is shown with the lines around it counted."""
    small_rss, _ = _rss_run(1)
    big_rss, doc = _rss_run(20, after=280)
    assert doc["exitCode"] == 4
    assert "flood: fatal: the error that matters, in the middle" in doc["serverStderr"]
    assert doc["serverStderr"][-1] == "flood: exiting"
    assert sum(isinstance(e, str) for e in doc["serverStderr"]) == 20  # the last lines too, not only its last write
    assert big_rss - small_rss < 40 * 1024, (small_rss, big_rss)  # KiB: well under the 300 MB written


def _rss_run(before: int, after: int | None = None) -> tuple[int, dict]:
    """mcpprobe's peak resident memory (KiB) and its document, for a flood of `before` MB, an
    error line, and `after` MB (as many as before by default)."""
    import json

    argv = [PY, "-m", "mcpprobe", "probe", "--json", "--protocol", "legacy", "--",
            PY, str(SERVER), "flood", str(before), str(before if after is None else after)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0  # reaped above
    return usage.ru_maxrss, checked(json.loads(out))


def test_the_keeper_is_bounded_and_accounts_for_every_line_however_the_chunks_fall() -> None:
    rng = random.Random(22)
    lines = [f"line {n} {'x' * rng.randint(0, 300)}\n" if n % 7 else "\n" for n in range(20000)]
    lines[9000] = "line 9000: fatal: the one that matters\n"
    data = "".join(lines).encode()
    for chunk in (65536, 4096, 77, None):
        keeper = StderrKeeper()
        at = 0
        while at < len(data):
            size = chunk or rng.randint(1, 70000)
            keeper.feed(data[at:at + size])
            at += size
        assert len(keeper._head) <= HEAD_BYTES
        assert sum(map(len, keeper._tail)) <= TAIL_BYTES
        assert len(keeper._carry) <= CARRY_BYTES and len(keeper._notable) <= NOTABLE_LINES
        shown = keeper.lines(20)
        # Blank lines: never shown, counted only in the middle (where nothing is read line by line).
        nonblank = sum(1 for line in lines if line.strip())
        assert nonblank <= _accounted(shown) <= len(lines)
        assert "line 9000: fatal: the one that matters" in shown
        assert shown[0].startswith("line 1 ") and shown[-1].startswith("line 19998 ")


def test_what_the_server_said_is_read_for_variables_files_and_usage() -> None:
    said = read_said(["Error: GITHUB_PERSONAL_ACCESS_TOKEN environment variable is not set"])
    assert said.variables == ("GITHUB_PERSONAL_ACCESS_TOKEN",)
    assert read_said(["KeyError: 'OPENAI_API_KEY'"]).variables == ("OPENAI_API_KEY",)
    assert read_said(["Missing required environment variable: BRAVE_API_KEY"]).variables == ("BRAVE_API_KEY",)
    assert read_said(["Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'x'"]).variables == ()
    assert read_said(["reading HOME_DIR from the environment"]).variables == ()  # not asked for
    node = read_said(["Error: ENOENT: no such file or directory, open '/srv/app/config.json'"])
    assert node.missing_file and node.path == "/srv/app/config.json"
    python = read_said(["FileNotFoundError: [Errno 2] No such file or directory: 'settings.yaml'"])
    assert python.path == "settings.yaml"
    assert read_said(["usage: server.py [-h] --root DIR", "server.py: error: the following arguments are "
                      "required: --root"]).usage
    assert read_said(["Usage of /usr/bin/go-server:", "  -addr string"]).usage
    assert read_said(["all fine", "still fine"]) == read_said([])


if __name__ == "__main__":  # pragma: no cover
    sys.exit("run with pytest")
