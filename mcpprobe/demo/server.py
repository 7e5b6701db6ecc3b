"""``mcpprobe-demo``: a small, offline "notes" MCP server for trying mcpprobe.

Built on the official MCP Python SDK's low-level ``Server`` (handlers take
``(ctx, params)`` and return full result models), because the low-level server
lets the demo paginate its lists.

Transports::

    mcpprobe-demo                 stdio (the default)
    mcpprobe-demo --http PORT     streamable HTTP at http://127.0.0.1:PORT/mcp
    mcpprobe-demo --sse PORT      legacy HTTP+SSE at http://127.0.0.1:PORT/sse

HTTP transports bind to 127.0.0.1 only. With PORT 0 an ephemeral port is
chosen; in both HTTP modes one line ``LISTENING http://127.0.0.1:<port>/<path>``
is printed on stdout once the server accepts connections. In stdio mode
nothing but protocol messages is ever written to stdout.

What it offers (fixed content, so probes are reproducible):

* 12 tools, listed 5 per page (3 pages);
* 8 resources (7 text, 1 PNG blob), 5 per page (2 pages);
* 1 resource template, ``demo://notes/{id}``;
* 3 prompts (one required argument, one optional argument, one none);
* completions for prompt arguments and the template variable;
* ``logging/setLevel`` (a deprecated-but-still-negotiated capability).

The content itself (notes, tool, resource and prompt declarations) is in ``content.py``, the three
transports in ``transports.py``; this module holds the handlers that serve the content, and the command.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import os
import signal
import sys
import warnings
from collections.abc import Sequence
from typing import Any, TypeVar

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from mcpprobe import __version__
from mcpprobe.demo.content import (
    COLORS,
    INSTRUCTIONS,
    NOTE_URI_RE,
    NOTES,
    PROMPTS,
    README_TEXT,
    RESOURCE_TEMPLATES,
    RESOURCES,
    TONES,
    TOOLS,
    TOOLS_BY_NAME,
    note_text,
    note_uri,
    png_b64,
)
from mcpprobe.demo.transports import HOST, HTTP_PATH, SSE_PATH, serve_http, serve_stdio

SERVER_NAME = "mcpprobe-demo"

TOOLS_PAGE_SIZE = 5
RESOURCES_PAGE_SIZE = 5
TEMPLATES_PAGE_SIZE = 5
PROMPTS_PAGE_SIZE = 5

# Declared list_changed flags. The content is fixed, so these notifications are
# never actually sent; the flags are declared so probes see a realistic server.
_NOTIFICATIONS = NotificationOptions(prompts_changed=True, resources_changed=False, tools_changed=True)


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def _encode_cursor(kind: str, offset: int) -> str:
    return base64.urlsafe_b64encode(f"{kind}:{offset}".encode()).decode("ascii")


def _decode_cursor(kind: str, cursor: str | None) -> int:
    if cursor is None:
        return 0
    try:
        got_kind, _, offset = base64.urlsafe_b64decode(cursor.encode("ascii")).decode().partition(":")
        value = int(offset)
    except (ValueError, UnicodeError, binascii.Error):
        value, got_kind = -1, ""
    if got_kind != kind or value < 0:
        raise MCPError(code=types.INVALID_PARAMS, message=f"Invalid cursor for {kind}: {cursor!r}")
    return value


_Item = TypeVar("_Item")


def _page(
    kind: str, items: Sequence[_Item], params: types.PaginatedRequestParams | None, size: int
) -> tuple[list[_Item], str | None]:
    start = _decode_cursor(kind, params.cursor if params is not None else None)
    end = start + size
    next_cursor = _encode_cursor(kind, end) if end < len(items) else None
    return list(items[start:end]), next_cursor


def _text(text: str) -> list[types.ContentBlock]:
    return [types.TextContent(text=text)]


def _tool_error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=_text(message), is_error=True)


def _int_arg(args: dict[str, Any], name: str, default: int | None = None) -> int:
    value = args.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"argument {name!r} must be an integer")
    return value


def _num_arg(args: dict[str, Any], name: str) -> float:
    value = args.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"argument {name!r} must be a number")
    return value


def _str_arg(args: dict[str, Any], name: str, default: str | None = None) -> str:
    value = args.get(name, default)
    if not isinstance(value, str):
        raise ValueError(f"argument {name!r} must be a string")
    return value


_LOG_LEVELS: list[str] = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
# Minimum level set by logging/setLevel. Process-wide in this demo.
_log_state = {"level": "info"}


async def _log(ctx: ServerRequestContext[Any], level: types.LoggingLevel, message: str) -> None:
    if _LOG_LEVELS.index(level) < _LOG_LEVELS.index(_log_state["level"]):
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        await ctx.session.send_log_message(
            level, message, logger=SERVER_NAME, related_request_id=ctx.request_id
        )


# ---------------------------------------------------------------------------
# Handlers
# ---------------------------------------------------------------------------


async def list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    page, next_cursor = _page("tools", TOOLS, params, TOOLS_PAGE_SIZE)
    return types.ListToolsResult(tools=page, next_cursor=next_cursor)


async def call_tool(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    name = params.name
    if name not in TOOLS_BY_NAME:
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {name}")
    args = params.arguments or {}
    try:
        return await _run_tool(ctx, name, args)
    except ValueError as exc:
        return _tool_error(f"{name}: {exc}")


async def _run_tool(ctx: ServerRequestContext[Any], name: str, args: dict[str, Any]) -> types.CallToolResult:
    if name == "echo":
        return types.CallToolResult(content=_text(_str_arg(args, "message")))

    if name == "add":
        total = _int_arg(args, "a") + _int_arg(args, "b")
        return types.CallToolResult(content=_text(str(total)), structured_content={"sum": total})

    if name == "divide":
        a, b = _num_arg(args, "a"), _num_arg(args, "b")
        if b == 0:
            return _tool_error("divide: cannot divide by zero")
        quotient = a / b
        return types.CallToolResult(content=_text(repr(quotient)), structured_content={"quotient": quotient})

    if name == "word_count":
        text = _str_arg(args, "text")
        counts = {"words": len(text.split()), "lines": len(text.splitlines()), "characters": len(text)}
        summary = f"{counts['words']} words, {counts['lines']} lines, {counts['characters']} characters"
        return types.CallToolResult(content=_text(summary), structured_content=counts)

    if name == "format_text":
        text, style = _str_arg(args, "text"), _str_arg(args, "style")
        reverse = args.get("reverse", False)
        if style not in ("upper", "lower", "title"):
            raise ValueError("argument 'style' must be one of: upper, lower, title")
        if not isinstance(reverse, bool):
            raise ValueError("argument 'reverse' must be a boolean")
        out = {"upper": text.upper, "lower": text.lower, "title": text.title}[style]()
        return types.CallToolResult(content=_text(out[::-1] if reverse else out))

    if name == "list_notes":
        tag = args.get("tag")
        if tag is not None and not isinstance(tag, str):
            raise ValueError("argument 'tag' must be a string")
        lines = [f"{i}: {n['title']}" for i, n in NOTES.items() if tag is None or tag in n["tags"]]
        return types.CallToolResult(content=_text("\n".join(lines) if lines else "(no notes)"))

    if name == "get_note":
        note_id = _int_arg(args, "id")
        if note_id not in NOTES:
            return _tool_error(f"get_note: no note with id {note_id} (valid ids: 1 to {len(NOTES)})")
        return types.CallToolResult(content=_text(note_text(note_id)))

    if name == "search_notes":
        query = _str_arg(args, "query").lower()
        limit = _int_arg(args, "limit", 5)
        if not 1 <= limit <= 20:
            raise ValueError("argument 'limit' must be between 1 and 20")
        matches = [
            {"id": i, "title": n["title"]}
            for i, n in NOTES.items()
            if query in n["title"].lower() or query in n["body"].lower()
        ][:limit]
        text = "\n".join(f"{m['id']}: {m['title']}" for m in matches) or "(no matches)"
        return types.CallToolResult(content=_text(text), structured_content={"matches": matches})

    if name == "create_note":
        title, body = _str_arg(args, "title"), _str_arg(args, "body")
        tags = args.get("tags", [])
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise ValueError("argument 'tags' must be an array of strings")
        new_id = len(NOTES) + 1
        return types.CallToolResult(
            content=_text(
                f"Would create note {new_id}: {title!r} ({len(body)} characters). Dry run: not stored."
            )
        )

    if name == "delete_note":
        note_id = _int_arg(args, "id")
        if note_id not in NOTES:
            return _tool_error(f"delete_note: no note with id {note_id}")
        return types.CallToolResult(
            content=_text(
                f"Would delete note {note_id} ({NOTES[note_id]['title']}). Dry run: nothing removed."
            )
        )

    if name == "count_slowly":
        to = _int_arg(args, "to", 3)
        delay_ms = _int_arg(args, "delay_ms", 50)
        if not 1 <= to <= 10 or not 0 <= delay_ms <= 1000:
            raise ValueError("'to' must be 1..10 and 'delay_ms' 0..1000")
        for step in range(1, to + 1):
            await anyio.sleep(delay_ms / 1000)
            # A no-op unless the request carried _meta.progressToken.
            await ctx.session.report_progress(step, to, f"counted {step} of {to}")
        await _log(ctx, "info", f"count_slowly counted to {to}")
        return types.CallToolResult(content=_text(" ".join(str(i) for i in range(1, to + 1))))

    if name == "color_swatch":
        color = _str_arg(args, "color")
        if color not in COLORS:
            raise ValueError(f"argument 'color' must be one of: {', '.join(sorted(COLORS))}")
        return types.CallToolResult(
            content=[
                types.ImageContent(data=png_b64(color), mime_type="image/png"),
                types.TextContent(text=f"An 8x8 {color} swatch."),
            ]
        )

    raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {name}")  # pragma: no cover


async def list_resources(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListResourcesResult:
    page, next_cursor = _page("resources", RESOURCES, params, RESOURCES_PAGE_SIZE)
    return types.ListResourcesResult(resources=page, next_cursor=next_cursor)


async def list_resource_templates(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListResourceTemplatesResult:
    page, next_cursor = _page("templates", RESOURCE_TEMPLATES, params, TEMPLATES_PAGE_SIZE)
    return types.ListResourceTemplatesResult(resource_templates=page, next_cursor=next_cursor)


def _not_found(uri: str) -> MCPError:
    # SDK 2.x convention (SEP-2164, mirrored from MCPServer's ResourceNotFoundError):
    # -32602 with the uri in `data`. (-32002 is retired.)
    return MCPError(code=types.INVALID_PARAMS, message=f"Resource not found: {uri}", data={"uri": uri})


async def read_resource(
    ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
) -> types.ReadResourceResult:
    uri = str(params.uri)
    if uri == "demo://readme":
        contents: list[types.TextResourceContents | types.BlobResourceContents] = [
            types.TextResourceContents(uri=uri, mime_type="text/plain", text=README_TEXT)
        ]
    elif uri == "demo://swatch.png":
        contents = [types.BlobResourceContents(uri=uri, mime_type="image/png", blob=png_b64("blue"))]
    else:
        match = NOTE_URI_RE.match(uri)
        if match is None or not match["id"].isdigit() or int(match["id"]) not in NOTES:
            raise _not_found(uri)
        note_id = int(match["id"])
        contents = [types.TextResourceContents(uri=uri, mime_type="text/markdown", text=note_text(note_id))]
    return types.ReadResourceResult(contents=contents)


async def list_prompts(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListPromptsResult:
    page, next_cursor = _page("prompts", PROMPTS, params, PROMPTS_PAGE_SIZE)
    return types.ListPromptsResult(prompts=page, next_cursor=next_cursor)


def _user(text: str) -> types.PromptMessage:
    return types.PromptMessage(role="user", content=types.TextContent(text=text))


async def get_prompt(
    ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
) -> types.GetPromptResult:
    args = params.arguments or {}
    if params.name == "summarize_note":
        raw = args.get("note_id")
        if raw is None:
            raise MCPError(code=types.INVALID_PARAMS, message="Missing required argument: note_id")
        if not raw.strip().isdigit() or int(raw) not in NOTES:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown note id: {raw!r}")
        note_id = int(raw)
        return types.GetPromptResult(
            description=f"Summarize note {note_id}",
            messages=[
                _user("Summarize the following note in one sentence."),
                types.PromptMessage(
                    role="user",
                    content=types.EmbeddedResource(
                        resource=types.TextResourceContents(
                            uri=note_uri(note_id), mime_type="text/markdown", text=note_text(note_id)
                        )
                    ),
                ),
            ],
        )
    if params.name == "draft_note":
        tone = args.get("tone") or "neutral"
        if tone not in TONES:
            raise MCPError(code=types.INVALID_PARAMS, message=f"tone must be one of: {', '.join(TONES)}")
        return types.GetPromptResult(
            description=f"Draft a {tone} note",
            messages=[_user(f"Draft a short note in a {tone} tone. Give it a title and one or two tags.")],
        )
    if params.name == "daily_review":
        listing = "\n".join(f"- {n['title']}: {n['body']}" for n in NOTES.values())
        return types.GetPromptResult(
            description="Review the notes",
            messages=[
                _user(f"Here are my notes:\n{listing}"),
                types.PromptMessage(
                    role="assistant",
                    content=types.TextContent(text="Thanks. What would you like to focus on?"),
                ),
                _user("Suggest the three most useful things to do today, one line each."),
            ],
        )
    raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown prompt: {params.name}")


async def complete(
    ctx: ServerRequestContext[Any], params: types.CompleteRequestParams
) -> types.CompleteResult:
    ref, arg = params.ref, params.argument
    candidates: list[str] = []
    if isinstance(ref, types.PromptReference):
        if ref.name == "summarize_note" and arg.name == "note_id":
            candidates = [str(i) for i in NOTES]
        elif ref.name == "draft_note" and arg.name == "tone":
            candidates = list(TONES)
    elif (
        isinstance(ref, types.ResourceTemplateReference)
        and ref.uri == "demo://notes/{id}"
        and arg.name == "id"
    ):
        candidates = [str(i) for i in NOTES]
    values = [c for c in candidates if c.startswith(arg.value)]
    return types.CompleteResult(completion=types.Completion(values=values, total=len(values), has_more=False))


async def set_logging_level(
    ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams
) -> types.EmptyResult:
    _log_state["level"] = params.level
    return types.EmptyResult()


# ---------------------------------------------------------------------------
# Server
# ---------------------------------------------------------------------------


class DemoServer(Server[Any]):
    """``Server`` whose default initialization options carry the demo's list_changed flags.

    The streamable-HTTP session manager (and the runner, when given no options)
    call ``create_initialization_options()`` with no arguments, which would
    declare ``listChanged: false`` everywhere; this override keeps all three
    transports consistent.
    """

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or _NOTIFICATIONS, experimental_capabilities, extensions
        )


def build_server() -> DemoServer:
    """Create the demo server (no I/O)."""
    with warnings.catch_warnings():
        # on_set_logging_level is deprecated as of protocol 2026-07-28 and warns at construction.
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        return DemoServer(
            SERVER_NAME,
            version=__version__,
            title="mcpprobe demo notes server",
            description="A small offline notes server bundled with mcpprobe.",
            instructions=INSTRUCTIONS,
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            on_list_resources=list_resources,
            on_list_resource_templates=list_resource_templates,
            on_read_resource=read_resource,
            on_list_prompts=list_prompts,
            on_get_prompt=get_prompt,
            on_completion=complete,
            on_set_logging_level=set_logging_level,
        )


# ---------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------


def _port(value: str) -> int:
    try:
        port = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {value!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port out of range: {port}")
    return port


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcpprobe-demo",
        description="A small offline MCP notes server for trying mcpprobe. Serves stdio by default.",
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--http",
        metavar="PORT",
        type=_port,
        help=f"serve streamable HTTP at http://{HOST}:PORT{HTTP_PATH} (0 = pick a free port)",
    )
    group.add_argument(
        "--sse",
        metavar="PORT",
        type=_port,
        help=f"serve legacy HTTP+SSE at http://{HOST}:PORT{SSE_PATH} (0 = pick a free port)",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return parser


def _quiet_exit(signum: int, frame: object) -> None:
    raise SystemExit(0)


def _exit_now(signum: int, frame: object) -> None:
    # stdio: the SDK reads stdin in a worker thread that cannot be cancelled, so a
    # graceful shutdown would hang until stdin closes. Every message is flushed as
    # it is written, so leaving at once loses nothing.
    os._exit(0)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    warnings.simplefilter("ignore", MCPDeprecationWarning)
    if args.http is None and args.sse is None:
        signal.signal(signal.SIGINT, _exit_now)
        signal.signal(signal.SIGTERM, _exit_now)
    else:
        # SIGTERM ends the process like Ctrl-C does: quietly, exit status 0. (uvicorn
        # captures SIGTERM/SIGINT while serving and re-raises them once shut down.)
        signal.signal(signal.SIGTERM, _quiet_exit)
    server = build_server()
    try:
        if args.http is not None:
            serve_http(server, args.http, sse=False)
        elif args.sse is not None:
            serve_http(server, args.sse, sse=True)
        else:
            anyio.run(serve_stdio, server)
    except KeyboardInterrupt:
        pass
    except OSError as exc:
        print(f"mcpprobe-demo: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
