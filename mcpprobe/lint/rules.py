"""The lint rules, as data: one row per rule (code, predicate, severity, rationale).

Text rules match the fields a model reads (descriptions, titles, argument descriptions, prompt
texts, instructions). They are heuristics, so none is an error: `--lint=strict` raises the
warnings to errors for those who want a gate (docs/findings.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mcpprobe.findings import Severity


@dataclass(frozen=True)
class TextRule:
    code: str
    pattern: re.Pattern[str]
    severity: Severity
    rationale: str


# Up to N characters within one sentence: a dot counts only when a space follows it, so that
# "~/.cursor/mcp.json" stays one phrase.
def _near(n: int) -> str:
    return rf"(?:[^.\n]|\.(?=\S)){{0,{n}}}?"


def _rx(*alternatives: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{a})" for a in alternatives), re.IGNORECASE)


_THE_USER = r"(?:the\s+)?(?:user|human|operator|person)s?"
_SENSITIVE = (r"~/\.ssh\b|\bid_(?:rsa|ed25519|ecdsa)\b|\.aws/credentials|\.netrc\b|/etc/(?:passwd|shadow)\b"
              r"|\.config/gcloud|\bmcp\.json\b|claude_desktop_config\.json|\.env\b(?!ironment)")

# Tags of markup aimed at a model. In lowercase and alone, <secret> is a placeholder ("token=<secret>"),
# not markup: a lowercase tag counts only with its closing tag; a capitalised or shouted one always.
_TAGS = r"important|system|instructions?|secret|hidden|admin|critical|override"
_SHOUTED = "|".join(f"{t.upper()}|{t.capitalize()}" for t in ("important", "system", "instruction", "instructions",
                                                               "secret", "hidden", "admin", "critical", "override"))

TEXT_RULES: tuple[TextRule, ...] = (
    TextRule(
        "lint-override-instructions",
        _rx(r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:the\s+|your\s+)?"
            r"(?:previous|prior|above|earlier|other|system|original)\s+(?:instructions|prompts?|rules|directions)",
            r"\byou\s+(?:must|should)\s+now\s+(?:ignore|act\s+as)\b",
            r"\bnew\s+instructions\s*:"),
        Severity.WARNING,
        "Text that tells the model to set aside its instructions is the core of prompt injection; a tool's "
        "description has no reason to address the model's other instructions."),
    TextRule(
        "lint-conceal-from-user",
        _rx(rf"\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|mention|reveal|show|notify|alert)\b{_near(80)}"
            rf"\b{_THE_USER}",
            rf"\bwithout\s+(?:telling|informing|notifying|alerting|asking)\s+{_THE_USER}",
            rf"\b(?:hide|conceal|keep)\s+(?:this|it|these|that)\b{_near(40)}\b(?:from|secret\s+from)\s+"
            rf"{_THE_USER}",
            r"\b(?:keep\s+this\s+secret|this\s+is\s+(?:very\s+)?secret)\b"),
        Severity.WARNING,
        "A tool that asks the model to keep something from the user works against the person the model "
        "serves; honest tools have nothing to hide from the user."),
    TextRule(
        "lint-read-sensitive-file",
        _rx(rf"\b(?:read|open|cat|load|include|attach|pass|send|get|fetch|contents?\s+of)\b{_near(60)}"
            rf"(?:{_SENSITIVE})"),
        Severity.WARNING,
        "Asking the model to read keys, credentials or client configs and put them in an argument is the "
        "classic tool-poisoning payload."),
    TextRule(
        "lint-send-data",
        _rx(r"\b(?:send|post|upload|forward|exfiltrate|transmit|copy|bcc|cc)\b" + _near(60) + r"\bto\s+"
            r"(?:https?://|[\w.+-]+@[\w-]+\.[\w.]+|the\s+following\s+(?:url|address|email|endpoint))"),
        Severity.WARNING,
        "A description that tells the model to send data to a fixed address outside the call is how "
        "poisoned tools move data out."),
    TextRule(
        "lint-shouting-markup",
        _rx(rf"<\s*/?\s*(?-i:{_SHOUTED})\s*>",  # <IMPORTANT>, </System>: written to be noticed
            rf"<\s*/\s*(?:{_TAGS})\s*>",  # a closing tag is never a placeholder
            rf"<\s*(?P<tag>{_TAGS})\s*>(?:.|\n){{0,2000}}?<\s*/\s*(?P=tag)\s*>",  # a lowercase element: paired
            r"\[\s*(?:system|important|instructions?)\s*\]",
            r"\bIMPORTANT\s*:"),
        Severity.WARNING,
        "Tags such as <IMPORTANT> or [SYSTEM] in a description are written for a model, not for a person "
        "reading the tool list; they mark text meant to take priority."),
)

# Descriptions: more than this many characters is "far longer than a tool needs" (docs/findings.md).
LONG_DESCRIPTION = 2000
LONG_DESCRIPTION_SEVERITY = Severity.INFO
LONG_DESCRIPTION_RATIONALE = ("Every word of a description is sent to the model on every turn; a very long one "
                              "costs tokens and has room to hide instructions.")

# Token estimate: characters of the catalogue's JSON divided by this (a common rule of thumb for
# English text with BPE tokenizers; documented as an estimate, not a count).
CHARS_PER_TOKEN = 4

# Tool names whose words mean the tool changes or deletes something: a read-only hint on one of
# them contradicts its own name.
DESTRUCTIVE_WORDS = frozenset({
    "delete", "remove", "rm", "drop", "destroy", "erase", "purge", "wipe", "truncate", "kill", "terminate",
    "write", "overwrite", "create", "update", "insert", "set", "put", "patch", "move", "rename", "send",
    "post", "upload", "publish", "deploy", "execute", "exec", "run", "install", "uninstall", "reset",
})
READ_WORDS = frozenset({"get", "list", "read", "search", "find", "show", "describe", "fetch", "query", "view",
                        "lookup", "count", "check", "inspect", "stat", "cat", "head", "tail"})

# Verbs that end a tool name named namespace first ("deploy_app_logs_get", "files_delete"): words no
# noun is spelled like, so that "update_list" (a list updated) is not taken for a listing.
TRAILING_VERBS = frozenset({"get", "read", "fetch", "describe", "lookup", "delete", "remove", "erase", "purge",
                            "overwrite", "insert", "rename", "upload", "uninstall"})

ANNOTATION_RATIONALE = ("ToolAnnotations: readOnlyHint true means the tool does not modify its environment; "
                        "destructiveHint and idempotentHint are meaningful only when readOnlyHint is false. "
                        "A client that trusts the hints to skip a confirmation is misled by a contradiction.")
NAME_RATIONALE = ("A tool whose name says it changes something (delete_file) but whose readOnlyHint says it does "
                  "not is either mislabelled or hiding what it does; clients may skip confirmations for "
                  "read-only tools.")
REFERENCE_RATIONALE = ("A description that names another tool steers the model's use of that tool; across "
                       "servers it is how one server shadows or hijacks another's tools.")
