"""Tokens per server, in the user's config directory, readable by the user alone.

Where (`token_dir`):

`tokens/` in mcpprobe's own directory (`mcpprobe.paths.user_config_dir`): `$MCPPROBE_CONFIG_DIR`
when set; else `$XDG_CONFIG_HOME/mcpprobe` on every system when set; else `~/.config/mcpprobe`
(Linux and other Unixes), `~/Library/Application Support/mcpprobe` (macOS), `%APPDATA%\\mcpprobe`.

One JSON file per server URL and authorization server, named by the SHA-256 of the canonical URL
and the authorization server's `issuer`, so the file name says nothing about either. Credentials
are bound to the authorization server that issued them (MCP 2026-07-28, "Authorization Server
Binding": clients "MUST associate those credentials with the specific authorization server that
issued them, keyed by the authorization server's `issuer` identifier"): when a server moves to
another authorization server, the new login gets a file of its own and the old one stays whole.
`load(url)` is the newest of a server's records (the one obtained last), `load(url, issuer)` that
issuer's. A file of the earlier layout (named by the URL alone) is still read, and re-keyed by its
issuer the next time its record is stored. The directory is created with mode 0700 and every file is written as a
private output file (`outfiles.write_file`): mode 0600 from its creation on, synced, then renamed
into place, so a token is never readable by others, not even for a moment, and a crash leaves the
previous token whole. A token file is read the same way round: never through a symbolic link, only
a regular file (`_read_token_file`). Nor through a directory someone else could have put there
(`directory_problem`): the token directory and mcpprobe's config directory above it must not be
symbolic links and must be the user's own, and the token directory open to the user alone (0700); a
store whose directory is not reads as empty (a warning on stderr) and refuses to write (WriteFailed,
which says why). The record holds what a refresh needs without discovery: the token endpoint, the
client registration (a dynamically registered client's secret included), the resource indicator.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpprobe.auth.discovery import canonical_resource
from mcpprobe.safety.numbers import finite_or_none
from mcpprobe.safety.outfiles import WriteFailed, write_file

EXPIRY_MARGIN = 30.0  # seconds: a token this close to expiry counts as expired


def config_dir() -> Path:
    """mcpprobe's own directory, the same one its config.yaml is read from."""
    from mcpprobe.paths import user_config_dir

    return user_config_dir()


def token_dir() -> Path:
    return config_dir() / "tokens"


def server_key(url: str, issuer: str | None = None) -> str:
    """The file name's hash: of the canonical URL, and of the issuer when there is one (a record
    without an issuer, and every record of the earlier layout, is named by the URL alone)."""
    text = canonical_resource(url) if not issuer else f"{canonical_resource(url)}\n{_issuer_key(issuer)}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def _issuer_key(issuer: str) -> str:
    """RFC 8414 3.3 compares issuers as strings; a root issuer with and without its '/' is one."""
    from urllib.parse import urlsplit

    return issuer.rstrip("/") if urlsplit(issuer).path in ("", "/") else issuer


def same_issuer(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and _issuer_key(a) == _issuer_key(b)


@dataclass
class TokenRecord:
    server_url: str
    access_token: str | None = None
    refresh_token: str | None = None
    expires_at: float | None = None  # epoch seconds
    scope: str | None = None
    grant: str = "authorization_code"  # authorization_code | client_credentials
    token_endpoint: str | None = None
    issuer: str | None = None
    resource: str | None = None
    client: dict[str, Any] = field(default_factory=dict)  # client_id, client_secret?, token_endpoint_auth_method
    obtained_at: float | None = None
    path: Path | None = None
    revocation_endpoint: str | None = None  # RFC 7009, where the authorization server offers it
    token_type: str = "Bearer"  # or "DPoP": bound to dpop_key (RFC 9449)
    dpop_key: str | None = None  # PEM of the EC key a DPoP token is bound to
    # The origins on plain http:// (not loopback) the person allowed at login (tokens.plain_http_checked):
    # its renewals and revocation may go there, with a warning; to no other plain-http endpoint.
    plain_http_allowed: list[str] = field(default_factory=list)
    # What was wrong with the answer that brought the token (an unusable expires_in), for this run's
    # notes; never stored.
    problem: str = field(default="", compare=False)

    def expired(self, now: float | None = None) -> bool:
        if self.expires_at is None:
            return False
        return (now or time.time()) >= self.expires_at - EXPIRY_MARGIN

    def usable(self) -> bool:
        """A token that can be sent now: not expired, and one an HTTP header can carry (a record an
        older mcpprobe stored from a hostile server may hold one that cannot; it is renewed or
        logged in again, never sent)."""
        from mcpprobe.safety.peer import token_problem

        return bool(self.access_token) and token_problem(self.access_token) is None and not self.expired()

    def refreshable(self) -> bool:
        return bool(self.refresh_token and self.token_endpoint and self.client.get("client_id"))

    def secrets(self) -> list[str]:
        return [s for s in (self.access_token, self.refresh_token, self.client.get("client_secret"), self.dpop_key)
                if s]

    def to_json(self) -> dict[str, Any]:
        return {"serverUrl": self.server_url, "accessToken": self.access_token, "refreshToken": self.refresh_token,
                "expiresAt": self.expires_at, "scope": self.scope, "grant": self.grant,
                "tokenEndpoint": self.token_endpoint, "issuer": self.issuer, "resource": self.resource,
                "client": self.client, "obtainedAt": self.obtained_at,
                "revocationEndpoint": self.revocation_endpoint, "tokenType": self.token_type,
                "dpopKey": self.dpop_key, "plainHttpAllowed": self.plain_http_allowed}

    @classmethod
    def from_json(cls, data: dict[str, Any], path: Path | None = None) -> TokenRecord:
        return cls(server_url=data["serverUrl"], access_token=data.get("accessToken"),
                   refresh_token=data.get("refreshToken"), expires_at=finite_or_none(data.get("expiresAt")),
                   scope=data.get("scope"), grant=data.get("grant") or "authorization_code",
                   token_endpoint=data.get("tokenEndpoint"), issuer=data.get("issuer"),
                   resource=data.get("resource"), client=dict(data.get("client") or {}),
                   obtained_at=finite_or_none(data.get("obtainedAt")), path=path,
                   revocation_endpoint=data.get("revocationEndpoint"), token_type=data.get("tokenType") or "Bearer",
                   dpop_key=data.get("dpopKey"),
                   plain_http_allowed=_strings(data.get("plainHttpAllowed")))

    def public(self) -> dict[str, Any]:
        """What `auth status` shows: never a token or a secret."""
        now = time.time()
        return {
            "serverUrl": self.server_url,
            "grant": self.grant,
            "tokenType": self.token_type,
            "hasAccessToken": bool(self.access_token),
            "hasRefreshToken": bool(self.refresh_token),
            "expiresAt": self.expires_at,
            "expiresIn": None if self.expires_at is None else round(self.expires_at - now),
            "expired": self.expired(now),
            "state": "valid" if self.usable() else ("refreshable" if self.refreshable() else
                                                    ("expired" if self.access_token else "empty")),
            "scope": self.scope,
            "issuer": self.issuer,
            "tokenEndpoint": self.token_endpoint,
            "resource": self.resource,
            "clientId": self.client.get("client_id"),
            "clientRegistration": self.client.get("registration"),
            "obtainedAt": self.obtained_at,
            "file": str(self.path) if self.path else None,
            "fileMode": _mode(self.path),
        }


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _mode(path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        return oct(path.stat().st_mode & 0o777)
    except OSError:
        return None


MAX_RECORD_BYTES = 1024 * 1024  # a record is a few KB; a DPoP key's PEM the largest part


def _read_token_file(path: Path) -> str:
    """A token file's text, read without following a symbolic link (O_NOFOLLOW: a link planted at
    the name would hand mcpprobe someone else's token, or a file that never ends) and without
    blocking on a FIFO (O_NONBLOCK); only a regular file of at most MAX_RECORD_BYTES. OSError or
    ValueError otherwise, which the store takes as no token."""
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{path} is not a regular file")
        chunks, size = [], 0
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_RECORD_BYTES:
                raise ValueError(f"{path} is larger than a token record")
    finally:
        os.close(fd)
    return b"".join(chunks).decode("utf-8")


def directory_problem(directory: Path, *, writing: bool = False) -> str | None:
    """Why tokens must not be read from (or, `writing`, written to) `directory` and its parent
    (mcpprobe's config directory), or None: either is a symbolic link (a link planted there hands
    mcpprobe another's tokens, or takes its own elsewhere), or owned by another user; or the token
    directory lets others in (a mode other than 0700: before writing, mcpprobe sets it). A directory
    that does not exist yet is no problem: it is created 0700."""
    import stat

    getuid = getattr(os, "getuid", None)
    for one in (directory.parent, directory):
        try:
            info = os.lstat(one)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            return f"{one}: {exc.strerror or exc}"
        if stat.S_ISLNK(info.st_mode):
            return f"{one} is a symbolic link: tokens are never read or written through one"
        if not stat.S_ISDIR(info.st_mode):
            continue  # a file where a directory should be: reading finds nothing, writing says why it fails
        if getuid is not None and info.st_uid != getuid():
            return f"{one} belongs to another user (uid {info.st_uid})"
        if one == directory and not writing and stat.S_IMODE(info.st_mode) & 0o077:
            return (f"{one} is open to others (mode {oct(stat.S_IMODE(info.st_mode))}, not 0700): "
                    f"chmod 700 {one}")
    return None


class TokenStore:
    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or token_dir()
        self._warned = False

    def readable(self) -> bool:
        """Whether tokens may be read from the directory (`directory_problem`); a warning once when not."""
        problem = directory_problem(self.directory)
        if problem is not None and not self._warned:
            from mcpprobe.safety.notice import say

            self._warned = True
            say(f"mcpprobe: warning: stored tokens not read: {problem}")
        return problem is None

    def path_for(self, url: str, issuer: str | None = None) -> Path:
        return self.directory / f"{server_key(url, issuer)}.json"

    def records(self, url: str) -> list[TokenRecord]:
        """Every stored record of the server at `url` (one per authorization server), the newest first."""
        want = canonical_resource(url)
        mine = [r for r in self.all() if canonical_resource(r.server_url) == want]
        return sorted(mine, key=lambda r: r.obtained_at or 0.0, reverse=True)

    def load(self, url: str, issuer: str | None = None) -> TokenRecord | None:
        """The record of the server at `url`: of authorization server `issuer` when given, else the
        one obtained last."""
        for record in self.records(url):
            if issuer is None or same_issuer(record.issuer, issuer):
                return record
        return None

    def save(self, record: TokenRecord) -> Path:
        """Store the record (0600, in a 0700 directory) under its server and issuer; WriteFailed says why
        it could not be. A file of the earlier layout holding this record is removed once it is re-keyed."""
        problem = directory_problem(self.directory, writing=True)
        if problem is not None:
            raise WriteFailed(f"the token was not stored: {problem}")
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise WriteFailed(f"cannot create the token directory {self.directory}: {exc.strerror or exc}") from None
        with contextlib.suppress(OSError):
            os.chmod(self.directory, 0o700)
        path = self.path_for(record.server_url, record.issuer)
        # allow_nan=False: a number that is not JSON never reaches the file (from_json reads one as None).
        write_file(path, json.dumps(record.to_json(), indent=2, allow_nan=False).encode("utf-8"), private=True,
                   follow_links=False)
        record.path = path
        legacy = self.path_for(record.server_url)
        if legacy != path:
            old = _read(legacy)
            if old is not None and canonical_resource(old.server_url) == canonical_resource(record.server_url) \
                    and (old.issuer is None or same_issuer(old.issuer, record.issuer)):
                with contextlib.suppress(OSError):
                    legacy.unlink()
        return path

    def delete(self, url: str, issuer: str | None = None) -> bool:
        """Forget the server's records (of `issuer` only, when given); whether there was one."""
        gone = False
        for record in self.records(url):
            if record.path is None or (issuer is not None and not same_issuer(record.issuer, issuer)):
                continue
            with contextlib.suppress(FileNotFoundError):
                record.path.unlink()
                gone = True
        return gone

    def forget(self, record: TokenRecord) -> bool:
        """Remove the file `record` was read from (or would be stored in)."""
        path = record.path or self.path_for(record.server_url, record.issuer)
        try:
            path.unlink()
            return True
        except FileNotFoundError:
            return False

    def all(self) -> list[TokenRecord]:
        if not self.directory.is_dir() or not self.readable():
            return []
        out = []
        for path in sorted(self.directory.glob("*.json")):
            record = _read(path)
            if record is not None:
                out.append(record)
        return out


def _read(path: Path) -> TokenRecord | None:
    """The record in one file; None for a file that is missing, unreadable or not a record."""
    try:
        data = json.loads(_read_token_file(path))
        if not isinstance(data, dict) or not isinstance(data.get("serverUrl"), str):
            return None
        return TokenRecord.from_json(data, path)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
