"""`check --suite-fixtures`, 2026-07-28: the conformance suite's `input-required-result-*` scenarios
(SEP-2322, multi round-trip requests), judged as the suite judges them, wherever the server lists
the suite's fixture under its name.

Each scenario calls one of the suite's fixture tools (`test_input_required_result_elicitation`, ...)
or gets its fixture prompt (`test_input_required_result_prompt`), reads the `input_required` result,
answers its input requests and retries, round by round, as the suite's `run()` does. The legitimate
input requests are answered by `call`'s own InputBroker, as the client capabilities that
`--suite-fixtures` declares allow: every `elicitation/create` declined, every
`sampling/createMessage` answered with one fixed text, every `roots/list` with the one root
`--suite-fixtures` declares (SUITE_ROOT). Where the suite sends something wrong on purpose (a
tampered `requestState`, input responses under a wrong key, extra keys, a number or null, a client
that declares only `sampling`), the same crafted params are sent through the connection's ordinary
request path. Each request to a fixture tool is a call of that tool: it is sent only once the one
rule for calling tools (mcpprobe.check.calls: listed, arguments checked, a tool not marked read-only
only with --yes or a yes on a terminal) allowed it, and nothing is sent otherwise.

Gating is mcpprobe.check.suite_gate's, as for every `suite` check: nothing without
`--suite-fixtures` (one reason), nothing for a fixture that is
not listed (one reason), and the catalogue's rows make every check `n/a` before 2026-07-28.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcpprobe.check.context import (
    CheckContext,
    Exchange,
    Verdict,
    answer_text,
    errored,
    failed,
    inert,
    passed,
    refusal,
    skipped,
    warned,
)
from mcpprobe.check.reading import broken_answer
from mcpprobe.check.suite_gate import CONTRACT, gated, listed_names, not_listed, truthy
from mcpprobe.client.era import META_CLIENT_CAPS
from mcpprobe.errors import ProbeError, Refused

ELICIT_TOOL = "test_input_required_result_elicitation"
PROMPT = "test_input_required_result_prompt"
INPUT_REQUIRED = "input_required"
SAMPLING_ONLY: dict[str, Any] = {"sampling": {}}  # the client capabilities the suite's capability-check declares
TAMPERED = "-TAMPERED"  # what the suite appends to the requestState it was given
# Input requests answered in one round at most: the suite's fixtures ask one to three; a server that asks
# for more is not answered (its check is skipped, not judged), so what is sent back stays bounded.
MAX_INPUT_REQUESTS = 16


class Stop(Exception):
    """A verdict reached before the scenario's end (a refusal of mcpprobe's, a transport failure)."""

    def __init__(self, verdict: Verdict) -> None:
        super().__init__(verdict.message)
        self.verdict = verdict


def _irr(result: Any) -> bool:
    """The suite's R(): an input-required result."""
    return isinstance(result, dict) and result.get("resultType") == INPUT_REQUIRED


def _complete(result: Any) -> bool:
    """The suite's z(): a result that is not input-required."""
    return isinstance(result, dict) and result.get("resultType") != INPUT_REQUIRED


def _requests(result: dict[str, Any]) -> dict[str, Any]:
    found = result.get("inputRequests")
    return found if isinstance(found, dict) else {}


def _method_of(request: Any) -> Any:
    return request.get("method") if isinstance(request, dict) else None


class Flow:
    """One scenario's requests: the fixture's params, each round sent and kept as evidence."""

    def __init__(self, ctx: CheckContext, method: str, name: str) -> None:
        from mcpprobe.operations.input import InputBroker
        from mcpprobe.operations.outcome import InvokeOutcome

        self.ctx, self.method, self.name = ctx, method, name
        self.base: dict[str, Any] = {"name": name, "arguments": {}} if method == "tools/call" else {"name": name}
        self.broker = InputBroker(InvokeOutcome("call", item_kind="tools" if method == "tools/call" else "prompts"),
                                  ctx.session.settings)
        self.rounds: list[dict[str, Any]] = []

    async def send(self, extra: dict[str, Any] | None = None, *,
                   capabilities: dict[str, Any] | None = None) -> Exchange:
        """One round: the fixture's params and `extra`; `capabilities` replaces the client capabilities
        this one request declares (fewer than the session's: never one it did not declare)."""
        params = {**self.base, **(extra or {})}
        if capabilities is None:
            exchange = await self.ctx.request(self.method, params)
        else:
            exchange = await self._narrowed(params, capabilities)
        self.rounds.append({"sent": sorted(k for k in params if k != "name"), "answer": answer_text(exchange),
                            **({"resultType": inert(exchange.result.get("resultType"), 40)}
                               if exchange.result is not None else {})})
        broken = broken_answer(exchange)
        if broken is not None:
            raise Stop(broken)
        return exchange

    async def _narrowed(self, params: dict[str, Any], capabilities: dict[str, Any]) -> Exchange:
        ctx = self.ctx
        await ctx.pace()
        exchange = Exchange(self.method, params)
        ctx.note(exchange)
        wire, headers = ctx.session.envelope(self.method, params)
        assert wire is not None
        wire["_meta"] = {**wire.get("_meta", {}), META_CLIENT_CAPS: capabilities}
        try:
            exchange.result = await ctx.session.conn.request(self.method, wire, timeout=ctx.session.settings.timeout,
                                                             headers=headers)
        except ProbeError as exc:
            exchange.error = exc
        return exchange

    def answers(self, result: dict[str, Any]) -> dict[str, Any]:
        """The input responses to every input request of `result`, as InputBroker answers them."""
        responses = {}
        requests = _requests(result)
        if len(requests) > MAX_INPUT_REQUESTS:
            raise Stop(skipped(f"{self.name} asked for {len(requests)} inputs in one round, more than mcpprobe "
                               f"answers ({MAX_INPUT_REQUESTS}); the retry was not sent, not judged"))
        for key, request in requests.items():
            params = request.get("params") if isinstance(request, dict) else None
            answer = self.broker.answer(str(_method_of(request)), params if isinstance(params, dict) else {},
                                        via="input_required", key=str(key))
            if answer is None:
                raise Stop(skipped(f"{self.name} asked for {inert(_method_of(request), 60)} under "
                                   f"{inert(key, 60)}; mcpprobe did not answer it ({self.broker.last_refusal}), so "
                                   "the retry was not sent, not judged"))
            responses[str(key)] = answer
        return responses

    def retry(self, result: dict[str, Any]) -> dict[str, Any]:
        """The retry's params: the answers, and the requestState echoed where there was one."""
        extra: dict[str, Any] = {"inputResponses": self.answers(result)}
        if "requestState" in result:
            extra["requestState"] = result["requestState"]
        return extra

    def verdict(self, problems: list[str], good: str, *, should: bool = False) -> Verdict:
        detail = {"fixture": self.name, "rounds": self.rounds}
        if problems:
            text = f"{self.name}: " + "; ".join(problems)
            return warned(text, **detail) if should else failed(f"{text} ({CONTRACT})", **detail)
        return passed(f"{self.name}: {good}", **detail)


def _error(exchange: Exchange) -> str | None:
    """The suite's `JSON-RPC error: ...` and `No result in response`."""
    if exchange.result is not None:
        return None
    return f"answered {answer_text(exchange)}, not a result"


async def _allowed(ctx: CheckContext, kind: str, name: str) -> Verdict | None:
    """The suite's gate (the flag, the fixture listed) and, for a tool, the one rule for calling tools:
    None when the scenario may send."""
    closed = gated(ctx)
    if closed is not None:
        return closed
    listing = await ctx.listing("tools" if kind == "tool" else "prompts")
    if name not in listed_names(listing.items, "name"):
        return not_listed(kind, name)
    if kind != "tool":
        return None
    from mcpprobe.check.calls import called

    earlier = called(ctx, name)
    if earlier is not None:  # a tool is called once per run (mcpprobe.check.calls.call_once)
        return skipped(f"{name} was called in this run with --call {inert(earlier.call.spec, 120)}; each tool is "
                       "called once per run, and this scenario's rounds are its own: not run, nothing sent")
    from mcpprobe.operations.arguments import ToolArguments
    from mcpprobe.operations.checks import checked_arguments, confirm_call
    from mcpprobe.operations.input import Unattended
    from mcpprobe.operations.outcome import InvokeOutcome

    outcome = InvokeOutcome("call", item_kind="tools")
    try:
        tool, arguments = await checked_arguments(ctx.session, outcome, listing, name, ToolArguments.parse([]))
        await confirm_call(ctx.session, outcome, tool, arguments, ctx.options.confirmer or Unattended())
    except Refused as exc:
        if exc.code == "invalid-arguments":
            return failed(f"{name} as listed does not take the arguments the suite sends (none): "
                          f"{inert(exc.message, 300)} ({CONTRACT})", tool=name)
        verdict = errored(f"{inert(name, 60)}: {refusal(exc)}")
        verdict.detail["exitCode"] = int(exc.exit_code)
        return verdict
    return None


# ----- the scenarios: each the transcription of the suite's run() -----

Scenario = Callable[[Flow], Awaitable[Verdict]]


def _round1(exchange: Exchange, judge: Callable[[dict[str, Any]], list[str]]) -> list[str]:
    error = _error(exchange)
    if error is not None:
        return [error]
    result = exchange.result or {}
    if not _irr(result):
        return ["answered a complete result, not an input-required result (resultType \"input_required\")"]
    return judge(result)


def _asks(key: str | None, method: str) -> Callable[[dict[str, Any]], list[str]]:
    """Round 1 of the basic scenarios: inputRequests, the key (or the first one) asking `method`."""
    def judge(result: dict[str, Any]) -> list[str]:
        if not truthy(result.get("inputRequests")):
            return ["the input-required result has no inputRequests"]
        requests = _requests(result)
        chosen = key if key is not None else next(iter(requests), None)
        if chosen is None:
            return ["its inputRequests map is empty"]
        if not truthy(requests.get(chosen)):
            return [f"its inputRequests has no key {inert(chosen, 60)}"]
        asked = _method_of(requests[chosen])
        return [] if asked == method else [f"inputRequests[{inert(chosen, 60)}] asks {inert(asked, 60)}, not {method}"]

    return judge


def _has_requests(result: dict[str, Any]) -> list[str]:
    return [] if truthy(result.get("inputRequests")) else ["the input-required result has no inputRequests"]


def _with_state(result: dict[str, Any]) -> list[str]:
    problems = []
    if not truthy(result.get("requestState")):
        problems.append("the input-required result has no requestState")
    elif not isinstance(result.get("requestState"), str):
        problems.append("its requestState is not a string")
    if not truthy(result.get("inputRequests")):
        problems.append("the input-required result has no inputRequests")
    return problems


def _three_kinds(result: dict[str, Any]) -> list[str]:
    if not truthy(result.get("inputRequests")):
        return ["the input-required result has no inputRequests"]
    problems = [] if truthy(result.get("requestState")) else ["the input-required result has no requestState"]
    requests = _requests(result)
    if len(requests) < 3:
        problems.append(f"{len(requests)} inputRequests, not at least 3")
    methods = {_method_of(r) for r in requests.values()}
    problems += [f"no {m} input request" for m in ("elicitation/create", "sampling/createMessage", "roots/list")
                 if m not in methods]
    return problems


def _final(exchange: Exchange, need: str | None = None) -> list[str]:
    """The last round: a complete result (with `need`, a non-empty list under that key)."""
    error = _error(exchange)
    if error is not None:
        return [f"the retry {error}"]
    result = exchange.result or {}
    if not _complete(result):
        return ["the retry with inputResponses answered another input-required result, not a complete one"]
    if need == "content" and not (isinstance(result.get("content"), list) and result["content"]):
        return ["the complete result has no content list (or an empty one)"]
    if need == "messages" and not truthy(result.get("messages")):
        return ["the complete result has no messages (a GetPromptResult)"]
    return []


def _two_rounds(judge: Callable[[dict[str, Any]], list[str]], need: str | None, good: str) -> Scenario:
    async def run(flow: Flow) -> Verdict:
        first = await flow.send()
        problems = _round1(first, judge)
        if problems:
            return flow.verdict(["round 1: " + p for p in problems], good)
        last = await flow.send(flow.retry(first.result or {}))
        return flow.verdict(["round 2: " + p for p in _final(last, need)], good)

    return run


NOT_FIRST = "not an input-required result with inputRequests and requestState"
NOT_SECOND = "not another input-required result with inputRequests and a requestState different from the first"


async def _multi_round(flow: Flow) -> Verdict:
    good = "two input-required results, the second with a new requestState, then a complete result"
    first = await flow.send()
    one = first.result or {}
    if first.result is None or not _irr(one) or not truthy(one.get("inputRequests")) \
            or not truthy(one.get("requestState")):
        return flow.verdict([f"round 1: {_error(first) or NOT_FIRST}"], good)
    second = await flow.send(flow.retry(one))
    two = second.result or {}
    if second.result is None or not _irr(two) or not truthy(two.get("inputRequests")) \
            or not truthy(two.get("requestState")) or two.get("requestState") == one.get("requestState"):
        return flow.verdict([f"round 2: {_error(second) or NOT_SECOND}"], good)
    third = await flow.send(flow.retry(two))
    return flow.verdict(["round 3: " + p for p in _final(third)], good)


async def _result_type(flow: Flow) -> Verdict:
    exchange = await flow.send()
    error = _error(exchange)
    result = exchange.result or {}
    if error is not None:
        problems = [error]
    elif "resultType" not in result:
        problems = ["the result has no resultType (\"Servers MUST include resultType\")"]
    elif result["resultType"] != INPUT_REQUIRED:
        problems = [f"resultType is {inert(result['resultType'], 40)}, not \"input_required\""]
    else:
        problems = []
    return flow.verdict(problems, "its first answer says resultType \"input_required\"")


async def _missing_response(flow: Flow) -> Verdict:
    exchange = await flow.send({"inputResponses": {"wrong_key": {"action": "accept", "content": {"data": "wrong"}}}})
    if exchange.result is None:
        problems = [f"retried with the input response under a wrong key, it answered {answer_text(exchange)}, not a "
                    "new input-required result (\"the server SHOULD respond with a new InputRequiredResult requesting "
                    "the missing information again, rather than returning an error\")"]
    elif not _irr(exchange.result):
        problems = ["retried with the input response under a wrong key, it answered a complete result, not a new "
                    "input-required result asking again"]
    else:
        problems = []
    return flow.verdict(problems, "asked again for the input that was missing", should=True)


async def _extra_params(flow: Flow) -> Verdict:
    accept = {"action": "accept", "content": {"name": "Alice"}}
    exchange = await flow.send({"inputResponses": {
        "user_name": accept, "unknown_extra_key": {"action": "accept", "content": {"foo": "bar"}},
        "another_unexpected": {"action": "accept", "content": {"baz": 123}}}})
    error = _error(exchange)
    if error is not None:
        problems = [f"with two unrecognised input responses beside user_name, it {error} (\"the server SHOULD "
                    "ignore any information it does not recognize or need\")"]
    elif not _complete(exchange.result):
        problems = ["with two unrecognised input responses beside user_name, it did not complete"]
    else:
        problems = []
    return flow.verdict(problems, "completed, the unrecognised input responses ignored", should=True)


async def _validate(flow: Flow) -> Verdict:
    problems = []
    for value, what in ((12345, "inputResponses.user_name a number"), (None, "inputResponses null")):
        exchange = await flow.send({"inputResponses": {"user_name": value} if value is not None else None})
        if exchange.result is not None and _complete(exchange.result):
            problems.append(f"with {what} it answered a complete result (\"Servers SHOULD validate that the data "
                            "provided by the client is a valid InputResponses object\")")
    return flow.verdict(problems, "refused (or asked again for) input responses that are no InputResponses",
                        should=True)


async def _tampered(flow: Flow) -> Verdict:
    good = "refused a tampered requestState with a JSON-RPC error"
    first = await flow.send()
    result = first.result or {}
    if first.result is None or not _irr(result):
        return flow.verdict(["could not get a first input-required result with a requestState"], good)
    if not truthy(result.get("requestState")):
        return flow.verdict(["its input-required result has no requestState"], good)
    retry = flow.retry(result)
    retry["requestState"] = f"{result['requestState']}{TAMPERED}"
    second = await flow.send(retry)
    if second.result is None:
        return flow.verdict([], good)
    return flow.verdict([f"retried with the requestState changed, it answered "
                         f"{'a complete result' if _complete(second.result) else 'a result'}, not a JSON-RPC error "
                         "(\"servers MUST ... reject state that fails verification\")"], good)


async def _capabilities(flow: Flow) -> Verdict:
    exchange = await flow.send(capabilities=SAMPLING_ONLY)
    error = _error(exchange)
    result = exchange.result or {}
    if error is not None:
        problems = [error]
    elif _irr(result):
        requests = _requests(result)
        problems = [] if requests else ["its input-required result has no inputRequests: the capability rule was "
                                        "not exercised"]
        problems += [f"inputRequests[{inert(key, 60)}] is elicitation/create, which the request's clientCapabilities "
                     "(sampling only) did not declare (\"Servers MUST NOT send an inputRequests that the client has "
                     "not declared support for\")"
                     for key, r in requests.items() if _method_of(r) == "elicitation/create"]
    else:
        problems = ["answered a complete result, not an input-required result asking for sampling only"]
    return flow.verdict(problems, "asked a client that declared only sampling for nothing else")


async def _unsupported(ctx: CheckContext) -> Verdict:
    closed = gated(ctx)
    if closed is not None:
        return closed
    from mcpprobe.client.capabilities import declared

    problems, sent = [], []
    for method, capability in (("tools/list", "tools"), ("prompts/list", "prompts")):
        if not declared(ctx.capabilities, capability):
            continue
        exchange = await ctx.request(method, {})
        sent.append(method)
        broken = broken_answer(exchange)
        if broken is not None:
            return broken
        if _irr(exchange.result):
            problems.append(f"{method} answered an input-required result (\"Servers MUST NOT send "
                            "InputRequiredResult responses on any other client requests\")")
    if problems:
        return failed("; ".join(problems), sent=sent)
    return passed(f"{' and '.join(sent)} answered without an input-required result", sent=sent)


# check id -> (the fixture's kind, its name, the scenario)
SCENARIOS: dict[str, tuple[str, str, Scenario]] = {
    "suite.input-required-result-basic-elicitation": (
        "tool", ELICIT_TOOL, _two_rounds(_asks("user_name", "elicitation/create"), "content",
                                         "asked elicitation/create under user_name, then completed with content")),
    "suite.input-required-result-basic-sampling": (
        "tool", "test_input_required_result_sampling",
        _two_rounds(_asks(None, "sampling/createMessage"), None, "asked sampling/createMessage, then completed")),
    "suite.input-required-result-basic-list-roots": (
        "tool", "test_input_required_result_list_roots",
        _two_rounds(_asks(None, "roots/list"), None, "asked roots/list, then completed")),
    "suite.input-required-result-request-state": (
        "tool", "test_input_required_result_request_state",
        _two_rounds(_with_state, None, "gave a requestState, then completed when it came back")),
    "suite.input-required-result-multiple-input-requests": (
        "tool", "test_input_required_result_multiple_inputs",
        _two_rounds(_three_kinds, None, "asked elicitation, sampling and roots at once, then completed")),
    "suite.input-required-result-multi-round": ("tool", "test_input_required_result_multi_round", _multi_round),
    "suite.input-required-result-missing-input-response": ("tool", ELICIT_TOOL, _missing_response),
    "suite.input-required-result-non-tool-request": (
        "prompt", PROMPT, _two_rounds(_has_requests, "messages",
                                      "prompts/get asked for input, then expanded to messages")),
    "suite.input-required-result-result-type": ("tool", ELICIT_TOOL, _result_type),
    "suite.input-required-result-tampered-state": ("tool", "test_input_required_result_tampered_state", _tampered),
    "suite.input-required-result-capability-check": ("tool", "test_input_required_result_capabilities",
                                                     _capabilities),
    "suite.input-required-result-ignore-extra-params": ("tool", ELICIT_TOOL, _extra_params),
    "suite.input-required-result-validate-input": ("tool", ELICIT_TOOL, _validate),
}


def _check(check_id: str) -> Callable[[CheckContext], Awaitable[Verdict]]:
    kind, name, scenario = SCENARIOS[check_id]
    method = "tools/call" if kind == "tool" else "prompts/get"

    async def run(ctx: CheckContext) -> Verdict:
        refused = await _allowed(ctx, kind, name)
        if refused is not None:
            return refused
        try:
            return await scenario(Flow(ctx, method, name))
        except Stop as stop:
            return stop.verdict

    return run


IMPLEMENTS: dict[str, Callable[[CheckContext], Awaitable[Verdict]]] = {
    **{check_id: _check(check_id) for check_id in SCENARIOS},
    "suite.input-required-result-unsupported-methods": _unsupported,
}
