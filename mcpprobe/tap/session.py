"""One tap run, live (`run_live`: the relay, the observer, the record) or offline (`replay`).

The caller (the command line) gives `say`, where the live view's lines go (stderr or --log's file); this
module writes nothing itself but the record.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcpprobe.findings import Finding
from mcpprobe.safety.redact import Redactor
from mcpprobe.tap.judge import Judge
from mcpprobe.tap.observer import Observer
from mcpprobe.tap.record import (
    RecordWriter,
    open_private,
    read_record,
    record_offset,
    secrets_of,
    start_event,
)
from mcpprobe.tap.relay import StdioRelay
from mcpprobe.tap.report import Summary, Timeline, finding_line, live_line

FINISH_SECONDS = 5.0  # after the server exits, how long judging may take to catch up before the report

Say = Callable[[str], None]


@dataclass
class TapOptions:
    command: list[str]
    record: str | None
    cut: int
    say: Say | None  # the live view; None: no live view
    messages: bool  # the live view shows every message, not only events and findings
    timeline: bool = False  # keep the rows of the HTML report's sequence


def _live(say: Say | None, messages: bool,
          timeline: Timeline | None = None) -> Callable[[dict[str, Any], list[Finding]], None] | None:
    if say is None and timeline is None:
        return None

    def show(entry: dict[str, Any], found: list[Finding]) -> None:
        if timeline is not None:
            timeline.add(entry, found)
        if say is None:
            return
        if messages or "event" in entry:
            say(live_line(entry))
        for finding in found:
            say(finding_line(finding))

    return show


def _timed(summary: Summary, timeline: Timeline | None) -> None:
    if timeline is not None:
        summary.timeline, summary.timeline_dropped = timeline.rows, timeline.dropped


def _count(summary: Summary, judge: Judge) -> None:
    summary.messages = judge.messages
    summary.skipped = judge.skipped
    summary.more = dict(judge.more)


def _open_record(path: str | None, judge: Judge) -> tuple[RecordWriter | None, float, bool]:
    """The record's writer, where its time goes on, and whether this run is a reconnect. A record appended to
    is judged again silently first, so that the new connection is judged as a reconnect (a cached list
    reused, ...)."""
    if path is None:
        return None, 0.0, False
    offset, reconnect = 0.0, False
    if os.path.isfile(path) and os.path.getsize(path) > 0:
        judge.quiet = True
        for entry in read_record(path):
            judge.feed(entry)
        judge.finish()
        judge.quiet = False
        judge.findings.clear()
        judge.more.clear()
        judge.reset_counts()
        judge.skipped = 0
        judge.messages = 0
        offset = record_offset(path)
        reconnect = True
    return RecordWriter(open_private(path, append=reconnect)), offset, reconnect


def run_live(options: TapOptions, relay: StdioRelay, redactor: Redactor) -> tuple[list[Finding], Summary]:
    """Start the server, relay until it ends; judge and record meanwhile. RecordError or OSError for a record
    that cannot be read or written (before the server starts); relay.StartFailed for a server that cannot."""
    judge = Judge()
    writer, offset, reconnect = _open_record(options.record, judge)
    timeline = Timeline() if options.timeline else None
    observer = Observer(judge, redactor, writer=writer, live=_live(options.say, options.messages, timeline),
                        cut=options.cut, offset=offset)
    relay.observe = observer.offer
    try:
        relay.start()
    except BaseException:
        if writer is not None:
            writer.close()
        raise
    start = start_event(options.command, redactor, reconnect=reconnect)
    start["t"] = round(offset, 6)
    start["pid"] = relay.pid
    observer.event(start)
    observer.start()
    ended = relay.run()
    observer.stop(FINISH_SECONDS)
    exit_entry = {"event": "exit", "t": round(observer.elapsed(), 6), "status": ended.status}
    if ended.signal is not None:
        exit_entry["signal"] = ended.signal
    if observer.failure is None:
        observer.event(exit_entry)
    final = judge.finish()
    if timeline is not None:
        timeline.add_findings(final)
    if options.say is not None:
        for finding in final:
            options.say(finding_line(finding))
    if writer is not None:
        writer.close()
    summary = Summary(connections=1, exit_status=ended.status, exit_signal=ended.signal, record=options.record,
                      judge_failure=observer.failure, record_failure=writer.error if writer else None)
    _count(summary, judge)
    _timed(summary, timeline)
    summary.from_client, summary.from_server = observer.tally["c2s"], observer.tally["s2c"]
    return judge.findings, summary


def replay(path: str, say: Say | None, messages: bool,
           with_timeline: bool = False) -> tuple[list[Finding], Summary]:
    """Judge a record offline, showing it again on the live view as it goes. RecordError for a bad file."""
    judge = Judge()
    timeline = Timeline() if with_timeline else None
    show = _live(say, messages, timeline)
    summary = Summary(record=path, replayed=True)
    for entry in read_record(path):
        found = judge.feed(entry)
        if entry.get("event") in ("start", "reconnect"):
            summary.connections += 1
        elif entry.get("event") == "exit":
            status, sig = entry.get("status"), entry.get("signal")
            summary.exit_status = status if isinstance(status, int) else None
            summary.exit_signal = sig if isinstance(sig, int) else None
        elif entry.get("dir") == "c2s":
            summary.from_client += 1
        elif entry.get("dir") == "s2c":
            summary.from_server += 1
        if show is not None:
            show(entry, found)
    final = judge.finish()
    if judge.over_http:  # over HTTP each session is a connection
        summary.connections, summary.sessions_dropped = judge.opened, judge.dropped
    if say is not None:
        for finding in final:
            say(finding_line(finding))
    if timeline is not None:
        timeline.add_findings(final)
    _count(summary, judge)
    _timed(summary, timeline)
    return judge.findings, summary


def redactor_for(command: list[str]) -> Redactor:
    return Redactor(secrets_of(command, dict(os.environ)))


def run_http(options: TapOptions, upstream: str, host: str, port: int, redactor: Redactor,
             ready: Callable[[str], None]) -> tuple[list[Finding], Summary]:
    """Proxy `upstream` on host:port until SIGINT or SIGTERM; judge and record meanwhile."""
    from mcpprobe.tap.http import Proxy, serve

    judge = Judge()
    writer, offset, reconnect = _open_record(options.record, judge)
    timeline = Timeline() if options.timeline else None
    observer = Observer(judge, redactor, writer=writer, live=_live(options.say, options.messages, timeline),
                        cut=options.cut, offset=offset)
    start = start_event([], redactor, reconnect=reconnect)
    start["t"] = round(offset, 6)
    start.pop("command")
    start["transport"] = "http"
    start["upstream"] = redactor(upstream)
    observer.event(start)
    observer.start()
    proxy = Proxy(upstream, observer.offer_whole, redactor)
    serve(host, port, proxy, ready)
    observer.stop(FINISH_SECONDS)
    if observer.failure is None:
        observer.event({"event": "exit", "t": round(observer.elapsed(), 6)})
    final = judge.finish()
    if timeline is not None:
        timeline.add_findings(final)
    if options.say is not None:
        for finding in final:
            options.say(finding_line(finding))
    if writer is not None:
        writer.close()
    summary = Summary(connections=judge.opened, record=options.record, judge_failure=observer.failure,
                      record_failure=writer.error if writer else None, sessions_dropped=judge.dropped)
    _count(summary, judge)
    _timed(summary, timeline)
    summary.from_client, summary.from_server = observer.tally["c2s"], observer.tally["s2c"]
    return judge.findings, summary
