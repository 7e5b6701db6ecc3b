"""Write the shell completion scripts in this directory, generated from mcpprobe's click CLI.

    python completions/generate.py          # rewrite mcpprobe.bash, _mcpprobe, mcpprobe.fish
    python completions/generate.py --check  # exit 1 when a script is out of date (tests/e2e/cli/test_completions.py)

Each script hands the words typed so far back to `mcpprobe` itself (click's completion protocol,
`_MCPPROBE_COMPLETE`), so subcommands, options, choices such as kinds and formats, and server names
read from the configs are always those of the installed version.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def scripts() -> dict[str, str]:
    from mcpprobe.cli.bundled import COMPLETION_FILES, completion_script
    from mcpprobe.cli.main import cli

    return {name: completion_script(shell, cli) for shell, name in COMPLETION_FILES.items()}


def main(argv: list[str]) -> int:
    stale = []
    for name, text in scripts().items():
        path = HERE / name
        if "--check" in argv:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
        else:
            path.write_text(text, encoding="utf-8")
    if stale:
        print(f"out of date: {', '.join(stale)}; run: python completions/generate.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
