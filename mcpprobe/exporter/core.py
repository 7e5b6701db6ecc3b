"""The exporter's work: which targets exist, when a probe runs, and what it answers.

A probe for (target, module) runs at most once per `min_interval`: a scrape inside that window is
answered from the last result (with its age), and a scrape that arrives while a probe of the same
pair is running waits for that probe instead of starting another. So several Prometheus replicas
scraping one exporter cost each server one probe per interval. At most `concurrency` probes run at
once, at most `per_target_concurrency` per target; a scrape that cannot get a slot before its
deadline is answered 503.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from mcpprobe.client.settings import Settings
from mcpprobe.errors import ProbeError, ProtocolFailure, Refused, RequestTimeout, UsageProblem, seconds
from mcpprobe.exporter.settings import ExporterConfig, Module, load_config
from mcpprobe.fleet.probe import Extras, Member, Report, probe_member
from mcpprobe.operations.outcome import Outcome
from mcpprobe.safety import redact

# Whether a tool is called is the one rule of every command (operations.checks.confirmation_needed): marked
# `readOnlyHint: true`, or a yes at a terminal, or --yes. The exporter is deliberately stricter than `call`: a
# scrape has no terminal to ask on, and the exporter has no --yes, so its `call` and `load` modules call
# read-only tools only; any other is refused by that rule, unsent (not-confirmed, exit code 3).
NO_YES = False


def _only_read_only(outcome: Outcome) -> None:
    """The rule's refusal of a tool not marked read-only says "pass --yes": the exporter has none, so
    its refusal says why instead (the same code, exit code and detail)."""
    error = outcome.error
    if isinstance(error, Refused) and error.code == "not-confirmed" \
            and error.detail.get("confirmation") == "non-interactive":
        outcome.error = Refused(f"tool {error.detail.get('tool')!r} is not annotated readOnlyHint: true; the exporter "
                                "calls only read-only tools. Nothing was sent.", code=error.code, detail=error.detail)


class UnknownTarget(Exception):
    """A target or module that is not in the configs: nothing is started."""


class Busy(Exception):
    """No probe slot before the scrape's deadline."""


@dataclass
class Result:
    report: Report
    module: str
    finished: float  # monotonic
    wall: float  # time.time()


@dataclass
class _State:
    last: Result | None = None
    running: anyio.Event | None = None


@dataclass
class Loaded:
    """One reading of the configs: swapped whole on reload."""

    discovery: Any  # config.Discovery
    config: ExporterConfig
    when: float = field(default_factory=time.time)


class Metrics:
    """The exporter's own metrics, in a registry of its own (not the process-wide default)."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry = CollectorRegistry(auto_describe=True)
        labels = ("target", "module")
        self.probes = Counter("mcpprobe_exporter_probes", "probes run", labels, registry=self.registry)
        self.failed = Counter("mcpprobe_exporter_probes_failed", "probes whose exit code was not 0", labels,
                              registry=self.registry)
        self.cached = Counter("mcpprobe_exporter_cached_answers", "scrapes answered from an earlier result "
                              "(min_interval, or a probe of the same target and module already running)", labels,
                              registry=self.registry)
        self.rejected = Counter("mcpprobe_exporter_scrapes_rejected", "scrapes refused: unknown target or module "
                                "(reason=unknown), or no probe slot before the deadline (reason=busy)", ("reason",),
                                registry=self.registry)
        self.duration = Histogram("mcpprobe_exporter_probe_duration_seconds", "wall time of each probe run",
                                  ("module",), registry=self.registry,
                                  buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60))
        self.in_flight = Gauge("mcpprobe_exporter_probes_in_flight", "probes running now", registry=self.registry)
        self.reloads = Counter("mcpprobe_exporter_config_reloads", "config reloads", ("result",),
                               registry=self.registry)
        self.reload_ok = Gauge("mcpprobe_exporter_config_last_reload_successful",
                               "1 when the last config reload worked", registry=self.registry)
        self.reload_time = Gauge("mcpprobe_exporter_config_last_reload_success_timestamp_seconds",
                                 "when the configs were last read successfully", registry=self.registry)
        self.targets = Gauge("mcpprobe_exporter_targets", "named servers the exporter may probe",
                             registry=self.registry)


class Exporter:
    def __init__(self, config_files: tuple[str, ...], exporter_config: str | None, *,
                 say: Callable[[str], None] | None = None) -> None:
        self.config_files = config_files
        self.exporter_config = exporter_config
        self.say = say or (lambda _: None)
        self.metrics = Metrics()
        self.loaded = self._read()
        self.metrics.reloads.labels("success").inc(0)
        self.metrics.reloads.labels("failure").inc(0)
        self._mark_loaded()
        self.states: dict[tuple[str, str], _State] = {}
        self._limit = anyio.Semaphore(self.loaded.config.concurrency)
        self._limit_size = self.loaded.config.concurrency
        self._per_target: dict[str, anyio.Semaphore] = {}
        self._secrets: set[str] = set()

    # ----- configs -----

    def _read(self) -> Loaded:
        from mcpprobe.fleet.config import discover

        return Loaded(discover(self.config_files), load_config(self.exporter_config))

    def _mark_loaded(self) -> None:
        self.metrics.reload_ok.set(1)
        self.metrics.reload_time.set(self.loaded.when)
        self.metrics.targets.set(len(self.loaded.discovery.servers))

    def reload(self) -> str | None:
        """Read the configs again; on an error keep the old ones and return the error's text."""
        try:
            loaded = self._read()
        except UsageProblem as exc:
            self.metrics.reloads.labels("failure").inc()
            self.metrics.reload_ok.set(0)
            self.say(f"reload failed, keeping the previous configs: {exc.message}")
            return exc.message
        self.loaded = loaded
        self.metrics.reloads.labels("success").inc()
        self._mark_loaded()
        names, modules = set(loaded.discovery.names()), set(loaded.config.modules)
        for key in [k for k in self.states if k[0] not in names or k[1] not in modules]:
            del self.states[key]
        if loaded.config.concurrency != self._limit_size:
            self._limit, self._limit_size = anyio.Semaphore(loaded.config.concurrency), loaded.config.concurrency
        self._per_target.clear()
        self.say(f"configs reloaded: {len(names)} targets, {len(modules)} modules")
        return None

    def targets(self) -> list[Any]:
        """The servers offered for scraping: a `"disabled": true` entry is skipped, as `probe --all`
        skips it; named by a scrape (`/probe?target=NAME`) it is probed, as `-s NAME` probes it."""
        return [entry for entry in self.loaded.discovery.servers if not entry.disabled]

    def disabled(self) -> list[Any]:
        return [entry for entry in self.loaded.discovery.servers if entry.disabled]

    def redactor(self) -> redact.Redactor:
        return redact.Redactor(self._secrets)

    def lookup(self, target: str, module: str) -> tuple[Any, Module]:
        servers = {entry.name: entry for entry in self.loaded.discovery.servers}
        if target not in servers:
            raise UnknownTarget(f"unknown target {target!r}: targets are names of servers in the exporter's "
                                "configs (see /), never URLs or commands")
        modules = self.loaded.config.modules
        if module not in modules:
            raise UnknownTarget(f"unknown module {module!r}; modules: {', '.join(modules)}")
        return servers[target], modules[module]

    # ----- probing -----

    def deadline(self, module: Module, scrape_timeout: float | None) -> float:
        """The probe's deadline: the scrape's timeout minus the margin, never more than the module's."""
        config = self.loaded.config
        limit = module.timeout if module.timeout is not None else config.timeout
        if scrape_timeout is not None:
            limit = min(limit, scrape_timeout - config.timeout_margin)
        return max(limit, 0.1)

    async def probe(self, target: str, module_name: str, scrape_timeout: float | None) -> tuple[Result, bool]:
        """The result for one scrape, and whether it is an earlier one. Raises UnknownTarget, Busy."""
        entry, module = self.lookup(target, module_name)
        deadline = self.deadline(module, scrape_timeout)
        started = time.monotonic()
        interval = module.min_interval if module.min_interval is not None else self.loaded.config.min_interval
        key = (target, module_name)
        state = self.states.setdefault(key, _State())
        if state.last is not None and started - state.last.finished < interval:
            self.metrics.cached.labels(target, module_name).inc()
            return state.last, True
        if state.running is not None:
            running = state.running
            with anyio.move_on_after(deadline):
                await running.wait()
            if state.last is not None and state.last.finished >= started:
                self.metrics.cached.labels(target, module_name).inc()
                return state.last, True
            raise Busy(f"a probe of {target!r} with module {module_name!r} is still running")
        state.running = anyio.Event()
        try:
            per_target = self._per_target.setdefault(target, anyio.Semaphore(self.loaded.config.per_target_concurrency))
            limit = self._limit
            held: list[anyio.Semaphore] = []
            try:
                with anyio.move_on_after(deadline):
                    for semaphore in (limit, per_target):
                        await semaphore.acquire()
                        held.append(semaphore)
                if len(held) < 2:
                    self.metrics.rejected.labels("busy").inc()
                    raise Busy(f"no probe slot within {seconds(deadline)} s: {self.loaded.config.concurrency} probes "
                               f"at once, {self.loaded.config.per_target_concurrency} per target")
                left = deadline - (time.monotonic() - started)
                result = await self._run(entry, module, max(left, 0.1))
            finally:
                for semaphore in held:
                    semaphore.release()
            state.last = result
            return result, False
        finally:
            state.running.set()
            state.running = None

    async def _run(self, entry: Any, module: Module, deadline: float) -> Result:
        self.metrics.in_flight.inc()
        began = time.perf_counter()
        try:
            report = await self._check(entry, module, deadline)
        finally:
            self.metrics.in_flight.dec()
        elapsed = time.perf_counter() - began
        report.elapsed = elapsed
        self.metrics.duration.labels(module.name).observe(elapsed)
        self.metrics.probes.labels(entry.name, module.name).inc()
        if int(report.exit_code) != 0:
            self.metrics.failed.labels(entry.name, module.name).inc()
        return Result(report, module.name, time.monotonic(), time.time())

    async def _member(self, entry: Any, module: Module, deadline: float) -> Member:
        from mcpprobe.fleet import drift
        from mcpprobe.fleet.config import resolve
        from mcpprobe.wire.target import build_target

        settings = self._settings(module, deadline)
        try:
            resolved = resolve(entry)  # no prompts: a daemon has no terminal
            target = build_target(resolved.url, resolved.command, transport=resolved.transport,
                                  headers=resolved.headers, env=resolved.env, cwd=resolved.cwd)
            secrets = [*resolved.secrets]
            if entry.auth:
                target, more = await self._authorized(entry, target, settings.connect_timeout)
                secrets.extend(more)
            self._add_secrets([*secrets, *target.secrets()])
            member = Member(entry.name, target, settings, source=entry.source)
            if module.baseline:
                path = module.baseline.replace("{target}", entry.name)
                try:
                    member.baseline = (path, drift.load(path))
                except drift.BaselineMissing:  # a target new to the config: probed, not compared
                    member.baseline_missing = path
                    member.baseline_setting = f"module {module.name}'s baseline"
        except ProbeError as exc:
            return Member(entry.name, None, settings, source=entry.source, problem=exc)
        return member

    @staticmethod
    def _settings(module: Module, deadline: float) -> Settings:
        # Requests time out a little before the probe's deadline, so that a slow request still gives a
        # report that says where it stopped; the deadline itself cuts whatever is left.
        request = deadline * 0.8
        return Settings(protocol=module.protocol, timeout=request, connect_timeout=min(10.0, request),
                        discover_timeout=min(2.0, request / 2), max_pages=module.max_pages)

    async def _authorized(self, entry: Any, target: Any, timeout: float) -> tuple[Any, list[str]]:
        """The entry's auth keys (bearerEnv, clientId, clientSecretEnv, scope; docs/auth.md), as
        `probe -s NAME` applies them, without a browser: a daemon has nobody to log in."""
        from mcpprobe.auth.apply import resolve_token, token_facts, with_bearer
        from mcpprobe.auth.settings import AuthSettings
        from mcpprobe.wire.target import HttpTarget

        auth = AuthSettings(no_browser=True).merged(AuthSettings.from_config(dict(entry.auth)))
        if not isinstance(target, HttpTarget):
            raise UsageProblem(f"server {entry.name!r}: bearerEnv, clientId and clientSecretEnv apply to HTTP "
                               "servers; for a command use env")
        has_header = any(name.lower() == "authorization" for name, _ in target.headers)
        resolved = await resolve_token(target.url, auth, timeout=timeout, insecure=target.insecure,
                                       has_authorization_header=has_header)
        secrets = [*auth.secrets(), *([resolved.token] if resolved.token else [])]
        target = dataclasses.replace(target, token=token_facts(resolved, auth, target.headers))
        return (with_bearer(target, resolved.token) if resolved.token else target), secrets

    def _add_secrets(self, secrets: list[str]) -> None:
        new = {s for s in secrets if s} - self._secrets
        if new:
            self._secrets |= new
            redact.use(self.redactor())

    async def _check(self, entry: Any, module: Module, deadline: float) -> Report:
        """The probe of one scrape. The deadline bounds all of it: the token a target's auth keys fetch
        (a token endpoint that trickles included), the connection, every request; when it passes,
        what is left is cut, the report says so, and the scrape's slot is free again."""
        began = time.perf_counter()
        outcome: Outcome | None = None
        report: Report | None = None
        member: Member | None = None
        with anyio.move_on_after(deadline):
            try:
                member = await self._member(entry, module, deadline)
                if module.check == "probe" or member.target is None:
                    extras = Extras(self.loaded.config.expectations.get(module.name))
                    report = await probe_member(member, extras)
                elif module.check == "load":
                    outcome = await self._load(member, module, deadline)
                elif module.check == "list":
                    from mcpprobe.operations.probe import list_one

                    outcome = await list_one(member.target, member.settings, module.kind or "tools")
                else:
                    outcome = await self._call(member, module)
            except Exception as exc:  # noqa: BLE001 - one broken probe must not end the exporter
                outcome = Outcome(module.check, error=ProtocolFailure(f"internal error: {type(exc).__name__}: {exc}"))
        if report is None:
            if outcome is not None:
                _only_read_only(outcome)
            if outcome is None:
                outcome = Outcome(module.check, error=RequestTimeout(
                    f"the probe did not finish within its deadline of {seconds(deadline)} s"
                    + ("" if member is not None else " (fetching the target's token)")))
            if member is None:
                member = Member(entry.name, None, self._settings(module, deadline), source=entry.source,
                                problem=outcome.error)
            report = Report(member, outcome, elapsed=time.perf_counter() - began)
        return report

    async def _call(self, member: Member, module: Module) -> Outcome:
        """A call of a tool the server itself annotates read-only; any other tool is refused unsent."""
        from mcpprobe.operations.arguments import ToolArguments
        from mcpprobe.operations.input import Unattended
        from mcpprobe.operations.invoke import call_tool

        assert member.target is not None
        return await call_tool(member.target, member.settings, module.tool or "", ToolArguments(dict(module.arguments)),
                               hooks=Unattended(yes=NO_YES))

    async def _load(self, member: Member, module: Module, deadline: float) -> Outcome:
        """A short load run within its budget (docs/exporter.md#the-load-module): only read-only tools,
        as for `call`; its duration cut to half the probe's deadline and each request's timeout to
        30 % of it, so that connecting, the checks and the requests still in flight fit in the rest."""
        from mcpprobe.load.run import Plan, run_load

        budget = module.load
        assert member.target is not None and budget is not None
        plan = Plan(budget.specs, requests=budget.requests, duration=min(budget.duration, deadline / 2),
                    concurrency=budget.concurrency, rate=budget.rate, slos=budget.slos,
                    interval=max(min(budget.duration, deadline / 2) / 8, 0.1), yes=NO_YES)
        # A request still in flight when the duration ends gets what is left, not 80% of the deadline.
        settings = dataclasses.replace(member.settings, timeout=min(member.settings.timeout, max(deadline * 0.3, 0.1)))
        return await run_load(member.target, settings, plan)
