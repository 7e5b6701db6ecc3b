"""Whatever a peer (or a hand-edited record) holds, the judge does not fail and its memory stays bounded."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mcpprobe.tap import judge as judge_module
from mcpprobe.tap.judge import Judge

_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                                  max_size=4), max_leaves=12)
_methods = st.sampled_from(["initialize", "tools/list", "tools/call", "resources/subscribe", "ping",
                            "notifications/initialized", "notifications/cancelled",
                            "notifications/tools/list_changed", "sampling/createMessage", "x"])
_message = st.fixed_dictionaries({"jsonrpc": st.sampled_from(["2.0", "1.0", 2]), "method": _methods | _json,
                                  "id": _json, "params": _json, "result": _json, "error": _json})
_entry = st.one_of(
    st.fixed_dictionaries({"i": st.integers(0, 100), "t": st.floats(0, 10), "dir": st.sampled_from(["c2s", "s2c"]),
                           "msg": _message | _json | st.lists(_message, max_size=3)}),
    st.fixed_dictionaries({"i": st.integers(0, 100), "dir": st.sampled_from(["c2s", "s2c"]), "text": _json}),
    st.fixed_dictionaries({"event": st.sampled_from(["start", "reconnect", "exit", "skipped"]),
                           "messages": _json}),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_entry, max_size=30))
def test_any_entries_are_judged_without_failing(entries: list[dict[str, Any]]) -> None:
    judge = Judge()
    for entry in entries:
        judge.feed(entry)
    judge.finish()
    for finding in judge.findings:
        assert finding.detail["side"] in ("client", "server", "tap")


def test_requests_never_answered_are_bounded(monkeypatch: Any) -> None:
    monkeypatch.setattr(judge_module, "MAX_IDS", 50)
    judge = Judge()
    judge.feed({"event": "start"})
    for i in range(200):
        judge.feed({"i": i, "dir": "c2s", "msg": {"jsonrpc": "2.0", "id": i, "method": "ping"}})
    conn = judge._conn
    assert conn is not None and len(conn.pending_c) <= 50 and len(conn.issued_c) <= 50
    judge.feed({"i": 300, "dir": "s2c", "msg": {"jsonrpc": "2.0", "id": 0, "result": {}}})  # forgotten: no alarm
    judge.finish()
    assert [f.code for f in judge.findings] == []


def test_json_that_orjson_refuses_is_still_a_message_and_is_recorded(tmp_path: Any) -> None:
    """An escaped lone surrogate and a number past 64 bits are JSON: no `non-protocol-output`, and the record
    keeps them (as \\uXXXX) and reads back."""
    from mcpprobe.safety.redact import Redactor
    from mcpprobe.tap.record import RecordWriter, message_entry, open_private, read_record

    line = (b'{"jsonrpc":"2.0","method":"notifications/message",'
            b'"params":{"data":"\\ud800","n":123456789012345678901234567890}}\n')
    entry = message_entry(0, 0.0, "s2c", line, Redactor(()), 1 << 20)
    assert "msg" in entry and entry["msg"]["params"]["data"] == "\ud800"
    path = str(tmp_path / "r.jsonl")
    writer = RecordWriter(open_private(path, append=False))
    writer.write(entry)
    writer.close()
    assert writer.error is None
    (back,) = list(read_record(path))
    assert back["msg"]["params"]["data"] == "\ud800"


def _run(*entries: dict[str, Any]) -> list[str]:
    judge = Judge()
    judge.feed({"event": "start"})
    for i, entry in enumerate(entries):
        judge.feed({"i": i, "t": 0.0, **entry})
    judge.finish()
    return [f.code for f in judge.findings]


def test_the_2026_era_without_initialize_is_no_handshake_fault() -> None:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}
    assert _run(
        {"dir": "c2s", "msg": {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}},
        {"dir": "s2c", "msg": {"jsonrpc": "2.0", "id": 1, "result": {"supportedVersions": ["2026-07-28"],
                                                                     "capabilities": {"tools": {}}}}},
        {"dir": "c2s", "msg": {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta}}},
        {"dir": "s2c", "msg": {"jsonrpc": "2.0", "id": 2, "result": {"tools": []}}},
    ) == []
    # ... but a kind the discover result did not declare is still the client's fault
    assert _run(
        {"dir": "c2s", "msg": {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}},
        {"dir": "s2c", "msg": {"jsonrpc": "2.0", "id": 1, "result": {"capabilities": {"tools": {}}}}},
        {"dir": "c2s", "msg": {"jsonrpc": "2.0", "id": 2, "method": "prompts/list", "params": {"_meta": meta}}},
    ) == ["client-undeclared-capability"]


def test_refusing_an_elicitation_mode_not_declared_is_no_fault() -> None:
    start = [
        {"dir": "c2s", "msg": {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                               "params": {"capabilities": {"elicitation": {"form": {}}}}}},
        {"dir": "s2c", "msg": {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25",
                                                                     "capabilities": {}, "serverInfo": {}}}},
        {"dir": "c2s", "msg": {"jsonrpc": "2.0", "method": "notifications/initialized"}},
    ]
    refused = {"dir": "c2s", "msg": {"jsonrpc": "2.0", "id": "e", "error": {"code": -32601, "message": "no"}}}
    url = {"dir": "s2c", "msg": {"jsonrpc": "2.0", "id": "e", "method": "elicitation/create",
                                 "params": {"mode": "url", "url": "https://example.com", "message": "m"}}}
    form = {"dir": "s2c", "msg": {"jsonrpc": "2.0", "id": "e", "method": "elicitation/create",
                                  "params": {"message": "m", "requestedSchema": {}}}}
    assert _run(*start, url, refused) == []
    assert _run(*start, form, refused) == ["client-declared-unhandled"]
