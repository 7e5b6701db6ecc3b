"""`mcpprobe check` for people, on real fixture servers: what failed first, the passes compact, each
reason for `skipped` and `n/a` said once (every check on its own line with -v); and a cancelled
request answered after `lifecycle.cancel-in-flight` stopped looking for it is no false alarm."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import checked, run_cli

from tests import chromium
from tests.e2e.check.test_check import check_cmd

HEADS = ("pass ", "fail ", "warn ", "skipped ", "n/a ", "error ")


def _heads(text: str) -> list[str]:
    return [line.split()[0] for line in text.splitlines() if line.startswith(HEADS)]


def test_a_failure_late_in_the_run_is_shown_first_and_no_reason_is_repeated() -> None:
    # cancel-breaks: the request after a cancellation is never answered; the check runs late
    # (runner.LATE), and what it takes down after it is `skipped` for one reason.
    args = ["check", "--protocol", "legacy", "--timeout", "3", "--", *check_cmd("cancel-breaks")]
    human = run_cli(args, env={"COLUMNS": "60"})
    assert human.exit_code == 1, human.stdout
    heads = _heads(human.stdout)
    assert heads[0] == "fail"
    first = next(line for line in human.stdout.splitlines() if line.startswith("fail"))
    assert first.split()[1] == "lifecycle.cancel-in-flight"
    assert heads == sorted(heads, key=["fail", "error", "warn", "pass", "skipped", "n/a"].index)
    assert heads.count("pass") == 1  # the passes: one wrapped line of ids
    words = " ".join(human.stdout.split())
    assert words.count("not part of protocol") <= 1
    assert "https://modelcontextprotocol.io/specification/" in human.stdout
    tally = human.stdout.strip().splitlines()[-1]
    doc = checked(json.loads(run_cli([*args[:1], "--json", *args[1:]]).stdout))
    assert tally == f"{len(doc['checks'])} checks: " + ", ".join(
        f"{doc['summary'][s]} {s}" for s in ("pass", "fail", "warn", "skipped", "n/a", "error") if doc["summary"][s])
    verbose = run_cli(["check", "-v", *args[1:]], env={"COLUMNS": "100"})
    assert len(_heads(verbose.stdout)) == len(doc["checks"])  # -v: every check on a line of its own
    assert _heads(verbose.stdout)[0] == "fail"


LATE_SERVER = r'''
import json, sys

held = None  # the cancelled request, answered only when the request after the check comes

def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()

for line in sys.stdin:
    message = json.loads(line)
    method, rid = message.get("method"), message.get("id")
    if rid is None:
        continue  # notifications, notifications/cancelled too: ignored, the answer stays due
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
            "serverInfo": {"name": "late", "version": "1"}}})
    elif method == "tools/list" and rid == "mcpprobe-cancel-1":
        held = rid
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
    else:
        if held is not None:  # late: the check that cancelled it has ended before this request was sent
            send({"jsonrpc": "2.0", "id": held, "result": {"tools": []}})
            held = None
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}})
'''


def test_a_cancelled_request_answered_after_the_check_is_no_false_alarm(tmp_path: Path) -> None:
    """The server answers the cancelled tools/list only when the next check's request arrives, which
    mcpprobe sends after lifecycle.cancel-in-flight has decided: later than any window, whatever the
    machine's speed. The specification lets the sender ignore it ("The sender of the cancellation
    notification SHOULD ignore any response to the request that arrives afterward"): no finding,
    no failure, and the next check judged on its own answer."""
    server = tmp_path / "late_server.py"
    server.write_text(LATE_SERVER)
    result = run_cli(["check", "--json", "--protocol", "legacy", "--timeout", "5", "--only",
                      "lifecycle.cancel-in-flight", "--only", "lifecycle.unknown-method", "--", sys.executable,
                      str(server)])
    doc = checked(json.loads(result.stdout))
    by_id = {entry["id"]: entry for entry in doc["checks"]}
    assert by_id["lifecycle.cancel-in-flight"]["status"] == "pass"
    assert "(not answered)" in by_id["lifecycle.cancel-in-flight"]["message"]
    assert by_id["lifecycle.cancel-in-flight"]["detail"] == {"cancelledAnswered": False}
    assert by_id["lifecycle.unknown-method"]["status"] == "pass"
    assert doc["findings"] == [] and result.exit_code == 0


# ----- the HTML page, in a real browser -----

BINARY = chromium.executable()
needs_chromium = pytest.mark.skipif(BINARY is None, reason="chromium not installed (Debian: apt-get install "
                                                           "chromium); the HTML page is not shown in a browser")
# Each check id's line breaks: where a character starts a new line, the character before it, which
# must end a word part ('.' or '-'); and how many lines the id takes.
BREAKS = """JSON.stringify([...document.querySelectorAll('code.id')].map(code => {
  const text = code.textContent, range = document.createRange(), node = [...code.childNodes];
  const tops = [];
  for (const part of node) {
    if (part.nodeType !== 3) continue;
    for (let i = 0; i < part.length; i++) {
      range.setStart(part, i); range.setEnd(part, i + 1);
      tops.push(Math.round(range.getClientRects()[0].top));
    }
  }
  const before = [];
  for (let i = 1; i < tops.length; i++) if (tops[i] > tops[i - 1]) before.push(text[i - 1]);
  return [text, before];
}))"""
MEASURE = {"scrollWidth": "document.documentElement.scrollWidth", "innerWidth": "window.innerWidth",
           "breaks": BREAKS, "title": "document.title",
           "tally": "document.querySelector('h3[id^=checks] .tally').textContent",
           "first": "document.querySelector('tr[data-check] td[data-label=status]').textContent"}


@pytest.fixture(scope="module")
def check_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """check's page of a server with warnings only (server-everything has two: the same shape)."""
    args = ["check", "--protocol", "legacy", "--timeout", "5", "--", *check_cmd("cursor-ignored")]
    page = run_cli([args[0], "--format", "html", *args[1:]])
    doc = checked(json.loads(run_cli([args[0], "--json", *args[1:]]).stdout))
    path = tmp_path_factory.mktemp("check-html") / "check.html"
    path.write_text(page.stdout, encoding="utf-8")
    return path, doc


@pytest.fixture(scope="module")
def browser() -> Any:
    assert BINARY is not None
    instance = chromium.Browser(BINARY, "--host-resolver-rules=MAP * ~NOTFOUND")
    yield instance
    instance.close()


def _keep(visit: chromium.Visit, name: str, tmp_path: Path) -> None:
    """The screenshot, in the test's directory and in $MCPPROBE_SCREENSHOTS when set, to look at."""
    assert visit.screenshot.startswith(b"\x89PNG")
    (tmp_path / name).write_bytes(visit.screenshot)
    if os.environ.get("MCPPROBE_SCREENSHOTS"):
        target = Path(os.environ["MCPPROBE_SCREENSHOTS"])
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy(tmp_path / name, target / name)


@needs_chromium
@pytest.mark.parametrize(("width", "mobile"), [(1280, False), (400, True)])
def test_the_check_page_in_chromium(browser: Any, check_page: tuple[Path, dict], tmp_path: Path, width: int,
                                    mobile: bool) -> None:
    """The headline says how many warnings, not "ok"; the heading tallies pass, warn and fail; what
    warned is the first row; no check id is broken inside a word (only after a '.' or a '-'), on a
    desktop not at all; and the page never scrolls sideways."""
    path, doc = check_page
    summary = doc["summary"]
    assert summary["warn"] >= 1 and summary["fail"] == 0 and doc["exitCode"] == 0
    visit = browser.visit(path, width=width, mobile=mobile, measure=MEASURE)
    assert visit.errors() == []
    warnings = f"{summary['warn']} warning{'s' if summary['warn'] != 1 else ''}"
    assert visit.values["title"].endswith(f": {warnings}")
    assert visit.values["tally"].startswith(f"{summary['pass']} pass · {summary['warn']} warn · 0 fail")
    assert visit.values["first"] == "warn"
    assert visit.values["scrollWidth"] <= visit.values["innerWidth"] == width
    breaks = json.loads(visit.values["breaks"])
    assert len(breaks) == len(doc["checks"])
    for check_id, before in breaks:
        assert set(before) <= {".", "-"}, (check_id, before)
        if width == 1280:
            assert before == [], check_id
    if width == 400:
        assert any(before for _, before in breaks)  # the phone does break the long ones, where it may
    _keep(visit, f"check-{width}.png", tmp_path)


@needs_chromium
def test_the_id_measure_would_catch_an_id_broken_mid_word(browser: Any, check_page: tuple[Path, dict],
                                                          tmp_path: Path) -> None:
    """The same page with `word-break: break-all` on the ids: the measure above sees a break
    inside a word. So that test can fail."""
    path, _ = check_page
    text = path.read_text(encoding="utf-8")
    broken = tmp_path / "broken.html"
    # The page's policy admits its own stylesheet by hash: the rule goes into that stylesheet, and
    # the policy is dropped (this copy is for the measure only).
    broken.write_text(re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", text)
                      .replace("</style>", "code.id{word-break:break-all!important}</style>", 1), encoding="utf-8")
    visit = browser.visit(broken, width=400, mobile=True, measure=MEASURE)
    breaks = json.loads(visit.values["breaks"])
    assert any(set(before) - {".", "-"} for _, before in breaks)
