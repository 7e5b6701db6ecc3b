"""--trace: every message both ways with a timestamp and direction, HTTP status lines and headers,
and the user's secrets never written, even when the server echoes them back."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

from mcpprobe.safety.redact import Redactor
from mcpprobe.wire.trace import TraceWriter
from tests.conftest import fixture_cmd, fixture_http, run_cli

LINE = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z) (?:(\S+) )?(send|recv|http-send|http-recv) (.*)$")
SECRET = "s3cr3t-7f2a9c"


def _parse(text: str) -> list[tuple[str, str, str]]:
    out = []
    for line in text.splitlines():
        match = LINE.match(line)
        assert match, line
        out.append((match.group(2) or "", match.group(3), match.group(4)))
    return out


def test_stdio_trace_with_a_secret_echoed_by_the_server(tmp_path: Path) -> None:
    """The secret is an --env value and part of a root's path: it travels in roots/list (sent) and
    comes back in the tool descriptions of the `roots` scenario (received). Neither is written."""
    trace = tmp_path / "trace.log"
    root = tmp_path / f"project-{SECRET}"
    result = run_cli(["probe", "--trace", str(trace), "--env", f"TOKEN={SECRET}", "--root", str(root), "--json",
                      "--", *fixture_cmd("roots")])
    assert result.exit_code == 0, result.stderr
    text = trace.read_text()
    assert SECRET not in text and "[redacted]" in text
    events = _parse(text)
    directions = {d for _, d, _ in events}
    assert directions == {"send", "recv"}
    sent = [json.loads(p).get("method") for _, d, p in events if d == "send"]
    assert sent[:1] == ["server/discover"] and "tools/list" in sent
    received = [json.loads(p) for _, d, p in events if d == "recv"]
    assert any(m.get("method") == "roots/list" for m in received)
    assert any("[redacted]" in json.dumps(m) for m in received if "result" in m)
    assert SECRET not in result.stdout


def test_http_trace_to_stderr_masks_credential_headers() -> None:
    with fixture_http("full") as url:
        result = run_cli(["probe", url, "--trace", "-", "-H", f"Authorization: Bearer {SECRET}",
                          "-H", "Cookie: session=abc123456", "-H", "X-Api-Key: key-000111", "-H", "X-Plain: visible",
                          "--json"])
    assert result.exit_code == 0
    events = _parse("\n".join(line for line in result.stderr.splitlines() if LINE.match(line)))
    requests = [p for _, d, p in events if d == "http-send"]
    statuses = [p for _, d, p in events if d == "http-recv"]
    assert requests and statuses
    assert requests[0].startswith(f"POST {url} HTTP/1.1 ")
    headers = json.loads(requests[0].split(" ", 3)[3])
    assert headers["authorization"] == headers["cookie"] == headers["x-api-key"] == "[redacted]"
    assert headers["x-plain"] == "visible"
    assert re.match(r"HTTP/1\.[01] \d{3} ", statuses[0])
    assert any("content-type" in json.loads(status[status.index("{"):]) for status in statuses)
    for secret in (SECRET, "abc123456", "key-000111"):
        assert secret not in result.stderr + result.stdout


def test_fleet_trace_names_each_server(tmp_path: Path) -> None:
    config = tmp_path / "c.json"
    command = fixture_cmd("tools-only")
    config.write_text(json.dumps({"mcpServers": {n: {"command": command[0], "args": command[1:]} for n in "ab"}}))
    trace = tmp_path / "t.log"
    result = run_cli(["probe", "--all", "--config", str(config), "--trace", str(trace), "--protocol", "legacy",
                      "-v"])
    assert result.exit_code == 0
    assert {server for server, _, _ in _parse(trace.read_text())} == {"a", "b"}
    assert f"mcpprobe: config {config}: read" in result.stderr
    assert "mcpprobe: a: exit 0 in" in result.stderr


def test_writer_masks_secrets_in_any_form() -> None:
    stream = io.StringIO()
    writer = TraceWriter(stream, Redactor([SECRET, 'quo"ted-secret']))
    writer.tracer("srv")("recv", {"result": {"echo": SECRET, "other": 'quo"ted-secret'}})
    line = stream.getvalue()
    assert SECRET not in line and "quo" not in line and line.count("[redacted]") == 2
    assert _parse(line)[0][:2] == ("srv", "recv")


def test_unwritable_trace_is_a_usage_error(tmp_path: Path) -> None:
    result = run_cli(["probe", "--trace", str(tmp_path / "no" / "such" / "dir" / "t.log"), "--",
                      *fixture_cmd("full")])
    assert result.exit_code == 2 and "--trace" in result.stderr
