"""The catalogue of `mcpprobe check` as data: one frozen `Check` row per check, one `FAMILIES` row per module.

Nothing here runs a check: the runner (mcpprobe.check.runner) reads the rows to decide what
applies, and the docs generator (mcpprobe.check.docs) writes docs/checks/FAMILY.md from them.
Standard library only (and the protocol versions), so that the pages and `--help` stay light.

Each row says where its rule comes from: `words` quotes the specification (or JSON-RPC 2.0) for
the revisions named, and `section` is the page of the revision's specification it is on. A check
that reports a server wrong without such words is a false alarm, and none is allowed here.

One room: the catalogue is data, one row per check, and its length is the specification's words
quoted; split by family, the runner, the docs generator and `--only`/`--skip` would each have to
gather the rows again, and the ids' uniqueness would no longer be visible in one place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType

from mcpprobe.wire.protocols import HANDSHAKE_VERSIONS, MODERN_VERSIONS

SPEC_BASE = "https://modelcontextprotocol.io/specification"
ALL_REVISIONS = (*HANDSHAKE_VERSIONS, *MODERN_VERSIONS)
LEGACY_REVISIONS = HANDSHAKE_VERSIONS
TRANSPORTS = ("stdio", "http", "sse")


class Level(StrEnum):
    """The requirement level of the rule (RFC 2119, as the specification uses it)."""

    MUST = "MUST"
    SHOULD = "SHOULD"
    MAY = "MAY"

    @property
    def rank(self) -> int:
        return {"MUST": 0, "SHOULD": 1, "MAY": 2}[self.value]


class Status(StrEnum):
    PASS = "pass"
    FAIL = "fail"  # a MUST not met
    WARN = "warn"  # a SHOULD (or a MAY-level portability rule) not met
    SKIPPED = "skipped"  # nothing sent: a capability not declared, --unsafe not given, nothing to check
    NA = "n/a"  # the rule is not part of the negotiated revision, or not of this transport
    ERROR = "error"  # the check itself could not run (a timeout, the connection lost)


def _frozen(mapping: Mapping[str, str] | None = None) -> Mapping[str, str]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class Check:
    """One behaviour check. `capability`: alternatives, each `name` or `name.sub` as in
    mcpprobe.client.capabilities; the check applies when any is declared, and sends nothing otherwise.
    `levels` overrides `level` for some revisions (a SHOULD that became a MUST)."""

    id: str
    title: str
    level: Level
    section: str  # path of the revision's page under SPEC_BASE/<version>/, with its #anchor (or a SEP's https URL)
    words: tuple[tuple[str, str], ...]  # (which revisions, the quoted rule)
    revisions: tuple[str, ...] = ALL_REVISIONS
    capability: tuple[str, ...] = ()
    transports: tuple[str, ...] = TRANSPORTS
    safe: bool = True  # False: only with --unsafe
    sections: Mapping[str, str] = field(default_factory=_frozen)  # revision -> section, where it moved
    levels: Mapping[str, Level] = field(default_factory=lambda: MappingProxyType({}))
    # Where the rule is a fixture contract rather than the specification's (the `suite` family): whose,
    # shown beside the level on the check's page.
    contract: str = ""
    how: str = ""  # what is sent, and how the answer is judged (the docs say it)
    # The requests (or notifications) whose answers the check judges, not the helpers it sends on the
    # way (a list to find an item, a ping after): its link is the page of these methods, or a page of
    # no method's own (the base protocol, the transports, pagination), never another method's page
    # (mcpprobe.client.obligations.PARTS names each method's pages; a test holds every row to it).
    methods: tuple[str, ...] = ()
    methods_for: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def family(self) -> str:
        return self.id.split(".", 1)[0]

    def level_for(self, version: str) -> Level:
        return self.levels.get(version, self.level)

    def methods_in(self, version: str) -> tuple[str, ...]:
        return self.methods_for.get(version, self.methods)

    def spec_url(self, version: str | None) -> str:
        """The page of the rule in `version`'s specification, or in the newest revision it applies to."""
        chosen = version if version in self.revisions else self.revisions[-1]
        section = self.sections.get(chosen, self.section)
        if section.startswith("https://"):  # a rule the specification's pages link rather than hold (a SEP)
            return section
        return f"{SPEC_BASE}/{chosen}/{section}"


@dataclass(frozen=True)
class Family:
    name: str
    module: str  # holds IMPLEMENTS: {check id: async function(CheckContext) -> Verdict}
    title: str
    about: str
    more: tuple[str, ...] = ()  # further modules with IMPLEMENTS of this family's checks (one would be too long)

    @property
    def modules(self) -> tuple[str, ...]:
        return (self.module, *self.more)


FAMILIES: tuple[Family, ...] = (
    Family("lifecycle", "mcpprobe.check.lifecycle", "Lifecycle and base protocol",
           "ping, errors for unknown methods and bad params, request ids, cancellation, the stdio stream."),
    Family("pagination", "mcpprobe.check.listing", "Pagination", "cursors the server never issued."),
    Family("listing", "mcpprobe.check.listing", "Listing", "every declared kind lists to the end, twice alike."),
    Family("tools", "mcpprobe.check.listing", "Tools",
           "tool names, input and output schemas; tools called only when named with --call."),
    Family("resources", "mcpprobe.check.reading", "Resources",
           "reading what is listed, MIME types, templates, unknown URIs, subscriptions."),
    Family("prompts", "mcpprobe.check.reading", "Prompts", "expanding what is listed."),
    Family("completion", "mcpprobe.check.optional", "Completion", "completion/complete where declared."),
    Family("logging", "mcpprobe.check.optional", "Logging", "logging/setLevel where declared."),
    Family("tasks", "mcpprobe.check.optional", "Tasks (2025-11-25, experimental; 2026-07-28, the tasks extension)",
           "tasks/list and tasks/get of 2025-11-25; in 2026-07-28, tasks/get, tasks/update, tasks/cancel, the removed "
           "tasks/result and the capabilities of the `io.modelcontextprotocol/tasks` extension (SEP-2663), for an "
           "unknown task id only (no tool is called; with --call, the tasks the named tools created are judged from "
           "those calls), and nothing is sent where the extension is not declared."),
    Family("http", "mcpprobe.check.http", "Streamable HTTP",
           "Origin, MCP-Protocol-Version, sessions, DELETE, the GET stream, batches, notifications and the "
           "2026-07-28 request headers, each sent as a raw HTTP request beside the connection's; several requests "
           "in flight at once, event streams (priming, resumption with Last-Event-ID), and the server side of "
           "x-mcp-header (with --call).", more=("mcpprobe.check.streams", "mcpprobe.check.param_headers")),
    Family("auth", "mcpprobe.check.auth", "Authorization",
           "the 401 challenge and the metadata documents of a protected server, from mcpprobe's own diagnosis; "
           "n/a where the server asks for no authorization (which is OPTIONAL in MCP)."),
    Family("portability", "mcpprobe.check.portability", "Portability of tool schemas",
           "JSON Schema constructs that some MCP hosts are known to reject."),
    Family("suite", "mcpprobe.check.suite", "The conformance suite's fixtures (--suite-fixtures)",
           "the official conformance suite's fixture tools, resources, templates and prompts, judged as the suite "
           "judges them, only with --suite-fixtures and only where the server lists them under the suite's names: "
           "a server that lists `test_simple_text` claims to implement the suite's fixture of that name. Their "
           "level is that of the suite's fixture contract (the scenario's \"Server Implementation Requirements\", "
           "quoted for each), not the specification's, except where the specification's words are quoted beside it; "
           "a server that does not list a fixture is never judged on it."),
)

_JSONRPC = "JSON-RPC 2.0, section 5"
# The tasks extension: declared under `extensions` (the runner's gate reads this spelling), and
# specified in SEP-2663, which the specification's pages link rather than hold.
_TASKS_EXT = "extensions.io.modelcontextprotocol/tasks"
_TASKS_EXT_SEP = "https://modelcontextprotocol.io/seps/2663-tasks-extension"
_STREAMABLE = tuple(v for v in ALL_REVISIONS if v >= "2025-03-26")  # streamable HTTP came with 2025-03-26
_SESSION_REVISIONS = tuple(v for v in HANDSHAKE_VERSIONS if v >= "2025-03-26")  # 2026-07-28 has no sessions
_SECURITY = "basic/transports#security-warning"
_AUTH = ("2025-06-18", "2025-11-25", *MODERN_VERSIONS)  # RFC 9728 metadata came with 2025-06-18
_AUTH_DISCOVERY_SECTIONS = {
    "2025-06-18": "basic/authorization#authorization-server-location",
    "2026-07-28": "basic/authorization/authorization-server-discovery"
                  "#protected-resource-metadata-discovery-requirements",
}
_SESSIONS = "basic/transports#session-management"
# The level of the authorization page as a whole (2025-03-26 on; the auth checks apply from 2025-06-18):
# a server protected without the specification's OAuth meets at most this SHOULD.
_SHOULD_CONFORM = ("2025-06-18 and later", "Authorization is **OPTIONAL** for MCP implementations. When supported: "
                                           "Implementations using an HTTP-based transport **SHOULD** conform to this "
                                           "specification.")
_RESPONSES = {"2024-11-05": "basic/messages#responses"}  # the first revision's page of messages
_LISTS = ("tools/list", "resources/list", "resources/templates/list", "prompts/list")

# ----- the suite family's rows: the conformance suite's fixtures (mcpprobe.check.suite) -----
_SUITE = "@modelcontextprotocol/conformance 0.2.0-alpha.12"
_SUITE_CONTRACT = "the conformance suite's fixture contract"
_SUITE_TOOLS_REVS = ("2025-06-18", "2025-11-25", *MODERN_VERSIONS)
_SUITE_LEGACY_REVS = ("2025-06-18", "2025-11-25")
_SUITE_CALL = ("Only with `--suite-fixtures`, and only where `tools/list` lists `{tool}`: calls it{args} through the "
               "one rule of every call mcpprobe makes (listed, arguments checked; a tool not marked read-only needs "
               "`--yes` or a yes on a terminal, else nothing is sent and the check is an `error`, exit 3). {judge} "
               "A JSON-RPC error instead of a result fails, and so does a listed `inputSchema` that refuses the "
               "arguments the suite sends (nothing is sent then). Otherwise skipped, nothing sent. A tool also "
               "named with `--call` is called once per run: this check judges that call when it sent the suite's "
               "arguments (not for `test_tool_with_logging`, whose log messages the suite watches at its own "
               "level), else it is skipped, saying why.")
_SUITE_READ = ("Only with `--suite-fixtures`, and only where {listing} lists `{name}`: {send}. {judge} A JSON-RPC "
               "error instead of a result fails. Otherwise skipped, nothing sent.")


def _suite_row(scenario: str, title: str, section: str, words: tuple[tuple[str, str], ...], how: str,
               methods: tuple[str, ...], capability: str, revisions: tuple[str, ...] = _SUITE_TOOLS_REVS) -> Check:
    return Check(f"suite.{scenario}", title, Level.MUST, section,
                 ((f"{_SUITE}, scenario `{scenario}`", words[0][1]), *words[1:]),
                 revisions=revisions, capability=(capability,), methods=methods, contract=_SUITE_CONTRACT, how=how)


def _suite_tool(scenario: str, tool: str, returns: str, judge: str, *, args: str = "",
                revisions: tuple[str, ...] = _SUITE_TOOLS_REVS, section: str = "server/tools#calling-tools",
                spec: tuple[tuple[str, str], ...] = ()) -> Check:
    return _suite_row(scenario, f"the suite's fixture tool {tool} answers as the suite expects", section,
                      (("", f"Implement tool `{tool}` {returns}"), *spec),
                      _SUITE_CALL.format(tool=tool, args=f" with {args}" if args else " with no arguments",
                                         judge=judge),
                      ("tools/call",), "tools", revisions)


def _suite_rows() -> tuple[Check, ...]:
    return (
        _suite_tool("tools-call-simple-text", "test_simple_text",
                    "with no arguments that returns: { \"content\": [ { \"type\": \"text\", \"text\": \"This is a "
                    "simple text response for testing.\" } ] }",
                    "The result's `content` must be a non-empty list with a `text` block whose `text` is not empty "
                    "(as the suite judges it: not the exact words)."),
        _suite_tool("tools-call-image", "test_image_content",
                    "with no arguments that returns: { \"content\": [ { \"type\": \"image\", \"data\": "
                    "\"<base64-encoded-png>\", \"mimeType\": \"image/png\" } ] }",
                    "The result's `content` must hold an `image` block with a non-empty `data` and `mimeType`."),
        _suite_tool("tools-call-audio", "test_audio_content",
                    "with no arguments that returns: { \"content\": [ { \"type\": \"audio\", \"data\": "
                    "\"<base64-encoded-wav>\", \"mimeType\": \"audio/wav\" } ] }",
                    "The result's `content` must be a non-empty list with an `audio` block with a non-empty `data` "
                    "and the `mimeType` `audio/wav`."),
        _suite_tool("tools-call-embedded-resource", "test_embedded_resource",
                    "with no arguments that returns: { \"content\": [ { \"type\": \"resource\", \"resource\": { "
                    "\"uri\": \"test://embedded-resource\", \"mimeType\": \"text/plain\", \"text\": \"This is an "
                    "embedded resource content.\" } } ] }",
                    "The result's `content` must hold a `resource` block whose `resource` has a `uri`, a `mimeType` "
                    "(which the specification leaves optional: the fixture's contract asks it) and a `text` or a "
                    "`blob`."),
        _suite_tool("tools-call-mixed-content", "test_multiple_content_types",
                    "with no arguments that returns: { \"content\": [ { \"type\": \"text\", ... }, { \"type\": "
                    "\"image\", ... }, { \"type\": \"resource\", ... } ] }",
                    "The result's `content` must hold two blocks or more, among them a `text`, an `image` and a "
                    "`resource` block."),
        _suite_tool("tools-call-error", "test_error_handling",
                    "with no arguments. ... Returns: JSON-RPC response with `isError: true` { \"isError\": true, "
                    "\"content\": [ { \"type\": \"text\", \"text\": \"This tool intentionally returns an error for "
                    "testing\" } ] }",
                    "The result must say `isError: true`, and its first content block must have a `text`.",
                    spec=(("all", "**Tool Execution Errors**: Reported in tool results with `isError: true`"),)),
        _suite_tool("tools-call-with-logging", "test_tool_with_logging",
                    "with no arguments. Behavior: During execution, send 3 log notifications at info level",
                    "First `logging/setLevel` `debug` where the server declared `logging` (as the suite does). At "
                    "least 3 `notifications/message` must come during the call: those tied to the call come before "
                    "its answer; while fewer have come, mcpprobe waits more after the answer: 0.5 s, or ten times "
                    "the call's own round trip where that was longer (a busy machine), never past --timeout (the "
                    "suite waits 0.2 s).", revisions=_SUITE_LEGACY_REVS),
        _suite_tool("tools-call-with-progress", "test_tool_with_progress",
                    "with no arguments. Behavior: If `_meta.progressToken` is provided in request: Send progress "
                    "notification: `0/100` ... `50/100` ... `100/100`",
                    "The call carries a `progressToken` (as every call mcpprobe makes). At least 3 "
                    "`notifications/progress` for that token must come before the answer (the fixture's contract), "
                    "each `progress` greater than the one before (the specification's MUST; the suite accepts equal "
                    "values, mcpprobe does not).", section="basic/utilities/progress",
                    spec=(("2025-06-18 and later", "The `progress` value **MUST** increase with each notification, "
                                                   "even if the total is unknown."),)),
        _suite_tool("tools-call-sampling", "test_sampling",
                    "with argument: `prompt` (string, required) ... Behavior: Request LLM sampling from the client "
                    "using `sampling/createMessage`",
                    "mcpprobe declares `sampling` only with `--suite-fixtures`, and answers every "
                    "`sampling/createMessage` with one fixed text (`model` `mcpprobe-fixed`): it has no model. The "
                    "server must send `sampling/createMessage` during the call, and the result must have content.",
                    args="`prompt=Test prompt for sampling`", revisions=_SUITE_LEGACY_REVS,
                    section="client/sampling"),
        _suite_tool("tools-call-elicitation", "test_elicitation",
                    "with argument: `message` (string, required) ... Behavior: Request user input from the client "
                    "using `elicitation/create`",
                    "mcpprobe declares `elicitation` (form) only with `--suite-fixtures` (or `call --elicit`), and "
                    "declines every `elicitation/create` (`action: decline`, always a valid answer). The server must "
                    "send `elicitation/create` during the call, and the result must have content.",
                    args="`message=Please provide your information`", revisions=_SUITE_LEGACY_REVS,
                    section="client/elicitation"),
        _suite_tool("elicitation-sep1034-defaults", "test_elicitation_sep1034_defaults",
                    "(no arguments) that requests `elicitation/create` from the client with a schema containing "
                    "default values for all primitive types: `name` (string): default \"John Doe\", `age` (integer): "
                    "default 30, `score` (number): default 95.5, `status` (string enum: [\"active\", \"inactive\", "
                    "\"pending\"]): default \"active\", `verified` (boolean): default true",
                    "The `elicitation/create` it sends (declined) must have those five properties in its "
                    "`requestedSchema`, each of its type with that `default` (and `status` an `enum` holding its "
                    "default).", revisions=("2025-11-25",), section="client/elicitation"),
        _suite_tool("elicitation-sep1330-enums", "test_elicitation_sep1330_enums",
                    "(no arguments) that requests `elicitation/create` from the client with a schema containing all "
                    "5 enum variants: Untitled single-select { type: \"string\", enum: [...] }; Titled single-select "
                    "{ type: \"string\", oneOf: [{ const, title }, ...] }; Legacy titled { type: \"string\", enum: "
                    "[...], enumNames: [...] }; Untitled multi-select { type: \"array\", items: { type: \"string\", "
                    "enum: [...] } }; Titled multi-select { type: \"array\", items: { anyOf: [{ const, title }, ...] "
                    "} }",
                    "The `elicitation/create` it sends (declined) must have the properties `untitledSingle`, "
                    "`titledSingle`, `legacyEnum`, `untitledMulti` and `titledMulti` in its `requestedSchema`, each "
                    "of that form (an untitled one without `oneOf`/`enumNames`, a titled one without `enum`, "
                    "`enumNames` as long as `enum`).", revisions=("2025-11-25",), section="client/elicitation"),
        _suite_row("json-schema-2020-12", "the suite's fixture tool json_schema_2020_12_tool keeps its 2020-12 schema",
                   "server/tools#listing-tools",
                   (("", "Implement tool `json_schema_2020_12_tool` with inputSchema containing JSON Schema 2020-12 "
                         "features, including the broader vocabulary permitted by SEP-2106 (an `$anchor` inside "
                         "`$defs`, composition keywords `allOf`/`anyOf`, and conditional keywords "
                         "`if`/`then`/`else`)"),),
                   "Only with `--suite-fixtures`, and only where `tools/list` lists `json_schema_2020_12_tool` (it is "
                   "not called): its `inputSchema` must have `$schema` "
                   "`https://json-schema.org/draft/2020-12/schema`, `$defs` with `address` and `additionalProperties: "
                   "false`; in 2026-07-28 also an `allOf` holding an `anyOf`, `if`/`then`/`else`, and `$anchor` in "
                   "`$defs.address` (the suite skips those before 2026-07-28). Otherwise skipped, nothing sent.",
                   ("tools/list",), "tools", ("2025-11-25", *MODERN_VERSIONS)),
        _suite_row("completion-complete", "the suite's fixture prompt test_prompt_with_arguments completes arg1",
                   "server/utilities/completion#protocol-messages",
                   (("", "Endpoint: `completion/complete` ... Accept completion requests for prompt or resource "
                         "template arguments ... Request Format: { \"method\": \"completion/complete\", \"params\": "
                         "{ \"ref\": { \"type\": \"ref/prompt\", \"name\": \"test_prompt_with_arguments\" }, "
                         "\"argument\": { \"name\": \"arg1\", \"value\": \"par\" } } }"),
                    ("all, schema.ts", "export interface CompleteResult extends Result { completion: { values: "
                                       "string[]; total?: number; hasMore?: boolean; }; }")),
                   _SUITE_READ.format(listing="`prompts/list`", name="test_prompt_with_arguments",
                                      send="where `completions` is declared, asks `completion/complete` for its "
                                           "argument `arg1` with the value `test` (as the suite does)",
                                      judge="The result must have a `completion` with a `values` list (empty is "
                                            "allowed)."),
                   ("completion/complete",), "completions"),
        _suite_row("resources-read-text", "the suite's fixture resource test://static-text reads as text",
                   "server/resources#reading-resources",
                   (("", "Implement resource `test://static-text` that returns: { \"contents\": [ { \"uri\": "
                         "\"test://static-text\", \"mimeType\": \"text/plain\", \"text\": \"This is the content of "
                         "the static text resource.\" } ] }"),),
                   _SUITE_READ.format(listing="`resources/list`", name="test://static-text",
                                      send="reads it",
                                      judge="The first of a non-empty `contents` list must have a `uri`, a "
                                            "`mimeType` and a non-empty `text`."),
                   ("resources/read",), "resources"),
        _suite_row("resources-read-binary", "the suite's fixture resource test://static-binary reads as a blob",
                   "server/resources#reading-resources",
                   (("", "Implement resource `test://static-binary` that returns: { \"contents\": [ { \"uri\": "
                         "\"test://static-binary\", \"mimeType\": \"image/png\", \"blob\": \"<base64-encoded-png>\" "
                         "} ] }"),),
                   _SUITE_READ.format(listing="`resources/list`", name="test://static-binary", send="reads it",
                                      judge="The first of a non-empty `contents` list must have a `uri`, a "
                                            "`mimeType` and a non-empty `blob`."),
                   ("resources/read",), "resources"),
        _suite_row("resources-templates-read", "the suite's fixture template test://template/{id}/data substitutes "
                   "its id", "server/resources#resource-templates",
                   (("", "Implement resource template `test://template/{id}/data` that substitutes parameters. "
                         "Behavior: When client requests `test://template/123/data`, substitute `{id}` with `123`"),),
                   _SUITE_READ.format(listing="`resources/templates/list`", name="test://template/{id}/data",
                                      send="reads `test://template/123/data`",
                                      judge="The first of a non-empty `contents` list must have a `uri` and a "
                                            "`text` or a `blob`; a `text` must show `123`."),
                   ("resources/read",), "resources"),
        _suite_row("prompts-get-simple", "the suite's fixture prompt test_simple_prompt expands",
                   "server/prompts#getting-a-prompt",
                   (("", "Implement a prompt named `test_simple_prompt` with no arguments that returns: { "
                         "\"messages\": [ { \"role\": \"user\", \"content\": { \"type\": \"text\", \"text\": \"This "
                         "is a simple prompt for testing.\" } } ] }"),),
                   _SUITE_READ.format(listing="`prompts/list`", name="test_simple_prompt", send="gets it",
                                      judge="`messages` must be a non-empty list, each with a `role` and a "
                                            "`content`."),
                   ("prompts/get",), "prompts"),
        _suite_row("prompts-get-with-args", "the suite's fixture prompt test_prompt_with_arguments shows its arguments",
                   "server/prompts#getting-a-prompt",
                   (("", "Implement a prompt named `test_prompt_with_arguments` with arguments: `arg1` (string, "
                         "required) - First test argument; `arg2` (string, required) - Second test argument. Returns "
                         "(with args {arg1: \"hello\", arg2: \"world\"}): ... \"Prompt with arguments: arg1='hello', "
                         "arg2='world'\""),),
                   _SUITE_READ.format(listing="`prompts/list`", name="test_prompt_with_arguments",
                                      send="gets it with `arg1` `testValue1` and `arg2` `testValue2`",
                                      judge="`messages` must be a non-empty list in which both values appear."),
                   ("prompts/get",), "prompts"),
        _suite_row("prompts-get-embedded-resource", "the suite's fixture prompt test_prompt_with_embedded_resource "
                   "embeds a resource", "server/prompts#embedded-resources",
                   (("", "Implement a prompt named `test_prompt_with_embedded_resource` with argument: `resourceUri` "
                         "(string, required) - URI of the resource to embed. Returns: { \"messages\": [ { \"role\": "
                         "\"user\", \"content\": { \"type\": \"resource\", \"resource\": { \"uri\": \"<resourceUri "
                         "from arguments>\", ... } } }, ... ] }"),),
                   _SUITE_READ.format(listing="`prompts/list`", name="test_prompt_with_embedded_resource",
                                      send="gets it with `resourceUri` `test://example-resource`",
                                      judge="A message's `content` must be a `resource` block."),
                   ("prompts/get",), "prompts"),
        _suite_row("prompts-get-with-image", "the suite's fixture prompt test_prompt_with_image holds an image",
                   "server/prompts#image-content",
                   (("", "Implement a prompt named `test_prompt_with_image` with no arguments that returns: { "
                         "\"messages\": [ { \"role\": \"user\", \"content\": { \"type\": \"image\", \"data\": "
                         "\"<base64-encoded-png>\", \"mimeType\": \"image/png\" } }, ... ] }"),),
                   _SUITE_READ.format(listing="`prompts/list`", name="test_prompt_with_image", send="gets it",
                                      judge="A message's `content` must be an `image` block with a non-empty `data` "
                                            "and `mimeType`."),
                   ("prompts/get",), "prompts"),
    )


# ----- the suite family's input-required-result rows (2026-07-28, SEP-2322: mcpprobe.check.suite_mrtr) -----
_MRTR_PAGE = "basic/patterns/mrtr"
_MRTR_HOW = ("Only with `--suite-fixtures`, in 2026-07-28, and only where {listing} lists `{name}`: {send} "
             "{judge} Otherwise skipped, nothing sent.")
_MRTR_CALL = ("calls it with no arguments (through the one rule of every call mcpprobe makes: a tool not marked "
              "read-only needs `--yes` or a yes on a terminal, else nothing is sent and the check is an `error`, "
              "exit 3), reads its `input_required` result and retries, as the suite does; not when `--call` "
              "called the tool in this run (each tool is called once per run: skipped, saying why).")
_MRTR_ANSWERS = (" The input requests are answered by `call`'s InputBroker as `--suite-fixtures` declares: "
                 "`elicitation/create` declined, `sampling/createMessage` a fixed text, `roots/list` the one root "
                 "`file:///test/root` (the suite accepts with its own values; the fixture contract keys on the "
                 "response being there, not on its action). A round that asks for more than 16 inputs, or for one "
                 "mcpprobe does not answer, is not retried: skipped, saying why.")
_MRTR_SERVER = ("2026-07-28", "Servers **MAY** respond to any supported client request with an "
                              "`InputRequiredResult` ... Servers **MUST** include at least one of `inputRequests` or "
                              "`requestState` in every `InputRequiredResult` response.")


def _mrtr_row(scenario: str, name: str, title: str, words: str, judge: str, *, send: str = _MRTR_CALL,
              spec: tuple[tuple[str, str], ...] = (_MRTR_SERVER,), level: Level = Level.MUST,
              anchor: str = "server-requirements-basic-workflow", prompt: bool = False) -> Check:
    listing = "`prompts/list`" if prompt else "`tools/list`"
    return Check(f"suite.{scenario}", title, level, f"{_MRTR_PAGE}#{anchor}",
                 ((f"{_SUITE}, scenario `{scenario}`", words), *spec),
                 revisions=MODERN_VERSIONS, capability=("prompts" if prompt else "tools",),
                 methods=("prompts/get",) if prompt else ("tools/call",), contract=_SUITE_CONTRACT,
                 how=_MRTR_HOW.format(listing=listing, name=name, send=send, judge=judge))


def _mrtr_rows() -> tuple[Check, ...]:
    elicit = "test_input_required_result_elicitation"
    return (
        _mrtr_row("input-required-result-basic-elicitation", elicit,
                  "the suite's fixture tool test_input_required_result_elicitation asks for input, then completes",
                  "Implement a tool named `test_input_required_result_elicitation` (no arguments required). Behavior "
                  "(Round 1): When called without `inputResponses`, return an `InputRequiredResult` ... "
                  "\"inputRequests\": { \"user_name\": { \"method\": \"elicitation/create\" ... Behavior (Round 2): "
                  "When called with `inputResponses` containing the key `\"user_name\"`, return a complete result",
                  "Round 1 must be `resultType: \"input_required\"` with `inputRequests.user_name` an "
                  "`elicitation/create`; round 2, retried with the answers (and the `requestState`, if any), a "
                  "complete result with a non-empty `content` list." + _MRTR_ANSWERS),
        _mrtr_row("input-required-result-basic-sampling", "test_input_required_result_sampling",
                  "the suite's fixture tool test_input_required_result_sampling asks for sampling, then completes",
                  "Implement a tool named `test_input_required_result_sampling` (no arguments required). Behavior "
                  "(Round 1): When called without `inputResponses`, return an `InputRequiredResult` ... "
                  "\"method\": \"sampling/createMessage\" ... Behavior (Round 2): When called with `inputResponses` "
                  "containing the key `\"capital_question\"`, return a complete result",
                  "Round 1 must be input-required, its first input request a `sampling/createMessage`; round 2 a "
                  "complete result." + _MRTR_ANSWERS),
        _mrtr_row("input-required-result-basic-list-roots", "test_input_required_result_list_roots",
                  "the suite's fixture tool test_input_required_result_list_roots asks for roots, then completes",
                  "Implement a tool named `test_input_required_result_list_roots` (no arguments required). Behavior "
                  "(Round 1): ... \"client_roots\": { \"method\": \"roots/list\" ... Behavior (Round 2): When called "
                  "with `inputResponses` containing the key `\"client_roots\"` (a ListRootsResult with a `roots` "
                  "array), return a complete result",
                  "Round 1 must be input-required, its first input request a `roots/list`; round 2 a complete "
                  "result." + _MRTR_ANSWERS),
        _mrtr_row("input-required-result-request-state", "test_input_required_result_request_state",
                  "the suite's fixture tool test_input_required_result_request_state round-trips its requestState",
                  "Behavior (Round 1): Return an `InputRequiredResult` with both `inputRequests` and `requestState` "
                  "... Behavior (Round 2): When called with `inputResponses` AND the echoed `requestState`, validate "
                  "the state and return a complete result.",
                  "Round 1 must be input-required with `inputRequests` and a non-empty string `requestState`; round "
                  "2, retried with the answers and that `requestState`, a complete result." + _MRTR_ANSWERS),
        _mrtr_row("input-required-result-multiple-input-requests", "test_input_required_result_multiple_inputs",
                  "the suite's fixture tool test_input_required_result_multiple_inputs asks three kinds at once",
                  "Behavior (Round 1): Return an `InputRequiredResult` with multiple `inputRequests` — elicitation, "
                  "sampling, and roots/list — plus `requestState` ... Behavior (Round 2): When called with "
                  "`inputResponses` containing ALL keys and the echoed `requestState`, return a complete result.",
                  "Round 1 must be input-required with a `requestState` and at least three `inputRequests`, among "
                  "them an `elicitation/create`, a `sampling/createMessage` and a `roots/list`; round 2, every one "
                  "answered, a complete result." + _MRTR_ANSWERS,
                  spec=(_MRTR_SERVER, ("2026-07-28", "`inputRequests` keys are server assigned identifiers and "
                                                     "**MUST** be unique within the scope of the request."))),
        _mrtr_row("input-required-result-multi-round", "test_input_required_result_multi_round",
                  "the suite's fixture tool test_input_required_result_multi_round asks twice, with a new state",
                  "Behavior (Round 2): When called with `inputResponses` for step1 + requestState, return ANOTHER "
                  "`InputRequiredResult` with a new elicitation and updated requestState ... Behavior (Round 3): "
                  "When called with `inputResponses` for step2 + updated requestState, return a complete result.",
                  "Rounds 1 and 2 must be input-required, each with `inputRequests` and a `requestState`, the "
                  "second `requestState` different from the first; round 3 a complete result." + _MRTR_ANSWERS),
        _mrtr_row("input-required-result-missing-input-response", elicit,
                  "a retry without the input asked for is asked again, not refused",
                  "When the client retries with `inputResponses` that are missing required keys or contain wrong "
                  "keys, the server SHOULD respond with a new `InputRequiredResult` re-requesting the missing "
                  "information (NOT a JSON-RPC error).",
                  "Sent with `inputResponses: {\"wrong_key\": {\"action\": \"accept\", ...}}` (as the suite "
                  "sends it), the answer should be a new input-required result; a JSON-RPC error or a complete "
                  "result warns.", send="calls it (the one rule of every call mcpprobe makes) once,",
                  spec=(("2026-07-28", "If the client fails to send all the information requested in a previous "
                                       "`InputRequests`, and the missing information is necessary for the server to "
                                       "process the request, the server **SHOULD** respond with a new "
                                       "`InputRequiredResult` requesting the missing information again, rather than "
                                       "returning an error."),),
                  level=Level.SHOULD, anchor="error-handling"),
        _mrtr_row("input-required-result-non-tool-request", "test_input_required_result_prompt",
                  "the suite's fixture prompt test_input_required_result_prompt asks for input, then expands",
                  "Implement a prompt named `test_input_required_result_prompt` that requires elicitation input. "
                  "Behavior (Round 1): When `prompts/get` is called for `test_input_required_result_prompt` without "
                  "`inputResponses`, return an `InputRequiredResult` ... Behavior (Round 2): When called with "
                  "`inputResponses`, return a complete `GetPromptResult`.",
                  "Round 1 must be input-required with `inputRequests`; round 2 a complete result with `messages`."
                  + _MRTR_ANSWERS, send="gets it (no arguments), reads its `input_required` result and retries, as "
                                        "the suite does.",
                  spec=(("2026-07-28", "Servers **MAY** send `InputRequiredResult` responses on the following client "
                                       "requests: `prompts/get` ... `resources/read` ... `tools/call`"),),
                  anchor="supported-requests", prompt=True),
        _mrtr_row("input-required-result-result-type", elicit,
                  "the input-required result of test_input_required_result_elicitation says its resultType",
                  "This scenario verifies that the resultType field is explicitly present in the response (not just "
                  "inferred).",
                  "Its first answer must carry `resultType: \"input_required\"` (a missing `resultType` fails, "
                  "and so does `basic-elicitation`, as in the suite).",
                  send="calls it (the one rule of every call mcpprobe makes) once, with no arguments.",
                  spec=(("2026-07-28", "\"resultType\": \"input_required\" (the `InputRequiredResult` of the "
                                       "page's example; the schema's `Result.resultType`)"),)),
        _mrtr_row("input-required-result-tampered-state", "test_input_required_result_tampered_state",
                  "the suite's fixture tool test_input_required_result_tampered_state refuses a tampered state",
                  "Behavior (Round 1): When called without inputResponses, return an InputRequiredResult with "
                  "integrity-protected requestState (e.g. HMAC-signed). Behavior (Round 2 - tampered): When called "
                  "with a modified/tampered requestState, return a JSON-RPC error (code -32602 or similar) "
                  "indicating integrity check failure.",
                  "Round 1 must be input-required with a `requestState`; round 2 is sent with the answers and that "
                  "state with `-TAMPERED` appended (as the suite does), and must be a JSON-RPC error. The "
                  "specification requires integrity protection where the state matters, the fixture contract "
                  "always." + _MRTR_ANSWERS,
                  spec=(("2026-07-28", "If `requestState` influences authorization, resource access, or business "
                                       "logic, servers **MUST** protect its integrity (e.g. HMAC or AEAD) and "
                                       "**MUST** reject state that fails verification."),)),
        _mrtr_row("input-required-result-capability-check", "test_input_required_result_capabilities",
                  "no input request for a capability the request did not declare",
                  "Read client capabilities from `_meta['io.modelcontextprotocol/clientCapabilities']`. Only include "
                  "inputRequests for methods the client supports. For example, if the client declares `sampling: "
                  "{}` but NOT `elicitation`, only include `sampling/createMessage` inputRequests.",
                  "The one request declares `clientCapabilities: {\"sampling\": {}}` (fewer than the session "
                  "declares, as the suite does); the answer must be input-required with input requests, none of "
                  "them an `elicitation/create`. Nothing is answered or retried.",
                  send="calls it once (the one rule of every call mcpprobe makes), with no arguments.",
                  spec=(("2026-07-28", "Servers **MUST NOT** send an `inputRequests` that the client has not "
                                       "declared support for in its capabilities. For example, if a client does not "
                                       "declare support for `elicitation`, the server **MUST NOT** include any "
                                       "`elicitation/create` requests in the `inputRequests` field."),)),
        _mrtr_row("input-required-result-ignore-extra-params", elicit,
                  "unrecognised input responses beside the right one are ignored",
                  "This scenario sends correct inputResponses PLUS extra unrecognized keys. The server SHOULD ignore "
                  "the extra keys and complete normally.",
                  "Sent with `user_name` accepted (`{\"name\": \"Alice\"}`) and two unrecognised keys, as the "
                  "suite sends it, the answer should be a complete result; an error or an input-required result "
                  "warns.", send="calls it (the one rule of every call mcpprobe makes) once,",
                  spec=(("2026-07-28", "If additional, unexpected parameters are provided in the `InputResponses` "
                                       "object, the server **SHOULD** ignore any information it does not recognize "
                                       "or need."),),
                  level=Level.SHOULD, anchor="error-handling"),
        _mrtr_row("input-required-result-validate-input", elicit,
                  "input responses that are no InputResponses are not taken",
                  "This scenario sends completely invalid inputResponses structures. The server SHOULD validate them "
                  "and return a JSON-RPC error or a new InputRequiredResult.",
                  "Sent twice, with `inputResponses: {\"user_name\": 12345}` and with `inputResponses: null` (as the "
                  "suite sends them), neither answer should be a complete result; one that is warns.",
                  send="calls it (the one rule of every call mcpprobe makes) twice,",
                  spec=(("2026-07-28", "Servers **SHOULD** validate that the data provided by the client is a valid "
                                       "`InputResponses` object and that the information inside can be correctly "
                                       "parsed. Protocol errors (malformed JSON, invalid schema, internal server "
                                       "errors) **SHOULD** return a JSON-RPC error response"),),
                  level=Level.SHOULD, anchor="error-handling"),
        Check("suite.input-required-result-unsupported-methods",
              "tools/list and prompts/list never answer an input-required result", Level.MUST,
              f"{_MRTR_PAGE}#supported-requests",
              ((f"{_SUITE}, scenario `input-required-result-unsupported-methods`",
                "Servers MUST NOT send InputRequiredResult responses on any client requests other than the "
                "supported ones (prompts/get, resources/read, tools/call, tasks/result)."),
               ("2026-07-28", "Servers **MUST NOT** send `InputRequiredResult` responses on any other client "
                              "requests.")),
              revisions=MODERN_VERSIONS, capability=("tools", "prompts"), methods=("tools/list", "prompts/list"),
              how="Only with `--suite-fixtures` (no fixture is needed), in 2026-07-28: sends `tools/list` and "
                  "`prompts/list` with no params, each where its capability is declared, as the suite does; "
                  "neither answer may be `resultType: \"input_required\"`. Otherwise skipped, nothing sent."),
    )


CHECKS: tuple[Check, ...] = (
    # ----- lifecycle -----
    Check("lifecycle.ping", "ping is answered with an empty result", Level.MUST,
          "basic/utilities/ping#behavior-requirements",
          (("2024-11-05 to 2025-11-25", "The receiver **MUST** respond promptly with an empty response"),),
          revisions=LEGACY_REVISIONS,
          methods=("ping",),
          how="Sends `ping`. An empty result passes; an error or no answer within --timeout fails; a result "
              "with keys other than `_meta` is a warning. 2026-07-28 has no `ping` (n/a)."),
    Check("lifecycle.unknown-method", "an unknown method gets an error, -32601", Level.MUST, "basic#responses",
          (("2024-11-05 to 2025-06-18", "Responses **MUST** include the same ID as the request they correspond "
                                        "to. ... Either a `result` or an `error` **MUST** be set."),
           ("2025-11-25 and later", "Error responses **MUST** include the same ID as the request they correspond "
                                    "to ... **MUST** include an `error` field with a `code` and `message`"),
           (_JSONRPC, "When a rpc call is made, the Server MUST reply with a Response ... -32601 Method not found: "
                      "The method does not exist / is not available."),
           ("2026-07-28, streamable HTTP", "If the server does not implement the requested RPC method, it **MUST** "
                                           "respond with `404 Not Found` and a JSON-RPC error with code `-32601` "
                                           "(`Method not found`).")),
          sections=_RESPONSES,
          methods=("mcpprobe/no-such-method",),
          how="Sends `mcpprobe/no-such-method`. Error -32601 passes; another error code is a warning; a result "
              "or no answer fails. In 2026-07-28 over streamable HTTP the answer's HTTP status is judged too: "
              "-32601 with any status but 404 fails (basic/transports/streamable-http, \"Protocol Version "
              "Header\"); earlier revisions name no status for it."),
    Check("lifecycle.invalid-params", "prompts/get without a name gets -32602", Level.SHOULD,
          "server/prompts#error-handling",
          (("all", "Servers **SHOULD** return standard JSON-RPC errors for common failure cases: Invalid prompt "
                   "name: `-32602` (Invalid params)"),),
          capability=("prompts",),
          methods=("prompts/get",),
          how="Sends `prompts/get` with no `name`. Error -32602 passes; anything else is a warning."),
    Check("lifecycle.request-id-echo", "string and large integer request ids are echoed exactly", Level.MUST,
          "basic#responses",
          (("2024-11-05 to 2025-06-18", "Requests **MUST** include a string or integer ID. ... Responses "
                                        "**MUST** include the same ID as the request they correspond to."),
           ("2025-11-25 and later", "Requests **MUST** include a string or integer ID. ... Result responses "
                                    "**MUST** include the same ID as the request they correspond to.")),
          sections=_RESPONSES,
          methods=("ping",), methods_for=MappingProxyType(dict.fromkeys(MODERN_VERSIONS, ("server/discover",))),
          how="Sends `ping` (2026-07-28: `server/discover`) twice, with the id `\"mcpprobe-id-7\"` and with "
              "9007199254740991 (2^53-1, exact in every JSON implementation). Each answer must carry the same id, "
              "of the same type."),
    Check("lifecycle.cancel-in-flight", "a cancelled request leaves the session usable", Level.MUST,
          "basic/utilities/cancellation#timing-considerations",
          (("2024-11-05 to 2025-11-25", "Both parties **MUST** handle these race conditions gracefully"),
           ("2026-07-28", "Both parties **MUST** handle these race conditions gracefully")),
          sections={"2026-07-28": "basic/patterns/cancellation#timing-considerations"},
          methods=("notifications/cancelled",),
          how="Sends a list request (or `ping`), then at once `notifications/cancelled` for it, then `ping` "
              "(2026-07-28: `server/discover`), which must be answered. An answer to the cancelled request "
              "itself is allowed (the race the rule names). Nothing waits a fixed time: `ping` is written after "
              "the notification, so its answer alone decides, whatever the machine's speed. The cancelled "
              "request's answer is only told (`detail.cancelledAnswered`), looked for until 4 of `ping`'s round "
              "trips (20 ms at least) after `ping`'s answer, then ignored, as \"the sender of the cancellation "
              "notification SHOULD ignore any response to the request that arrives afterward\" (2025-11-25): "
              "a later answer is never a violation."),
    Check("lifecycle.stdout-clean", "stdout carries nothing but JSON-RPC", Level.MUST, "basic/transports#stdio",
          (("all", "The server **MUST NOT** write anything to its `stdout` that is not a valid MCP message."),),
          transports=("stdio",), sections={"2026-07-28": "basic/transports/stdio"},
          how="Runs last, after the run's stdio shutdown (in every era, whether or not "
              "`lifecycle.stdin-close-exit` is selected): stdin closed, up to 5 s for the server to exit and 1 s "
              "more for its stdout to end. Then looks at every line the server wrote on stdout during the whole "
              "run, what it wrote while exiting included. Sends nothing of its own."),
    Check("lifecycle.stdin-close-exit", "the server exits when its stdin is closed", Level.MAY,
          "basic/lifecycle#stdio",
          (("2024-11-05 to 2025-11-25", "the client **SHOULD** initiate shutdown by: First, closing the input "
                                        "stream to the child process (the server); Waiting for the server to exit, "
                                        "or sending `SIGTERM` if the server does not exit within a reasonable time"),
           ("2026-07-28", "Servers **SHOULD** exit promptly when their standard input is closed")),
          transports=("stdio",), sections={"2026-07-28": "basic/transports/stdio#shutdown"},
          levels=MappingProxyType({"2026-07-28": Level.SHOULD}),
          how="Runs last: closes the server's stdin and measures how long it takes to exit (5 s at most, then "
              "SIGTERM). Slower than that is a warning. A server that had already ended before its stdin was "
              "closed (a crash) is `skipped`: there was no exit to measure."),
    Check("lifecycle.result-type", "every result carries a resultType", Level.MUST, "basic#responses",
          (("2026-07-28", "The `result` **MUST** include a `resultType` field to indicate the type of the result."),),
          revisions=MODERN_VERSIONS,
          how="Looks at every result the server sent during the run (discover, lists, reads, ...). A result "
              "without a string `resultType` fails. Sends nothing of its own."),
    Check("lifecycle.server-info", "every result names the server in its _meta", Level.SHOULD, "basic#meta",
          (("2026-07-28", "Servers **SHOULD** include the following `io.modelcontextprotocol/*` field in every "
                          "result's `_meta`, unless specifically configured not to do so, to identify themselves "
                          "without relying on any prior connection state: `io.modelcontextprotocol/serverInfo` "
                          "(`Implementation`)"),),
          revisions=MODERN_VERSIONS,
          how="Looks at every result the server sent during the run (discover, lists, reads, ...). A result whose "
              "`_meta` has no `io.modelcontextprotocol/serverInfo` object with a string `name` and `version` is a "
              "warning (the first one is named, with the count). Sends nothing of its own."),
    # ----- pagination -----
    Check("pagination.invalid-cursor", "a cursor the server never issued gets -32602", Level.SHOULD,
          "server/utilities/pagination#error-handling",
          (("all", "Invalid cursors **SHOULD** result in an error with code -32602 (Invalid params)."),),
          capability=("tools", "prompts", "resources"),
          methods=("tools/list", "prompts/list", "resources/list"),
          how="Sends the first declared of `tools/list`, `prompts/list`, `resources/list` with the cursor "
              "`mcpprobe-invalid-cursor`. Error -32602 passes; a result or another error is a warning."),
    # ----- listing -----
    Check("listing.complete", "every declared kind lists to the end, every item valid", Level.MUST,
          "server/utilities/pagination#operations-supporting-pagination",
          (("all", "Servers that support tools **MUST** declare the `tools` capability"),
           ("all, schema.ts", "export interface ListToolsResult extends PaginatedResult { tools: Tool[]; } (and "
                              "likewise ListResourcesResult, ListResourceTemplatesResult, ListPromptsResult)"),
           ("2026-07-28", "Servers that declare the `tools` capability **MUST** respond to `tools/list` requests "
                          "(and likewise `resources` and `resources/list`, `prompts` and `prompts/list`)"),
           ("all, pagination", "The following MCP operations support pagination: `resources/list`, "
                               "`resources/templates/list`, `prompts/list`, `tools/list`")),
          capability=("tools", "prompts", "resources"),
          methods=_LISTS,
          how="Lists each declared kind to the end (tools, resources, resource templates, prompts), as `probe` "
              "does. A failed page, a repeated cursor or an item that breaks the revision's schema fails. "
              "`resources/templates/list` answered -32601 is no failure: templates are an optional part of "
              "`resources` (docs/findings.md, \"Which methods a capability obliges\"); the message says so and the "
              "run's findings hold the `not-implemented` note `probe` and `list` give. The link is the pagination "
              "page, which names the four list methods, not one kind's page."),
    Check("listing.stable", "listing twice gives the same items", Level.SHOULD,
          "basic/lifecycle#capability-negotiation",
          (("2024-11-05 to 2025-11-25", "When the list of available tools changes, servers that declared the "
                                        "`listChanged` capability **SHOULD** send a notification (tools.mdx; "
                                        "resources.mdx and prompts.mdx say the same of resources and prompts)"),
           ("2024-11-05 to 2025-11-25", "`listChanged`: Support for list change notifications (for prompts, "
                                        "resources, and tools)"),
           ("2026-07-28", "Servers **SHOULD** return tools in a deterministic order (i.e., the same ordering across "
                          "requests when the underlying set of tools has not changed).")),
          capability=("tools", "prompts", "resources"),
          sections={"2026-07-28": "server/tools#listing-tools"},
          methods=_LISTS, methods_for=MappingProxyType(dict.fromkeys(MODERN_VERSIONS, ("tools/list",))),
          how="Lists each declared kind a second time. Items that changed with `listChanged` declared and no "
              "`list_changed` notification is a warning; in 2026-07-28 only tools are listed again, and tools in "
              "another order is a warning. The link: the capability negotiation, which defines `listChanged` for "
              "the three kinds (2026-07-28: the tools page, the only kind judged)."),
    Check("listing.cache-hints", "discover, list and read results carry ttlMs and cacheScope", Level.MUST,
          "schema#cacheableresult",
          (("2026-07-28, schema.ts", "export interface CacheableResult extends Result { ttlMs: number; cacheScope: "
                                     "\"public\" | \"private\"; } ... DiscoverResult extends CacheableResult; "
                                     "ListToolsResult extends PaginatedResult, CacheableResult (and "
                                     "ListResourcesResult, ListResourceTemplatesResult, ListPromptsResult, "
                                     "ReadResourceResult)"),),
          revisions=MODERN_VERSIONS,
          how="Looks at every result of the run that is a discover, list or read result (by its `supportedVersions`, "
              "`tools`, `resources`, `resourceTemplates`, `prompts` or `contents`). `ttlMs` must be a number of "
              "at least 0 and `cacheScope` `public` or `private`. Sends nothing of its own."),
    Check("listing.icons", "icons use https: or data: URIs", Level.MAY, "basic#icons",
          (("2025-11-25 and later", "Ensure that the icon URI is either a HTTPS or `data:` URI. Clients **MUST** "
                                    "reject icon URIs that use unsafe schemes and redirects, such as `javascript:`, "
                                    "`file:`, `ftp:`, `ws:`, or local app URI schemes."),),
          revisions=("2025-11-25", *MODERN_VERSIONS), capability=("tools", "prompts", "resources"),
          methods=_LISTS,
          how="Looks at the `icons` of every listed tool, prompt, resource and template. An icon whose `src` is "
              "neither `https:` nor `data:` is a warning: clients must reject it, so it is never shown. "
              "Sends nothing more."),
    # ----- tools -----
    Check("tools.name-rules", "tool names follow the naming rules", Level.SHOULD, "server/tools#tool-names",
          (("2025-11-25 and later", "Tool names **SHOULD** be between 1 and 128 characters in length (inclusive). "
                                    "... The following **SHOULD** be the only allowed characters: uppercase and "
                                    "lowercase ASCII letters (A-Z, a-z), digits (0-9), underscore (_), hyphen (-), "
                                    "and dot (.) ... Tool names **SHOULD** be unique within a server."),),
          revisions=("2025-11-25", *MODERN_VERSIONS), capability=("tools",),
          methods=("tools/list",),
          how="Looks at the listed tools' names. Sends nothing more."),
    Check("tools.input-schema", "every inputSchema is an object schema valid under its dialect", Level.MUST,
          "server/tools#tool",
          (("all, schema.ts", "inputSchema: { type: \"object\"; properties?: { [key: string]: object }; ... }"),
           ("2025-11-25 and later", "`inputSchema`: JSON Schema defining expected parameters ... **MUST** be a valid "
                                    "JSON Schema object (not `null`)"),
           ("2025-11-25 and later", "Schemas **MUST** be valid according to their declared or default dialect")),
          capability=("tools",),
          methods=("tools/list",),
          how="Each listed tool's `inputSchema` must be an object with `type: \"object\"`; from 2025-11-25 on it "
              "must also validate against its `$schema` dialect's meta-schema (2020-12 by default)."),
    Check("tools.output-schema", "every outputSchema is an object schema valid under its dialect", Level.MUST,
          "server/tools#output-schema",
          (("2025-06-18 and later, schema.ts", "outputSchema?: { type: \"object\"; properties?: { [key: string]: "
                                               "object }; ... }"),
           ("2025-11-25 and later", "Schemas **MUST** be valid according to their declared or default dialect")),
          revisions=("2025-06-18", "2025-11-25", *MODERN_VERSIONS), capability=("tools",),
          methods=("tools/list",),
          how="As tools.input-schema, for the tools that have an `outputSchema`."),
    Check("tools.call-named", "each tool named with --call answers a valid result", Level.MUST,
          "server/tools#calling-tools",
          (("all", "**Tool Execution Errors**: Reported in tool results with `isError: true`"),
           ("all, schema.ts", "export interface CallToolResult extends Result { content: ...[]; isError?: boolean; }"),
           ("2025-06-18 and later", "Servers **MUST** provide structured results that conform to this schema."),
           ("2026-07-28, the tasks extension (SEP-2663)",
            "interface Task { taskId: string; status: ...; createdAt: string; lastUpdatedAt: string; "
            "ttlMs: number | null; ... } - Servers **MUST** set `resultType` to `\"task\"` when returning a "
            "`CreateTaskResult`"),
           ("2026-07-28, the tasks extension (SEP-2663)",
            "A server **MUST NOT** return `CreateTaskResult` to a client that did not include the extension "
            "capability on its request, regardless of prior declarations."),
           ("2026-07-28, the tasks extension (SEP-2663); JSON-RPC 2.0, section 5.1",
            "If the underlying request resulted in a JSON-RPC error, the task uses `failed` status and the `error` "
            "field **MUST** contain that JSON-RPC error. - code: ... This MUST be an integer. message: A String "
            "providing a short description of the error.")),
          capability=("tools",),
          methods=("tools/call",),
          how="Calls only the tools named with `--call 'TOOL K=V ...'`, through `call`'s catalogue, argument and "
              "confirmation checks, and by `call`'s rule for tasks (in 2026-07-28 the tasks extension is declared "
              "where the server declared it, and a task is polled to its result). A result with a `content` list "
              "passes (an `isError` result too: a tool's own failure is not a protocol failure); "
              "`structuredContent` that breaks the `outputSchema` fails, and so does a task answer without the "
              "fields a `Task` requires (or with `ttlMs`, `pollIntervalMs` of another type), a failed task whose "
              "`error` is no JSON-RPC error, or a task answered to a call that did not declare the tasks extension "
              "(the server did not declare it; the task is not followed). Without --call: skipped, nothing sent. "
              "Each named tool is called once per run: `tasks.ext-created-task-resolves` judges the same calls."),
    Check("tools.call-content", "each content block of a named call's result has what its type requires",
          Level.MUST, "server/tools#tool-result",
          (("2025-06-18 and later", "export type ContentBlock = TextContent | ImageContent | AudioContent | "
                                    "ResourceLink | EmbeddedResource; ... TextContent { type: \"text\"; text: string } "
                                    "... ImageContent { type: \"image\"; /** The base64-encoded image data. @format "
                                    "byte */ data: string; mimeType: string } (AudioContent likewise, type "
                                    "\"audio\") ... ResourceLink { type: \"resource_link\"; uri; name } ... "
                                    "EmbeddedResource { type: \"resource\"; resource: TextResourceContents | "
                                    "BlobResourceContents } (schema.ts; CallToolResult: content: ContentBlock[])"),),
          revisions=("2025-06-18", "2025-11-25", *MODERN_VERSIONS), capability=("tools",),
          methods=("tools/call",),
          how="Only with `--call`, from the calls `tools.call-named` makes (each named tool is called once per "
              "run). Each block of each result's `content` must be one of the five types with its required "
              "fields: `text` a string; `image` and `audio` a `data` string of valid base64 and a `mimeType` "
              "string; `resource_link` a `uri` and a `name`; `resource` a `resource` with a `uri` and a `text` "
              "string or a base64 `blob`. The first broken block of each call is named. Without --call, or no "
              "result with a content list: skipped, nothing sent. Earlier revisions (no `resource_link`): n/a."),
    # ----- resources -----
    Check("resources.read-listed", "listed resources can be read", Level.SHOULD, "server/resources#reading-resources",
          (("all", "To retrieve resource contents, clients send a `resources/read` request; the result's "
                   "`contents` list (ReadResourceResult)"),),
          capability=("resources",),
          methods=("resources/read",),
          how="Reads the first 5 listed resources. An error, or a result without a `contents` list, is a warning."),
    Check("resources.mime-type", "read contents agree with the listed mimeType", Level.MAY,
          "server/resources#resource-contents",
          (("all", "mimeType: The MIME type of this resource, if known."),),
          capability=("resources",),
          methods=("resources/read",),
          how="Compares the `mimeType` of each listed resource read with that of its contents, where both are "
              "given, and text contents of a textual type. A mismatch is a warning."),
    Check("resources.template-expands", "a template without required variables expands and reads", Level.SHOULD,
          "server/resources#resource-templates",
          (("all", "Resource templates allow servers to expose parameterized resources using URI templates "
                   "(RFC 6570)"),),
          capability=("resources",),
          methods=("resources/read",),
          how="Expands a listed template whose variables are all optional (query expressions such as `{?q}`) "
              "with none, and reads it. An error is a warning. None such, or `resources/templates/list` "
              "answered -32601 (an optional part of resources): skipped."),
    Check("resources.unknown-uri", "reading an unknown URI gets the revision's not-found error", Level.SHOULD,
          "server/resources#error-handling",
          (("2024-11-05 to 2025-11-25", "Servers **SHOULD** return standard JSON-RPC errors for common failure "
                                        "cases: Resource not found: `-32002`"),
           ("2026-07-28", "If the requested resource does not exist, servers **MUST** return a JSON-RPC error with "
                          "code `-32602` (Invalid Params). ... Servers **MUST NOT** return an empty `contents` "
                          "array for a non-existent resource.")),
          capability=("resources",), levels=MappingProxyType({"2026-07-28": Level.MUST}),
          methods=("resources/read",),
          how="Reads a URI made up in the scheme of the first listed resource. Legacy: -32002 (or -32602 that "
              "says not found) passes. 2026-07-28: -32602 passes, -32002 or an empty `contents` fails. A URI that "
              "matches a listed template (a catch-all such as `{+path}`) and is read is not judged: `skipped`."),
    Check("resources.subscribe", "resources/subscribe and unsubscribe are answered", Level.MUST,
          "server/resources#subscriptions",
          (("2024-11-05 to 2025-11-25", "`subscribe`: whether the client can subscribe to be notified of changes "
                                        "to individual resources"),),
          revisions=LEGACY_REVISIONS, capability=("resources.subscribe",),
          methods=("resources/subscribe", "resources/unsubscribe"),
          how="Subscribes to the first listed resource, then unsubscribes. An error answer fails. 2026-07-28 "
              "replaced it with `subscriptions/listen` (n/a)."),
    # ----- prompts -----
    Check("prompts.get-listed", "listed prompts expand to messages", Level.SHOULD, "server/prompts#getting-a-prompt",
          (("all", "To retrieve a specific prompt, clients send a `prompts/get` request ... the result's "
                   "`messages` (GetPromptResult)"),
           ("all", "Servers **SHOULD** return standard JSON-RPC errors for common failure cases: Invalid prompt "
                   "name: `-32602` (Invalid params) - Missing required arguments: `-32602` (Invalid params)"),
           (_JSONRPC, "-32602 Invalid params: Invalid method parameter(s).")),
          capability=("prompts",),
          methods=("prompts/get",),
          how="Gets each listed prompt (10 at most) whose arguments are all optional; with --sample-arguments "
              "also the others, with values from completion/complete where declared, else the argument's name. "
              "An error, or no `messages` list, is a warning, except error -32602 to a prompt sent with values "
              "mcpprobe made up: refusing an argument value as invalid params is the server's right, not its "
              "fault, so that prompt is not judged (the message names it); only such prompts sent: skipped."),
    Check("prompts.message-content", "each message of an expanded prompt has a role and a valid content block",
          Level.MUST, "server/prompts#promptmessage",
          (("2025-06-18 and later", "export interface PromptMessage { role: Role; content: ContentBlock; } ... "
                                    "export type Role = \"user\" | \"assistant\"; ... export type ContentBlock = "
                                    "TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource "
                                    "(schema.ts; see `tools.call-content` for each type's fields)"),),
          revisions=("2025-06-18", "2025-11-25", *MODERN_VERSIONS), capability=("prompts",),
          methods=("prompts/get",),
          how="Judges the `prompts/get` results `prompts.get-listed` received (sends nothing of its own): each "
              "message must have the role `user` or `assistant` and a `content` block with what its type "
              "requires (as `tools.call-content` judges a call's blocks). The first broken message of each prompt "
              "is named. No prompt expanded (none without required arguments, or `prompts.get-listed` not run): "
              "skipped. Earlier revisions (no `resource_link`): n/a."),
    # ----- completion, logging, tasks -----
    Check("completion.complete", "completion/complete is answered where completions is declared", Level.MUST,
          "server/utilities/completion#capabilities",
          (("2025-03-26 and later", "Servers that support completions **MUST** declare the `completions` "
                                    "capability"),
           ("all", "values: An array of completion values. Must not exceed 100 items.")),
          capability=("completions",), sections={"2024-11-05": "server/utilities/completion#protocol-messages"},
          methods=("completion/complete",),
          how="Asks completions for the first argument of the first prompt that has one, or the first variable "
              "of the first template. -32601, or a result without `completion.values` (or more than 100), "
              "fails; another error is a warning. Nothing to complete: skipped."),
    # No revision obliges a server that declares `logging` to implement `logging/setLevel` (the
    # client MAY send it; docs/findings.md, "Which methods a capability obliges"): a MAY check, and
    # -32601 is the not-implemented note of an optional part left out (mcpprobe.client.obligations).
    Check("logging.set-level", "logging/setLevel is answered where logging is declared", Level.MAY,
          "server/utilities/logging#setting-log-level",
          (("2024-11-05 to 2025-11-25", "To configure the minimum log level, clients **MAY** send a "
                                        "`logging/setLevel` request; Servers that emit log message notifications "
                                        "**MUST** declare the `logging` capability"),),
          revisions=LEGACY_REVISIONS, capability=("logging",),
          methods=("logging/setLevel",),
          how="Sends `logging/setLevel` with level `info`. A result passes; another error warns. -32601 is neither: "
              "setting the level is an optional part of `logging`, so the check is skipped (nothing to judge) and "
              "the run's findings record the `not-implemented` note (info, exit code unchanged), the implementation "
              "inconsistency a declared capability answered with Method not found is. 2026-07-28 has no "
              "`logging/setLevel` (n/a)."),
    Check("tasks.list", "tasks/list is answered where tasks.list is declared", Level.MUST,
          "basic/utilities/tasks#listing-tasks",
          (("2025-11-25", "`tasks.list`: Server supports the `tasks/list` operation"),),
          revisions=("2025-11-25",), capability=("tasks.list",),
          methods=("tasks/list",),
          how="Sends `tasks/list`. A result with a `tasks` list passes; anything else fails."),
    Check("tasks.unknown-task", "tasks/get of an unknown task id gets -32602", Level.MUST,
          "basic/utilities/tasks#protocol-errors",
          (("2025-11-25", "Receivers **MUST** return standard JSON-RPC errors for the following protocol error "
                          "cases: Invalid or nonexistent `taskId` in `tasks/get` ...: `-32602` (Invalid params)"),),
          revisions=("2025-11-25",), capability=("tasks",),
          methods=("tasks/get",),
          how="Sends `tasks/get` for the task id `mcpprobe-no-such-task`. -32602 passes; anything else fails."),
    # ----- the tasks extension (2026-07-28, SEP-2663) -----
    Check("tasks.ext-unknown-task", "tasks/get of an unknown task id gets -32602", Level.MUST,
          _TASKS_EXT_SEP + "#protocol-errors",
          (("2026-07-28 (SEP-2663)", "Servers **MUST** return standard JSON-RPC errors for the following protocol "
                                     "error cases: Invalid or nonexistent `taskId`: `-32602` (Invalid params) - "
                                     "Servers **MUST** return this error for `tasks/get`."),),
          revisions=MODERN_VERSIONS, capability=(_TASKS_EXT,),
          methods=("tasks/get",),
          how="Sends `tasks/get` for the task id `mcpprobe-no-such-task`, declaring the extension on the request. "
              "-32602 passes; anything else fails."),
    Check("tasks.ext-unknown-task-cancel", "tasks/cancel of an unknown task id gets -32602", Level.SHOULD,
          _TASKS_EXT_SEP + "#protocol-errors",
          (("2026-07-28 (SEP-2663)", "Invalid or nonexistent `taskId`: `-32602` (Invalid params) - Servers "
                                     "**SHOULD** return this error for `tasks/update` and `tasks/cancel`."),),
          revisions=MODERN_VERSIONS, capability=(_TASKS_EXT,),
          methods=("tasks/cancel",),
          how="Sends `tasks/cancel` for the task id `mcpprobe-no-such-task`, declaring the extension on the request "
              "(no task of the server's can be touched: none has that id). -32602 passes; the empty acknowledgement "
              "of a known task, or another error, warns."),
    Check("tasks.ext-unknown-task-update", "tasks/update of an unknown task id gets -32602", Level.SHOULD,
          _TASKS_EXT_SEP + "#protocol-errors",
          (("2026-07-28 (SEP-2663)", "Invalid or nonexistent `taskId`: `-32602` (Invalid params) - Servers "
                                     "**SHOULD** return this error for `tasks/update` and `tasks/cancel`."),),
          revisions=MODERN_VERSIONS, capability=(_TASKS_EXT,),
          methods=("tasks/update",),
          how="Sends `tasks/update` for the task id `mcpprobe-no-such-task` with no input responses "
              "(`inputResponses: {}`), declaring the extension on the request (no task of the server's can be "
              "touched: none has that id). -32602 passes; the empty acknowledgement of a known task, or another "
              "error, warns."),
    Check("tasks.ext-undeclared-client",
          "tasks/get, tasks/update and tasks/cancel from a client that did not declare the extension get -32021",
          Level.MUST, _TASKS_EXT_SEP + "#protocol-errors",
          (("2026-07-28 (SEP-2663)", "Missing required client capabilities: `-32021` (Missing Required Client "
                                     "Capability) - Servers **MUST** return this error for non-declaring clients "
                                     "issuing `tasks/get`, `tasks/update`, and `tasks/cancel` requests."),),
          revisions=MODERN_VERSIONS, capability=(_TASKS_EXT,),
          methods=("tasks/get", "tasks/update", "tasks/cancel"),
          how="Sends `tasks/get`, `tasks/update` (with `inputResponses: {}`) and `tasks/cancel`, each for the task "
              "id `mcpprobe-no-such-task` and without the extension in the request's client capabilities. -32021 "
              "to all three passes; anything else to any of them (a result, -32602 for the id) fails."),
    Check("tasks.ext-no-legacy-capability", "the 2025-11-25 `tasks` capability is not declared beside the extension",
          Level.MUST, _TASKS_EXT_SEP,
          (("2026-07-28 (SEP-2663)", "The `tasks.requests.*`, `tasks.cancel`, and `tasks.list` capability "
                                     "declarations are not part of this extension. Servers that previously "
                                     "advertised these **MUST** migrate to declaring `io.modelcontextprotocol/tasks`, "
                                     "and **MUST NOT** continue to advertise the legacy capabilities under any "
                                     "protocol version that includes this extension."),),
          revisions=MODERN_VERSIONS, capability=(_TASKS_EXT,),
          how="Reads the capabilities the server declared; nothing is sent. A `tasks` capability beside the "
              "extension fails."),
    Check("tasks.ext-no-tasks-result", "tasks/result, which the extension removed, gets -32601", Level.MUST,
          _TASKS_EXT_SEP + "#backward-compatibility",
          (("2026-07-28 (SEP-2663)", "`tasks/result` is removed; clients calling it **MUST** receive `-32601` "
                                     "(Method Not Found)."),),
          revisions=MODERN_VERSIONS, capability=(_TASKS_EXT,),
          methods=("tasks/result",),
          how="Sends `tasks/result` (the 2025-11-25 method) for the task id `mcpprobe-no-such-task`, declaring the "
              "extension on the request. -32601 passes; anything else (-32602 for the id, as a 2025-11-25 handler "
              "would answer, or a result) fails. (The SEP's compatibility table names this revision by its "
              "working date, 2026-06-30; the 2026-07-28 changelog lists SEP-2663.)"),
    Check("tasks.ext-undeclared-listen",
          "task notifications asked on subscriptions/listen by a client that did not declare the extension get "
          "-32021", Level.MUST, _TASKS_EXT_SEP + "#task-status-notifications",
          (("2026-07-28 (SEP-2663)", "If a client requests task status notifications but does not declare the "
                                     "`io.modelcontextprotocol/tasks` extension capability, the server **MUST** "
                                     "return a JSON-RPC error specifying the missing capabilities - Missing required "
                                     "client capabilities: `-32021` (Missing Required Client Capability) - Servers "
                                     "**MUST** return this error for non-declaring clients requesting task "
                                     "notifications on `subscriptions/listen`."),),
          revisions=MODERN_VERSIONS, capability=(_TASKS_EXT,),
          methods=("subscriptions/listen",),
          how="Sends `subscriptions/listen` with `notifications: {\"taskIds\": [\"mcpprobe-no-such-task\"]}` and "
              "without the extension in the request's client capabilities, and waits (at most --timeout) for its "
              "answer or its `notifications/subscriptions/acknowledged`. -32021 passes. An acknowledgement that "
              "honours the `taskIds` (the stream opened for them: mcpprobe cancels it at once with "
              "`notifications/cancelled`), a result, another error, or no answer fails; an acknowledgement without "
              "the `taskIds` (declined, but not with the error; also cancelled) warns. -32601 (a server with no "
              "subscription streams at all, so no task notifications to refuse) is skipped."),
    Check("tasks.ext-created-task-resolves", "a task a named tool call created is found by its first tasks/get",
          Level.MUST, _TASKS_EXT_SEP + "#task-creation",
          (("2026-07-28 (SEP-2663)", "A server **MUST NOT** return `CreateTaskResult` until the task is durably "
                                     "created — that is, until a `tasks/get` for the returned `taskId` would "
                                     "resolve."),),
          revisions=MODERN_VERSIONS, capability=(_TASKS_EXT,),
          methods=("tasks/get",),
          how="Only with `--call 'TOOL K=V ...'`, and from the calls `tools.call-named` makes (each named tool is "
              "called once per run, whichever of the two checks comes first or is chosen alone; nothing else is "
              "sent for this check). For each "
              "named call the server answered with a `CreateTaskResult`, the first `tasks/get` (sent at the task's "
              "`pollIntervalMs`, as `call` polls) must find the task: a -32602 answer to it fails, where the task "
              "was not already ended at creation and less than half its `ttlMs` had run (a task past its ttl may "
              "be purged). A task that was polled passes; a call that did not become a task, or a task never "
              "polled, is not judged (skipped). Without --call: skipped, nothing sent. mcpprobe never cancels a "
              "named task to test `tasks/cancel`: see the tasks extension in docs/commands/check.md."),
    # ----- streamable HTTP -----
    Check("http.origin", "a request from a foreign Origin is refused", Level.MUST, _SECURITY,
          (("2025-03-26 to 2025-06-18", "Servers **MUST** validate the `Origin` header on all incoming connections "
                                        "to prevent DNS rebinding attacks"),
           ("2025-11-25 and later", "Servers **MUST** validate the `Origin` header on all incoming connections to "
                                    "prevent DNS rebinding attacks - If the `Origin` header is present and invalid, "
                                    "servers **MUST** respond with HTTP 403 Forbidden.")),
          revisions=_STREAMABLE, transports=("http",), safe=False,
          sections={"2026-07-28": "basic/transports/streamable-http"},
          how="Sends `ping` (2026-07-28: `server/discover`) in the session with `Origin: "
              "http://mcpprobe-foreign-origin.invalid` (a name that can be no one's, RFC 2606). Accepted fails. "
              "Refused with 403 passes; refused with another 4xx passes before 2025-11-25 and is a warning from "
              "it on (the text names 403). Unsafe: it imitates a cross-site request from a web page, which a "
              "production server's firewall may log as an attack, or block the client for."),
    Check("http.protocol-version", "an unsupported MCP-Protocol-Version gets 400", Level.MUST,
          "basic/transports#protocol-version-header",
          (("2025-06-18 to 2025-11-25", "If the server receives a request with an invalid or unsupported "
                                        "`MCP-Protocol-Version`, it **MUST** respond with `400 Bad Request`."),
           ("2026-07-28", "If the server does not implement the requested protocol version (whether the version is "
                          "unknown to the server, or is a known version the server has chosen not to support), it "
                          "**MUST** respond with `400 Bad Request` and an `UnsupportedProtocolVersionError` listing "
                          "its supported versions.")),
          revisions=("2025-06-18", "2025-11-25", *MODERN_VERSIONS), transports=("http",),
          sections={"2026-07-28": "basic/transports/streamable-http#protocol-version-header"},
          how="Sends `ping` in the session with `MCP-Protocol-Version: 1999-01-01`; 400 passes. 2026-07-28: "
              "`server/discover` whose header and `_meta` both name 1999-01-01 (so that the two agree and only the "
              "version is wrong) must get 400 with error -32022 whose `data.supported` lists versions."),
    Check("http.unknown-session", "a session id the server never issued gets 404", Level.SHOULD, _SESSIONS,
          (("2025-03-26 to 2025-11-25", "The server **MAY** terminate the session at any time, after which it "
                                        "**MUST** respond to requests containing that session ID with HTTP 404 Not "
                                        "Found."),),
          revisions=_SESSION_REVISIONS, transports=("http",),
          how="Where the server issued a session at initialize: sends `ping` with `Mcp-Session-Id: "
              "mcpprobe-unknown-session-0000`. 404 passes; anything else is a warning (the MUST is worded for a "
              "session the server ended, and an id it never issued is one it does not hold). Without a session: "
              "skipped."),
    Check("http.session-delete", "DELETE ends a session, which then gets 404", Level.MUST, _SESSIONS,
          (("2025-03-26 to 2025-11-25", "Clients that no longer need a particular session ... **SHOULD** send an "
                                        "HTTP DELETE to the MCP endpoint with the `Mcp-Session-Id` header, to "
                                        "explicitly terminate the session. The server **MAY** respond to this "
                                        "request with HTTP 405 Method Not Allowed"),
           ("2025-03-26 to 2025-11-25", "The server **MAY** terminate the session at any time, after which it "
                                        "**MUST** respond to requests containing that session ID with HTTP 404 Not "
                                        "Found."),
           ("2025-03-26 to 2025-11-25", "The session ID **MUST** only contain visible ASCII characters (ranging "
                                        "from 0x21 to 0x7E).")),
          revisions=_SESSION_REVISIONS, transports=("http",),
          how="Opens a second session of its own (`initialize`, `notifications/initialized`), so that the run's "
              "lives on, and sends DELETE with its id. 405 passes (the server does not let clients end sessions). "
              "A 2xx, then `ping` with the ended session's id: 404 passes, anything else fails. Another answer to "
              "DELETE is a warning. A session id that is not visible ASCII fails, and is never sent back. Without "
              "sessions: skipped."),
    Check("http.get-stream", "GET answers an event stream or 405", Level.MUST,
          "basic/transports#listening-for-messages-from-the-server",
          (("2025-03-26 to 2025-11-25", "The server **MUST** either return `Content-Type: text/event-stream` in "
                                        "response to this HTTP GET, or else return HTTP 405 Method Not Allowed, "
                                        "indicating that the server does not offer an SSE stream at this "
                                        "endpoint."),),
          revisions=_SESSION_REVISIONS, transports=("http",),
          how="Sends GET with `Accept: text/event-stream` and the session's headers, and closes the stream as soon "
              "as its headers are in. 200 `text/event-stream` or 405 passes; anything else fails. 2026-07-28 "
              "removed the GET stream (n/a)."),
    Check("http.batch", "a JSON-RPC batch is refused", Level.MAY, "basic/transports#sending-messages-to-the-server",
          (("2025-06-18 to 2025-11-25", "The body of the POST request **MUST** be a single JSON-RPC _request_, "
                                        "_notification_, or _response_."),
           ("2026-07-28", "The body of the HTTP POST **MUST** be a single JSON-RPC _request_ or _notification_.")),
          revisions=("2025-06-18", "2025-11-25", *MODERN_VERSIONS), transports=("http",),
          sections={"2026-07-28": "basic/transports/streamable-http#sending-messages"},
          how="POSTs an array of two `ping` (2026-07-28: `server/discover`) requests. An HTTP error, or a "
              "JSON-RPC error alone, passes; answers to the batch are a warning. The rule binds clients, and no "
              "words oblige a server to refuse a batch, so this is no more than a warning at level MAY "
              "(2025-03-26 allowed batches: n/a)."),
    Check("http.notification", "a notification gets 202 Accepted with no body", Level.MUST,
          "basic/transports#sending-messages-to-the-server",
          (("2025-03-26 to 2025-11-25", "If the input is a JSON-RPC _response_ or _notification_: If the server "
                                        "accepts the input, the server **MUST** return HTTP status code 202 "
                                        "Accepted with no body. If the server cannot accept the input, it **MUST** "
                                        "return an HTTP error status code (e.g., 400 Bad Request)."),
           ("2026-07-28", "If the body is a JSON-RPC _notification_: If the server accepts it, the server **MUST** "
                          "return HTTP status code `202 Accepted` with no body.")),
          revisions=_STREAMABLE, transports=("http",),
          sections={"2026-07-28": "basic/transports/streamable-http#sending-messages"},
          how="POSTs `notifications/cancelled` for a request id never sent (\"Invalid cancellation notifications "
              "SHOULD be ignored\", so it changes nothing). 202 with no body passes, and so does an HTTP error "
              "(the server cannot accept it, which it may say); 202 with a body, or a 2xx other than 202, fails. A "
              "202 whose body has not ended within --timeout (5 s at most) is an `error`: no body was seen, nor its "
              "absence."),
    Check("http.method-header", "an Mcp-Method header that contradicts the body gets 400 and -32020", Level.MUST,
          "basic/transports/streamable-http#server-validation",
          (("2026-07-28", "Servers that process the request body **MUST** reject requests where the values "
                          "specified in the headers do not match the corresponding values in the request body. ... "
                          "servers **MUST** return HTTP status `400 Bad Request` and **MUST** include a JSON-RPC "
                          "error response using the following error code: `-32020` HeaderMismatch"),),
          revisions=MODERN_VERSIONS, transports=("http",),
          how="Sends `server/discover` with `Mcp-Method: tools/list`. 400 with error -32020 passes; anything else "
              "fails."),
    Check("http.name-header", "an Mcp-Name header that contradicts the body gets 400 and -32020", Level.MUST,
          "basic/transports/streamable-http#server-validation",
          (("2026-07-28", "`Mcp-Name`: `params.name` or `params.uri`, for `tools/call`, `resources/read`, "
                          "`prompts/get` requests. ... Servers that process the request body **MUST** reject "
                          "requests where the values specified in the headers do not match the corresponding "
                          "values in the request body."),),
          revisions=MODERN_VERSIONS, transports=("http",), capability=("resources", "prompts"),
          methods=("resources/read", "prompts/get"),
          how="Sends `resources/read` of the first listed resource (else `prompts/get` of a listed prompt whose "
              "arguments are all optional; never `tools/call`) with `Mcp-Name: mcpprobe-mismatched-name`. 400 "
              "with error -32020 passes; anything else fails. Nothing to read: skipped."),
    Check("http.method-header-missing", "a request without Mcp-Method gets 400 and -32020", Level.MUST,
          "basic/transports/streamable-http#server-validation",
          (("2026-07-28", "`Mcp-Method`: `method` ... All requests. These headers are **REQUIRED** for compliance. "
                          "... Validation failure conditions include: - A required standard header "
                          "(`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`) is missing. ... When rejecting a "
                          "request due to header validation failure, servers **MUST** return HTTP status `400 Bad "
                          "Request` and **MUST** include a JSON-RPC error response using the following error code: "
                          "`-32020` HeaderMismatch"),),
          revisions=MODERN_VERSIONS, transports=("http",),
          how="Sends `server/discover` as the connection would, `MCP-Protocol-Version` included, but without "
              "`Mcp-Method`. 400 with error -32020 passes; a result, or another answer, fails. (A missing "
              "`MCP-Protocol-Version` is not sent: a server that serves clients older than 2025-06-18 MAY take "
              "it for 2025-03-26.)"),
    Check("http.meta-required", "a request without a required _meta field gets 400 and -32602", Level.MUST,
          "basic#meta",
          (("2026-07-28", "Client requests carry the following `io.modelcontextprotocol/*` fields in `_meta`; fields "
                          "marked as required **MUST** be included on every request. ... "
                          "`io.modelcontextprotocol/clientCapabilities` ... Required: Yes ... A request missing any "
                          "required field is malformed; the server **MUST** reject it with JSON-RPC error code "
                          "`-32602` (Invalid params). On HTTP, the response status **MUST** be `400 Bad Request`."),),
          revisions=MODERN_VERSIONS, transports=("http",),
          how="Sends `server/discover` as the connection would (its headers and `io.modelcontextprotocol/"
              "protocolVersion` kept, so that it is a 2026-07-28 request beyond doubt) but without "
              "`io.modelcontextprotocol/clientCapabilities` in `_meta`. 400 with error -32602 passes; a result, "
              "or another answer, fails. HTTP only for now: the rule holds over stdio too (-32602), but the stdio "
              "connection always writes the field."),
    Check("http.header-case", "Mcp-Method's name is matched in any case, its value exactly", Level.MUST,
          "basic/transports/streamable-http#case-sensitivity",
          (("2026-07-28", "Header names (called \"field names\" in RFC 9110) are case-insensitive. Clients and "
                          "servers **MUST** use case-insensitive comparisons for header names. Header _values_ "
                          "(such as method names) are case-sensitive."),
           ("2026-07-28", "Servers that process the request body **MUST** reject requests where the values "
                          "specified in the headers do not match the corresponding values in the request body. ... "
                          "servers **MUST** return HTTP status `400 Bad Request` and **MUST** include a JSON-RPC "
                          "error response using the following error code: `-32020` HeaderMismatch")),
          revisions=MODERN_VERSIONS, transports=("http",),
          how="Sends `server/discover` twice: with the header named `MCP-METHOD` (its value right), which must be "
              "answered with a result; and with `Mcp-Method: SERVER/DISCOVER`, which must get 400 with error "
              "-32020 (the value differs from the body's `method` in case, and values are compared exactly). "
              "Either answered otherwise fails. Values with surrounding whitespace (which RFC 9110 has parsers "
              "strip) are not sent: the HTTP client refuses to write them."),
    # (mcpprobe.check.streams: the http checks that read whole event streams; mcpprobe.check.param_headers:
    # x-mcp-header's server side)
    Check("http.concurrent-requests", "a few requests in flight at once are each answered with their own id",
          Level.MUST, "basic/transports#multiple-connections",
          (("2025-03-26 to 2025-11-25", "If the input is a JSON-RPC _request_, the server **MUST** either return "
                                        "`Content-Type: text/event-stream`, to initiate an SSE stream, or "
                                        "`Content-Type: application/json`, to return one JSON object. ... The SSE "
                                        "stream **SHOULD** eventually include a JSON-RPC _response_ for the JSON-RPC "
                                        "_request_ sent in the POST body. (2025-03-26: \"one JSON-RPC _response_ per "
                                        "each JSON-RPC _request_ sent in the POST body\")"),
           ("2025-03-26 to 2025-11-25", "The client **MAY** remain connected to multiple SSE streams simultaneously. "
                                        "The server **MUST** send each of its JSON-RPC messages on only one of the "
                                        "connected streams; that is, it **MUST NOT** broadcast the same message "
                                        "across multiple streams."),
           ("2026-07-28", "If the body is a JSON-RPC _request_, the server **MUST** return either `Content-Type: "
                          "application/json` (a single JSON object) or `Content-Type: text/event-stream` (an SSE "
                          "response stream). ... The server answers each request with either a single JSON object or "
                          "a Server-Sent Events (SSE) stream scoped to that request, carrying request-related "
                          "notifications followed by the final response."),
           ("all", "Responses **MUST** include the same ID as the request they correspond to.")),
          revisions=_STREAMABLE, transports=("http",),
          sections={"2026-07-28": "basic/transports/streamable-http#sending-messages"},
          how="POSTs three `ping` requests (2026-07-28: `server/discover`) at once, each with an id of its own, and "
              "keeps each answer open until all three were read (so that the server has them in flight together; "
              "each read ends at its own response, all within --timeout). Each must be answered with "
              "application/json or text/event-stream (another answer fails; HTTP 429 or 503, a refusal for load, "
              "is a warning); a JSON answer must carry its request's id (fails otherwise); the same response on two "
              "streams fails (2025-03-26 to 2025-11-25: no broadcast). An event stream that carries another "
              "request's response, or ends (or stays silent past --timeout) without its own, is a warning (the "
              "SHOULD). JSON answers are as right as event streams."),
    Check("http.sse-priming", "an event stream answering a POST opens with an event id and empty data",
          Level.SHOULD, "basic/transports#sending-messages-to-the-server",
          (("2025-11-25", "If the server initiates an SSE stream: The server **SHOULD** immediately send an SSE event "
                          "consisting of an event ID and an empty `data` field in order to prime the client to "
                          "reconnect (using that event ID as `Last-Event-ID`)."),),
          revisions=("2025-11-25",), transports=("http",),
          how="POSTs `ping` and reads the answer to its response. An event stream whose first event has an id and "
              "empty data passes; one that opens otherwise is a warning. An application/json answer is n/a (the "
              "server may answer so; SEP-1699 primes event streams only). The `retry` field is not judged here: it "
              "is asked only of a server that closes a stream before its response (`http.sse-retry`)."),
    Check("http.sse-retry", "an event stream closed before its response sets retry, and resuming it brings the "
                            "response", Level.SHOULD, "basic/transports#sending-messages-to-the-server",
          (("2025-11-25", "After the server has sent an SSE event with an event ID to the client, the server **MAY** "
                          "close the _connection_ (without terminating the _SSE stream_) at any time in order to "
                          "avoid holding a long-lived connection. ... If the server does close the _connection_ "
                          "prior to terminating the _SSE stream_, it **SHOULD** send an SSE event with a standard "
                          "`retry` field before closing the connection. ... The SSE stream **SHOULD** eventually "
                          "include a JSON-RPC _response_ for the JSON-RPC _request_ sent in the POST body."),),
          revisions=("2025-11-25",), transports=("http",),
          how="POSTs `ping` and reads the event stream it is answered with. Where the server closes it after an "
              "event id and before the response (a server that polls: SEP-1699), the stream must have carried a "
              "`retry` field, and resuming it as a client does (after the `retry` time, GET with `Last-Event-ID`, "
              "twice at most, within --timeout) must bring the response; either missing is a warning, and so is a "
              "stream that ends before its response with no event id at all. A stream that brings its response, "
              "or a JSON answer, is n/a: the server did not close early, which it need not. The conformance "
              "suite provokes the early close with its fixture tool `test_reconnection`; `ping` judges only a "
              "server that closes every stream so."),
    Check("http.sse-resume", "a GET with Last-Event-ID resumes that stream or gets 405, never another stream's",
          Level.MUST, "basic/transports#resumability-and-redelivery",
          (("2025-03-26 to 2025-11-25", "If the client wishes to resume after a broken connection, it **SHOULD** "
                                        "issue an HTTP GET to the MCP endpoint, and include the `Last-Event-ID` header "
                                        "... The server **MAY** use this header to replay messages that would have "
                                        "been sent after the last event ID, _on the stream that was disconnected_, "
                                        "and to resume the stream from that point. The server **MUST NOT** replay "
                                        "messages that would have been delivered on a different stream."),
           ("2025-03-26 to 2025-11-25", "The server **MUST** either return `Content-Type: text/event-stream` in "
                                        "response to this HTTP GET, or else return HTTP 405 Method Not Allowed ... "
                                        "The server **MUST NOT** send a JSON-RPC _response_ on the stream **unless** "
                                        "resuming a stream associated with a previous client request.")),
          revisions=_SESSION_REVISIONS, transports=("http",),
          how="POSTs `ping` twice and reads both answers to their responses. Where the first is an event stream "
              "with event ids, sends GET with `Last-Event-ID` set to the first id of that stream, and reads the "
              "resumed stream until it ends, or for 10 times the slowest round trip of the two POSTs (at least 1 "
              "s, at most --timeout: an event store writes its replay as the stream opens). 405 passes (no "
              "resumption, which the server may); an event stream passes when it carries nothing of the other "
              "stream (replaying the first `ping`'s response is resuming it); the other `ping`'s response, or an "
              "event with one of the other stream's ids, fails. Another answer to the GET is a warning "
              "(`http.get-stream` judges the plain GET). A JSON answer, or a stream without event ids, is n/a: "
              "there is nothing to resume. Closing a stream early is the server's choice, never asked of it here; "
              "2026-07-28 removed resumption (n/a)."),
    Check("http.param-header", "a tools/call whose Mcp-Param header contradicts the body, or lacks it, gets 400 and "
                               "-32020", Level.MUST,
          "basic/transports/streamable-http#server-behavior-for-custom-headers",
          (("2026-07-28", "Any server that processes the message body **MUST** validate that encoded header values, "
                          "after decoding if Base64-encoded, match the corresponding values in the request body. "
                          "Servers **MUST** reject requests with a `400 Bad Request` HTTP status and JSON-RPC error "
                          "code `-32020` (`HeaderMismatch`) if any validation fails. ... Client omits header but "
                          "value is in body: Non-conforming client; Server MUST reject the request"),
           ("2026-07-28", "Servers that process the request body **MUST** reject requests where the values specified "
                          "in the headers do not match the corresponding values in the request body. This prevents "
                          "potential security vulnerabilities when different components in the network rely on "
                          "different sources of truth (e.g., a load balancer routing on the header value while the "
                          "MCP server executes based on the body value).")),
          revisions=MODERN_VERSIONS, transports=("http",), capability=("tools",),
          methods=("tools/call",),
          how="Only with `--call 'TOOL K=V ...'`, after the named call (`tools.call-named`, made once per run, with "
              "its confirmation), for each named tool whose inputSchema marks a parameter with `x-mcp-header` and "
              "whose arguments give it a value, and whose call got a result (not a task: sent again, the call would "
              "make another). Sends the same `tools/call` with that "
              "parameter's `Mcp-Param-*` header contradicting the body (another string; the integer one off; the "
              "other boolean), then with the header left out: each must get 400 with error -32020. A result fails "
              "(and stops: nothing more is sent), as does any other answer. A server that follows the rule rejects "
              "these requests, so the tool is not run again: \"reject\" the request, and the rule exists so that "
              "no server \"executes based on the body value\" a header contradicts. A server that breaks it may "
              "run the tool once more with the named arguments, so the requests are sent only for a tool marked "
              "read-only (`readOnlyHint: true`) or with --yes; a yes at the terminal confirms the named call alone "
              "(skipped, saying why). No named tool with such a parameter: skipped, nothing sent. The suite's "
              "Base64 cases that a server must accept are not sent: each would run the tool again."),
    # ----- authorization -----
    Check("auth.challenge", "a 401 says where the protected resource metadata is", Level.MUST,
          "basic/authorization#protected-resource-metadata-discovery-requirements",
          (("2025-06-18", "MCP servers **MUST** use the HTTP header `WWW-Authenticate` when returning a _401 "
                          "Unauthorized_ to indicate the location of the resource server metadata URL as described in "
                          "RFC9728 Section 5.1 \"WWW-Authenticate Response\"."),
           ("2025-11-25 and later", "MCP servers **MUST** implement one of the following discovery mechanisms to "
                                    "provide authorization server location information to MCP clients: 1. "
                                    "**WWW-Authenticate Header**: Include the resource metadata URL in the "
                                    "`WWW-Authenticate` HTTP header under `resource_metadata` when returning `401 "
                                    "Unauthorized` responses ... 2. **Well-Known URI**: Serve metadata at a "
                                    "well-known URI as specified in RFC9728."),
           _SHOULD_CONFORM),
          revisions=_AUTH, transports=("http", "sse"), sections=_AUTH_DISCOVERY_SECTIONS,
          how="Judges the server's answer to the connection when it is HTTP 401 (with no token, or a refused one); "
              "sends nothing of its own. 2025-06-18: the Bearer challenge must carry `resource_metadata`. 2025-11-25 "
              "on: that, or the metadata served at a well-known URI (RFC 9728). A `resource_metadata` that is no "
              "absolute http(s) URL (empty, a relative reference such as `/.well-known/...`, another scheme, one "
              "that does not parse) never passes: RFC 9728 section 5.1 defines it as \"The URL of the protected "
              "resource metadata\", and clients \"MUST ... use the resource metadata URL from the parsed "
              "WWW-Authenticate headers when present\" (2025-11-25 on). 2025-06-18, or no metadata at a well-known "
              "URI either: fail; 2025-11-25 on with the metadata at a well-known URI (the MUST met that way): "
              "warn. The MUSTs bind a server that does "
              "the specification's OAuth: a 401 with no sign of it (no `resource_metadata`, no metadata document "
              "at any well-known URI; a static bearer token, say) is a warning quoting \"SHOULD conform\", never a "
              "failure. No 401: n/a without credentials (authorization is OPTIONAL), skipped with them."),
    Check("auth.resource-metadata", "the protected resource metadata is valid and names an authorization server",
          Level.MUST, "basic/authorization#authorization-server-location",
          (("2025-06-18 and later", "MCP servers **MUST** implement the OAuth 2.0 Protected Resource Metadata "
                                    "(RFC9728) specification to indicate the locations of authorization servers. The "
                                    "Protected Resource Metadata document returned by the MCP server **MUST** "
                                    "include the `authorization_servers` field containing at least one "
                                    "authorization server."),
           _SHOULD_CONFORM),
          revisions=_AUTH, transports=("http", "sse"),
          sections={"2026-07-28": "basic/authorization/authorization-server-discovery#authorization-server-location"},
          how="After a 401: the diagnosis fetches the document from the challenge's `resource_metadata`, then the "
              "path-aware and the root well-known URIs, with none of the user's credentials. A JSON object with an "
              "http(s) `resource` and a non-empty `authorization_servers` list passes; none valid (a malformed one), "
              "or none found where the challenge named one, fails. None found and no `resource_metadata` in the "
              "challenge (a server protected without OAuth, such as by a static bearer token) is a warning quoting "
              "\"SHOULD conform\"."),
    Check("auth.server-metadata", "the authorization server's metadata is reachable and valid", Level.MUST,
          "basic/authorization#authorization-server-metadata-discovery",
          (("2025-06-18", "Authorization servers **MUST** provide OAuth 2.0 Authorization Server Metadata (RFC8414)."),
           ("2025-11-25 and later", "MCP authorization servers **MUST** provide at least one of the following "
                                    "discovery mechanisms: OAuth 2.0 Authorization Server Metadata (RFC8414), "
                                    "OpenID Connect Discovery 1.0")),
          revisions=_AUTH, transports=("http", "sse"),
          sections={"2025-06-18": "basic/authorization#server-metadata-discovery",
                    "2026-07-28": "basic/authorization/authorization-server-discovery"
                                  "#authorization-server-metadata-discovery"},
          how="After a 401: the diagnosis fetches the first authorization server's RFC 8414 and OpenID Connect "
              "documents in the specification's order. One with the right `issuer`, a `token_endpoint` and (for "
              "the code flow) an `authorization_endpoint` passes; none fails. Skipped when no protected resource "
              "metadata named a server."),
    # ----- portability -----
    Check("portability.schema-constructs", "tool schemas avoid constructs some hosts reject", Level.MAY,
          "basic#json-schema-usage",
          (("all", "No rule of the specification: JSON Schema allows these constructs. Some MCP hosts and model "
                   "APIs accept only a subset of it"),),
          capability=("tools",), sections={"2024-11-05": "server/tools", "2025-03-26": "server/tools",
                                           "2025-06-18": "server/tools"},
          methods=("tools/list",),
          how="Warns, tool by tool, for a boolean subschema, a `type` array with `null`, a `$ref` that does not "
              "point into `$defs`, and `oneOf`/`anyOf`/`allOf` at the top level of an inputSchema."),
    # ----- suite: the conformance suite's fixtures (--suite-fixtures) -----
    *_suite_rows(),
    *_mrtr_rows(),
)

BY_ID: Mapping[str, Check] = MappingProxyType({check.id: check for check in CHECKS})


def family(name: str) -> Family:
    return next(f for f in FAMILIES if f.name == name)


def selected(pattern: str, check: Check) -> bool:
    """`--only`/`--skip` patterns: a check id, or a family name (`lifecycle`, `lifecycle.*`)."""
    pattern = pattern.strip()
    if pattern.endswith(".*"):
        pattern = pattern[:-2]
    return check.id == pattern or check.family == pattern


def unknown_patterns(patterns: tuple[str, ...]) -> list[str]:
    return [p for p in patterns if not any(selected(p, check) for check in CHECKS)]
