"""The documentation and shell completions that come with mcpprobe, wherever it was installed.

A wheel installs `docs/` as data files under `<prefix>/share/mcpprobe/docs` (pyproject.toml,
`tool.setuptools.data-files`); a checkout (`pip install -e .`) reads the repository's own `docs/`.
Light: the standard library only, so that `mcpprobe docs` starts as fast as `--help`.
"""

from __future__ import annotations

import site
import sys
import sysconfig
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import click

CHECKOUT = Path(__file__).resolve().parents[2]  # the repository, for a checkout
SHARE = Path("share") / "mcpprobe"
COMPLETION_FILES = {"bash": "mcpprobe.bash", "zsh": "_mcpprobe", "fish": "mcpprobe.fish"}
COMPLETION_HEADER = "# Generated from mcpprobe's CLI by completions/generate.py; do not edit. Install: README.md.\n"


def docs_dir() -> Path | None:
    """Where the pages are: a checkout's docs/, else the installed data files; None when neither."""
    candidates = [CHECKOUT / "docs"]
    prefixes = [sysconfig.get_path("data"), sys.prefix, getattr(site, "USER_BASE", None) or site.getuserbase()]
    candidates += [Path(prefix) / SHARE / "docs" for prefix in prefixes if prefix]
    for candidate in candidates:
        if (candidate / "exit-codes.md").is_file():
            return candidate
    return None


def topics() -> dict[str, Path]:
    """Topic name -> page: `exit-codes`, `findings`, ..., and each command's page by its name
    (`probe`, `watch`) and as `commands/NAME`; each check family's page as `checks/NAME`."""
    root = docs_dir()
    if root is None:
        return {}
    found: dict[str, Path] = {}
    for page in sorted(root.glob("*.md")):
        found[page.stem] = page
    if (root / "output.schema.json").is_file():
        found["output-schema"] = root / "output.schema.json"  # the JSON Schema of --json
    for page in sorted((root / "commands").glob("*.md")):
        found.setdefault(page.stem, page)
        found[f"commands/{page.stem}"] = page
    for page in sorted((root / "checks").glob("*.md")):  # a page per check family, as `checks/NAME`
        found[f"checks/{page.stem}"] = page
    return found


def title(page: Path) -> str:
    """The page's first heading, without its hashes."""
    if page.suffix == ".json":
        return "JSON Schema of the --json output"
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            return line.lstrip("#").strip().replace("`", "")
    return page.stem


def completion_script(shell: str, cli: click.Command) -> str:
    """The completion script of the `cli` group (mcpprobe's root, handed in by the command that asks,
    so that this module does not import the group that imports it) for `shell` (bash, zsh, fish), as
    completions/ holds it."""
    from click.shell_completion import get_completion_class

    cls = get_completion_class(shell)
    if cls is None:
        raise ValueError(f"no completion for {shell!r}")
    source = cls(cli, {}, "mcpprobe", "_MCPPROBE_COMPLETE").source().strip() + "\n"
    if source.startswith("#compdef"):  # zsh reads #compdef only on the first line
        first, rest = source.split("\n", 1)
        return f"{first}\n{COMPLETION_HEADER}{rest}"
    return COMPLETION_HEADER + source
