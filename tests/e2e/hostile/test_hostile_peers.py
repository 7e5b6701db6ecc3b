"""A hostile network peer gets a bounded time, a bounded memory, and numbers read into ranges.

Each peer is a real process on 127.0.0.1 (tests/fixtures/hostile_peer.py) that stops by itself; each
mcpprobe is a real process, and each run must end within its deadline plus a grace that a busy
2-core machine needs, with its documented exit code and no traceback (run_subprocess checks that).
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import pytest

from tests.conftest import PY, ROOT, http_server, run_subprocess
from tests.e2e.exporter.test_exporter import exporter, get, value

PEER = ROOT / "tests" / "fixtures" / "hostile_peer.py"
# Beyond the deadline: interpreter start and imports, the probe's other steps, on a loaded machine.
GRACE = 15


def _peer(tmp_path: Path, lifetime: float = 90):
    return http_server([PY, str(PEER), "--lifetime", str(lifetime), "--log", str(tmp_path / "peer.log")])


def _sent(tmp_path: Path, path: str) -> list[int]:
    log = tmp_path / "peer.log"
    if not log.exists():
        return []
    return [entry["sent"] for line in log.read_text().splitlines() if (entry := json.loads(line))["path"] == path]


def _store(config_dir: Path, server_url: str, token_endpoint: str, *, expired: bool,
           revocation_endpoint: str | None = None) -> Path:
    """A stored token for `server_url` with a refresh token: expired (renewed before the run) or
    valid (renewed when the server refuses it); revoked at `revocation_endpoint` on logout."""
    from mcpprobe.auth.discovery import canonical_resource

    tokens = config_dir / "tokens"
    tokens.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = tokens / f"{hashlib.sha256(canonical_resource(server_url).encode()).hexdigest()[:32]}.json"
    record = {"serverUrl": server_url, "accessToken": "old-token-value", "refreshToken": "refresh-token-value",
              "expiresAt": time.time() + (-3600 if expired else 3600), "grant": "authorization_code",
              "tokenEndpoint": token_endpoint, "client": {"client_id": "mcpprobe-test"}, "obtainedAt": time.time(),
              "revocationEndpoint": revocation_endpoint}
    path.write_text(json.dumps(record))
    path.chmod(0o600)
    return path


def _timed(args: list[str], env: dict[str, str] | None = None, limit: float = 60):
    started = time.monotonic()
    result = run_subprocess(args, env=env, timeout=limit)
    return result, time.monotonic() - started


# ----- one budget per exchange: time -----


@pytest.mark.parametrize("expired", [True, False], ids=["before-the-run", "renewal-during-the-run"])
def test_a_token_endpoint_that_trickles_gets_the_timeout(tmp_path: Path, expired: bool) -> None:
    """One byte every 0.5 s never trips a per-read timeout: the whole exchange gets --timeout."""
    with _peer(tmp_path) as peer:
        server = f"{peer}/mcp/401"
        _store(tmp_path / "cfg", server, f"{peer}/token/trickle", expired=expired)
        result, elapsed = _timed(["probe", server, "--json", "--timeout", "3"],
                                 env={"MCPPROBE_CONFIG_DIR": str(tmp_path / "cfg")})
    assert elapsed < 3 + GRACE, elapsed
    # Before the run: no token, so the server's 401 and its diagnosis. During it: the renewal took
    # the request's whole --timeout, so the request timed out (or, by a hair, the 401 came first).
    assert result.exit_code in ((7,) if expired else (6, 7)), result.stderr
    assert json.loads(result.stdout)["exitCode"] == result.exit_code


def test_a_logout_whose_revocation_endpoint_trickles_gets_the_timeout_in_all(tmp_path: Path) -> None:
    """`auth logout --all --timeout 3` with three stored tokens, each revoked twice (refresh and access
    token) at an endpoint that trickles: six exchanges share the 3 s, and every token is forgotten
    all the same. Before: no --timeout, and each exchange had 30 s (three minutes in all)."""
    cfg = tmp_path / "cfg"
    with _peer(tmp_path) as peer:
        files = [_store(cfg, f"{peer}/mcp/{mode}", f"{peer}/token/trickle", expired=False,
                        revocation_endpoint=f"{peer}/token/trickle") for mode in ("ok", "401", "429")]
        result, elapsed = _timed(["auth", "logout", "--all", "--timeout", "3"], env={"MCPPROBE_CONFIG_DIR": str(cfg)})
    assert elapsed < 3 + GRACE, elapsed
    assert result.exit_code == 7, result.stderr  # not revoked: an error, and forgotten anyway
    assert result.stdout.count("forgotten, but NOT revoked") == 3, result.stdout
    assert not any(path.exists() for path in files)


def test_a_login_whose_token_endpoint_trickles_gets_the_timeout(tmp_path: Path) -> None:
    """A client-credentials login (the SDK's flow, each of its requests sent by mcpprobe) against a
    token endpoint that trickles: the exchange gets --timeout, the run goes on without a token."""
    with _peer(tmp_path) as peer:
        result, elapsed = _timed(["probe", f"{peer}/mcp/401", "--json", "--timeout", "3", "--client-id", "c",
                                  "--client-secret-env", "PEER_SECRET"],
                                 env={"MCPPROBE_CONFIG_DIR": str(tmp_path / "cfg"), "PEER_SECRET": "s3cret-value"})
    assert elapsed < 3 * 2 + GRACE, elapsed
    assert result.exit_code == 7, result.stderr
    assert "client credentials login failed" in result.stderr, result.stderr


def test_an_endless_token_answer_is_cut_at_the_cap(tmp_path: Path) -> None:
    """An answer that never ends is refused once it passes the cap, not buffered until memory runs out."""
    with _peer(tmp_path) as peer:
        server = f"{peer}/mcp/401"
        _store(tmp_path / "cfg", server, f"{peer}/token/endless", expired=True)
        result, elapsed = _timed(["probe", server, "--json", "--timeout", "20"],
                                 env={"MCPPROBE_CONFIG_DIR": str(tmp_path / "cfg")})
        deadline = time.monotonic() + 10
        while not _sent(tmp_path, "/token/endless") and time.monotonic() < deadline:
            time.sleep(0.1)
    assert result.exit_code == 7, result.stderr
    assert "refreshing the stored token failed" in result.stderr and "limit" in result.stderr
    sent = _sent(tmp_path, "/token/endless")
    # The cap is 1 MiB; what the sockets' buffers held on top of it is a few MiB at most.
    assert sent and sent[0] < 32 * 1024 * 1024, sent


def test_an_endless_answer_to_a_notification_is_not_buffered(tmp_path: Path) -> None:
    """The POST of notifications/initialized answered with a body that never ends: its body is never
    needed, so it is not read (before, it was buffered until the notification's timeout)."""
    with _peer(tmp_path) as peer:
        result, _ = _timed(["probe", f"{peer}/mcp/endless-ack", "--json", "--timeout", "10"])
        deadline = time.monotonic() + 10
        while not _sent(tmp_path, "/mcp/endless-ack notifications/initialized") and time.monotonic() < deadline:
            time.sleep(0.1)
    assert result.exit_code == 0, result.stderr
    sent = _sent(tmp_path, "/mcp/endless-ack notifications/initialized")
    assert sent and sent[0] < 32 * 1024 * 1024, sent


def test_a_slow_token_endpoint_does_not_hold_the_exporters_scrape_or_its_slot(tmp_path: Path) -> None:
    with _peer(tmp_path) as peer:
        server = f"{peer}/mcp/401"
        cfg = tmp_path / "cfg"
        _store(cfg, server, f"{peer}/token/trickle", expired=True)
        servers = {"slowtoken": {"url": server, "clientId": "mcpprobe-test"}}
        with exporter(tmp_path, servers, "timeout: 60\ntimeout_margin: 0.5\nmin_interval: 0\n",
                      env={"MCPPROBE_CONFIG_DIR": str(cfg)}) as url:
            for _ in range(2):  # the second scrape finds the slot free: no 503
                started = time.monotonic()
                code, _, text = get(f"{url}/probe?target=slowtoken", {"X-Prometheus-Scrape-Timeout-Seconds": "4"},
                                    timeout=4 + GRACE)
                assert code == 200, text
                assert time.monotonic() - started < 4 + GRACE
                assert value(text, "mcpprobe_exit_code") in (6, 7)


# ----- numbers from peers -----


@pytest.mark.parametrize("kind", ["inf", "nan", "big"])
def test_an_expires_in_out_of_range_is_never_stored_and_the_store_stays_readable(tmp_path: Path, kind: str) -> None:
    cfg = tmp_path / "cfg"
    env = {"MCPPROBE_CONFIG_DIR": str(cfg)}
    with _peer(tmp_path) as peer:
        server = f"{peer}/mcp/ok"
        path = _store(cfg, server, f"{peer}/token/expires-{kind}", expired=True)
        result, _ = _timed(["probe", server, "--json", "--timeout", "10"], env=env)
        assert result.exit_code == 0, result.stderr
        assert "expires_in" in result.stderr and "no known expiry" in result.stderr
        stored = json.loads(path.read_text(), parse_constant=lambda name: pytest.fail(f"{name} stored"))
        assert stored["accessToken"] == f"tok-expires-{kind}" and stored["expiresAt"] is None
        status = run_subprocess(["auth", "status", server, "--json"], env=env)
        assert status.exit_code == 0, status.stderr


def test_a_store_file_that_holds_nan_or_infinity_is_read(tmp_path: Path) -> None:
    """A file written by an older mcpprobe (expiresAt NaN or Infinity) is read, not a failure."""
    cfg = tmp_path / "cfg"
    env = {"MCPPROBE_CONFIG_DIR": str(cfg)}
    with _peer(tmp_path) as peer:
        server = f"{peer}/mcp/ok"
        path = _store(cfg, server, f"{peer}/token/expires-nan", expired=False)
        for value in ("NaN", "Infinity"):
            path.write_text(path.read_text().replace(f'"expiresAt": {json.loads(path.read_text())["expiresAt"]}',
                                                     f'"expiresAt": {value}')
                            if value == "NaN" else path.read_text().replace("NaN", "Infinity"))
            assert value in path.read_text()
            status = run_subprocess(["auth", "status", server, "--json"], env=env)
            assert status.exit_code == 0, status.stderr
            result = run_subprocess(["probe", server, "--json", "--timeout", "10"], env=env)
            assert result.exit_code == 0, result.stderr


def test_a_retry_after_of_5000_digits_is_a_rate_limit_not_a_crash(tmp_path: Path) -> None:
    with _peer(tmp_path) as peer:
        result, _ = _timed(["probe", f"{peer}/mcp/429", "--json", "--timeout", "10"])
    assert result.exit_code == 4, result.stderr
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "rate-limited"
    # Not a delay anyone waits for: no retryAfter, and the header as it came, cut at 100 characters.
    assert error["detail"]["retryAfter"] is None and error["detail"]["retryAfterHeader"] == "9" * 100


def test_an_sse_retry_of_401_digits_is_a_finding_and_the_default_wait(tmp_path: Path) -> None:
    with _peer(tmp_path) as peer:
        result, elapsed = _timed(["probe", f"{peer}/mcp/retry", "--json", "--timeout", "10"])
    assert result.exit_code == 0, result.stderr
    found = [f for f in json.loads(result.stdout)["findings"] if f["code"] == "number-out-of-range"]
    assert found and "retry:" in found[0]["message"], result.stdout


def test_a_number_past_a_double_is_null_with_a_finding(tmp_path: Path) -> None:
    with _peer(tmp_path) as peer:
        result, _ = _timed(["call", "--yes", "big", "--json", "--timeout", "10", f"{peer}/mcp/huge"])
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)  # valid JSON: no Infinity
    assert doc["result"]["structuredContent"] == {"big": None, "small": 1}
    assert "number-out-of-range" in [f["code"] for f in doc["findings"]], doc["findings"]


@pytest.mark.parametrize("mode,field", [("task-ttl", "ttl"), ("task-poll", "pollInterval")])
def test_a_tasks_ttl_or_poll_interval_out_of_range_is_a_finding_and_a_default(tmp_path: Path, mode: str,
                                                                              field: str) -> None:
    with _peer(tmp_path) as peer:
        result, _ = _timed(["call", "--yes", "job", "--json", "--timeout", "10", f"{peer}/mcp/{mode}"])
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    # Said once however many answers repeat it (1e400 is also noted where each message is read).
    found = [f for f in doc["findings"] if f["code"] == "number-out-of-range" and f["detail"].get("field")]
    assert len(found) == 1 and found[0]["detail"]["field"] == field, doc["findings"]
    # The peer's number as its JSON said it (401 digits, 1e400), never Python's "inf".
    said = {"ttl": "an integer of about 402 digits", "pollInterval": "a number past the range of a double"}[field]
    assert found[0]["detail"]["sample"] == said and f"({said})" in found[0]["message"]
    task = doc["task"]
    assert task["status"] == "completed" and task[field] is None


# ----- progress held to a budget -----


def test_a_flood_of_big_progress_notifications_keeps_only_the_latest(tmp_path: Path) -> None:
    with _peer(tmp_path) as peer:
        result, _ = _timed(["call", "--yes", "slow", "--json", "--timeout", "20", f"{peer}/mcp/progress-flood"])
    assert result.exit_code == 0, result.stderr
    progress = json.loads(result.stdout)["progress"]
    assert len(progress) == 100 and progress[-1]["progress"] == 300, [p["progress"] for p in progress][:5]
    assert all(len(p["message"]) <= 1001 for p in progress)
    assert len(result.stdout) < 1_000_000


def test_progress_for_ever_extends_a_call_to_ten_times_its_timeout_and_no_more(tmp_path: Path) -> None:
    with _peer(tmp_path, lifetime=60) as peer:
        result, elapsed = _timed(["call", "--yes", "slow", "--json", "--timeout", "1", f"{peer}/mcp/progress-forever"],
                                 limit=50)
    assert result.exit_code == 6, result.stderr
    assert 9 <= elapsed < 10 + GRACE, elapsed
    assert "10 x --timeout" in json.loads(result.stdout)["error"]["message"]


def test_a_progress_of_401_digits_is_dropped_with_a_finding(tmp_path: Path) -> None:
    with _peer(tmp_path) as peer:
        result, _ = _timed(["call", "--yes", "slow", "--json", "--timeout", "10", f"{peer}/mcp/progress-big"])
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["progress"] == []
    assert "number-out-of-range" in [f["code"] for f in doc["findings"]]



def test_a_progress_of_401_digits_on_a_terminal_draws_no_crash(tmp_path: Path) -> None:
    """The progress bar formats the value: 401 digits do not fit a float, so the bar never sees them."""
    from tests.e2e.hostile.test_terminal_safety import run_in_pty

    with _peer(tmp_path) as peer:
        code, shown = run_in_pty(["call", "slow", "--yes", "--timeout", "10", f"{peer}/mcp/progress-big"], timeout=40)
    assert code == 0, shown
    assert "done" in shown and "number-out-of-range" in shown
