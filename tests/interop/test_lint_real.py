"""--lint on servers mcpprobe did not write: the reference servers must not raise a warning.

A heuristic that flags the reference implementation is a false alarm (docs/findings.md, "Lint").
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_cli


def test_server_everything_gives_no_lint_warning(everything: Path) -> None:
    result = run_cli(["probe", "--lint=strict", "--json", "--", "node", str(everything)])
    assert result.exit_code == 0, result.stderr
    lint = [f for f in result.json["findings"] if f["code"].startswith("lint-")]
    assert [f["code"] for f in lint if f["severity"] != "info"] == []
    tokens = next(f for f in lint if f["code"] == "lint-tokens")
    assert tokens["detail"]["tokens"] > 0 and tokens["detail"]["method"].endswith("/ 4")
