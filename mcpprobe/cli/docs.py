"""`mcpprobe docs [TOPIC]` and `mcpprobe completion SHELL`: what comes with mcpprobe, readable
without the repository. Light at import time, like `mcpprobe.cli.main`."""

from __future__ import annotations

import sys

import click

from mcpprobe.cli.edge import CONTEXT, EdgeCommand

SHELLS = ("bash", "zsh", "fish")


@click.command("docs", cls=EdgeCommand, context_settings=CONTEXT)
@click.argument("topic", required=False)
def docs_command(topic: str | None) -> None:
    """Show mcpprobe's own documentation: exit codes, findings, the JSON output, each command.

    Without TOPIC, lists the topics. The pages are those of docs/ in the repository, installed
    with mcpprobe.

    \b
    Examples:
      mcpprobe docs
      mcpprobe docs exit-codes
      mcpprobe docs findings | less
      mcpprobe docs probe
    """
    from mcpprobe.cli.bundled import title, topics

    pages = topics()
    if not pages:
        click.echo("error: this installation of mcpprobe has no documentation pages; read docs/ in mcpprobe's "
                   "source repository", err=True)
        sys.exit(1)
    if topic is None:
        width = max(len(name) for name in pages)
        for name, page in pages.items():
            # A command's page is listed by its short name, unless a topic of that name is another page
            # (`exporter` is the exporter's guide; its command's page is `commands/exporter`).
            short = name.removeprefix("commands/")
            if name == short or pages.get(short) != page:
                click.echo(f"{name:<{width}}  {title(page)}")
        click.echo("\nmcpprobe docs TOPIC shows one page (Markdown).")
        return
    key = topic.removesuffix(".md").removeprefix("docs/")
    if key not in pages:
        import difflib

        close = difflib.get_close_matches(key, list(pages), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else "; `mcpprobe docs` lists them"
        raise click.UsageError(f"no documentation topic {topic!r}{hint}")
    click.echo(pages[key].read_text(encoding="utf-8"), nl=False)


@click.command("completion", cls=EdgeCommand, context_settings=CONTEXT)
@click.argument("shell", type=click.Choice(SHELLS))
def completion_command(shell: str) -> None:
    """Print the shell completion script for SHELL (bash, zsh or fish).

    \b
    Install:
      bash (4.4 or later):  mcpprobe completion bash > ~/.local/share/bash-completion/completions/mcpprobe
      zsh:                  mcpprobe completion zsh > ~/.zfunc/_mcpprobe   (with ~/.zfunc in $fpath)
      fish:                 mcpprobe completion fish > ~/.config/fish/completions/mcpprobe.fish
    """
    from mcpprobe.cli.bundled import completion_script

    click.echo(completion_script(shell, click.get_current_context().find_root().command), nl=False)
