"""The observer never holds the relay back: when judging is slow, copies are dropped and counted, and the judge
says how many messages it did not see; rules that need the whole exchange are not applied after a gap."""

from __future__ import annotations

import threading
import time
from typing import Any

from mcpprobe.findings import Finding
from mcpprobe.safety.redact import Redactor
from mcpprobe.tap.judge import Judge
from mcpprobe.tap.observer import QUEUE_ITEMS, Observer


class SlowJudge(Judge):
    def __init__(self, gate: threading.Event) -> None:
        super().__init__()
        self.gate = gate

    def feed(self, entry: dict[str, Any]) -> list[Finding]:
        self.gate.wait()
        return super().feed(entry)


def test_a_stalled_judge_never_blocks_offer_and_the_skipped_are_counted() -> None:
    gate = threading.Event()
    judge = SlowJudge(gate)
    observer = Observer(judge, Redactor(()), writer=None, live=None, cut=1 << 20)
    observer.start()
    line = b'{"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n'
    unknown = b'{"jsonrpc":"2.0","id":1,"result":{}}\n'  # answers to nothing: a finding, unless after a gap
    extra = 50
    started = time.monotonic()
    for _ in range(QUEUE_ITEMS + extra + 1):
        observer.offer("s2c", line)
    assert time.monotonic() - started < 2.0  # never waited for the judge
    gate.set()
    observer.offer("s2c", unknown)  # judged after the gap, or dropped too: either way no evidence
    observer.stop(10)
    judge.finish()
    assert judge.skipped >= extra
    codes = [f.code for f in judge.findings]
    assert "tap-skipped" in codes
    skipped = next(f for f in judge.findings if f.code == "tap-skipped")
    assert skipped.detail["side"] == "tap"
    assert "protocol-violation" not in codes  # after a gap, a response to an unknown id is no evidence


def test_a_bug_in_judging_stops_judging_not_the_relay() -> None:
    class Broken(Judge):
        def feed(self, entry: dict[str, Any]) -> list[Finding]:
            raise RuntimeError("a bug")

    observer = Observer(Broken(), Redactor(()), writer=None, live=None, cut=1 << 20)
    observer.start()
    for _ in range(10):
        observer.offer("c2s", b'{"jsonrpc":"2.0","method":"x"}\n')
    observer.stop(10)
    assert observer.failure == "RuntimeError: a bug"
