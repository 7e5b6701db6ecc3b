"""The server's requests for input during a call, read or get-prompt, and the progress it reports.

Elicitation, sampling and roots requests are answered or refused by `InputBroker`, in both eras:
as server-initiated requests (before 2026-07-28) and as `input_required` results that the request
is retried with (`request_with_input`). Progress notifications of a request are kept on the
outcome and handed to `Hooks.on_progress`. Nothing here prints: the hooks (`Hooks`, a protocol)
are the caller's.
"""

from __future__ import annotations

import itertools
import json
import time
from dataclasses import replace
from typing import Any, Protocol

import anyio

from mcpprobe.client.session import Session
from mcpprobe.client.settings import Settings
from mcpprobe.errors import ProtocolFailure, RpcError
from mcpprobe.findings import Finding
from mcpprobe.operations.outcome import InvokeOutcome
from mcpprobe.testhooks import crash_point

ELICIT_MODES = ("decline", "defaults")
# The one answer to sampling/createMessage, given only where `sample` is "fixed" (check --suite-fixtures,
# which calls the conformance suite's fixture tools): mcpprobe has no model, and says so.
FIXED_SAMPLING = {"role": "assistant", "content": {"type": "text", "text": "A fixed answer from mcpprobe, which has "
                                                   "no model to ask."},
                  "model": "mcpprobe-fixed", "stopReason": "endTurn"}
MAX_INPUT_ROUNDS = 10
# Requests for input recorded per run (entries and findings); a server that keeps asking (during one long
# call, say) is still answered, but past this only counted: memory stays bounded whatever it sends.
MAX_KEPT_REQUESTS = 100
# What InputBroker.observed keeps of the server's requests for a caller that judges them: the first
# OBSERVED_KEPT requests, each as its method and, of an elicitation/create, the requestedSchema when its
# JSON is at most OBSERVED_SCHEMA_CHARS long (else {"dropped": its length}): bounded whatever comes.
OBSERVED_KEPT = 4
OBSERVED_SCHEMA_CHARS = 65_536
_tokens = itertools.count(1)


class Confirmer(Protocol):
    """Who confirms a tools/call: shown the call before it is sent, and asked when a person must decide."""

    @property
    def yes(self) -> bool:
        """--yes: a tool not marked read-only is called without asking."""
        ...

    @property
    def interactive(self) -> bool:
        """Whether `ask` may be called: a person at a terminal can answer."""
        ...

    def on_preview(self, tool: dict[str, Any], arguments: dict[str, Any], how: str, server: dict[str, Any]) -> None:
        """Before a tools/call is confirmed and sent: the tool from the list, its arguments, how the
        call is confirmed (`checks.confirmation_needed`), `server` the server's serverInfo (or {})."""
        ...

    def ask(self, tool: dict[str, Any], arguments: dict[str, Any]) -> bool:
        """Whether to call the tool. Only when `interactive`, on a thread of its own (so that
        Ctrl-C is never stuck in it); an exception is a no."""
        ...


class Hooks(Confirmer, Protocol):
    """How the caller takes part while an invocation's session is open (after grpcurl's
    InvocationEventHandler): told what happens as it happens, asked when a person must decide.
    The operations never print; `Unattended` is the caller that shows nothing and asks nothing."""

    def on_start(self, outcome: InvokeOutcome) -> None:
        """The outcome as soon as it exists: if the run is interrupted, what was sent is still shown."""
        ...

    def on_progress(self, event: dict[str, Any]) -> None:
        """A progress notification of the request: {"ms", "progress", "total", "message"}."""
        ...

    def on_task_status(self, entry: dict[str, Any]) -> None:
        """A task's status changed ({"ms", "status", "statusMessage", "via"}): `call` of a task."""
        ...


class Unattended:
    """The hooks of a run nobody watches (the exporter, check, load): nothing shown, nothing asked; a tool
    not marked read-only is called only with `yes`. Subclassed by callers that watch only part."""

    interactive = False

    def __init__(self, *, yes: bool = False) -> None:
        self.yes = yes

    def on_start(self, outcome: InvokeOutcome) -> None:
        pass

    def on_preview(self, tool: dict[str, Any], arguments: dict[str, Any], how: str, server: dict[str, Any]) -> None:
        pass

    def ask(self, tool: dict[str, Any], arguments: dict[str, Any]) -> bool:
        return False

    def on_progress(self, event: dict[str, Any]) -> None:
        pass

    def on_task_status(self, entry: dict[str, Any]) -> None:
        pass


def progress_token() -> str:
    """A progress token no other request of this process has used."""
    return f"mcpprobe-{next(_tokens)}"


# ----- client capabilities: declare elicitation only when asked -----


def with_elicit(settings: Settings, elicit: str | None) -> Settings:
    if elicit is None:
        return settings
    if elicit not in ELICIT_MODES:
        raise ValueError(f"elicit must be one of {ELICIT_MODES}")
    return replace(settings, elicit=elicit)


# ----- answering the server's requests for input (both eras) -----


def elicit_defaults(params: dict[str, Any]) -> dict[str, Any]:
    """The answer `--elicit defaults` gives: accept, with each property's schema default."""
    schema = params.get("requestedSchema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    content = {}
    for name, prop in (properties or {}).items():
        if isinstance(prop, dict) and "default" in prop:
            content[name] = prop["default"]
    return {"action": "accept", "content": content}


def _observed(params: dict[str, Any]) -> dict[str, Any]:
    """What `InputBroker.observed` keeps of a request's params (OBSERVED_SCHEMA_CHARS)."""
    schema = params.get("requestedSchema")
    if schema is None:
        return {}
    size = len(json.dumps(schema, default=str))
    return {"requestedSchema": schema} if size <= OBSERVED_SCHEMA_CHARS else {"dropped": size}


class InputBroker:
    """Answers elicitation, sampling and roots requests, or refuses them, and keeps a record."""

    def __init__(self, outcome: InvokeOutcome, settings: Settings,
                 observed: list[tuple[str, dict[str, Any]]] | None = None) -> None:
        self.outcome = outcome
        self.settings = settings
        self.elicit = settings.elicit
        # Each request's method and what is kept of it (OBSERVED_KEPT), for a caller that judges it
        # (check --suite-fixtures: the schema of an elicitation/create); None: nothing kept.
        self.observed = observed
        self.not_kept = 0  # requests answered or refused past MAX_KEPT_REQUESTS: counted, not recorded
        self.last_refusal = ""
        self._past: int | None = None  # where that finding is in outcome.findings

    def answer(self, method: str, params: dict[str, Any], *, via: str, key: str | None = None) -> dict[str, Any] | None:
        """The response for one request, or None when mcpprobe refuses it (recorded as a finding)."""
        if self.observed is not None and len(self.observed) < OBSERVED_KEPT:
            self.observed.append((method, _observed(params)))
        entry: dict[str, Any] = {"via": via, "method": method}
        if key is not None:
            entry["key"] = key
        response: dict[str, Any] | None = None
        reason = ""
        if method == "elicitation/create":
            mode = params.get("mode", "form")
            entry["message"] = params.get("message")
            if self.elicit is None:
                reason = "mcpprobe did not declare the 'elicitation' capability (use --elicit decline|defaults)"
            elif mode != "form":
                reason = f"mcpprobe answers only form-mode elicitation, not {mode!r}"
            elif self.elicit == "decline":
                response = {"action": "decline"}
            else:
                response = elicit_defaults(params)
                required = (params.get("requestedSchema") or {}).get("required") or []
                missing = [r for r in required if r not in response["content"]]
                if missing:
                    entry["missingRequired"] = missing
        elif method == "roots/list" and self.settings.roots:
            response = {"roots": [{"uri": uri} for uri in self.settings.roots]}
        elif method == "roots/list":
            reason = "mcpprobe did not declare the 'roots' capability (use --root)"
        elif method == "sampling/createMessage" and self.settings.sample == "fixed":
            response = dict(FIXED_SAMPLING)
        elif method == "sampling/createMessage":
            reason = "mcpprobe never declares 'sampling' (check --suite-fixtures aside): it has no model to ask"
        else:
            reason = f"mcpprobe does not handle {method}"
        if len(self.outcome.input_rounds) >= MAX_KEPT_REQUESTS:
            self.not_kept += 1
            self._say_not_kept()
            self.last_refusal = reason
            return response
        if response is not None:
            entry["answer"] = response
            self.outcome.input_rounds.append(entry)
            self.outcome.findings.append(Finding(
                "input-required", f"the server asked for {method} ({via}); mcpprobe answered "
                + {"roots/list": "with its roots", "sampling/createMessage": "with its fixed text"}.get(
                    method, str(response.get("action"))),
                kind=self.outcome.item_kind or "server", detail=entry))
            return response
        entry["refused"] = reason
        self.last_refusal = reason
        self.outcome.input_rounds.append(entry)
        self.outcome.findings.append(Finding(
            "input-required-refused", f"the server asked for {method} ({via}); refused: {reason}",
            kind=self.outcome.item_kind or "server", detail=entry))
        return None

    def _say_not_kept(self) -> None:
        """One finding for the requests past the bound, replaced as their count grows."""
        finding = Finding("input-required", f"the server asked for input {self.not_kept} more time(s) past the first "
                          f"{MAX_KEPT_REQUESTS}; each was answered (or refused) as the recorded ones were, but not "
                          "recorded", kind=self.outcome.item_kind or "server", detail={"notKept": self.not_kept})
        if self._past is None:
            self._past = len(self.outcome.findings)
            self.outcome.findings.append(finding)
        else:
            self.outcome.findings[self._past] = finding

    def install(self, conn: Any) -> None:
        """Legacy era: server-initiated requests. Refusals are JSON-RPC errors, as the spec asks."""

        def handler(method: str) -> Any:
            async def handle(params: dict[str, Any]) -> dict[str, Any]:
                response = self.answer(method, params, via="server request")
                if response is None:
                    raise RpcError(-32601, f"{method} refused: {self.last_refusal}")
                return response

            return handle

        for method in ("elicitation/create", "sampling/createMessage", "roots/list"):
            if method == "roots/list" and self.settings.roots and method in conn.request_handlers:
                continue
            conn.request_handlers[method] = handler(method)


async def request_with_input(session: Session, outcome: InvokeOutcome, broker: InputBroker, method: str,
                              params: dict[str, Any], *, hooks: Hooks) -> dict[str, Any]:
    """Send `method`; follow 2026-07-28 input_required results (answer, then retry) to the end."""
    rounds = 0
    delay = 0.05
    current = dict(params)
    while True:
        token = progress_token()
        current = {**current, "_meta": {**(current.get("_meta") or {}), "progressToken": token}}
        outcome.request = {"method": method, "params": current}
        follow_progress(session, outcome, token, hooks)
        outcome.sent = True
        result = await session.request(method, current, reset_on_progress=True)
        if result.get("resultType") != "input_required":
            return result
        rounds += 1
        requests = result.get("inputRequests")
        state = result.get("requestState")
        if rounds > MAX_INPUT_ROUNDS:
            raise ProtocolFailure(f"{method}: the server still asked for input after {MAX_INPUT_ROUNDS} rounds")
        if not isinstance(requests, dict) and not isinstance(state, str):
            raise ProtocolFailure(f"{method}: an input_required result with neither inputRequests nor requestState",
                                  detail={"result": result})
        responses: dict[str, Any] = {}
        refused = False
        for key, request in (requests or {}).items():
            if not isinstance(request, dict) or not isinstance(request.get("method"), str):
                raise ProtocolFailure(f"{method}: inputRequests[{key!r}] is not a request object")
            answer = broker.answer(request["method"], request.get("params") or {}, via="input_required", key=key)
            if answer is None:
                refused = True
            else:
                responses[key] = answer
        if refused:
            # Nothing to retry with: the request ends here, and the findings say why.
            return result
        if not requests:
            await anyio.sleep(delay)
            delay = min(delay * 2, 0.25)
        retry = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState")}
        if responses:
            retry["inputResponses"] = responses
        if isinstance(state, str):
            retry["requestState"] = state
        current = retry


# Progress held to a budget: the latest PROGRESS_KEPT notifications are kept for the outcome (older
# ones dropped), each message cut at PROGRESS_MESSAGE characters; a server that sends a million
# notifications of a megabyte each costs what PROGRESS_KEPT short ones cost.
PROGRESS_KEPT = 100
PROGRESS_MESSAGE = 1000
# A progress or total past this (or not finite) is no amount anyone draws: the notification is dropped.
PROGRESS_RANGE = 1e300


def follow_progress(session: Session, outcome: InvokeOutcome, token: str, hooks: Hooks) -> None:
    from mcpprobe.safety.numbers import in_range, shown

    started = time.perf_counter()

    def on_notification(method: str, params: dict[str, Any]) -> None:
        if method != "notifications/progress" or params.get("progressToken") != token:
            return
        crash_point("progress")
        progress, total = params.get("progress"), params.get("total")
        bad = next((value for value in (progress, total) if isinstance(value, int | float) and not isinstance(
            value, bool) and in_range(value, -PROGRESS_RANGE, PROGRESS_RANGE) is None), None)
        if bad is not None:
            session.conn.out_of_range(
                f"notifications/progress: a progress or total ({shown(bad)}) that is not a finite number within "
                f"±{PROGRESS_RANGE:g}; the notification is dropped", shown(bad))
            return
        session.conn.extend_deadline_for_progress(token, session.settings.timeout)
        message = params.get("message")
        if isinstance(message, str) and len(message) > PROGRESS_MESSAGE:
            message = message[:PROGRESS_MESSAGE] + "…"
        event = {"ms": round((time.perf_counter() - started) * 1000, 1), "progress": progress,
                 "total": total, "message": message}
        if len(outcome.progress) >= PROGRESS_KEPT:
            del outcome.progress[0]
        outcome.progress.append(event)
        hooks.on_progress(event)

    session.conn.notification_handlers.append(on_notification)
