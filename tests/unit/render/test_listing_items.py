"""A listing keeps its accepted items as compact JSON text, a page at a time, and reads them back
as plain dicts wherever they are used: the same items, in the same order, whatever the reader."""

from __future__ import annotations

import io
import json

import pytest
from conftest import fixture_cmd, run_subprocess

from mcpprobe.client.catalog import Items, Listing
from mcpprobe.render import jsondoc
from mcpprobe.safety.redact import Redactor


def _items(count: int, page: int) -> tuple[Items, list[dict]]:
    plain = [{"name": f"t{i}", "description": f"tool {i}", "inputSchema": {"type": "object"}} for i in range(count)]
    items = Items()
    for number, item in enumerate(plain, 1):
        items.append(item)
        if number % page == 0:
            items.seal()
    return items, plain


@pytest.mark.parametrize(("count", "page"), [(0, 3), (1, 3), (7, 3), (9, 3), (250, 100)])
def test_items_read_back_as_the_list_they_were(count, page):
    items, plain = _items(count, page)
    assert len(items) == count and bool(items) == bool(count)
    assert list(items) == plain and items == plain
    assert [items[i] for i in range(count)] == plain
    assert [items[-i] for i in range(1, count + 1)] == [plain[-i] for i in range(1, count + 1)]
    for part in (slice(None, 5), slice(2, 8), slice(5, None), slice(None, None, 2), slice(8, 2)):
        assert items[part] == plain[part]
    assert items + [{"name": "x"}] == [*plain, {"name": "x"}]
    with pytest.raises(IndexError):
        items[count]
    assert repr(items) == f"<Items: {count}>"


def test_sealed_pages_hold_text_not_objects():
    items, plain = _items(250, 100)
    assert len(items._open) == 50 and len(items._pages) == 2  # the last page is not sealed yet
    items.seal()
    assert all(isinstance(page, str) for page in items._pages) and len(items._pages) == 3
    first = items[0]
    first["name"] = "changed"  # a copy: the listing is not changed through what it hands out
    assert items[0] == plain[0]


def test_items_are_written_as_kept_and_read_back_by_every_encoder():
    items, plain = _items(1203, 100)
    items.append({"name": "nan", "inputSchema": {"type": "object"}, "x": float("nan")})  # open, not sealed
    plain.append({"name": "nan", "inputSchema": {"type": "object"}, "x": None})  # NaN is not JSON: null
    out = io.StringIO()
    jsondoc.write(out, {"items": items}, redactor=Redactor(()), pretty=False)
    assert json.loads(out.getvalue()) == {"items": plain}
    assert out.getvalue() == jsondoc.dumps({"items": plain}, pretty=False) + "\n"
    assert json.loads(jsondoc.dumps({"items": items}, pretty=True)) == {"items": plain}


def test_a_listing_made_from_a_list_keeps_it_as_items():
    listing = Listing("tools", True, items=[{"name": "a"}, {"name": "b"}])
    assert isinstance(listing.items, Items) and listing.items == [{"name": "a"}, {"name": "b"}]


def test_a_paged_listing_keeps_every_item_in_order_with_its_findings():
    """Over a real server: 250 tools in 3 pages, all kept and written in order; the same list in
    human form names the last one."""
    args = ["-e", "FIXTURE_TOOLS=250", "-e", "FIXTURE_PAGE_SIZE=100", "--", *fixture_cmd("paginated")]
    result = run_subprocess(["list", "tools", "--json", *args])
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert [item["name"] for item in doc["items"]] == [f"tool_{i:05d}" for i in range(1, 251)]
    assert doc["count"] == 250 and doc["pages"] == 3 and doc["findings"] == []
    human = run_subprocess(["list", "tools", *args])
    assert human.exit_code == 0, human.stderr
    assert "tool_00250" in human.stdout and "250 items, complete, 3 pages read" in human.stdout


def test_a_page_is_scanned_exactly_when_its_text_can_hold_hidden_characters():
    """The look at a page's text that lets clean pages skip the scan never misses a string that
    the scan would look at: it agrees with `plain()` for every character up to U+0800 and more."""
    from mcpprobe.client.catalog import compact, maybe_hidden
    from mcpprobe.safety.sanitize import plain

    for text in _SAMPLES:
        page = compact([{"name": "x", "description": text}])  # as a sealed page is written
        assert maybe_hidden(page) == (not plain(text)), repr(text)


_SAMPLES = [f"a{chr(c)}b" for c in [*range(0x800), 0x200B, 0x202E, 0xFEFF, 0xE0041, 0x1F600, 0xD800]]
_SAMPLES += ["a\\u0041", "ends in \\", "\\\\r", 'say "hi"', "tab\there\nnewline"]


def test_the_compact_encoder_writes_what_the_standard_library_writes():
    """Kept pages are written by a faster encoder where it writes the same ASCII JSON, and by the
    standard library where it would not: non-ASCII text, DEL, lone surrogates, huge integers."""
    from mcpprobe.client.catalog import compact
    from mcpprobe.safety.sanitize import json_dumps

    values = [*([{"description": text}] for text in _SAMPLES), [2**70, -(2**64), 2**63 - 1, 0.5, -0.0, 1e300],
              [float("nan"), float("inf"), {"x": float("-inf")}], {"a": [None, True, False, {}, []]}, [], "x"]
    for value in values:
        text = compact(value)
        assert text.isascii() and "\x7f" not in text
        assert text == json_dumps(value, separators=(",", ":"), ensure_ascii=True) or json.loads(text) == json.loads(
            json_dumps(value, ensure_ascii=True))
        assert json.loads(text) == json.loads(json_dumps(value))  # the same JSON: NaN and Infinity as null


def test_suspicious_text_findings_point_at_the_item_that_holds_it():
    result = run_subprocess(["list", "tools", "--json", "--", *fixture_cmd("hostile-text")])
    doc = json.loads(result.stdout)
    found = [f for f in doc["findings"] if f["code"] == "suspicious-text" and f["kind"] == "tools"]
    assert [(f["detail"]["index"], f["detail"]["field"]) for f in found] == [
        (0, "description"), (1, "name"), (1, "description"), (2, "description")]
    for finding in found:
        item = doc["items"][finding["detail"]["index"]]
        assert finding["message"].split(":")[0] == "tool " + item["name"].replace("\u202e", "<U+202E>")


@pytest.mark.parametrize(("scenario", "options", "requests"), [
    ("paginated", ["-e", "FIXTURE_TOOLS=250", "-e", "FIXTURE_PAGE_SIZE=100"], 3),
    ("paginated", ["-e", "FIXTURE_TOOLS=250", "-e", "FIXTURE_PAGE_SIZE=100", "--max-pages", "2"], 2),
    ("repeated-cursor", [], 2),
])
def test_the_next_page_is_asked_for_early_but_only_when_it_is_followed(tmp_path, scenario, options, requests):
    """The next page is requested before this page's items are checked, but never a page that a
    page-by-page client would not ask for: none past --max-pages, none after a repeated cursor."""
    trace = tmp_path / "trace.txt"
    result = run_subprocess(["list", "tools", "--json", "--trace", str(trace), *options, "--",
                             *fixture_cmd(scenario)])
    doc = json.loads(result.stdout)
    sent = [json.loads(line.split(" send ", 1)[1]) for line in trace.read_text().splitlines() if " send " in line]
    cursors = [message.get("params", {}).get("cursor") for message in sent if message.get("method") == "tools/list"]
    assert len(cursors) == requests == doc["pages"], cursors
    assert cursors[0] is None and len(set(cursors)) == len(cursors)


@pytest.mark.parametrize(("scenario", "env", "names"), [
    ("paginated", ["FIXTURE_TOOLS=250", "FIXTURE_PAGE_SIZE=100"], [f"tool_{n:05d}" for n in range(1, 251)]),
    ("malformed-item", [], ["good_one", "good_two"]),  # the two invalid items are not kept
    ("duplicate-item", [], ["echo", "add", "echo"]),  # a repeated item is reported and kept
])
def test_a_table_for_a_person_is_built_as_the_pages_arrive(scenario, env, names):
    """`list` for a person gives the listing a feed: each kept page's cells are made from the items
    just checked, in order, so the renderer does not decode every page again. Over a real server,
    the feed holds exactly the kept items' cells."""
    import anyio

    from mcpprobe.client.settings import Settings
    from mcpprobe.operations.probe import list_one
    from mcpprobe.render.cells import Cells, Safe, column_cells
    from mcpprobe.wire.target import build_target

    target = build_target(None, fixture_cmd(scenario), env=env)
    safe = Safe(Redactor(()))
    feed = Cells("tools", safe)
    outcome = anyio.run(lambda: list_one(target, Settings(timeout=30), "tools", feed=feed))
    listing = outcome.listings["tools"]
    assert outcome.feed is feed and listing.state == "complete"
    assert [item["name"] for item in listing.items] == names
    assert feed.rows == len(names) and feed.columns == column_cells("tools", listing.items.pages(), safe)
    assert feed.columns[0] == names


def test_the_renderer_takes_the_cells_built_as_the_pages_arrived_only_when_they_are_complete():
    from mcpprobe.render import human
    from mcpprobe.render.cells import Cells, Safe
    from mcpprobe.render.console import make_console

    safe = Safe(Redactor(()))
    listing = Listing("tools", True, state="complete", items=[{"name": f"item{n}"} for n in range(300)])
    built = Cells("tools", safe)
    built.add([{"name": f"built{n}"} for n in range(300)])  # stands for cells made as pages arrived

    def shown(cells: Cells | None) -> str:
        out = io.StringIO()
        human.render_listing(make_console(out), listing, safe, cells=cells)
        return out.getvalue()

    assert "built299" in shown(built) and "item299" not in shown(built)
    built.add([{"name": "one more"}])  # not the listing's items: built again from the items
    assert "item299" in shown(built) and "built299" not in shown(built)
    assert shown(None) == shown(Cells("tools", safe)) and "item299" in shown(None)


def test_a_page_s_own_checks_do_not_count_against_the_next_page_s_timeout():
    """The next page is asked for before this page's items are checked. Checks that hold the event
    loop longer than --timeout (made so by the documented test hook, at any machine speed) must not
    time the next page out: its answer came in time and waits in the pipe, unread only because
    nothing else ran meanwhile."""
    result = run_subprocess(["list", "tools", "--json", "--protocol", "legacy", "--timeout", "2",
                             "-e", "FIXTURE_TOOLS=20", "-e", "FIXTURE_PAGE_SIZE=10", "--",
                             *fixture_cmd("paginated")], env={"MCPPROBE_TEST_PAGE_CHECK_SECONDS": "2.5"})
    doc = json.loads(result.stdout)
    assert result.exit_code == 0, doc.get("findings")
    assert doc["state"] == "complete" and doc["pages"] == 2 and len(doc["items"]) == 20
