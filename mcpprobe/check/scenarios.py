"""The official conformance suite's server scenarios, each mapped to the checks of the catalogue
that judge the same requirement, as data.

The suite (`@modelcontextprotocol/conformance`, `conformance server --url URL`) is the reference
many users run; `conformance list --server` names its scenarios and the spec versions each is
scored at. `SCENARIOS` holds one row per scenario with those versions per suite release, how much
of it `mcpprobe check` judges, and with which check ids. docs/commands/check.md's "Coverage of the
conformance suite" table is written from it (`python -m mcpprobe.check.scenarios`), a test keeps the
two equal, and an interop test keeps the rows equal to what each installed suite lists, so a
scenario a later suite adds is a failing test, not silence.

Standard library only, like the catalogue.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType

# The suite releases the table is kept equal to (the tests install these): the latest release and
# the newest pre-release.
SUITE_VERSIONS = ("0.1.16", "0.2.0-alpha.12")


class Coverage(StrEnum):
    COVERED = "covered"  # the checks judge what the scenario judges
    PARTLY = "partly"  # the checks judge some of it; the note says what is missing
    FIXTURE = "fixture-only"  # the scenario needs the suite's own fixture tools, resources or prompts
    EXTENSION = "extension"  # an extension's scenario (tasks, skills): the note names the checks, if any
    NOT_COVERED = "not covered"  # nothing judges it yet; the note says what is missing


@dataclass(frozen=True)
class Scenario:
    name: str
    versions: Mapping[str, tuple[str, ...]]  # suite release -> the spec versions it scores (as `list` prints)
    coverage: Coverage
    checks: tuple[str, ...]  # catalogue ids that judge (part of) the same requirement
    note: str


def _v(**by_suite: tuple[str, ...]) -> Mapping[str, tuple[str, ...]]:
    names = {"v0116": "0.1.16", "v020a12": "0.2.0-alpha.12"}
    return MappingProxyType({names[key]: value for key, value in by_suite.items()})


_LEGACY = ("2025-06-18", "2025-11-25")
_ALL = (*_LEGACY, "2026-07-28")
_NOV = ("2025-11-25",)
_NOV_DRAFT = ("2025-11-25", "2026-07-28")
_DRAFT = ("2026-07-28",)
_EXT = ("extension",)
_BOTH_LEGACY = _v(v0116=_LEGACY, v020a12=_LEGACY)
_BOTH_ALL = _v(v0116=_LEGACY, v020a12=_ALL)

_SUITE_TOOL = ("with `--suite-fixtures` (and `--yes`: the suite's fixture tools are not marked read-only), where "
               "`tools/list` lists `{tool}`, `{check}` calls it and judges what the suite judges: {what}; without the "
               "flag, or where the tool is not listed: skipped, nothing sent")
_SUITE_READ = ("with `--suite-fixtures`, where {listing} lists `{name}`, `{check}` {send} and judges what the suite "
               "judges: {what}; without the flag, or where it is not listed: skipped, nothing sent")


def _suite_tool(name: str, versions: Mapping[str, tuple[str, ...]], tool: str, what: str) -> Scenario:
    """A fixture tool's scenario, judged by `suite.<name>` (mcpprobe.check.suite) with --suite-fixtures."""
    return Scenario(name, versions, Coverage.COVERED, (f"suite.{name}",),
                    _SUITE_TOOL.format(tool=tool, check=f"suite.{name}", what=what))


def _suite_read(name: str, versions: Mapping[str, tuple[str, ...]], listing: str, item: str, send: str,
                what: str) -> Scenario:
    """A fixture resource's, template's, prompt's or listed tool's scenario, judged by `suite.<name>`."""
    return Scenario(name, versions, Coverage.COVERED, (f"suite.{name}",),
                    _SUITE_READ.format(listing=listing, name=item, check=f"suite.{name}", send=send, what=what))


def _mrtr(name: str, tool: str, what: str) -> Scenario:
    """An input-required-result scenario (SEP-2322), 2026-07-28 only: `suite.<name>` (mcpprobe.check.suite_mrtr)."""
    return Scenario(name, _v(v020a12=_DRAFT), Coverage.COVERED, (f"suite.{name}",),
                    _SUITE_TOOL.format(tool=tool, check=f"suite.{name}", what=what))
_SKILLS = "the skills extension (SEP-2640): {what}. No check of the catalogue judges skills yet"

SCENARIOS: tuple[Scenario, ...] = (
    Scenario("server-initialize", _BOTH_LEGACY, Coverage.COVERED, (),
             "the handshake every check runs on, not a check of its own: an `initialize` the server does not answer "
             "well is the run's error (exit 3 to 6), and so is a session id that is not visible ASCII (0x21 to "
             "0x7E, a MUST from 2025-03-26), which could not be sent back"),
    Scenario("server-session-lifecycle", _v(v020a12=("2025-03-26", *_LEGACY)), Coverage.COVERED,
             ("http.notification", "http.session-delete", "http.unknown-session"),
             "`notifications/initialized` accepted, DELETE answered (405 allowed), then 404 for the ended session"),
    Scenario("server-stateless", _v(v020a12=_DRAFT), Coverage.PARTLY,
             ("lifecycle.unknown-method", "lifecycle.result-type", "http.protocol-version",
              "http.method-header", "http.meta-required", "lifecycle.server-info", "tasks.ext-undeclared-client"),
             "judged: 404 and -32601 for an unknown method, `resultType`, 400 and -32022 for an unsupported version, "
             "400 and -32020 when `Mcp-Method` contradicts the body, 400 and -32602 for a request without "
             "`clientCapabilities` in `_meta` (over HTTP; not yet over stdio), `serverInfo` in every result's `_meta` "
             "(a SHOULD), -32021 for the tasks extension "
             "undeclared. Not judged: 404 for the methods 2026-07-28 removed (`ping`, `initialize`: a server of both "
             "eras serves them to its legacy clients), "
             "methods served but not declared, the `subscriptions/listen` acknowledgement, its tags and filter"),
    Scenario("logging-set-level", _BOTH_LEGACY, Coverage.COVERED, ("logging.set-level",),
             "`logging/setLevel` where `logging` is declared (the suite asks it of every server)"),
    Scenario("ping", _BOTH_LEGACY, Coverage.COVERED, ("lifecycle.ping",), "an empty result to `ping`"),
    Scenario("completion-complete", _BOTH_ALL, Coverage.COVERED, ("completion.complete", "suite.completion-complete"),
             "the suite completes an argument of its fixture prompt `test_prompt_with_arguments`; "
             "`completion.complete` asks for the first argument of the server's own first prompt or template, and "
             "with `--suite-fixtures`, where `completions` is declared and `prompts/list` lists the fixture prompt, "
             "`suite.completion-complete` asks what the suite asks (`arg1`) and judges what it judges (a "
             "`completion.values` list); the suite asks every server, mcpprobe only one that declared `completions`"),
    Scenario("tools-list", _BOTH_ALL, Coverage.COVERED,
             ("listing.complete", "tools.input-schema", "tools.name-rules"),
             "every tool listed, each `inputSchema` an object schema, names by the naming rules"),
    _suite_tool("tools-call-simple-text", _BOTH_ALL, "test_simple_text",
                "a non-empty content list with a text block that has text"),
    _suite_tool("tools-call-image", _BOTH_ALL, "test_image_content",
                "an image block with data and a mimeType"),
    _suite_tool("tools-call-audio", _BOTH_ALL, "test_audio_content",
                "an audio block with data and the mimeType audio/wav"),
    _suite_tool("tools-call-embedded-resource", _BOTH_ALL, "test_embedded_resource",
                "a resource block whose resource has a uri, a mimeType and a text or blob"),
    _suite_tool("tools-call-mixed-content", _BOTH_ALL, "test_multiple_content_types",
                "two blocks or more, among them text, image and resource"),
    _suite_tool("tools-call-with-logging", _BOTH_LEGACY, "test_tool_with_logging",
                "`logging/setLevel` debug first (where `logging` is declared), then 3 `notifications/message` or more "
                "during the call"),
    _suite_tool("tools-call-error", _BOTH_ALL, "test_error_handling",
                "`isError: true` with a first content block that has text"),
    _suite_tool("tools-call-with-progress", _BOTH_ALL, "test_tool_with_progress",
                "3 `notifications/progress` or more for the call's token. Each must be greater than the one before (the"
                " specification's MUST); the suite accepts equal values, so a server that repeats one passes the suite "
                "and fails the check"),
    _suite_tool("tools-call-sampling", _BOTH_LEGACY, "test_sampling",
                "a `sampling/createMessage` during the call (declared only with the flag, answered with one fixed text)"
                " and content in the result"),
    _suite_tool("tools-call-elicitation", _BOTH_LEGACY, "test_elicitation",
                "an `elicitation/create` during the call (declared only with the flag, declined) and content in the "
                "result"),
    _suite_read("json-schema-2020-12", _v(v0116=_NOV, v020a12=_NOV_DRAFT), "`tools/list`",
                "json_schema_2020_12_tool", "reads its listed `inputSchema` (no call)",
                "`$schema` 2020-12, `$defs.address` and `additionalProperties: false`; in 2026-07-28 also "
                "`allOf`/`anyOf`, `if`/`then`/`else` and `$anchor` (the suite skips those before)"),
    _suite_tool("elicitation-sep1034-defaults", _v(v0116=_NOV, v020a12=_NOV), "test_elicitation_sep1034_defaults",
                "the five properties of its `elicitation/create` schema, each of its type with the suite's default"),
    Scenario("server-sse-polling", _v(v0116=_NOV, v020a12=_NOV), Coverage.PARTLY,
             ("http.sse-priming", "http.sse-retry", "http.sse-resume"),
             "SEP-1699 polling. Judged on the event stream answering a `ping` (n/a where the server answers JSON, "
             "which it may): the priming event, an id and empty data first (a SHOULD, as the suite scores it); a "
             "GET with the `Last-Event-ID` of an event the server sent, answered by resuming that stream or with "
             "405, never with another stream's messages (a MUST); and where the server closes the `ping`'s stream "
             "before its response, the `retry` field and the response brought by resuming (SHOULDs). "
             "Fixture-only: the same for a server that closes early only in a long call, which the suite provokes "
             "with its fixture tool `test_reconnection` (a server that never closes early is not wrong)"),
    Scenario("server-sse-multiple-streams", _v(v0116=_NOV, v020a12=_NOV_DRAFT), Coverage.COVERED,
             ("http.concurrent-requests",),
             "three POST requests in flight at once, each answered with JSON or an event stream of its own (the "
             "suite sends `tools/list`; the check `ping`, in 2026-07-28 `server/discover`, which every server "
             "answers), each answer carrying its own request's id, none lost, crossed or broadcast"),
    _suite_tool("elicitation-sep1330-enums", _v(v0116=_NOV, v020a12=_NOV), "test_elicitation_sep1330_enums",
                "the five enum forms of its `elicitation/create` schema (untitled and titled, single and multi, and the"
                " legacy enumNames)"),
    Scenario("resources-list", _BOTH_ALL, Coverage.COVERED, ("listing.complete",),
             "every resource listed, each valid under the revision's schema"),
    _suite_read("resources-read-text", _BOTH_ALL, "`resources/list`", "test://static-text", "reads it",
                "a first content with a uri, a mimeType and a non-empty text"),
    _suite_read("resources-read-binary", _BOTH_ALL, "`resources/list`", "test://static-binary", "reads it",
                "a first content with a uri, a mimeType and a non-empty blob"),
    _suite_read("resources-templates-read", _BOTH_ALL, "`resources/templates/list`",
                "test://template/{id}/data", "reads `test://template/123/data`",
                "a first content with a uri and a text or blob, the text showing 123"),
    Scenario("resources-subscribe", _BOTH_LEGACY, Coverage.COVERED, ("resources.subscribe",),
             "the suite subscribes to its fixture `test://watched-resource`, the check to the first listed resource; "
             "both judge that `resources/subscribe` is answered where `resources.subscribe` is declared"),
    Scenario("resources-unsubscribe", _BOTH_LEGACY, Coverage.COVERED, ("resources.subscribe",),
             "`resources/unsubscribe` answered after a subscription"),
    Scenario("sep-2164-resource-not-found", _v(v020a12=_DRAFT), Coverage.PARTLY, ("resources.unknown-uri",),
             "-32602 for an unknown URI and no empty `contents` are judged (and only where `resources` is declared: "
             "the suite asks every server). The error's `data.uri`, which the suite scores as a SHOULD of the SEP, "
             "is not judged: the 2026-07-28 text shows it only in an example, with no MUST or SHOULD"),
    Scenario("sep-2640-skills-directory", _v(v020a12=_EXT), Coverage.EXTENSION, (),
             _SKILLS.format(what="the skills directory")),
    Scenario("sep-2640-skills-enumeration", _v(v020a12=_EXT), Coverage.EXTENSION, (),
             _SKILLS.format(what="`skills/list`")),
    Scenario("sep-2640-skills-manifest", _v(v020a12=_EXT), Coverage.EXTENSION, (),
             _SKILLS.format(what="each skill's manifest, its digests and sizes")),
    Scenario("prompts-list", _BOTH_ALL, Coverage.COVERED, ("listing.complete",),
             "every prompt listed, each valid under the revision's schema"),
    _suite_read("prompts-get-simple", _BOTH_ALL, "`prompts/list`", "test_simple_prompt", "gets it",
                "a non-empty messages list, each with a role and content"),
    _suite_read("prompts-get-with-args", _BOTH_ALL, "`prompts/list`",
                "test_prompt_with_arguments", "gets it with `arg1` and `arg2`",
                "both values in the messages"),
    _suite_read("prompts-get-embedded-resource", _BOTH_ALL, "`prompts/list`",
                "test_prompt_with_embedded_resource", "gets it with a `resourceUri`",
                "a message with a resource block"),
    _suite_read("prompts-get-with-image", _BOTH_ALL, "`prompts/list`", "test_prompt_with_image", "gets it",
                "a message with an image block with data and a mimeType"),
    Scenario("dns-rebinding-protection", _v(v0116=_NOV, v020a12=_NOV_DRAFT), Coverage.PARTLY, ("http.origin",),
             "a foreign `Origin` refused (with `--unsafe`). The suite sends a foreign `Host` with it and passes a "
             "server that checks either; the specification's words name `Origin` only (2025-11-25 and 2026-07-28: "
             "\"Servers **MUST** validate the `Origin` header on all incoming connections\"), so a `Host` check "
             "would have no MUST or SHOULD behind it and none is made: a server that checks `Host` alone passes the "
             "suite and fails `http.origin`"),
    Scenario("caching", _v(v020a12=_DRAFT), Coverage.COVERED, ("listing.cache-hints",),
             "`ttlMs` (at least 0) and `cacheScope` (`public` or `private`) on the list and read results (and "
             "`server/discover`), for the kinds the server declared (the suite asks every kind)"),
    Scenario("http-header-validation", _v(v020a12=_DRAFT), Coverage.PARTLY,
             ("http.method-header", "http.name-header", "http.method-header-missing", "http.header-case"),
             "`Mcp-Method` and `Mcp-Name` that contradict the body, and a missing `Mcp-Method`, get 400 and -32020; "
             "the header's name is matched in any case and its value exactly. Not judged: a missing `Mcp-Name` on "
             "`tools/call` (no tool is called unnamed), and values with surrounding whitespace (the HTTP client "
             "refuses to send them; RFC 9110 has the server's HTTP parser strip them)"),
    Scenario("http-custom-header-server-validation", _v(v020a12=_DRAFT), Coverage.PARTLY, ("http.param-header",),
             "the server side of `x-mcp-header` (SEP-2243), judged with `--call` on a named tool whose inputSchema "
             "mirrors a parameter into an `Mcp-Param-*` header (the suite takes the first listed one and calls it "
             "unasked): the header contradicting the body, and the header left out while the body has the value, "
             "each get 400 and -32020; sent only for a read-only tool or with --yes. Not judged: the Base64 cases "
             "the suite expects accepted (a valid `=?base64?...?=` decoded, a value without the sentinel's prefix "
             "or suffix taken literally), each of which runs the tool again, and invalid Base64, which a server "
             "that decodes and one that does not both refuse"),
    Scenario("tasks-lifecycle", _v(v020a12=_EXT), Coverage.EXTENSION,
             ("tasks.ext-unknown-task", "tasks.ext-unknown-task-cancel", "tasks.ext-created-task-resolves"),
             "tasks created by the suite's fixture tools (`slow`, `greet`, `failing`) polled to the end; the checks "
             "judge an unknown task id, and with `--call` that a created task is found by `tasks/get`"),
    Scenario("tasks-capability-negotiation", _v(v020a12=_EXT), Coverage.EXTENSION,
             ("tasks.ext-undeclared-client", "tasks.ext-no-legacy-capability"),
             "the extension declared under `capabilities.extensions` and gated on the client's declaration"),
    Scenario("tasks-wire-fields", _v(v020a12=_EXT), Coverage.EXTENSION, ("tools.call-named",),
             "`ttlMs` and the other `Task` fields on the wire; judged only on tasks a `--call` created"),
    Scenario("tasks-request-state-removal", _v(v020a12=_EXT), Coverage.EXTENSION, (),
             "no `requestState` on a `Task` (fixture tool `slow`); not judged"),
    Scenario("tasks-mrtr-input", _v(v020a12=_EXT), Coverage.EXTENSION, (),
             "a task waiting on input reports `input_required` with its `inputRequests` (fixture tools); not judged"),
    Scenario("tasks-request-headers", _v(v020a12=_EXT), Coverage.EXTENSION, ("tasks.ext-unknown-task",),
             "`Mcp-Method`/`Mcp-Name` on the tasks methods (fixture tools); the check sends the tasks methods with "
             "the headers the connection sets, and a mismatch on them is not judged"),
    Scenario("tasks-dispatch-and-envelope", _v(v020a12=_EXT), Coverage.EXTENSION,
             ("tasks.ext-no-tasks-result", "tasks.ext-unknown-task-update"),
             "the removed `tasks/result` answered -32601 and the envelope of the tasks methods; the fixture tools' "
             "dispatch is not judged"),
    Scenario("tasks-status-notifications", _v(v020a12=_EXT), Coverage.EXTENSION, ("tasks.ext-undeclared-listen",),
             "`notifications/tasks` on `subscriptions/listen` are optional (MAY); the check judges only that they are "
             "not sent to a client that did not declare the extension"),
    Scenario("tasks-required-task-error", _v(v020a12=_EXT), Coverage.EXTENSION, (),
             "-32021 for a tool that requires a task, called by a client without the extension (fixture tool); not "
             "judged"),
    Scenario("tasks-mrtr-composition", _v(v020a12=_EXT), Coverage.EXTENSION, (),
             "a `CreateTaskResult` on the final round of an input-required loop (fixture tools); not judged"),
    _mrtr("input-required-result-basic-elicitation", "test_input_required_result_elicitation",
          "an `elicitation/create` under `user_name`, then a complete result with content"),
    _mrtr("input-required-result-basic-sampling", "test_input_required_result_sampling",
          "a `sampling/createMessage` input request, then a complete result"),
    _mrtr("input-required-result-basic-list-roots", "test_input_required_result_list_roots",
          "a `roots/list` input request, then a complete result"),
    _mrtr("input-required-result-request-state", "test_input_required_result_request_state",
          "a string `requestState`, echoed on the retry, then a complete result"),
    _mrtr("input-required-result-multiple-input-requests", "test_input_required_result_multiple_inputs",
          "elicitation, sampling and roots input requests in one result, then a complete result"),
    _mrtr("input-required-result-multi-round", "test_input_required_result_multi_round",
          "two input-required rounds with different `requestState`s, then a complete result"),
    _mrtr("input-required-result-missing-input-response", "test_input_required_result_elicitation",
          "a retry under a wrong key asked again, not refused (a SHOULD: warns)"),
    Scenario("input-required-result-non-tool-request", _v(v020a12=_DRAFT), Coverage.COVERED,
             ("suite.input-required-result-non-tool-request",),
             "with `--suite-fixtures`, where `prompts/list` lists `test_input_required_result_prompt`, "
             "`suite.input-required-result-non-tool-request` gets it, answers its input requests and retries, and "
             "judges what the suite judges: an input-required result, then messages; without the flag, or where it "
             "is not listed: skipped, nothing sent"),
    _mrtr("input-required-result-result-type", "test_input_required_result_elicitation",
          "`resultType: \"input_required\"` present in the first answer"),
    Scenario("input-required-result-unsupported-methods", _v(v020a12=_DRAFT), Coverage.COVERED,
             ("suite.input-required-result-unsupported-methods",),
             "with `--suite-fixtures` (no fixture needed), `tools/list` and `prompts/list`, each where declared, "
             "must not answer an input-required result; without the flag: skipped, nothing sent"),
    _mrtr("input-required-result-tampered-state", "test_input_required_result_tampered_state",
          "a `requestState` with `-TAMPERED` appended refused with a JSON-RPC error"),
    _mrtr("input-required-result-capability-check", "test_input_required_result_capabilities",
          "a request declaring only `sampling` gets no `elicitation/create` input request"),
    _mrtr("input-required-result-ignore-extra-params", "test_input_required_result_elicitation",
          "unrecognised input responses beside `user_name` ignored (a SHOULD: warns)"),
    _mrtr("input-required-result-validate-input", "test_input_required_result_elicitation",
          "input responses of a number or null not taken as complete (a SHOULD: warns)"),
)

BEGIN = "<!-- scenarios: generated from mcpprobe/check/scenarios.py by `python -m mcpprobe.check.scenarios` -->"
END = "<!-- scenarios: end -->"


def listed(suite: str, rows: tuple[Scenario, ...] = SCENARIOS) -> dict[str, tuple[str, ...]]:
    """The table's scenarios of one suite release, as `conformance list --server` prints them."""
    return {row.name: row.versions[suite] for row in rows if suite in row.versions}


def differences(suite: str, printed: dict[str, tuple[str, ...]],
                rows: tuple[Scenario, ...] = SCENARIOS) -> list[str]:
    """What the table and the suite's `list --server` disagree on, one line each (empty: they agree)."""
    ours = listed(suite, rows)
    lines = [f"{suite}: {name} {list(versions)} is listed by the suite but not in the table"
             for name, versions in printed.items() if name not in ours]
    lines += [f"{suite}: {name} is in the table but the suite does not list it" for name in ours if name not in printed]
    lines += [f"{suite}: {name} is scored at {list(printed[name])}, the table says {list(ours[name])}"
              for name in ours if name in printed and printed[name] != ours[name]]
    return lines


def parse_list(output: str) -> dict[str, tuple[str, ...]]:
    """`conformance list --server`'s lines `  - NAME [V1,V2]` as {name: versions}."""
    found: dict[str, tuple[str, ...]] = {}
    for line in output.splitlines():
        line = line.strip()
        if not line.startswith("- "):
            continue
        name, _, rest = line[2:].partition(" ")
        found[name] = tuple(v.strip() for v in rest.strip().strip("[]").split(",") if v.strip())
    return found


def table() -> str:
    """The markdown table of docs/commands/check.md, between BEGIN and END."""
    lines = [BEGIN, "", "| suite scenario | " + " | ".join(SUITE_VERSIONS) + " | coverage | mcpprobe checks | what |",
             "|---|" + "---|" * len(SUITE_VERSIONS) + "---|---|---|"]
    for row in SCENARIOS:
        versions = [", ".join(row.versions[s]) if s in row.versions else "-" for s in SUITE_VERSIONS]
        checks = ", ".join(f"`{c}`" for c in row.checks) or "-"
        lines.append(f"| `{row.name}` | " + " | ".join(versions) + f" | {row.coverage.value} | {checks} | {row.note} |")
    counts = {kind: sum(1 for row in SCENARIOS if row.coverage is kind) for kind in Coverage}
    lines += ["", "Of " + str(len(SCENARIOS)) + " scenarios: " + ", ".join(
        f"{n} {kind.value}" for kind, n in counts.items() if n) + ".", "", END]
    return "\n".join(lines)


def replaced(page: str) -> str:
    """`page` with its table between BEGIN and END written anew."""
    head, begin, rest = page.partition(BEGIN)
    _, end, tail = rest.partition(END)
    if not (begin and end):
        raise ValueError("the page has no scenarios table markers")
    return head + table() + tail


if __name__ == "__main__":
    target = Path(__file__).resolve().parents[2] / "docs" / "commands" / "check.md"
    target.write_text(replaced(target.read_text(encoding="utf-8")), encoding="utf-8")
    print(target.name, file=sys.stderr)
