"""`mcpprobe load`: the operation. It connects (one session, or `connections` of them over HTTP),
checks the work (mcpprobe.load.work), then sends it on a schedule (mcpprobe.load.schedule) and
measures every request into histograms (mcpprobe.load.histogram); a stdio server's process tree is
sampled as it goes (mcpprobe.load.sampler); at the end the SLOs are judged (mcpprobe.load.slo).

Like every operation it never prints: `on_tick` is given the figures so far once per interval (the
live line), and the outcome carries everything the renderers show.
"""

from __future__ import annotations

import math
import resource
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

from mcpprobe.client.connect import NO_HOOKS, SessionHooks, open_session
from mcpprobe.client.session import Session
from mcpprobe.client.settings import Settings
from mcpprobe.errors import ProbeError
from mcpprobe.findings import Finding
from mcpprobe.load import sampler
from mcpprobe.load.figures import Stats, error_kind, server_gone, went_away
from mcpprobe.load.histogram import Histogram
from mcpprobe.load.live import LiveMetrics
from mcpprobe.load.schedule import Schedule
from mcpprobe.load.slo import Slo
from mcpprobe.load.work import Operation, Spec, interleave, prepare
from mcpprobe.operations.outcome import Outcome, guarded
from mcpprobe.wire.jsonrpc import Pending
from mcpprobe.wire.pipelined import Pipeline
from mcpprobe.wire.target import Target

if TYPE_CHECKING:
    from mcpprobe.operations.input import Confirmer

DEFAULT_DURATION = 10.0  # seconds, when neither --requests nor --duration is given
MAX_ROWS = 10_000  # interval rows and server samples kept; later ones are counted, not kept
SATURATED = 0.8  # the client's CPU share of one core from which it may be the bottleneck
MIN_SATURATED_SECONDS = 0.5  # a shorter run's CPU share says more about start-up than about the load
LATE_SECONDS = 0.010  # an open-loop request that started this much after it was due was late
LATE_SHARE = 0.01  # the share of late requests that makes a schedule-not-kept finding


@dataclass(frozen=True)
class Plan:
    """What `load` was asked to do (the command line's load options)."""

    specs: tuple[Spec, ...]
    requests: int | None = None
    duration: float | None = None
    concurrency: int = 1
    rate: float | None = None
    warmup: float = 0.0
    connections: int = 1
    interval: float = 1.0
    slos: tuple[Slo, ...] = ()
    yes: bool = False
    start_at: float | None = None  # --start-at: the wall-clock time (epoch seconds) the load begins, once connected
    # Who confirms a tool not marked read-only (a person at a terminal); None: only --yes.
    confirmer: Confirmer | None = field(default=None, compare=False, repr=False)

    @property
    def bounded_duration(self) -> float | None:
        if self.requests is None and self.duration is None:
            return DEFAULT_DURATION
        return self.duration

    def to_json(self) -> dict[str, Any]:
        return {"operations": [{"kind": s.kind, "subject": s.subject, "arguments": list(s.pairs), "weight": s.weight}
                               for s in self.specs],
                "loop": "open" if self.rate else "closed", "rate": self.rate, "concurrency": self.concurrency,
                "requests": self.requests, "duration": self.bounded_duration, "warmup": self.warmup,
                "connections": self.connections, "interval": self.interval, "slos": [s.text for s in self.slos],
                "startAt": self.start_at}


@dataclass
class LoadOutcome(Outcome):
    plan: Plan | None = None
    overall: dict[str, Any] | None = None
    operations: list[dict[str, Any]] = field(default_factory=list)
    histogram: Histogram | None = None
    intervals: list[dict[str, Any]] = field(default_factory=list)
    samples: list[sampler.Sample] = field(default_factory=list)
    dropped_rows: int = 0
    client: dict[str, Any] = field(default_factory=dict)
    schedule: dict[str, Any] = field(default_factory=dict)
    clock: dict[str, Any] = field(default_factory=dict)  # connectMs, firstAnswerMs, ...Seconds, startedAt, endedAt
    operation_histograms: list[Histogram] = field(default_factory=list)  # one per operation, as `operations`
    slos: list[dict[str, Any]] = field(default_factory=list)
    server_pid: int | None = None


class Runner:
    """One load run over ready sessions: workers take slots from the schedule, send, and record."""

    def __init__(self, plan: Plan, operations: list[Operation], sessions: list[Session], timeout: float,
                 on_tick: Any = None, server_pid: int | None = None) -> None:
        self.plan = plan
        self.operations = operations
        self.sessions = sessions
        self.timeout = timeout
        self.on_tick = on_tick
        self.cycle = interleave([op.weight for op in operations])
        self.per_op = [Stats() for _ in operations]
        self.window = Stats()  # the current interval's
        self.window_requests = 0
        self.lag = Histogram()
        self.late = 0
        self.in_flight = 0
        self.done = 0  # answered (or failed), warm-up included
        self.first_answer: float | None = None
        self.last_measured: float | None = None
        self.rows: list[dict[str, Any]] = []
        self.sampled = sampler.Samples(min(plan.interval, sampler.PERIOD))
        self.dropped = 0
        self.lost: ProbeError | None = None
        self.interrupted = False
        self.server_pid = server_pid if sampler.available(server_pid) else None
        self._workers: anyio.CancelScope | None = None
        self.schedule = Schedule(plan.rate, plan.requests, plan.bounded_duration, plan.warmup)
        self.started = 0.0
        self.cpu_started = 0.0
        self.cpu_seconds = 0.0
        self.wall_seconds = 0.0

    def interrupt(self) -> None:
        """Ctrl-C: no more requests; those in flight are given up (with a cancel notice); the figures stay."""
        self.interrupted = True
        self._stop()

    def _stop(self) -> None:
        self.schedule.stop()
        if self._workers is not None:
            self._workers.cancel()

    async def run(self) -> None:
        self.started = time.perf_counter()
        self.cpu_started = _cpu()
        self.schedule.begin(self.started)
        workers = self.plan.concurrency
        async with anyio.create_task_group() as outer:
            outer.start_soon(self._ticker)
            if self.server_pid is not None:
                outer.start_soon(self._sampler)
            with anyio.CancelScope() as scope:
                self._workers = scope
                pipelines = self._pipelines()
                if pipelines is not None:
                    await _Pipelined(self, pipelines).run()
                else:
                    async with anyio.create_task_group() as group:
                        for index in range(workers):
                            session = self.sessions[index % len(self.sessions)]
                            group.start_soon(self._worker, session, Pipeline.of(session.conn))
            outer.cancel_scope.cancel()
        self.wall_seconds = time.perf_counter() - self.started
        self.cpu_seconds = _cpu() - self.cpu_started
        self._row(time.perf_counter())
        self._sample(time.perf_counter())

    async def _worker(self, session: Session, pipeline: Pipeline | None) -> None:
        conn, timeout, operations, cycle = session.conn, self.timeout, self.operations, self.cycle
        schedule = self.schedule
        perf = time.perf_counter
        while True:
            slot = schedule.next()
            if slot is None:
                return
            index, due, measured = slot
            wait = due - perf()
            if wait > 0:
                await anyio.sleep(wait)
            op = operations[cycle[index % len(cycle)]]
            sent = perf()
            if schedule.open:
                lag = sent - due
                self.lag.record(int(lag * 1e6))
                if lag > LATE_SECONDS:
                    self.late += 1
            else:
                due = sent
            kind: str | None = None
            self.in_flight += 1
            posted = None
            try:
                if pipeline is not None:  # written at once when the transport can (stdio), else None
                    posted = pipeline.post(op.method, op.params, timeout=timeout, headers=op.headers)
                if posted is not None:
                    result = await posted.result()
                else:
                    call = await conn.send_request(op.method, op.params, timeout=timeout, headers=op.headers)
                    result = await call.result()
                if op.follow is not None and result.get("resultType") == "task":
                    result = await op.follow(session, result, timeout)  # the task to its end (load/work.py)
                    posted = None  # answered when the task ended, not when it was created
                if op.is_call and result.get("isError") is True:
                    kind = "isError"
            except ProbeError as exc:
                kind = error_kind(exc)
                if server_gone(exc) and self.lost is None:
                    self.lost = went_away(exc)
            finally:
                self.in_flight -= 1
            # Read off the wire, when known: the answer's time, not this task's turn to see it.
            answered = posted.answered if posted is not None and posted.answered else perf()
            self._record(cycle[index % len(cycle)], int((answered - due) * 1e6), kind, measured, answered)
            if conn.closed_error is not None and self.lost is None:
                self.lost = conn.closed_error
            if self.lost is not None:
                self._stop()
                return

    def _pipelines(self) -> list[Pipeline] | None:
        """Sessions whose transports queue sends (stdio, streamable HTTP) run as a pipeline, in either
        loop (`_Pipelined`); the others (HTTP+SSE, whose POST waits), and a load whose operations may
        become tasks (each followed to its end by its worker), have `concurrency` workers (None)."""
        if any(op.follow for op in self.operations):
            return None
        pipelines = [pipeline for s in self.sessions if (pipeline := Pipeline.of(s.conn)) is not None]
        return pipelines if len(pipelines) == len(self.sessions) else None

    def _record(self, op: int, micros: int, kind: str | None, measured: bool, answered: float) -> None:
        self.done += 1
        if self.first_answer is None:
            self.first_answer = answered
        self.window.add(micros, kind)
        if measured:
            self.per_op[op].add(micros, kind)  # the overall figures are their sum (`total`)
            self.last_measured = answered

    async def _ticker(self) -> None:
        interval = self.plan.interval
        tick = self.started
        while True:
            tick += interval
            await anyio.sleep(max(tick - time.perf_counter(), 0))
            now = time.perf_counter()
            self._row(now)
            if self.on_tick is not None:
                self.on_tick(self.live(now))

    def _row(self, now: float) -> None:
        window, self.window = self.window, Stats()
        begun = self.rows[-1]["t"] if self.rows else 0.0
        t = now - self.started
        seconds = t - begun
        if seconds <= 0 or (window.histogram.count == 0 and self.rows and t - begun < self.plan.interval / 2):
            return
        row = {"t": round(t, 3), "seconds": round(seconds, 3), **_row_figures(window, seconds),
               "inFlight": self.in_flight, "warmup": self.started + t <= self.schedule.measure_start}
        if len(self.rows) < MAX_ROWS:
            self.rows.append(row)
        else:
            self.dropped += 1

    async def _sampler(self) -> None:
        """The server's samples, every `sampled.period` (which grows as the run does), each read in a
        worker thread: reading /proc for every process takes milliseconds, during which the event loop
        would hold every answer of the load (and put the stall in its latency)."""
        assert self.server_pid is not None
        tick = self.started
        while True:
            now = time.perf_counter()
            self._sample(now, await anyio.to_thread.run_sync(sampler.sample_tree, self.server_pid))
            tick = max(tick + self.sampled.period, time.perf_counter())
            await anyio.sleep(tick - time.perf_counter())

    def _sample(self, now: float, found: tuple[int, int, int, int] | None = None) -> None:
        if self.server_pid is None:
            return
        if found is None:
            found = sampler.sample_tree(self.server_pid)
        if found is None:
            return
        self.sampled.add(sampler.Sample(now - self.started, *found, measured=now > self.schedule.measure_start))

    def total(self) -> Stats:
        """The whole run's figures: the operations' merged (one record per request, not two)."""
        if len(self.per_op) == 1:
            return self.per_op[0]
        total = Stats()
        for stats in self.per_op:
            total.histogram.merge(stats.histogram)
            for kind, n in stats.errors.items():
                total.errors[kind] = total.errors.get(kind, 0) + n
        return total

    def measured_seconds(self) -> float:
        start = self.schedule.measure_start
        end = self.last_measured if self.last_measured is not None else time.perf_counter()
        return max(end - start, 0.0)

    def live(self, now: float) -> dict[str, Any]:
        """The figures so far, for the live line: overall (measured) plus the last interval's rate."""
        seconds = self.measured_seconds()
        figures = self.total().figures(seconds)
        last = self.rows[-1] if self.rows else {}
        return {"elapsed": round(now - self.started, 3), "done": self.done, "inFlight": self.in_flight,
                "rate": last.get("throughput", 0.0), "warmup": now <= self.schedule.measure_start, **figures}


# A request of the pipeline in flight: (its operation, an index of `Runner.operations`; when its latency
# began, when it was due in an open loop; whether it is measured; when it was sent). A tuple: one is made
# per request, in the hot path, where a class's __init__ would be a call more.
_Flight = tuple[int, float, bool, float]


class _Lane:
    """One connection of the pipeline, with its requests in flight by id, oldest first (a dict keeps
    the order of insertion)."""

    __slots__ = ("pipeline", "flying", "load", "on_answer")

    def __init__(self, pipeline: Pipeline, load: _Pipelined) -> None:
        self.pipeline, self.load = pipeline, load
        self.flying: dict[int, _Flight] = {}
        self.on_answer = self.answered  # bound once: `enqueue` is given it for every request

    def answered(self, request_id: int, pending: Pending) -> None:
        """The pipeline's callback (`Pipeline.enqueue`): the answer to one of this lane's requests was
        read; it is recorded by kind (`isError` for a tool's error result)."""
        flight = self.flying.pop(request_id, None)
        if flight is None:
            return
        load = self.load
        kind: str | None = None
        error = pending.error
        if error is not None:
            kind = error_kind(error)
            runner = load.runner
            if server_gone(error) and runner.lost is None:
                runner.lost = went_away(error)
                runner._stop()
        elif load.calls[flight[0]]:
            result = pending.result
            if result is not None and result.get("isError") is True:
                kind = "isError"
        load.ended(self, flight, kind, pending.answered or time.perf_counter())


class _Pipelined:
    """The load without a task, future or timer per request. Each request is queued on a connection
    (`Pipeline.enqueue`, round robin); its answer, as the reader parses it, calls back here and is
    recorded. A closed loop queues the next request from that callback; an open loop has one
    dispatcher that queues each request when it is due, whether or not earlier ones were answered, up
    to `concurrency` in flight (a request due while all are busy waits for one, and its latency still
    counts from when it was due). One watchdog ends the requests past their timeout, oldest first: all
    have the same timeout, so the order they were sent in is the order they expire in, and each
    connection's in-flight table (`_Lane.flying`) is that order."""

    def __init__(self, runner: Runner, pipelines: list[Pipeline]) -> None:
        self.runner = runner
        # The runner's parts the hot path reads, looked up once.
        self.schedule, self.operations, self.cycle = runner.schedule, runner.operations, runner.cycle
        self.calls = [op.is_call for op in runner.operations]
        self.record = runner._record
        self.lanes = [_Lane(pipeline, self) for pipeline in pipelines]
        self.issuing = True  # the schedule may still give slots
        self.finished = anyio.Event()  # nothing more to issue, nothing in flight
        self.waiting: list[anyio.Event] = []  # the dispatcher, waiting for a request to end (open loop)

    async def run(self) -> None:
        runner = self.runner
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(self._watchdog)
                if self.schedule.open:
                    group.start_soon(self._dispatch)
                else:
                    for _ in range(runner.plan.concurrency):
                        self._next_closed()
                await self.finished.wait()
                group.cancel_scope.cancel()
        finally:
            for lane in self.lanes:  # Ctrl-C: the server is told, and the figures stay
                for request_id in list(lane.flying):
                    lane.pipeline.give_up(request_id, "cancelled by the user")
                lane.flying.clear()
            runner.in_flight = 0
            for lane in self.lanes:
                lane.pipeline.flush()

    def _issue(self, slot: tuple[int, float, bool], start: float) -> bool:
        """Queue the request of `slot` (index, due, measured), its latency counted from `start`; False
        when its connection is gone (what is in flight is failing with it)."""
        runner = self.runner
        index = slot[0]
        cycle = self.cycle
        which = cycle[index % len(cycle)]
        op = self.operations[which]
        lane = self.lanes[index % len(self.lanes)]
        request_id = lane.pipeline.enqueue(op.method, op.params, timeout=runner.timeout, on_answer=lane.on_answer,
                                           headers=op.headers)
        if request_id is None:
            self.schedule.stop()
            runner.lost = runner.lost or lane.pipeline.conn.closed_error
            self._issued_all()
            return False
        lane.flying[request_id] = (which, start, slot[2], time.perf_counter())
        runner.in_flight += 1
        return True

    def _issued_all(self) -> None:
        self.issuing = False
        if not self.runner.in_flight:
            self.finished.set()

    def _next_closed(self) -> None:
        slot = self.schedule.next()
        if slot is None:
            self._issued_all()
        else:
            self._issue(slot, time.perf_counter())

    def ended(self, lane: _Lane, flight: _Flight, kind: str | None, at: float) -> None:
        """`flight`, out of its lane's table, recorded; the next request queued (closed loop), or the
        dispatcher woken (open loop)."""
        runner = self.runner
        runner.in_flight -= 1
        self.record(flight[0], int((at - flight[1]) * 1e6), kind, flight[2], at)
        if runner.lost is None:
            closed = lane.pipeline.conn.closed_error
            if closed is not None:
                runner.lost = closed
                runner._stop()
        if not self.schedule.open:
            self._next_closed()
        elif self.waiting:
            self.waiting.pop().set()
        elif not self.issuing and not runner.in_flight:
            self.finished.set()

    async def _dispatch(self) -> None:
        """The open loop: each request queued when it is due (or, when `concurrency` are in flight, as
        soon as one ends); how late it went out is the schedule's lag."""
        runner = self.runner
        schedule, limit, perf = runner.schedule, runner.plan.concurrency, time.perf_counter
        try:
            while (slot := schedule.next()) is not None:
                due = slot[1]
                wait = due - perf()
                if wait > 0:
                    await anyio.sleep(wait)
                while runner.in_flight >= limit:
                    freed = anyio.Event()
                    self.waiting.append(freed)
                    await freed.wait()
                lag = perf() - due
                runner.lag.record(int(lag * 1e6))
                if lag > LATE_SECONDS:
                    runner.late += 1
                if not self._issue(slot, due):
                    return
        finally:
            self._issued_all()

    async def _watchdog(self) -> None:
        """Every tick, the requests past their timeout given up (with a cancel notice) and counted."""
        timeout = self.runner.timeout
        tick = min(0.05, timeout / 10)
        while True:
            await anyio.sleep(tick)
            now = time.perf_counter()
            for lane in self.lanes:
                expired = []
                for request_id, flight in lane.flying.items():  # oldest first
                    if flight[3] + timeout > now:
                        break
                    expired.append(request_id)
                for request_id in expired:
                    late = lane.flying.pop(request_id, None)
                    if late is not None:
                        lane.pipeline.give_up(request_id, "timed out")
                        self.ended(lane, late, "timeout", time.perf_counter())


def _row_figures(stats: Stats, seconds: float) -> dict[str, Any]:
    h = stats.histogram
    errors = sum(stats.errors.values())
    return {"requests": h.count, "errors": errors, "throughput": round(h.count / seconds, 3),
            "p50Us": h.quantile(0.5), "p99Us": h.quantile(0.99), "maxUs": h.maximum}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def run_load(target: Target, settings: Settings, plan: Plan, *, on_tick: Any = None, on_start: Any = None,
                   session_hooks: SessionHooks = NO_HOOKS, live: LiveMetrics | None = None) -> LoadOutcome:
    """The load run. `on_start(runner)` is called when the first request is about to go (Ctrl-C then
    stops the runner rather than the operation); `on_tick(live)` once per interval. `live`, when given,
    serves the figures while the run goes on, and its last figures until they were scraped once."""
    outcome = LoadOutcome("load", plan=plan)
    began = time.perf_counter()

    async def body(session: Session) -> None:
        operations, findings = await prepare(session, plan.specs, yes=plan.yes, confirmer=plan.confirmer)
        outcome.findings.extend(findings)
        pid = session.conn.transport.info.detail.get("pid") if session.conn.transport.info.kind == "stdio" else None
        async with AsyncExitStack() as stack:
            sessions = [session]
            for _ in range(plan.connections - 1):
                sessions.append(await stack.enter_async_context(open_session(target, settings, session_hooks)))
            runner = Runner(plan, operations, sessions, settings.timeout, on_tick, pid)
            if live is not None:
                live.runner = runner
            outcome.clock["connectMs"] = round((time.perf_counter() - began) * 1000, 1)
            if plan.start_at is not None:  # every worker connected first, then all begin at once
                await anyio.sleep(max(0.0, plan.start_at - time.time()))
            if on_start is not None:
                on_start(runner)
            try:
                await runner.run()
            finally:
                _absorb(outcome, runner, began)
        if runner.lost is not None:
            raise runner.lost

    if live is None:
        await guarded(outcome, target, settings, body, session_hooks=session_hooks)
        return outcome
    async with live:
        await guarded(outcome, target, settings, body, session_hooks=session_hooks)
        await live.finish()
    return outcome


def _absorb(outcome: LoadOutcome, runner: Runner, began: float) -> None:
    """The runner's measurements into the outcome, and the findings they make."""
    plan = runner.plan
    seconds = runner.measured_seconds()
    outcome.interrupted = runner.interrupted
    overall = runner.total()
    outcome.overall = overall.figures(seconds)
    pairs = zip(runner.operations, runner.per_op, strict=True)
    outcome.operations = [{"operation": op.label, "method": op.method, "weight": op.weight,
                           **stats.figures(seconds)} for op, stats in pairs]
    outcome.histogram = overall.histogram
    outcome.operation_histograms = [stats.histogram for stats in runner.per_op]
    outcome.intervals = runner.rows
    outcome.samples = runner.sampled.kept
    outcome.dropped_rows = runner.dropped
    outcome.server_pid = runner.server_pid
    first = runner.first_answer
    wall_now, perf_now = time.time(), time.perf_counter()  # perf_counter instants as wall-clock times
    start = runner.schedule.measure_start
    outcome.clock.update({"firstAnswerMs": None if first is None else round((first - began) * 1000, 1),
                          "loadSeconds": round(runner.wall_seconds, 3), "measuredSeconds": round(seconds, 3),
                          "startedAt": round(wall_now - (perf_now - start), 3),
                          "endedAt": round(wall_now - (perf_now - (start + seconds)), 3)})
    cpu, wall = runner.cpu_seconds, runner.wall_seconds
    share = cpu / wall if wall > 0 else 0.0
    outcome.client = {"cpuSeconds": round(cpu, 3), "wallSeconds": round(wall, 3), "cpuShare": round(share, 3),
                      "cpuPerRequestUs": round(cpu / runner.done * 1e6, 1) if runner.done else None,
                      "saturated": share >= SATURATED}
    if share >= SATURATED and wall >= MIN_SATURATED_SECONDS:
        outcome.findings.append(Finding(
            "client-saturated",
            f"mcpprobe's own CPU was busy {share:.0%} of the run ({cpu:.2f} s in {wall:.2f} s): the client, not "
            "the server, may have set the throughput and part of the latency. Run the load from more than one "
            "process (or machine), or lower --concurrency/--rate, to see the server's own limit",
            kind="server", detail=outcome.client))
    if plan.rate:
        lag = runner.lag
        outcome.schedule = {"late": runner.late, "lateShare": round(runner.late / lag.count, 6) if lag.count else 0.0,
                            "lagUs": {"p50": lag.quantile(0.5), "p99": lag.quantile(0.99), "max": lag.maximum}}
        if lag.count and runner.late / lag.count > LATE_SHARE:
            outcome.findings.append(Finding(
                "schedule-not-kept",
                f"{runner.late} of {lag.count} requests started more than {LATE_SECONDS * 1000:.0f} ms after they "
                f"were due at {plan.rate:g}/s: all {plan.concurrency} allowed in flight (--concurrency) were busy, or "
                "the client was; their latency counts from when they were due, so the figures stay true",
                kind="server", detail=outcome.schedule))
    outcome.findings.extend(sampler.leak_findings(runner.sampled.kept, outcome.overall["throughput"]))
    for slo in plan.slos:
        judged = slo.judge(outcome.overall)
        outcome.slos.append(judged)
        if not judged["met"]:
            measured = "nothing measured" if judged["measured"] is None else f"measured {_shown(judged)}"
            outcome.findings.append(Finding("slo-missed", f"SLO {slo.text} missed: {measured}", kind="server",
                                            detail=judged))


def _shown(judged: dict[str, Any]) -> str:
    value, unit = judged["measured"], judged["unit"]
    if unit == "s":
        return f"{value * 1000:.3g} ms" if value < 1 else f"{value:.3g} s"
    if unit == "%":
        return f"{value:.3g}%"
    if unit == "/s":
        return f"{value:.4g}/s"
    return f"{value:g} {unit}" if not math.isnan(value) else str(value)
