"""Every JSON document mcpprobe prints, built here and only here: `probe` (one server or a
fleet), `list`, `call`/`read`/`get-prompt`, `servers`, an interrupted run, and the lines of
`watch --json`. Documented in docs/json-output.md; docs/output.schema.json is their schema.

`formatVersion` changes only when a key that scripts rely on changes meaning or goes away;
new keys may appear at any time.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from mcpprobe.client.capabilities import missing_for
from mcpprobe.client.catalog import KINDS, LIST_KINDS, Items, Listing
from mcpprobe.operations.outcome import Outcome
from mcpprobe.safety.sanitize import json_dumps

if TYPE_CHECKING:
    from mcpprobe.auth.login import LoginResult
    from mcpprobe.fleet.config import Discovery
    from mcpprobe.fleet.probe import Report
    from mcpprobe.load.run import LoadOutcome
    from mcpprobe.operations.outcome import InvokeOutcome
    from mcpprobe.safety.redact import Redactor

FORMAT_VERSION = 1


def listing_json(listing: Listing | None, kind: str, declared: bool) -> dict[str, Any]:
    if listing is None:
        return {"declared": declared, "listCompleted": False, "state": "not-declared" if not declared else "failed",
                "pages": 0, "count": 0, "items": [], "invalidItems": []}
    doc = {
        "declared": listing.declared,
        "listCompleted": listing.list_completed,
        "state": listing.state,
        "pages": len(listing.pages),
        "count": len(listing.items),
        "items": listing.items,
        "invalidItems": listing.invalid,
        "ms": round(listing.ms, 1),
    }
    # x-mcp-header (2026-07-28 over streamable HTTP): only where a tool has such parameters.
    if listing.header_params:
        doc["headerParams"] = listing.header_params
    if listing.excluded:
        doc["excludedItems"] = listing.excluded
    return doc


def document(outcome: Outcome) -> dict[str, Any]:
    snapshot = outcome.snapshot
    doc: dict[str, Any] = {
        "formatVersion": FORMAT_VERSION,
        "command": outcome.command,
        "ok": int(outcome.exit_code) == 0,
        "exitCode": int(outcome.exit_code),
        "transport": snapshot.transport if snapshot else None,
        "target": snapshot.target if snapshot else None,
        "protocolVersion": (snapshot.protocol_version or None) if snapshot else None,
        "era": (snapshot.era or None) if snapshot else None,
        "eraReason": (snapshot.era_reason or None) if snapshot else None,
        "serverInfo": snapshot.server_info if snapshot else None,
        "instructions": snapshot.instructions if snapshot else None,
        "capabilities": snapshot.capabilities if snapshot and snapshot.negotiated else None,
        "supportedVersions": snapshot.supported_versions if snapshot else None,
        "client": {
            "clientInfo": snapshot.client_info,
            "capabilities": snapshot.client_capabilities,
            "requestedVersion": snapshot.requested_version or None,
        } if snapshot else None,
    }
    # Only where more than one request negotiated the era (docs/negotiation.md#where-the-evidence-is).
    if snapshot and len(snapshot.negotiation) > 1:
        doc["negotiation"] = [dict(entry) for entry in snapshot.negotiation]
    capabilities = (snapshot.capabilities if snapshot else {}) or {}
    negotiated = bool(snapshot and snapshot.negotiated)
    if outcome.command == "probe":
        # Before capabilities are known nothing about the kinds is known: null, not "not-declared".
        doc["kinds"] = None if not negotiated else {
            kind: listing_json(outcome.listings.get(kind), kind,
                               isinstance(capabilities.get(KINDS[kind].capability), dict))
            for kind in KINDS
        }
    elif outcome.kind is not None:
        kind = outcome.kind
        doc["kind"] = kind
        if not negotiated:
            doc.update({"declared": None, "listCompleted": False, "state": None, "pages": 0, "count": 0,
                        "items": [], "invalidItems": []})
        else:
            declared = missing_for(capabilities, LIST_KINDS[kind].list_method) is None
            doc.update(listing_json(outcome.listings.get(kind), kind, declared))
    if negotiated and outcome.command in ("probe", "list"):
        _extensions(doc, outcome, capabilities)
    doc["findings"] = [finding.to_json() for finding in outcome.all_findings()]
    doc["timings"] = [timing.to_json() for timing in outcome.timings]
    doc["error"] = None
    if outcome.error is not None:
        doc["error"] = {
            "code": outcome.error.code,
            "message": outcome.error.message,
            "exitCode": int(outcome.error.exit_code),
            "detail": outcome.error.detail,
        }
    doc["serverStderr"] = outcome.stderr_tail
    return doc


def _extensions(doc: dict[str, Any], outcome: Outcome, capabilities: dict[str, Any]) -> None:
    """The declared extensions, the MCP Apps tools and the skills (docs/json-output.md), each key
    only where there is something to say: a server without extensions gets the document it always had."""
    from mcpprobe.client.extensions import app_tools, declared

    extensions = declared(capabilities)
    if extensions:
        doc["extensions"] = extensions
    tools = outcome.listings.get("tools")
    apps = app_tools(tools.items) if tools is not None else []
    if apps:
        doc["apps"] = apps
    if outcome.skills is not None:
        doc["skills"] = outcome.skills.to_json()


def report_document(report: Report) -> dict[str, Any]:
    """The probe document of one server (docs/json-output.md), with what the run added to it:
    the config name, the time taken, expectations, drift, the snapshot saved."""
    doc = document(report.outcome)
    doc["exitCode"] = int(report.exit_code)
    doc["ok"] = doc["exitCode"] == 0
    if report.member.name:
        doc["server"] = {"name": report.member.name, "source": report.member.source}
    if report.member.skipped is not None:
        doc["skipped"] = report.member.skipped
    doc["elapsedMs"] = round(report.elapsed * 1000, 1)
    if report.checks is not None:
        doc["expectations"] = [check.to_json() for check in report.checks]
    if report.drift is not None:
        doc["drift"] = report.drift.to_json()
    if report.member.snapshot_path and not report.snapshot_error and report.outcome.error is None:
        doc["snapshotSaved"] = report.member.snapshot_path
    if report.snapshot_error:
        doc["snapshotError"] = report.snapshot_error
    return doc


def check_document(report: Report) -> dict[str, Any]:
    """The check document of one server (docs/json-output.md#check): the common keys, then a result
    per check with its id, level, status, spec link and evidence, and their counts."""
    outcome = report.outcome
    doc = document(outcome)
    doc["exitCode"] = int(report.exit_code)
    doc["ok"] = doc["exitCode"] == 0
    if report.member.name:
        doc["server"] = {"name": report.member.name, "source": report.member.source}
    if report.member.skipped is not None:
        doc["skipped"] = report.member.skipped
    doc["elapsedMs"] = round(report.elapsed * 1000, 1)
    results = getattr(outcome, "results", [])
    doc["summary"] = outcome.counts() if hasattr(outcome, "counts") else {}
    doc["checks"] = [result.to_json() for result in results]
    return doc


HEAD_KEYS = ("formatVersion", "command", "ok", "exitCode", "transport", "target", "protocolVersion", "era",
             "eraReason", "negotiation", "serverInfo", "instructions", "capabilities", "supportedVersions", "client")


def invoke_document(outcome: InvokeOutcome) -> dict[str, Any]:
    """`call`, `read` and `get-prompt`: the probe header, then the request as sent, the result,
    findings and timing (docs/commands/call.md#output)."""
    base = document(outcome)
    doc = {key: base[key] for key in HEAD_KEYS if key in base}
    label = {"call": "tool", "read": "resource", "get-prompt": "prompt"}[outcome.command]
    doc[label] = outcome.item
    if outcome.command == "read":
        doc["uri"] = outcome.uri
    doc["catalog"] = {kind: {"state": listing.state, "listCompleted": listing.list_completed,
                             "count": len(listing.items), "pages": len(listing.pages)}
                      for kind, listing in outcome.listings.items()}
    doc["arguments"] = outcome.arguments
    if outcome.command == "call":
        doc["confirmation"] = outcome.confirmation
    doc["sent"] = outcome.sent
    doc["request"] = outcome.request
    if outcome.param_headers:  # x-mcp-header (2026-07-28 over streamable HTTP): only when some were sent
        doc["paramHeaders"] = outcome.param_headers
    doc["result"] = outcome.result
    if outcome.command == "call":
        result = outcome.result or {}
        doc["isError"] = result.get("isError") is True if outcome.result is not None else None
        doc["structuredContent"] = result.get("structuredContent")
        doc["task"] = outcome.task.to_json() if outcome.task is not None else None
    doc["completion"] = outcome.completion
    doc["progress"] = outcome.progress
    doc["inputRequests"] = outcome.input_rounds
    doc["elicit"] = outcome.elicit
    doc["saved"] = outcome.saved
    doc["saveError"] = outcome.save_error
    doc["interrupted"] = outcome.interrupted
    for key in ("findings", "timings", "error", "serverStderr"):
        doc[key] = base[key]
    return doc


def load_document(outcome: LoadOutcome, named: tuple[str, str] | None = None) -> dict[str, Any]:
    """`load`: the connection's head (as every document), the config name of a `-s NAME` server (as
    `probe` and `check` have it), the settings, the overall and per-operation figures, the histogram's
    buckets, a row per interval, the server's samples and the SLOs."""
    doc = document(outcome)
    if named is not None:
        doc["server"] = {"name": named[0], "source": named[1]}
    histogram = outcome.histogram
    operations = outcome.operations
    if len(outcome.operation_histograms) == len(operations):
        operations = [{**row, "histogram": h.to_json()}
                      for row, h in zip(operations, outcome.operation_histograms, strict=True)]
    doc.update({
        "settings": outcome.plan.to_json() if outcome.plan is not None else None,
        "interrupted": outcome.interrupted,
        "clock": outcome.clock or None,
        "overall": outcome.overall,
        "operations": operations,
        "histogram": None if histogram is None else histogram.to_json(),
        "intervals": outcome.intervals,
        "intervalsDropped": outcome.dropped_rows,
        "serverSamples": [sample.to_json() for sample in outcome.samples],
        "clientCost": outcome.client or None,
        "schedule": outcome.schedule or None,
        "slos": outcome.slos,
    })
    return doc


def servers_document(found: Discovery) -> dict[str, Any]:
    """`servers --json` (and `probe --list-servers --json`): every named server and its file."""
    return {
        "formatVersion": FORMAT_VERSION, "command": "servers",
        "servers": [entry.to_json() for entry in found.servers],
        "shadowed": [entry.to_json() for entry in found.shadowed],
        "files": [{"path": path, "state": state} for path, state in found.files],
    }


def login_json(result: LoginResult, stored: str | None) -> dict[str, Any]:
    """The `login` of `auth login --json`: the flow, the client, the check, the token's public facts,
    and the file it was stored in."""
    return {"flow": result.flow, "registration": result.registration, "stepUp": result.step_up,
            "status": result.status, "notNeeded": result.not_needed, "checked": result.checked, "why": result.why,
            "token": result.record.public(), "stored": stored, "migratedFrom": result.migrated_from}


def auth_login_document(url: str, *, login: dict[str, Any] | None, findings: Iterable[Any] = (),
                        diagnosis: Any = None, error: Any = None, store_error: str | None = None) -> dict[str, Any]:
    """`auth login --json`: the login (flow, client, the token's public facts) or, when it failed,
    the diagnosis that says why and the error. `store_error`: the login worked but its token could
    not be stored (exit 2, as an output file that cannot be written)."""
    code = int(error.exit_code) if error is not None else 2 if store_error else 0
    return {"formatVersion": FORMAT_VERSION, "command": "auth login", "ok": code == 0, "exitCode": code,
            "serverUrl": url, "login": login, "findings": [f.to_json() for f in findings],
            **({"authDiagnosis": diagnosis} if error is not None else {}),
            **({"storeError": store_error} if store_error else {}),
            "error": None if error is None else {"code": error.code, "message": error.message, "exitCode": code,
                                                 "detail": error.detail}}


def auth_status_document(code: int, directory: str, tokens: list[dict[str, Any]]) -> dict[str, Any]:
    """`auth status --json`: the stored tokens' public facts (never a token or a secret)."""
    return {"formatVersion": FORMAT_VERSION, "command": "auth status", "ok": code == 0, "exitCode": code,
            "directory": directory, "tokens": tokens}


def event_line(event: dict[str, Any]) -> str:
    """One `watch --json` event as one line: compact and ASCII only, whatever stdout is (NDJSON).
    The events are built by the watcher (mcpprobe.watch) and follow this formatVersion."""
    return json_dumps(event, ensure_ascii=True, separators=(",", ":"), default=str)


def interrupted_document(command: str) -> dict[str, Any]:
    """The document of a run interrupted before its operation had anything to show."""
    from mcpprobe.exitcodes import ExitCode

    code = int(ExitCode.INTERRUPTED)
    return {"formatVersion": FORMAT_VERSION, "command": command, "ok": False, "exitCode": code,
            "error": {"code": "interrupted", "message": "interrupted", "exitCode": code}}


def dumps(doc: Any, *, pretty: bool | None = None) -> str:
    """The document as text: indented for a person at a terminal, compact otherwise.

    Compact output is written by the json module's C encoder (`indent` makes it fall back to
    its pure-Python encoder, about 10x slower: 0.8 s for 10,000 tools); `pretty=None` means
    indented exactly when stdout is a terminal. ASCII-only either way: no server-sent control or
    bidi character reaches a terminal, even when the JSON is printed to one; jq and every JSON
    parser decode the escapes.
    """
    if pretty is None:
        pretty = _stdout_is_terminal()
    if pretty:
        return json_dumps(doc, indent=2, ensure_ascii=True, default=_plain)
    return json_dumps(doc, separators=(",", ":"), ensure_ascii=True, default=_plain)


def _plain(value: Any) -> Any:
    """What the encoder writes for a value it does not know: a listing's items as their list (as
    kept: NaN already null)."""
    if isinstance(value, Items):
        import json

        return json.loads("[" + ",".join(value.json_texts()) + "]")
    return str(value)


# Items encoded per call when a document is written in pieces (`write`).
BATCH = 500
FLUSH_CHARS = 1 << 16


def pieces(doc: Any, *, pretty: bool | None = None) -> Iterator[str]:
    """`dumps(doc)` and a newline in pieces of about 64 KB: a large list is never one string of
    several megabytes (twice: as text and as the bytes it is encoded to), only its items are held."""
    if pretty is None:
        pretty = _stdout_is_terminal()
    if pretty:
        yield dumps(doc, pretty=True) + "\n"
        return
    held: list[str] = []
    size = 0
    for piece in _compact_pieces(doc, 0):
        held.append(piece)
        size += len(piece)
        if size >= FLUSH_CHARS:
            yield "".join(held)
            held, size = [], 0
    yield "".join(held) + "\n"


def write(stream: Any, doc: Any, *, redactor: Redactor, pretty: bool | None = None) -> None:
    """Write `pieces(doc)` to `stream`, masking secrets across the pieces."""
    write_pieces(stream, pieces(doc, pretty=pretty), redactor=redactor)


def write_pieces(stream: Any, texts: Iterable[str], *, redactor: Redactor) -> None:
    """Write text that comes in pieces, masking a secret even when it straddles two of them."""
    from mcpprobe.safety.redact import SplitWrites

    masked = SplitWrites(redactor)
    for text in texts:
        stream.write(masked.feed(text))
    stream.write(masked.end(""))


def _compact_pieces(value: Any, depth: int) -> Iterator[str]:
    """The compact encoding of `value` in pieces that join to exactly `dumps(value, pretty=False)`:
    the document's top levels are walked, long lists encoded `BATCH` items at a time."""
    if isinstance(value, dict) and depth < 3 and all(isinstance(key, str) for key in value):
        yield "{"
        for number, (key, item) in enumerate(value.items()):
            yield ("," if number else "") + dumps(key, pretty=False) + ":"
            yield from _compact_pieces(item, depth + 1)
        yield "}"
    elif isinstance(value, Items):  # kept as compact text already: written as it is, not re-encoded
        yield "["
        for number, text in enumerate(value.json_texts()):
            yield ("," if number else "") + text
        yield "]"
    elif isinstance(value, list) and len(value) > BATCH:
        yield "["
        for start in range(0, len(value), BATCH):
            yield ("," if start else "") + dumps(value[start:start + BATCH], pretty=False)[1:-1]
        yield "]"
    else:
        yield dumps(value, pretty=False)


def _stdout_is_terminal() -> bool:
    import sys

    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):  # replaced or closed stdout
        return False
