"""What `check` keeps of a run's answers: a bounded summary, never the result itself."""

from __future__ import annotations

from mcpprobe.check import context, listing
from mcpprobe.check.context import SUMMARY_CHARS, SUMMARY_KEYS, Tally, _key, summary


def test_the_cacheable_keys_are_those_listing_cache_hints_judges() -> None:
    assert context.CACHEABLE == listing.CACHEABLE


def test_a_summary_keeps_what_the_checks_read_and_no_more() -> None:
    huge = {f"k{n:05d}": "x" * 1000 for n in range(2000)}
    huge.update({"resultType": "complete" * 100, "ttlMs": 10 ** 400, "cacheScope": {"deep": ["x" * 10_000]},
                 "tools": ["y" * 100_000], "z" * 5000: 1})
    kept = summary(huge)
    assert len(kept) <= SUMMARY_KEYS + len(context.CACHEABLE) + len(context.KEPT_FIELDS)
    assert all(len(key) <= SUMMARY_CHARS for key in kept)
    assert kept["resultType"] == ("complete" * 100)[:SUMMARY_CHARS]
    assert kept["ttlMs"] == 10 ** 400  # a number is judged as it came (an int of a few hundred bytes)
    assert isinstance(kept["cacheScope"], str) and len(kept["cacheScope"]) <= SUMMARY_CHARS + 20
    assert "tools" in kept and kept["tools"] is None  # which cacheable keys it has, not their values
    assert sorted(kept)[:3] == ["cacheScope", "k00000", "k00001"]


def test_an_id_matches_only_its_own_type() -> None:
    assert _key(1) == _key(1) and _key(1) != _key(1.0) and _key(True) is None and _key("1") != _key(1)
    assert _key(9007199254740991) != _key(9007199254740991.0)


def test_the_tally_counts_and_keeps_no_result() -> None:
    tally = Tally()
    for _ in range(3):
        tally.append(("tools/call", {"content": ["x" * 1000]}))
    tally.append(("m" * 10_000, None))
    assert len(tally) == 4 and tally.counts["tools/call"] == 3 and "(a longer method name)" in tally.counts
