"""Shell completion: the scripts in completions/ are up to date with the CLI, and completing through
them offers subcommands, options, kinds, formats and server names read from the configs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.cli.test_startup import _forbidden

ROOT = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent


def test_scripts_are_up_to_date() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "completions" / "generate.py"), "--check"],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr


@pytest.fixture()
def configs(tmp_path: Path) -> dict[str, str]:
    """A HOME and project with servers in two formats; the environment a shell would have."""
    project = tmp_path / "project"
    (project / ".vscode").mkdir(parents=True)
    (project / "mcpprobe.yaml").write_text("servers:\n  alpha:\n    command: a\n  beta:\n    url: http://h/mcp\n")
    (project / ".vscode" / "mcp.json").write_text('{"servers": {"gamma": {"command": "g"}}}')
    env = {**os.environ, "HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
           "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "PWD": str(project)}
    return {"cwd": str(project), **{f"env:{k}": v for k, v in env.items()}}


def _env(configs: dict[str, str]) -> dict[str, str]:
    return {k[4:]: v for k, v in configs.items() if k.startswith("env:")}


BASH = """
source "$1"
shift
read -ra COMP_WORDS <<< "$1"
[[ "$1" == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
COMPREPLY=()
_mcpprobe_completion mcpprobe 2>/dev/null
printf '%s\\n' "${COMPREPLY[@]}"
"""


def _bash(configs: dict[str, str], line: str) -> list[str]:
    done = subprocess.run(["bash", "-c", BASH, "bash", str(ROOT / "completions" / "mcpprobe.bash"), line],
                          capture_output=True, text=True, cwd=configs["cwd"], env=_env(configs), timeout=60)
    assert done.returncode == 0, done.stderr
    return [w for w in done.stdout.splitlines() if w]


@pytest.mark.skipif(shutil.which("bash") is None or not (BIN / "mcpprobe").exists(), reason="needs bash and the "
                    "mcpprobe console script next to the interpreter")
def test_bash_completes_through_the_script(configs: dict[str, str]) -> None:
    assert {"probe", "list", "servers"} <= set(_bash(configs, "mcpprobe "))
    assert _bash(configs, "mcpprobe pr") == ["probe"]
    assert _bash(configs, "mcpprobe list ") == ["tools", "resources", "templates", "prompts", "tasks"]
    assert _bash(configs, "mcpprobe probe -s ") == ["alpha", "beta", "gamma"]
    assert _bash(configs, "mcpprobe list tools --server g") == ["gamma"]
    assert set(_bash(configs, "mcpprobe probe --for")) == {"--format", "--force"}
    assert _bash(configs, "mcpprobe probe --format ") == ["human", "json", "junit", "openmetrics", "html", "sarif"]
    assert {"--expect", "--baseline", "--save-snapshot", "--trace"} <= set(_bash(configs, "mcpprobe probe --"))
    assert _bash(configs, "mcpprobe probe --protocol ") == ["auto", "legacy", "modern", "2024-11-05", "2025-03-26",
                                                            "2025-06-18", "2025-11-25", "2026-07-28"]
    assert _bash(configs, "mcpprobe call echo --protocol 2025-1") == ["2025-11-25"]
    assert _bash(configs, "mcpprobe watch --protocol m") == ["modern"]


@pytest.mark.parametrize(("shell", "cword", "expected"), [("zsh", "3", "plain\ngamma\n_\n"),
                                                       ("fish", "g", "plain,gamma")])
def test_zsh_and_fish_protocols_offer_server_names(configs: dict[str, str], shell: str, cword: str,
                                                   expected: str) -> None:
    # zsh passes the index of the current word, fish the current word itself (see the scripts).
    env = {**_env(configs), "_MCPPROBE_COMPLETE": f"{shell}_complete", "COMP_WORDS": "mcpprobe probe -s g",
           "COMP_CWORD": cword}
    done = subprocess.run([sys.executable, "-m", "mcpprobe"], capture_output=True, text=True, cwd=configs["cwd"],
                          env={**env, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert done.returncode == 0, done.stderr
    assert expected in done.stdout


def test_protocol_completion_names_what_each_value_sends(configs: dict[str, str]) -> None:
    """zsh and fish show a description beside each value; the values are the ones --protocol accepts."""
    from mcpprobe.wire.protocols import ACCEPTED

    env = {**_env(configs), "_MCPPROBE_COMPLETE": "fish_complete", "COMP_WORDS": "mcpprobe list tools --protocol ",
           "COMP_CWORD": "", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "mcpprobe"], capture_output=True, text=True,
                          cwd=configs["cwd"], env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    offered = dict(line.removeprefix("plain,").split("\t") for line in done.stdout.splitlines())
    assert tuple(offered) == ACCEPTED
    assert offered["modern"] == "server/discover (2026-07-28)" and offered["2025-06-18"] == "initialize"
    assert not any("," in said for said in offered.values())  # fish's script splits the answer at commas
    modules = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "mcpprobe.wire.protocols" in modules and _forbidden(modules) == []


def test_server_name_completion_stays_light(configs: dict[str, str]) -> None:
    env = {**_env(configs), "_MCPPROBE_COMPLETE": "bash_complete", "COMP_WORDS": "mcpprobe probe -s ",
           "COMP_CWORD": "3", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "mcpprobe"], capture_output=True, text=True,
                          cwd=configs["cwd"], env=env, timeout=60)
    assert done.returncode == 0 and "plain,alpha" in done.stdout
    modules = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "mcpprobe.fleet.config" in modules and "yaml" in modules
    assert _forbidden(modules) == []


def test_broken_config_never_breaks_the_shell(tmp_path: Path) -> None:
    (tmp_path / "mcpprobe.yaml").write_text("servers: [this is: not valid")
    env = {**os.environ, "_MCPPROBE_COMPLETE": "bash_complete", "COMP_WORDS": "mcpprobe probe -s ", "COMP_CWORD": "3",
           "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "mcpprobe"], capture_output=True, text=True, cwd=tmp_path, env=env,
                          timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == ""


def test_generated_scripts_name_the_program() -> None:
    markers = {"mcpprobe.bash": "complete -o nosort -F _mcpprobe_completion mcpprobe",
               "_mcpprobe": "#compdef mcpprobe", "mcpprobe.fish": "complete --no-files --command mcpprobe"}
    for name, marker in markers.items():
        assert marker in (ROOT / "completions" / name).read_text(), name
