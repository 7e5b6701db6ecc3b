"""The extensions a server declares (`capabilities.extensions`, SEP-2133), and what two of them add
to what a probe sees: MCP Apps tools with their UI resource, and skills with their digests.

- Any extension: its identifier and its settings object, as declared (an empty object: no settings).
- MCP Apps (`io.modelcontextprotocol/ui`, SEP-1865; ext-apps specification 2026-01-26, "Resource
  Discovery"): "Tools are associated with UI resources through the `_meta.ui` field", whose
  `resourceUri` names a `ui://` resource and `visibility` says who may call the tool ("model",
  "app"; default both). The flat `_meta["ui/resourceUri"]` is the deprecated form ("Use
  `ui.resourceUri` instead"), read when the nested one is absent, and said so.
- Skills (`io.modelcontextprotocol/skills`, SEP-2640): "A server declaring the
  `io.modelcontextprotocol/skills` extension MUST implement the `skills/list` method"; each entry
  has the `uri` of its SKILL.md, its `frontmatter` (name, description) and `resources`, every file
  of the skill with its `sha256:` digest (omitted only for a skill generated on demand).

Everything here is the server's text, kept as sent; the renderers make it inert.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcpprobe.errors import ProbeError, RpcError
from mcpprobe.findings import Finding

if TYPE_CHECKING:
    from mcpprobe.client.session import Session

UI_EXTENSION = "io.modelcontextprotocol/ui"
SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
UI_KEY, UI_FLAT_KEY = "_meta.ui.resourceUri", '_meta["ui/resourceUri"]'
MAX_SKILL_PAGES = 100


def declared(capabilities: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Each declared extension as `{"name", "settings"}`, in the server's order."""
    extensions = (capabilities or {}).get("extensions")
    if not isinstance(extensions, dict):
        return []
    return [{"name": str(name), "settings": settings} for name, settings in extensions.items()]


def app_ui(tool: Any) -> dict[str, Any] | None:
    """The UI resource a tool names (`_meta.ui.resourceUri`, else the deprecated flat key), or None."""
    meta = tool.get("_meta") if isinstance(tool, dict) else None
    if not isinstance(meta, dict):
        return None
    ui: dict[str, Any] = got if isinstance(got := meta.get("ui"), dict) else {}
    uri, key = ui.get("resourceUri"), UI_KEY
    if not isinstance(uri, str):
        uri, key = meta.get("ui/resourceUri"), UI_FLAT_KEY
    if not isinstance(uri, str):
        return None
    visibility = ui.get("visibility")
    return {"tool": tool.get("name"), "resourceUri": uri,
            "visibility": visibility if isinstance(visibility, list) else None, "key": key}


def app_tools(tools: Iterable[Any]) -> list[dict[str, Any]]:
    """The tools that carry a UI resource, in list order."""
    return [ui for tool in tools if (ui := app_ui(tool)) is not None]


@dataclass
class Skills:
    """What `skills/list` answered: every page to the end, or where it stopped."""

    state: str = "complete"  # complete | failed
    skills: list[dict[str, Any]] = field(default_factory=list)
    pages: int = 0
    ms: float = 0.0
    error: str | None = None
    findings: list[Finding] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"state": self.state, "pages": self.pages, "count": len(self.skills), "skills": self.skills,
                "error": self.error, "ms": round(self.ms, 1)}


async def list_skills(session: Session) -> Skills | None:
    """`skills/list` to the end when the server declared the skills extension; else None, nothing sent."""
    extensions = session.capabilities.get("extensions")
    if not isinstance(extensions, dict) or not isinstance(extensions.get(SKILLS_EXTENSION), dict):
        return None
    found = Skills()
    started = time.perf_counter()
    cursor: Any = None
    try:
        while found.pages < MAX_SKILL_PAGES:
            answer = await session.request("skills/list", {"cursor": cursor} if cursor is not None else {})
            found.pages += 1
            page = answer.get("skills")
            if not isinstance(page, list):
                raise ProbeError("skills/list: the result has no skills list")
            found.skills.extend(page)
            cursor = answer.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                break
    except ProbeError as exc:
        found.state, found.error = "failed", exc.message
        missing = isinstance(exc, RpcError) and exc.rpc_code == -32601
        found.findings.append(Finding(
            "protocol-violation" if missing else "list-failed",
            f"skills/list: {exc.message}" + (
                f"; \"A server declaring the `{SKILLS_EXTENSION}` extension MUST implement the `skills/list` "
                "method\" (SEP-2640)" if missing else ""),
            kind="server", detail={"method": "skills/list", "extension": SKILLS_EXTENSION}))
    found.ms = (time.perf_counter() - started) * 1000
    return found


def skill_summary(skill: Any) -> dict[str, Any]:
    """One skill entry's name, description, uri, and its files with their digests (None: not given)."""
    entry = skill if isinstance(skill, dict) else {}
    front: dict[str, Any] = got if isinstance(got := entry.get("frontmatter"), dict) else {}
    resources = entry.get("resources")
    files = None
    if isinstance(resources, list):
        files = [{"uri": r.get("uri"), "digest": r.get("digest")} for r in resources if isinstance(r, dict)]
    return {"name": front.get("name"), "description": front.get("description"), "uri": entry.get("uri"),
            "files": files}


def suspicious(capabilities: dict[str, Any] | None, skills: Skills | None = None) -> list[Finding]:
    """Hidden characters or escape sequences in an extension's name or settings, or in a skill's
    entry: the `suspicious-text` finding every listed item gets (mcpprobe.client.catalog)."""
    from mcpprobe.client.catalog import suspicious_text

    found: list[Finding] = []

    def scan(where: str, path: str, value: Any, detail: dict[str, Any]) -> None:
        if isinstance(value, dict):
            for key, sub in value.items():
                scan(where, f"{path}.{key}" if path else str(key), sub, detail)
        elif isinstance(value, list):
            for index, sub in enumerate(value):
                scan(where, f"{path}[{index}]", sub, detail)
        elif (finding := suspicious_text(where, path, value, "server", detail)) is not None:
            found.append(finding)

    for ext in declared(capabilities):
        scan("an extension's name", "name", ext["name"], {"extension": ext["name"]})
        scan(f"extension {ext['name']!r}", "settings", ext["settings"], {"extension": ext["name"]})
    for skill in skills.skills if skills is not None else []:
        scan("a skills/list entry", "", skill, {"method": "skills/list"})
    return found
