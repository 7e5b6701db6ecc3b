"""Fleets: many named servers probed concurrently in one process; one broken never stops the others."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import FIXTURE, PY, recorded, run_cli


def _config(tmp_path: Path, servers: dict[str, str], **extra: dict[str, object]) -> Path:
    entries: dict[str, object] = {name: {"command": PY, "args": [str(FIXTURE), scenario]}
                                  for name, scenario in servers.items()}
    entries.update(extra)
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps({"mcpServers": entries}), encoding="utf-8")
    return path


FLEET = {"full": "full", "tools": "tools-only", "broken": "crash-on-start", "empty": "empty",
         "nothing": "none", "paged": "paginated"}


def test_fleet_with_one_broken_server(tmp_path: Path) -> None:
    config = _config(tmp_path, FLEET)
    result = run_cli(["probe", "--all", "--config", str(config), "--json", "--protocol", "legacy",
                      "--concurrency", "3"])
    docs = result.json
    assert isinstance(docs, list)
    assert [d["server"]["name"] for d in docs] == list(FLEET)
    codes = {d["server"]["name"]: d["exitCode"] for d in docs}
    assert codes == {"full": 0, "tools": 0, "broken": 4, "empty": 0, "nothing": 0, "paged": 0}
    assert result.exit_code == 4
    paged = next(d for d in docs if d["server"]["name"] == "paged")
    assert paged["kinds"]["tools"]["count"] == 25 and paged["kinds"]["tools"]["listCompleted"]
    assert "broken: error:" in result.stderr


def test_fleet_human_output_has_one_row_per_server(tmp_path: Path) -> None:
    config = _config(tmp_path, FLEET)
    result = run_cli(["probe", "--all", "--config", str(config), "--protocol", "legacy"])
    assert result.exit_code == 4
    rows = [line.split()[0] for line in result.stdout.splitlines() if line.split() and line.split()[0] in FLEET]
    assert rows[: len(FLEET)] == list(FLEET)
    assert "connection (4)" in result.stdout and "5 of 6 servers ok" in result.stdout
    assert "connection-failed" in result.stdout


def test_several_named_servers_and_the_worst_code(tmp_path: Path) -> None:
    config = _config(tmp_path, {"a": "full", "b": "method-not-found"})
    result = run_cli(["probe", "-s", "a", "-s", "b", "--config", str(config), "--json", "--protocol", "legacy"])
    assert result.exit_code == 1
    assert [d["exitCode"] for d in result.json] == [0, 1]
    single = run_cli(["probe", "-s", "a", "--config", str(config), "--json", "--protocol", "legacy"])
    assert isinstance(single.json, dict) and single.exit_code == 0


def test_a_config_error_fails_only_its_server(tmp_path: Path) -> None:
    bad = {"command": PY, "args": [str(FIXTURE), "full"], "env": {"T": "${FLEET_UNSET_VARIABLE}"}}
    config = _config(tmp_path, {"good": "full"}, bad=bad)
    result = run_cli(["probe", "--all", "--config", str(config), "--json", "--protocol", "legacy"])
    # Not a usage error for the run (2 means nothing was started): a failed member, exit 1.
    assert result.exit_code == 1
    good, broken = result.json
    assert good["exitCode"] == 0 and good["serverInfo"]["name"] == "fixture-full"
    assert broken["exitCode"] == 2
    assert broken["error"]["code"] == "config-error" and "FLEET_UNSET_VARIABLE" in broken["error"]["message"]
    assert [f["code"] for f in broken["findings"]] == ["config-error"]
    human = run_cli(["probe", "--all", "--config", str(config), "--protocol", "legacy"])
    assert human.exit_code == 1 and "config-error" in human.stdout and "1 of 2 servers ok" in human.stdout


def test_a_fleet_of_only_broken_entries_is_a_usage_error(tmp_path: Path) -> None:
    bad = {"command": PY, "args": [str(FIXTURE), "full"], "env": {"T": "${FLEET_UNSET_VARIABLE}"}}
    config = _config(tmp_path, {}, bad=bad, worse=bad)
    result = run_cli(["probe", "--all", "--config", str(config), "--json", "--protocol", "legacy"])
    assert result.exit_code == 2 and [d["error"]["code"] for d in result.json] == ["config-error"] * 2


def test_disabled_entries_are_skipped_and_listed(tmp_path: Path) -> None:
    off = {"command": PY, "args": [str(FIXTURE), "crash-on-start"], "disabled": True}
    config = _config(tmp_path, {"good": "full"}, off=off)
    result = run_cli(["probe", "--all", "--config", str(config), "--json", "--protocol", "legacy"])
    assert result.exit_code == 0
    good, skipped = result.json
    assert good["exitCode"] == 0 and "skipped" not in good
    assert skipped["server"]["name"] == "off" and skipped["exitCode"] == 0 and "disabled" in skipped["skipped"]
    assert skipped["serverInfo"] is None and skipped["findings"] == []  # never started
    human = run_cli(["probe", "--all", "--config", str(config), "--protocol", "legacy"])
    assert human.exit_code == 0
    assert "skipped (disabled)" in human.stdout and "1 of 1 server ok, 1 skipped (disabled)" in human.stdout
    servers = run_cli(["servers", "--json", "--config", str(config)])
    assert [s["disabled"] for s in servers.json["servers"]] == [False, True]
    named = run_cli(["probe", "-s", "off", "--config", str(config), "--json", "--protocol", "legacy"])
    assert named.exit_code == 4  # named on its own, it is probed: the user asked for it


def test_an_interrupted_fleet_shows_the_servers_that_finished(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys

    from tests.conftest import interrupted

    record = tmp_path / "slow.jsonl"
    config = _config(tmp_path, {"fast": "full"}, slow={"command": PY, "args": [str(FIXTURE), "slow"],
                                                       "env": {"FIXTURE_RECORD": str(record)}})
    seen: list[str] = []

    def slow_one_waits(proc: subprocess.Popen[str]) -> bool:
        """The fast one has finished (its line on stderr), and the slow one waits for its tools/list."""
        assert proc.stderr is not None
        if not seen or "fast: exit 0" not in seen[-1]:
            line = proc.stderr.readline()
            seen.append(line)
            assert line, seen  # stderr ended before the fast one finished
            return False
        return "tools/list" in recorded(record)

    proc = interrupted(["probe", "--all", "--config", str(config), "--json", "-v", "--protocol", "legacy"],
                       slow_one_waits, what="the slow one waiting for its tools/list answer", sig=signal.SIGTERM,
                       wait=60, finish=60, env={"FIXTURE_DELAY": "60"})
    assert "fast: exit 0" in seen[-1], seen
    assert "tools/list" in recorded(record), "the slow one should be waiting for its tools/list answer"
    stdout, stderr = proc.stdout, proc.stderr
    assert proc.returncode == 130, stderr
    fast, slow = json.loads(stdout)
    assert fast["server"]["name"] == "fast" and fast["exitCode"] == 0 and fast["kinds"]["tools"]["count"] > 0
    assert slow["server"]["name"] == "slow" and slow["exitCode"] == 130 and slow["error"]["code"] == "interrupted"
    assert "Traceback" not in stderr and sys.executable


def test_a_hanging_server_costs_only_its_own_timeout(tmp_path: Path) -> None:
    config = _config(tmp_path, {"slow": "slow", "fast": "full"})
    result = run_cli(["probe", "--all", "--config", str(config), "--json", "--protocol", "legacy",
                      "--timeout", "1"], env={"FIXTURE_DELAY": "5"})
    slow, fast = result.json
    assert fast["exitCode"] == 0
    assert slow["exitCode"] == 6 and result.exit_code == 6


def test_fleet_usage_errors(tmp_path: Path) -> None:
    config = _config(tmp_path, {"a": "full", "b": "full"})
    both = run_cli(["probe", "--all", "-s", "a", "--config", str(config)])
    assert both.exit_code == 2 and "not both" in both.stderr
    snapshot = run_cli(["probe", "--all", "--config", str(config), "--save-snapshot", str(tmp_path / "s.json")])
    assert snapshot.exit_code == 2 and "{server}" in snapshot.stderr
    zero = run_cli(["probe", "--all", "--config", str(config), "--concurrency", "0"])
    assert zero.exit_code == 2


def test_a_fleet_shows_the_hint_of_a_server_that_ended_before_the_handshake(tmp_path: Path) -> None:
    config = _config(tmp_path, {"good": "full", "broken": "crash-on-start"})
    result = run_cli(["probe", "--all", "--config", str(config), "--protocol", "legacy"])
    assert result.exit_code == 4
    assert "hint: " in result.stdout and "/etc/nope.yaml" in result.stdout


# ----- --baseline '{server}.json' when one member's snapshot is missing or broken -----

def _snapshots(tmp_path: Path, config: Path, *names: str) -> str:
    """Snapshots of the named members saved by a real probe; the --baseline template for them."""
    template = str(tmp_path / "snaps" / "{server}.json")
    named = [arg for name in names for arg in ("-s", name)]
    saved = run_cli(["probe", *named, "--config", str(config), "--save-snapshot", template, "--protocol", "legacy"])
    assert saved.exit_code == 0, saved.stderr
    return template


def test_a_member_without_a_baseline_is_probed_and_says_so(tmp_path: Path) -> None:
    config = _config(tmp_path, {"old": "full", "other": "tools-only", "new": "full"})
    template = _snapshots(tmp_path, config, "old", "other")
    baseline = json.loads((tmp_path / "snaps" / "old.json").read_text())
    baseline["kinds"]["tools"]["items"].append({"name": "gone", "inputSchema": {"type": "object"}})
    (tmp_path / "snaps" / "old.json").write_text(json.dumps(baseline))
    result = run_cli(["probe", "--all", "--config", str(config), "--baseline", template, "--json",
                      "--protocol", "legacy"])
    old, other, new = result.json
    assert result.exit_code == 1  # the breaking change of 'old', compared as usual
    assert old["exitCode"] == 1 and [c["id"] for c in old["drift"]["removed"]] == ["gone"]
    assert other["exitCode"] == 0 and other["drift"]["breaking"] is False
    assert new["exitCode"] == 0 and "drift" not in new and new["kinds"]["tools"]["count"] == 2
    (missing,) = [f for f in new["findings"] if f["code"] == "baseline-missing"]
    path = str(tmp_path / "snaps" / "new.json")
    assert missing["severity"] == "warning" and missing["detail"] == {"baseline": path}
    assert path in missing["message"]
    assert "baseline-missing" not in [f["code"] for f in old["findings"] + other["findings"]]
    assert "save its snapshot with --save-snapshot" in missing["message"]
    human = run_cli(["probe", "--all", "--config", str(config), "--baseline", template, "--protocol", "legacy"])
    assert human.exit_code == 1 and "baseline-missing" in human.stdout
    junit = run_cli(["probe", "--all", "--config", str(config), "--baseline", template, "--format", "junit",
                     "--protocol", "legacy"])
    assert f'<skipped message="{path} does not exist: nothing to compare with"' in junit.stdout
    html = run_cli(["probe", "--all", "--config", str(config), "--baseline", template, "--format", "html",
                    "--protocol", "legacy"])
    assert html.stdout.count("not compared: no baseline yet") == 1
    # Saving the snapshots to the baselines' own paths in the same run: the message says so.
    saving = run_cli(["probe", "--all", "--config", str(config), "--baseline", template, "--save-snapshot", template,
                      "--json", "--protocol", "legacy"])
    (missing,) = [f for f in saving.json[2]["findings"] if f["code"] == "baseline-missing"]
    assert "this run saves its snapshot there" in missing["message"] and Path(path).is_file()


def test_a_fleet_whose_baselines_all_are_missing_is_a_usage_error(tmp_path: Path) -> None:
    config = _config(tmp_path, {"a": "full", "b": "full"})
    result = run_cli(["probe", "--all", "--config", str(config), "--baseline", str(tmp_path / "nowhere" /
                                                                                    "{server}.json")])
    assert result.exit_code == 2 and result.stdout == ""
    assert "no server of the fleet has a snapshot there" in result.stderr and "a.json" in result.stderr
    # Alone, a missing baseline stays a usage error, fleet or not.
    single = run_cli(["probe", "-s", "a", "--config", str(config), "--baseline", str(tmp_path / "a.json")])
    assert single.exit_code == 2 and "cannot read" in single.stderr


def test_a_member_whose_baseline_is_not_a_snapshot_fails_alone(tmp_path: Path) -> None:
    record = tmp_path / "bad.jsonl"
    bad = {"command": PY, "args": [str(FIXTURE), "full"], "env": {"FIXTURE_RECORD": str(record)}}
    config = _config(tmp_path, {"good": "full"}, bad=bad)
    template = _snapshots(tmp_path, config, "good", "bad")
    record.unlink()
    (tmp_path / "snaps" / "bad.json").write_text("<<<<<<< HEAD\n")
    result = run_cli(["probe", "--all", "--config", str(config), "--baseline", template, "--json",
                      "--protocol", "legacy"])
    good, broken = result.json
    assert result.exit_code == 1  # as a config-error: the member's own code 2, 1 for the fleet
    assert good["exitCode"] == 0 and good["drift"]["breaking"] is False
    assert broken["exitCode"] == 2 and broken["error"]["code"] == "baseline-invalid"
    assert "bad.json:1: not JSON" in broken["error"]["message"]
    assert [f["code"] for f in broken["findings"]] == ["baseline-invalid"]
    assert not record.exists()  # not started: nothing to compare its catalog with
    alone = run_cli(["probe", "-s", "bad", "--config", str(config), "--baseline", template])
    assert alone.exit_code == 2 and "not JSON" in alone.stderr
