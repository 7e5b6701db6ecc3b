"""Config files and named output files as attackers (issue #27): a server's name from a file is
never a path, a link mcpprobe did not get from the user is never followed, a FIFO nobody reads
never holds the run, and a YAML alias bomb is refused before anything walks it."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from mcpprobe.safety.outfiles import path_component, server_path
from tests.conftest import FIXTURE, PY, ROOT, run_cli
from tests.e2e.exporter.test_exporter import _server, exporter, get

# Nine levels of nine aliases: 387,420,489 values once expanded, from 500 bytes.
BOMB = "a0: &a0 [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 9))


def _entry() -> dict[str, object]:
    return {"command": PY, "args": [str(FIXTURE), "full"]}


@pytest.mark.parametrize(("name", "component"), [
    ("notes", "notes"),
    ("../../package", "%2E.%2F..%2Fpackage"),
    ("..", "%2E."),
    (".hidden", "%2Ehidden"),
    ("a/b\\c", "a%2Fb%5Cc"),
    ("50%", "50%25"),
    ("", "server"),
])
def test_a_server_name_is_one_path_component(name: str, component: str) -> None:
    assert path_component(name) == component
    assert "/" not in component and component not in (".", "..")


def test_names_that_differ_stay_different_files() -> None:
    names = ["a/b", "a%2Fb", "a_b", "a b", "a%20b"]
    assert len({path_component(n) for n in names}) == len(names)


def test_a_fleet_member_named_like_a_path_writes_inside_the_directory_given(tmp_path: Path) -> None:
    """The repository's `.mcp.json` names a server `../../package`; `--save-snapshot
    'ci/snapshots/{server}.json'` writes one file inside ci/snapshots and nothing outside it."""
    repo = tmp_path / "repo"
    (repo / "ci" / "snapshots").mkdir(parents=True)
    package = repo / "package.json"
    package.write_text('{"name": "kept"}\n', encoding="utf-8")
    config = repo / ".mcp.json"
    config.write_text(json.dumps({"mcpServers": {"../../package": _entry(), "ok": _entry()}}), encoding="utf-8")
    template = str(repo / "ci" / "snapshots" / "{server}.json")
    result = run_cli(["probe", "--all", "--config", str(config), "--protocol", "legacy", "--json",
                      "--save-snapshot", template])
    assert result.exit_code == 0, result.stderr
    assert package.read_text(encoding="utf-8") == '{"name": "kept"}\n'
    assert sorted(p.name for p in (repo / "ci" / "snapshots").iterdir()) == ["%2E.%2F..%2Fpackage.json", "ok.json"]
    assert sorted(p.name for p in repo.iterdir()) == [".mcp.json", "ci", "package.json"]
    assert not (tmp_path / "package.json").exists()
    saved = [doc["snapshotSaved"] for doc in json.loads(result.stdout)]
    assert saved == [server_path(template, "../../package"), server_path(template, "ok")]


def test_a_link_planted_at_a_made_snapshot_name_is_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    snaps = tmp_path / "snaps"
    snaps.mkdir()
    (snaps / "a.json").symlink_to(victim)
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"a": _entry(), "b": _entry()}}), encoding="utf-8")
    result = run_cli(["probe", "--all", "--config", str(config), "--protocol", "legacy",
                      "--save-snapshot", str(snaps / "{server}.json")])
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert (snaps / "a.json").is_symlink()
    assert "symbolic link" in result.stderr and "not followed" in result.stderr
    assert (snaps / "b.json").is_file()  # the other member's snapshot is written
    assert result.exit_code == 2


def test_a_link_the_user_named_is_still_followed(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("{}", encoding="utf-8")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    result = run_cli(["probe", "--protocol", "legacy", "--save-snapshot", str(link), "--", PY, str(FIXTURE), "full"])
    assert result.exit_code == 0, result.stderr
    assert link.is_symlink() and json.loads(real.read_text(encoding="utf-8"))["kinds"]


@pytest.mark.parametrize("option", ["--save-snapshot", "--report"])
def test_a_fifo_nobody_reads_is_an_error_at_once_not_a_hang(tmp_path: Path, option: str) -> None:
    """Before, the open of a FIFO with no reader blocked until one came, and neither Ctrl-C nor
    SIGTERM ended it: here it would never end. Now it fails with one line, the result still shown."""
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    value = str(fifo) if option == "--save-snapshot" else f"json={fifo}"
    proc = subprocess.run([PY, "-m", "mcpprobe", "probe", "--protocol", "legacy", option, value,
                           "--", PY, str(FIXTURE), "full"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert "FIFO that nobody is reading" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert "Tools" in proc.stdout  # the result is shown all the same
    assert proc.returncode == 2


def test_a_fifo_with_a_reader_gets_the_snapshot(tmp_path: Path) -> None:
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE, text=True)
    try:
        result = run_cli(["probe", "--protocol", "legacy", "--save-snapshot", str(fifo), "--", PY, str(FIXTURE),
                          "full"])
        out, _ = reader.communicate(timeout=60)
    finally:
        reader.kill()
    assert result.exit_code == 0, result.stderr
    assert json.loads(out)["kinds"]


# ----- YAML alias bombs: refused before anything walks the expanded tree -----
# Each bound below only ends a failure: the old code took minutes (an exporter config: 3 min 46 s)
# and the new one milliseconds, so no machine is slow enough to change the verdict.


def test_an_alias_bomb_config_is_a_usage_error(tmp_path: Path) -> None:
    config = tmp_path / "bomb.yaml"
    config.write_text("mcpServers: {}\n" + BOMB, encoding="utf-8")
    proc = subprocess.run([PY, "-m", "mcpprobe", "servers", "--config", str(config)], capture_output=True,
                          text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 2, proc.stderr
    assert "YAML aliases are expanded" in proc.stderr and str(config) in proc.stderr


def test_a_recursive_alias_is_a_usage_error(tmp_path: Path) -> None:
    config = tmp_path / "loop.yaml"
    config.write_text("mcpServers: &a {x: *a}\n", encoding="utf-8")
    result = run_cli(["servers", "--config", str(config)])
    assert result.exit_code == 2 and "refers to a value that contains it" in result.stderr


def test_an_alias_bomb_expectations_file_is_a_usage_error(tmp_path: Path) -> None:
    expect = tmp_path / "expect.yaml"
    expect.write_text(BOMB, encoding="utf-8")
    result = run_cli(["probe", "--expect", str(expect), "--", PY, str(FIXTURE), "full"])
    assert result.exit_code == 2 and "YAML aliases are expanded" in result.stderr


def test_an_alias_bomb_exporter_config_is_refused_at_start(tmp_path: Path) -> None:
    servers = tmp_path / "servers.json"
    servers.write_text(json.dumps({"mcpServers": {"full": _server("full")}}), encoding="utf-8")
    bomb = tmp_path / "exporter.yaml"
    bomb.write_text(BOMB, encoding="utf-8")
    proc = subprocess.run([PY, "-m", "mcpprobe", "exporter", "--config", str(servers), "--exporter-config",
                           str(bomb), "--listen-address", "127.0.0.1:0"], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert proc.returncode == 2 and "YAML aliases are expanded" in proc.stderr


def test_a_reload_with_an_alias_bomb_fails_and_the_exporter_keeps_answering(tmp_path: Path) -> None:
    with exporter(tmp_path, {"full": _server("full")}, exporter_yaml="min_interval: 0\n") as url:
        (tmp_path / "exporter.yaml").write_text(BOMB, encoding="utf-8")
        started = time.monotonic()
        code, _, body = get(f"{url}/-/reload", method="POST", timeout=60)
        assert code == 500 and "YAML aliases are expanded" in body
        assert get(f"{url}/-/healthy", timeout=60)[0] == 200
        assert get(f"{url}/probe?target=full", timeout=60)[0] == 200  # the previous configs are kept
        assert time.monotonic() - started < 60
