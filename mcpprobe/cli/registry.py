"""Every command: where it is defined, and what the edge must know of it before importing it.

Read by the group (cli/main.py: help, completion, loading a command when it runs) and by the edge
(cli/edge.py: what Ctrl-C before a command ran may write), which main.py imports: the table lives
here, below both, so neither imports the other for it. Nothing here imports click.
"""

from __future__ import annotations

from typing import NamedTuple


class Entry(NamedTuple):
    """Where a command is defined, and its short help: the first paragraph of its docstring (a test
    keeps the two equal), shown by `mcpprobe --help` and by completion without importing `module`."""

    module: str
    attribute: str
    help: str
    # Its stdout is a host's channel to a server (`tap`): nothing of mcpprobe's is ever written there,
    # not even the interrupted document when Ctrl-C comes before the command ran (cli/edge.py).
    stdout_is_the_hosts: bool = False


COMMANDS: dict[str, Entry] = {
    "auth": Entry("mcpprobe.cli.auth", "auth_group",
                  "Log in to HTTP servers (OAuth 2.1), and see or remove the stored tokens."),
    "call": Entry("mcpprobe.cli.invoke", "call_command",
                  "Call one tool (tools/call), after checking it against the tool list and its inputSchema."),
    "check": Entry("mcpprobe.cli.check", "check_command",
                   "Check the server's behaviour against the specification, rule by rule, gated on what it declared."),
    "completion": Entry("mcpprobe.cli.docs", "completion_command",
                        "Print the shell completion script for SHELL (bash, zsh or fish)."),
    "docs": Entry("mcpprobe.cli.docs", "docs_command",
                  "Show mcpprobe's own documentation: exit codes, findings, the JSON output, each command."),
    "exporter": Entry("mcpprobe.cli.exporter", "exporter_command",
                      "Serve Prometheus: /probe?target=NAME probes a named server when Prometheus scrapes it."),
    "get-prompt": Entry("mcpprobe.cli.invoke", "get_prompt_command",
                        "Expand one prompt (prompts/get) with its arguments and show the messages."),
    "list": Entry("mcpprobe.cli.probe", "list_command",
                  "List one kind (tools, resources, templates, prompts or tasks) to the end, with its completeness."),
    "load": Entry("mcpprobe.cli.load", "load_command",
                  "Measure a server under load: latency, throughput, errors, and its memory over time."),
    "probe": Entry("mcpprobe.cli.probe", "probe",
                   "Connect, show what was negotiated, and list every declared kind to the end."),
    "read": Entry("mcpprobe.cli.invoke", "read_command",
                  "Read one resource (resources/read). The URI must be listed or match a listed template."),
    "servers": Entry("mcpprobe.cli.probe", "servers_command",
                     "Show every named server found in the config files, and the file it came from."),
    "tap": Entry("mcpprobe.cli.tap", "tap_command",
                 "Sit between a host and its server (stdio or HTTP): relay every byte, record, and judge both sides.",
                 stdout_is_the_hosts=True),
    "watch": Entry("mcpprobe.cli.watch", "watch_command",
                   "Stay connected and report what changes, live, until stopped."),
}
