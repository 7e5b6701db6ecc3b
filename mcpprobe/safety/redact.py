"""Keep the user's secrets out of everything mcpprobe prints.

What is a secret is decided by what the user gave, never by where a value shows up:

- the value of a credential-like header (`secret_name`: Authorization, cookies, API keys,
  passwords, ...) and, for `Bearer <token>`, the token alone;
- the value of an `--env` or config `env` variable whose *name* is credential-like
  (`GITHUB_TOKEN`, `DB_PASSWORD`, `AWS_SECRET_ACCESS_KEY`); `MODE=tools` is not a secret;
- the password of a URL with credentials in any such value (`postgres://user:PASSWORD@host`);
- values a config file expands from the environment or from a VS Code input (`${VAR}`,
  `${input:ID}`), and tokens mcpprobe obtains itself (`--bearer-env`, stored or fresh tokens).

A server may echo a secret back (in stderr, an error message, a stray stdout line), so every
text is masked before it is cut short or written, wherever it came from; `SplitWrites` masks a
secret that arrives in pieces. Values shorter than `MIN_LENGTH`, bare numbers and common setting
words are never masked: masking them would blank out ordinary output and protect nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any, TextIO

MASK = "[redacted]"
MIN_LENGTH = 6
# Values that are settings, not secrets: masking them would blank out ordinary output
# ("10000 items", "production") and protect nothing.
NOT_SECRET_WORDS = {"true", "false", "yes", "no", "on", "off", "none", "null", "debug", "info", "warn", "warning",
                    "error", "trace", "production", "development", "staging", "test"}
# One list for header names and environment variable names, for --trace and everything else.
# A name containing any of these (in any case) holds a credential. Deliberately broad: `PASS`
# covers PASSWORD, PASSWD and PASSPHRASE; `AUTH` covers Authorization, X-Auth and OAUTH_*;
# `KEY` covers API keys; `SESSION` session cookies and tokens.
SECRET_NAME_WORDS = ("auth", "token", "secret", "key", "pass", "credential", "cookie", "session", "private",
                     "signature", "dsn")
# Protocol headers whose names contain one of the words but whose values are the protocol's own
# bookkeeping, shown in --trace for debugging.
NOT_SECRET_NAMES = frozenset({"mcp-session-id"})
_URL_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#@:\s]*:([^/?#@\s]+)@")


def secret_name(name: str) -> bool:
    """Whether a header or environment variable of this name holds a credential."""
    lowered = name.lower()
    return lowered not in NOT_SECRET_NAMES and any(word in lowered for word in SECRET_NAME_WORDS)


def secret_values(pairs: Iterable[tuple[str, str]]) -> list[str]:
    """The secrets among (name, value) pairs: values of credential-like names, the token of
    `Bearer <token>`, and passwords of URLs with credentials in any value."""
    found: list[str] = []
    for name, value in pairs:
        if not value:
            continue
        if secret_name(name):
            found.append(value)
            scheme_and_token = value.split(None, 1)
            if len(scheme_and_token) == 2:
                found.append(scheme_and_token[1])
        found.extend(m.group(1) for m in _URL_PASSWORD.finditer(value))
    return found


def is_maskable(value: str) -> bool:
    """Whether a value is worth masking: long enough, not a bare number, not a common setting."""
    stripped = value.strip()
    return (len(stripped) >= MIN_LENGTH and not stripped.lstrip("+-").replace(".", "", 1).isdigit()
            and stripped.lower() not in NOT_SECRET_WORDS)


def _forms(secret: str) -> set[str]:
    """Every way `secret` can show up in text: as is, inside a JSON string, as Python writes it in
    an error message (`repr`, of the text or of its bytes: "Illegal header value b'Bearer ...'" for
    a token with CR/LF in it), and as `sanitize.visible` shows it. No form is part of another, so
    that `SplitWrites` shows exactly what one-piece masking shows."""
    if not is_maskable(secret):
        return set()
    forms = {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1], repr(secret)[1:-1]}
    if not _LONE_SURROGATE.search(secret):  # a lone surrogate has no bytes form
        forms.add(repr(secret.encode("utf-8"))[2:-1])
    if not secret.isprintable():
        from mcpprobe.safety.sanitize import visible

        forms.add(visible(secret))
        forms.add(visible(secret, multiline=True))
    return {form for form in forms if form}


class Redactor:
    def __init__(self, secrets: Iterable[str]) -> None:
        forms: set[str] = set()
        for secret in secrets:
            forms |= _forms(secret)
        # Longest first, so that a secret containing another is masked whole.
        self._forms = sorted(forms, key=len, reverse=True)
        self.longest = len(self._forms[0]) if self._forms else 0
        self.multiline = any("\n" in form or "\r" in form for form in self._forms)

    def __call__(self, text: str) -> str:
        for form in self._forms:
            if form in text:
                text = text.replace(form, MASK)
        return text

    def __bool__(self) -> bool:
        return bool(self._forms)

    def learn(self, *secrets: str) -> None:
        """Mask `secrets` from now on too: a token renewed during the run. In place, so every stream
        that holds this redactor masks them."""
        forms = set(self._forms) | set(Redactor(secrets)._forms)
        self._forms = sorted(forms, key=len, reverse=True)
        self.longest = len(self._forms[0]) if self._forms else 0
        self.multiline = any("\n" in form or "\r" in form for form in self._forms)


_active = Redactor(())


def use(redactor: Redactor) -> None:
    """Make `redactor` the one `active()` returns: set once per command, before anything runs.

    The command layer hands its redactor to the writer, the renderers (through their View) and the
    watch; the global is for what cannot be handed it: the edge's last line (a bug's message, from
    anywhere), and what the layers below write on their own (a stdio server's stderr, a renewed
    token learnt during the run)."""
    global _active
    _active = redactor


def active() -> Redactor:
    """The secrets of the running command (none before a command has named its servers)."""
    return _active


def clip(text: str, limit: int) -> str:
    """`text` masked, then cut to `limit` characters: cutting first could leave a secret's prefix."""
    return _active(text)[:limit]


class SplitWrites:
    """Masks a stream that arrives in pieces (a server's stderr, passed through live).

    A secret can be split across two writes. `feed` returns what is safe to show now and keeps
    back the last `longest - 1` characters, which could be the start of a secret, unless a line
    ended there (no secret holds a newline); `end` returns the rest.
    """

    def __init__(self, redactor: Redactor | None = None) -> None:
        self._redact = redactor if redactor is not None else _active
        self._held = ""

    def feed(self, text: str) -> str:
        if not self._redact:
            return text
        masked = self._redact(self._held + text)
        keep = self._redact.longest - 1
        cut = len(masked) - keep
        if not self._redact.multiline:
            cut = max(cut, masked.rfind("\n") + 1)
        cut = max(cut, 0)
        self._held = masked[cut:]
        return masked[:cut]

    def end(self, text: str = "") -> str:
        out = self.feed(text) + self._redact(self._held)
        self._held = ""
        return out


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def encodable(text: str) -> str:
    """`text` with lone surrogates (which no UTF-8 stream can write) as `\\udXXX` notation."""
    if text.isascii() or not _LONE_SURROGATE.search(text):
        return text
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class RedactingStream:
    """A text stream that redacts what is written through it (for rich consoles), and never fails
    on a lone surrogate a server sent. With `inert`, for plain text that no rich console styles,
    everything written is also made inert (`sanitize.visible`, newlines and tabs kept)."""

    def __init__(self, stream: TextIO, redactor: Redactor, *, inert: bool = False) -> None:
        self._stream = stream
        self._redact = redactor
        self._inert = inert

    def write(self, text: str) -> int:
        shown = self._redact(text)
        if self._inert:
            from mcpprobe.safety.sanitize import visible

            shown = visible(shown, multiline=True)
        self._stream.write(encodable(shown))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
