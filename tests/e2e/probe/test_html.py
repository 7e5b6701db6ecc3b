"""--format html: one self-contained page, checked by a real HTML parser and shown in a real
headless Chromium (Debian's `chromium`), at a desktop's and at a phone's width.

The servers are real processes: the fixture servers, and a hostile one that puts script tags,
images and a stylesheet's end into every text it sends. Chromium is driven over the DevTools
protocol (tests/chromium.py); without it the browser tests skip and say why.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from tests import chromium
from tests.conftest import FIXTURE, PY, fixture_cmd, run_cli

ROOT = Path(__file__).parents[3]
HOSTILE = ROOT / "tests" / "fixtures" / "hostile_server.py"
PHONE = 390
DESKTOP = 1280


class Page(HTMLParser):
    """Every start tag with its attributes, the text of <style>, and the text outside tags."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.styles: list[str] = []
        self.text: list[str] = []
        self._in_style = False
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        (self.styles if self._in_style else self.text).append(data)

    def handle_comment(self, data: str) -> None:
        raise AssertionError(f"a comment in the page: {data[:80]!r}")

    def named(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for name, attrs in self.tags if name == tag]

    def words(self) -> str:
        return " ".join(" ".join(self.text).split())


def _config(tmp_path: Path) -> Path:
    servers = {"full": [str(FIXTURE), "full"], "broken": [str(FIXTURE), "crash-on-start"],
               "nothing": [str(FIXTURE), "method-not-found"],
               'markup <script>console.error("name")</script>': [str(HOSTILE), "markup"]}
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps({"mcpServers": {n: {"command": PY, "args": a} for n, a in servers.items()}}))
    return path


def _baseline(tmp_path: Path) -> Path:
    """A snapshot of the `full` fixture as it was "before": one tool more, one prompt less, and a
    removed tool whose name is markup."""
    path = tmp_path / "full.json"
    saved = run_cli(["probe", "--save-snapshot", str(path), "--protocol", "legacy", "--", *fixture_cmd("full")])
    assert saved.exit_code == 0, saved.stderr
    snapshot = json.loads(path.read_text())
    snapshot["kinds"]["tools"]["items"].append({"name": "gone<img src=x onerror=alert(1)>",
                                                 "inputSchema": {"type": "object"}})
    snapshot["kinds"]["tools"]["items"][0]["inputSchema"]["required"] = []
    snapshot["kinds"]["prompts"]["items"].pop()
    path.write_text(json.dumps(snapshot))
    return path


@pytest.fixture(scope="module")
def fleet_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, str]:
    """(exit code, page, stderr) of a fleet: healthy, unreachable, broken kinds, hostile markup;
    `full` compared with a baseline, and an expectation it does not meet."""
    tmp_path = tmp_path_factory.mktemp("fleet")
    config = _config(tmp_path)
    baseline = _baseline(tmp_path)
    expect = tmp_path / "expect.yaml"
    expect.write_text("tools: [echo, missing_tool]\n")
    result = run_cli(["probe", "-s", "full", "-s", "broken", "-s", "nothing", "-s",
                      'markup <script>console.error("name")</script>', "--config", str(config), "--format", "html",
                      "--protocol", "legacy", "--expect", str(expect)])
    compared = run_cli(["probe", "-s", "full", "--config", str(config), "--format", "html", "--protocol", "legacy",
                        "--baseline", str(baseline)])
    assert compared.exit_code == 1, compared.stderr
    # One page with everything: the fleet, then `full` with its drift, through one renderer call.
    return result.exit_code, result.stdout, compared.stdout


def test_the_fleet_page_summarises_health(fleet_page: tuple[int, str, str]) -> None:
    code, text, _ = fleet_page
    assert code == 4  # the worst of the fleet, as with every other format
    assert text.startswith("<!DOCTYPE html>")
    page = Page(text)
    words = page.words()
    assert "0 of 4 servers ok" in words and "4 failing" in words and "connection (4) worst exit code" in words
    rows = page.named("th")
    assert rows and all(attrs.get("scope") in ("col", "row") for attrs in rows)  # every header cell is scoped
    # The summary table: one row per server, in the order given, each linking to its section.
    links = [attrs["href"] for attrs in page.named("a")]
    assert links == ["#server-1", "#server-2", "#server-3", "#server-4"]
    assert [a.get("id") for a in page.named("section") if a.get("class") == "server"] == [
        "server-1", "server-2", "server-3", "server-4"]
    assert "fixture-full 1.0.0" in words and "legacy 2025-11-25" in words
    assert "expectation-failed" in words and "tool 'missing_tool' is missing" in words
    assert "not met" in words and "method-not-found" in words
    assert "the server process ended (exit status 1)" in words  # why `broken` stopped
    assert "cannot open config" in words  # and its last stderr lines
    # Severity is written out, not only coloured.
    assert re.search(r"✖ error\s+method-not-found", words)


def test_nothing_a_server_sends_becomes_markup(fleet_page: tuple[int, str, str]) -> None:
    _, text, _ = fleet_page
    page = Page(text)
    allowed = {"html", "head", "meta", "title", "style", "body", "main", "header", "footer", "section", "h1", "h2",
               "h3", "h4", "p", "ul", "li", "dl", "dt", "dd", "table", "caption", "thead", "tbody", "tr", "th", "td",
               "span", "strong", "b", "a", "code", "pre", "div", "details", "summary",
               # the timing waterfall: inline SVG, drawn by mcpprobe from its own numbers
               "svg", "g", "rect", "line", "text"}
    assert {name for name, _ in page.tags} - allowed == set()
    assert len(page.named("style")) == 1 and len(page.styles) == 1
    assert all(not key.startswith("on") and key != "style" for _, attrs in page.tags for key in attrs)
    assert all(str(attrs["href"]).startswith("#") for attrs in page.named("a"))
    words = page.words()
    # The hostile server's text is there, as text: its name, its tools, its findings.
    assert '</style></title><script>console.error("injected")</script>' in words
    assert 'markup <script>console.error("name")</script>' in words
    assert 'onerror="console.error(1)">&amp;<!--' in words  # an entity in server text stays literal


def test_the_policy_forbids_everything_but_its_own_stylesheet(fleet_page: tuple[int, str, str]) -> None:
    _, text, _ = fleet_page
    page = Page(text)
    metas = page.named("meta")
    assert metas[0] == {"charset": "utf-8"}
    (policy,) = [m["content"] for m in metas if m.get("http-equiv") == "Content-Security-Policy"]
    assert policy is not None
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert directives["default-src"] == "'none'" and directives["script-src"] == "'none'"
    digest = base64.b64encode(hashlib.sha256(page.styles[0].encode()).digest()).decode()
    assert directives["style-src"] == f"'sha256-{digest}'"
    # The policy comes before anything it governs.
    assert text.index("Content-Security-Policy") < text.index("<style>") < text.index("<body>")


def test_drift_is_split_into_breaking_and_other(fleet_page: tuple[int, str, str]) -> None:
    _, _, text = fleet_page
    words = Page(text).words()
    assert "Changes since the baseline" in words
    breaking = words[words.index("Breaking changes (2)"):words.index("Other changes (1)")]
    assert "gone<img src=x onerror=alert(1)>" in breaking
    assert "argument 'message' is now required" in breaking
    assert "summary" in words[words.index("Other changes (1)"):]
    assert "2 breaking , 1 other" in words  # the summary row (text pieces joined by spaces)


def test_one_server_and_its_exit_code() -> None:
    result = run_cli(["probe", "--format", "html", "--protocol", "legacy", "--", *fixture_cmd("full")])
    assert result.exit_code == 0, result.stderr
    words = Page(result.stdout).words()
    assert "ok worst exit code" in words and "1 of 1 servers ok" not in words
    assert "No findings." in words
    failing = run_cli(["probe", "--format", "html", "--protocol", "legacy", "--", *fixture_cmd("method-not-found")])
    assert failing.exit_code == 1 and "findings (1)" in Page(failing.stdout).words()


def test_each_server_has_a_timing_waterfall_of_its_phases(tmp_path: Path) -> None:
    """One bar per phase of the session, in the order the phases began, named as the JSON names
    them; inline SVG without a script, a link or a style attribute."""
    report = tmp_path / "probe.json"
    result = run_cli(["probe", "--format", "html", "--report", f"json={report}", "--", *fixture_cmd("full")])
    assert result.exit_code == 0, result.stderr
    phases = [timing["phase"] for timing in json.loads(report.read_text())["timings"]]
    assert phases[0] == "connect" and "initialize" in phases and "list tools" in phases
    page = Page(result.stdout)
    (svg,) = page.named("svg")
    assert svg["class"] == "waterfall" and svg["role"] == "img" and svg["width"] == "100%"
    assert svg["aria-labelledby"] == "server-1-timing"
    bars = page.named("rect")
    assert len(bars) == len(phases)
    assert {bar["class"] for bar in bars} >= {"bar connect", "bar handshake", "bar list"}
    drawn = re.search(r"<svg.*?</svg>", result.stdout, re.S)
    assert drawn is not None
    assert not any(key in ("style", "href", "xlink:href") or key.startswith("on")
                   for _, attrs in Page(drawn.group(0)).tags for key in attrs)
    labels = re.findall(r'<text x="0" y="[\d.]+">([^<]+)</text>', drawn.group(0))
    assert sorted(labels) == sorted(phases)
    starts = [float(bar["x"]) for bar in bars]
    assert starts == sorted(starts)  # drawn in the order the phases began
    # The lists began once the handshake was over: each list bar starts at or after the end of initialize.
    initialize = bars[labels.index("initialize")]
    end = float(initialize["x"]) + float(initialize["width"])
    assert all(float(bars[labels.index(p)]["x"]) >= end - 1.5 for p in labels if p.startswith("list "))


def test_a_baseline_not_compared_says_so(tmp_path: Path) -> None:
    baseline = _baseline(tmp_path)
    result = run_cli(["probe", "--format", "html", "--protocol", "legacy", "--baseline", str(baseline), "--",
                      *fixture_cmd("crash-on-start")])
    assert result.exit_code == 4
    words = Page(result.stdout).words()
    assert "not compared: the probe stopped" in words and "no baseline" not in words


def test_secrets_are_masked_before_they_are_escaped() -> None:
    """A secret with '<', '&' and a quote would hide from a mask applied after escaping."""
    secret = 'pa<ss&wo"rd-9f2c7e'
    result = run_cli(["probe", "--format", "html", "--protocol", "legacy", "-e", f"ECHO_SECRET={secret}", "--",
                      PY, str(HOSTILE), "echo-env"])
    assert result.exit_code in (0, 1), result.stderr
    shown = html.unescape(result.stdout)
    assert "[redacted]" in shown
    for start in range(len(secret) - 5):
        piece = secret[start:start + 6]
        assert piece not in shown and html.escape(piece) not in result.stdout, f"{piece!r} leaked"


# ----- in a real browser -----

BINARY = chromium.executable()
needs_chromium = pytest.mark.skipif(BINARY is None, reason="chromium not installed (Debian: apt-get install "
                                                           "chromium); the HTML report is not shown in a browser")
MEASURE = {"scrollWidth": "document.documentElement.scrollWidth", "innerWidth": "window.innerWidth",
           "styled": "getComputedStyle(document.querySelector('section.server')).borderTopStyle",
           "cards": "getComputedStyle(document.querySelector('table.cards tbody tr')).display",
           "background": "getComputedStyle(document.body).backgroundColor",
           "bars": "document.querySelectorAll('svg.waterfall rect.bar').length",
           "listFill": "getComputedStyle(document.querySelector('svg.waterfall rect.list')).fill",
           "waterfallWidth": "Math.max(...[...document.querySelectorAll('svg.waterfall')].map("
                             "s => s.getBoundingClientRect().right))"}


@pytest.fixture(scope="module")
def browser() -> Any:
    assert BINARY is not None
    # Nothing resolves: a page that tried to fetch anything would fail to, and say so.
    instance = chromium.Browser(BINARY, "--host-resolver-rules=MAP * ~NOTFOUND")
    yield instance
    instance.close()


def _keep(visit: chromium.Visit, name: str, tmp_path: Path) -> None:
    """The screenshot, in the test's directory and in $MCPPROBE_SCREENSHOTS when set, to look at."""
    assert visit.screenshot.startswith(b"\x89PNG") and len(visit.screenshot) > 10_000
    (tmp_path / name).write_bytes(visit.screenshot)
    if os.environ.get("MCPPROBE_SCREENSHOTS"):
        target = Path(os.environ["MCPPROBE_SCREENSHOTS"])
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy(tmp_path / name, target / name)


@needs_chromium
@pytest.mark.parametrize(("name", "width", "mobile", "dark"), [
    ("desktop", DESKTOP, False, False), ("phone", PHONE, True, False), ("phone-dark", PHONE, True, True)])
def test_the_page_in_chromium(browser: Any, fleet_page: tuple[int, str, str], tmp_path: Path, name: str,
                              width: int, mobile: bool, dark: bool) -> None:
    _, fleet, drift = fleet_page
    for label, text in (("fleet", fleet), ("drift", drift)):
        path = tmp_path / f"{label}.html"
        path.write_text(text, encoding="utf-8")
        visit = browser.visit(path, width=width, mobile=mobile, dark=dark, measure=MEASURE)
        assert visit.errors() == []  # no console error, no exception, no policy violation
        assert visit.requests == [path.resolve().as_uri()]  # the page itself, nothing else
        assert visit.values["styled"] == "solid"  # the policy let the page's own stylesheet apply
        assert visit.values["scrollWidth"] <= visit.values["innerWidth"] == width  # no sideways scrolling
        assert visit.values["cards"] == ("block" if width == PHONE else "table-row")
        assert (visit.values["background"] == "rgb(13, 17, 23)") is dark
        # The waterfall is drawn, coloured by the page's own stylesheet, within the page's width.
        assert visit.values["bars"] >= 6  # connect, initialize and four lists of `full`, at least
        assert visit.values["listFill"] == ("rgb(63, 185, 80)" if dark else "rgb(26, 127, 55)")
        assert 0 < visit.values["waterfallWidth"] <= width
        _keep(visit, f"{label}-{name}.png", tmp_path)


@needs_chromium
def test_the_browser_checks_would_catch_a_broken_page(browser: Any, fleet_page: tuple[int, str, str],
                                                      tmp_path: Path) -> None:
    """The same page with what escaping prevents, put back: the policy blocks it and says so, and
    a wide element makes the phone scroll sideways. So the checks above can fail."""
    _, text, _ = fleet_page
    broken = text.replace("<main>", '<main><script>console.error("ran")</script>'
                                    '<img src="http://example.invalid/x.png" alt="">'
                                    '<svg width="2000" height="4"></svg>', 1)
    path = tmp_path / "broken.html"
    path.write_text(broken, encoding="utf-8")
    visit = browser.visit(path, width=PHONE, mobile=True, measure=MEASURE)
    errors = " ".join(visit.errors())
    assert "Content Security Policy" in errors and all("ran" not in str(c) for c in visit.console)
    assert visit.values["scrollWidth"] > PHONE


@needs_chromium
def test_the_page_renders_the_same_with_the_network_reachable(fleet_page: tuple[int, str, str],
                                                              tmp_path: Path, browser: Any) -> None:
    """A second browser that can resolve names renders the very same pixels: nothing on the page
    depends on the network."""
    assert BINARY is not None
    path = tmp_path / "fleet.html"
    path.write_text(fleet_page[1], encoding="utf-8")
    offline = browser.visit(path, width=PHONE, mobile=True)
    online_browser = chromium.Browser(BINARY)
    try:
        online = online_browser.visit(path, width=PHONE, mobile=True)
    finally:
        online_browser.close()
    assert online.errors() == [] and online.requests == offline.requests == [path.resolve().as_uri()]
    assert online.screenshot == offline.screenshot
