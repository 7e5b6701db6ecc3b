"""What the human output says, as styled text without rich: a base style and (text, style) parts.

The rich renderer (mcpprobe.render.human) makes each into a `Text` (`to_text` there); the plain
output of a long list in a pipe (mcpprobe.render.plain) joins the texts, which is what rich would
print with no colours and no width. Saying it once here keeps the two the same.

Standard library only. Every string from the server goes through the rendering's `safe()`
(a mcpprobe.render.cells.Safe).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpprobe.client.capabilities import sub_capabilities
from mcpprobe.client.kinds import LIST_KINDS
from mcpprobe.client.versions import sdk_version
from mcpprobe.safety.sanitize import cut_at, visible

if TYPE_CHECKING:
    from mcpprobe.client.catalog import Listing
    from mcpprobe.client.session import Snapshot
    from mcpprobe.operations.outcome import Outcome
    from mcpprobe.render.cells import Safe

Part = tuple[str, str]  # text, style ("" for none)
Styled = tuple[str, list[Part]]  # the base style (under every part), the parts

KIND_TITLES = {"tools": "Tools", "resources": "Resources", "templates": "Resource templates", "prompts": "Prompts",
               "tasks": "Tasks"}
STATE_STYLE = {"complete": "green", "not-declared": "dim", "not-implemented": "dim", "incomplete": "bold red",
               "method-not-found": "bold red", "failed": "bold red"}
# A kind the server has none of, as it said with -32601 for an optional part of its capability.
NOT_IMPLEMENTED = "not implemented (answered -32601; an optional part of '{capability}', not an error)"


def plain(styled: Styled) -> str:
    return "".join(text for text, _ in styled[1])


def snapshot_rows(snapshot: Snapshot, safe: Safe) -> list[tuple[str, Styled]]:
    """The snapshot's `label  value` lines: the server, transport, protocol, client, capabilities,
    and the first lines of the server's instructions."""
    info = snapshot.server_info or {}
    server = [(safe(info.get("name", "(no serverInfo)")), "bold")]
    if info.get("version") is not None:
        server.append((" " + safe(info.get("version")), ""))
    if info.get("title"):
        server.append((f'  "{safe(info["title"])}"', ""))
    rows: list[tuple[str, Styled]] = [
        ("Server", ("", server)),
        ("Transport", ("", [(f"{snapshot.transport}: {safe(snapshot.target, 100)}", "")]))]
    if snapshot.era:
        era = "modern era, server/discover" if snapshot.era == "modern" else "legacy era, initialize handshake"
        # The server's choice, shown even when it was refused (unsupported-version): made inert too.
        rows.append(("Protocol", ("bold", [(safe(snapshot.protocol_version or "?"), ""),
                                            (f"  ({era}; {safe(snapshot.era_reason)})", "dim")])))
    if len(snapshot.negotiation) > 1:
        rows.append(("Negotiation", ("dim", [(negotiation_line(snapshot.negotiation, safe), "")])))
    client = snapshot.client_info
    declared = ", ".join(snapshot.client_capabilities) or "none"
    rows.append(("Client", ("dim", [(f"{client['name']} {client['version']} (mcp SDK {sdk_version()}); "
                                     f"declared capabilities: {declared}", "")])))
    if snapshot.negotiated:
        rows.append(("Capabilities", capabilities(snapshot.capabilities, safe)))
    shown = instructions(snapshot.instructions, safe) if snapshot.instructions else ""
    if shown:
        rows.append(("Instructions", ("", [(shown, "")])))
    return rows


def negotiation_line(entries: list[dict[str, Any]], safe: Safe) -> str:
    """Every request that negotiated the era, what came back, and the one in force: `method version
    -> answer after N ms`, with the start of the server it went to once there were two."""
    shown = []
    for entry in entries:
        start = f"start {entry['start']}: " if entry["start"] > 1 else ""
        after = f" after {entry['ms']:.0f} ms" if entry["ms"] is not None else ""
        mark = " [in force]" if entry["inForce"] else ""
        shown.append(f"{start}{entry['method']} {safe(entry['version'])} -> {safe(entry['answer'], 200)}{after}{mark}")
    return " · ".join(shown)


def extension_rows(outcome: Outcome, safe: Safe) -> list[tuple[str, Styled]]:
    """`probe` and `list`: the extensions the server declared with their settings, the tools that
    carry an MCP Apps UI resource, and the skills with their files' digests (mcpprobe.client.extensions).
    Every string is the server's, made inert."""
    from mcpprobe.client.extensions import app_tools, declared, skill_summary
    from mcpprobe.safety.sanitize import json_dumps

    snapshot = outcome.snapshot
    if snapshot is None or not snapshot.negotiated or outcome.command not in ("probe", "list"):
        return []
    rows: list[tuple[str, Styled]] = []
    extensions = declared(snapshot.capabilities)
    if extensions:
        lines = []
        for ext in extensions:
            settings = ext["settings"]
            said = ("no settings" if settings == {} else
                    json_dumps(settings, ensure_ascii=False, separators=(", ", ": "), default=str))
            lines.append(f"{safe(ext['name'], 100)} ({safe(said, 200)})")
        rows.append(("Extensions", ("", [("\n".join(lines), "")])))
    tools = outcome.listings.get("tools")
    apps = app_tools(tools.items) if tools is not None else []
    if apps:
        lines = []
        for app in apps:
            line = f"{safe(app['tool'], 80)} → {safe(app['resourceUri'], 200)}"
            if app["visibility"] is not None:
                line += f" (visibility: {safe(', '.join(map(str, app['visibility'])), 60)})"
            if app["key"] != "_meta.ui.resourceUri":
                line += f" (deprecated {app['key']})"
            lines.append(line)
        rows.append(("App tools", ("", [("\n".join(lines), "")])))
    skills = getattr(outcome, "skills", None)
    if skills is not None:
        lines = [f"skills/list failed: {safe(skills.error, 200)}"] if skills.error else []
        for skill in skills.skills[:MAX_SKILLS]:
            entry = skill_summary(skill)
            lines.append(f"{safe(entry['name'], 80)} {safe(entry['uri'], 200)}: {safe(entry['description'], 200)}")
            if entry["files"] is None:
                lines.append("  no digests (a skill generated on demand)")
            files = entry["files"] or []
            for item in files[:MAX_SKILL_FILES]:
                lines.append(f"  {safe(item['digest'], 80)}  {safe(item['uri'], 200)}")
            if len(files) > MAX_SKILL_FILES:
                lines.append(f"  …(+{len(files) - MAX_SKILL_FILES} more files; --json shows all)")
        if len(skills.skills) > MAX_SKILLS:
            lines.append(f"…(+{len(skills.skills) - MAX_SKILLS} more skills; --json shows all)")
        rows.append(("Skills", ("", [("\n".join(lines) or "none listed", "")])))
    return rows


MAX_SKILLS, MAX_SKILL_FILES = 50, 10  # in the human output; --json has every skill and file


def instructions(text: str, safe: Safe, max_lines: int = 8, max_chars: int = 200) -> str:
    """The first lines of the server's instructions, made inert: from the first line that is not
    blank (else the label would stand alone), at most `max_lines` lines of at most `max_chars`
    characters. A line too long is cut, and nothing after the cut is shown: what follows is counted
    in the one `…(+N …)` mark. Empty when nothing but blank lines."""
    lines = visible(safe.redactor(text), multiline=True).expandtabs(4).splitlines()
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    shown: list[str] = []
    for number, line in enumerate(lines[:max_lines]):
        if len(line) > max_chars:
            kept = cut_at(line, max_chars)
            shown.append(line[:kept] + _more(len(line) - kept, len(lines) - number - 1))
            return "\n".join(shown)
        shown.append(line)
    if len(lines) > max_lines:
        shown.append(_more(0, len(lines) - max_lines))
    return "\n".join(shown)


def _more(chars: int, lines: int) -> str:
    """`…(+307 characters, 4 more lines; --json shows all)`: what the cut left out."""
    parts = [f"{chars} character{'s' if chars != 1 else ''}"] if chars else []
    if lines:
        parts.append(f"{lines} more line{'s' if lines != 1 else ''}" if chars else f"{lines} lines")
    return f"…(+{', '.join(parts)}; --json shows all)"


def capabilities(declared: dict[str, Any], safe: Safe) -> Styled:
    if not declared:
        return "yellow", [("none declared", "")]
    parts: list[Part] = []
    for i, (name, value) in enumerate(declared.items()):
        if i:
            parts.append((" · ", ""))
        parts.append((safe(name), "bold"))
        if isinstance(value, dict):
            subs = [safe(k) for k in sub_capabilities(name, value)]
            if subs:
                parts.append((f" ({', '.join(subs)})", ""))
        else:
            parts.append((f" (malformed: {safe(value, 40)})", "red"))
    return "", parts


def listing_header(listing: Listing) -> Styled:
    """`Tools  250 items, complete, 3 pages read, 12 ms`, or what stopped the list."""
    parts: list[Part] = [(KIND_TITLES[listing.kind], "")]
    style = STATE_STYLE.get(listing.state, "")
    if listing.state == "not-declared":
        if listing.pages:  # --force sent it anyway, and -32601 came back, as the spec asks
            parts.append(("  not declared; sent with --force and answered -32601 (method not found)", style))
        else:
            parts.append(("  not declared; nothing sent", style))
        return "bold", parts
    if listing.state == "not-implemented":
        parts.append(("  " + NOT_IMPLEMENTED.format(capability=LIST_KINDS[listing.kind].capability), style))
        return "bold", parts
    if listing.state in ("method-not-found", "failed"):
        parts.append((f"  {listing.state}; no items read", style))
        return "bold", parts
    pages = sum(1 for page in listing.pages if not page.failed)
    failed = [page.number for page in listing.pages if page.failed]
    parts.append((f"  {len(listing.items)} item{'s' if len(listing.items) != 1 else ''}", "bold"))
    parts.append((f", {listing.state}", style))
    parts.append((f", {pages} page{'s' if pages != 1 else ''} read", "dim"))
    if failed:
        parts.append((f", page {', '.join(map(str, failed))} failed", style))
    parts.append((f", {listing.ms:.0f} ms", "dim"))
    return "bold", parts


def timing_parts(outcome: Outcome) -> list[str]:
    """`connect 2 ms`, `list tools 40 ms (10 requests)`...: one per phase, for `between_parts`."""
    parts = []
    for timing in outcome.timings:
        pages = timing.detail.get("pages")
        unanswered = " (unanswered)" if timing.detail.get("unanswered") else ""
        note = f" ({pages} request{'s' if pages != 1 else ''})" if pages else unanswered
        parts.append(f"{timing.phase} {timing.ms:.0f} ms{note}")
    return parts


def between_parts(parts: list[str], width: int) -> str:
    """The parts joined by " · ", with a line broken only between two parts (the separator ends
    the line), never between a number and its unit: `list tools 10` / `ms` read as two facts."""
    lines, line = [], ""
    for number, part in enumerate(parts, 1):
        joined = f"{line} · {part}" if line else part
        ending = len(" ·") if number < len(parts) else 0  # room for the separator that may end it
        if line and len(joined) + ending > width:
            lines.append(line + " ·")
            line = part
        else:
            line = joined
    lines.append(line)
    return "\n".join(lines)
