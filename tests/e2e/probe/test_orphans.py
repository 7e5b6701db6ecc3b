"""Nothing a stdio server starts outlives mcpprobe, not even a process that left the server's
process group (setsid, a daemon's double fork): Linux only (a subreaper and /proc).

Real processes: mcpprobe runs as a subprocess, the server is tests/fixtures/escaping_server.py,
whose helper escapes the group and sleeps for five minutes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import FIXTURE, PY, ROOT, run_subprocess

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="subreaper and /proc are Linux")

ESCAPING = ROOT / "tests" / "fixtures" / "escaping_server.py"
WATCH_SERVER = ROOT / "tests" / "fixtures" / "watch_server.py"


def _escaping(pidfile: Path, mode: str, script: Path = FIXTURE, *args: str) -> list[str]:
    return [PY, str(ESCAPING), str(pidfile), mode, str(script), *args]


def _running(pid: int) -> bool:
    """Alive and not a zombie (a zombie has ended; only its exit status waits to be collected)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2:].split()[0] != b"Z"


def _gone(pids: list[int], seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(_running(pid) for pid in pids):
            return True
        time.sleep(0.05)
    return False


def _pids(pidfile: Path) -> list[int]:
    return [int(line) for line in pidfile.read_text().split()] if pidfile.exists() else []


@pytest.fixture
def cleanup() -> list[Path]:
    """Pid files whose helpers are killed after the test, whatever it found."""
    files: list[Path] = []
    yield files
    for pidfile in files:
        for pid in _pids(pidfile):
            if _running(pid):
                os.kill(pid, 9)


@pytest.mark.parametrize("mode", ["setsid", "daemon"])
def test_a_helper_that_left_the_process_group_does_not_outlive_mcpprobe(tmp_path: Path, mode: str,
                                                                        cleanup: list[Path]) -> None:
    pidfile = tmp_path / "pids"
    cleanup.append(pidfile)
    result = run_subprocess(["probe", "--json", "--", *_escaping(pidfile, mode, FIXTURE, "full")])
    assert result.exit_code == 0, result.stderr
    assert result.json["serverInfo"]["name"] == "fixture-full"
    pids = _pids(pidfile)
    assert len(pids) == 1
    assert _gone(pids), f"the {mode} helper {pids[0]} outlived mcpprobe"


def test_on_a_failure_path_too(tmp_path: Path, cleanup: list[Path]) -> None:
    pidfile = tmp_path / "pids"
    cleanup.append(pidfile)
    command = _escaping(pidfile, "setsid", FIXTURE, "hang-initialize")
    result = run_subprocess(["probe", "--timeout", "1", "--", *command])
    assert result.exit_code == 6, result.stderr
    assert _gone(_pids(pidfile))


def test_every_member_of_a_fleet(tmp_path: Path, cleanup: list[Path]) -> None:
    config = tmp_path / "mcp.json"
    servers = {}
    for name, mode in (("one", "setsid"), ("two", "daemon"), ("three", "setsid")):
        pidfile = tmp_path / f"{name}.pids"
        cleanup.append(pidfile)
        command = _escaping(pidfile, mode, FIXTURE, "full")
        servers[name] = {"command": command[0], "args": command[1:]}
    config.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    result = run_subprocess(["probe", "--config", str(config), "--all", "--json"])
    assert result.exit_code == 0, result.stderr
    assert [doc["exitCode"] for doc in result.json] == [0, 0, 0]
    pids = [pid for pidfile in cleanup for pid in _pids(pidfile)]
    assert len(pids) == 3
    assert _gone(pids)


def test_each_connection_of_a_watch_that_reconnects(tmp_path: Path, cleanup: list[Path]) -> None:
    """The first server's helper is ended when that server is, while the watch goes on."""
    pidfile, state = tmp_path / "pids", tmp_path / "state"
    cleanup.append(pidfile)
    command = _escaping(pidfile, "setsid", WATCH_SERVER)
    proc = subprocess.Popen(
        [PY, "-m", "mcpprobe", "watch", "--json", "--protocol", "legacy", "--duration", "30",
         "--env", "WATCH_SCENARIO=restart", "--env", f"WATCH_STATE={state}", "--env", "WATCH_EXIT_AFTER=0.5",
         "--", *command], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while len(_pids(pidfile)) < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        first, second = _pids(pidfile)[:2]
        assert _gone([first]), "the first connection's helper outlived its server"
        assert proc.poll() is None and _running(second)  # the watch goes on, with the new server's helper
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert _gone(_pids(pidfile))


def test_a_grandchild_that_died_with_its_server_is_reaped_not_left_a_zombie(tmp_path: Path) -> None:
    """`sh -c 'sleep & exec server'`: the sleep dies with the group and, its parent gone too, is
    reparented to mcpprobe (a subreaper): mcpprobe collects it, so no zombie piles up (a watch
    reconnecting for days would otherwise leave one per restart). In-process, to see our children."""
    from conftest import run_cli

    pidfile = tmp_path / "sleep.pid"
    script = f"sleep 300 & echo $! > {pidfile}; exec {PY} {FIXTURE} full"
    result = run_cli(["probe", "--", "sh", "-c", script])
    assert result.exit_code == 0, result.stderr
    pid = int(pidfile.read_text())
    assert not os.path.exists(f"/proc/{pid}"), "the grandchild is still there (a zombie, or running)"
