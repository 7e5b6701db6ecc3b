"""A hostile server's schemas get nothing: no fetch, no file read, no crash, no hang, no lost result.

Every test runs mcpprobe as a real process against tests/fixtures/hostile_schema_server.py, whose
tools carry the schemas, with real listeners on 127.0.0.1 that record whether anything connected
(one answers with a schema, one accepts and never answers).
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import ROOT

PY = sys.executable
SERVER = ROOT / "tests" / "fixtures" / "hostile_schema_server.py"
# --timeout for every run. The validation's own budget is min(--timeout, 10 s): at 5 s a starved
# machine turned a pattern stopped after 1 s (slow-pattern) into a spent budget (too-slow).
TIMEOUT = 30
GRACE = 15  # process start, connection and teardown on a loaded machine
RESULT_TEXT = "the tool ran"
STRUCTURED = {"text": "a" * 60 + "!", "n": 1}


class Listener:
    """A TCP listener on 127.0.0.1 that records every connection; answers with a schema or never."""

    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.contacts: list[bytes] = []
        self.held: list[socket.socket] = []
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/schema.json"
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            conn.settimeout(2)
            try:
                request = conn.recv(4096)
            except OSError:
                request = b""
            self.contacts.append(request or b"(connected)")
            if not self.answer:
                self.held.append(conn)  # never answered, never closed until the test ends
                continue
            body = json.dumps({"type": "string"}).encode()
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                         + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)
            conn.close()

    def settle(self) -> None:
        """Wait until every connection made so far is recorded: the listener takes connections in
        order, so once it has recorded one of our own, made now, it has recorded all before it."""
        sentinel = f"sentinel-{time.monotonic_ns()}".encode()
        with socket.create_connection(("127.0.0.1", self.port), timeout=30) as conn:
            conn.sendall(sentinel)
            deadline = time.monotonic() + 30
            while sentinel not in self.contacts and time.monotonic() < deadline:
                time.sleep(0.02)
        assert sentinel in self.contacts, f"{self.url} did not take a connection within 30 s"
        self.contacts.remove(sentinel)

    def close(self) -> None:
        self.stopped.set()
        self.thread.join(5)
        for conn in self.held:
            conn.close()
        self.sock.close()


@pytest.fixture(scope="module")
def listeners() -> Iterator[tuple[Listener, Listener]]:
    answering, silent = Listener(answer=True), Listener(answer=False)
    try:
        yield answering, silent
    finally:
        answering.close()
        silent.close()


def mcpprobe(args: list[str], listeners: tuple[Listener, Listener], *, env_extra: list[str] = (),
             timeout: float = TIMEOUT) -> tuple[int, dict[str, Any], str, float]:
    """mcpprobe ... --json --timeout T -- hostile server: exit code, the one JSON document, stderr,
    seconds taken. Fails if it takes longer than --timeout plus GRACE."""
    answering, silent = listeners
    argv = [PY, "-m", "mcpprobe", *args, "--json", "--timeout", str(timeout),
            "--env", f"HOSTILE_PORT={answering.port}", "--env", f"HOSTILE_SILENT_PORT={silent.port}", *env_extra,
            "--", PY, str(SERVER)]
    started = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout + GRACE, cwd=ROOT)
    elapsed = time.monotonic() - started
    assert "Traceback" not in proc.stderr, proc.stderr
    doc = json.loads(proc.stdout)  # exactly one JSON document: json.loads refuses trailing data
    return proc.returncode, doc, proc.stderr, elapsed


def unusable(doc: dict[str, Any], which: str) -> dict[str, Any]:
    found = [f for f in doc["findings"] if f["code"] == "unusable-schema" and f["detail"]["schema"] == which]
    assert len(found) == 1, doc["findings"]
    assert found[0]["severity"] == "warning"
    return found[0]


def assert_result_kept(doc: dict[str, Any]) -> None:
    assert doc["sent"] is True
    assert doc["result"]["content"] == [{"type": "text", "text": RESULT_TEXT}]
    assert doc["result"]["structuredContent"] == STRUCTURED


def assert_nobody_contacted(listeners: tuple[Listener, Listener]) -> None:
    for listener in listeners:
        listener.settle()
        assert listener.contacts == [], f"{listener.url} was contacted: {listener.contacts}"


# tool -> (which schema, reason, extra arguments)
UNUSABLE = {
    "ref-http-input": ("inputSchema", "external-reference", ["text=hello"]),
    "ref-http-root": ("inputSchema", "external-reference", ["text=hello"]),
    "ref-http-output": ("outputSchema", "external-reference", []),
    "ref-silent": ("inputSchema", "external-reference", ["text=hello"]),
    "ref-file": ("inputSchema", "external-reference", ["text=hello"]),
    "ref-zero": ("outputSchema", "external-reference", []),
    "ref-relative": ("inputSchema", "external-reference", ["text=hello"]),
    "ref-loop-input": ("inputSchema", "reference-cycle", []),
    "ref-loop-output": ("outputSchema", "reference-cycle", []),
    "ref-cycle": ("inputSchema", "reference-cycle", ["text=hello"]),
    "ref-dangling": ("inputSchema", "dangling-reference", ["text=hello"]),
    "ref-cycle-wide": ("inputSchema", "reference-cycle", ["n=5"]),
    "deep-input": ("inputSchema", "too-deep", []),
    "deep-output": ("outputSchema", "too-deep", []),
    "slow-pattern": ("inputSchema", "slow-pattern", ["text=" + "a" * 60 + "!"]),
    "slow-pattern-properties": ("inputSchema", "slow-pattern", ["--args", json.dumps({"a" * 60 + "!": 1})]),
    "slow-pattern-output": ("outputSchema", "slow-pattern", []),
    "fan-out-output": ("outputSchema", "too-slow", []),
}


@pytest.mark.parametrize("tool", list(UNUSABLE))
def test_an_unusable_schema_is_a_finding_and_the_result_is_kept(tool, listeners):
    which, reason, extra = UNUSABLE[tool]
    code, doc, stderr, _ = mcpprobe(["call", "--yes", tool, *extra], listeners)
    assert code == 0, (stderr, doc["findings"])  # unusable-schema is a warning: exit 0
    finding = unusable(doc, which)
    assert finding["detail"]["reason"] == reason, finding
    assert "not validated" in finding["message"]
    assert_result_kept(doc)
    assert_nobody_contacted(listeners)


def test_the_refused_reference_is_named(listeners):
    answering, _ = listeners
    _, doc, _, _ = mcpprobe(["call", "--yes", "ref-http-input", "text=hello"], listeners)
    finding = unusable(doc, "inputSchema")
    assert finding["detail"]["refused"] == answering.url
    assert finding["detail"]["at"] == "#/properties/text"
    _, doc, _, _ = mcpprobe(["call", "--yes", "ref-zero"], listeners)
    assert unusable(doc, "outputSchema")["detail"]["refused"] == "file:///dev/zero"


def test_a_validation_that_never_ends_stops_within_the_timeout(listeners):
    """2**40 evaluations without a cycle: the clock stops it, at --timeout when that is shorter."""
    code, doc, _, elapsed = mcpprobe(["call", "--yes", "fan-out", "text=x"], listeners, timeout=3)
    assert code == 0
    finding = unusable(doc, "inputSchema")
    assert finding["detail"] == {"schema": "inputSchema", "reason": "too-slow", "seconds": 3.0}
    assert_result_kept(doc)
    assert elapsed < 3 + GRACE


def test_a_pattern_catastrophic_for_python_re_still_gives_a_verdict(listeners):
    """^(\\w+\\s?)*$ on a sentence that does not match ran for ever in re; the verdict is now
    immediate: the arguments do not match (exit 3, nothing sent)."""
    sentence = "The quick brown fox jumps over the lazy dog again and again and again!"
    code, doc, _, _ = mcpprobe(["call", "--yes", "sentence-pattern", f"text={sentence}"], listeners)
    assert code == 3
    assert [f["code"] for f in doc["findings"]] == ["invalid-arguments"]
    assert doc["sent"] is False


def test_list_and_probe_take_the_hostile_catalog_without_fetching(listeners):
    code, doc, stderr, _ = mcpprobe(["list", "tools"], listeners)
    assert code == 0, stderr
    assert doc["state"] == "complete" and len(doc["items"]) == 20 and doc["invalidItems"] == []
    code, doc, stderr, _ = mcpprobe(["probe"], listeners)
    assert code == 0, stderr
    assert_nobody_contacted(listeners)


def test_ctrl_c_during_a_pathological_validation(tmp_path, listeners):
    """The validation runs beside the event loop: Ctrl-C ends the run at once (exit 130, the JSON
    document printed), long before the validation's own 10 s budget, and nothing is sent."""
    record = tmp_path / "methods.txt"
    argv = [PY, "-m", "mcpprobe", "call", "--yes", "fan-out", "text=x", "--json", "--timeout", "60",
            "--env", f"HOSTILE_RECORD={record}", "--", PY, str(SERVER)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        deadline = time.monotonic() + 30
        while "tools/list" not in (record.read_text() if record.exists() else "") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "tools/list" in record.read_text()
        time.sleep(1.0)  # well inside the validation, which takes 10 s before it gives up
        assert proc.poll() is None, "the validation ended before Ctrl-C: the test proves nothing"
        proc.send_signal(signal.SIGINT)
        interrupted = time.monotonic()
        out, err = proc.communicate(timeout=30)
        took = time.monotonic() - interrupted
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert "Traceback" not in err, err
    assert proc.returncode == 130, err
    doc = json.loads(out)
    assert doc["interrupted"] is True and doc["sent"] is False
    assert "tools/call" not in record.read_text()
    assert took < 8, f"Ctrl-C took {took:.1f} s to end the run"  # the validation alone would take 9 more


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_the_schema_checks_of_check_ends_the_run(tmp_path, sig):
    """Four tools whose inputSchema takes seconds to check against its meta-schema (HOSTILE_BIG):
    the check ran in the event loop's thread, and a signal waited for all of them (32 s, then exit 0
    and "pass"). Now the check stops at the signal: exit 130 and the interrupted document, at once."""
    record = tmp_path / "methods.txt"
    argv = [PY, "-m", "mcpprobe", "check", "--json", "--only", "tools.input-schema", "--timeout", "60",
            "--env", f"HOSTILE_RECORD={record}", "--env", "HOSTILE_BIG=20000", "--", PY, str(SERVER)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        deadline = time.monotonic() + 60
        while "tools/list" not in (record.read_text() if record.exists() else "") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "tools/list" in record.read_text()
        time.sleep(1.5)  # inside the first schema's check, which alone takes 10 s (its budget)
        assert proc.poll() is None, "the schema checks ended before the signal: the test proves nothing"
        proc.send_signal(sig)
        signalled = time.monotonic()
        out, err = proc.communicate(timeout=60)
        took = time.monotonic() - signalled
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert "Traceback" not in err, err
    assert proc.returncode == 130, (proc.returncode, out[-500:], err[-500:])
    doc = json.loads(out)
    assert doc["command"] == "check" and doc["exitCode"] == 130 and doc["error"]["code"] == "interrupted"
    assert took < 8, f"the signal took {took:.1f} s to end the run"  # the checks alone would take 38 more


def test_each_schema_check_of_check_is_bounded_by_timeout():
    """--timeout 1 and four schemas that each take seconds: about 1 s each (it was a fixed 10 s each)."""
    started = time.monotonic()
    proc = subprocess.run([PY, "-m", "mcpprobe", "check", "--json", "--only", "tools.input-schema", "--timeout", "1",
                           "--env", "HOSTILE_BIG=20000", "--", PY, str(SERVER)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    took = time.monotonic() - started
    doc = json.loads(proc.stdout)
    [result] = [r for r in doc["checks"] if r["id"] == "tools.input-schema"]
    assert result["status"] == "warn", result
    assert result["message"].count("validating took longer than 1 s") == 4, result["message"]
    assert took < 4 * 1 + GRACE, took
