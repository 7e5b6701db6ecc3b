"""mcpprobe installed from its wheel alone, in a fresh virtual environment: its documentation and
completions come with it (`mcpprobe docs`, `mcpprobe completion`), without the repository."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_cli


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bin directory of a fresh venv where only the wheel of this tree is installed (its
    dependencies are borrowed from the test's own environment through a .pth file)."""
    work = tmp_path_factory.mktemp("wheel")
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(ROOT), "-w", str(work)],
                           capture_output=True, text=True, timeout=600)
    if build.returncode != 0:
        pytest.skip(f"cannot build a wheel here (pip wheel needs setuptools from a package index): "
                    f"{build.stderr.strip().splitlines()[-1:]}")
    (wheel,) = work.glob("mcpprobe-*.whl")
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    purelib = Path(subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; "
                                   "print(sysconfig.get_path('purelib'))"], capture_output=True, text=True,
                                  check=True).stdout.strip())
    (purelib / "borrowed-dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
                    "--no-deps", "--no-index", str(wheel)], check=True, timeout=600, capture_output=True)
    return venv / "bin"


def _run(bin_dir: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run([str(bin_dir / "mcpprobe"), *args], capture_output=True, text=True, timeout=120, cwd=cwd,
                          env=env)


def test_the_wheel_brings_its_docs_and_completions(installed: Path, tmp_path: Path) -> None:
    where = _run(installed, "--version", cwd=tmp_path)
    assert where.returncode == 0, where.stderr
    shown = _run(installed, "docs", "exit-codes", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == (ROOT / "docs" / "exit-codes.md").read_text(encoding="utf-8")
    listed = _run(installed, "docs", cwd=tmp_path)
    assert "findings" in listed.stdout and "json-output" in listed.stdout and "watch" in listed.stdout
    command = _run(installed, "docs", "commands/probe", cwd=tmp_path)
    assert command.stdout == (ROOT / "docs" / "commands" / "probe.md").read_text(encoding="utf-8")
    for shell, name in (("bash", "mcpprobe.bash"), ("zsh", "_mcpprobe"), ("fish", "mcpprobe.fish")):
        script = _run(installed, "completion", shell, cwd=tmp_path)
        assert script.stdout == (ROOT / "completions" / name).read_text(encoding="utf-8"), shell
    # The installed one ran, not this checkout.
    origin = subprocess.run([str(installed / "python"), "-c", "import mcpprobe; print(mcpprobe.__file__)"],
                            capture_output=True, text=True, cwd=tmp_path)
    assert str(installed.parent) in origin.stdout


def test_docs_command_in_a_checkout() -> None:
    result = run_cli(["docs", "findings"])
    assert result.exit_code == 0 and result.stdout.startswith("# Findings")
    wrong = run_cli(["docs", "exit-code"])
    assert wrong.exit_code == 2 and "did you mean exit-codes" in wrong.stderr
    assert run_cli(["docs", "probe"]).stdout == (ROOT / "docs" / "commands" / "probe.md").read_text(encoding="utf-8")


def test_the_topic_list_names_every_page_that_comes_with_mcpprobe() -> None:
    """Every page under docs/ can be reached by a name the list shows: a command page whose short name
    is taken by another topic (`exporter`) is listed as `commands/NAME`."""
    listed = {line.split()[0] for line in run_cli(["docs"]).stdout.splitlines() if line.strip()}
    for page in sorted((ROOT / "docs").rglob("*.md")):
        relative = page.relative_to(ROOT / "docs").with_suffix("").as_posix()
        short = relative.removeprefix("commands/")
        text = page.read_text(encoding="utf-8")
        shown = [name for name in (short, relative) if name in listed and run_cli(["docs", name]).stdout == text]
        assert shown, f"{relative} is not listed by `mcpprobe docs`"
