"""The exporter's own files: its config (modules and limits) and the web config (TLS, basic auth).

Both are read once at start (the exporter config again on reload) and checked completely: a key
that is not known is an error naming the file, never silently ignored.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpprobe.client.catalog import KINDS
from mcpprobe.errors import UsageProblem

CHECKS = ("probe", "list", "call", "load")
# mcpprobe is installed from a clone (it is on no package index), so `pip install 'mcpprobe[exporter]'`
# would fetch someone else's package, or nothing.
INSTALL_EXTRA = ("install mcpprobe with its exporter extra (in its source directory: pip install '.[exporter]'), "
                 "or pip install prometheus_client bcrypt")
MODULE_KEYS = {"check", "kind", "tool", "arguments", "expect", "baseline", "protocol", "timeout", "max_pages",
               "min_interval", "work", "requests", "duration", "concurrency", "rate", "slos"}
LOAD_KEYS = ("work", "requests", "duration", "concurrency", "rate", "slos")
# A `load` module's budget: small by default, bounded whatever the config says. Each scrape of it
# sends up to `requests` requests within `duration` seconds to the server (docs/exporter.md).
LOAD_REQUESTS, MAX_LOAD_REQUESTS = 50, 10_000
LOAD_DURATION, MAX_LOAD_DURATION = 2.0, 60.0
LOAD_CONCURRENCY, MAX_LOAD_CONCURRENCY = 2, 64
MAX_LOAD_RATE = 1000.0
LOAD_MIN_INTERVAL = 60.0  # a load module's min_interval unless it sets its own
LOAD_WORK_KINDS = ("call", "read", "list", "get-prompt", "ping")
TOP_KEYS = {"modules", "min_interval", "concurrency", "per_target_concurrency", "timeout", "timeout_margin"}


class ExporterConfigError(UsageProblem):
    code = "config-error"


@dataclass(frozen=True)
class Module:
    """What one check of a target does."""

    name: str
    check: str = "probe"  # probe | list | call
    kind: str | None = None  # for list
    tool: str | None = None  # for call: a tool the server annotates readOnlyHint: true
    arguments: dict[str, Any] = field(default_factory=dict)
    expect: str | None = None  # a path (probe only)
    baseline: str | None = None  # a path, {target} replaced by the target's name (probe only)
    protocol: str = "auto"
    timeout: float | None = None  # the probe's deadline when the scrape does not give a shorter one
    max_pages: int = 1000
    min_interval: float | None = None  # overrides the exporter's
    load: LoadBudget | None = None  # for load: the work and its budget


@dataclass(frozen=True)
class LoadBudget:
    """What a `load` module sends per probe: its operations (mcpprobe.load.work specs) and bounds."""

    specs: tuple[Any, ...]
    requests: int = LOAD_REQUESTS
    duration: float = LOAD_DURATION
    concurrency: int = LOAD_CONCURRENCY
    rate: float | None = None
    slos: tuple[Any, ...] = ()


@dataclass
class ExporterConfig:
    modules: dict[str, Module]
    min_interval: float = 15.0
    concurrency: int = 16
    per_target_concurrency: int = 1
    timeout: float = 10.0
    timeout_margin: float = 0.5
    expectations: dict[str, Any] = field(default_factory=dict)  # module name -> loaded expectations


def default_modules() -> dict[str, Module]:
    modules = {"probe": Module("probe")}
    for kind in KINDS:
        modules[kind] = Module(kind, check="list", kind=kind)
    return modules


def _number(where: str, value: Any, *, integer: bool = False, minimum: float = 0.0) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float) or (integer and not isinstance(value, int)):
        raise ExporterConfigError(f"{where}: expected {'an integer' if integer else 'a number'}, found {value!r}")
    if value != value or value in (float("inf"), float("-inf")) or value < minimum:
        raise ExporterConfigError(f"{where}: must be at least {minimum:g}, found {value!r}")
    return value


def _module(path: str, name: str, spec: Any) -> Module:
    from mcpprobe.wire.target import parse_protocol

    where = f"{path}: module {name!r}"
    if not isinstance(spec, dict):
        raise ExporterConfigError(f"{where}: expected a mapping")
    unknown = sorted(set(spec) - MODULE_KEYS)
    if unknown:
        known = ", ".join(sorted(MODULE_KEYS))
        raise ExporterConfigError(f"{where}: unknown keys {', '.join(unknown)} (known: {known})")
    check = spec.get("check", "probe")
    if check not in CHECKS:
        raise ExporterConfigError(f"{where}: check must be one of {', '.join(CHECKS)}, found {check!r}")
    kind = spec.get("kind")
    if check == "list" and kind not in KINDS:
        raise ExporterConfigError(f"{where}: check 'list' needs kind: one of {', '.join(KINDS)}")
    tool = spec.get("tool")
    if check == "call" and (not isinstance(tool, str) or not tool):
        raise ExporterConfigError(f"{where}: check 'call' needs tool: the name of a read-only tool")
    arguments = spec.get("arguments", {})
    if not isinstance(arguments, dict):
        raise ExporterConfigError(f"{where}: arguments must be a mapping")
    for key in LOAD_KEYS:
        if key in spec and check != "load":
            raise ExporterConfigError(f"{where}: {key} applies to check 'load' only")
    load = _load_budget(where, spec, spec.get("timeout")) if check == "load" else None
    for key in ("expect", "baseline"):
        if key in spec and check != "probe":
            raise ExporterConfigError(f"{where}: {key} applies to check 'probe' only")
        if key in spec and not isinstance(spec[key], str):
            raise ExporterConfigError(f"{where}: {key} must be a path")
    base = Path(path).parent
    expect = str(base / spec["expect"]) if "expect" in spec else None
    baseline = str(base / spec["baseline"]) if "baseline" in spec else None
    try:
        protocol = parse_protocol(str(spec.get("protocol", "auto")))
    except UsageProblem as exc:
        raise ExporterConfigError(f"{where}: {exc.message}") from None
    timeout = _number(f"{where}: timeout", spec["timeout"], minimum=0.1) if "timeout" in spec else None
    max_pages = _number(f"{where}: max_pages", spec.get("max_pages", 1000), integer=True, minimum=1)
    min_interval = _number(f"{where}: min_interval", spec["min_interval"]) if "min_interval" in spec else None
    if check == "load" and min_interval is None:
        min_interval = LOAD_MIN_INTERVAL
    return Module(name, check, kind, tool, dict(arguments), expect, baseline, protocol, timeout, max_pages,
                  min_interval, load)


def _load_budget(where: str, spec: dict[str, Any], timeout: Any) -> LoadBudget:
    """A load module's work (`work`: a list of "call TOOL K=V @W", "read URI", "list KIND",
    "get-prompt NAME K=V", "ping"), parsed as `mcpprobe load` parses its options, and its budget."""
    from mcpprobe.load.slo import SloSyntax, parse
    from mcpprobe.load.work import SpecError, parse_spec

    work = spec.get("work")
    if not isinstance(work, list) or not work or not all(isinstance(w, str) for w in work):
        raise ExporterConfigError(f"{where}: check 'load' needs work: a list such as [\"call get-sum a=1 b=2\", "
                                  "\"ping\"] (call, read, list, get-prompt, ping, each with an optional @WEIGHT)")
    specs = []
    for text in work:
        kind, _, rest = text.strip().partition(" ")
        if kind not in LOAD_WORK_KINDS:
            raise ExporterConfigError(f"{where}: work {text!r}: begins with one of {', '.join(LOAD_WORK_KINDS)}")
        try:
            specs.append(parse_spec(kind, f" {rest}" if kind == "ping" else rest))
        except (SpecError, UsageProblem, ValueError) as exc:
            message = exc.message if isinstance(exc, UsageProblem) else str(exc)
            raise ExporterConfigError(f"{where}: work {text!r}: {message}") from None
        if kind == "ping" and rest.strip() and not rest.strip().startswith("@"):
            raise ExporterConfigError(f"{where}: work {text!r}: ping takes nothing, or @WEIGHT")
    requests = _number(f"{where}: requests", spec.get("requests", LOAD_REQUESTS), integer=True, minimum=1)
    duration = _number(f"{where}: duration", spec.get("duration", LOAD_DURATION), minimum=0.1)
    concurrency = _number(f"{where}: concurrency", spec.get("concurrency", LOAD_CONCURRENCY), integer=True,
                          minimum=1)
    rate = _number(f"{where}: rate", spec["rate"], minimum=0.1) if spec.get("rate") is not None else None
    for key, found, most in (("requests", requests, MAX_LOAD_REQUESTS), ("duration", duration, MAX_LOAD_DURATION),
                             ("concurrency", concurrency, MAX_LOAD_CONCURRENCY), ("rate", rate, MAX_LOAD_RATE)):
        if found is not None and found > most:
            raise ExporterConfigError(f"{where}: {key} is at most {most:g} (a scrape must not become a stress test), "
                                      f"found {found:g}")
    if isinstance(timeout, int | float) and not isinstance(timeout, bool) and duration >= timeout:
        raise ExporterConfigError(f"{where}: duration {duration:g} s leaves no time to connect within the module's "
                                  f"timeout of {timeout:g} s")
    slos = spec.get("slos", [])
    if not isinstance(slos, list) or not all(isinstance(s, str) for s in slos):
        raise ExporterConfigError(f"{where}: slos must be a list such as [\"p99<50ms\", \"errors<1%\"]")
    try:
        parsed = tuple(parse(text) for text in slos)
    except SloSyntax as exc:
        raise ExporterConfigError(f"{where}: slos: {exc}") from None
    return LoadBudget(tuple(specs), requests, duration, concurrency, rate, parsed)


def load_config(path: str | None) -> ExporterConfig:
    """The exporter config (docs/exporter.md#the-exporter-config); the defaults without a file."""
    if path is None:
        return ExporterConfig(default_modules())
    data = _read_mapping(path, str(path))
    unknown = sorted(set(data) - TOP_KEYS)
    if unknown:
        raise ExporterConfigError(f"{path}: unknown keys {', '.join(unknown)} (known: {', '.join(sorted(TOP_KEYS))})")
    raw_modules = data.get("modules")
    if raw_modules is None:
        modules = default_modules()
    elif not isinstance(raw_modules, dict) or not raw_modules:
        raise ExporterConfigError(f"{path}: modules must be a non-empty mapping of names to modules")
    else:
        modules = {str(name): _module(path, str(name), spec) for name, spec in raw_modules.items()}
    config = ExporterConfig(
        modules,
        min_interval=_number(f"{path}: min_interval", data.get("min_interval", 15.0)),
        concurrency=_number(f"{path}: concurrency", data.get("concurrency", 16), integer=True, minimum=1),
        per_target_concurrency=_number(f"{path}: per_target_concurrency", data.get("per_target_concurrency", 1),
                                       integer=True, minimum=1),
        timeout=_number(f"{path}: timeout", data.get("timeout", 10.0), minimum=0.1),
        timeout_margin=_number(f"{path}: timeout_margin", data.get("timeout_margin", 0.5)),
    )
    from mcpprobe.fleet import expect
    for module in config.modules.values():
        if module.expect:
            try:
                config.expectations[module.name] = expect.load(module.expect)
            except UsageProblem as exc:
                raise ExporterConfigError(f"{path}: module {module.name!r}: {exc.message}") from None
    return config


# ----- the web config: the Prometheus exporter-toolkit's web.yml -----

WEB_KEYS = {"tls_server_config", "basic_auth_users", "http_server_config"}
TLS_KEYS = {"cert_file", "key_file"}


@dataclass(frozen=True)
class WebConfig:
    cert_file: str | None = None
    key_file: str | None = None
    users: tuple[tuple[str, bytes], ...] = ()  # (name, bcrypt hash)

    @property
    def tls(self) -> bool:
        return self.cert_file is not None

    @property
    def protected(self) -> bool:
        return self.tls or bool(self.users)


def load_web_config(path: str | None) -> WebConfig:
    """tls_server_config (cert_file, key_file) and basic_auth_users (name: bcrypt hash). Other
    keys of the exporter-toolkit's format are refused by name rather than ignored."""
    if path is None:
        return WebConfig()
    data = _read_mapping(path, f"--web-config {path}")
    unknown = sorted(set(data) - WEB_KEYS)
    if unknown:
        raise ExporterConfigError(f"--web-config {path}: unsupported keys {', '.join(unknown)}")
    if data.get("http_server_config"):
        raise ExporterConfigError(f"--web-config {path}: http_server_config is not supported")
    tls = data.get("tls_server_config") or {}
    if not isinstance(tls, dict):
        raise ExporterConfigError(f"--web-config {path}: tls_server_config must be a mapping")
    unknown = sorted(set(tls) - TLS_KEYS)
    if unknown:
        raise ExporterConfigError(f"--web-config {path}: tls_server_config: unsupported keys {', '.join(unknown)} "
                                  "(supported: cert_file, key_file)")
    if bool(tls.get("cert_file")) != bool(tls.get("key_file")):
        raise ExporterConfigError(f"--web-config {path}: tls_server_config needs both cert_file and key_file")
    base = Path(path).parent
    cert = str(base / tls["cert_file"]) if tls.get("cert_file") else None
    key = str(base / tls["key_file"]) if tls.get("key_file") else None
    for file in (cert, key):
        if file is not None and not Path(file).is_file():
            raise ExporterConfigError(f"--web-config {path}: {file}: no such file")
    users = data.get("basic_auth_users") or {}
    if not isinstance(users, dict):
        raise ExporterConfigError(f"--web-config {path}: basic_auth_users must map user names to bcrypt hashes")
    pairs = []
    for name, hashed in users.items():
        if not isinstance(hashed, str) or not hashed.startswith(("$2a$", "$2b$", "$2y$")):
            raise ExporterConfigError(f"--web-config {path}: basic_auth_users.{name}: not a bcrypt hash "
                                      "(make one with: htpasswd -nbBC 10 '' PASSWORD | tr -d ':\\n')")
        pairs.append((str(name), hashed.encode()))
    if pairs:
        try:
            import bcrypt  # noqa: F401
        except ImportError:
            raise ExporterConfigError(f"basic_auth_users needs the bcrypt package: {INSTALL_EXTRA}") from None
    return WebConfig(cert, key, tuple(pairs))


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def parse_listen(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise UsageProblem(f"--listen-address expects HOST:PORT, got {text!r}")
    return host.strip("[]") or "0.0.0.0", int(port)


def _read_mapping(path: str | Path, what: str) -> dict[str, Any]:
    """A YAML mapping from a file the user named, read as every user file is (mcpprobe.safety.userinput):
    not UTF-8, too deep or not YAML is an ExporterConfigError naming `what`, never a traceback."""
    import yaml

    from mcpprobe.safety import userinput
    text = userinput.read_text(str(path), what, error=ExporterConfigError)
    try:
        data = userinput.load_yaml(text, what, error=ExporterConfigError) or {}
    except yaml.YAMLError as exc:
        raise ExporterConfigError(f"{what}: invalid YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise ExporterConfigError(f"{what}: expected a mapping at the top level")
    return data
