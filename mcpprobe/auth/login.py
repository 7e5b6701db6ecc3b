"""OAuth 2.1 login for the command line, on the mcp SDK's client auth (`mcp.client.auth`).

The SDK's `OAuthClientProvider` is an `httpx2.Auth`: sent an MCP request, it meets the 401,
discovers the metadata, registers (client ID metadata document or dynamic registration) when no
client is known, runs the authorization, exchanges the code, and retries. It wants a
`redirect_handler` (show the URL) and a `callback_handler` (wait for the redirect): this module
supplies both for a CLI - the URL printed and, where there is a display, opened in a browser; a
loopback HTTP listener on 127.0.0.1 (RFC 8252) that receives the redirect, with a timeout.

Before the SDK runs, mcpprobe checks what the SDK does not (the MCP specification's client
duties): the authorization server advertises PKCE S256, and there is a way to identify the client
(pre-registered `--client-id`, a client ID metadata document, or dynamic registration). Otherwise
login stops with the diagnosis findings.

Flows: authorization code + PKCE (`--client-id` optional), client credentials (`--client-id` with
`--client-secret-env`), refresh (`refresh`, without the SDK: a stored record knows its token
endpoint). A 403 `insufficient_scope` after login triggers one step-up: the SDK re-authorizes for
the union of the granted and the challenged scopes.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

from mcpprobe import __version__
from mcpprobe.auth.diagnosis import Diagnosis, diagnose
from mcpprobe.auth.discovery import canonical_resource, supports
from mcpprobe.auth.store import TokenRecord
from mcpprobe.errors import AuthFailed

LOGIN_PROTOCOL_VERSION = "2025-11-25"
CALLBACK_PATH = "/callback"


class LoginFailed(AuthFailed):
    """Login did not produce a token the server accepts (exit 7), with the diagnosis when there is one."""

    code = "auth-required"

    def __init__(self, message: str, *, diagnosis: Diagnosis | None = None, detail: dict[str, Any] | None = None):
        super().__init__(message, detail=detail)
        self.diagnosis = diagnosis


@dataclass
class LoginOptions:
    client_id: str | None = None
    client_secret: str | None = None
    scope: str | None = None
    client_metadata_url: str | None = None
    no_browser: bool = False
    callback_port: int = 0
    login_timeout: float = 300.0
    timeout: float = 30.0
    insecure: bool = False
    headers: tuple[tuple[str, str], ...] = ()  # other headers the MCP server needs (never Authorization)
    announce: Callable[[str], None] = field(default=lambda text: print(text, file=sys.stderr, flush=True))


@dataclass
class LoginResult:
    record: TokenRecord
    flow: str  # authorization_code | client_credentials
    registration: str  # pre-registered | client-id-metadata-document | dynamic | none-needed
    step_up: bool = False
    status: int = 200
    diagnosis: Diagnosis | None = None
    not_needed: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"flow": self.flow, "registration": self.registration, "stepUp": self.step_up,
                "status": self.status, "notNeeded": self.not_needed, "token": self.record.public()}


def initialize_message() -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": LOGIN_PROTOCOL_VERSION, "capabilities": {},
        "clientInfo": {"name": "mcpprobe", "version": __version__}}}


def _mcp_headers(opts: LoginOptions) -> dict[str, str]:
    headers = {k: v for k, v in opts.headers if k.lower() != "authorization"}
    headers.update({"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
                    "MCP-Protocol-Version": LOGIN_PROTOCOL_VERSION})
    return headers


def browser_available() -> bool:
    import os

    if sys.platform in ("darwin", "win32"):
        return True
    # $BROWSER is how a Unix user names their browser, a text or headless one included.
    return bool(os.environ.get("BROWSER") or os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


# ----- the loopback redirect receiver -----


class LoopbackCallback:
    """One-shot HTTP listener on 127.0.0.1 for the authorization redirect (RFC 8252 7.3)."""

    def __init__(self, port: int = 0) -> None:
        self.port = port
        self.redirect_uri = ""
        self._listener: Any = None
        self._send: Any = None
        self._receive: Any = None

    async def start(self, task_group: Any) -> None:
        import anyio
        from anyio.abc import SocketAttribute

        self._send, self._receive = anyio.create_memory_object_stream[dict[str, str]](1)
        self._listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=self.port)
        self.port = self._listener.extra(SocketAttribute.local_port)
        self.redirect_uri = f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"
        task_group.start_soon(self._listener.serve, self._handle)

    async def aclose(self) -> None:
        if self._listener is not None:
            await self._listener.aclose()

    async def _handle(self, stream: Any) -> None:
        import anyio

        async with stream:
            data = b""
            with anyio.move_on_after(10):
                while b"\r\n\r\n" not in data and len(data) < 16384:
                    try:
                        chunk = await stream.receive(4096)
                    except (anyio.EndOfStream, anyio.BrokenResourceError):
                        break
                    data += chunk
            line = data.split(b"\r\n", 1)[0].decode("latin-1")
            parts = line.split(" ")
            target = parts[1] if len(parts) >= 2 else "/"
            split = urlsplit(target)
            if parts[0] != "GET" or split.path != CALLBACK_PATH:
                await _answer(stream, 404, "Not found")
                return
            query = {k: v[0] for k, v in parse_qs(split.query).items()}
            if query.get("error"):
                await _answer(stream, 400, "mcpprobe: the authorization server refused: "
                                           f"{query.get('error')}. You may close this window.")
            else:
                await _answer(stream, 200, "mcpprobe: logged in. You may close this window.")
            with contextlib.suppress(anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
                self._send.send_nowait(query)

    async def wait(self, timeout: float) -> dict[str, str]:
        import anyio

        with anyio.move_on_after(timeout):
            return await self._receive.receive()
        raise LoginFailed(f"no redirect reached {self.redirect_uri} within {timeout:g} s (--login-timeout)")


async def _answer(stream: Any, status: int, text: str) -> None:
    import html

    body = f"<!doctype html><title>mcpprobe</title><p>{html.escape(text)}</p>".encode()
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}[status]
    head = (f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n").encode()
    with contextlib.suppress(Exception):  # the browser went away; the code is what matters
        await stream.send(head + body)


# ----- SDK adapters -----


class _Storage:
    """The SDK's `TokenStorage`, in memory: login decides what is persisted, and where."""

    def __init__(self, client_info: Any = None) -> None:
        self.tokens: Any = None
        self.client_info = client_info

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        return self.client_info

    async def set_client_info(self, client_info: Any) -> None:
        self.client_info = client_info


def _scoped(base: type) -> type:
    """A provider class that honours `--scope`: the user's scopes replace the automatic choice (the
    challenge's scope, else scopes_supported); on a step-up they are joined with the challenged ones."""
    from mcp.client.auth.utils import union_scopes

    class Scoped(base):  # type: ignore[misc, valid-type]
        forced_scope: str | None = None
        stepping_up: bool = False

        async def _perform_authorization(self) -> Any:
            if self.forced_scope:
                chosen = self.context.client_metadata.scope if self.stepping_up else None
                self.context.client_metadata.scope = union_scopes(self.forced_scope, chosen)
            return await super()._perform_authorization()

    return Scoped


async def _first_contact(url: str, opts: LoginOptions) -> tuple[int, str]:
    import httpx2 as httpx

    async with httpx.AsyncClient(timeout=opts.timeout, verify=not opts.insecure, follow_redirects=False) as client:
        try:
            response = await client.post(url, json=initialize_message(), headers=_mcp_headers(opts))
        except httpx.HTTPError as exc:
            from mcpprobe.errors import ConnectionFailed

            raise ConnectionFailed(f"cannot reach {url}: {str(exc) or type(exc).__name__}") from None
        return response.status_code, response.headers.get("www-authenticate", "")


def _check_prerequisites(found: Diagnosis, opts: LoginOptions, flow: str) -> dict[str, Any]:
    discovery = found.discovery
    assert discovery is not None
    if discovery.asm is None:
        raise LoginFailed("cannot log in: no usable authorization server metadata was found (see the findings)",
                          diagnosis=found)
    offer = supports(discovery.asm)
    if flow == "client_credentials":
        if "client_credentials" not in offer["grantTypes"]:
            raise LoginFailed(f"the authorization server does not offer client_credentials (it offers "
                              f"{', '.join(offer['grantTypes'])})", diagnosis=found)
        return offer
    if "authorization_code" not in offer["grantTypes"]:
        raise LoginFailed(f"the authorization server does not offer authorization_code (it offers "
                          f"{', '.join(offer['grantTypes'])}); for CI use --client-id with --client-secret-env",
                          diagnosis=found)
    if not offer["pkceS256"]:
        raise LoginFailed("the authorization server does not advertise PKCE S256; MCP clients must not use it "
                          "for the authorization code flow", diagnosis=found)
    if not opts.client_id:
        cimd = bool(opts.client_metadata_url) and offer["registration"]["clientIdMetadataDocument"]
        if not cimd and not offer["registration"]["dynamic"]:
            raise LoginFailed("the authorization server offers no way for mcpprobe to register "
                              "(no dynamic registration" + ("" if opts.client_metadata_url else
                                                            ", and no --client-metadata-url given")
                              + "): pass a pre-registered --client-id", diagnosis=found)
    return offer


async def login(url: str, opts: LoginOptions) -> LoginResult:
    """Log in to the MCP server at `url`; the result's record is ready to store."""
    flow = "client_credentials" if opts.client_secret and opts.client_id else "authorization_code"
    if opts.client_secret and not opts.client_id:
        from mcpprobe.errors import UsageProblem

        raise UsageProblem("--client-secret-env needs --client-id")
    status, challenge = await _first_contact(url, opts)
    if status < 300:
        record = TokenRecord(server_url=url, grant="none")
        return LoginResult(record, flow="none", registration="none-needed", status=status, not_needed=True)
    if status not in (401, 403):
        raise LoginFailed(f"{url} answered the initialize request with HTTP {status}, not 401: nothing to log in to",
                          detail={"status": status})
    found = await diagnose(url, {"status": status, "wwwAuthenticate": challenge}, timeout=min(opts.timeout, 15),
                           insecure=opts.insecure, token_sent=False)
    offer = _check_prerequisites(found, opts, flow)
    import logging

    # The SDK logs a traceback for every failed flow; mcpprobe reports the failure itself.
    logging.getLogger("mcp.client.auth").setLevel(logging.CRITICAL + 1)
    if flow == "client_credentials":
        return await _client_credentials(url, opts, found, offer)
    return await _authorization_code(url, opts, found)


async def _drive(provider: Any, url: str, opts: LoginOptions) -> tuple[int, bool, str]:
    """Send initialize through the SDK's auth; one step-up on 403 insufficient_scope."""
    import httpx2 as httpx
    from mcp.client.auth import OAuthFlowError, OAuthRegistrationError, OAuthTokenError

    step_up = False
    async with httpx.AsyncClient(auth=provider, timeout=opts.timeout, verify=not opts.insecure,
                                 follow_redirects=False) as client:
        try:
            response = await client.post(url, json=initialize_message(), headers=_mcp_headers(opts))
            challenge = response.headers.get("www-authenticate", "")
            if response.status_code == 403 and "insufficient_scope" in challenge:
                step_up = True
                provider.stepping_up = True
                response = await client.post(url, json=initialize_message(), headers=_mcp_headers(opts))
                challenge = response.headers.get("www-authenticate", "")
        except (OAuthFlowError, OAuthTokenError, OAuthRegistrationError) as exc:
            raise LoginFailed(f"login failed: {exc}") from None
        except httpx.HTTPError as exc:
            raise LoginFailed(f"login failed: {str(exc) or type(exc).__name__}") from None
        session = response.headers.get("mcp-session-id")
        if response.status_code < 300 and session:
            with contextlib.suppress(httpx.HTTPError):
                await client.delete(url, headers={**_mcp_headers(opts), "Mcp-Session-Id": session})
        return response.status_code, step_up, challenge


def _record(url: str, provider: Any, storage: _Storage, grant: str, registration: str,
            found: Diagnosis) -> TokenRecord:
    context = provider.context
    tokens = storage.tokens
    if tokens is None:
        raise LoginFailed("login ended without a token")
    metadata = context.oauth_metadata
    info = storage.client_info or context.client_info
    client: dict[str, Any] = {"registration": registration}
    if info is not None:
        client.update({"client_id": info.client_id, "token_endpoint_auth_method": info.token_endpoint_auth_method})
        if registration == "dynamic" and info.client_secret:
            client["client_secret"] = info.client_secret  # minted for mcpprobe; needed to refresh
    now = time.time()
    return TokenRecord(
        server_url=url, access_token=tokens.access_token, refresh_token=tokens.refresh_token,
        expires_at=now + tokens.expires_in if tokens.expires_in else None, scope=tokens.scope, grant=grant,
        token_endpoint=str(metadata.token_endpoint) if metadata else None,
        issuer=str(metadata.issuer) if metadata else (found.discovery.issuer if found.discovery else None),
        resource=context.get_resource_url() if context.should_include_resource_param(LOGIN_PROTOCOL_VERSION)
        else canonical_resource(url),
        client=client, obtained_at=now)


def _open_quietly(webbrowser: Any, url: str) -> None:
    with contextlib.suppress(Exception):  # printing the URL is enough
        webbrowser.open(url)


async def _authorization_code(url: str, opts: LoginOptions, found: Diagnosis) -> LoginResult:
    import webbrowser

    import anyio
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata

    callback = LoopbackCallback(opts.callback_port)
    failure: BaseException | None = None
    async with anyio.create_task_group() as group:
        await callback.start(group)
        try:
            metadata = OAuthClientMetadata(
                client_name="mcpprobe", redirect_uris=[callback.redirect_uri],
                grant_types=["authorization_code", "refresh_token"], response_types=["code"],
                token_endpoint_auth_method="none", scope=opts.scope, software_id="mcpprobe",
                software_version=__version__)
            pre = None
            registration = "dynamic"
            if opts.client_id:
                registration = "pre-registered"
                method = "client_secret_basic" if opts.client_secret else "none"
                pre = OAuthClientInformationFull(client_id=opts.client_id, client_secret=opts.client_secret,
                                                 token_endpoint_auth_method=method,
                                                 redirect_uris=[callback.redirect_uri])
            storage = _Storage(pre)

            async def redirect_handler(authorization_url: str) -> None:
                opts.announce(f"Open this URL in a browser to log in (waiting up to {opts.login_timeout:g} s for "
                              f"the redirect to {callback.redirect_uri}):\n{authorization_url}")
                if not opts.no_browser and browser_available():
                    # In a thread of its own: a browser command may run until the redirect is served
                    # (webbrowser waits for a $BROWSER command), and the redirect listener runs here.
                    threading.Thread(target=_open_quietly, args=(webbrowser, authorization_url),
                                     daemon=True).start()

            async def callback_handler() -> Any:
                query = await callback.wait(opts.login_timeout)
                if query.get("error"):
                    detail = query.get("error_description")
                    raise LoginFailed(f"the authorization server refused: {query['error']}"
                                      + (f" ({detail})" if detail else ""))
                if not query.get("code"):
                    raise LoginFailed("the redirect carried no authorization code")
                return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))

            provider = _scoped(OAuthClientProvider)(
                url, metadata, storage, redirect_handler=redirect_handler, callback_handler=callback_handler,
                client_metadata_url=opts.client_metadata_url)
            provider.forced_scope = opts.scope
            status, step_up, challenge = await _drive(provider, url, opts)
            info = storage.client_info
            if registration == "dynamic" and info is not None and opts.client_metadata_url and \
                    info.client_id == opts.client_metadata_url:
                registration = "client-id-metadata-document"
        except Exception as exc:  # noqa: BLE001 - re-raised below, outside the task group
            failure = exc
        finally:
            group.cancel_scope.cancel()
    await callback.aclose()
    if failure is not None:
        raise failure
    return _finish(url, provider, storage, "authorization_code", registration, found, status, step_up, challenge)


def _finish(url: str, provider: Any, storage: _Storage, grant: str, registration: str, found: Diagnosis,
            status: int, step_up: bool, challenge: str) -> LoginResult:
    if status >= 300:
        raise LoginFailed(
            f"after login the server still answers HTTP {status}"
            + (f" (WWW-Authenticate: {challenge})" if challenge else "")
            + (" even after one step-up" if step_up else ""), detail={"status": status, "wwwAuthenticate": challenge})
    record = _record(url, provider, storage, grant, registration, found)
    return LoginResult(record, flow=grant, registration=registration, step_up=step_up, status=status,
                       diagnosis=found)


async def _client_credentials(url: str, opts: LoginOptions, found: Diagnosis, offer: dict[str, Any]) -> LoginResult:
    from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider

    assert opts.client_id and opts.client_secret
    methods = offer["tokenEndpointAuthMethods"]
    method = "client_secret_basic" if "client_secret_basic" in methods or "client_secret_post" not in methods \
        else "client_secret_post"
    storage = _Storage()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        provider = _scoped(ClientCredentialsOAuthProvider)(
            url, storage, opts.client_id, opts.client_secret, token_endpoint_auth_method=method, scope=opts.scope,
            issuer=offer["issuer"])
    provider.forced_scope = opts.scope
    status, step_up, challenge = await _drive(provider, url, opts)
    storage.client_info = provider.context.client_info
    result = _finish(url, provider, storage, "client_credentials", "pre-registered", found, status, step_up,
                     challenge)
    result.record.client.pop("client_secret", None)  # the user's secret stays in their environment
    return result


# ----- refresh and client credentials without the SDK (stored records) -----


async def token_request(token_endpoint: str, form: dict[str, str], client: dict[str, Any], *,
                        client_secret: str | None = None, timeout: float = 30.0,
                        insecure: bool = False) -> dict[str, Any]:
    """POST to a token endpoint with the client's authentication method; the JSON answer or LoginFailed."""
    import base64
    from urllib.parse import quote

    import httpx2 as httpx

    form = dict(form)
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}
    client_id = client.get("client_id") or ""
    secret = client_secret or client.get("client_secret")
    method = client.get("token_endpoint_auth_method") or ("client_secret_basic" if secret else "none")
    if secret and method == "client_secret_basic":
        pair = f"{quote(client_id, safe='')}:{quote(secret, safe='')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    else:
        form["client_id"] = client_id
        if secret and method == "client_secret_post":
            form["client_secret"] = secret
    async with httpx.AsyncClient(timeout=timeout, verify=not insecure, follow_redirects=False) as http:
        try:
            response = await http.post(token_endpoint, data=form, headers=headers)
        except httpx.HTTPError as exc:
            raise LoginFailed(f"token endpoint {token_endpoint}: {str(exc) or type(exc).__name__}") from None
    try:
        data = response.json()
    except ValueError:
        data = None
    if response.status_code != 200 or not isinstance(data, dict) or not isinstance(data.get("access_token"), str):
        error = data.get("error") if isinstance(data, dict) else None
        raise LoginFailed(f"token endpoint {token_endpoint} answered HTTP {response.status_code}"
                          + (f" {error}" if error else ""), detail={"status": response.status_code, "error": error})
    return data


def _update(record: TokenRecord, data: dict[str, Any]) -> TokenRecord:
    now = time.time()
    record.access_token = data["access_token"]
    record.refresh_token = data.get("refresh_token") or record.refresh_token
    expires_in = data.get("expires_in")
    record.expires_at = now + float(expires_in) if isinstance(expires_in, int | float) else None
    record.scope = data.get("scope") or record.scope
    record.obtained_at = now
    return record


async def refresh(record: TokenRecord, *, timeout: float = 30.0, insecure: bool = False) -> TokenRecord:
    """A new access token from the record's refresh token (RFC 6749 6), with its resource (RFC 8707)."""
    if not record.refreshable():
        raise LoginFailed(f"the stored token for {record.server_url} has expired and cannot be refreshed; "
                          f"log in again: mcpprobe auth login {record.server_url}")
    form = {"grant_type": "refresh_token", "refresh_token": record.refresh_token or ""}
    if record.resource:
        form["resource"] = record.resource
    data = await token_request(record.token_endpoint or "", form, record.client, timeout=timeout, insecure=insecure)
    return _update(record, data)


async def client_credentials_again(record: TokenRecord, client_secret: str, *, timeout: float = 30.0,
                                   insecure: bool = False) -> TokenRecord:
    """A fresh client-credentials token for a stored record (no refresh tokens in that grant)."""
    form = {"grant_type": "client_credentials"}
    if record.resource:
        form["resource"] = record.resource
    if record.scope:
        form["scope"] = record.scope
    data = await token_request(record.token_endpoint or "", form, record.client, client_secret=client_secret,
                               timeout=timeout, insecure=insecure)
    return _update(record, data)

