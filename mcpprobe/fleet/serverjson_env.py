"""What a server.json may set in the environment of the command it runs, and the grammar of the
package identifiers it names (docs/server-json.md, "What runs is what is shown").

A package's `environmentVariables` reach the runtime that fetches and starts the package (npx,
uvx, pipx, docker, dnx) as much as the server. Some of them change what that runtime loads or where
it fetches from: `NODE_OPTIONS=--require=/path/evil.js` runs code inside npx before the package,
`npm_config_registry` fetches the package from a registry of the publisher's choosing. The command
shown before it runs would then not be what runs. A value the file sets (its `value` or `default`)
for one of `STEERING` is refused unless the user names it with `--allow-env NAME`; a value the
user gives (`-e`, or their own environment) is theirs.

An identifier is one argv word of the runtime's command: one that does not follow its registry's
grammar (a leading `-` above all: npx, docker, dnx and pipx take it as an option) is refused.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass

from mcpprobe.safety.redact import MASK

# A POSIX environment variable name (the portable character set: letters, digits, underscore, not
# starting with a digit). Anything else (`HARMLESS=1 PATH`, a space, an `=`) is refused: the child's
# environment block would hold another name than the one shown.
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Steering:
    """Variables that change what a runtime loads or where it fetches from: `names` exactly (case
    as written), `prefixes` by their start (`case_blind`: in any case, as npm reads npm_config_)."""

    names: tuple[str, ...]
    prefixes: tuple[str, ...]
    why: str
    case_blind: bool = False

    def matches(self, name: str) -> bool:
        key = name.lower() if self.case_blind else name
        names = tuple(n.lower() for n in self.names) if self.case_blind else self.names
        prefixes = tuple(p.lower() for p in self.prefixes) if self.case_blind else self.prefixes
        return key in names or key.startswith(prefixes)


# docs/server-json.md and docs/security.md list these with the same reasons: keep them in step.
STEERING: tuple[Steering, ...] = (
    Steering(("PATH",), (), "which programs are found: npx starts `node` and uvx its Python through the PATH"),
    Steering((), ("LD_",), "the dynamic loader: LD_PRELOAD and LD_AUDIT load a library into every process, "
             "LD_LIBRARY_PATH chooses which libraries load"),
    Steering((), ("DYLD_",), "the macOS dynamic loader: DYLD_INSERT_LIBRARIES loads a library into every process"),
    Steering(("BASH_ENV",), (), "a file bash runs first whenever npm or a script starts one"),
    Steering(("HOME", "XDG_CONFIG_HOME", "APPDATA"), (),
             "where npm, pip, uv, docker and NuGet read their configuration (~/.npmrc, pip.conf, uv.toml, "
             "~/.docker/config.json, NuGet.Config), registries included"),
    Steering(("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"), (),
             "the proxy every download goes through", case_blind=True),
    Steering(("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
              "NODE_TLS_REJECT_UNAUTHORIZED"), (),
             "which TLS certificates a download trusts (or none): with a proxy, another package"),
    Steering(("NODE_OPTIONS", "NODE_PATH"), (),
             "Node.js: NODE_OPTIONS (--require, --import) runs code in npx and the server; NODE_PATH is where "
             "require() finds modules"),
    Steering((), ("npm_config_",), "npm: every setting of npm and npx (registry, userconfig, prefix, "
             "script-shell, node-options, ...), in any case", case_blind=True),
    Steering(("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "PYTHONPLATLIBDIR"), (),
             "Python: where modules are imported from (a .pth file there runs code), and a file run at start"),
    Steering((), ("PIP_", "UV_", "PIPX_"), "pip, uv and pipx: the index a package comes from (PIP_INDEX_URL, "
             "UV_INDEX_URL, UV_DEFAULT_INDEX), their configuration files, which Python runs"),
    Steering((), ("DOTNET_", "NUGET_", "CORECLR_", "COMPlus_"),
             ".NET: DOTNET_STARTUP_HOOKS and CORECLR_PROFILER_PATH load code into dnx and the server, "
             "DOTNET_ROOT chooses the runtime, NUGET_* the packages folder and credential plugins"),
    Steering((), ("DOCKER_",), "docker: DOCKER_HOST chooses the daemon that runs the image, DOCKER_CONFIG its "
             "registries and credentials, DOCKER_CONTENT_TRUST whether signatures are checked"),
)


def steering(name: str) -> Steering | None:
    """The entry of `STEERING` that `name` falls under, or None for an ordinary variable."""
    for entry in STEERING:
        if entry.matches(name):
            return entry
    return None


# ----- identifiers, by their registry's grammar -----

# npm (validate-npm-package-name): at most 214 characters, URL-safe, not starting with "." or "_";
# a scope is "@scope/". Capitals are allowed for the old packages that have them. A leading "-" is
# refused too: npx would take it as one of its options.
_NPM_PART = r"[A-Za-z0-9~][A-Za-z0-9._~-]*"
_NPM = re.compile(rf"(?:@{_NPM_PART}/)?{_NPM_PART}")
# PyPI: a PEP 508 name (letters, digits, and . _ - inside).
_PYPI = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
# OCI: the reference grammar of distribution/reference: [domain[:port]/]path[:tag][@digest].
_OCI_DOMAIN = r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*(?::[0-9]+)?"
_OCI_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_OCI = re.compile(rf"(?:{_OCI_DOMAIN}/)?{_OCI_COMPONENT}(?:/{_OCI_COMPONENT})*"
                  r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?"
                  r"(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?")
# NuGet (PackageIdValidator): word characters joined by single . _ or -, at most 100.
_NUGET = re.compile(r"\w+(?:[_.-]\w+)*", re.ASCII)

_GRAMMARS: dict[str, tuple[re.Pattern[str], int, str]] = {
    "npm": (_NPM, 214, "an npm package name ([@scope/]name: letters, digits, - . _ ~, not starting with - . or _)"),
    "pypi": (_PYPI, 200, "a PyPI project name (PEP 508: letters, digits, and - . _ between them)"),
    "oci": (_OCI, 255, "an OCI image reference ([registry/]repository[:tag][@digest], lower case)"),
    "nuget": (_NUGET, 100, "a NuGet package id (letters, digits, and single - . _ between them)"),
}

# A version is glued to the identifier in one word (npx NAME@VERSION, uvx NAME==VERSION, pipx
# --spec NAME==VERSION, dnx NAME@VERSION): semantic versions and PEP 440 both fit this.
_VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+!_-]*")


def identifier_problem(registry: str, identifier: str) -> str | None:
    """Why `identifier` is not a name of `registry`, or None when it is (or the registry is one
    mcpprobe does not run: mcpb)."""
    if registry not in _GRAMMARS:
        return None
    grammar, longest, what = _GRAMMARS[registry]
    if len(identifier) > longest:
        return f"longer than {longest} characters: not {what}"
    if not grammar.fullmatch(identifier):
        start = " (a leading '-' would be taken as an option)" if identifier.startswith("-") else ""
        return f"not {what}{start}"
    return None


def version_problem(version: str) -> str | None:
    if len(version) > 128 or not _VERSION.fullmatch(version):
        return ("not a version (letters, digits and . + ! _ - , starting with a letter or digit; "
                "a leading '-' would be taken as an option)")
    return None


# ----- what is shown before running -----

def shown_environment(env: Iterable[tuple[str, str]], secret_names: Iterable[str]) -> list[str]:
    """`NAME=VALUE` for each variable the server gets from the file, the value quoted as a shell
    would take it back; a variable the file marks `isSecret` shows its name and a mask. Not yet
    inert: the caller makes it so for the terminal."""
    secret = set(secret_names)
    return [f"{name}={MASK if name in secret else shlex.quote(value)}" for name, value in env]
