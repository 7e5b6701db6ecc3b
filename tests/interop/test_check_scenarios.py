"""The coverage table of docs/commands/check.md names exactly the server scenarios each installed
release of the official conformance suite lists, at the spec versions it scores them.

`conformance list --server` is run for the latest release and the newest pre-release (the
versions tests/conftest.py installs); a scenario a later suite adds, drops or scores at another
version makes this test fail, with the row to write in mcpprobe/check/scenarios.py.
"""

from __future__ import annotations

import subprocess

import pytest
from conftest import CONFORMANCE_PRERELEASE, CONFORMANCE_VERSION

from mcpprobe.check.scenarios import SCENARIOS, SUITE_VERSIONS, differences, parse_list

pytestmark = [pytest.mark.conformance, pytest.mark.interop]


def _printed(suite) -> dict[str, tuple[str, ...]]:
    proc = subprocess.run([str(suite.node), str(suite.entry), "list", "--server"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    printed = parse_list(proc.stdout)
    assert len(printed) > 20, proc.stdout[-2000:]  # the list was read, not an empty or changed format
    return printed


def test_the_table_names_the_versions_the_tests_install() -> None:
    assert SUITE_VERSIONS == (CONFORMANCE_VERSION, CONFORMANCE_PRERELEASE)


@pytest.mark.parametrize("which", ["release", "prerelease"])
def test_the_table_has_exactly_the_scenarios_the_suite_lists(which: str, request: pytest.FixtureRequest) -> None:
    suite = request.getfixturevalue("conformance" if which == "release" else "conformance_prerelease")
    version = CONFORMANCE_VERSION if which == "release" else CONFORMANCE_PRERELEASE
    printed = _printed(suite)
    assert differences(version, printed) == []
    # The comparison sees a row removed, and a scenario scored at a version the table does not say.
    dropped = next(row for row in SCENARIOS if version in row.versions)
    rows = tuple(row for row in SCENARIOS if row is not dropped)
    assert differences(version, printed, rows) == [
        f"{version}: {dropped.name} {list(dropped.versions[version])} is listed by the suite but not in the table"]
    assert differences(version, {**printed, dropped.name: ("1999-01-01",)}) == [
        f"{version}: {dropped.name} is scored at ['1999-01-01'], the table says {list(dropped.versions[version])}"]
