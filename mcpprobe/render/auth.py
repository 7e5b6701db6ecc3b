"""What `auth login`, `auth status` and `auth logout` print: pure functions of what the command did,
returning `Rendered` for the one writer (mcpprobe.cli.output.write_rendered), which masks the secrets.

For people, plain text; much of it comes from authorization servers (errors, scopes, URLs), so all
of it is made inert (mcpprobe.safety.sanitize). For scripts, the documents of
mcpprobe.render.jsondoc (ASCII only, so inert as they are). `logout` prints for people only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcpprobe.exitcodes import ExitCode
from mcpprobe.render.interface import Format, NotOffered, Rendered, View
from mcpprobe.safety.sanitize import visible

if TYPE_CHECKING:
    from mcpprobe.auth.login import LoginResult
    from mcpprobe.errors import ProbeError

FLOWS = {"authorization_code": "authorization code + PKCE", "client_credentials": "client credentials",
         "cross_app_access": "cross-app access (ID-JAG, jwt-bearer)",
         "jwt-bearer": "JWT bearer grant (RFC 7523: the workload's own JWT)"}


@dataclass(frozen=True)
class LoginEnded:
    """`auth login` that ended: `result` when it logged in (or found no login needed), with the file
    its token was stored in (`stored`) or why it could not be (`store_error`); else `error`, what
    stopped it (a LoginFailed carries the diagnosis that says why)."""

    url: str
    result: LoginResult | None = None
    stored: str | None = None
    store_error: str | None = None
    error: ProbeError | None = None

    @property
    def exit_code(self) -> int:
        """The login's error's code; a token that could not be stored is exit 2, as an output file."""
        if self.error is not None:
            return int(self.error.exit_code)
        return int(ExitCode.USAGE) if self.store_error else 0


@dataclass(frozen=True)
class StoredTokens:
    """`auth status`: the public facts of the stored tokens (TokenRecord.public), of every server or
    of `url`'s, kept in `directory`; `code` is the command's exit code."""

    url: str | None
    directory: str
    tokens: list[dict[str, Any]]
    code: int


@dataclass(frozen=True)
class LoggedOut:
    """`auth logout`: per server, what became of its stored token (`notes`: server URL, note), and the
    revocations that failed (`errors`: server URL, message). `everything`: --all."""

    url: str | None
    everything: bool
    notes: list[tuple[str, str]]
    errors: list[tuple[str, str]]


AuthSubject = LoginEnded | StoredTokens | LoggedOut


def render(subject: AuthSubject, fmt: Format, view: View) -> Rendered:
    """The text of an `auth` command's outcome in `fmt` (human or JSON)."""
    if fmt not in (Format.HUMAN, Format.JSON) or (fmt is Format.JSON and isinstance(subject, LoggedOut)):
        raise NotOffered(fmt, subject)  # type: ignore[arg-type]
    match subject:
        case LoginEnded():
            return _login_json(subject, view) if fmt is Format.JSON else _login_human(subject, view)
        case StoredTokens():
            return _status_json(subject, view) if fmt is Format.JSON else _status_human(subject, view)
        case LoggedOut():
            return _logout_human(subject, view)


def _inert(view: View, stdout: Iterable[str], stderr: str = "") -> Rendered:
    """Text for people: the run's secrets masked first (as the writer will), then made inert, so that
    a secret is never shown in the escaped form the writer would not know."""
    secrets = view.secrets
    return Rendered([visible(secrets(text), multiline=True) for text in stdout],
                    visible(secrets(stderr), multiline=True))


def _failure(subject: LoginEnded) -> tuple[list[Any], Any]:
    """The diagnosis of a failed login: its findings, and its data for the document."""
    diagnosis = getattr(subject.error, "diagnosis", None)
    return (diagnosis.findings, diagnosis.data) if diagnosis is not None else ([], None)


def _error(error: ProbeError) -> str:
    """What stopped a login, on stderr; and a hint where the error has one (a Host check's 403, for
    one: the URL the server allows)."""
    hint = error.detail.get("hint")
    return f"error: {error.message}\n" + (f"hint: {visible(str(hint))}\n" if hint else "")


def _store_failed(store_error: str | None) -> str:
    if store_error is None:
        return ""
    return (f"error: the token could not be stored: {store_error}; log in again once the token directory can be "
            "written, or give the token with --bearer-env\n")


def _login_json(subject: LoginEnded, view: View) -> Rendered:
    from mcpprobe.render import jsondoc

    if subject.error is not None:
        findings, data = _failure(subject)
        doc = jsondoc.auth_login_document(subject.url, login=None, findings=findings, diagnosis=data,
                                          error=subject.error)
        return _inert(view, jsondoc.pieces(doc, pretty=view.terminal), _error(subject.error))
    assert subject.result is not None
    doc = jsondoc.auth_login_document(subject.url, login=jsondoc.login_json(subject.result, subject.stored),
                                      store_error=subject.store_error)
    return _inert(view, jsondoc.pieces(doc, pretty=view.terminal), _store_failed(subject.store_error))


def _login_human(subject: LoginEnded, view: View) -> Rendered:
    if subject.error is not None:
        findings, _ = _failure(subject)
        return _inert(view, [f"{f.severity.value:<7} {f.code}  {visible(f.message)}\n" for f in findings],
                      _error(subject.error))
    result = subject.result
    assert result is not None
    if result.not_needed:
        return _inert(view, [f"{subject.url} answered without asking for credentials: no login needed\n"])
    record = result.record
    public = record.public()
    flow = FLOWS.get(result.flow, result.flow)
    client = "no client registration" if result.registration == "none" else \
        f"{result.registration.replace('-', ' ')} client {public['clientId']}"
    lines = [f"Logged in to {subject.url}",
             f"  flow          {flow} ({client})",
             f"  because       {result.why or 'the server asked'}",
             f"  checked       {', '.join(result.checked)} answered with the token",
             f"  scope         {record.scope or '(none given)'}",
             f"  expires in    {public['expiresIn']} s" if public["expiresIn"] is not None else "  expires       never",
             f"  refresh token {'yes' if record.refresh_token else 'no'}"]
    if result.migrated_from:
        lines.append(f"  moved         the server left {result.migrated_from} for {record.issuer}: registered "
                     "and logged in there")
    if result.step_up:
        lines.append("  step-up       re-authorized once for 403 insufficient_scope")
    if subject.stored:
        lines.append(f"  stored in     {subject.stored} (mode 0600)")
    else:
        lines.append("  stored        no (the token could not be stored)" if subject.store_error else
                     "  stored        no (--no-auth-cache)")
    return _inert(view, ["\n".join(lines) + "\n"], _store_failed(subject.store_error))


def _status_json(subject: StoredTokens, view: View) -> Rendered:
    from mcpprobe.render import jsondoc

    doc = jsondoc.auth_status_document(subject.code, subject.directory, subject.tokens)
    return _inert(view, jsondoc.pieces(doc, pretty=view.terminal))


def _status_human(subject: StoredTokens, view: View) -> Rendered:
    if not subject.tokens:
        where = f" for {subject.url}" if subject.url else ""
        return _inert(view, [f"no stored tokens{where} (in {subject.directory})\n"])
    out = []
    for item in subject.tokens:
        expiry = "never expires" if item["expiresIn"] is None else (
            f"expires in {item['expiresIn']} s" if item["expiresIn"] > 0 else f"expired {-item['expiresIn']} s ago")
        out.append(f"{item['serverUrl']}\n  state   {item['state']} ({expiry}; refresh token "
                   f"{'yes' if item['hasRefreshToken'] else 'no'})\n  grant   {item['grant']}, client "
                   f"{item['clientId']}\n  scope   {item['scope'] or '(none)'}\n  issuer  {item['issuer']}\n"
                   f"  file    {item['file']} ({item['fileMode']})\n")
    return _inert(view, out)


def _logout_human(subject: LoggedOut, view: View) -> Rendered:
    if not subject.notes and not subject.everything:
        return _inert(view, [f"no stored token for {subject.url}\n"])
    out = [f"{server}: {note}\n" for server, note in subject.notes]
    if subject.everything:
        out.append(f"removed {len(subject.notes)} stored token(s)\n")
    return _inert(view, out, "".join(f"error: {server}: {message}\n" for server, message in subject.errors))
