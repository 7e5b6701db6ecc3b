"""The console script: start a plainly named stdio server first (`mcpprobe.prestart`), then load
the CLI; whatever happens, an early server nobody adopted does not outlive the run."""

from __future__ import annotations

import sys


def main() -> None:
    args = sys.argv[1:]
    if args[:1] not in (["probe"], ["list"]) or "--" not in args:  # --help, --version, completion...
        from mcpprobe.cli import main as cli_main

        cli_main()
        return
    from mcpprobe import prestart

    prestart.start(args)
    try:
        from mcpprobe.cli import main as cli_main

        cli_main()
    finally:
        prestart.discard()
        if prestart.interrupted():  # Ctrl-C (or SIGTERM) during the imports, nothing else to do
            sys.stderr.write("interrupted\n")
            raise SystemExit(130)  # noqa: B012 - the signal decides the exit code
