"""Human output for `call`, `read` and `get-prompt`: the result on stdout, everything else on stderr.

On a terminal every server string goes through `sanitize.visible` into rich `Text` (never
markup), and binary data is summarised (MIME type and size), never dumped. Into a pipe or a
file, text and decoded blobs go out exactly as the server sent them, so `> file` works: raw
text is written to the console's buffer as it is, blobs are handed back as bytes
(mcpprobe.render.formats collects both; nothing here writes to a stream). The preview, the
confirmation question and task status lines are shown live, while the call runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from mcpprobe.operations.checks import ANNOTATION_HINTS, HINT_DEFAULTS
from mcpprobe.operations.outcome import InvokeOutcome
from mcpprobe.operations.saving import decode_b64
from mcpprobe.render.human import render_error, render_findings, render_stderr_tail
from mcpprobe.render.styled import between_parts
from mcpprobe.safety.sanitize import json_dumps, visible

if TYPE_CHECKING:
    from mcpprobe.render.cells import Safe


def _object(value: Any) -> dict[str, Any]:
    """A JSON object the server sent, or {} when it sent something else."""
    return value if isinstance(value, dict) else {}


def _array(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


# ----- binary data -----


def human_size(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    for unit in ("KiB", "MiB", "GiB"):
        size_f = size / 1024
        if size_f < 1024 or unit == "GiB":
            return f"{size_f:.1f} {unit}"
        size = int(size_f)
    return f"{size} bytes"  # pragma: no cover


# ----- pieces -----


def is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def annotation_hints(tool: dict[str, Any]) -> list[Text]:
    """Each hint as `name: value`, marked where the value is the default or does not apply."""
    annotations = _object(tool.get("annotations"))
    hints = []
    for hint in ANNOTATION_HINTS:
        value = annotations.get(hint)
        if isinstance(value, bool):
            hints.append(Text(f"{hint}: {str(value).lower()}", style="bold" if value else ""))
        elif hint in ("destructiveHint", "idempotentHint") and annotations.get("readOnlyHint") is True:
            hints.append(Text(f"{hint}: n/a (read-only)", style="dim"))
        else:
            hints.append(Text(f"{hint}: {str(HINT_DEFAULTS[hint]).lower()} (default)", style="dim"))
    return hints


def between_hints(hints: list[Text], width: int) -> Text:
    """The hints joined by " · ", a line broken only between two hints (the separator ends the
    line), never inside `destructiveHint: n/a (read-only)`."""
    text, line = Text(), 0
    for hint in hints:
        if line and line + cell_len(" · ") + hint.cell_len + cell_len(" ·") > width:
            text.append(" ·\n")
            line = 0
        elif line:
            text.append(" · ")
            line += cell_len(" · ")
        text.append_text(hint)
        line += hint.cell_len
    return text


PREVIEW_LABEL = 15  # "  annotations  ": where the values of the preview's lines start


def _preview_line(label: str, value: Text) -> Table:
    """`label` then `value`, which wraps under itself (between words; a word wider than the line
    folds), not under the label."""
    grid = Table.grid()
    grid.add_column(width=PREVIEW_LABEL, no_wrap=True, style="bold")
    grid.add_column(overflow="fold")
    grid.add_row(Text(f"  {label}"), value)
    return grid


def render_preview(err: Console, tool: dict[str, Any], arguments: dict[str, Any], how: str,
                   server: dict[str, Any], safe: Safe) -> None:
    head = Text.assemble(("Calling tool ", "bold"), (safe(tool.get("name", "?")), "bold cyan"))
    if isinstance(server.get("name"), str):
        head.append(f" on {safe(server['name'])} {safe(server.get('version') or '')}".rstrip(), style="dim")
    # Laid out to the width even on a console of one-line messages (stderr), as findings are.
    err.print(head, soft_wrap=False)
    room = err.width - PREVIEW_LABEL
    err.print(_preview_line("arguments", Text(safe(json_dumps(arguments, ensure_ascii=False)))), soft_wrap=False)
    err.print(_preview_line("annotations", between_hints(annotation_hints(tool), room)), soft_wrap=False)
    err.print(_preview_line("", Text("the server's own claims about the tool, not verified by mcpprobe", style="dim")),
              soft_wrap=False)
    if how == "--yes":
        err.print(Text("  confirmed by --yes", style="dim"))


def confirm_question(tool: dict[str, Any], safe: Safe, *, repeated: bool = False) -> str:
    """The question before a tool not marked read-only is called; `repeated` (`load`): it is called
    over and over."""
    annotations = _object(tool.get("annotations"))
    warning = " It claims to be destructive." if annotations.get("destructiveHint", True) is True else ""
    if repeated:
        return (f"Tool {safe(tool.get('name', '?'))!r} is not marked read-only.{warning} A load run calls it "
                "over and over. Call it?")
    return f"Tool {safe(tool.get('name', '?'))!r} is not marked read-only.{warning} Call it?"


def block_lines(block: Any, safe: Safe, *, terminal: bool, saved: dict[int, str],
                index: int) -> list[tuple[str, Text | str]]:
    """One content block as ("text", raw string) or ("summary", Text) pieces."""
    if not isinstance(block, dict):
        return [("summary", Text(f"[malformed content block: {safe(block, 80)}]", style="red"))]
    kind = block.get("type")
    if kind == "text":
        value = block.get("text")
        return [("text", value if isinstance(value, str) else json_dumps(value))]
    if kind in ("image", "audio"):
        raw = decode_b64(block.get("data"))
        size = human_size(len(raw)) if raw is not None else "invalid base64"
        line = Text(f"[{kind} {safe(block.get('mimeType', '?'))}, {size}", style="magenta")
        line.append(f"; saved to {saved[index]}]" if index in saved else "; --save DIR writes it to a file]")
        return [("summary", line)]
    if kind == "resource_link":
        line = Text("[resource link] ", style="magenta")
        line.append(safe(block.get("uri", "?")))
        for key in ("name", "mimeType"):
            if isinstance(block.get(key), str):
                line.append(f"  {safe(block[key])}", style="dim")
        return [("summary", line)]
    if kind == "resource":
        resource = _object(block.get("resource"))
        head = Text("[embedded resource] ", style="magenta")
        head.append(safe(resource.get("uri", "?")))
        if isinstance(resource.get("mimeType"), str):
            head.append(f"  {safe(resource['mimeType'])}", style="dim")
        if isinstance(resource.get("text"), str):
            return [("summary", head), ("text", resource["text"])]
        raw = decode_b64(resource.get("blob"))
        head.append(f"  {human_size(len(raw)) if raw is not None else 'invalid base64'} of binary data", style="dim")
        if index in saved:
            head.append(f"; saved to {saved[index]}", style="dim")
        return [("summary", head)]
    return [("summary", Text(f"[content of unknown type {safe(kind)!s}] {safe(block, 200)}", style="yellow"))]


def _raw(out: Console, text: str) -> None:
    """Text exactly as the server sent it, one line at least, after what the console printed."""
    out.file.write(text if text.endswith("\n") else text + "\n")


def write_blocks(out: Console, blocks: list[Any], safe: Safe, *, terminal: bool, saved: dict[int, str],
                 skip: frozenset[int] = frozenset()) -> None:
    for index, block in enumerate(blocks):
        if index in skip:
            continue
        for kind, piece in block_lines(block, safe, terminal=terminal, saved=saved, index=index):
            if kind == "text":
                assert isinstance(piece, str)
                if terminal:
                    out.print(Text(visible(piece, multiline=True)))
                else:
                    _raw(out, piece)
            else:
                out.print(piece)


def _copies_of_structured(result: dict[str, Any], blocks: list[Any]) -> frozenset[int]:
    """The text blocks that only repeat structuredContent as JSON (what the spec asks servers to
    send for older clients): shown once, as structuredContent."""
    import json

    if "structuredContent" not in result:
        return frozenset()
    copies = set()
    for index, block in enumerate(blocks):
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            try:
                same = json.loads(block["text"]) == result["structuredContent"]
            except ValueError:
                continue
            if same:
                copies.add(index)
    return frozenset(copies)


def write_json(out: Console, value: Any, *, terminal: bool) -> None:
    """A value as exact, indented JSON: escapes stay escapes (a Windows path's backslash is never a
    line break), and nothing is cut or wrapped."""
    text = json_dumps(value, indent=2, ensure_ascii=False, default=str)
    if terminal:
        out.print(Text(visible(text, multiline=True)), soft_wrap=True)
    else:
        _raw(out, text)


def _timing_line(outcome: InvokeOutcome, width: int) -> Text:
    """`timing: connect 2 ms · ...`, broken between phases to fit `width`, under its first phase."""
    parts = [f"{t.phase} {t.ms:.0f} ms" for t in outcome.timings]
    label = "timing: "
    return Text(label + between_parts(parts, width - len(label)).replace("\n", "\n" + " " * len(label)),
                style="dim")


def _tail(err: Console, outcome: InvokeOutcome, safe: Safe) -> None:
    findings = [f for f in outcome.all_findings() if not (outcome.error and f.message == outcome.error.message)]
    render_findings(err, findings, safe)
    render_error(err, outcome)
    if outcome.error is None:
        render_stderr_tail(err, outcome.stderr_tail)
    if outcome.timings:
        err.print(_timing_line(outcome, err.width))


# ----- the three commands -----


def render_task_status(err: Console, entry: dict[str, Any], safe: Safe) -> None:
    """One line on stderr each time a task's status (or its message) changes."""
    # The status is the server's word, whatever it is (a finding says when it is not the spec's).
    line = Text(f"task {safe(entry['status'], 40)}",
                style="bold red" if entry["status"] in ("failed", "cancelled") else "dim")
    if isinstance(entry.get("statusMessage"), str):
        line.append(f": {safe(entry['statusMessage'], 200)}", style="dim")
    err.print(line)


def task_summary(outcome: InvokeOutcome, safe: Safe) -> Text | None:
    run = outcome.task
    if run is None:
        return None
    statuses = [entry["status"] for entry in run.history]
    path = " → ".join(safe(s, 40) for i, s in enumerate(statuses) if i == 0 or s != statuses[i - 1])
    line = Text(f"task {safe(run.task_id, 80)}: {path} ({run.polls} poll{'s' if run.polls != 1 else ''})",
                style="dim")
    if run.cancel is not None:
        if run.cancel.get("sent"):
            answer = run.cancel.get("status") or ("acknowledged" if run.cancel.get("acknowledged")
                                                  else f"failed: {run.cancel.get('error')}")
            line.append(f"; tasks/cancel sent: {safe(answer, 200)}", style="dim")
        else:
            line.append(f"; not cancelled: {run.cancel.get('reason')}", style="dim")
    return line


def render_call(out: Console, err: Console, outcome: InvokeOutcome, safe: Safe, *, terminal: bool) -> None:
    result = outcome.result
    summary = task_summary(outcome, safe)
    if summary is not None:
        err.print(summary)
    if result is not None and result.get("resultType") != "input_required":
        saved = {s["index"]: s["path"] for s in outcome.saved}
        blocks = _array(result.get("content"))
        copies = _copies_of_structured(result, blocks)
        write_blocks(out, blocks, safe, terminal=terminal, saved=saved, skip=copies)
        if "structuredContent" in result:
            label = "structuredContent (also sent as a text block):" if copies else "structuredContent:"
            out.print(Text(label, style="bold"))
            write_json(out, result["structuredContent"], terminal=terminal)
        if result.get("isError") is True:
            err.print(Text("the tool reported an error (isError: true)", style="bold red"))
    elif result is not None:
        err.print(Text("the server asked for more input and the call did not complete", style="bold red"))
    _tail(err, outcome, safe)


def render_prompt(out: Console, err: Console, outcome: InvokeOutcome, safe: Safe, *, terminal: bool) -> None:
    if outcome.completion is not None:
        render_completion(out, err, outcome, safe)
    elif outcome.result is not None and isinstance(outcome.result.get("messages"), list):
        result = outcome.result
        if isinstance(result.get("description"), str):
            out.print(Text(safe(result["description"]), style="dim"))
        saved = {s["index"]: s["path"] for s in outcome.saved}
        for index, message in enumerate(result["messages"]):
            role = message.get("role") if isinstance(message, dict) else None
            out.print(Text(f"[{safe(role) if isinstance(role, str) else '?'}]", style="bold cyan"))
            content = message.get("content") if isinstance(message, dict) else None
            blocks = content if isinstance(content, list) else [content]
            for block in blocks:
                for kind, piece in block_lines(block, safe, terminal=terminal, saved=saved, index=index):
                    if kind == "text" and isinstance(piece, str):
                        if terminal:
                            out.print(Text(visible(piece, multiline=True)))
                        else:
                            _raw(out, piece)
                    else:
                        out.print(piece)
    _tail(err, outcome, safe)


def render_completion(out: Console, err: Console, outcome: InvokeOutcome, safe: Safe) -> None:
    completion = outcome.completion or {}
    values = completion.get("values") or []
    for value in values:
        out.print(Text(safe(value)))
    total = completion.get("total")
    note = f"{len(values)} value{'s' if len(values) != 1 else ''}"
    if isinstance(total, int):
        note += f" of {total}"
    if completion.get("hasMore") is True:
        note += ", more available"
    err.print(Text(note, style="dim"))


def render_read(out: Console, err: Console, outcome: InvokeOutcome, safe: Safe, *, terminal: bool,
                written: bool = False, data: Callable[[bytes], None]) -> None:
    """Text as it is; blobs decoded (handed to `data`) for a file or a pipe, summarised on a terminal."""
    result = outcome.result or {}
    if outcome.completion is not None:
        render_completion(out, err, outcome, safe)
        _tail(err, outcome, safe)
        return
    contents = [c for c in result.get("contents") or [] if isinstance(c, dict)] \
        if result.get("resultType") != "input_required" else []
    several = len(contents) > 1
    if written:
        for entry in outcome.saved:
            err.print(Text(f"wrote {human_size(entry['bytes'])} of {safe(entry.get('uri'))} to "
                           f"{safe(entry['path'])}", style="dim"))
    else:
        ended = True  # did the last thing written to the pipe end a line?
        for item in contents:
            uri, mime = item.get("uri"), item.get("mimeType")
            text, raw = item.get("text"), decode_b64(item.get("blob")) if "blob" in item else None
            if several:
                label = f"==> {safe(uri)}" + (f" ({safe(mime)})" if isinstance(mime, str) else "") + " <=="
                if terminal:
                    out.print(Text(label, style="bold"))
                else:
                    out.file.write(("" if ended else "\n") + label + "\n")
            if isinstance(text, str):
                if terminal:
                    out.print(Text(visible(text, multiline=True)))
                else:
                    out.file.write(text)
                    ended = text.endswith("\n") or not text
            elif raw is not None:
                if terminal:
                    line = Text(f"[blob {safe(mime) if isinstance(mime, str) else 'of unknown type'}, "
                                f"{human_size(len(raw))}; not shown on a terminal: use -o FILE or redirect stdout]",
                                style="magenta")
                    out.print(line)
                else:
                    data(raw)
                    ended = raw.endswith(b"\n") or not raw
            elif "blob" in item:
                err.print(Text(f"{safe(uri)}: the blob is not valid base64", style="red"))
    _tail(err, outcome, safe)
