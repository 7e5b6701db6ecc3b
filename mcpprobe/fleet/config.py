"""Named servers from the config files users already have: mcpprobe's own YAML, and the `mcpServers`
maps of Claude Desktop, Claude Code, Cursor and Windsurf, and VS Code's `servers`.

Reading is lazy and light (json, and yaml only when a file needs it): shell completion of server
names uses this module. Variables (`${VAR}`, `${env:VAR}`, VS Code `${input:ID}`) are expanded only
for the server that is used, so one entry with a missing variable never breaks the others.
docs/config.md is the reference.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpprobe.errors import UsageProblem
from mcpprobe.paths import app_dir, home_dir, user_config_dir
from mcpprobe.safety.sanitize import visible

VARIABLE = re.compile(r"\$\{([^}]*)\}")


class ConfigError(UsageProblem):
    """A config file or entry that cannot be used: a usage error (exit 2) naming the file."""

    code = "config-error"


@dataclass(frozen=True)
class ServerEntry:
    """One server as written in a config file, variables not yet expanded."""

    name: str
    source: str  # the file it came from
    format: str  # mcpprobe | mcpServers | vscode
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    type: str | None = None  # stdio | http | sse (as written: streamable-http, streamableHttp ...)
    inputs: tuple[tuple[str, dict[str, Any]], ...] = ()  # VS Code input definitions of its file
    # bearerEnv, clientId, clientSecretEnv, scope, noAuthCache: names of variables, never secrets
    auth: tuple[tuple[str, Any], ...] = ()
    disabled: bool = False  # "disabled": true in the entry: listed, and skipped by a fleet

    @property
    def transport(self) -> str:
        if self.url is None:
            return "stdio"
        kind = (self.type or "").lower().replace("_", "-")
        if kind == "sse":
            return "sse"
        if kind in ("http", "streamable-http", "streamablehttp"):
            return "http"
        return "sse" if self.url.rstrip("/").endswith("/sse") else "http"

    def describe(self) -> str:
        if self.url is not None:
            return self.url
        return " ".join((self.command or "", *self.args)).strip()

    def to_json(self) -> dict[str, Any]:
        """For `mcpprobe servers --json`: names of env variables and headers, never their values."""
        data: dict[str, Any] = {"name": self.name, "source": self.source, "format": self.format,
                                "transport": self.transport, "disabled": self.disabled}
        if self.url is not None:
            data["url"] = self.url
            data["headers"] = [k for k, _ in self.headers]
        else:
            data["command"] = [self.command, *self.args]
            data["env"] = [k for k, _ in self.env]
            data["cwd"] = self.cwd
        return data


@dataclass
class Resolved:
    """An entry with its variables expanded: what `target.build_target` needs, and its secrets."""

    entry: ServerEntry
    url: str | None
    command: list[str]
    env: list[str]  # KEY=VALUE
    headers: list[str]  # "Name: value"
    cwd: str | None
    transport: str
    secrets: list[str] = field(default_factory=list)


@dataclass
class Discovery:
    """Every server found, in precedence order, and what was read to find them."""

    servers: list[ServerEntry] = field(default_factory=list)
    shadowed: list[ServerEntry] = field(default_factory=list)  # same name found again later: unused
    files: list[tuple[str, str]] = field(default_factory=list)  # (path, "read" | "missing" | "no servers")

    def names(self) -> list[str]:
        return [s.name for s in self.servers]

    def get(self, name: str) -> ServerEntry:
        for server in self.servers:
            if server.name == name:
                return server
        # Names are text from files anyone may have written: inert before they reach a terminal.
        known = ", ".join(visible(n) for n in self.names()) or "none found"
        read = [path for path, state in self.files if state != "missing"]
        where = f" (read: {', '.join(read)})" if read else " (no config file was found; see `mcpprobe docs config`)"
        raise ConfigError(f"no server named {name!r} in the configs; known servers: {known}{where}")


# ----- where configs live -----


def search_path(cwd: Path | None = None, env: Mapping[str, str] | None = None,
                platform: str | None = None) -> list[Path]:
    """The files read when no --config is given, first found wins for a name (docs/config.md)."""
    env = os.environ if env is None else env
    platform = platform or sys.platform
    cwd = cwd or Path.cwd()
    home, apps = home_dir(env), app_dir(env, platform)
    return [
        cwd / "mcpprobe.yaml",
        user_config_dir(env, platform) / "config.yaml",
        cwd / ".mcp.json",  # Claude Code, project scope
        cwd / ".cursor" / "mcp.json",
        cwd / ".vscode" / "mcp.json",
        home / ".claude.json",  # Claude Code, user scope
        home / ".cursor" / "mcp.json",
        home / ".codeium" / "windsurf" / "mcp_config.json",
        apps / "Claude" / "claude_desktop_config.json",
        apps / "Code" / "User" / "mcp.json",
    ]


def discover(config_files: list[str] | tuple[str, ...] = (), *, cwd: Path | None = None,
             env: Mapping[str, str] | None = None) -> Discovery:
    """Every named server: from `config_files` only when given (each must exist), else the search path."""
    found = Discovery()
    explicit = bool(config_files)
    cwd = cwd or Path.cwd()
    paths: list[Path | tuple[Path, Path]] = [Path(p) for p in config_files] if explicit else list(
        search_path(cwd, env))
    # Claude Code's local scope (`claude mcp add`'s default) lives in ~/.claude.json under the
    # project's directory, and wins over the project's .mcp.json and the user scope.
    claude = [p for p in paths if isinstance(p, Path) and p.name == ".claude.json"]
    for path in claude:
        where = (paths.index(cwd / ".mcp.json") if not explicit and cwd / ".mcp.json" in paths
                 else paths.index(path))
        paths.insert(where, (path, cwd))
    seen: set[str] = set()
    for item in paths:
        path, project = item if isinstance(item, tuple) else (item, None)
        label = f"{path} (local scope of {project})" if project is not None else str(path)
        try:
            is_file = path.is_file()
        except (OSError, ValueError) as exc:  # a name too long for the file system, a NUL: no such file either
            if explicit and project is None:
                raise ConfigError(f"--config {path}: {getattr(exc, 'strerror', None) or exc}") from None
            is_file = False
        if not is_file:
            if explicit and project is None:
                raise ConfigError(f"--config {path}: no such file")
            found.files.append((label, "missing"))
            continue
        entries = load_file(path, project=project)
        found.files.append((label, "read" if entries else "no servers"))
        for entry in entries:
            if entry.name in seen:
                found.shadowed.append(entry)
            else:
                seen.add(entry.name)
                found.servers.append(entry)
    return found


def server_names(config_files: list[str] | tuple[str, ...] = ()) -> list[str]:
    """For shell completion: never raises, since a broken file must not break the shell."""
    try:
        return discover(config_files).names()
    except Exception:  # noqa: BLE001 - completion must stay silent whatever is on disk
        return []


# ----- reading one file -----


def load_file(path: Path, *, project: Path | None = None) -> list[ServerEntry]:
    """The servers in one file of any supported format, recognised by its content. With `project`,
    only the Claude Code local-scope servers of that directory (`projects[DIR].mcpServers`)."""
    from mcpprobe.safety import userinput
    text = userinput.read_text(str(path), str(path), error=ConfigError, encoding="utf-8-sig")
    try:
        data = _parse(path, text)
    except RecursionError:
        raise userinput.too_deep(str(path), ConfigError) from None
    if data is None:
        return []
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level, found {_type_name(data)}")
    if project is not None:
        return _local_scope(path, data, project)
    if "mcpServers" in data:
        return _entries(path, data["mcpServers"], "mcpServers", "mcpServers", ())
    if "servers" in data:
        fmt = "vscode" if "inputs" in data or path.name == "mcp.json" else "mcpprobe"
        inputs = _inputs(path, data.get("inputs"))
        return _entries(path, data["servers"], "servers", fmt, inputs)
    if path.name.endswith(".claude.json") or path.suffix in (".yaml", ".yml"):
        return []  # e.g. ~/.claude.json without user-scope servers; an empty mcpprobe.yaml
    raise ConfigError(f"{path}: no 'mcpServers' or 'servers' map: not an MCP server config that mcpprobe knows "
                      "(see `mcpprobe docs config`)")


def _local_scope(path: Path, data: dict[str, Any], project: Path) -> list[ServerEntry]:
    """Claude Code's local-scope servers for `project`: keyed by the directory's absolute path."""
    projects = data.get("projects")
    if not isinstance(projects, dict):
        return []
    for key in dict.fromkeys((str(project), str(project.resolve()))):
        spec = projects.get(key)
        if isinstance(spec, dict) and spec.get("mcpServers"):
            source = f"{path} (local scope of {key})"
            return [_entry(Path(source), str(name), entry, "mcpServers", ())
                    for name, entry in _checked_map(path, spec["mcpServers"], f"projects[{key!r}].mcpServers").items()]
    return []


def _checked_map(path: Path, raw: Any, key: str) -> dict[Any, Any]:
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: '{key}' must be a mapping of server names to entries, found {_type_name(raw)}")
    return raw


def _parse(path: Path, text: str) -> Any:
    if not text.strip():
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        json_error = exc
    stripped = _strip_jsonc(text)
    if stripped != text:
        try:
            return json.loads(stripped)
        except json.JSONDecodeError:
            pass
    if text.lstrip().startswith("{") and path.suffix == ".json":
        raise ConfigError(f"{path}:{json_error.lineno}: invalid JSON: {json_error.msg}") from None
    import yaml

    from mcpprobe.safety import userinput
    try:
        return userinput.load_yaml(text, str(path), error=ConfigError)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{path}{line}: invalid YAML or JSON: {problem}") from None


def _strip_jsonc(text: str) -> str:
    """VS Code's mcp.json is JSON with comments and trailing commas: drop both, outside strings."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            i = text.find("\n", i) if "\n" in text[i:] else n
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        else:
            out.append(c)
            i += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))


def _type_name(value: Any) -> str:
    return {list: "a list", str: "a string", int: "a number", float: "a number", bool: "a boolean"}.get(
        type(value), type(value).__name__)


def _inputs(path: Path, raw: Any) -> tuple[tuple[str, dict[str, Any]], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ConfigError(f"{path}: 'inputs' must be a list")
    out = []
    for item in raw:
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            out.append((item["id"], item))
    return tuple(out)


def _entries(path: Path, raw: Any, key: str, fmt: str, inputs: tuple[tuple[str, dict[str, Any]], ...]
             ) -> list[ServerEntry]:
    if raw is None:
        return []
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: '{key}' must be a mapping of server names to entries, found {_type_name(raw)}")
    return [_entry(path, str(name), spec, fmt, inputs) for name, spec in raw.items()]


def _entry(path: Path, name: str, spec: Any, fmt: str, inputs: tuple[tuple[str, dict[str, Any]], ...]
           ) -> ServerEntry:
    where = f"{path}: server {name!r}"
    if not isinstance(spec, dict):
        raise ConfigError(f"{where}: expected a mapping with 'command' or 'url', found {_type_name(spec)}")
    url = spec.get("url", spec.get("serverUrl"))
    command = spec.get("command")
    if (url is None) == (command is None):
        raise ConfigError(f"{where}: give exactly one of 'command' (stdio) or 'url' (HTTP, SSE)")
    kind = spec.get("type", spec.get("transport"))
    if kind is not None and not isinstance(kind, str):
        raise ConfigError(f"{where}: 'type' must be a string")
    disabled = spec.get("disabled", False) is True
    if url is not None:
        if not isinstance(url, str):
            raise ConfigError(f"{where}: 'url' must be a string")
        auth = tuple((k, spec[k]) for k in AUTH_KEYS if k in spec)
        return ServerEntry(name, str(path), fmt, url=url, headers=_pairs(where, spec, "headers"),
                           type=kind, inputs=inputs, auth=auth, disabled=disabled)
    if not isinstance(command, str) or not command:
        raise ConfigError(f"{where}: 'command' must be a non-empty string")
    args = spec.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str | int | float) for a in args):
        raise ConfigError(f"{where}: 'args' must be a list of strings")
    cwd = spec.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ConfigError(f"{where}: 'cwd' must be a string")
    return ServerEntry(name, str(path), fmt, command=command, args=tuple(str(a) for a in args),
                       env=_pairs(where, spec, "env"), cwd=cwd, type=kind, inputs=inputs, disabled=disabled)


AUTH_KEYS = ("bearerEnv", "bearer_env", "clientId", "client_id", "clientSecretEnv", "client_secret_env", "scope",
             "noAuthCache", "no_auth_cache", "clientKeyFile", "client_key_file", "clientKeyEnv", "client_key_env")


def _pairs(where: str, spec: dict[str, Any], key: str) -> tuple[tuple[str, str], ...]:
    raw = spec.get(key) or {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: '{key}' must be a mapping of names to values")
    out = []
    for k, v in raw.items():
        if isinstance(v, bool) or not isinstance(v, str | int | float):
            raise ConfigError(f"{where}: {key}.{k} must be a string")
        out.append((str(k), str(v)))
    return tuple(out)


# ----- expanding variables -----

Prompter = Callable[[str, dict[str, Any]], str]


def input_env_name(input_id: str) -> str:
    """The environment variable that answers a VS Code input non-interactively."""
    return "MCPPROBE_INPUT_" + re.sub(r"[^A-Za-z0-9]", "_", input_id).upper()


class _Expander:
    def __init__(self, entry: ServerEntry, env: Mapping[str, str], prompt: Prompter | None) -> None:
        self.entry = entry
        self.env = env
        self.prompt = prompt
        self.secrets: list[str] = []
        self.answers: dict[str, str] = {}

    def __call__(self, text: str, what: str) -> str:
        return VARIABLE.sub(lambda m: self._value(m.group(1), what), text)

    def _value(self, expr: str, what: str) -> str:
        where = f"{self.entry.source}: server {self.entry.name!r}, {what}"
        if expr.startswith("input:"):
            value = self._input(expr[len("input:"):], where)
            self.secrets.append(value)
            return value
        if expr in ("workspaceFolder", "workspaceRoot"):
            folder = Path(self.entry.source).resolve().parent
            return str(folder.parent if folder.name in (".vscode", ".cursor") else folder)
        if expr == "userHome":
            return str(home_dir(self.env))
        name, default = expr, None
        if name.startswith("env:"):
            name = name[len("env:"):]
        if ":-" in name:
            name, default = name.split(":-", 1)
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ConfigError(f"{where}: cannot expand ${{{expr}}}: not a variable mcpprobe knows "
                              "(${VAR}, ${env:VAR}, ${VAR:-default}, ${input:ID}, ${workspaceFolder}, ${userHome})")
        if name in self.env:
            value = self.env[name]
        elif default is not None:
            value = default
        else:
            raise ConfigError(f"{where}: environment variable {name} is not set (used as ${{{expr}}})")
        self.secrets.append(value)
        return value

    def _input(self, input_id: str, where: str) -> str:
        if input_id in self.answers:
            return self.answers[input_id]
        spec = dict(self.entry.inputs).get(input_id)
        if spec is None:
            raise ConfigError(f"{where}: ${{input:{input_id}}} has no definition in the file's 'inputs'")
        variable = input_env_name(input_id)
        if variable in self.env:
            value = self.env[variable]
        elif self.prompt is not None:
            value = self.prompt(input_id, spec)
        else:
            raise ConfigError(
                f"{where}: needs the VS Code input {input_id!r} ({spec.get('description') or 'no description'}) "
                f"and there is no terminal to ask on: set {variable} in the environment")
        self.answers[input_id] = value
        return value


def resolve(entry: ServerEntry, *, env: Mapping[str, str] | None = None, prompt: Prompter | None = None
            ) -> Resolved:
    """Expand the entry's variables; every expanded value is a secret (env and header values are
    judged by their names, like those of the command line: `redact.secret_values`)."""
    expand = _Expander(entry, os.environ if env is None else env, prompt)
    headers = [f"{k}: {expand(v, f'header {k}')}" for k, v in entry.headers]
    url = expand(entry.url, "url") if entry.url is not None else None
    command = [expand(entry.command, "command"), *(expand(a, "args") for a in entry.args)] if entry.command else []
    env_pairs = [(k, expand(v, f"env {k}")) for k, v in entry.env]
    cwd = expand(entry.cwd, "cwd") if entry.cwd else None
    if cwd is not None and not Path(cwd).is_dir():
        raise ConfigError(f"{entry.source}: server {entry.name!r}: cwd {cwd!r} is not a directory")
    secrets = [v for v in expand.secrets if v]
    return Resolved(entry, url, command, [f"{k}={v}" for k, v in env_pairs], headers, cwd, entry.transport,
                    secrets)


def entry_line(source: str, name: str) -> int | None:
    """The 1-based line of the server `name`'s key in the config file `source`, for reports that
    point at it (SARIF): the first line holding the name as a JSON key ("name":) or a YAML key
    (name:). None when the file cannot be read again or the key is not on a line of its own."""
    import json
    import re

    try:
        with open(source, encoding="utf-8", errors="replace") as file:
            text = file.read(1 << 22)
    except OSError:
        return None
    keys = (re.escape(json.dumps(name)), re.escape(f"'{name}'"), rf"(?<![\w\-.]){re.escape(name)}")
    pattern = re.compile(rf"^\s*(?:-\s*)?(?:{'|'.join(keys)})\s*:", re.MULTILINE)
    match = pattern.search(text)
    if match is None:
        # Compact JSON: the key anywhere on a line.
        match = re.search(rf"{re.escape(json.dumps(name))}\s*:", text)
    return text.count("\n", 0, match.start()) + 1 if match else None
