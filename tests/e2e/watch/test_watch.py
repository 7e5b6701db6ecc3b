"""`mcpprobe watch` against real servers that change while it follows them.

Every run is a real `mcpprobe` process (NDJSON on a pipe, signals for Ctrl-C) against
tests/fixtures/watch_server.py over stdio or HTTP, or against server-everything. Runs end on their
own through --duration or --count. The fixture records what it received, so each test can check
that nothing was sent that the server did not declare.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, http_server, interrupted, schema_errors

sys.path.insert(0, str(ROOT / "tests" / "fixtures"))
from watch_server import REQUIRES, SCENARIOS  # noqa: E402

PY = sys.executable
SERVER = str(ROOT / "tests" / "fixtures" / "watch_server.py")
MCPPROBE = [PY, "-m", "mcpprobe"]


def run_watch(args: list[str], *, timeout: float = 30) -> tuple[int, list[dict[str, Any]], str]:
    proc = subprocess.run([*MCPPROBE, "watch", "--json", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, ndjson(proc.stdout), proc.stderr


def ndjson(text: str) -> list[dict[str, Any]]:
    events = []
    for line in text.splitlines():
        assert line.isascii(), line  # ensure_ascii: no raw control or non-ASCII character on stdout
        event = json.loads(line)
        assert isinstance(event, dict) and {"ts", "event", "kind", "connection"} <= set(event), event
        assert not schema_errors(event), (event, schema_errors(event))  # docs/output.schema.json
        events.append(event)
    assert events and events[-1]["event"] == "end", events[-3:]
    return events


def stdio(scenario: str, record: Path | None = None, **knobs: str) -> list[str]:
    env = {"WATCH_SCENARIO": scenario, **knobs}
    if record is not None:
        env["WATCH_RECORD"] = str(record)
    return [*(f"--env={k}={v}" for k, v in env.items()), "--", PY, SERVER]


def of(events: list[dict[str, Any]], name: str, kind: str | None = None) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == name and (kind is None or e["kind"] == kind)]


def recorded(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def methods(path: Path) -> list[str]:
    return [entry["method"] for entry in recorded(path) if "method" in entry]


def assert_only_declared(path: Path, scenario: str) -> None:
    """No request was sent for a capability the server did not declare."""
    capabilities = SCENARIOS[scenario]
    for method in methods(path):
        need = REQUIRES.get(method)
        if need is None:
            continue
        name, _, sub = need.partition(".")
        assert isinstance(capabilities.get(name), dict) and (not sub or capabilities[name].get(sub) is True), \
            f"{method} was sent although {need} is not declared"


@contextmanager
def http_fixture(scenario: str, **knobs: str) -> Iterator[str]:
    with http_server([PY, SERVER, "--http"], env={"WATCH_SCENARIO": scenario, **knobs}) as url:
        yield url


# ----- the catalog changes -----


def test_changes_on_a_timer_over_stdio(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    code, events, _ = run_watch(["--count", "6", "--protocol", "legacy", *stdio("ticker", record)])
    assert code == 0
    assert events[0]["event"] == "snapshot" and events[0]["kind"] == "server"
    assert events[0]["capabilities"]["tools"] == {"listChanged": True}
    snapshots = {e["kind"]: e for e in of(events, "snapshot") if e["kind"] != "server"}
    assert set(snapshots) == {"tools", "resources", "templates", "prompts"}
    tools = snapshots["tools"]
    assert tools["declared"] and tools["listCompleted"] and tools["notifications"] == "promised"
    assert tools["lastChangedAt"] and [t["name"] for t in tools["items"]] == ["alpha", "beta"]
    diffs = of(events, "diff", "tools")
    assert diffs[0]["added"] == ["dynamic_1"] and diffs[0]["removed"] == [] and diffs[0]["changes"] == 1
    assert diffs[1]["added"] == ["dynamic_2"] and diffs[1]["removed"] == ["dynamic_1"]
    assert diffs[2]["changed"] == [{"id": "alpha", "fields": ["annotations", "inputSchema"]}]
    assert all(e["notifications"] >= 1 for e in of(events, "list_changed"))
    assert events[-1]["reason"] == "count" and events[-1]["exitCode"] == 0
    assert_only_declared(record, "ticker")


def test_changes_over_http_arrive_on_the_get_stream(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    with http_fixture("ticker", WATCH_RECORD=str(record)) as url:
        code, events, _ = run_watch(["--count", "4", "--protocol", "legacy", url])
    assert code == 0
    assert [d["added"] for d in of(events, "diff", "tools")][:2] == [["dynamic_1"], ["dynamic_2"]]
    assert {"http": "GET"} in recorded(record)
    assert_only_declared(record, "ticker")


def test_no_get_stream_is_said_once(tmp_path: Path) -> None:
    with http_fixture("ticker", WATCH_NO_GET="1") as url:
        code, events, _ = run_watch(["--duration", "1", "--protocol", "legacy", url])
    assert code == 0
    notices = [e for e in of(events, "notice") if e["code"] == "no-event-stream"]
    assert len(notices) == 1 and "405" in notices[0]["message"]


def test_a_server_without_get_stream_that_dies_is_noticed_by_keepalive(tmp_path: Path) -> None:
    """No event stream means nothing to notice a dead server by: the keep-alive ping does."""
    record = tmp_path / "record.jsonl"
    with http_fixture("ticker", WATCH_NO_GET="1", WATCH_RECORD=str(record)) as url:
        proc = subprocess.Popen([*MCPPROBE, "watch", "--json", "--keepalive", "0.5", "--no-reconnect",
                                 "--duration", "60", "--protocol", "legacy", url],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
        deadline = time.monotonic() + 30  # until the watch is settled: its first keep-alive ping arrived
        while "ping" not in methods(record) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert "ping" in methods(record)
    try:
        out, err = proc.communicate(timeout=40)  # the fixture is gone now
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert "Traceback" not in err
    # Exit 4, not the 0 of an ended --duration: the keep-alive noticed the dead server.
    assert proc.returncode == 4, err
    assert of(ndjson(out), "end")[0]["exitCode"] == 4


def test_a_token_that_expires_during_a_watch_ends_it_with_exit_7() -> None:
    """The keep-alive ping is refused with 401 once the token expires: not mistaken for a live server."""
    from conftest import fixture_http

    with fixture_http("auth-expires") as url:
        code, events, err = run_watch(["--keepalive", "0.3", "--duration", "15", "--protocol", "legacy", url])
    assert code == 7, err  # not the 0 of an ended --duration: the refused keep-alive ended it
    assert of(events, "end")[0]["exitCode"] == 7


def test_duration_counts_from_the_first_listing_not_from_the_start() -> None:
    """A server that takes longer to start than --duration is still watched, for --duration."""
    boot = f"import os, sys, time; time.sleep(2); os.execv(sys.executable, [sys.executable, {SERVER!r}])"
    started = time.monotonic()
    code, events, err = run_watch(["--duration", "1", "--protocol", "legacy", "--env=WATCH_SCENARIO=nopromise",
                                   "--", PY, "-c", boot])
    assert code == 0, err
    assert [e["count"] for e in of(events, "snapshot", "tools")] == [2]
    assert of(events, "end")[0]["reason"] == "duration"
    assert time.monotonic() - started >= 3  # the boot, then a whole second of watching


def test_a_storm_is_coalesced(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    # How fast a storm is taken is measured by bench/run.py's storm case, not here.
    code, events, _ = run_watch(["--duration", "3.5", "--protocol", "legacy",
                                 *stdio("burst", record, WATCH_STORM="10000", WATCH_STORM_SECONDS="2")])
    assert code == 0
    relists = events[-1]["relists"]["tools"]
    assert 1 <= relists <= 10, relists
    assert methods(record).count("tools/list") == 1 + relists
    assert sum(e["notifications"] for e in of(events, "list_changed", "tools")) == 10000
    added = [name for d in of(events, "diff", "tools") for name in d["added"]]
    assert added == ["added_mid_storm"]


# ----- promises -----


def test_unpromised_notifications_are_a_finding_not_a_trigger(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    code, events, _ = run_watch(["--duration", "1.2", "--protocol", "legacy", *stdio("nopromise", record)])
    assert code == 0
    notices = {e["kind"]: e["message"] for e in of(events, "notice")}
    assert notices["tools"] == "tools: no change notifications promised; use --poll SECONDS to re-list"
    assert notices["resources"].startswith("resources: no change notifications promised")
    findings = [e for e in of(events, "finding") if e["code"] == "unpromised-notification"]
    assert len(findings) == 1 and findings[0]["kind"] == "tools" and findings[0]["severity"] == "warning"
    assert of(events, "list_changed") == [] and of(events, "diff") == []
    assert methods(record).count("tools/list") == 1
    assert_only_declared(record, "nopromise")


def test_poll_relists_what_was_not_promised() -> None:
    code, events, _ = run_watch(["--duration", "1.6", "--poll", "0.3", "--protocol", "legacy", *stdio("nopromise")])
    assert code == 0
    diffs = of(events, "diff", "tools")
    assert diffs and all(d["trigger"] == "poll" and d["changes"] for d in diffs)
    assert of(events, "snapshot", "tools")[0]["poll"] == 0.3


# ----- resources and logs -----


def test_subscribe_and_log_messages(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    code, events, _ = run_watch(["--duration", "2", "--protocol", "legacy", "--subscribe", "watch://status",
                                 "--log-level", "info", *stdio("res-updates", record)])
    assert code == 0
    subscribed = of(events, "subscribed")
    assert subscribed[0]["uris"] == ["watch://status"] and subscribed[0]["via"] == "resources/subscribe"
    updates = of(events, "resource_updated")
    assert len(updates) >= 2 and {u["uri"] for u in updates} == {"watch://status"}
    logs = of(events, "log")
    assert logs and logs[0]["level"] == "info" and "\x1b[31m" in logs[0]["data"]
    sent = methods(record)
    assert sent.index("logging/setLevel") < sent.index("resources/list")  # the level is set before listing
    assert "resources/subscribe" in sent
    assert_only_declared(record, "res-updates")


def test_a_log_level_the_server_does_not_let_set_is_a_note_not_an_error() -> None:
    """`logging` is declared by servers that send log messages; the specification says a client MAY
    send logging/setLevel, and obliges no server to answer it. -32601 there is the not-implemented
    note every command gives for an optional part left out (info), said once, and the messages the
    server sends are shown."""
    # --count counts the note (a finding event) and the two log messages
    code, events, _ = run_watch(["--count", "3", "--log-level", "debug", "--protocol", "legacy",
                                 *stdio("fixedlevel")])
    assert code == 0
    assert of(events, "error") == []
    (note,) = [e for e in of(events, "finding") if e["code"] == "not-implemented"]
    assert note["severity"] == "info" and note["detail"]["method"] == "logging/setLevel"
    assert "answered logging/setLevel with -32601" in note["message"] and "optional part" in note["message"]
    assert [e for e in of(events, "notice") if e["code"] == "log-level-unavailable"] == []
    assert [e["data"] for e in of(events, "log")] == ["tick 1", "tick 2"]


def test_subscribe_is_refused_without_the_capability(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    code, events, stderr = run_watch(["--duration", "5", "--protocol", "legacy", "--subscribe", "watch://status",
                                      *stdio("nosub", record)])
    assert code == 3
    assert events[-1]["error"]["code"] == "not-declared" and "resources.subscribe" in stderr
    assert "resources/subscribe" not in methods(record) and "resources/list" not in methods(record)


def test_subscribe_is_refused_when_resources_are_not_declared(tmp_path: Path) -> None:
    # docs/commands/watch.md: --subscribe against a server without resources exits 3, nothing sent.
    record = tmp_path / "record.jsonl"
    code, events, stderr = run_watch(["--duration", "5", "--protocol", "legacy", "--subscribe", "watch://status",
                                      *stdio("burst", record)])
    assert code == 3, stderr
    assert events[-1]["error"]["code"] == "not-declared" and "'resources'" in stderr
    assert "resources/subscribe" not in methods(record) and "tools/list" not in methods(record)


def test_subscribe_outside_the_catalog_is_refused_unless_forced(tmp_path: Path) -> None:
    code, events, _ = run_watch(["--duration", "5", "--protocol", "legacy", "--subscribe", "watch://nope",
                                 *stdio("res-updates")])
    assert code == 3 and events[-1]["error"]["code"] == "not-in-catalog"
    code, events, _ = run_watch(["--duration", "0.8", "--protocol", "legacy", "--subscribe", "watch://items/7",
                                 "--subscribe", "watch://nope", "--force", *stdio("res-updates")])
    assert code == 0 and of(events, "subscribed")[0]["uris"] == ["watch://items/7", "watch://nope"]


# ----- failure, staleness, reconnect -----


def test_templates_a_server_does_not_implement_are_not_retried(tmp_path: Path) -> None:
    """-32601 for resources/templates/list is an optional part of `resources` left out: the kind is
    `not-implemented`, never stale, and not listed again when the resources change."""
    record = tmp_path / "record.jsonl"
    code, events, _ = run_watch(["--count", "5", "--protocol", "legacy", *stdio("notemplates", record)])
    assert code == 0
    templates = next(e for e in of(events, "snapshot", "templates"))
    assert templates == {**templates, "declared": True, "listCompleted": False, "status": "not-implemented",
                         "state": "not-implemented", "count": 0}
    assert [e["code"] for e in of(events, "finding", "templates")] == ["not-implemented"]
    assert of(events, "stale") == []
    assert [e["kind"] for e in of(events, "diff")] == ["resources", "resources"]
    assert methods(record).count("resources/templates/list") == 1
    assert events[-1]["exitCode"] == 0


def test_a_failed_relist_keeps_the_snapshot_stale_then_recovers() -> None:
    code, events, _ = run_watch(["--count", "3", "--protocol", "legacy", *stdio("flaky")])
    assert code == 0
    names = [(e["event"], e["kind"]) for e in events if e["event"] in ("list_changed", "stale", "diff")]
    assert names == [("list_changed", "tools"), ("stale", "tools"), ("diff", "tools")]
    stale = of(events, "stale")[0]
    assert stale["count"] == 2 and "-32603" in stale["reason"] and stale["retryInSeconds"] > 0
    diff = of(events, "diff")[0]
    assert diff["recovered"] is True and diff["added"] == ["added_tool"] and diff["trigger"] == "retry"


def test_reconnect_after_the_server_exits(tmp_path: Path) -> None:
    state, record = tmp_path / "state", tmp_path / "record.jsonl"
    code, events, _ = run_watch(["--count", "4", "--protocol", "legacy",
                                 *stdio("restart", record, WATCH_STATE=str(state), WATCH_EXIT_AFTER="0.5")])
    assert code == 0
    reconnects = of(events, "reconnect")
    assert [r["state"] for r in reconnects] == ["lost", "connected"]
    changed = of(events, "capabilities_changed")[0]
    assert changed["added"] == ["prompts"] and changed["before"] == {"tools": {"listChanged": True}}
    diff = of(events, "diff", "tools")[0]
    assert diff["trigger"] == "reconnect" and diff["added"] == ["generation_2"] and diff["removed"] == ["generation_1"]
    assert [e["connection"] for e in of(events, "snapshot", "server")] == [1, 2]
    assert methods(record).count("initialize") == 2 and methods(record).count("tools/list") == 2


def test_no_reconnect_exits_4() -> None:
    code, events, stderr = run_watch(["--no-reconnect", "--protocol", "legacy",
                                      *stdio("restart", WATCH_EXIT_AFTER="0.3")])
    assert code == 4 and events[-1]["reason"] == "connection-lost" and "error:" in stderr


def test_reconnect_over_http_after_a_restart(tmp_path: Path) -> None:
    knobs = {"WATCH_STATE": str(tmp_path / "state")}
    watcher = None
    try:
        # The first server takes a free port itself (a port picked here and released could be taken by
        # another test worker before the server binds it); the second restarts on the same one.
        with http_fixture("restart", **knobs) as url:
            knobs["WATCH_PORT"] = str(urllib.parse.urlsplit(url).port)
            watcher = subprocess.Popen([*MCPPROBE, "watch", "--json", "--protocol", "legacy", "--duration", "20",
                                        url], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       text=True, cwd=ROOT)
            assert watcher.stdout is not None
            lines = []
            while not any('"kind":"prompts"' in line for line in lines):
                lines.append(watcher.stdout.readline())
        with http_fixture("restart", **knobs):
            while not any('"event":"diff"' in line for line in lines):
                line = watcher.stdout.readline()
                assert line, "watch ended before it reported the difference"
                lines.append(line)
            watcher.send_signal(signal.SIGINT)
            out, err = watcher.communicate(timeout=20)
        events = ndjson("".join(lines) + out)
        assert watcher.returncode == 0, err
        assert [r["state"] for r in of(events, "reconnect")][-1] == "connected"
        assert events[-1]["reason"] == "interrupted"
        assert of(events, "diff", "tools")[0]["added"] == ["generation_2"]
    finally:
        if watcher is not None and watcher.poll() is None:
            watcher.kill()
            watcher.communicate()


# ----- 2026-07-28: subscriptions/listen -----


def test_modern_listen_over_stdio(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    code, events, _ = run_watch(["--count", "5", "--subscribe", "watch://status",
                                 *stdio("listen-era", record, WATCH_REFUSE="p")])
    assert code == 0
    assert events[0]["protocolVersion"] == "2026-07-28" and events[0]["era"] == "modern"
    subscribed = of(events, "subscribed")[0]
    assert subscribed["via"] == "subscriptions/listen" and subscribed["refused"] == ["promptsListChanged"]
    assert subscribed["requested"] == {"toolsListChanged": True, "promptsListChanged": True,
                                       "resourcesListChanged": True, "resourceSubscriptions": ["watch://status"]}
    assert of(events, "snapshot", "prompts")[0]["notifications"] == "refused"
    assert of(events, "snapshot", "tools")[0]["notifications"] == "promised"
    assert of(events, "diff", "tools")[0]["added"] == ["dynamic_1"]
    assert of(events, "resource_updated")[0]["uri"] == "watch://status"
    sent = methods(record)
    assert "subscriptions/listen" in sent and "resources/subscribe" not in sent and "initialize" not in sent
    assert sent.index("subscriptions/listen") < sent.index("tools/list")  # listening before the first list


def test_modern_listen_over_http() -> None:
    with http_fixture("listen-era") as url:
        code, events, _ = run_watch(["--count", "2", url])
    assert code == 0
    assert of(events, "subscribed")[0]["refused"] == []
    assert of(events, "diff", "tools")[0]["added"] == ["dynamic_1"]


# ----- stopping -----


def test_exit_on_change_exits_1() -> None:
    code, events, _ = run_watch(["--exit-on-change", "--duration", "10", "--protocol", "legacy", *stdio("ticker")])
    assert code == 1 and events[-1]["reason"] == "exit-on-change"
    assert of(events, "diff")[-1]["changes"] >= 1


def test_ctrl_c_exits_0_and_ends_the_server(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"

    def watching(proc: subprocess.Popen[str]) -> bool:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.stderr else ""
        return "Watching for changes" in line

    proc = interrupted(["watch", "--protocol", "legacy", *stdio("ticker", record)], watching,
                       what="watch said it is watching", finish=10)
    out, err = proc.stdout, proc.stderr
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "stopped (interrupted); exit 0" in out
    pid = recorded(record)[0]["pid"]
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_human_output_is_inert(tmp_path: Path) -> None:
    # A log line every 4 ticks of 0.2 s: several arrive within the 5 s even on a loaded machine.
    proc = subprocess.run([*MCPPROBE, "watch", "--duration", "5", "--protocol", "legacy", "--subscribe",
                           "watch://status", "--log-level", "info", *stdio("res-updates", WATCH_INTERVAL="0.2")],
                          capture_output=True, text=True, timeout=30, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "\\x1b[31mred" in proc.stdout
    assert "Resources    2 items, complete" in proc.stdout and "resource_updated" in proc.stdout


# ----- the reference server -----


def test_server_everything_resource_updates(everything: Path) -> None:
    uri = "demo://resource/static/document/architecture.md"
    code, events, _ = run_watch(["--duration", "2.5", "--protocol", "legacy", "--subscribe", uri,
                                 "--call", "toggle-subscriber-updates", "--yes", "--", "node", str(everything)])
    assert code == 0
    assert of(events, "subscribed")[0]["uris"] == [uri]
    assert of(events, "call")[0]["isError"] is False
    assert of(events, "resource_updated")[0]["uri"] == uri
    assert of(events, "snapshot", "tools")[0]["count"] >= 13


# ----- --call goes through the checks of `call` -----

def _watch_call(call: str, record: Path, *extra: str) -> tuple[int, list[dict[str, Any]], str]:
    from conftest import fixture_cmd

    return run_watch(["--duration", "3", "--protocol", "legacy", "--call", call, *extra,
                      f"--env=FIXTURE_RECORD={record}", "--", *fixture_cmd("full")])


def test_watch_call_sends_the_arguments_built_from_the_schema(tmp_path):
    record = tmp_path / "record.jsonl"
    code, events, err = _watch_call("add a=1 b=2", record, "--yes")
    assert code == 0, err
    assert [e["tool"] for e in events if e["event"] == "call"] == ["add"]
    calls = [json.loads(line) for line in record.read_text().splitlines()
             if json.loads(line).get("method") == "tools/call"]
    assert [c["params"]["arguments"] for c in calls] == [{"a": 1, "b": 2}]  # integers, by the inputSchema


@pytest.mark.parametrize("call, code_name, message", [
    ("add a=1 b=x", "invalid-arguments", "do not match the inputSchema"),
    ("add a=1", "invalid-arguments", '"b" is a required property'),
    ("no_such_tool", "not-in-catalog", "is not among the server's"),
])
def test_watch_call_is_refused_like_call_and_nothing_is_sent(tmp_path, call, code_name, message):
    from conftest import recorded

    record = tmp_path / "record.jsonl"
    code, events, err = _watch_call(call, record)
    assert code == 3, err
    errors = [e for e in events if e["event"] == "error"]
    assert errors and errors[-1]["code"] == code_name and message in errors[-1]["message"]
    assert "tools/call" not in recorded(record)


def test_watch_call_with_bad_pair_syntax_is_a_usage_error(tmp_path):
    proc = subprocess.run([*MCPPROBE, "watch", "--call", "add a:=[", "--", PY, SERVER], capture_output=True,
                          text=True, timeout=30, cwd=ROOT)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr


# ----- the package's shape -----


def test_the_watch_modules_read_in_order() -> None:
    """The package's docstring names a reading order in which each module uses only the ones before
    it, so that a reader never has to go back into a module already left."""
    import ast
    import re

    import mcpprobe.watch as package

    order = re.findall(r"^- `(\w+)`:", package.__doc__ or "", re.MULTILINE)
    folder = Path(package.__file__).parent
    assert sorted(order) == sorted(p.stem for p in folder.glob("*.py") if p.stem != "__init__")
    for position, name in enumerate(order):
        tree = ast.parse((folder / f"{name}.py").read_text(encoding="utf-8"))
        used = {node.module.rsplit(".", 1)[1] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                and node.module and node.module.startswith("mcpprobe.watch.")}
        assert used <= set(order[:position]), f"{name} uses {sorted(used - set(order[:position]))}, read later"
