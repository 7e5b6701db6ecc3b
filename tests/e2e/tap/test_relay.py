"""The stdio relay: what the host sees through `mcpprobe tap` is what the server sent, byte for byte, and
what the server gets is what the host wrote; exit status, signals and the server's children as without it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import PY, ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "tap"
TAP = [PY, "-m", "mcpprobe", "tap"]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as handle:  # a zombie is not alive
        return handle.read().rsplit(")", 1)[1].split()[0] != "Z"


def test_sdk_host_sees_the_same_bytes_as_the_server(tmp_path: Path, everything: Path) -> None:
    """The Python SDK's client as the host, server-everything as the server, a recorder on each side of the
    tap: the two transcripts are identical both ways, the host finished its work, and no finding."""
    client, server = tmp_path / "client", tmp_path / "server"
    report = tmp_path / "report.json"
    proc = subprocess.run(
        [PY, str(FIXTURES / "sdk_host.py"), PY, str(FIXTURES / "tee.py"), str(client), "--",
         *TAP, "--quiet", "--record", str(tmp_path / "r.jsonl"), "--report", str(report), "--format", "json", "--",
         PY, str(FIXTURES / "tee.py"), str(server), "--", "node", str(everything), "stdio"],
        capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "ok " in proc.stderr
    sent, got = (Path(str(client) + ".in")).read_bytes(), (Path(str(server) + ".in")).read_bytes()
    answered, read = (Path(str(server) + ".out")).read_bytes(), (Path(str(client) + ".out")).read_bytes()
    assert sent and answered
    assert sent == got
    assert answered == read
    document = json.loads(report.read_text())
    assert document["findings"] == []
    assert document["fromClient"] == sent.count(b"\n")
    assert document["fromServer"] == answered.count(b"\n")
    assert document["serverExit"]["status"] == 0


def test_partial_huge_and_unterminated_lines_pass_unchanged(tmp_path: Path) -> None:
    """Pieces of a line written apart, a line of 9 MiB (past the judge's frame limit), bytes that are not UTF-8
    and a last line without its newline: `cat` as the server echoes them, and the host reads exactly them."""
    huge = b'{"jsonrpc":"2.0","id":9,"method":"x","params":{"pad":"' + b"a" * (9 * 1024 * 1024) + b'"}}\n'
    pieces = [b'{"jsonrpc":"2.0","id":1,', b'"method":"ping"}\n{"jsonrpc"', b':"2.0","id":2,"method":"ping"}\n',
              huge[:100_000], huge[100_000:], b"\xff\xfe not utf-8\n", b'{"jsonrpc":"2.0","method":"tail"}']
    proc = subprocess.Popen([*TAP, "--quiet", "--", "cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=ROOT)
    assert proc.stdin is not None and proc.stdout is not None

    def feed() -> None:
        for piece in pieces:
            proc.stdin.write(piece)  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
            time.sleep(0.05)
        proc.stdin.close()  # type: ignore[union-attr]

    import threading

    writer = threading.Thread(target=feed)
    writer.start()
    out = proc.stdout.read()
    writer.join()
    proc.wait(60)
    assert out == b"".join(pieces)
    assert proc.returncode == 0


def test_exit_status_is_the_servers(tmp_path: Path) -> None:
    proc = subprocess.run([*TAP, "--quiet", "--", "sh", "-c", "cat >/dev/null; exit 7"], input=b"",
                          capture_output=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 7
    assert proc.stdout == b""


def test_command_not_found_is_127_and_stdout_stays_empty(tmp_path: Path) -> None:
    proc = subprocess.run([*TAP, "--", "no-such-server-command-xyz"], input=b"", capture_output=True, timeout=60,
                          cwd=ROOT)
    assert proc.returncode == 127
    assert proc.stdout == b""
    assert b"command not found: no-such-server-command-xyz" in proc.stderr
    assert b"Traceback" not in proc.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_signals_are_forwarded_and_nothing_is_left(tmp_path: Path, sig: int) -> None:
    """A signal to the tap reaches the server, the tap exits with the server's status, and the server's own
    child (in its process group) does not outlive the tap."""
    proc = subprocess.Popen([*TAP, "--quiet", "--", PY, str(FIXTURES / "signal_server.py"), str(tmp_path)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert proc.stdout is not None
    line = proc.stdout.readline()  # the server is up and its output came through
    assert b"ready" in line
    server_pid, child_pid = (int(word) for word in (tmp_path / "pids").read_text().split())
    proc.send_signal(sig)
    proc.wait(30)
    assert (tmp_path / "signal").read_text() == str(int(sig))
    assert proc.returncode == 40 + int(sig)
    deadline = time.monotonic() + 10
    while _alive(child_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child_pid)
    assert not _alive(server_pid)
    proc.stdin.close()  # type: ignore[union-attr]


def test_help_is_the_one_thing_the_tap_prints_on_stdout() -> None:
    """`--help` is the one thing the tap prints on stdout (no host ever asks for it)."""
    proc = subprocess.run([*TAP, "--help"], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 0 and proc.stdout.startswith("Usage: mcpprobe tap [OPTIONS] [COMMAND]...")


@pytest.mark.parametrize("words", [["--format", "json"], ["--format=json"], ["--json"]])
def test_ctrl_c_while_the_tap_loads_writes_nothing_on_stdout(words: list[str]) -> None:
    """Interrupted before it runs (a real SIGINT while its command is loaded), every other command with
    `--json` or `--format json` writes its interrupted document on stdout; the tap's stdout is the host's
    channel to the server, and its `--format` is the report's: nothing there, "interrupted" on stderr, 130."""
    proc = subprocess.run([*TAP, *words, "--", PY, "-c", "pass"], capture_output=True, text=True, timeout=60,
                          cwd=ROOT, env={**os.environ, "MCPPROBE_TEST_INTERRUPT": "load"})
    assert (proc.returncode, proc.stdout) == (130, "")
    assert "interrupted" in proc.stderr


def test_typescript_sdk_host_sees_the_same_bytes_as_the_server(tmp_path: Path, everything: Path) -> None:
    """The TypeScript SDK's client (a small Node script) as the host: identical transcripts, no finding."""
    modules = everything.parents[3]
    client, server = tmp_path / "client", tmp_path / "server"
    report = tmp_path / "report.json"
    proc = subprocess.run(
        ["node", str(FIXTURES / "ts_host.cjs"), str(modules), PY, str(FIXTURES / "tee.py"), str(client), "--",
         *TAP, "--quiet", "--report", str(report), "--format", "json", "--",
         PY, str(FIXTURES / "tee.py"), str(server), "--", "node", str(everything), "stdio"],
        capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "ok " in proc.stderr
    sent, got = (Path(str(client) + ".in")).read_bytes(), (Path(str(server) + ".in")).read_bytes()
    answered, read = (Path(str(server) + ".out")).read_bytes(), (Path(str(client) + ".out")).read_bytes()
    assert sent and answered
    assert sent == got
    assert answered == read
    assert json.loads(report.read_text())["findings"] == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="escaped descendants are found through /proc")
def test_a_descendant_that_left_the_group_does_not_outlive_the_tap(tmp_path: Path) -> None:
    proc = subprocess.Popen([*TAP, "--quiet", "--", PY, str(FIXTURES / "escaping_server.py"), str(tmp_path)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert proc.stdout is not None and proc.stdin is not None
    assert b"up" in proc.stdout.readline()
    child = int((tmp_path / "pid").read_text())
    assert _alive(child)
    proc.stdin.close()  # the host goes: the server exits on EOF, its daemon would stay
    proc.wait(30)
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def test_a_record_that_cannot_be_written_is_exit_2_and_no_server_starts(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    proc = subprocess.run([*TAP, "--record", str(tmp_path / "no" / "such" / "dir" / "r.jsonl"), "--", "sh", "-c",
                           f"touch {marker}"], input=b"", capture_output=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 2
    assert b"cannot write the record" in proc.stderr and b"Traceback" not in proc.stderr
    assert proc.stdout == b""
    assert not marker.exists()
