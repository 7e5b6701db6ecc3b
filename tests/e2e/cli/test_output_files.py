"""Files written on request (`read -o`, `call --save`, `probe --save-snapshot`) are written whole or
not at all; a write that fails is one clear line and exit 2, with the result still shown.
"""

from __future__ import annotations

import json
import os
import resource
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import FIXTURE, PY, ROOT, http_server, run_cli

from mcpprobe.safety.outfiles import WriteFailed, write_file
from tests.e2e.invoke.test_call import SDK, invoke

FULL = ["--", PY, str(FIXTURE), "full"]


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with http_server([PY, str(SDK), "--http", "0"]) as server_url:
        yield server_url


def _flat(text: str) -> str:
    """Text with rich's line wrapping undone."""
    return " ".join(text.split())


# ----- --save-snapshot -----


def _limited_file_size(limit: int) -> None:
    # A file-size limit makes every write past `limit` bytes fail with EFBIG, even for root
    # (permissions do not stop root). Python ignores SIGXFSZ, so the write fails, not the process.
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_a_failed_snapshot_write_keeps_the_previous_snapshot(tmp_path: Path) -> None:
    snapshot = tmp_path / "snap.json"
    first = run_cli(["probe", "--save-snapshot", str(snapshot), *FULL])
    assert first.exit_code == 0, first.stderr
    good = snapshot.read_bytes()
    assert len(good) > 200 and json.loads(good)["mcpprobeSnapshot"] == 1
    proc = subprocess.run([PY, "-m", "mcpprobe", "probe", "--json", "--save-snapshot", str(snapshot), *FULL],
                          capture_output=True, text=True, cwd=ROOT, timeout=60,
                          preexec_fn=lambda: _limited_file_size(100))
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 2, proc.stderr
    doc = json.loads(proc.stdout)  # the probe's result is printed anyway
    assert doc["exitCode"] == 2 and doc["snapshotError"].startswith(f"cannot write {snapshot}: ")
    assert "snapshotSaved" not in doc
    assert f"snapshot cannot write {snapshot}: File too large" in _flat(proc.stderr)
    assert snapshot.read_bytes() == good
    assert sorted(p.name for p in tmp_path.iterdir()) == ["snap.json"]  # no temporary file left


def test_snapshot_under_a_file_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "FILE"
    blocker.write_text("x")
    result = run_cli(["probe", "--save-snapshot", str(blocker / "sub" / "snap.json"), *FULL])
    assert result.exit_code == 2
    assert f"{blocker} is not a directory" in _flat(result.stdout + result.stderr)
    assert "Tools" in result.stdout  # the probe's report is shown anyway


def test_a_failed_snapshot_write_is_said_on_stderr_in_every_format(tmp_path: Path) -> None:
    # `probe ... > report.txt` must still show why the exit code is 2.
    blocker = tmp_path / "FILE"
    blocker.write_text("x")
    target = blocker / "snap.json"
    for fmt in ("human", "json", "junit"):
        result = run_cli(["probe", "--format", fmt, "--save-snapshot", str(target), *FULL])
        assert result.exit_code == 2, (fmt, result.stderr)
        assert f"snapshot cannot write {target}" in _flat(result.stderr), (fmt, result.stderr)


def test_snapshot_replaces_the_old_one_with_its_permissions(tmp_path: Path) -> None:
    snapshot = tmp_path / "snap.json"
    snapshot.write_text("old")
    snapshot.chmod(0o640)
    assert run_cli(["probe", "--save-snapshot", str(snapshot), *FULL]).exit_code == 0
    assert json.loads(snapshot.read_text())["mcpprobeSnapshot"] == 1
    assert stat.S_IMODE(snapshot.stat().st_mode) == 0o640


# ----- read -o -----


def test_read_into_an_existing_directory_names_the_file_after_the_uri(url: str, tmp_path: Path) -> None:
    code, out, err = invoke(["read", "fixture://logo.png", "-o", str(tmp_path), url])
    assert code == 0, err
    assert (tmp_path / "logo.png").read_bytes().startswith(b"\x89PNG")


def test_read_into_dev_full_is_a_clear_error_and_the_text_is_still_shown(url: str) -> None:
    code, out, err = invoke(["read", "fixture://readme", "-o", "/dev/full", url])
    assert code == 2
    assert "error: -o: cannot write /dev/full: No space left on device" in err
    assert out.startswith(b"Fixture readme.")


def test_read_under_a_file(url: str, tmp_path: Path) -> None:
    blocker = tmp_path / "FILE"
    blocker.write_text("x")
    result = run_cli(["read", "fixture://readme", "-o", str(blocker / "sub"), "--json", url])
    assert result.exit_code == 2
    doc = result.json
    assert doc["exitCode"] == 2
    assert doc["saveError"] == f"-o: cannot write {blocker / 'sub'}: {blocker} is not a directory"
    assert doc["result"]["contents"][0]["text"].startswith("Fixture readme.")
    assert blocker.read_text() == "x"


# ----- call --save -----


def test_call_save_under_a_file_keeps_the_result(url: str, tmp_path: Path) -> None:
    blocker = tmp_path / "FILE"
    blocker.write_text("x")
    human = run_cli(["call", "media", "--save", str(blocker / "sub"), url])
    assert human.exit_code == 2
    assert "Here is everything:" in human.stdout
    assert f"error: --save: cannot create the directory {blocker / 'sub'}: {blocker} is not a directory" \
        in _flat(human.stderr)
    doc = run_cli(["call", "media", "--save", str(blocker / "sub"), "--json", url]).json
    assert doc["exitCode"] == 2 and doc["ok"] is False and doc["saveError"].startswith("--save: ")
    assert doc["result"]["content"][0]["text"] == "Here is everything:"


# ----- the writer itself -----


def test_write_file_follows_a_symlink_and_leaves_no_temporary(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_file(link, b"new")
    assert link.is_symlink() and real.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "real.json"]


def test_write_file_refuses_a_directory(tmp_path: Path) -> None:
    with pytest.raises(WriteFailed, match="it is a directory"):
        write_file(tmp_path, b"x")


def test_new_files_get_the_umask_permissions(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_file(tmp_path / "a" / "b.bin", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a" / "b.bin").stat().st_mode) == 0o644


# ----- --trace -----


@pytest.mark.parametrize("command, shown", [
    (["probe"], "echo"), (["list", "tools"], "echo"), (["call", "echo", "message=hi there", "--yes"], "hi there"),
    (["read", "fixture://readme"], "fixture README"), (["get-prompt", "greet", "name=Ada"], "Ada"),
    (["watch", "--duration", "0.5"], "Tools        2 items"),
])
def test_a_trace_that_cannot_be_written_is_an_error_after_the_result(command: list[str], shown: str) -> None:
    result = run_cli([*command, "--trace", "/dev/full", *FULL])
    assert result.exit_code == 2
    assert "error: --trace /dev/full: cannot write: No space left on device" in result.stderr
    assert shown in result.stdout  # the result is shown


def test_snapshot_to_a_directory_is_refused_before_starting(tmp_path: Path) -> None:
    result = run_cli(["probe", "--save-snapshot", str(tmp_path), *FULL])
    assert result.exit_code == 2 and result.stdout == ""
    assert f"--save-snapshot {tmp_path}: is a directory" in result.stderr


# ----- probe --report FORMAT=FILE -----


def test_report_files_hold_the_same_run_in_other_formats(tmp_path):
    """One run, stdout in --json, and the same reports written to files in every other format,
    secrets masked there as on stdout."""
    from tests.e2e.hostile.test_secrets import HOSTILE, LONG_SECRET

    files = {fmt: tmp_path / f"report.{fmt}" for fmt in ("json", "junit", "openmetrics", "html", "human")}
    reports = [arg for fmt, path in files.items() for arg in ("--report", f"{fmt}={path}")]
    result = run_cli(["probe", "--json", "--protocol", "legacy", *reports, "-e", f"ECHO_SECRET={LONG_SECRET}",
                      "--", *HOSTILE])
    assert result.exit_code == 0, result.stderr
    assert json.loads(files["json"].read_text()) == result.json
    assert files["junit"].read_text().startswith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites')
    assert "mcpprobe_up{" in files["openmetrics"].read_text()
    assert files["openmetrics"].read_text().endswith("# EOF\n")
    assert files["html"].read_text().lower().startswith("<!doctype html>")
    assert "Tools" in files["human"].read_text() and "\x1b" not in files["human"].read_text()
    for path in files.values():
        assert LONG_SECRET[:12] not in path.read_text(), path
    for fmt in ("json", "human", "html"):  # the tool description that carries the secret is in these
        assert "[redacted]" in files[fmt].read_text(), fmt


def test_a_report_file_that_cannot_be_written_is_exit_2_after_the_result(tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    result = run_cli(["probe", "--json", "--report", f"junit={blocked}/report.xml", *FULL])
    assert result.exit_code == 2
    assert result.json["exitCode"] == 0  # the run's own result, printed before the file was tried
    assert f"error: --report junit={blocked}/report.xml: cannot write" in result.stderr


@pytest.mark.parametrize("value, words", [("junit", "expected FORMAT=FILE"), ("pdf=x.pdf", "'pdf' is not a format"),
                                          ("junit=", "expected FORMAT=FILE")])
def test_a_malformed_report_is_a_usage_error_before_anything_starts(tmp_path, value, words):
    record = tmp_path / "record.jsonl"
    result = run_cli(["probe", "--report", value, "--env", f"FIXTURE_RECORD={record}", *FULL])
    assert result.exit_code == 2 and words in result.stderr
    assert not record.exists()
