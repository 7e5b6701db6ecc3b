"""The authentication settings (`AuthSettings`), from the command line's options
(mcpprobe.cli.options.auth_options) or a config entry's keys, and their values resolved.

Secrets are never taken on the command line (where `ps` and shell history would keep them): only
the *name* of an environment variable that holds them, or of a file (a client's private key).
Standard library only at import time: `--help` and completion load this module.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

ENV_NAME_HELP = "the name of an environment variable, not the value"


@dataclass(frozen=True)
class AuthSettings:
    bearer_env: str | None = None
    client_id: str | None = None
    client_secret_env: str | None = None
    no_browser: bool = False
    no_auth_cache: bool = False
    scope: str | None = None
    client_key_file: str | None = None
    client_key_env: str | None = None
    # --allow-http-authorization: an authorization server endpoint on plain http:// away from this
    # machine is used with a warning (mcpprobe.auth.tokens.plain_http_checked). The command line's
    # alone: a config file (one a repository ships, say) never allows it.
    allow_http_authorization: bool = False

    @classmethod
    def from_config(cls, server: Mapping[str, Any]) -> AuthSettings:
        """From one server's entry in a config file: `bearerEnv`/`bearer_env`, `clientId`, `clientSecretEnv`,
        `scope`, `noAuthCache` (camelCase or snake_case). Never `allow_http_authorization`: that is
        the command line's to give."""
        def pick(*names: str) -> Any:
            return next((server[n] for n in names if n in server), None)

        return cls(bearer_env=pick("bearerEnv", "bearer_env"), client_id=pick("clientId", "client_id"),
                   client_secret_env=pick("clientSecretEnv", "client_secret_env"),
                   no_auth_cache=bool(pick("noAuthCache", "no_auth_cache")), scope=pick("scope"),
                   client_key_file=pick("clientKeyFile", "client_key_file"),
                   client_key_env=pick("clientKeyEnv", "client_key_env"))

    def merged(self, other: AuthSettings) -> AuthSettings:
        """`self` (the command line) over `other` (a config file)."""
        return AuthSettings(
            bearer_env=self.bearer_env or other.bearer_env, client_id=self.client_id or other.client_id,
            client_secret_env=self.client_secret_env or other.client_secret_env,
            no_browser=self.no_browser or other.no_browser, no_auth_cache=self.no_auth_cache or other.no_auth_cache,
            scope=self.scope or other.scope, client_key_file=self.client_key_file or other.client_key_file,
            client_key_env=self.client_key_env or other.client_key_env,
            allow_http_authorization=self.allow_http_authorization)

    def bearer(self) -> str | None:
        """The token of --bearer-env, as is; UsageProblem when no HTTP header can carry it."""
        token = from_env(self.bearer_env, "--bearer-env")
        if token is not None:
            from mcpprobe.errors import UsageProblem
            from mcpprobe.safety.peer import token_problem

            problem = token_problem(token)
            if problem is not None:
                raise UsageProblem(f"--bearer-env {self.bearer_env}: the token cannot be sent: {problem}")
        return token

    def client_secret(self) -> str | None:
        return from_env(self.client_secret_env, "--client-secret-env")

    def client_key(self) -> str | None:
        """The PEM private key of --client-key-file or --client-key-env (never the command line)."""
        from mcpprobe.errors import UsageProblem

        if self.client_key_file and self.client_key_env:
            raise UsageProblem("--client-key-file and --client-key-env both give the client's key: give one")
        if self.client_key_env:
            return from_env(self.client_key_env, "--client-key-env")
        if not self.client_key_file:
            return None
        try:
            with open(os.path.expanduser(self.client_key_file), encoding="utf-8") as handle:
                key = handle.read(256 * 1024).strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageProblem(f"--client-key-file {self.client_key_file}: cannot read it ({exc})") from None
        if "PRIVATE KEY-----" not in key:
            raise UsageProblem(f"--client-key-file {self.client_key_file}: not a PEM private key")
        return key

    def secrets(self) -> list[str]:
        """Every secret these settings resolve to, for the redactor (missing variables and unreadable
        key files are skipped)."""
        out = []
        for name in (self.bearer_env, self.client_secret_env, self.client_key_env):
            if name and os.environ.get(name):
                out.append(os.environ[name].strip())
        if self.client_key_file:
            with contextlib.suppress(Exception):  # an unreadable key is reported where it is used
                out.append(self.client_key() or "")
        return [s for s in out if s]


def from_env(name: str | None, option: str) -> str | None:
    """The value of environment variable `name` (a leading $ allowed), for `option`; UsageProblem when
    it is not set or empty."""
    if not name:
        return None
    from mcpprobe.errors import UsageProblem

    if name.startswith("$"):
        name = name[1:]
    value = os.environ.get(name)
    if value is None:
        raise UsageProblem(f"{option} {name}: the environment variable {name} is not set ({ENV_NAME_HELP})")
    value = value.strip()
    if not value:
        raise UsageProblem(f"{option} {name}: the environment variable {name} is empty")
    return value
