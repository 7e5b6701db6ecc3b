"""The exporter's HTTP side: a small ASGI app served by uvicorn (already a dependency of the MCP SDK).

Routes: `/probe?target=NAME[&module=M]`, `/metrics`, `/sd` (Prometheus HTTP service discovery),
`/ready?target=NAME[&module=M]` and `/live?target=NAME[&module=M]` (a status code for a kubelet),
`/` (targets and their last results), `/-/healthy`, `/-/reload` (POST). Every text that leaves
is masked for the configs' secrets and made inert; label values are escaped by the client library.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import html
import json
import math
import signal
import socket
import ssl
import sys
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, quote

import anyio

from mcpprobe.errors import UsageProblem
from mcpprobe.exporter.core import Busy, Exporter, Result, UnknownTarget
from mcpprobe.exporter.settings import ExporterConfigError, WebConfig, load_web_config
from mcpprobe.safety.sanitize import visible

Send = Callable[[dict[str, Any]], Any]
GRACE = 3.0  # seconds a scrape in flight may go on after SIGTERM


class ProbeCollector:
    """The metric families of `--format openmetrics` for one result, plus its age."""

    def __init__(self, result: Result, cached: bool, redactor: Any) -> None:
        self.result, self.cached, self.redactor = result, cached, redactor

    def collect(self) -> Any:
        from prometheus_client.core import GaugeMetricFamily

        from mcpprobe.render.openmetrics import families

        for name, help_text, samples in families([self.result.report], now=self.result.wall):
            names = list(samples[0][0])
            family = GaugeMetricFamily(name, help_text, labels=names)
            for labels, value in samples:
                family.add_metric([self.redactor(visible(str(labels.get(n, "")))) for n in names], value)
            yield family
        yield from self._load_families()
        age = GaugeMetricFamily("mcpprobe_result_age_seconds", "age of this result: 0 when probed for this "
                                "scrape, more when answered from an earlier probe (min_interval)")
        age.add_metric([], 0.0 if not self.cached else round(time.monotonic() - self.result.finished, 3))
        yield age
        cached = GaugeMetricFamily("mcpprobe_result_cached", "1 when this scrape was answered from an earlier probe")
        cached.add_metric([], int(self.cached))
        yield cached


    def _load_families(self) -> Any:
        """A `load` module's figures (mcpprobe.render.load.load_families), labelled with the target."""
        from prometheus_client.metrics_core import Metric

        from mcpprobe.load.run import LoadOutcome
        from mcpprobe.render.load import load_families

        outcome = self.result.report.outcome
        if not isinstance(outcome, LoadOutcome) or outcome.overall is None:
            return
        server = self.redactor(visible(self.result.report.member.label))
        for name, kind, help_text, samples in load_families(outcome):
            metric = Metric(name, help_text, kind)
            for suffix, labels, value in samples:
                inert = {key: self.redactor(visible(str(text))) for key, text in labels.items()}
                metric.add_sample(name + suffix, {"server": server, **inert}, value)
            yield metric


class App:
    def __init__(self, exporter: Exporter, web: WebConfig, web_path: str | None = None,
                 must_protect: bool = False) -> None:
        self.exporter = exporter
        self.web = web
        self.web_path = web_path  # read again on reload: rotated certificates, changed users
        self.must_protect = must_protect  # a non-loopback address without --insecure-listen
        self.ssl: Any = None  # the server's SSLContext, once it serves TLS
        self._good_credentials: set[bytes] = set()  # sha256 of user:password checked once
        self._probes: set[anyio.CancelScope] = set()  # the probes of scrapes in flight

    def reload(self) -> str | None:
        """SIGHUP and POST /-/reload: the configs, then the web config (a renewed certificate is
        used from the next connection on). On an error the previous ones are kept; its text is
        returned."""
        problem = self.exporter.reload()
        if self.web_path is None:
            return problem
        try:
            web = load_web_config(self.web_path)
            if web.tls != self.web.tls:
                raise ExporterConfigError(f"--web-config {self.web_path}: TLS cannot be switched on or off by a "
                                          "reload: restart the exporter")
            if self.must_protect and not web.protected:
                raise ExporterConfigError(f"--web-config {self.web_path}: the listen address is not loopback, so "
                                          "it needs tls_server_config or basic_auth_users (or --insecure-listen)")
            if web.tls and self.ssl is not None:
                try:
                    # Tried on a context of its own first: a key that does not match would otherwise
                    # leave the live context half changed, breaking TLS for the next connection.
                    assert web.cert_file is not None  # web.tls says so
                    ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(web.cert_file, web.key_file)
                    self.ssl.load_cert_chain(web.cert_file, web.key_file)
                except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError
                    raise ExporterConfigError(f"--web-config {self.web_path}: the certificate or key cannot be "
                                              f"used: {exc}") from None
        except UsageProblem as exc:
            self.exporter.say(f"web config not reloaded, keeping the previous one: {exc.message}")
            return f"{problem}; {exc.message}" if problem else exc.message
        self.web = web
        self._good_credentials.clear()
        return problem

    def cancel_probes(self) -> None:
        """At shutdown, once the grace period is over: each scrape still probing is answered 503."""
        for scope in list(self._probes):
            scope.cancel()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        if self.web.users and not await self._authorized(headers.get("authorization", "")):
            await _answer(send, 401, "unauthorized\n", extra=[(b"www-authenticate", b'Basic realm="mcpprobe"')])
            return
        path, method = scope["path"], scope["method"]
        try:
            if path == "/probe":
                await self._probe(scope, headers, send)
            elif path == "/metrics":
                await self._metrics(headers, send)
            elif path in ("/ready", "/live"):
                await self._status(scope, headers, send, ready=path == "/ready")
            elif path == "/-/healthy":
                await _answer(send, 200, "healthy\n")
            elif path == "/-/reload":
                if method != "POST":
                    await _answer(send, 405, "use POST to reload the configs\n", extra=[(b"allow", b"POST")])
                    return
                problem = self.reload()
                await _answer(send, 500 if problem else 200,
                              f"reload failed: {self._inert(problem)}\n" if problem else "reloaded\n")
            elif path == "/sd":
                await self._sd(scope, send)
            elif path == "/":
                await _answer(send, 200, self._index(), content_type="text/html; charset=utf-8")
            else:
                await _answer(send, 404, "not found: try /, /probe?target=NAME, /ready?target=NAME, /metrics\n")
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass  # the scraper went away
        except Exception as exc:  # noqa: BLE001 - one line and a 500, never a traceback in the log
            self.exporter.say(f"internal error on {visible(path)}: {type(exc).__name__}: {self._inert(str(exc))}")
            with contextlib.suppress(Exception):
                await _answer(send, 500, f"internal error: {type(exc).__name__}\n")

    def _inert(self, text: str) -> str:
        return self.exporter.redactor()(visible(text))

    async def _authorized(self, header: str) -> bool:
        import bcrypt

        scheme, _, encoded = header.partition(" ")
        if scheme.lower() != "basic":
            return False
        try:
            user, _, password = base64.b64decode(encoded, validate=True).decode("utf-8").partition(":")
        except (ValueError, UnicodeDecodeError):
            return False
        digest = hashlib.sha256(f"{user}\0{password}".encode()).digest()
        if digest in self._good_credentials:
            return True
        hashed = dict(self.web.users).get(user)
        # An unknown user costs the same bcrypt check as a known one: no timing tells them apart.
        candidate = hashed or b"$2b$10$" + b"." * 53
        ok = await anyio.to_thread.run_sync(lambda: _checkpw(bcrypt, password.encode(), candidate))
        if ok and hashed is not None:
            self._good_credentials.add(digest)
            return True
        return False

    async def _chosen(self, scope: dict[str, Any], send: Send, route: str) -> tuple[str, str] | None:
        """The target and module a route's query names (module `probe` by default), or None once it
        has answered 400: only these two parameters, once each, and never a URL or a command."""
        params = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        unknown = sorted({k for k, _ in params} - {"target", "module"})
        if unknown:
            self.exporter.metrics.rejected.labels("unknown").inc()
            await _answer(send, 400, f"unknown parameter {self._inert(unknown[0])!r}: {route} takes only target=NAME "
                          "and module=NAME; a URL or a command is never accepted\n")
            return None
        values: dict[str, list[str]] = {}
        for key, value in params:
            values.setdefault(key, []).append(value)
        if any(len(v) > 1 for v in values.values()):
            self.exporter.metrics.rejected.labels("unknown").inc()
            await _answer(send, 400, "target and module may be given once each\n")
            return None
        target = values.get("target", [""])[0]
        if not target:
            await _answer(send, 400, f"missing target: {route}?target=NAME, NAME a server of the exporter's configs\n")
            return None
        return target, values.get("module", ["probe"])[0]

    async def _result(self, target: str, module: str, timeout: float | None, send: Send) -> tuple[Result, bool] | None:
        """The module's result for the target (an earlier one inside min_interval), or None once it has
        answered: 404 for an unknown target, 400 for an unknown module, 503 when busy or stopping."""
        found: list[tuple[Result, bool]] = []
        try:
            with anyio.CancelScope() as cancel:
                self._probes.add(cancel)
                try:
                    found.append(await self.exporter.probe(target, module, timeout))
                finally:
                    self._probes.discard(cancel)
        except UnknownTarget as exc:
            self.exporter.metrics.rejected.labels("unknown").inc()
            await _answer(send, 404 if "target" in str(exc) else 400, self._inert(str(exc)) + "\n")
            return None
        except Busy as exc:
            await _answer(send, 503, self._inert(str(exc)) + "\n")
            return None
        if not found:
            await _answer(send, 503, "the exporter is stopping; the probe was cut short\n")
            return None
        return found[0]

    async def _status(self, scope: dict[str, Any], headers: dict[str, str], send: Send, *, ready: bool) -> None:
        """`/ready`: 200 when the target's probe succeeded (exit 0), else 503 with one line saying why.
        `/live`: 200 when the server was reached at all (the handshake done, whatever it then found),
        else 503. A kubelet reads the status code; it polls often, so the answer is the module's last
        result while it is younger than min_interval, and the server sees at most one probe per interval."""
        route = "/ready" if ready else "/live"
        chosen = await self._chosen(scope, send, route)
        if chosen is None:
            return
        target, module = chosen
        known = self.exporter.loaded.config.modules.get(module)
        if known is not None and known.check == "load":
            self.exporter.metrics.rejected.labels("unknown").inc()
            await _answer(send, 400, f"module {self._inert(module)!r} is a load run: {route} takes a probe, list or "
                          "call module\n")
            return
        answered = await self._result(target, module, None, send)
        if answered is None:
            return
        result, cached = answered
        report = result.report
        age = 0.0 if not cached else time.monotonic() - result.finished
        code = int(report.exit_code)
        reached = report.outcome.snapshot is not None and report.outcome.error is None
        ok = code == 0 if ready else reached
        when = f"probed {age:.0f} s ago" if cached else "probed now"
        if ok:
            await _answer(send, 200, f"{'ready' if ready else 'live'}: {self._inert(target)} ({module}, exit {code}, "
                          f"{when})\n")
            return
        word = "not ready" if ready else "not live"
        await _answer(send, 503, f"{word}: {self._inert(target)} ({module}, exit {code}, {when}): "
                      f"{self._inert(_reason(report))[:200]}\n")

    async def _probe(self, scope: dict[str, Any], headers: dict[str, str], send: Send) -> None:
        chosen = await self._chosen(scope, send, "/probe")
        if chosen is None:
            return
        target, module = chosen
        timeout = None
        raw = headers.get("x-prometheus-scrape-timeout-seconds")
        if raw:
            with contextlib.suppress(ValueError):
                timeout = float(raw)
            if timeout is not None and not timeout > 0:
                timeout = None
        answered = await self._result(target, module, timeout, send)
        if answered is None:
            return
        result, cached = answered
        from prometheus_client import CollectorRegistry
        from prometheus_client.exposition import choose_encoder

        registry = CollectorRegistry(auto_describe=False)
        registry.register(ProbeCollector(result, cached, self.exporter.redactor()))
        encoder, content_type = choose_encoder(headers.get("accept", ""))
        await _answer(send, 200, encoder(registry), content_type=content_type)

    async def _metrics(self, headers: dict[str, str], send: Send) -> None:
        from prometheus_client.exposition import choose_encoder

        encoder, content_type = choose_encoder(headers.get("accept", ""))
        await _answer(send, 200, encoder(self.exporter.metrics.registry), content_type=content_type)

    async def _sd(self, scope: dict[str, Any], send: Send) -> None:
        """Prometheus http_sd_configs: every target but disabled ones, so that a server removed
        from the configs (or disabled) leaves Prometheus' targets too (its series end) at the next
        refresh."""
        params = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        module = params.get("module", "probe")
        names = [self._inert(entry.name) for entry in self.exporter.targets()]
        body = json.dumps([{"targets": names, "labels": {"__param_module": module}}] if names else [])
        await _answer(send, 200, body, content_type="application/json")

    def _index(self) -> str:
        rows = []
        modules = list(self.exporter.loaded.config.modules)
        for entry in self.exporter.targets():
            name = self._inert(entry.name)
            cells = []
            for module in modules:
                state = self.exporter.states.get((entry.name, module))
                link = f"/probe?target={quote(entry.name, safe='')}&amp;module={quote(module, safe='')}"
                if state is None or state.last is None:
                    cells.append(f'<td><a href="{link}">{html.escape(module)}</a>: not probed yet</td>')
                    continue
                report = state.last.report
                age = time.monotonic() - state.last.finished
                what = "ok" if int(report.exit_code) == 0 else f"exit {int(report.exit_code)}"
                cells.append(f'<td><a href="{link}">{html.escape(module)}</a>: {what}, {age:.0f} s ago</td>')
            rows.append(f"<tr><th>{html.escape(name)}</th><td>{html.escape(entry.transport)}</td>{''.join(cells)}</tr>")
        for entry in self.exporter.disabled():
            rows.append(f"<tr><th>{html.escape(self._inert(entry.name))}</th><td>{html.escape(entry.transport)}</td>"
                        f"<td colspan=\"{len(modules)}\">disabled in its config: not offered by /sd</td></tr>")
        return ("<!doctype html><html><head><title>mcpprobe exporter</title></head><body><h1>mcpprobe exporter</h1>"
                "<p><a href=\"/metrics\">/metrics</a> (the exporter's own), <code>/probe?target=NAME&amp;module=M"
                "</code>, <a href=\"/sd\">/sd</a></p>"
                f"<table border=\"1\"><tr><th>target</th><th>transport</th><th colspan=\"{len(modules)}\">modules"
                f"</th></tr>{''.join(rows)}</table></body></html>")


def _reason(report: Any) -> str:
    """One line on why a probe did not succeed: what stopped it, else its first error finding."""
    from mcpprobe.findings import Severity

    outcome = report.outcome
    if outcome.error is not None:
        return f"{outcome.error.code}: {outcome.error}"
    for finding in outcome.all_findings():
        if finding.severity is Severity.ERROR:
            return f"{finding.code}: {finding.message}"
    return "the probe did not succeed"


def _checkpw(bcrypt: Any, password: bytes, hashed: bytes) -> bool:
    try:
        return bool(bcrypt.checkpw(password, hashed))
    except ValueError:
        return False


async def _answer(send: Send, status: int, body: str | bytes, *, content_type: str = "text/plain; charset=utf-8",
                  extra: list[tuple[bytes, bytes]] = ()) -> None:  # type: ignore[assignment]
    data = body.encode("utf-8", "backslashreplace") if isinstance(body, str) else body
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", content_type.encode()), (b"content-length", str(len(data)).encode()),
                            *extra]})
    await send({"type": "http.response.body", "body": data})


def serve(exporter: Exporter, web: WebConfig, host: str, port: int, *, say: Callable[[str], None],
          announce: Callable[[str], None], web_path: str | None = None, must_protect: bool = False) -> int:
    """Serve until SIGTERM or SIGINT; SIGHUP reloads. Returns the exit code (0 after a graceful stop)."""
    import uvicorn

    from mcpprobe.wire.stdio import reap_all

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise OSError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(1024)
    bound = sock.getsockname()[1]
    app = App(exporter, web, web_path, must_protect)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                            ssl_certfile=web.cert_file, ssl_keyfile=web.key_file,
                            timeout_graceful_shutdown=math.ceil(GRACE + 3), limit_concurrency=None,
                            timeout_keep_alive=30)

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Any:  # our own handlers, below: uvicorn's re-raise would skip the cleanup
            yield

    server = Server(config)

    async def main() -> None:
        loop = asyncio.get_running_loop()

        def stop() -> None:
            say(f"stopping: finishing the scrapes in flight ({GRACE:g} s at most)")
            server.should_exit = True
            loop.call_later(GRACE, app.cancel_probes)

        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop)
        loop.add_signal_handler(signal.SIGHUP, app.reload)
        if not config.loaded:
            config.load()
        app.ssl = config.ssl
        scheme = "https" if web.tls else "http"
        shown = f"[{host}]" if ":" in host else host
        announce(f"listening on {scheme}://{shown}:{bound}")
        await server.serve(sockets=[sock])

    try:
        asyncio.run(main())
    finally:
        reap_all()  # a stdio server whose probe was cut short by the shutdown ends with the exporter
        sys.stdout.flush()
    return 0
