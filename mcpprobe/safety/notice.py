"""Notes to the person running mcpprobe from below the command layer: the one place where a module
under `cli/` writes to the terminal itself.

A token renewed or not renewed during a run, a login that needs the person's browser, a token
directory that cannot be read: the authorization layer learns these in the middle of a request and
cannot hand them up through the operation's result in time. It says them here. Each note goes through
the sanitizer (a peer's words in it cannot move the cursor or change the title) and ends with a line
feed; it goes to stderr, never stdout, so that `--json` stays one document. The layer test allows this
module (and the stdio transport passing the server's own stderr through) and no other below
operations.
"""

from __future__ import annotations

import sys


def say(text: str, *, multiline: bool = False) -> None:
    """`text` on stderr, made visible, flushed at once (a login waits for the person who reads it)."""
    from mcpprobe.safety.sanitize import visible

    sys.stderr.write(visible(text, multiline=multiline) + "\n")
    sys.stderr.flush()
