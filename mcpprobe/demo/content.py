"""What mcpprobe-demo offers: its notes, tools, resources, template and prompts, as fixed data.

The handlers in ``server.py`` serve these lists and compute answers from them; nothing here talks
to a client. The content is fixed so that probes of the demo are reproducible.
"""

from __future__ import annotations

import base64
import re
import struct
import zlib
from collections.abc import Sequence
from typing import Any

import mcp_types as types

INSTRUCTIONS = (
    "mcpprobe-demo is a tiny offline notes server for trying out mcpprobe. "
    "Read notes as resources (demo://notes/{id}) or with the list_notes, get_note and "
    "search_notes tools. create_note and delete_note are dry runs: nothing is stored. "
    "The other tools (echo, add, divide, word_count, format_text, count_slowly, "
    "color_swatch) exist to exercise MCP features such as structured output, "
    "progress notifications, image content and tool errors."
)

NOTES: dict[int, dict[str, Any]] = {
    1: {
        "title": "Groceries",
        "tags": ["home"],
        "body": "Milk, eggs, rye bread, coffee beans, two lemons.",
    },
    2: {
        "title": "Meeting notes: release planning",
        "tags": ["work"],
        "body": "Freeze on Thursday. Docs review Friday. Ship on Monday if CI is green.",
    },
    3: {
        "title": "Book list",
        "tags": ["reading"],
        "body": (
            "The Mythical Man-Month; A Philosophy of Software Design; Designing Data-Intensive Applications."
        ),
    },
    4: {
        "title": "Bike maintenance",
        "tags": ["home", "outdoors"],
        "body": "Oil the chain every 300 km. Check tyre pressure weekly. Replace brake pads in spring.",
    },
    5: {
        "title": "Trip checklist",
        "tags": ["travel"],
        "body": "Passport, charger, adapter, rain jacket, offline maps, snacks.",
    },
    6: {
        "title": "Ideas",
        "tags": ["work", "ideas"],
        "body": "A CLI that tells you what an MCP server declares and what is actually broken.",
    },
}

README_TEXT = (
    "mcpprobe-demo\n"
    "=============\n\n"
    "A small notes server bundled with mcpprobe. It runs offline and is meant\n"
    "to be probed: try `mcpprobe probe -- mcpprobe-demo`.\n\n"
    "Resources: demo://readme, demo://notes/1 .. demo://notes/6, demo://swatch.png\n"
    "Template:  demo://notes/{id}\n"
)

NOTE_URI_RE = re.compile(r"^demo://notes/(?P<id>[^/?#]+)$")


def note_uri(note_id: int) -> str:
    return f"demo://notes/{note_id}"


def note_text(note_id: int) -> str:
    note = NOTES[note_id]
    tags = ", ".join(note["tags"])
    return f"# {note['title']}\n\nTags: {tags}\n\n{note['body']}\n"


# -- a tiny PNG, generated (no binary blobs in the source) -------------------

COLORS: dict[str, tuple[int, int, int]] = {
    "red": (220, 50, 47),
    "green": (133, 153, 0),
    "blue": (38, 139, 210),
    "orange": (203, 75, 22),
    "gray": (147, 161, 161),
}


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return (
        struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    )


def make_png(rgb: tuple[int, int, int], size: int = 8) -> bytes:
    """Return a valid ``size`` x ``size`` solid-colour RGB PNG."""
    row = b"\x00" + bytes(rgb) * size  # filter type 0 + pixels
    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", zlib.compress(row * size))
        + _png_chunk(b"IEND", b"")
    )


def png_b64(color: str) -> str:
    return base64.b64encode(make_png(COLORS[color])).decode("ascii")


# -- tools --------------------------------------------------------------------


def _schema(properties: dict[str, Any], required: Sequence[str] = ()) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    return schema


_READ_ONLY = types.ToolAnnotations(read_only_hint=True, open_world_hint=False)
_PURE = types.ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)

TOOLS: list[types.Tool] = [
    types.Tool(
        name="echo",
        title="Echo",
        description="Return the given message unchanged.",
        input_schema=_schema(
            {"message": {"type": "string", "description": "Text to echo back."}}, ["message"]
        ),
        annotations=_PURE,
    ),
    types.Tool(
        name="add",
        title="Add two integers",
        description="Add two integers; the sum is returned as text and as structured content.",
        input_schema=_schema(
            {
                "a": {"type": "integer", "description": "First addend."},
                "b": {"type": "integer", "description": "Second addend."},
            },
            ["a", "b"],
        ),
        output_schema={
            "type": "object",
            "properties": {"sum": {"type": "integer", "description": "a + b"}},
            "required": ["sum"],
        },
        annotations=_PURE,
    ),
    types.Tool(
        name="divide",
        title="Divide two numbers",
        description="Divide a by b. Dividing by zero returns a tool error (isError: true).",
        input_schema=_schema(
            {
                "a": {"type": "number", "description": "Dividend."},
                "b": {"type": "number", "description": "Divisor (must not be zero)."},
            },
            ["a", "b"],
        ),
        output_schema={
            "type": "object",
            "properties": {"quotient": {"type": "number"}},
            "required": ["quotient"],
        },
        annotations=_PURE,
    ),
    types.Tool(
        name="word_count",
        title="Count words",
        description="Count the words, lines and characters in a piece of text.",
        input_schema=_schema({"text": {"type": "string", "description": "Text to measure."}}, ["text"]),
        output_schema={
            "type": "object",
            "properties": {
                "words": {"type": "integer"},
                "lines": {"type": "integer"},
                "characters": {"type": "integer"},
            },
            "required": ["words", "lines", "characters"],
        },
        annotations=_PURE,
    ),
    types.Tool(
        name="format_text",
        title="Format text",
        description="Change the case of a text and optionally reverse it.",
        input_schema=_schema(
            {
                "text": {"type": "string", "description": "Text to format."},
                "style": {
                    "type": "string",
                    "enum": ["upper", "lower", "title"],
                    "description": "Case style to apply.",
                },
                "reverse": {"type": "boolean", "default": False, "description": "Reverse the result."},
            },
            ["text", "style"],
        ),
        annotations=_PURE,
    ),
    types.Tool(
        name="list_notes",
        title="List notes",
        description="List the ids and titles of all notes, optionally filtered by tag.",
        input_schema=_schema({"tag": {"type": "string", "description": "Only notes with this tag."}}),
        annotations=_READ_ONLY,
    ),
    types.Tool(
        name="get_note",
        title="Get a note",
        description="Return the full text of one note. An unknown id is reported as a tool error.",
        input_schema=_schema({"id": {"type": "integer", "minimum": 1, "description": "Note id."}}, ["id"]),
        annotations=_READ_ONLY,
    ),
    types.Tool(
        name="search_notes",
        title="Search notes",
        description="Case-insensitive search in note titles and bodies.",
        input_schema=_schema(
            {
                "query": {"type": "string", "description": "Text to look for."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5},
            },
            ["query"],
        ),
        output_schema={
            "type": "object",
            "properties": {
                "matches": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"id": {"type": "integer"}, "title": {"type": "string"}},
                        "required": ["id", "title"],
                    },
                }
            },
            "required": ["matches"],
        },
        annotations=_READ_ONLY,
    ),
    types.Tool(
        name="create_note",
        title="Create a note (dry run)",
        description="Pretend to create a note and report what would be stored. Nothing is persisted.",
        input_schema=_schema(
            {
                "title": {"type": "string", "description": "Note title."},
                "body": {"type": "string", "description": "Note text."},
                "tags": {"type": "array", "items": {"type": "string"}, "description": "Optional tags."},
            },
            ["title", "body"],
        ),
        annotations=types.ToolAnnotations(
            read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
        ),
    ),
    types.Tool(
        name="delete_note",
        title="Delete a note (dry run)",
        description="Pretend to delete a note. Declared destructive; nothing is actually removed.",
        input_schema=_schema({"id": {"type": "integer", "minimum": 1, "description": "Note id."}}, ["id"]),
        annotations=types.ToolAnnotations(
            read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
        ),
    ),
    types.Tool(
        name="count_slowly",
        title="Count slowly",
        description=(
            "Count from 1 to `to`, pausing between steps. Sends notifications/progress when the "
            "request carries a progress token, and an info log message when it finishes."
        ),
        input_schema=_schema(
            {
                "to": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3},
                "delay_ms": {"type": "integer", "minimum": 0, "maximum": 1000, "default": 50},
            }
        ),
        annotations=_PURE,
    ),
    types.Tool(
        name="color_swatch",
        title="Colour swatch",
        description="Return a tiny 8x8 PNG image of the chosen colour as an image content block.",
        input_schema=_schema(
            {"color": {"type": "string", "enum": sorted(COLORS), "description": "Swatch colour."}},
            ["color"],
        ),
        annotations=_PURE,
    ),
]

TOOLS_BY_NAME = {tool.name: tool for tool in TOOLS}

# -- resources, templates, prompts ----------------------------------------------

RESOURCES: list[types.Resource] = [
    types.Resource(
        uri="demo://readme",
        name="readme",
        title="About this server",
        description="What mcpprobe-demo is and what it offers.",
        mime_type="text/plain",
        size=len(README_TEXT.encode()),
    ),
    *(
        types.Resource(
            uri=note_uri(note_id),
            name=f"note-{note_id}",
            title=note["title"],
            description=f"Note {note_id}: {note['title']}",
            mime_type="text/markdown",
            size=len(note_text(note_id).encode()),
        )
        for note_id, note in NOTES.items()
    ),
    types.Resource(
        uri="demo://swatch.png",
        name="swatch",
        title="Blue swatch",
        description="An 8x8 blue PNG (a binary resource).",
        mime_type="image/png",
        size=len(make_png(COLORS["blue"])),
    ),
]

RESOURCE_TEMPLATES: list[types.ResourceTemplate] = [
    types.ResourceTemplate(
        uri_template="demo://notes/{id}",
        name="note",
        title="Note by id",
        description=f"A note, by numeric id (1 to {len(NOTES)}).",
        mime_type="text/markdown",
    ),
]

PROMPTS: list[types.Prompt] = [
    types.Prompt(
        name="summarize_note",
        title="Summarize a note",
        description="Ask the model to summarize one note.",
        arguments=[
            types.PromptArgument(name="note_id", description="Id of the note to summarize.", required=True),
        ],
    ),
    types.Prompt(
        name="draft_note",
        title="Draft a new note",
        description="Ask the model to draft a new note, in an optional tone.",
        arguments=[
            types.PromptArgument(
                name="tone", description="Tone of the draft: neutral, friendly or formal.", required=False
            ),
        ],
    ),
    types.Prompt(
        name="daily_review",
        title="Daily review",
        description="Review all notes and suggest what to do today.",
    ),
]

TONES = ["neutral", "friendly", "formal"]
