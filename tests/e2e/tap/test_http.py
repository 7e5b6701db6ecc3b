"""The HTTP tap (`--listen`): the Python SDK's client over streamable HTTP through the tap to server-everything,
the negotiated MCP-Protocol-Version header checked, Authorization masked, loopback only by default."""

from __future__ import annotations

import json
import signal
import subprocess
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import BIND_LOOPBACK, PY, ROOT, http_server

FIXTURES = ROOT / "tests" / "fixtures" / "tap"
TAP = [PY, "-m", "mcpprobe", "tap"]
TOKEN = "tap-bearer-secret-0123456789"


@pytest.fixture
def upstream(everything: Path) -> Iterator[str]:
    env = {"PORT": "0", "NODE_OPTIONS": f"--require {BIND_LOOPBACK}", "BIND_LOOPBACK_ANNOUNCE": "1"}
    with http_server(["node", str(everything), "streamableHttp"], env=env) as base:
        yield f"{base}/mcp"


@contextmanager
def tapped(tmp_path: Path, url: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    proc = subprocess.Popen([*TAP, "--listen", "127.0.0.1:0", "--record", str(tmp_path / "r.jsonl"), "--log",
                             str(tmp_path / "live.log"), "--report", str(tmp_path / "report.json"), "--format", "json",
                             url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stderr is not None
    try:
        where = None
        for _ in range(50):
            text = (tmp_path / "live.log").read_text() if (tmp_path / "live.log").exists() else ""
            if "listening on " in text:
                where = text.split("listening on ", 1)[1].split(",", 1)[0]
                break
            import time

            time.sleep(0.2)
        assert where is not None, proc.stderr.read() if proc.poll() is not None else "not listening"
        yield where, proc
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(30)


def _post(url: str, message: dict[str, Any], headers: dict[str, str]) -> tuple[dict[str, str], bytes]:
    request = urllib.request.Request(url, data=json.dumps(message).encode(), method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers})
    with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310 - loopback, the test's own tap
        return dict(answer.headers.items()), answer.read()


def test_sdk_client_over_streamable_http_through_the_tap(tmp_path: Path, upstream: str) -> None:
    with tapped(tmp_path, upstream) as (where, proc):
        client = subprocess.run([PY, str(FIXTURES / "sdk_http_host.py"), f"{where}/mcp"], capture_output=True,
                                text=True, timeout=90, cwd=ROOT)
        assert client.returncode == 0, client.stderr
        assert "ok " in client.stderr
    assert proc.returncode == 0
    assert proc.stdout is not None and proc.stdout.read() == ""
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["findings"] == []
    entries = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    methods = [e["msg"].get("method") for e in entries if e.get("dir") == "c2s"]
    assert methods[:2] == ["initialize", "notifications/initialized"] and "tools/call" in methods
    answers = [e for e in entries if e.get("dir") == "s2c"]
    assert any(e["msg"].get("result", {}).get("content") for e in answers)  # the call's answer, from its stream
    assert all(e["http"]["path"] == "/mcp" for e in entries if "dir" in e)


def test_a_request_without_the_negotiated_version_header_and_authorization_masked(tmp_path: Path,
                                                                                   upstream: str) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with tapped(tmp_path, upstream) as (where, _proc):
        url = f"{where}/mcp"
        headers, _ = _post(url, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}, auth)
        session = {"Mcp-Session-Id": headers.get("mcp-session-id") or headers.get("Mcp-Session-Id", ""), **auth}
        _post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"},
              {**session, "MCP-Protocol-Version": "2025-06-18"})
        _post(url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, session)  # no MCP-Protocol-Version
    report = json.loads((tmp_path / "report.json").read_text())
    assert [(f["code"], f["detail"]["side"]) for f in report["findings"]] == [
        ("client-protocol-version-header", "client")]
    live_session = session["Mcp-Session-Id"]
    assert live_session
    for name in ("r.jsonl", "live.log", "report.json"):
        assert TOKEN not in (tmp_path / name).read_text(), name
        assert live_session not in (tmp_path / name).read_text(), name  # a handle on a live session: its digest only
    entries = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert any(e.get("http", {}).get("authorization") == "[redacted]" for e in entries)


def test_a_client_that_ends_its_session_and_starts_another_is_not_said_to_reuse_ids(tmp_path: Path,
                                                                                     upstream: str) -> None:
    """Two runs of a client, one after the other, each ending its session with DELETE: the second starts its
    ids at 1 again (its server/discover, before any initialize), in a new session. The judge once kept one
    connection across the DELETE and called the client wrong ("request id 1 used again in the same
    session")."""
    with tapped(tmp_path, upstream) as (where, _proc):
        for command in (["probe"], ["list", "tools"]):
            run = subprocess.run([PY, "-m", "mcpprobe", *command, f"{where}/mcp"],
                                 capture_output=True, text=True, timeout=90, cwd=ROOT)
            assert run.returncode == 0, run.stderr
    entries = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert [e["event"] for e in entries if e.get("event") == "delete"] == ["delete", "delete"]
    ids = [e["msg"].get("id") for e in entries if e.get("dir") == "c2s" and "id" in e["msg"]]
    assert ids.count(1) == 2  # the same id in each session: the case judged
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["findings"] == []
    assert report["connections"] == 2  # the refused server/discover before each session is none


def test_in_the_2026_07_28_era_an_answered_id_may_come_again(tmp_path: Path) -> None:
    """2026-07-28 has no session: "The request ID MUST NOT match the ID of any other request the sender
    has issued and not yet received a response for." Two clients in turn (no DELETE: no session to end)
    each start their ids at 1; the judge once called the second client wrong for each id it reused."""
    sdk = [PY, str(ROOT / "tests" / "fixtures" / "sdk_server.py"), "--http", "0"]
    with http_server(sdk) as url, tapped(tmp_path, url) as (where, _proc):
        for command in (["probe"], ["list", "tools"]):
            run = subprocess.run([PY, "-m", "mcpprobe", *command, "--protocol", "modern", f"{where}/mcp"],
                                 capture_output=True, text=True, timeout=90, cwd=ROOT)
            assert run.returncode == 0, run.stderr
    entries = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    ids = [e["msg"].get("id") for e in entries if e.get("dir") == "c2s" and "id" in e["msg"]]
    assert ids.count(1) == 2 and not any(e.get("event") == "delete" for e in entries)
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["findings"] == []


def test_listen_is_loopback_only_unless_asked(tmp_path: Path) -> None:
    proc = subprocess.run([*TAP, "--listen", "0.0.0.0:0", "http://127.0.0.1:9/mcp"], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert proc.returncode == 2
    assert "not a loopback address" in proc.stderr and "--allow-remote" in proc.stderr
    proc = subprocess.run([*TAP, "--listen", "127.0.0.1:0", "not-a-url"], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert proc.returncode == 2 and "takes one server URL" in proc.stderr


def test_legacy_sse_through_the_tap_and_ctrl_c_ends_it_with_a_stream_open(tmp_path: Path, everything: Path) -> None:
    """mcpprobe's own client over legacy SSE (a GET stream that never ends, POSTs answered on it): the probe
    succeeds, its answers are judged from the stream, and SIGINT still ends the tap."""
    env = {"PORT": "0", "NODE_OPTIONS": f"--require {BIND_LOOPBACK}", "BIND_LOOPBACK_ANNOUNCE": "1"}
    with http_server(["node", str(everything), "sse"], env=env) as base, tapped(tmp_path, f"{base}/sse") as (where, _):
        probe = subprocess.run([*[PY, "-m", "mcpprobe"], "probe", "--json", f"{where}/sse"], capture_output=True,
                               text=True, timeout=90, cwd=ROOT)
        assert probe.returncode == 0, probe.stderr
        assert json.loads(probe.stdout)["kinds"]["tools"]["count"] > 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["findings"] == []
    assert report["fromServer"] >= 5
    entries = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert any(e.get("event") == "endpoint" for e in entries)


def test_typescript_sdk_client_over_streamable_http_through_the_tap(tmp_path: Path, upstream: str,
                                                                     everything: Path) -> None:
    with tapped(tmp_path, upstream) as (where, proc):
        client = subprocess.run(["node", str(FIXTURES / "ts_host.cjs"), str(everything.parents[3]), f"{where}/mcp"],
                                capture_output=True, text=True, timeout=90, cwd=ROOT)
        assert client.returncode == 0, client.stderr
        assert "ok " in client.stderr
    assert proc.returncode == 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["findings"] == []
    assert report["fromClient"] >= 6 and report["fromServer"] >= 5


def test_bodies_streams_and_headers_pass_byte_for_byte(tmp_path: Path) -> None:
    """What the client sent is what the server got, and what the server sent (JSON with odd spacing and UTF-8,
    an event stream in pieces with a comment and CRLF) is what the client read; Mcp-Session-Id comes back,
    Last-Event-ID and DELETE go through."""
    from tests.fixtures.tap.bytes_http import JSON, STREAM

    folder = tmp_path / "server"
    folder.mkdir()
    with http_server([PY, str(FIXTURES / "bytes_http.py"), str(folder)]) as base, \
            tapped(tmp_path, f"{base}/mcp") as (where, _proc):
        sent = [b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26",'
                b'"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}',
                b'{"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"stream": true}}']
        answers = []
        for body in sent:
            request = urllib.request.Request(f"{where}/mcp", data=body, method="POST", headers={
                "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
            with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310 - loopback
                assert answer.headers["Mcp-Session-Id"] == "s-1"
                answers.append(answer.read())
        request = urllib.request.Request(f"{where}/mcp", headers={"Accept": "text/event-stream",
                                                                  "Last-Event-ID": "7", "Mcp-Session-Id": "s-1"})
        with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310 - loopback
            assert b"notifications/message" in answer.read()
        request = urllib.request.Request(f"{where}/mcp", method="DELETE", headers={"Mcp-Session-Id": "s-1"})
        with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310 - loopback
            assert answer.status == 204
    assert [(folder / f"got-{n}").read_bytes() for n in (1, 2)] == sent
    assert answers == [JSON, b"".join(STREAM)]
    assert (folder / "last-event-id").read_text() == "7"
    assert (folder / "deleted").read_text() == "s-1"
    entries = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    received = [e for e in entries if e.get("dir") == "s2c"]
    assert [e["msg"].get("id") for e in received] == [1, 2, None]
    assert received[1]["http"]["event-id"] == "7"


def test_an_sse_endpoint_on_another_origin_is_said_and_relayed_untouched(tmp_path: Path) -> None:
    """A legacy SSE server whose `endpoint` names an absolute URL on its own origin (the transport allows it): the
    tap relays the event as it is, and says that a client following it goes past the tap, once, on the tap's side.
    A client that follows it still works; mcpprobe's own client refuses it (another origin than the one it
    reached); the client's messages are not in the record, and the answers on the stream are not called unasked.
    The replay of the record says the same."""
    with http_server([PY, str(FIXTURES / "sse_absolute_server.py")]) as base, \
            tapped(tmp_path, base) as (where, _proc):
        follower = subprocess.run([PY, str(FIXTURES / "sse_follower.py"), f"{where}/sse"], capture_output=True,
                                  text=True, timeout=90, cwd=ROOT)
        assert follower.returncode == 0, follower.stderr
        assert "ok Echo: past the tap" in follower.stderr
        probe = subprocess.run([PY, "-m", "mcpprobe", "probe", f"{where}/sse"], capture_output=True, text=True,
                               timeout=90, cwd=ROOT)
        assert probe.returncode != 0 and "another origin" in probe.stdout + probe.stderr
    origin = base.rsplit("/", 1)[0]
    report = json.loads((tmp_path / "report.json").read_text())
    assert [(f["code"], f["severity"], f["detail"]["side"], f["detail"]["origin"]) for f in report["findings"]] == [
        ("tap-endpoint-bypassed", "warning", "tap", origin)]
    entries = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    endpoints = [e for e in entries if e.get("event") == "endpoint"]
    assert len(endpoints) == 2 and all(e["bypass"] is True and e["origin"] == origin for e in endpoints)
    assert "sessionId" not in (tmp_path / "r.jsonl").read_text()
    assert not [e for e in entries if e.get("dir") == "c2s"]
    assert len([e for e in entries if e.get("dir") == "s2c"]) >= 3  # the answers, on the stream the tap relays
    replay = subprocess.run([*TAP, "--replay", str(tmp_path / "r.jsonl"), "--format", "json"], capture_output=True,
                            text=True, timeout=60, cwd=ROOT)
    assert replay.returncode == 0, replay.stderr
    assert json.loads(replay.stdout)["findings"] == report["findings"]


def _initialize(url: str, rid: int) -> dict[str, str]:
    """An initialize and notifications/initialized: the headers of the session the server assigned."""
    headers, _ = _post(url, {"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}, {})
    session = {"Mcp-Session-Id": headers.get("mcp-session-id") or headers.get("Mcp-Session-Id", ""),
               "MCP-Protocol-Version": "2025-06-18"}
    assert session["Mcp-Session-Id"]
    _post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    return session


def test_two_clients_at_once_each_in_its_own_session_are_judged_apart(tmp_path: Path, upstream: str) -> None:
    """Two clients through one tap at once, interleaved message by message, each with its own session and the
    same ids, neither ending with DELETE: no finding, and two connections. The judge once kept one connection for
    all HTTP traffic and called the second client's ids reused ("request id 1 used again in the same session")."""
    with tapped(tmp_path, upstream) as (where, _proc):
        url = f"{where}/mcp"
        first, second = _initialize(url, 1), _initialize(url, 1)  # both sessions open before either goes on
        for rid, method in ((2, "tools/list"), (3, "prompts/list"), (4, "resources/list")):
            for session in (first, second):
                _post(url, {"jsonrpc": "2.0", "id": rid, "method": method}, session)
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["findings"] == []
    assert report["connections"] == 2
    entries = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert not any(e.get("event") == "delete" for e in entries)
    sessions = {e["http"].get("session") for e in entries if "dir" in e}
    assert len(sessions - {None}) == 2
    replay = subprocess.run([*TAP, "--replay", str(tmp_path / "r.jsonl"), "--format", "json"], capture_output=True,
                            text=True, timeout=60, cwd=ROOT)
    again = json.loads(replay.stdout)
    assert (again["findings"], again["connections"]) == ([], 2)


def test_a_client_that_reuses_an_id_in_its_own_session_is_still_flagged(tmp_path: Path, upstream: str) -> None:
    """Beside a second client using the same ids in its own session (not flagged), a client that sends id 2
    again in its own session breaks "The request ID MUST NOT have been previously used by the requestor within
    the same session": flagged once, on the client side, at its second tools/list."""
    with tapped(tmp_path, upstream) as (where, _proc):
        url = f"{where}/mcp"
        first, second = _initialize(url, 1), _initialize(url, 1)
        _post(url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, first)
        _post(url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, second)
        _post(url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, first)  # answered, and still reused
    report = json.loads((tmp_path / "report.json").read_text())
    assert [(f["code"], f["detail"]["side"], f["message"]) for f in report["findings"]] == [
        ("client-protocol-violation", "client", "client: request id 2 used again in the same session")]
    entries = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    lists = [e for e in entries if e.get("dir") == "c2s" and e["msg"].get("method") == "tools/list"]
    assert report["findings"][0]["detail"]["messages"] == [lists[2]["i"]]
    assert report["connections"] == 2


def test_two_sdk_hosts_started_together_through_one_tap(tmp_path: Path, upstream: str) -> None:
    """Two runs of the Python SDK's host started together, each in its own session: no finding, two connections,
    however their messages interleave."""
    with tapped(tmp_path, upstream) as (where, _proc):
        hosts = [subprocess.Popen([PY, str(FIXTURES / "sdk_http_host.py"), f"{where}/mcp"], stderr=subprocess.PIPE,
                                  text=True, cwd=ROOT) for _ in range(2)]
        for host in hosts:
            _, err = host.communicate(timeout=90)
            assert host.returncode == 0 and "ok " in err, err
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["findings"] == []
    assert report["connections"] == 2


def test_two_legacy_sse_clients_at_once_each_in_the_session_of_its_endpoint(tmp_path: Path,
                                                                              everything: Path) -> None:
    """Two probes over legacy SSE started together: each stream's endpoint names its session, the POSTs to it
    and the answers on the stream are judged together, apart from the other's. No finding, two connections."""
    env = {"PORT": "0", "NODE_OPTIONS": f"--require {BIND_LOOPBACK}", "BIND_LOOPBACK_ANNOUNCE": "1"}
    with http_server(["node", str(everything), "sse"], env=env) as base, tapped(tmp_path, f"{base}/sse") as (where, _):
        probes = [subprocess.Popen([PY, "-m", "mcpprobe", "probe", "--json", f"{where}/sse"], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, cwd=ROOT) for _ in range(2)]
        for probe in probes:
            _, err = probe.communicate(timeout=90)
            assert probe.returncode == 0, err
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["findings"] == []
    assert report["connections"] == 2
    entries = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert len({e["http"]["session"] for e in entries if e.get("event") == "endpoint"}) == 2
