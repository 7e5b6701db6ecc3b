"""Exceptions that end an operation, each tied to the exit code of the stage that failed.

They are raised deep inside and turned into a finding and an exit code at exactly one edge
(`mcpprobe.cli.main`), so no layer below the CLI decides how the process ends.
"""

from __future__ import annotations

from typing import Any

from mcpprobe.exitcodes import ExitCode


def seconds(value: float) -> str:
    """A duration for messages: 30, 1.5, 0.25; never 0.996613."""
    return f"{value:.0f}" if value >= 10 else f"{value:.2g}"


class ProbeError(Exception):
    """Base: an outcome that ends the operation. `code` names the finding, `exit_code` the stage."""

    exit_code: ExitCode = ExitCode.PROTOCOL
    code: str = "protocol-error"

    severity: str = "error"  # of the finding it becomes; "info" for a user's own choice

    def __init__(self, message: str, *, detail: dict[str, Any] | None = None, code: str | None = None,
                 severity: str | None = None):
        super().__init__(message)
        self.message = message
        self.detail = detail or {}
        if code is not None:
            self.code = code
        if severity is not None:
            self.severity = severity


class UsageProblem(ProbeError):
    exit_code = ExitCode.USAGE
    code = "usage"


class Refused(ProbeError):
    """Nothing was sent: the request would need something the server did not declare."""

    exit_code = ExitCode.REFUSED
    code = "not-declared"


class ConnectionFailed(ProbeError):
    exit_code = ExitCode.CONNECTION
    code = "connection-failed"


class RateLimited(ConnectionFailed):
    """HTTP 429: the server refuses to serve this client now; its Retry-After says when again."""

    code = "rate-limited"


class ServerUnavailable(ConnectionFailed):
    """HTTP 503: the server (or the proxy in front of it) cannot serve now: overloaded, starting,
    in maintenance or without a backend; its Retry-After, if any, says when again."""

    code = "server-unavailable"


class HttpForbidden(ConnectionFailed):
    """HTTP 403 or 421 without a Bearer challenge: the server (or a proxy) refuses the request for
    a reason other than credentials, most often its Host or Origin check (wire/forbidden.py). Not
    an authentication failure: nothing a token would change, so no authorization discovery."""

    code = "http-forbidden"


class ProtocolFailure(ProbeError):
    exit_code = ExitCode.PROTOCOL
    code = "protocol-error"


class RequestTimeout(ProbeError):
    exit_code = ExitCode.TIMEOUT
    code = "timeout"


class Interrupted(ProbeError):
    """Ctrl-C, SIGTERM or SIGHUP ended the work before it was done."""

    exit_code = ExitCode.INTERRUPTED
    code = "interrupted"


class AuthFailed(ProbeError):
    exit_code = ExitCode.AUTH
    code = "auth-required"


class InternalError(ProbeError):
    """A bug in mcpprobe itself, not a fault of the server: an exception nothing expected."""

    exit_code = ExitCode.SOFTWARE
    code = "internal-error"


class RpcError(ProbeError):
    """The server answered a request with a JSON-RPC error object."""

    exit_code = ExitCode.PROTOCOL
    code = "rpc-error"

    def __init__(self, rpc_code: int, message: str, data: Any = None, *, method: str = ""):
        super().__init__(f"{method}: JSON-RPC error {rpc_code}: {message}" if method else message)
        self.rpc_code = rpc_code
        self.rpc_message = message
        self.data = data
        self.method = method
        self.detail = {"method": method, "rpcCode": rpc_code, "rpcMessage": message}
        if data is not None:
            self.detail["rpcData"] = data


METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
UNSUPPORTED_PROTOCOL_VERSION = -32022
RESOURCE_NOT_FOUND_LEGACY = -32002


REPORT_HINT = ("a bug in mcpprobe, not a problem with the server: please report it with the command line, "
               "`mcpprobe --version` and the stack that `mcpprobe --traceback ...` shows")


def bug_message(exc: BaseException) -> str:
    """The one line for a bug: what it was, then what to do about it."""
    text = str(exc)
    return f"internal error: {type(exc).__name__}{': ' + text if text else ''}"
