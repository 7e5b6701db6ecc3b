"""Human output for `watch`: a status header, then one timestamped line per event. The JSON lines
are built in mcpprobe.render.jsondoc; the writer that shows each event as it happens, in any format,
is the command's (`EventLines`, mcpprobe.cli.watch).

Every string from the server is made inert: in JSON by `ensure_ascii=True` (no control character
reaches a terminal raw), in human output by `sanitize.visible` inside rich `Text` objects, never
through rich's markup parser.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from mcpprobe.client.kinds import LIST_KINDS
from mcpprobe.render.console import keyed
from mcpprobe.render.human import capabilities_text
from mcpprobe.render.styled import NOT_IMPLEMENTED

if TYPE_CHECKING:
    from mcpprobe.render.cells import Safe
    from mcpprobe.render.interface import WatchEvent

KIND_TITLES = {"tools": "Tools", "resources": "Resources", "templates": "Templates", "prompts": "Prompts",
               "server": "server"}
EVENT_STYLE = {
    "list_changed": "yellow", "diff": "green", "stale": "bold red", "resource_updated": "cyan", "log": "magenta",
    "reconnect": "bold yellow", "capabilities_changed": "bold magenta", "error": "bold red", "finding": "yellow",
    "notice": "cyan", "subscribed": "cyan", "call": "blue", "snapshot": "bold", "end": "dim",
}
LEVEL_STYLE = {"debug": "dim", "info": "", "notice": "cyan", "warning": "yellow", "error": "red",
               "critical": "bold red", "alert": "bold red", "emergency": "bold red"}
MAX_NAMES = 20


def render_event(console: Console, subject: WatchEvent, now: float, safe: Safe) -> None:
    """One event for people: a part of the status header, or one line stamped with `now`."""
    event = subject.event
    if not subject.header:
        console.print(_line(event, now, safe))
        return
    if event.get("kind") == "server":
        _server_header(console, event, safe)
        return
    console.print(keyed(KIND_TITLES.get(str(event.get("kind")), str(event.get("kind"))), _kind_text(event, safe)))
    if subject.header_ends:
        console.print(Text("Watching for changes (Ctrl-C to stop)", style="dim"))


def _server_header(console: Console, event: dict[str, Any], safe: Safe) -> None:
    info = event.get("serverInfo") or {}
    server = Text()
    server.append(safe(info.get("name", "(no serverInfo)")), style="bold")
    if info.get("version") is not None:
        server.append(" " + safe(info.get("version")))
    console.print(keyed("Server", server))
    where = f"{event.get('transport')}: {safe(event.get('target'), 100)}"
    console.print(keyed("Transport", Text(where)))
    era = "modern era" if event.get("era") == "modern" else "legacy era"
    console.print(keyed("Protocol", Text(f"{safe(event.get('protocolVersion') or '?')}  ({era})")))
    console.print(keyed("Capabilities", capabilities_text(event.get("capabilities") or {}, safe)))


def _kind_text(event: dict[str, Any], safe: Safe) -> Text:
    text = Text()
    if not event.get("declared"):
        text.append("not declared; nothing sent", style="dim")
        return text
    state = event.get("state") or event.get("status")
    if state == "not-implemented":
        kind = LIST_KINDS.get(str(event.get("kind")))
        text.append(NOT_IMPLEMENTED.format(capability=kind.capability if kind else "?"), style="dim")
        return text
    text.append(_items(event.get("count", 0)), style="bold")
    text.append(f", {state}", style="green" if state == "complete" else "bold red")
    notifications = event.get("notifications")
    if notifications == "promised":
        text.append(" · change notifications promised", style="dim")
    elif notifications == "refused":
        text.append(" · change notifications refused by subscriptions/listen", style="yellow")
        if event.get("poll"):
            text.append(f"; polled every {event['poll']:g} s", style="yellow")
    elif event.get("poll"):
        text.append(f" · no change notifications promised; polled every {event['poll']:g} s", style="yellow")
    else:
        text.append(" · no change notifications promised", style="yellow")
    if event.get("staleReason"):
        text.append(f" · {safe(event['staleReason'], 200)}", style="red")
    return text


class _Line:
    """An event's line: the time, the event and the kind in their columns, then the message, which
    wraps under itself, never back to the left margin; on a terminal too narrow for the columns
    and some of the message, the message goes under them, indented."""

    def __init__(self, head: Text, message: Text) -> None:
        self.head, self.message = head, message

    def __rich_console__(self, console: Console, options: Any) -> Any:
        if self.head.cell_len + self.message.cell_len <= options.max_width:
            yield self.head + self.message
        elif self.head.cell_len <= options.max_width // 2:
            grid = Table.grid()
            grid.add_column(no_wrap=True, min_width=self.head.cell_len)
            grid.add_column(overflow="fold")
            grid.add_row(self.head, self.message)
            yield grid
        else:
            yield self.head
            yield Padding(self.message, (0, 0, 0, MESSAGE_INDENT))


MESSAGE_INDENT = 14  # under the event's name


def _line(event: dict[str, Any], now: float, safe: Safe) -> _Line:
    name = str(event.get("event"))
    line = Text()
    line.append(datetime.fromtimestamp(now).strftime("%H:%M:%S.%f")[:-3] + "  ", style="dim")
    style = EVENT_STYLE.get(name, "")
    if name == "diff" and not event.get("changes"):
        style = "dim"
    if name == "finding":
        style = {"error": "bold red", "warning": "yellow"}.get(str(event.get("severity")), "cyan")
    line.append(f"{name:<20}", style=style)
    kind = event.get("kind")
    line.append(f"{kind if kind and kind != 'server' else '':<10} ", style="bold")
    return _Line(line, _message(name, event, safe))


def _message(name: str, event: dict[str, Any], safe: Safe) -> Text:
    text = Text()
    if name == "snapshot":
        if event.get("kind") == "server":
            text.append(f"connected again: {safe(event.get('protocolVersion') or '?')} ")
            text.append_text(capabilities_text(event.get("capabilities") or {}, safe))
        else:
            text.append_text(_kind_text(event, safe))
    elif name == "list_changed":
        n = event.get("notifications", 1)
        text.append(f"re-listing ({n} notification{'s' if n != 1 else ''})")
    elif name == "diff":
        if not event.get("changes"):
            text.append(f"no difference ({_items(event.get('count'))}; trigger: {event.get('trigger')})")
        else:
            parts = [p for p in (_names(event.get("added", []), "+", safe), _names(event.get("removed", []), "-", safe))
                     if p]
            for change in event.get("changed", [])[:MAX_NAMES]:
                fields = ", ".join(safe(f) for f in change.get("fields", []))
                parts.append(f"~{safe(change.get('id'), 80)} ({fields})")
            text.append(" ".join(parts))
            text.append(f"  now {_items(event.get('count'))}; trigger: {event.get('trigger')}", style="dim")
        if event.get("recovered"):
            text.append("  (recovered: the snapshot is current again)", style="green")
    elif name == "stale":
        text.append(f"kept the last good snapshot ({_items(event.get('count'))}): {safe(event.get('reason'), 300)}"
                    f"; retry in {event.get('retryInSeconds')} s")
    elif name == "resource_updated":
        text.append(safe(event.get("uri"), 200))
        n = event.get("notifications", 1)
        if n > 1:
            text.append(f"  ({n} notifications)", style="dim")
    elif name == "log":
        level = str(event.get("level"))
        # "emergency" fills the column: the space keeps it apart from the message.
        text.append(f"{safe(level, 12):<9}", style=LEVEL_STYLE.get(level, ""))
        text.append(" ")
        if event.get("logger"):
            text.append(f"[{safe(event['logger'], 60)}] ")
        text.append(safe(event.get("data"), 500))
        if event.get("suppressed"):
            text.append(f"  ({event['suppressed']} more not shown)", style="dim")
    elif name == "reconnect":
        state = event.get("state")
        if state == "connected":
            text.append("connected again", style="green")
        else:
            text.append(f"{state}: {safe(event.get('reason'), 300)}")
        if event.get("retryInSeconds") is not None:
            text.append(f"; retry {event.get('attempt')} in {event.get('retryInSeconds')} s", style="dim")
    elif name == "capabilities_changed":
        bits: list[str] = []
        for key, sign in (("added", "+"), ("removed", "-"), ("changed", "~")):
            bits.extend(sign + safe(n) for n in event.get(key, []))
        if event.get("protocolVersion"):
            pv = event["protocolVersion"]
            bits.append(f"protocol {safe(pv.get('before'))} -> {safe(pv.get('after'))}")
        text.append(" ".join(bits) + "  now: ")
        text.append_text(capabilities_text(event.get("after") or {}, safe))
    elif name == "finding":
        text.append(f"{event.get('code')}: ", style="bold")
        text.append(safe(event.get("message"), 500))
    elif name == "subscribed":
        uris = event.get("uris", [])
        text.append(f"via {event.get('via')}: {', '.join(safe(u, 120) for u in uris) or 'nothing'}")
        if event.get("refused"):
            text.append("; refused: " + ", ".join(safe(r if isinstance(r, str) else r.get("uri"), 120)
                                                   for r in event["refused"]), style="red")
    elif name == "call":
        text.append(f"{safe(event.get('tool'), 80)}: " + ("isError: " if event.get("isError") else ""))
        text.append(safe(event.get("text") or "", 200))
    elif name == "end":
        relists = ", ".join(f"{k} {v}" for k, v in (event.get("relists") or {}).items() if v)
        text.append(f"stopped ({event.get('reason')}); exit {event.get('exitCode')}; {event.get('events')} events"
                    + (f"; re-lists: {relists}" if relists else ""))
    else:
        text.append(safe(event.get("message"), 500))
    return text


def _names(names: list[Any], sign: str, safe: Safe) -> str:
    shown = [sign + safe(name, 80) for name in names[:MAX_NAMES]]
    if len(names) > MAX_NAMES:
        shown.append(f"…(+{len(names) - MAX_NAMES})")
    return " ".join(shown)


def _items(count: Any) -> str:
    return f"{count} item{'' if count == 1 else 's'}"


