"""Whatever a broken or hostile server writes, mcpprobe ends with a documented exit code, in time,
without a traceback and without leaving the server behind.

A property-based test generates the server's output; a few fixed cases pin the exact outcome of
the worst offenders (huge messages, deep nesting, batches, answers to nothing).
"""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path

import pytest
from conftest import PY, ROOT, fixture_cmd, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

GARBAGE = ROOT / "tests" / "fixtures" / "garbage_server.py"
DOCUMENTED = {0, 1, 3, 4, 5, 6}
TIMEOUT = 2.0

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20))
json_values = st.recursive(json_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)), max_leaves=12)


def _line(obj) -> bytes:
    return (json.dumps(obj) + "\n").encode()


frames = st.one_of(
    # responses with the right id but wrong shapes
    json_values.map(lambda v: b'{"jsonrpc":"2.0","id":{ID},"result":' + json.dumps(v).encode() + b"}\n"),
    json_values.map(lambda v: b'{"jsonrpc":"2.0","id":{ID},"error":' + json.dumps(v).encode() + b"}\n"),
    st.just(b'{"jsonrpc":"2.0","id":{ID},"result":{},"error":{"code":1,"message":"both"}}\n'),
    st.just(b'{"jsonrpc":"2.0","id":{ID}}\n'),
    # wrong ids, answers to nothing, server requests, unknown notifications
    json_values.map(lambda v: _line({"jsonrpc": "2.0", "id": v, "result": {}})),
    st.text(max_size=30).map(lambda m: _line({"jsonrpc": "2.0", "method": m, "params": {"x": 1}})),
    st.text(max_size=30).map(lambda m: _line({"jsonrpc": "2.0", "id": "srv", "method": m})),
    # batches, non-objects, partial lines, invalid UTF-8, plain noise
    json_values.map(lambda v: _line([v, {"jsonrpc": "2.0", "method": "notifications/x"}])),
    json_values.map(_line),
    st.binary(max_size=60),
    st.binary(max_size=30).map(lambda b: b + b"\xff\xfe\n"),
    st.just(b'{"jsonrpc":"2.0","id":{ID},"result":{"protocolVersion":'),
    # deep nesting and big strings
    st.integers(min_value=100, max_value=5000).map(lambda n: b"[" * n + b"]" * n + b"\n"),
    st.integers(min_value=1000, max_value=200_000).map(lambda n: _line({"jsonrpc": "2.0", "method": "x" * n})),
    # a valid answer, sometimes
    st.sampled_from(["2025-11-25", "2024-11-05", "bogus"]).map(lambda v: _line({
        "jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": v, "capabilities": {"tools": {}},
                                              "serverInfo": {"name": "x", "version": "1"}}})),
)


def _probe(tmp_path: Path, plan: dict, *extra: str):
    path = tmp_path / f"plan-{time.monotonic_ns()}.json"
    path.write_text(json.dumps(plan))
    started = time.monotonic()
    result = run_cli(["probe", "--json", "--protocol", "legacy", "--timeout", str(TIMEOUT), *extra,
                      "--", PY, str(GARBAGE), str(path)])
    return result, time.monotonic() - started


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(frames, max_size=6), st.sampled_from(["exit", "hang", "answer"]))
def test_any_garbage_ends_with_a_documented_code(tmp_path, chosen, then):
    plan = {"frames": [base64.b64encode(f).decode() for f in chosen], "then": then}
    result, elapsed = _probe(tmp_path, plan)
    assert result.exit_code in DOCUMENTED, result.stderr
    doc = result.json  # one parseable document, whatever happened
    assert doc["exitCode"] == result.exit_code
    # The handshake and then each of the four lists may each wait for the timeout at most.
    assert elapsed < TIMEOUT * 5 + 15  # and the slack a loaded machine needs: bench/ measures speed


def _frames(*raw: bytes) -> dict:
    return {"frames": [base64.b64encode(f).decode() for f in raw], "then": "hang"}


VALID = (b'{"jsonrpc":"2.0","id":{ID},"result":{"protocolVersion":"2025-11-25","capabilities":{},'
         b'"serverInfo":{"name":"x","version":"1"}}}\n')


def test_message_over_the_size_limit_is_a_protocol_error(tmp_path):
    big = b'{"jsonrpc":"2.0","id":{ID},"result":{"x":"' + b"a" * 300_000 + b'"}}\n'
    result, _ = _probe(tmp_path, _frames(big), "--max-message-size", "100000")
    assert result.exit_code == 5
    assert "larger than the limit of 100000 bytes" in result.json["error"]["message"]


def test_deep_nesting_is_refused_cleanly(tmp_path):
    """The answer to initialize, 100,000 levels deep, is refused before parsing and is that request's
    answer: the handshake fails at once as a protocol error (a second answer to the same id that
    follows is not waited for), with one document and no traceback."""
    deep = b'{"jsonrpc":"2.0","id":{ID},"result":' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
    result, _ = _probe(tmp_path, _frames(deep, VALID))
    assert result.exit_code == 5, result.stderr
    assert "the answer was refused before parsing: a message nested more than 512 levels deep" in \
        result.json["error"]["message"]


@pytest.mark.parametrize("frame, message", [
    (b'[{"jsonrpc":"2.0","method":"notifications/x"}]\n', "batch"),
    (b'{"jsonrpc":"2.0","id":987654,"result":{}}\n', "never sent"),
    (b'{"id":{ID},"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"x","version":"1"}}}\n',
     '"jsonrpc": "2.0"'),
])
def test_protocol_violations_are_findings(tmp_path, frame, message):
    frames = [frame] if b"protocolVersion" in frame else [frame, VALID]
    result, _ = _probe(tmp_path, _frames(*frames))
    assert result.exit_code == 0, result.stderr
    violations = [f["message"] for f in result.json["findings"] if f["code"] == "protocol-violation"]
    assert any(message in m for m in violations), violations


def test_result_and_error_together(tmp_path):
    both = b'{"jsonrpc":"2.0","id":{ID},"result":{},"error":{"code":-32603,"message":"boom"}}\n'
    result, _ = _probe(tmp_path, _frames(both))
    assert result.exit_code == 5
    assert any("both result and error" in f["message"] for f in result.json["findings"])


# ----- output that is not JSON-RPC: every line counted, each kind apart -----

NOT_JSON = "a line on stdout that is not JSON-RPC"
NOT_UTF8 = "a line on stdout that is not valid UTF-8"


def _stray_output(noise: str) -> dict[str, dict]:
    """The `non-protocol-output` findings of a probe of a server that writes FIXTURE_STDOUT_NOISE's
    lines before its first answer, by message."""
    result = run_cli(["probe", "--json", "--env", f"FIXTURE_STDOUT_NOISE={noise}", "--", *fixture_cmd("stdout-noise")])
    assert result.exit_code == 0, result.stderr
    assert result.json["kinds"]["tools"]["state"] == "complete"
    return {f["message"]: f.get("detail", {}) for f in result.json["findings"] if f["code"] == "non-protocol-output"}


def test_a_log_written_to_stdout_is_reported_with_its_true_number_of_lines():
    stray = _stray_output("text*500")
    assert list(stray) == [f"{NOT_JSON} (500 times)"]
    detail = stray[f"{NOT_JSON} (500 times)"]
    assert detail["count"] == 500 and detail["sample"] == "log: line 0"
    assert detail["samples"] == [f"log: line {n}" for n in range(20)]


@pytest.mark.parametrize("noise, not_json, not_utf8", [
    (",".join(["text*4,binary*1"] * 10), 40, 10),  # both kinds among the first 20 lines
    ("text*20,binary*30", 20, 30),  # the second kind only after 20 lines of the first
    ("binary*1,text*49", 49, 1),
])
def test_each_kind_of_stray_line_is_counted_exactly(noise, not_json, not_utf8):
    stray = _stray_output(noise)
    assert set(stray) == {f"{NOT_JSON} ({not_json} times)",
                          NOT_UTF8 + (f" ({not_utf8} times)" if not_utf8 > 1 else "")}, stray
    counts = {message.split(" (")[0]: detail.get("count", 1) for message, detail in stray.items()}
    assert counts == {NOT_JSON: not_json, NOT_UTF8: not_utf8}
    assert sum(counts.values()) == 50  # every line written, once
    for message, detail in stray.items():
        assert detail["sample"].startswith("\ufffd\ufffdlog: line " if message.startswith(NOT_UTF8) else "log: line ")
        assert len(detail.get("samples", [detail["sample"]])) == min(counts[message.split(" (")[0]], 20)
