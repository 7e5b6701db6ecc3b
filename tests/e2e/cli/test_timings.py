"""The timings a user reads are the time that was spent, also when a request failed."""

from __future__ import annotations

from conftest import fixture_cmd, run_cli


def test_a_list_page_that_timed_out_shows_the_time_it_waited():
    # The fixture delays every tools/list by 5 s; --timeout 1 gives up after about 1 s.
    result = run_cli(["list", "tools", "--timeout", "1", "--json", "--env", "FIXTURE_DELAY=5",
                      "--", *fixture_cmd("slow")])
    assert result.exit_code == 6, result.stderr
    doc = result.json
    assert doc["state"] == "failed"
    listed = [t for t in doc["timings"] if t["phase"] == "list tools"]
    assert listed and listed[0]["ms"] >= 900, doc["timings"]
    assert doc["ms"] >= 900
