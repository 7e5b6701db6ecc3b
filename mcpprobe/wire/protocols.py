"""The protocol versions mcpprobe speaks, and the values `--protocol` accepts.

Imports nothing: the early start of a stdio server (mcpprobe.wire.prestart) checks `--protocol` here
before any other import, so that a value the CLI will refuse starts no server, and shell
completion offers these values without loading the rest of mcpprobe.
"""

from __future__ import annotations

ERAS = ("auto", "legacy", "modern")
# The eras of the `initialize` handshake, oldest first; the last is what `legacy` sends.
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
# The eras of `server/discover`; the last is what `modern` sends.
MODERN_VERSIONS = ("2026-07-28",)
LATEST_HANDSHAKE = HANDSHAKE_VERSIONS[-1]
LATEST_MODERN = MODERN_VERSIONS[-1]
# Everything `--protocol` accepts, in the order help and completion show it.
ACCEPTED = (*ERAS, *HANDSHAKE_VERSIONS, *MODERN_VERSIONS)
