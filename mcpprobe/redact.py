"""Keep the user's secrets out of everything mcpprobe prints.

The values of --env and of credential headers (Authorization, cookies, API keys) are the
user's secrets. A server may echo them back (in stderr, an error message, a stray stdout line),
so redaction happens at the last moment, on the text that is about to be written, whatever its
origin.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, TextIO

MASK = "[redacted]"
MIN_LENGTH = 4  # shorter values ("1", "yes") would blank out ordinary text
# Values that are settings, not secrets: masking them would blank out ordinary output
# ("10000 items", "production") and protect nothing.
NOT_SECRET_WORDS = {"true", "false", "yes", "no", "on", "off", "none", "null", "debug", "info", "warn", "warning",
                    "error", "trace", "production", "development", "staging", "test"}


def is_maskable(value: str) -> bool:
    """Whether a value is worth masking: long enough, not a bare number, not a common setting."""
    stripped = value.strip()
    return (len(stripped) >= MIN_LENGTH and not stripped.lstrip("+-").replace(".", "", 1).isdigit()
            and stripped.lower() not in NOT_SECRET_WORDS)


class Redactor:
    def __init__(self, secrets: Iterable[str]) -> None:
        forms: set[str] = set()
        for secret in secrets:
            if not is_maskable(secret):
                continue
            forms.add(secret)
            forms.add(json.dumps(secret)[1:-1])  # as it appears inside a JSON string
            forms.add(json.dumps(secret, ensure_ascii=False)[1:-1])
        # Longest first, so that a secret containing another is masked whole.
        self._forms = sorted(forms, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for form in self._forms:
            if form in text:
                text = text.replace(form, MASK)
        return text

    def __bool__(self) -> bool:
        return bool(self._forms)


class RedactingStream:
    """A text stream that redacts what is written through it (for rich consoles)."""

    def __init__(self, stream: TextIO, redactor: Redactor) -> None:
        self._stream = stream
        self._redact = redactor

    def write(self, text: str) -> int:
        self._stream.write(self._redact(text))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
