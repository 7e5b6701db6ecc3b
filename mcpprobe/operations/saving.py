"""What `call`, `read` and `get-prompt` write to files (--save DIR, -o PATH), for the operations.

Writes go through mcpprobe.safety.outfiles (atomic); what was written is recorded in the outcome
(`saved`, `save_error`, findings), never printed: the renderers show it.
"""

from __future__ import annotations

import base64
import binascii
import mimetypes
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcpprobe.findings import Finding

if TYPE_CHECKING:
    from mcpprobe.operations.outcome import InvokeOutcome


def decode_b64(data: Any) -> bytes | None:
    if not isinstance(data, str):
        return None
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def extension(mime: Any) -> str:
    if not isinstance(mime, str):
        return ".bin"
    special = {"audio/wav": ".wav", "audio/x-wav": ".wav", "audio/mpeg": ".mp3", "image/jpeg": ".jpg",
               "text/plain": ".txt", "text/markdown": ".md"}
    return special.get(mime.split(";")[0].strip().lower()) or mimetypes.guess_extension(mime.split(";")[0]) or ".bin"


def _safe_name(text: str) -> str:
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "content"
    return name[:80]


def save_blocks(outcome: InvokeOutcome, directory: str) -> None:
    """`--save DIR`: write every image, audio and embedded blob of a tool result or prompt to DIR.
    A file that cannot be written stops the saving; `outcome.save_error` says why (exit 2)."""
    from mcpprobe.safety.outfiles import WriteFailed, ensure_directory, write_file

    result = outcome.result or {}
    blocks: list[Any] = []
    if isinstance(result.get("content"), list):
        blocks = result["content"]
    elif isinstance(result.get("messages"), list):
        blocks = [m.get("content") for m in result["messages"] if isinstance(m, dict)]
    stem = _safe_name(str((outcome.item or {}).get("name") or outcome.command))
    try:
        for index, block in enumerate(blocks):
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind in ("image", "audio"):
                data, mime = block.get("data"), block.get("mimeType")
            elif kind == "resource" and isinstance(block.get("resource"), dict) and "blob" in block["resource"]:
                data, mime = block["resource"].get("blob"), block["resource"].get("mimeType")
            else:
                continue
            raw = decode_b64(data)
            if raw is None:
                outcome.findings.append(Finding(
                    "protocol-violation", f"content[{index}] ({kind}): data is not valid base64",
                    kind=outcome.item_kind or "server", detail={"index": index}))
                continue
            path = _unique(ensure_directory(directory) / f"{stem}-{index}{extension(mime)}")
            write_file(path, raw)
            outcome.saved.append({"index": index, "type": kind, "mimeType": mime, "bytes": len(raw),
                                  "path": str(path)})
    except WriteFailed as exc:
        outcome.save_error = f"--save: {exc.message}"


def _unique(path: Path) -> Path:
    candidate, n = path, 1
    while candidate.exists():
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
        n += 1
    return candidate


def save_contents(outcome: InvokeOutcome, output: str) -> None:
    """-o PATH: one content into PATH (into the directory PATH, named after its URI, when PATH is
    one); several into the directory PATH, one file each. A file that cannot be written stops the
    writing; `outcome.save_error` says why (exit 2), and the contents are shown anyway. A blob
    that is not base64 is not written: a protocol-violation finding."""
    from mcpprobe.safety.outfiles import WriteFailed, ensure_directory, write_file

    result = outcome.result or {}
    if result.get("resultType") == "input_required":
        return
    contents = [c for c in result.get("contents") or [] if isinstance(c, dict)]
    if not contents:
        return
    try:
        paths: list[Path]
        if len(contents) == 1 and not Path(output).is_dir():
            paths = [Path(output)]
        else:
            directory = ensure_directory(output)
            paths = []
            for index, item in enumerate(contents):
                uri = str(item.get("uri") or f"content-{index}")
                name = _safe_name(uri.rstrip("/").rsplit("/", 1)[-1])
                if "." not in name:
                    name += extension(item.get("mimeType"))
                paths.append(_unique_among(directory / name, paths))
        for index, (item, path) in enumerate(zip(contents, paths, strict=True)):
            if isinstance(item.get("text"), str):
                data = item["text"].encode("utf-8")
            else:
                raw = decode_b64(item.get("blob"))
                if raw is None:
                    outcome.findings.append(Finding(
                        "protocol-violation", f"contents[{index}]: the blob is not valid base64; not written",
                        kind="resources", detail={"index": index, "uri": item.get("uri")}))
                    continue
                data = raw
            write_file(path, data)
            outcome.saved.append({"index": index, "uri": item.get("uri"), "mimeType": item.get("mimeType"),
                                  "bytes": len(data), "path": os.fspath(path)})
    except WriteFailed as exc:
        outcome.save_error = f"-o: {exc.message}"


def _unique_among(path: Path, taken: list[Path]) -> Path:
    candidate, n = path, 1
    while candidate in taken:
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
        n += 1
    return candidate
