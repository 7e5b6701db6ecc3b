"""An MCP Registry `server.json` read, checked, and turned into a server to start or a URL to reach.

The schema implemented is the registry's of 2025-12-11
(https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json). What this module
reads of it, and how it builds the command, is on docs/server-json.md:

- `load(path)`: the file parsed and every field this module uses checked for its type and
  presence; a bad one is a `ServerJsonProblem` (a usage error, exit 2) that names its JSON path.
- `build(doc, ...)`: one package (`--package N`) or remote (`--remote N`), or the first package
  this machine can run (then the first remote), as a `Launch`: the argv of a package (npx, uvx,
  docker, dnx, ...), or the URL and headers of a remote, with the environment it needs. Values come
  from the publisher (`value`, `default`), the user (`--input NAME=VALUE`, the environment, `-e`),
  never from a prompt; a required one that is missing is a usage error that names it.
- `identity_findings(published, server_info)`: where the running server's serverInfo disagrees
  with the file's name or version (`server-json-mismatch`); `identity_judge(published)` is that as
  the session hook every command passes on, so that the findings are added in one place.

No click, no I/O but reading the file and looking programs up on the PATH: the command layer shows
the command, asks, and starts it through the same target building as `-- COMMAND`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcpprobe.errors import UsageProblem
from mcpprobe.findings import Finding, Severity
from mcpprobe.fleet.serverjson_env import ENV_NAME, identifier_problem, steering, version_problem
from mcpprobe.fleet.serverjson_inputs import unknown_inputs
from mcpprobe.fleet.serverjson_lines import line_of as line_of  # re-exported: the SARIF locations
from mcpprobe.safety.schema_messages import json_value

if TYPE_CHECKING:
    from mcpprobe.client.session import Snapshot

SCHEMA_VERSION = "2025-12-11"
SCHEMA_URL = f"https://static.modelcontextprotocol.io/schemas/{SCHEMA_VERSION}/server.schema.json"
REGISTRY_TYPES = ("npm", "pypi", "oci", "nuget", "mcpb")
REMOTE_TYPES = {"streamable-http": "http", "sse": "sse"}
PACKAGE_TRANSPORTS = ("stdio", "streamable-http", "sse")
MAX_BYTES = 4 * 1024 * 1024  # a server.json is a few kilobytes; anything near this is not one
_PLACEHOLDER = re.compile(r"\{([A-Za-z0-9_.-]+)\}")

Which = Callable[[str], str | None]


class ServerJsonProblem(UsageProblem):
    """The file cannot be used as written: exit 2, with the JSON path of the field at fault."""


@dataclass(frozen=True)
class Published:
    """What the file says the server is, to compare with the serverInfo of the server that runs."""

    file: str
    name: str
    version: str
    chosen: str  # "$.packages[0]" or "$.remotes[1]"


@dataclass(frozen=True)
class Launch:
    """A package's command, or a remote's URL, built from the file; what the command line shows."""

    published: Published
    command: tuple[str, ...] = ()
    url: str | None = None
    transport: str = "stdio"  # "stdio", "http" (streamable HTTP) or "sse"
    env: tuple[tuple[str, str], ...] = ()  # KEY=VALUE for the server's process
    headers: tuple[tuple[str, str], ...] = ()
    secrets: tuple[str, ...] = ()  # values the file marks isSecret: masked wherever they would show
    secret_env: tuple[str, ...] = ()  # names of the `env` entries the file marks isSecret
    runtime: str = ""  # how it runs: "npx", "uvx", "pipx", "installed console script", "docker", "dnx", "remote"
    skipped: tuple[str, ...] = ()  # packages passed over by the default choice, and why


def _problem(file: str, path: str, message: str) -> ServerJsonProblem:
    return ServerJsonProblem(f"--server-json {file}: {path}: {message}")


def load(path: str) -> dict[str, Any]:
    """The file, parsed and checked (`check`); a usage error naming the field otherwise."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError as exc:
        raise ServerJsonProblem(f"--server-json {path}: cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_BYTES:
        raise ServerJsonProblem(f"--server-json {path}: larger than {MAX_BYTES // (1024 * 1024)} MiB: "
                                "not a server.json")
    try:
        doc = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ServerJsonProblem(f"--server-json {path}: not UTF-8 text (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ServerJsonProblem(f"--server-json {path}: not JSON: {exc.msg} at line {exc.lineno} "
                                f"column {exc.colno}") from None
    except RecursionError:
        raise ServerJsonProblem(f"--server-json {path}: not JSON: nested too deeply") from None
    check(doc, path)
    server: dict[str, Any] = doc  # check() raised unless it is an object with the fields we read
    return server


# ----- checking the fields this module reads, with their JSON paths -----

def _type_name(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")


def _want(file: str, path: str, value: Any, kind: type | tuple[type, ...], what: str) -> None:
    if not isinstance(value, kind) or (kind in (int, float) and isinstance(value, bool)):
        raise _problem(file, path, f"must be {what}, not {_type_name(value)}")


def _optional(file: str, obj: dict[str, Any], path: str, key: str, kind: type, what: str) -> None:
    if key in obj:
        _want(file, f"{path}.{key}", obj[key], kind, what)


def _required(file: str, obj: dict[str, Any], path: str, key: str, kind: type, what: str) -> None:
    if key not in obj:
        raise _problem(file, f"{path}.{key}", "required, and missing")
    _want(file, f"{path}.{key}", obj[key], kind, what)


def _check_input(file: str, obj: Any, path: str, *, variables: bool = True) -> None:
    """An Input (and InputWithVariables): the strings, booleans and choices it may hold."""
    _want(file, path, obj, dict, "an object")
    for key in ("description", "value", "default", "placeholder", "format"):
        _optional(file, obj, path, key, str, "a string")
    for key in ("isRequired", "isSecret", "isRepeated"):
        _optional(file, obj, path, key, bool, "a boolean (true or false)")
    if "format" in obj and obj["format"] not in (formats := ("string", "number", "boolean", "filepath")):
        raise _problem(file, f"{path}.format", f"{json_value(obj['format'])} is not one of {', '.join(formats)}")
    if "choices" in obj:
        _want(file, f"{path}.choices", obj["choices"], list, "an array of strings")
        for index, choice in enumerate(obj["choices"]):
            _want(file, f"{path}.choices[{index}]", choice, str, "a string")
    if variables and "variables" in obj:
        _want(file, f"{path}.variables", obj["variables"], dict, "an object (variable name: input)")
        for name, variable in obj["variables"].items():
            _check_input(file, variable, f"{path}.variables.{name}", variables=False)


def _check_argument(file: str, obj: Any, path: str) -> None:
    _check_input(file, obj, path)
    _required(file, obj, path, "type", str, "a string")
    if obj["type"] == "named":
        _required(file, obj, path, "name", str, "a string (the flag, with its dashes)")
        if not obj["name"]:
            raise _problem(file, f"{path}.name", "empty: a named argument needs its flag")
    elif obj["type"] == "positional":
        _optional(file, obj, path, "valueHint", str, "a string")
        if "value" not in obj and "valueHint" not in obj:
            raise _problem(file, path, "a positional argument needs a value or a valueHint")
    else:
        raise _problem(file, f"{path}.type", f"{json_value(obj['type'])} is not positional or named")


def _check_key_values(file: str, obj: dict[str, Any], path: str, key: str) -> None:
    if key not in obj:
        return
    _want(file, f"{path}.{key}", obj[key], list, "an array")
    for index, item in enumerate(obj[key]):
        item_path = f"{path}.{key}[{index}]"
        _check_input(file, item, item_path)
        _required(file, item, item_path, "name", str, "a string")
        if not item["name"]:
            raise _problem(file, f"{item_path}.name", "empty")
        if key == "environmentVariables" and not ENV_NAME.fullmatch(item["name"]):
            # `HARMLESS=1 PATH` would reach the server as HARMLESS="1 PATH=...": another variable
            # than the one shown.
            raise _problem(file, f"{item_path}.name", f"{json_value(item['name'])} is not an environment "
                           "variable name (letters, digits and _, not starting with a digit)")


def _check_transport(file: str, obj: Any, path: str, types: tuple[str, ...]) -> None:
    _want(file, path, obj, dict, "an object")
    _required(file, obj, path, "type", str, "a string")
    if obj["type"] not in types:
        raise _problem(file, f"{path}.type", f"{json_value(obj['type'])} is not one of {', '.join(types)}")
    if obj["type"] != "stdio":
        _required(file, obj, path, "url", str, "a string (a URL)")
        _check_key_values(file, obj, path, "headers")
        if "variables" in obj:
            _check_input(file, {"variables": obj["variables"]}, path)


def check(doc: Any, file: str) -> None:
    """The fields of the schema this module reads, for their types and presence (server.schema.json
    of 2025-12-11: `name`, `description` and `version` are required; a package needs `registryType`,
    `identifier` and `transport`, and `version` for npm, pypi and nuget; a remote `type` and `url`)."""
    _want(file, "$", doc, dict, "an object (a server.json)")
    _optional(file, doc, "$", "$schema", str, "a string (the schema's URL)")
    for key in ("name", "description", "version"):
        _required(file, doc, "$", key, str, "a string")
    if not doc["name"]:
        raise _problem(file, "$.name", "empty")
    for key in ("packages", "remotes"):
        _optional(file, doc, "$", key, list, "an array")
    for index, package in enumerate(doc.get("packages", [])):
        path = f"$.packages[{index}]"
        _want(file, path, package, dict, "an object")
        _required(file, package, path, "registryType", str, "a string")
        if package["registryType"] not in REGISTRY_TYPES:
            raise _problem(file, f"{path}.registryType",
                           f"{json_value(package['registryType'])} is not a registry type "
                           f"mcpprobe knows ({', '.join(REGISTRY_TYPES)})")
        _required(file, package, path, "identifier", str, "a string")
        if not package["identifier"]:
            raise _problem(file, f"{path}.identifier", "empty")
        if package["registryType"] in ("npm", "pypi", "nuget"):
            _required(file, package, path, "version", str, "a string")
        else:
            _optional(file, package, path, "version", str, "a string")
        if "version" in package and package["version"] in ("", "latest"):
            raise _problem(file, f"{path}.version",
                           f"{json_value(package['version'])}: the schema asks for one specific version")
        if (wrong := identifier_problem(package["registryType"], package["identifier"])) is not None:
            raise _problem(file, f"{path}.identifier", f"{json_value(package['identifier'])}: {wrong}")
        if (package["registryType"] != "mcpb" and "version" in package
                and (wrong := version_problem(package["version"])) is not None):
            raise _problem(file, f"{path}.version", f"{json_value(package['version'])}: {wrong}")
        for key in ("runtimeHint", "registryBaseUrl", "fileSha256"):
            _optional(file, package, path, key, str, "a string")
        if "transport" not in package:
            raise _problem(file, f"{path}.transport", "required, and missing")
        _check_transport(file, package["transport"], f"{path}.transport", PACKAGE_TRANSPORTS)
        for key in ("runtimeArguments", "packageArguments"):
            if key in package:
                _want(file, f"{path}.{key}", package[key], list, "an array")
                for number, argument in enumerate(package[key]):
                    _check_argument(file, argument, f"{path}.{key}[{number}]")
        _check_key_values(file, package, path, "environmentVariables")
    for index, remote in enumerate(doc.get("remotes", [])):
        _check_transport(file, remote, f"$.remotes[{index}]", tuple(REMOTE_TYPES))


# ----- values: the publisher's, the user's, the environment's -----

@dataclass
class _Values:
    """Where a value comes from, and the secrets met on the way."""

    file: str
    inputs: Mapping[str, str]  # --input NAME=VALUE
    environ: Mapping[str, str]
    allow_env: frozenset[str] = frozenset()  # --allow-env NAME
    secrets: list[str] = field(default_factory=list)
    secret_env: list[str] = field(default_factory=list)

    def given(self, *names: str) -> str | None:
        """The user's value for an input known by any of `names`: --input first, then the
        environment (for a name an environment variable can have). Every name passed here must be one
        serverjson_inputs.entry_names knows, or a correct --input would be refused."""
        for name in names:
            if name and name in self.inputs:
                return self.inputs[name]
        for name in names:
            if name and ENV_NAME.fullmatch(name) and name in self.environ:
                return self.environ[name]
        return None

    def resolve(self, spec: dict[str, Any], path: str, names: tuple[str, ...], what: str) -> str | None:
        """One input's value: the publisher's fixed `value` (its {placeholders} filled), else the
        user's, else the `default`; None when there is none and it is optional."""
        if "value" in spec:
            value: str | None = self.fill(spec["value"], spec.get("variables") or {}, path)
        else:
            value = self.given(*names)
            if value is None:
                value = spec.get("default")
        if value is None:
            if spec.get("isRequired"):
                hint = names[0] if names else "NAME"
                raise _problem(self.file, path, f"{what} is required and has no value: give it with "
                               f"--input {hint}=VALUE" + (f" or set {hint} in the environment"
                                                          if ENV_NAME.fullmatch(hint) else ""))
            return None
        self._check_choice(spec, value, path)
        if spec.get("isSecret") and value:
            self.secrets.append(value)
        return value

    def fill(self, template: str, variables: dict[str, Any], path: str) -> str:
        """`{name}` replaced by the variable's value; a name that is not in `variables` stays as
        written, as the schema says."""
        def one(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in variables:
                return match.group(0)
            value = self.resolve(variables[name], f"{path}.variables.{name}", (name,), f"variable {{{name}}}")
            if value is None:
                raise _problem(self.file, f"{path}.variables.{name}", f"variable {{{name}}} has no value: give "
                               f"it with --input {name}=VALUE")
            return value

        return _PLACEHOLDER.sub(one, template)

    def _check_choice(self, spec: dict[str, Any], value: str, path: str) -> None:
        choices = spec.get("choices")
        if choices and value not in choices:
            raise _problem(self.file, path, f"{json_value(value)} is not one of its choices: {', '.join(choices)}")


def _arguments(values: _Values, arguments: list[dict[str, Any]], path: str) -> list[str]:
    """Runtime or package arguments as argv words: a positional's value as one word, a named one
    as its flag and its value as two words (a flag alone when it has no value)."""
    words: list[str] = []
    for index, argument in enumerate(arguments):
        where = f"{path}[{index}]"
        if argument["type"] == "positional":
            hint = argument.get("valueHint", "")
            value = values.resolve(argument, where, (hint,), f"positional argument {hint or index}")
            if value is not None:
                words.append(value)
        else:
            flag = argument["name"]
            bare = flag.lstrip("-")
            value = values.resolve(argument, where, (bare, flag), f"argument {flag}")
            if value is None and not argument.get("isRequired"):
                continue
            words.append(flag)
            if value:
                words.append(value)
    return words


def _environment(values: _Values, package: dict[str, Any], path: str,
                 cli_env: Mapping[str, str]) -> list[tuple[str, str]]:
    """The package's environmentVariables: -e first, then the user's environment, then the
    publisher's value or default; a required one without any is a usage error naming it. A value
    the file sets for a variable that steers the runtime (serverjson_env.STEERING) is refused
    unless the user allowed its name (--allow-env); every one of them in one message."""
    env: list[tuple[str, str]] = []
    refused: list[str] = []
    refused_names: list[str] = []
    for index, spec in enumerate(package.get("environmentVariables", [])):
        name = spec["name"]
        where = f"{path}.environmentVariables[{index}]"
        from_file = False
        if name in cli_env:
            value: str | None = cli_env[name]
        elif name in values.environ:
            value = values.environ[name]
        elif "value" in spec:
            value, from_file = values.fill(spec["value"], spec.get("variables") or {}, where), True
        else:
            value, from_file = spec.get("default"), "default" in spec
        if value is None:
            if spec.get("isRequired"):
                kind = "secret " if spec.get("isSecret") else ""
                raise _problem(values.file, where, f"the {kind}environment variable {name} is required: set it "
                               f"in the environment or give -e {name}=VALUE")
            continue
        if from_file and name not in values.allow_env and (rule := steering(name)) is not None:
            shown = "a secret value" if spec.get("isSecret") else json_value(value)
            refused.append(f"{where}: {name}={shown}: {rule.why}")
            refused_names.append(name)
        if spec.get("isSecret"):
            values.secret_env.append(name)
            if value:
                values.secrets.append(value)
        env.append((name, value))
    if refused:
        raise ServerJsonProblem(
            f"--server-json {values.file}: the file sets environment variables that change what the runtime "
            "loads or where it fetches from, so what would run is not what is shown:\n  " + "\n  ".join(refused)
            + "\nnothing was started; to run it with these values anyway, add "
            + " ".join(f"--allow-env {name}" for name in dict.fromkeys(refused_names)))
    return env


# ----- packages: which runtime, and the command -----

def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def installed_script(identifier: str, version: str, which: Which) -> str | None:
    """A console script named after a PyPI package, on the PATH, in an environment where exactly
    that version of the package is installed (its `NAME-VERSION.dist-info`); None otherwise."""
    script = which(identifier)
    if script is None:
        return None
    home = Path(script).resolve().parent.parent  # bin/NAME of a venv (pipx links it from elsewhere)
    wanted = (_normal(identifier), version)
    for dist_info in home.glob("lib/python*/site-packages/*.dist-info"):
        name, _, found = dist_info.name[: -len(".dist-info")].rpartition("-")
        if (_normal(name), found) == wanted:
            return script
    return None


def _runtime(package: dict[str, Any], which: Which) -> tuple[str, list[str]] | str:
    """How this machine runs the package: (runtime name, the argv before the runtime arguments
    and the package itself); or why it cannot (a string)."""
    kind, name, version = package["registryType"], package["identifier"], package.get("version")
    if kind == "npm":
        npx = which("npx")
        return ("npx", [npx, "-y"]) if npx else "npx is not on the PATH (it comes with Node.js)"
    if kind == "pypi":
        assert version is not None
        if uvx := which("uvx"):
            return "uvx", [uvx]
        if pipx := which("pipx"):
            return "pipx", [pipx, "run", "--spec", f"{name}=={version}"]
        if script := installed_script(name, version, which):
            return "installed console script", [script]
        return (f"neither uvx nor pipx is on the PATH, and no console script {name} of {name} {version} is "
                "installed on it")
    if kind == "oci":
        docker = which("docker")
        return ("docker", [docker, "run", "-i", "--rm"]) if docker else "docker is not on the PATH"
    if kind == "nuget":
        dnx = which("dnx")
        return ("dnx", [dnx]) if dnx else "dnx is not on the PATH (it comes with the .NET 10 SDK)"
    return "mcpprobe does not download and unpack MCPB bundles: install it, then probe its command after '--'"


def _package_command(values: _Values, package: dict[str, Any], path: str, runtime: str,
                     head: list[str], env: list[tuple[str, str]]) -> list[str]:
    kind, name, version = package["registryType"], package["identifier"], package.get("version")
    runtime_args = _arguments(values, package.get("runtimeArguments", []), f"{path}.runtimeArguments")
    package_args = _arguments(values, package.get("packageArguments", []), f"{path}.packageArguments")
    if runtime_args and runtime in ("pipx", "installed console script"):
        raise _problem(values.file, f"{path}.runtimeArguments",
                       f"runtime arguments are for {package.get('runtimeHint') or 'uvx'}, which is not on the "
                       f"PATH; mcpprobe would run it with {runtime}")
    if kind == "npm":
        return [*head, *runtime_args, f"{name}@{version}", *package_args]
    if kind == "pypi":
        if runtime == "uvx":
            return [*head, *runtime_args, f"{name}=={version}", *package_args]
        if runtime == "pipx":
            return [*head, name, *package_args]
        return [*head, *package_args]
    if kind == "oci":
        # The container sees only the variables named with -e; docker takes each value from its own
        # environment, so no value shows on the command line.
        passed = [word for key, _ in env for word in ("-e", key)]
        return [*head, *passed, *runtime_args, name, *package_args]
    # nuget: `dnx NAME@VERSION --yes -- ARGS` (the registry's own example: dnx ... -- mcp start)
    return [*head, *runtime_args, f"{name}@{version}", "--yes", *(["--", *package_args] if package_args else [])]


def _build_package(doc: dict[str, Any], file: str, index: int, values: _Values, cli_env: Mapping[str, str],
                   which: Which) -> Launch | str:
    """The package at `index` as a Launch, or why this machine cannot run it (a string)."""
    package = doc["packages"][index]
    path = f"$.packages[{index}]"
    transport = package["transport"]["type"]
    if transport != "stdio":
        return (f"its transport is {transport}: mcpprobe starts packages over stdio only; start it yourself "
                "and give mcpprobe its URL")
    found = _runtime(package, which)
    if isinstance(found, str):
        return found
    runtime, head = found
    if (unknown := unknown_inputs(doc, "packages", index, values.inputs)) is not None:  # before any value is read
        raise _problem(file, path, unknown)
    env = _environment(values, package, path, cli_env)
    command = _package_command(values, package, path, runtime, head, env)
    if any("\0" in word for word in command):
        raise _problem(file, path, "an argument has a NUL character, which no program can receive")
    return Launch(_published(doc, file, path), command=tuple(command), env=tuple(env),
                  secrets=tuple(values.secrets), secret_env=tuple(values.secret_env), runtime=runtime)


def _build_remote(doc: dict[str, Any], file: str, index: int, values: _Values) -> Launch:
    remote = doc["remotes"][index]
    path = f"$.remotes[{index}]"
    if (unknown := unknown_inputs(doc, "remotes", index, values.inputs)) is not None:
        raise _problem(file, path, unknown)
    url = values.fill(remote["url"], remote.get("variables") or {}, f"{path}.url")
    unfilled = _PLACEHOLDER.search(url)
    if unfilled:
        raise _problem(file, f"{path}.url", f"{{{unfilled.group(1)}}} has no value (not among the remote's "
                       "variables)")
    headers: list[tuple[str, str]] = []
    for number, spec in enumerate(remote.get("headers", [])):
        value = values.resolve(spec, f"{path}.headers[{number}]", (spec["name"],), f"header {spec['name']}")
        if value is not None:
            headers.append((spec["name"], value))
    return Launch(_published(doc, file, path), url=url, transport=REMOTE_TYPES[remote["type"]],
                  headers=tuple(headers), secrets=tuple(values.secrets), runtime="remote")


def _published(doc: dict[str, Any], file: str, chosen: str) -> Published:
    return Published(file=file, name=doc["name"], version=doc["version"], chosen=chosen)


def build(doc: dict[str, Any], file: str, *, package: int | None = None, remote: int | None = None,
          inputs: Mapping[str, str] | None = None, environ: Mapping[str, str] | None = None,
          cli_env: Mapping[str, str] | None = None, which: Which = shutil.which,
          allow_env: Iterable[str] = ()) -> Launch:
    """The package or remote to use, as a Launch. `package`/`remote`: the one asked for (0-based);
    neither: the first package this machine can run, else the first remote."""
    values = _Values(file, dict(inputs or {}), os.environ if environ is None else environ, frozenset(allow_env))
    cli_env = dict(cli_env or {})
    packages, remotes = doc.get("packages", []), doc.get("remotes", [])
    if package is not None and remote is not None:
        raise ServerJsonProblem("give either --package N or --remote N, not both")
    if package is not None:
        if not 0 <= package < len(packages):
            raise _problem(file, "$.packages", f"--package {package} is out of range: the file has "
                           f"{len(packages)} package{'' if len(packages) == 1 else 's'} (0 to {len(packages) - 1})"
                           if packages else f"--package {package}: the file has no packages")
        built = _build_package(doc, file, package, values, cli_env, which)
        if isinstance(built, str):
            raise _problem(file, f"$.packages[{package}]", f"cannot be run here: {built}")
        return built
    if remote is not None:
        if not 0 <= remote < len(remotes):
            raise _problem(file, "$.remotes", f"--remote {remote} is out of range: the file has {len(remotes)} "
                           f"remote{'' if len(remotes) == 1 else 's'} (0 to {len(remotes) - 1})"
                           if remotes else f"--remote {remote}: the file has no remotes")
        return _build_remote(doc, file, remote, values)
    skipped: list[str] = []
    for index in range(len(packages)):
        built = _build_package(doc, file, index, values, cli_env, which)
        if isinstance(built, Launch):
            return replace(built, skipped=tuple(skipped))
        skipped.append(f"$.packages[{index}] ({packages[index]['registryType']}): {built}")
    if remotes:
        built_remote = _build_remote(doc, file, 0, values)
        return replace(built_remote, skipped=tuple(skipped))
    if not skipped:
        raise _problem(file, "$", "no packages and no remotes: nothing to run or reach")
    raise _problem(file, "$.packages", "nothing this machine can run, and no remotes: " + "; ".join(skipped))


# ----- what runs, against what the file says -----

def identity_judge(published: Published) -> Callable[[Snapshot], list[Finding]]:
    """The session hook (`SessionHooks.judge_snapshot`) that compares a server's snapshot with the
    file: the operation that keeps the snapshot calls it once, whichever command runs."""
    return lambda snapshot: identity_findings(published, snapshot.server_info)


def identity_findings(published: Published, server_info: Mapping[str, Any] | None) -> list[Finding]:
    """`server-json-mismatch` where serverInfo disagrees with the file (docs/findings.md).

    The version: the schema calls server.json's `version` the "Equivalent of Implementation.version
    in MCP specification", so a serverInfo.version that differs is a warning. The name: server.json's
    is reverse-DNS (`io.github.user/weather`) and the schema ties it to nothing in serverInfo, so only
    a name that shares nothing with the file's last segment is noted, as info."""
    if not server_info:
        return []
    found = []
    detail = {"file": published.file, "chosen": published.chosen}
    running_version = server_info.get("version")
    if isinstance(running_version, str) and running_version.strip() != published.version.strip():
        found.append(Finding("server-json-mismatch", f"the server reports version {json_value(running_version)}; "
                             f"the server.json says {json_value(published.version)}", detail={
                                 **detail, "field": "version", "serverInfo": running_version,
                                 "serverJson": published.version}))
    running_name = server_info.get("name")
    if isinstance(running_name, str) and not _names_agree(published.name, running_name):
        found.append(Finding(
            "server-json-mismatch", f"the server calls itself {json_value(running_name)}; the server.json names "
            f"{json_value(published.name)}", severity=Severity.INFO,
            detail={**detail, "field": "name", "serverInfo": running_name, "serverJson": published.name}))
    return found


def _words(name: str) -> set[str]:
    return {word for word in re.split(r"[^a-z0-9]+", name.lower()) if word}


def _names_agree(published: str, running: str) -> bool:
    """The file's name (`namespace/server`) and serverInfo.name agree when one holds the other, or
    the file's server part and the running name share a word (`io.github.x/weather` and
    `weather-mcp`). Generic words (mcp, server) do not count."""
    generic = {"mcp", "server", "servers", "io", "com", "github", "org", "net", "dev", "ai"}
    last = published.rpartition("/")[2].lower()
    if last in running.lower() or running.lower() in published.lower():
        return True
    return bool((_words(last) - generic) & (_words(running) - generic))
