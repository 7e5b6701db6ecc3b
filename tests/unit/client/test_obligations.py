"""The one table of what a capability obliges (mcpprobe.client.obligations): what reads it, the one
note it gives, and the links of the check catalogue held to the pages of the methods each check sends."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from mcpprobe.check.catalogue import _LISTS, CHECKS, SPEC_BASE, Check, Level
from mcpprobe.client.capabilities import REQUIRES
from mcpprobe.client.kinds import LIST_KINDS
from mcpprobe.client.obligations import PARTS, is_optional, method_pages, not_implemented

UNKNOWN_ON_PURPOSE = {"mcpprobe/no-such-method"}  # lifecycle.unknown-method: a method no page defines


def page_of(url: str, version: str) -> str:
    """The page a link points at, without its anchor: a path under the revision, or a SEP's URL."""
    url = url.split("#", 1)[0]
    prefix = f"{SPEC_BASE}/{version}/"
    return url[len(prefix):] if url.startswith(prefix) else url


def wrong_links(checks: Iterable[Check]) -> list[str]:
    """Each (check, revision) whose link is the page of a method the check does not send: a check
    links the page of the methods it judges, or a page of no method's own."""
    owners = method_pages()
    wrong = []
    for check in checks:
        for version in check.revisions:
            page = page_of(check.spec_url(version), version)
            methods = set(check.methods_in(version))
            defined = owners.get(page)
            if defined is not None and methods and not methods <= defined:
                wrong.append(f"{check.id} ({version}) sends {sorted(methods)} and links {page}, the page of "
                             f"{sorted(defined)}")
    return wrong


def test_no_check_links_another_method_s_page() -> None:
    assert wrong_links(CHECKS) == []


def test_the_link_rule_catches_a_list_check_that_links_one_kind_s_page() -> None:
    # What listing.complete did: a failure of resources/templates/list linked the tools page.
    old = Check("listing.complete", "every declared kind lists to the end", Level.MUST, "server/tools#listing-tools",
                (("all", "..."),), methods=_LISTS)
    assert [line.split(" (", 1)[0] for line in wrong_links([old])] == ["listing.complete"] * len(old.revisions)


def test_every_method_a_check_names_is_in_the_table() -> None:
    named = {method for check in CHECKS for version in check.revisions for method in check.methods_in(version)}
    assert named - set(PARTS) == UNKNOWN_ON_PURPOSE
    # A check gated on a capability sends something it judges; one reads the declaration alone.
    silent = [check.id for check in CHECKS if check.capability and not check.methods]
    assert silent == ["tasks.ext-no-legacy-capability"]


def test_the_list_checks_link_the_page_that_names_every_list() -> None:
    by_id = {check.id: check for check in CHECKS}
    for version in by_id["listing.complete"].revisions:
        assert page_of(by_id["listing.complete"].spec_url(version), version) == "server/utilities/pagination"
    assert page_of(by_id["listing.stable"].spec_url("2025-11-25"), "2025-11-25") == "basic/lifecycle"
    assert by_id["listing.stable"].methods_in("2026-07-28") == ("tools/list",)


def test_the_table_is_what_the_gate_and_the_kinds_read() -> None:
    assert {part.method: (part.capability, part.sub) for part in PARTS.values() if part.capability} == REQUIRES
    assert REQUIRES["resources/subscribe"] == ("resources", "subscribe")
    assert [kind for kind, spec in LIST_KINDS.items() if spec.optional] == ["templates"]
    assert sorted(method for method in PARTS if is_optional(method)) == ["logging/setLevel", "resources/templates/list"]


@pytest.mark.parametrize(("method", "capability", "says"), [
    ("resources/templates/list", "resources", "it offers no templates. Listing them is an optional part of "
                                              "'resources' in every protocol revision,"),
    ("logging/setLevel", "logging", "Setting the log level is an optional part of 'logging' in every protocol "
                                    "revision that has it (2024-11-05 to 2025-11-25),"),
])
def test_the_note_is_one_info_finding(method: str, capability: str, says: str) -> None:
    note = not_implemented(method, "Method not found", kind="templates", detail={"rpcCode": -32601})
    assert note.code == "not-implemented" and note.severity == "info" and note.kind == "templates"
    assert note.message.startswith(f"the server declared '{capability}' and answered {method} with -32601")
    assert says in note.message and note.message.endswith("not an error and leaves the exit code unchanged")
    assert note.detail == {"method": method, "capability": capability, "rpcCode": -32601}


def test_an_obliged_method_has_no_note() -> None:
    with pytest.raises(ValueError, match="not an optional part"):
        not_implemented("tools/list", "Method not found")
