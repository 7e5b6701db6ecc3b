"""Output for `watch`: NDJSON (one event per line, flushed) or timestamped human lines.

Every string from the server is made inert: in JSON by `ensure_ascii=True` (no control character
reaches a terminal raw), in human output by `sanitize.visible` inside rich `Text` objects, never
through rich's markup parser.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rich.console import Console
from rich.text import Text

from mcpprobe.render.console import keyed
from mcpprobe.render.human import capabilities_text, safe
from mcpprobe.sanitize import json_dumps

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


def dumps_line(event: dict[str, Any]) -> str:
    return json_dumps(event, ensure_ascii=True, separators=(",", ":"), default=str)


class JsonLines:
    """NDJSON on a text stream: one object per line, flushed as it happens."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def __call__(self, event: dict[str, Any]) -> None:
        self.stream.write(dumps_line(event) + "\n")
        self.stream.flush()
        _stop_when_unread(self.stream)


def _names(names: list[Any], sign: str) -> str:
    shown = [sign + safe(name, 80) for name in names[:MAX_NAMES]]
    if len(names) > MAX_NAMES:
        shown.append(f"…(+{len(names) - MAX_NAMES})")
    return " ".join(shown)


class HumanLines:
    """A status header from the first snapshot, then one timestamped line per event."""

    def __init__(self, console: Console) -> None:
        self.console = console
        # rich turns a closed pipe into SystemExit(1); the watch wants to stop quietly instead.
        console.on_broken_pipe = _broken_pipe  # type: ignore[method-assign]
        self.header_done = False
        self.kinds_seen: set[str] = set()
        self.held: list[dict[str, Any]] = []

    def __call__(self, event: dict[str, Any]) -> None:
        self._show(event)
        _stop_when_unread(self.console.file)

    def _show(self, event: dict[str, Any]) -> None:
        name = event.get("event")
        if not self.header_done:
            if name == "snapshot":
                self._header(event)
                if self.header_done:
                    for held in self.held:
                        self._line(held)
                    self.held = []
                return
            if name not in ("end", "error", "reconnect"):
                self.held.append(event)  # shown under the header, in order
                return
            for held in self.held:
                self._line(held)
            self.held = []
        self._line(event)

    # ----- the header -----

    def _header(self, event: dict[str, Any]) -> None:
        kind = event.get("kind")
        console = self.console
        if kind == "server":
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
            console.print(keyed("Capabilities", capabilities_text(event.get("capabilities") or {})))
            return
        self.kinds_seen.add(str(kind))
        console.print(keyed(KIND_TITLES.get(str(kind), str(kind)), self._kind_text(event)))
        if len(self.kinds_seen) == 4:
            self.header_done = True
            console.print(Text("Watching for changes (Ctrl-C to stop)", style="dim"))

    def _kind_text(self, event: dict[str, Any]) -> Text:
        text = Text()
        if not event.get("declared"):
            text.append("not declared; nothing sent", style="dim")
            return text
        text.append(_items(event.get("count", 0)), style="bold")
        state = event.get("state") or event.get("status")
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

    # ----- one line per event -----

    def _line(self, event: dict[str, Any]) -> None:
        name = str(event.get("event"))
        line = Text()
        line.append(datetime.now().strftime("%H:%M:%S.%f")[:-3] + "  ", style="dim")
        style = EVENT_STYLE.get(name, "")
        if name == "diff" and not event.get("changes"):
            style = "dim"
        if name == "finding":
            style = {"error": "bold red", "warning": "yellow"}.get(str(event.get("severity")), "cyan")
        line.append(f"{name:<20}", style=style)
        kind = event.get("kind")
        line.append(f"{kind if kind and kind != 'server' else '':<10} ", style="bold")
        line.append_text(self._message(name, event))
        self.console.print(line)

    def _message(self, name: str, event: dict[str, Any]) -> Text:
        text = Text()
        if name == "snapshot":
            if event.get("kind") == "server":
                text.append(f"connected again: {safe(event.get('protocolVersion') or '?')} ")
                text.append_text(capabilities_text(event.get("capabilities") or {}))
            else:
                text.append_text(self._kind_text(event))
        elif name == "list_changed":
            n = event.get("notifications", 1)
            text.append(f"re-listing ({n} notification{'s' if n != 1 else ''})")
        elif name == "diff":
            if not event.get("changes"):
                text.append(f"no difference ({_items(event.get('count'))}; trigger: {event.get('trigger')})")
            else:
                parts = [p for p in (_names(event.get("added", []), "+"), _names(event.get("removed", []), "-"))
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
            text.append_text(capabilities_text(event.get("after") or {}))
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


def _broken_pipe() -> None:
    raise BrokenPipeError


def _stop_when_unread(stream: Any) -> None:
    """The watch stops when nobody reads its output (`| head -3`): the standard streams drop
    what a gone reader would have got (mcpprobe.streams), so ask them."""
    from mcpprobe.streams import reader_gone

    if reader_gone(stream):
        raise BrokenPipeError


def _items(count: Any) -> str:
    return f"{count} item{'' if count == 1 else 's'}"


