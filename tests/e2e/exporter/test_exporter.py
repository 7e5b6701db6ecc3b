"""`mcpprobe exporter` as a real process on 127.0.0.1, probing real fixture servers over stdio.

What a scrape may start (names only, never a URL or a command), when a probe runs at all
(min_interval, one probe for concurrent scrapes), the limits, Accept negotiation, reloads,
web.yml basic auth and TLS, and that no server process outlives the exporter.
"""

from __future__ import annotations

import base64
import json
import os
import shlex
import signal
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families as openmetrics_families
from prometheus_client.parser import text_string_to_metric_families as text_families

from mcpprobe.safety.sanitize import visible
from tests.conftest import FIXTURE, PY, ROOT, fixture_http, http_server

DEMO = str(Path(sys.executable).parent / "mcpprobe-demo")


def _server(scenario: str, env: dict[str, str] | None = None, marker: str | None = None) -> dict[str, Any]:
    """A fixture server entry; with `marker`, its command line carries it (for ps) and it
    touches `marker` as a file when it starts (to prove that nothing was started)."""
    if marker is None:
        entry: dict[str, Any] = {"command": PY, "args": [str(FIXTURE), scenario]}
    else:
        code = (f"import runpy, sys; sys.argv = [{str(FIXTURE)!r}, {scenario!r}]; "
                "runpy.run_path(sys.argv[0], run_name='__main__')")
        script = (f"touch {shlex.quote(marker)}; exec {shlex.quote(PY)} -c {shlex.quote(code)} "
                  f"marker-{Path(marker).name}")
        entry = {"command": "sh", "args": ["-c", script]}
    if env:
        entry["env"] = env
    return entry


def _write(path: Path, servers: dict[str, Any]) -> Path:
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


@contextmanager
def exporter(tmp_path: Path, servers: dict[str, Any], exporter_yaml: str | None = None,
             args: tuple[str, ...] = (), scheme: str = "http", env: dict[str, str] | None = None) -> Iterator[str]:
    config = _write(tmp_path / "servers.json", servers)
    argv = [PY, "-m", "mcpprobe", "exporter", "--config", str(config), "--listen-address", "127.0.0.1:0", *args]
    if exporter_yaml is not None:
        (tmp_path / "exporter.yaml").write_text(exporter_yaml, encoding="utf-8")
        argv += ["--exporter-config", str(tmp_path / "exporter.yaml")]
    with http_server(argv, cwd=ROOT, pattern="listening on ", env=env) as url:
        assert url.startswith(scheme + "://")
        yield url


def get(url: str, headers: dict[str, str] | None = None, *, method: str = "GET", context: Any = None,
        timeout: float = 60) -> tuple[int, dict[str, str], str]:
    request = urllib.request.Request(url, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(request, timeout=timeout, context=context) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read().decode()


def samples(text: str, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    out = {}
    for family in text_families(text):
        for sample in family.samples:
            if sample.name == name:
                out[tuple(sorted(sample.labels.items()))] = sample.value
    return out


def value(text: str, name: str, **labels: str) -> float | None:
    for key, found in samples(text, name).items():
        if all(dict(key).get(k) == v for k, v in labels.items()):
            return found
    return None


def _alive(marker: str) -> list[str]:
    out = subprocess.run(["ps", "-ww", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if marker in line and "ps -ww" not in line]


def _wait(predicate: Any, seconds: float = 30, step: float = 0.1) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        result = predicate()
        if result or time.monotonic() > deadline:
            return result
        time.sleep(step)


# ----- what a scrape may start -----


def test_without_prometheus_client_it_says_how_to_install_the_extra() -> None:
    """mcpprobe is on no package index: `pip install 'mcpprobe[exporter]'` is not the way."""
    code = "import sys\nsys.modules['prometheus_client'] = None\nfrom mcpprobe.cli.main import main\nmain()\n"
    done = subprocess.run([PY, "-c", code, "exporter"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "pip install '.[exporter]'" in done.stderr and "pip install prometheus_client" in done.stderr
    assert "'mcpprobe[exporter]'" not in done.stderr


def test_unknown_targets_urls_and_commands_start_nothing(tmp_path: Path) -> None:
    marker = str(tmp_path / f"started-{uuid.uuid4().hex[:8]}")
    with exporter(tmp_path, {"full": _server("full", marker=marker)}) as url:
        for query, status, text in [
            ("target=nope", 404, "unknown target 'nope'"),
            ("target=http://127.0.0.1:1/mcp", 404, "never URLs or commands"),
            ("target=" + urllib.request.quote(f"{PY} {FIXTURE} full"), 404, "unknown target"),
            ("target=full&url=http://127.0.0.1:1/mcp", 400, "unknown parameter 'url'"),
            ("target=full&command=sh", 400, "a URL or a command is never accepted"),
            ("target=full&target=full", 400, "once each"),
            ("module=probe", 400, "missing target"),
            ("target=full&module=shell", 400, "unknown module 'shell'"),
        ]:
            code, _, body = get(f"{url}/probe?{query}")
            assert (code, text in body) == (status, True), (query, code, body)
        assert not Path(marker).exists()
        _, _, metrics = get(f"{url}/metrics")
        assert value(metrics, "mcpprobe_exporter_scrapes_rejected_total", reason="unknown") == 7
        assert value(metrics, "mcpprobe_exporter_probes_total") is None
        code, _, body = get(f"{url}/probe?target=full")
        assert code == 200 and Path(marker).exists()  # the same server, by its name, does start


# ----- what a probe answers -----


def test_probe_metrics_and_accept_negotiation(tmp_path: Path) -> None:
    servers = {"full": _server("full"), "broken": _server("crash-on-start"), "paged": _server("paginated"),
               'odd "name"\\x\n': _server("full")}
    with exporter(tmp_path, servers) as url:
        _, _, text = get(f"{url}/probe?" + urllib.parse.urlencode({"target": 'odd "name"\\x\n'}))
        # Made inert (no raw newline), then escaped by the exposition: the parser gets the text back.
        assert value(text, "mcpprobe_up", server=visible('odd "name"\\x\n')) == 1
        code, headers, text = get(f"{url}/probe?target=paged")
        assert code == 200 and headers["content-type"].startswith("text/plain; version=0.0.4")
        assert value(text, "mcpprobe_up", server="paged") == 1
        assert value(text, "mcpprobe_exit_code", server="paged") == 0
        assert value(text, "mcpprobe_stage", server="paged", stage="done") == 1
        assert value(text, "mcpprobe_items", kind="tools") == 25
        assert value(text, "mcpprobe_list_pages", kind="tools") == 3
        assert value(text, "mcpprobe_kind_declared", kind="prompts") == 1
        assert value(text, "mcpprobe_list_complete", kind="resources") == 1
        assert value(text, "mcpprobe_phase_duration_seconds", phase="list tools") is not None
        assert value(text, "mcpprobe_result_cached") == 0
        info = dict(next(iter(samples(text, "mcpprobe_server_info"))))
        assert info["era"] in ("legacy", "modern") and info["protocol_version"]

        accept = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"
        code, headers, text = get(f"{url}/probe?target=broken", {"Accept": accept})
        assert code == 200 and headers["content-type"].startswith("application/openmetrics-text; version=1.0.0")
        assert text.rstrip().endswith("# EOF")
        families = {f.name: f for f in openmetrics_families(text)}
        stages = {s.labels["stage"]: s.value for s in families["mcpprobe_stage"].samples}
        assert stages == {"config": 0, "connect": 1, "negotiate": 0, "list": 0, "done": 0}
        assert families["mcpprobe_up"].samples[0].value == 0
        assert families["mcpprobe_exit_code"].samples[0].value == 4
        codes = {(s.labels["code"], s.labels["severity"]) for s in families["mcpprobe_findings_by_code"].samples}
        assert ("connection-failed", "error") in codes

        _, _, metrics = get(f"{url}/metrics")
        assert value(metrics, "mcpprobe_exporter_probes_failed_total", target="broken", module="probe") == 1
        assert value(metrics, "mcpprobe_exporter_probes_total", target="paged", module="probe") == 1
        assert value(metrics, "mcpprobe_exporter_probe_duration_seconds_count", module="probe") == 3
        assert value(metrics, "mcpprobe_exporter_probes_in_flight") == 0
        code, headers, page = get(f"{url}/")
        assert code == 200 and "<th>broken</th>" in page and "exit 4" in page and "ok, " in page


def test_list_and_read_only_call_modules(tmp_path: Path) -> None:
    modules = """
modules:
  tools: {check: list, kind: tools}
  echo: {check: call, tool: echo, arguments: {message: hello}}
  write: {check: call, tool: create_note, arguments: {title: t, body: b}}
"""
    with exporter(tmp_path, {"demo": {"command": DEMO}, "tools": _server("tools-only")}, modules) as url:
        _, _, text = get(f"{url}/probe?target=demo&module=tools")
        assert value(text, "mcpprobe_exit_code") == 0 and value(text, "mcpprobe_items", kind="tools") >= 2
        assert value(text, "mcpprobe_items", kind="prompts") is None
        _, _, text = get(f"{url}/probe?target=demo&module=echo")
        assert value(text, "mcpprobe_exit_code") == 0, text
        _, _, text = get(f"{url}/probe?target=demo&module=write")
        assert value(text, "mcpprobe_exit_code") == 3
        assert value(text, "mcpprobe_findings_by_code", code="not-confirmed") == 1
        # refused by the one rule of every command, in the exporter's words: it has no --yes to suggest
        code, _, reason = get(f"{url}/ready?target=demo&module=write")
        assert code == 503 and "the exporter calls only read-only tools" in reason and "--yes" not in reason, reason
        code, _, _ = get(f"{url}/probe?target=demo")
        assert code == 400  # no module 'probe' in this config


# ----- when a probe runs -----


def _recording(tmp_path: Path, name: str, scenario: str = "full", **env: str) -> dict[str, Any]:
    return _server(scenario, env={"FIXTURE_RECORD": str(tmp_path / f"{name}.jsonl"), **env})


def _starts(tmp_path: Path, name: str) -> int:
    path = tmp_path / f"{name}.jsonl"
    if not path.exists():
        return 0
    methods = [json.loads(line).get("method") for line in path.read_text().splitlines()]
    return sum(1 for m in methods if m in ("initialize", "server/discover")) - methods.count("server/discover") * (
        "initialize" in methods)


def test_min_interval_answers_from_the_last_result(tmp_path: Path) -> None:
    with exporter(tmp_path, {"full": _recording(tmp_path, "full")}, "min_interval: 300\n") as url:
        _, _, first = get(f"{url}/probe?target=full")
        time.sleep(1.2)
        _, _, second = get(f"{url}/probe?target=full")
        assert value(first, "mcpprobe_result_cached") == 0 and value(second, "mcpprobe_result_cached") == 1
        assert value(second, "mcpprobe_result_age_seconds") >= 1
        assert value(second, "mcpprobe_up") == 1
        _, _, metrics = get(f"{url}/metrics")
        assert value(metrics, "mcpprobe_exporter_probes_total", target="full") == 1
        assert value(metrics, "mcpprobe_exporter_cached_answers_total", target="full") == 1
        assert _starts(tmp_path, "full") == 1


def test_concurrent_scrapes_share_one_probe(tmp_path: Path) -> None:
    servers = {"slow": _recording(tmp_path, "slow", "slow", FIXTURE_DELAY="3")}
    with exporter(tmp_path, servers, "min_interval: 0\n") as url:
        answers: list[str] = []

        def scrape() -> None:
            answers.append(get(f"{url}/probe?target=slow", {"X-Prometheus-Scrape-Timeout-Seconds": "30"})[2])

        threads = [threading.Thread(target=scrape) for _ in range(3)]
        threads[0].start()
        assert _wait(lambda: _in_flight(url))  # the others arrive while this probe runs (3 s at least)
        for thread in threads[1:]:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert sorted(value(a, "mcpprobe_result_cached") for a in answers) == [0, 1, 1]
        assert all(value(a, "mcpprobe_up") == 1 for a in answers)
        _, _, metrics = get(f"{url}/metrics")
        assert value(metrics, "mcpprobe_exporter_probes_total", target="slow") == 1


def _in_flight(url: str) -> bool:
    return value(get(f"{url}/metrics")[2], "mcpprobe_exporter_probes_in_flight") == 1


@pytest.mark.parametrize("limit, second", [("concurrency: 1", "other"),
                                           ("concurrency: 4\nper_target_concurrency: 1", "slow")])
def test_concurrency_limits_refuse_past_the_deadline(tmp_path: Path, limit: str, second: str) -> None:
    servers = {"slow": _server("slow", env={"FIXTURE_DELAY": "6"}), "other": _server("full")}
    config = f"min_interval: 0\n{limit}\nmodules:\n  probe: {{}}\n  tools: {{check: list, kind: tools}}\n"
    with exporter(tmp_path, servers, config) as url:
        first: list[tuple[int, dict[str, str], str]] = []
        thread = threading.Thread(target=lambda: first.append(
            get(f"{url}/probe?target=slow", {"X-Prometheus-Scrape-Timeout-Seconds": "60"})))
        thread.start()
        assert _wait(lambda: _in_flight(url))
        # Refused, not queued: a scrape that waited for the slot would get it when the slow probe ends
        # (6 s) and answer 200. So the answer proves the deadline, whatever the machine's load.
        code, _, body = get(f"{url}/probe?target={second}&module=tools", {"X-Prometheus-Scrape-Timeout-Seconds": "1.5"})
        assert code == 503 and "no probe slot within 1 s" in body, body
        thread.join(60)
        assert first[0][0] == 200 and value(first[0][2], "mcpprobe_up") == 1
        code, _, body = get(f"{url}/probe?target={second}&module=tools", {"X-Prometheus-Scrape-Timeout-Seconds": "30"})
        assert code == 200 and value(body, "mcpprobe_exit_code") == 0
        _, _, metrics = get(f"{url}/metrics")
        assert value(metrics, "mcpprobe_exporter_scrapes_rejected_total", reason="busy") == 1


def test_deadline_follows_the_scrape_timeout_and_ends_the_server(tmp_path: Path) -> None:
    marker = str(tmp_path / f"m{uuid.uuid4().hex[:10]}")
    servers = {"slow": _server("slow", env={"FIXTURE_DELAY": "60"}, marker=marker)}
    with exporter(tmp_path, servers, "timeout: 60\ntimeout_margin: 0.5\n") as url:  # only the scrape is short
        started = time.monotonic()
        code, _, text = get(f"{url}/probe?target=slow", {"X-Prometheus-Scrape-Timeout-Seconds": "10"})
        assert code == 200 and time.monotonic() - started < 30
        assert value(text, "mcpprobe_exit_code") == 6 and value(text, "mcpprobe_up") == 1
        assert value(text, "mcpprobe_stage", stage="list") == 1
        assert value(text, "mcpprobe_list_complete", kind="tools") == 0
        assert _wait(lambda: not _alive(Path(marker).name), 10)


# ----- lifecycle -----


def _start(argv: list[str], cwd: Path = ROOT) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert "listening on " in line, proc.stderr.read() if proc.stderr else ""
    return proc, line.split("listening on ", 1)[1].strip()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigterm_stops_gracefully_and_leaves_no_process(tmp_path: Path) -> None:
    marker = str(tmp_path / f"m{uuid.uuid4().hex[:10]}")
    config = _write(tmp_path / "servers.json", {"slow": _server("slow", env={"FIXTURE_DELAY": "300"}, marker=marker)})
    proc, url = _start([PY, "-m", "mcpprobe", "exporter", "--config", str(config), "--listen-address", "127.0.0.1:0"])
    try:
        threading.Thread(target=lambda: get(f"{url}/probe?target=slow", {"X-Prometheus-Scrape-Timeout-Seconds": "120"},
                                            timeout=120), daemon=True).start()
        assert _wait(lambda: _alive(Path(marker).name) and _in_flight(url))
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
        assert "Traceback" not in proc.stderr.read()  # type: ignore[union-attr]
        assert _wait(lambda: not _alive(Path(marker).name), 10), _alive(Path(marker).name)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def test_a_disabled_entry_is_not_offered_but_can_be_named(tmp_path: Path) -> None:
    """As `probe --all` skips a `"disabled": true` entry and `-s NAME` probes it: service discovery
    leaves it out, the index says why, a scrape that names it probes it."""
    servers = {"full": _server("full"), "off": {**_server("full"), "disabled": True}}
    with exporter(tmp_path, servers) as url:
        assert json.loads(get(f"{url}/sd")[2])[0]["targets"] == ["full"]
        assert "disabled in its config" in get(f"{url}/")[2]
        code, _, body = get(f"{url}/probe?target=off")
        assert code == 200 and value(body, "mcpprobe_up", server="off") == 1


def test_reload_by_post_and_sighup(tmp_path: Path) -> None:
    servers = {"full": _server("full"), "gone": _server("full")}
    with exporter(tmp_path, servers) as url:
        assert get(f"{url}/probe?target=gone")[0] == 200
        assert json.loads(get(f"{url}/sd")[2])[0]["targets"] == ["full", "gone"]
        _write(tmp_path / "servers.json", {"full": _server("full")})
        assert get(f"{url}/-/reload")[0] == 405
        assert get(f"{url}/-/reload", method="POST")[:1] == (200,)
        code, _, body = get(f"{url}/probe?target=gone")
        assert code == 404 and "unknown target 'gone'" in body
        assert json.loads(get(f"{url}/sd?module=tools")[2]) == [{"targets": ["full"],
                                                                   "labels": {"__param_module": "tools"}}]
        (tmp_path / "servers.json").write_text("{not json", encoding="utf-8")
        code, _, body = get(f"{url}/-/reload", method="POST")
        assert code == 500 and "invalid JSON" in body
        assert get(f"{url}/probe?target=full")[0] == 200  # the previous configs are kept
        _, _, metrics = get(f"{url}/metrics")
        assert value(metrics, "mcpprobe_exporter_config_reloads_total", result="failure") == 1
        assert value(metrics, "mcpprobe_exporter_config_last_reload_successful") == 0
    config = _write(tmp_path / "servers.json", servers)
    proc, url = _start([PY, "-m", "mcpprobe", "exporter", "--config", str(config), "--listen-address", "127.0.0.1:0"])
    try:
        _write(tmp_path / "servers.json", {"full": _server("full")})
        proc.send_signal(signal.SIGHUP)
        assert _wait(lambda: get(f"{url}/probe?target=gone")[0] == 404)
        assert value(get(f"{url}/metrics")[2], "mcpprobe_exporter_config_reloads_total", result="success") == 1
    finally:
        proc.terminate()
        assert proc.wait(30) == 0


# ----- safe by default -----


def test_usage_errors(tmp_path: Path) -> None:
    from tests.conftest import run_cli

    config = _write(tmp_path / "servers.json", {"full": _server("full")})
    wide = run_cli(["exporter", "--config", str(config), "--listen-address", "0.0.0.0:0"])
    assert wide.exit_code == 2 and "--insecure-listen" in wide.stderr
    (tmp_path / "bad.yaml").write_text("modules:\n  x: {check: list, shell: rm}\n")
    bad = run_cli(["exporter", "--config", str(config), "--exporter-config", str(tmp_path / "bad.yaml")])
    assert bad.exit_code == 2 and "unknown keys shell" in bad.stderr and "bad.yaml" in bad.stderr
    (tmp_path / "web.yml").write_text("basic_auth_users:\n  alice: plaintext\n")
    web = run_cli(["exporter", "--config", str(config), "--web-config", str(tmp_path / "web.yml")])
    assert web.exit_code == 2 and "not a bcrypt hash" in web.stderr
    # Read as every user file is: not UTF-8 or nested too deep is one line and exit 2.
    (tmp_path / "latin1.yaml").write_bytes(b"modules:\n  p: \xff\n")
    (tmp_path / "deep.yaml").write_text("a: " + "[" * 300 + "]" * 300 + "\n")
    for option, name, words in (("--exporter-config", "latin1.yaml", "not UTF-8"),
                                ("--web-config", "latin1.yaml", "not UTF-8"),
                                ("--exporter-config", "deep.yaml", "nested more than")):
        odd = run_cli(["exporter", "--config", str(config), option, str(tmp_path / name)])
        assert odd.exit_code == 2 and words in odd.stderr and name in odd.stderr, (option, name, odd.stderr)


def _self_signed(tmp_path: Path) -> tuple[Path, Path]:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=60)
    return cert, key


@pytest.mark.skipif(not any(os.access(os.path.join(p, "openssl"), os.X_OK)
                            for p in os.environ.get("PATH", "").split(os.pathsep)), reason="needs the openssl command")
def test_web_config_tls_and_basic_auth(tmp_path: Path) -> None:
    import bcrypt

    cert, key = _self_signed(tmp_path)
    hashed = bcrypt.hashpw(b"s3cret-pass", bcrypt.gensalt(rounds=4)).decode()
    (tmp_path / "web.yml").write_text(f"tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n"
                                      f"basic_auth_users:\n  alice: '{hashed}'\n")
    context = ssl.create_default_context(cafile=str(cert))
    with exporter(tmp_path, {"full": _server("full")}, args=("--web-config", str(tmp_path / "web.yml")),
                  scheme="https") as url:
        def auth(user: str, password: str) -> dict[str, str]:
            return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}

        code, headers, _ = get(f"{url}/-/healthy", context=context)
        assert code == 401 and headers["www-authenticate"].startswith("Basic")
        assert get(f"{url}/-/healthy", auth("alice", "wrong"), context=context)[0] == 401
        assert get(f"{url}/-/healthy", auth("mallory", "s3cret-pass"), context=context)[0] == 401
        assert get(f"{url}/-/healthy", auth("alice", "s3cret-pass"), context=context)[:1] == (200,)
        code, _, text = get(f"{url}/probe?target=full", auth("alice", "s3cret-pass"), context=context)
        assert code == 200 and value(text, "mcpprobe_up") == 1
        with pytest.raises(OSError):
            get(f"{url.replace('https', 'http')}/-/healthy", timeout=10)


@pytest.mark.skipif(not any(os.access(os.path.join(p, "openssl"), os.X_OK)
                            for p in os.environ.get("PATH", "").split(os.pathsep)), reason="needs the openssl command")
def test_a_reload_reads_the_web_config_again(tmp_path: Path) -> None:
    """A renewed certificate and changed users take effect on reload (POST /-/reload, SIGHUP), as
    certificate managers expect; a web config that would switch TLS off is refused and the old kept."""
    import bcrypt

    def auth(user: str, password: str) -> dict[str, str]:
        return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}

    def web_yml(cert: str, key: str, user: str, password: bytes) -> None:
        hashed = bcrypt.hashpw(password, bcrypt.gensalt(rounds=4)).decode()
        tls = f"tls_server_config:\n  cert_file: {cert}\n  key_file: {key}\n" if cert else ""
        (tmp_path / "web.yml").write_text(f"{tls}basic_auth_users:\n  {user}: '{hashed}'\n")

    first = _self_signed(tmp_path)
    web_yml("cert.pem", "key.pem", "alice", b"alice-pass")
    (tmp_path / "new").mkdir()
    second = _self_signed(tmp_path / "new")
    old_ca, new_ca = (ssl.create_default_context(cafile=str(pair[0])) for pair in (first, second))
    with exporter(tmp_path, {"full": _server("full")}, args=("--web-config", str(tmp_path / "web.yml")),
                  scheme="https") as url:
        assert get(f"{url}/-/healthy", auth("alice", "alice-pass"), context=old_ca)[0] == 200
        web_yml("new/cert.pem", "new/key.pem", "bob", b"bob-pass")
        assert get(f"{url}/-/reload", auth("alice", "alice-pass"), method="POST", context=old_ca)[0] == 200
        assert get(f"{url}/-/healthy", auth("bob", "bob-pass"), context=new_ca)[0] == 200
        assert get(f"{url}/-/healthy", auth("alice", "alice-pass"), context=new_ca)[0] == 401
        with pytest.raises(OSError):  # the old certificate is no longer served
            get(f"{url}/-/healthy", auth("bob", "bob-pass"), context=old_ca, timeout=10)
        web_yml("", "", "bob", b"bob-pass")
        code, _, body = get(f"{url}/-/reload", auth("bob", "bob-pass"), method="POST", context=new_ca)
        assert code == 500 and "TLS cannot be switched on or off by a reload" in body
        assert get(f"{url}/-/healthy", auth("bob", "bob-pass"), context=new_ca)[0] == 200
        web_yml("cert.pem", "new/key.pem", "bob", b"bob-pass")  # a key that is not the certificate's
        code, _, body = get(f"{url}/-/reload", auth("bob", "bob-pass"), method="POST", context=new_ca)
        assert code == 500 and "cannot be used" in body
        assert get(f"{url}/-/healthy", auth("bob", "bob-pass"), context=new_ca)[0] == 200  # still the kept one


def test_secrets_stay_out_of_pages_and_labels(tmp_path: Path) -> None:
    secret = "exporter-secret-" + uuid.uuid4().hex
    servers = {"full": _server("full", env={"API_TOKEN": secret}),
               "echo": {"command": PY, "args": ["-c", "import sys; print('bad', sys.argv[1]); sys.exit(3)"],
                        "env": {"DB_PASSWORD": secret}}}
    with exporter(tmp_path, servers) as url:
        _, _, text = get(f"{url}/probe?target=full")
        assert secret not in text and value(text, "mcpprobe_up") == 1
        _, _, text = get(f"{url}/probe?target=echo")
        assert value(text, "mcpprobe_up") == 0
        for page in ("/", "/metrics", "/sd", "/probe?target=echo"):
            assert secret not in get(url + page)[2]


def test_the_tokens_expiry_is_a_series_to_alert_on(tmp_path: Path) -> None:
    """A JWT from bearerEnv: when it expires is exported, and that mcpprobe cannot renew it, so the
    documented MCPTokenExpiringSoon fires days before the first 401, not after."""
    claims = base64.urlsafe_b64encode(json.dumps({"exp": 1893456000}).encode()).decode().rstrip("=")
    token = f"eyJhbGciOiJub25lIn0.{claims}.c2ln"
    with fixture_http("full") as mcp_url, exporter(tmp_path, {"ci": {"url": mcp_url, "bearerEnv": "EXPORTER_JWT"}},
                  env={"EXPORTER_JWT": token}) as url:
        _, _, text = get(f"{url}/probe?target=ci")
    assert value(text, "mcpprobe_auth_token_expiry_timestamp_seconds", server="ci") == 1893456000
    assert value(text, "mcpprobe_auth_token_renewable", server="ci") == 0
    assert token not in text


def test_config_errors_and_auth_keys_of_entries(tmp_path: Path) -> None:
    with fixture_http("auth-required") as mcp_url:
        servers = {"token": {"url": mcp_url, "bearerEnv": "EXPORTER_TEST_TOKEN"}, "anonymous": {"url": mcp_url},
                   "unset": {"url": mcp_url, "headers": {"X-Api-Key": "${EXPORTER_TEST_UNSET}"}}}
        with exporter(tmp_path, servers, env={"EXPORTER_TEST_TOKEN": "good-token"}) as url:
            _, _, text = get(f"{url}/probe?target=token")
            assert value(text, "mcpprobe_up") == 1 and value(text, "mcpprobe_exit_code") == 0, text
            _, _, text = get(f"{url}/probe?target=anonymous")
            assert value(text, "mcpprobe_exit_code") == 7 and value(text, "mcpprobe_stage", stage="connect") == 1
            _, _, text = get(f"{url}/probe?target=unset")
            assert value(text, "mcpprobe_exit_code") == 2 and value(text, "mcpprobe_stage", stage="config") == 1
            assert value(text, "mcpprobe_findings_by_code", code="config-error") == 1
            for page in ("/", "/metrics", "/probe?target=token"):
                assert "good-token" not in get(url + page)[2]


def test_expect_and_baseline_modules(tmp_path: Path) -> None:
    from tests.conftest import fixture_cmd, run_cli

    (tmp_path / "snapshots").mkdir()
    saved = run_cli(["probe", "--save-snapshot", str(tmp_path / "snapshots" / "full.json"), "--protocol", "legacy",
                     "--", *fixture_cmd("full")])
    assert saved.exit_code == 0, saved.stderr
    (tmp_path / "expect.yaml").write_text("tools: [echo, missing_tool]\n")
    modules = ("modules:\n  contract: {check: probe, expect: expect.yaml}\n"
               "  drift: {check: probe, baseline: 'snapshots/{target}.json', protocol: legacy}\n")
    (tmp_path / "snapshots" / "broken.json").write_text("{")
    # "full" is now served by a server with fewer kinds: the baseline sees them removed.
    servers = {"full": _server("tools-only"), "new": _server("full"), "broken": _server("full")}
    with exporter(tmp_path, servers, modules) as url:
        _, _, text = get(f"{url}/probe?target=full&module=contract")
        assert value(text, "mcpprobe_expectations_failed") == 1 and value(text, "mcpprobe_exit_code") == 1
        _, _, text = get(f"{url}/probe?target=full&module=drift")
        assert value(text, "mcpprobe_breaking_changes") >= 1 and value(text, "mcpprobe_exit_code") == 1
        assert value(text, "mcpprobe_findings_by_code", code="breaking-change") >= 1
        # A target with no snapshot yet is probed and not compared; one whose snapshot is broken is not probed.
        _, _, text = get(f"{url}/probe?target=new&module=drift")
        assert value(text, "mcpprobe_exit_code") == 0 and value(text, "mcpprobe_stage", stage="done") == 1, text
        assert value(text, "mcpprobe_findings_by_code", code="baseline-missing") == 1
        _, _, text = get(f"{url}/probe?target=broken&module=drift")
        assert value(text, "mcpprobe_exit_code") == 2 and value(text, "mcpprobe_stage", stage="config") == 1, text
        assert value(text, "mcpprobe_findings_by_code", code="baseline-invalid") == 1


# ----- readiness and liveness for a kubelet -----


def test_ready_and_live_answer_a_kubelet_with_one_probe_per_interval(tmp_path: Path) -> None:
    """/ready is 200 for a server whose probe succeeds and 503 with the reason for one that fails (here
    a declared list answered -32601: reached, so /live is 200); a server that cannot start is 503 on
    both; an unknown target is 404 and starts nothing; a load module is refused. A kubelet polling
    every fraction of a second costs each server one probe per min_interval."""
    servers = {"healthy": _recording(tmp_path, "healthy"),
               "failing": _recording(tmp_path, "failing", "method-not-found"), "dead": _server("crash-on-start")}
    modules = "min_interval: 300\nmodules:\n  probe: {check: probe}\n  soak: {check: load, work: [\"list tools\"]}\n"
    with exporter(tmp_path, servers, modules) as url:
        for _ in range(5):  # kubelet-like polling, faster than any cache period
            code, _, text = get(f"{url}/ready?target=healthy")
            assert code == 200 and text.startswith("ready: healthy (probe, exit 0"), text
            assert get(f"{url}/live?target=healthy")[0] == 200
            code, _, text = get(f"{url}/ready?target=failing")
            assert code == 503 and text.startswith("not ready: failing (probe, exit 1") and "method-not-found" in text
            assert get(f"{url}/live?target=failing")[0] == 200
            code, _, text = get(f"{url}/ready?target=dead")
            assert code == 503 and "connection-failed" in text and "\n" not in text.rstrip("\n"), text
            assert get(f"{url}/live?target=dead")[0] == 503
        assert _starts(tmp_path, "healthy") == 1 and _starts(tmp_path, "failing") == 1
        code, _, text = get(f"{url}/ready?target=nobody")
        assert code == 404 and "unknown target" in text
        assert get(f"{url}/ready?target=https://example.com/mcp")[0] == 404
        assert get(f"{url}/ready")[0] == 400 and get(f"{url}/ready?target=healthy&url=x")[0] == 400
        code, _, text = get(f"{url}/ready?target=healthy&module=soak")
        assert code == 400 and "load run" in text
