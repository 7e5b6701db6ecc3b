"""The conformance suite's client scenarios that mcpprobe passes also pass with their traffic through the tap:
the tap breaks no conformant exchange (the scenarios judge what the client sent, as the server saw it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PY, ROOT
from tests.interop.test_conformance import SCENARIOS, _assert_passed

pytestmark = pytest.mark.conformance

THROUGH = f"{PY} {ROOT / 'tests' / 'fixtures' / 'tap' / 'through_tap.py'}"


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_client_scenario_through_the_tap(conformance: Any, tmp_path: Path, scenario: str) -> None:
    command, marks = SCENARIOS[scenario]
    if marks:
        pytest.skip("not passed without the tap either")
    report = tmp_path / "tap.json"
    run = conformance.run(scenario, f"{THROUGH} {command}", workdir=tmp_path, env={"TAP_REPORT": str(report)})
    _assert_passed(run, scenario)
    document = json.loads(report.read_text())
    assert document["fromClient"] > 0 and document["fromServer"] > 0
