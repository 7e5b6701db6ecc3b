"""A stdio server's environment: one function, shared by the CLI's early start and the transport.

Kept free of imports that Python's start has not made already: `mcpprobe.wire.prestart` uses it
before anything else is loaded.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

# What a stdio server inherits from our environment when the user passes nothing explicitly:
# enough to find and run interpreters (PATH, HOME, locale, temp dirs, proxies for npx), but not
# the user's tokens and keys, which a server has no business reading unless passed with --env.
INHERITED_ENV = (
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LC_ALL", "LC_CTYPE", "TZ",
    "TMPDIR", "TEMP", "TMP", "SYSTEMROOT", "APPDATA", "LOCALAPPDATA", "PROGRAMDATA", "USERPROFILE",
    "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR",
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
    "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE",
    "npm_config_cache", "NPM_CONFIG_CACHE", "VIRTUAL_ENV", "PYTHONPATH",
)


def child_environment(env: Iterable[tuple[str, str]], inherit_env: bool) -> dict[str, str]:
    """The safe inherited subset of our environment (or all of it), then --env on top."""
    base = dict(os.environ) if inherit_env else {k: v for k, v in os.environ.items() if k in INHERITED_ENV}
    base.update(dict(env))
    return base
