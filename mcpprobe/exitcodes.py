"""Exit codes: one enum, and the one place that turns an outcome into a code.

The numbers are part of the interface that scripts and CI rely on; docs/exit-codes.md
documents each. When several problems apply, the most fundamental stage wins (see PRECEDENCE).
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    FINDINGS = 1  # the server answered, and something is wrong with what it answered
    USAGE = 2  # bad command line, bad config: click's own code for usage errors
    REFUSED = 3  # refused before sending anything (capability not declared, ...)
    CONNECTION = 4  # spawn failed, refused (a 403/421 without a Bearer challenge too), transport broken, exited
    PROTOCOL = 5  # unsupported version, malformed replies, unexpected JSON-RPC error
    TIMEOUT = 6
    AUTH = 7  # HTTP 401, or 403 with a Bearer challenge (403/421 without one: CONNECTION, http-forbidden)
    SOFTWARE = 70  # a bug in mcpprobe itself (EX_SOFTWARE in sysexits.h): never 1, which means findings
    INTERRUPTED = 130  # Ctrl-C, the shell convention


# Earlier stages first: a connection that broke explains a timeout that followed it, and any
# of these explain the findings that could not be completed.
PRECEDENCE: tuple[ExitCode, ...] = (
    ExitCode.INTERRUPTED,
    ExitCode.SOFTWARE,
    ExitCode.USAGE,
    ExitCode.REFUSED,
    ExitCode.AUTH,
    ExitCode.CONNECTION,
    ExitCode.TIMEOUT,
    ExitCode.PROTOCOL,
    ExitCode.FINDINGS,
    ExitCode.OK,
)


def worst(codes: list[ExitCode] | tuple[ExitCode, ...]) -> ExitCode:
    """The code that explains the most: the earliest stage in PRECEDENCE among `codes`."""
    present = set(codes)
    for code in PRECEDENCE:
        if code in present:
            return code
    return ExitCode.OK
