"""The command line for `load`: click glue over `mcpprobe.load`.

`mcpprobe.cli.main` adds the command to the group. Light at import time (click only): the load package,
the SDK's neighbours and rich are imported when the command runs. The first Ctrl-C (or SIGTERM,
SIGHUP) stops the run and reports what was measured, exit 130; a second one ends at once.
"""

from __future__ import annotations

import re
import signal
import sys
from typing import TYPE_CHECKING, Any

import click

from mcpprobe.cli.common import CONTEXT, Confirmation, command_line, run_operation, session_extras, trace_checked
from mcpprobe.cli.options import (
    TargetCommand,
    connection_options,
    not_negative,
    output_options,
    positive,
    server_options,
)
from mcpprobe.render.interface import OFFERED

if TYPE_CHECKING:
    from mcpprobe.cli.invocation import Connection, NamedServers, Output, ServerInvocation
    from mcpprobe.client.connect import SessionHooks
    from mcpprobe.client.settings import Settings
    from mcpprobe.load.live import LiveMetrics
    from mcpprobe.load.run import LoadOutcome, Plan, Runner
    from mcpprobe.load.slo import Slo
    from mcpprobe.load.work import Spec

_WEIGHT_ONLY = re.compile(r"^@\d+$")
MAX_CONCURRENCY = 10_000
OPEN_LOOP_IN_FLIGHT = 100  # --rate without --concurrency: requests allowed in flight at once


def _specs(calls: tuple[str, ...], reads: tuple[str, ...], lists: tuple[str, ...], prompts: tuple[str, ...],
           ping: str | None) -> tuple[Spec, ...]:
    from mcpprobe.errors import UsageProblem
    from mcpprobe.load.work import SpecError, parse_spec

    specs = []
    for option, kind, values in (("--call", "call", calls), ("--read", "read", reads), ("--list", "list", lists),
                                 ("--get-prompt", "get-prompt", prompts), ("--ping", "ping", (ping,) if ping else ())):
        for value in values:
            try:
                specs.append(parse_spec(kind, value if kind != "ping" else f" {value}"))
            except (SpecError, UsageProblem, click.UsageError, ValueError) as exc:
                message = exc.message if isinstance(exc, UsageProblem | click.UsageError) else str(exc)
                raise click.BadParameter(f"{value!r}: {message}", param_hint=f"'{option}'") from None
    if not specs:
        raise click.UsageError("give the work: at least one of --call 'TOOL KEY=VALUE...', --read URI, --list KIND, "
                               "--get-prompt 'NAME KEY=VALUE...' or --ping")
    return tuple(specs)


def _slos(values: tuple[str, ...]) -> tuple[Slo, ...]:
    from mcpprobe.load.slo import SloSyntax, parse

    try:
        return tuple(parse(value) for value in values)
    except SloSyntax as exc:
        raise click.BadParameter(str(exc), param_hint="'--slo'") from None


class _LiveLine:
    """The live line on a terminal's stderr, rewritten in place on each tick; `clear` wipes it."""

    def __init__(self) -> None:
        self.shown = False

    def __call__(self, live: dict[str, Any]) -> None:
        from mcpprobe.render.load import live_line

        sys.stderr.write("\r\x1b[2K" + live_line(live, _stderr_columns()))
        sys.stderr.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            sys.stderr.write("\r\x1b[2K")
            sys.stderr.flush()


def _stderr_columns() -> int | None:
    """The width of the terminal the live line is on (stderr's, which stdout's need not be), or COLUMNS."""
    import os

    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        return os.get_terminal_size(sys.stderr.fileno()).columns or None
    except (AttributeError, ValueError, OSError):
        return None


def _live(inv: ServerInvocation) -> _LiveLine | None:
    """The live line on a terminal's stderr, rewritten in place; None when stderr is not for it."""
    if not sys.stderr.isatty() or inv.output.trace == "-" or inv.settings.server_stderr == "live":
        return None
    return _LiveLine()


def _run(inv: ServerInvocation, plan: Plan, session_hooks: SessionHooks,
         metrics: LiveMetrics | None = None) -> LoadOutcome | None:
    from mcpprobe.load.run import run_load

    holder: dict[str, Runner] = {}

    def stop() -> bool:
        # The first signal stops the load and keeps its figures; before the load has started, it
        # cancels like any other command.
        runner = holder.get("runner")
        if runner is None:
            return False
        runner.interrupt()
        return True

    live = _live(inv)
    try:
        return run_operation(run_load, inv.target, inv.settings, plan, on_tick=live,
                             on_start=lambda runner: holder.__setitem__("runner", runner), stop=stop,
                             signals=(signal.SIGINT, signal.SIGTERM, signal.SIGHUP), session_hooks=session_hooks,
                             live=metrics)
    finally:
        if live is not None:
            live.clear()


def _ping_weight(ping: str | None) -> str | None:
    """--ping takes nothing, or @WEIGHT (a URL right after it is the server's: the edge gives it its
    value, mcpprobe.cli.edge.optional_values)."""
    if ping is None or _WEIGHT_ONLY.match(ping):
        return ping
    raise click.BadParameter(f"{ping!r}: --ping takes nothing, or @WEIGHT", param_hint="'--ping'")


def _listen_address(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[str, int] | None:
    """--metrics-listen HOST:PORT ([::1]:PORT for IPv6): parsed here, bound when the command runs."""
    if value is None:
        return None
    host, sep, port = value.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise click.BadParameter(f"{value!r} is not HOST:PORT (127.0.0.1:9464, or port 0 for any free one)")
    return host, int(port)


def _live_metrics(address: tuple[str, int], linger: float, run_id: str | None, worker: str | None) -> LiveMetrics:
    """The bound socket of --metrics-listen (a usage error, before anything starts, when it cannot be
    bound), and a word on stderr saying where it is; a warning when it is not a loopback address."""
    import ipaddress
    import os
    import secrets
    import socket

    from mcpprobe.load.live import LiveMetrics
    from mcpprobe.safety.sanitize import visible

    host, port = address
    try:
        family, kind, proto, _, where = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(where)
        sock.listen(16)
        sock.setblocking(False)
    except OSError as exc:
        raise click.BadParameter(f"cannot listen on {host}:{port}: {exc.strerror or exc}",
                                 param_hint="'--metrics-listen'") from None
    labels = {"run": run_id or secrets.token_hex(4), "worker": worker or f"{socket.gethostname()}-{os.getpid()}"}
    metrics = LiveMetrics(sock, labels, linger)
    click.echo(visible(f"mcpprobe: live metrics on http://{metrics.address}/metrics (run {labels['run']}, worker "
                       f"{labels['worker']})"), err=True)
    try:
        loopback = ipaddress.ip_address(sock.getsockname()[0]).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        click.echo("warning: --metrics-listen is not a loopback address: anyone who can reach it reads the "
                   "run's figures and operation names", err=True)
    return metrics


def _start_time(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    """--start-at: UTC ISO 8601 (a zone is required: a worker's local time is no common clock) or Unix
    seconds; at most a day ahead, so that a typo does not leave a worker waiting for a year."""
    import math
    import time
    from datetime import datetime

    if value is None:
        return None
    try:
        when = float(value)
    except ValueError:
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            raise click.BadParameter(f"{value!r} is neither ISO 8601 (2026-12-04T05:00:00Z) nor Unix seconds") from None
        if moment.tzinfo is None:
            raise click.BadParameter(f"{value!r} has no time zone: add Z (UTC) or an offset such as +01:00") from None
        when = moment.timestamp()
    if not math.isfinite(when) or when - time.time() > 86_400:
        raise click.BadParameter(f"{value!r} is more than a day from now")
    return when



@click.command("load", cls=TargetCommand, context_settings=CONTEXT)
@click.argument("url", nargs=-1, metavar="[URL] [-- COMMAND [ARGS]...]")
@click.option("--call", "calls", multiple=True, metavar="'TOOL [KEY=VALUE]... [@WEIGHT]'",
              help="Call TOOL (repeatable). Checked as `call` checks it: listed, arguments valid by its "
                   "inputSchema; a tool not marked read-only needs --yes, or a yes on a terminal.")
@click.option("--read", "reads", multiple=True, metavar="'URI [@WEIGHT]'",
              help="Read a resource (repeatable); it must be listed or match a template unless --force.")
@click.option("--list", "lists", multiple=True, metavar="'KIND [@WEIGHT]'",
              help="Ask for the first page of tools, resources, templates or prompts (repeatable).")
@click.option("--get-prompt", "prompts", multiple=True, metavar="'NAME [KEY=VALUE]... [@WEIGHT]'",
              help="Expand a prompt (repeatable), checked as `get-prompt` checks it.")
@click.option("--ping", is_flag=False, flag_value="@1", default=None, metavar="[@WEIGHT]",
              help="Send ping (protocols before 2026-07-28). @WEIGHT, as for the others, weighs it in the mix.")
@click.option("--requests", "requests", type=int, default=None, metavar="N", callback=positive,
              help="Stop after N measured requests (warm-up not counted).")
@click.option("--duration", type=float, default=None, metavar="SECONDS", callback=positive,
              help="Stop starting requests after SECONDS of measuring; those in flight finish (within --timeout). "
                   "Default 10 when --requests is not given either; with both, whichever comes first.")
@click.option("--concurrency", type=int, default=None, metavar="C", callback=positive,
              help="Closed loop: C requests in flight at all times (default 1). With --rate: at most C in flight "
                   f"(default {OPEN_LOOP_IN_FLIGHT}).")
@click.option("--rate", type=float, default=None, metavar="PER_SECOND", callback=positive,
              help="Open loop: start requests at this rate whether or not earlier ones were answered; latency "
                   "counts from when each was due (no coordinated omission).")
@click.option("--warmup", type=float, default=0.0, show_default=True, metavar="SECONDS", callback=not_negative,
              help="Send load for SECONDS before measuring; those requests are not counted.")
@click.option("--connections", type=int, default=1, show_default=True, metavar="K", callback=positive,
              help="HTTP only: spread the load over K sessions, each with its own handshake (or, in 2026-07-28, "
                   "its own connection).")
@click.option("--interval", type=float, default=1.0, show_default=True, metavar="SECONDS", callback=positive,
              help="The length of a row of the figures over time. A stdio server's memory is sampled four times a "
                   "second, or at this interval if shorter.")
@click.option("--slo", "slos", multiple=True, metavar="'METRIC<VALUE'",
              help="An objective (repeatable): p50/p90/p99/p99.9/max/mean<DURATION (us, ms, s), errors<N% or "
                   "errors<=N, throughput>N/s. A missed one is a finding, exit 1.")
@click.option("-y", "--yes", is_flag=True,
              help="With --call: call a tool not marked read-only without asking (without a terminal, it needs this).")
@click.option("--start-at", "start_at", default=None, metavar="TIME", callback=_start_time,
              help="Connect, then wait until TIME to begin (UTC ISO 8601 such as 2026-12-04T05:00:00Z, or Unix "
                   "seconds): workers on several machines begin together. A TIME passed begins at once.")
@click.option("--metrics-listen", "metrics_listen", default=None, metavar="HOST:PORT", callback=_listen_address,
              help="Serve the figures as OpenMetrics at http://HOST:PORT/metrics while the run goes on (port 0: "
                   "any free one, said on stderr), labelled with --run-id and --worker, for Prometheus to add up "
                   "over workers. The last figures stay served until scraped once, at most --metrics-linger.")
@click.option("--metrics-linger", type=float, default=30.0, show_default=True, metavar="SECONDS",
              callback=not_negative, help="With --metrics-listen: how long the ended run waits for a last scrape.")
@click.option("--run-id", default=None, metavar="ID", help="The run label of the live metrics (default: random).")
@click.option("--worker", default=None, metavar="NAME",
              help="The worker label of the live metrics (default: this machine's name and mcpprobe's pid).")
@click.option("--merge", is_flag=True,
              help="Combine the documents of several runs (files written by `load --json`, named in place of "
                   "the server) into one: percentiles of all their requests pooled, counts added, throughput "
                   "over the union of their windows, SLOs judged again. Starts no server.")
@server_options(many=False)
@output_options(*OFFERED["load"])
@connection_options
@click.pass_context
def load_command(ctx: click.Context, url: tuple[str, ...], calls: tuple[str, ...], reads: tuple[str, ...],
                 lists: tuple[str, ...], prompts: tuple[str, ...], ping: str | None, requests: int | None,
                 duration: float | None, concurrency: int | None, rate: float | None, warmup: float,
                 connections: int, interval: float, slos: tuple[str, ...], yes: bool, start_at: float | None,
                 metrics_listen: tuple[str, int] | None, metrics_linger: float, run_id: str | None,
                 worker: str | None, merge: bool, named: NamedServers, output: Output, connection: Connection,
                 settings: Settings) -> int:
    """Measure a server under load: latency, throughput, errors, and its memory over time.

    The work is one or more operations, mixed by weight (@WEIGHT, default 1). Closed loop by
    default (--concurrency requests in flight, each sent when the last is answered); --rate
    makes it open loop (requests start on schedule; latency counts from when each was due).
    Every latency goes into a histogram within 0.4 % of the true value; the report has min,
    p50, p90, p99, p99.9, max, throughput and errors by kind (rpc CODE, isError, timeout,
    http STATUS, transport), per operation and overall, a row per --interval, what the client
    spent, and for a stdio server its memory, open files and threads (a steady growth is a
    server-leak finding).

    Exit: 0 the run worked (request errors are figures, not failures); 1 an --slo missed;
    2 usage (bad --slo); 3 refused (a check of the operation failed, a tool not read-only
    not confirmed: no yes on a terminal, no --yes); 4 connection lost; 5, 6, 7 as for every
    command; 130 Ctrl-C, with what was measured so far.

    \b
    Examples:
      mcpprobe load --call 'add a=1 b=2' --concurrency 10 --requests 5000 -- mcpprobe-demo
      mcpprobe load --rate 200 --duration 60 --call 'add a=1 b=2 @9' --read 'demo://readme' -- mcpprobe-demo
      mcpprobe load --list tools --rate 50 --duration 30 --slo 'p99<200ms' --slo 'errors<0.1%' https://example.com/mcp
      mcpprobe load --ping --duration 600 --rate 20 --json -- python server.py > soak.json
      mcpprobe load --merge worker-*.json
    """
    from mcpprobe.cli.invocation import resolve
    from mcpprobe.cli.output import stderr_console
    from mcpprobe.load.run import Plan

    if merge:
        if calls or reads or lists or prompts or ping or ctx.meta.get("server_command") or named.names:
            raise click.UsageError("--merge combines load documents: give their files, and no server or work")
        return _merged(url, output)
    ping = _ping_weight(ping)
    specs = _specs(calls, reads, lists, prompts, ping)
    objectives = _slos(slos)
    if concurrency is not None and concurrency > MAX_CONCURRENCY:
        raise click.BadParameter(f"at most {MAX_CONCURRENCY:,}", param_hint="'--concurrency'")
    inv = resolve(command_line(ctx, url, named, connection, settings, output))
    if connections > 1 and inv.target.transport == "stdio":
        raise click.BadParameter("is for HTTP servers: a stdio server has one connection, its stdin and stdout",
                                 param_hint="'--connections'")
    plan = Plan(specs=specs, requests=requests, duration=duration,
                concurrency=concurrency or (OPEN_LOOP_IN_FLIGHT if rate else 1), rate=rate, warmup=warmup,
                connections=connections, interval=interval, slos=objectives, yes=yes, start_at=start_at,
                confirmer=Confirmation(stderr_console(inv.redactor), inv.redactor, inv.output.as_json, yes=yes,
                                       repeated=True))
    metrics = None if metrics_listen is None else _live_metrics(metrics_listen, metrics_linger, run_id, worker)
    inv.tell("loading the server")
    with session_extras(inv) as (session_hooks, trace):
        outcome = _run(inv, plan, session_hooks, metrics)
    return trace_checked(trace, inv.output, _emit(inv, outcome))


def _merged(files: tuple[str, ...], output: Output) -> int:
    """--merge: read each document, merge them, print the result in the chosen format."""
    import json

    from mcpprobe.cli.output import show
    from mcpprobe.load.merge import as_outcome, merge
    from mcpprobe.render.interface import Loaded
    from mcpprobe.safety.redact import Redactor
    from mcpprobe.safety.userinput import loads, read_text

    documents = []
    for name in files:
        text = read_text(name, f"--merge {name}")
        try:
            documents.append((name, loads(text, f"--merge {name}")))
        except json.JSONDecodeError as exc:
            raise click.UsageError(f"--merge {name}:{exc.lineno}: not JSON ({exc.msg})") from None
    document = merge(documents)
    show(Loaded(as_outcome(document), merged=document), output.format, Redactor(()))
    return int(document["exitCode"])


def _emit(inv: ServerInvocation, outcome: LoadOutcome | None) -> int:
    from mcpprobe.cli.output import emit_outcome, show
    from mcpprobe.render.interface import Loaded

    if outcome is None:  # interrupted before the load started
        return emit_outcome(None, inv.output.as_json, inv.command, inv.redactor)
    show(Loaded(outcome, inv.named), inv.output.format, inv.redactor)
    return int(outcome.exit_code)
