"""The gate every `suite` check goes through (mcpprobe.check.suite, mcpprobe.check.suite_mrtr): nothing
without `--suite-fixtures`, nothing for a fixture the server does not list, each with one reason so
that the report groups them on one line; and the few values both modules judge with."""

from __future__ import annotations

from typing import Any

from mcpprobe.check.catalogue import Status
from mcpprobe.check.context import CheckContext, Verdict, skipped

# One reason for every suite check without the flag, so that the report groups them on one line.
NO_FLAG = "the conformance suite's fixtures are judged only with --suite-fixtures; nothing sent"
NOT_LISTED = "the server does not list the suite's fixture for this scenario; nothing sent"
CONTRACT = "the suite's fixture contract"
# The one root `--suite-fixtures` declares (when no --root is given), and every roots/list is answered
# with: the suite's own client's (`file:///test/root`), which names nothing on this machine.
SUITE_ROOT = "file:///test/root"


def truthy(value: Any) -> bool:
    """JavaScript's truthiness, which the suite's judgements use (`!x`): an empty list or object is
    true there; null, false, 0, NaN and "" are false."""
    if isinstance(value, list | dict):
        return True
    return bool(value) and value == value  # NaN is false


def gated(ctx: CheckContext) -> Verdict | None:
    return None if ctx.options.suite_fixtures else skipped(NO_FLAG)


def listed_names(items: Any, key: str) -> set[str]:
    return {str(item[key]) for item in items if isinstance(item, dict) and isinstance(item.get(key), str)}


def not_listed(kind: str, name: str) -> Verdict:
    """One reason for every fixture not listed, so that the report groups them on one line; which
    fixture it was is in the detail (and on the check's page)."""
    return Verdict(Status.SKIPPED, NOT_LISTED, detail={"fixture": name, "kind": kind})
