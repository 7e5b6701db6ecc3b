"""docs/checks/FAMILY.md, one page per check family, written from the catalogue (never by hand).

    python -m mcpprobe.check.docs          # rewrite docs/checks/ from mcpprobe/check/catalogue.py

tests/test_check.py fails when a page differs from what this writes, so the pages and the
catalogue cannot drift apart.
"""

from __future__ import annotations

import sys
from pathlib import Path

from mcpprobe.check.catalogue import CHECKS, FAMILIES, TRANSPORTS, Check, Family

GENERATED = "<!-- Generated from mcpprobe/check/catalogue.py by `python -m mcpprobe.check.docs`; do not edit. -->"


def _revisions(check: Check) -> str:
    revisions = check.revisions
    return revisions[0] if len(revisions) == 1 else f"{revisions[0]} to {revisions[-1]}"


def _level(check: Check) -> str:
    others = [f"{version}: {level.value}" for version, level in check.levels.items()]
    level = check.level.value + (f" ({'; '.join(others)})" if others else "")
    return level + (f", of {check.contract}" if check.contract else "")


def _sources(check: Check) -> list[str]:
    """One link per distinct page among the revisions the check applies to."""
    seen: dict[str, list[str]] = {}
    for version in check.revisions:
        path = check.sections.get(version, check.section)
        seen.setdefault(path, []).append(version)
    lines = []
    for versions in seen.values():
        label = versions[0] if len(versions) == 1 else f"{versions[0]} to {versions[-1]}"
        lines.append(f"[{label}]({check.spec_url(versions[-1])})")
    return lines


def _methods(check: Check) -> str:
    """The methods whose answers the check judges (the source links their page), per revision where they differ."""
    def spelled(methods: tuple[str, ...]) -> str:
        return ", ".join(f"`{method}`" for method in methods)

    text = spelled(check.methods) if check.methods else "no method's answer (see how it is checked)"
    others = [f"{version}: {spelled(methods)}" for version, methods in check.methods_for.items()
              if version in check.revisions]
    return text + (f" ({'; '.join(others)})" if others else "")


def check_section(check: Check) -> list[str]:
    needs = " or ".join(f"`{c}`" for c in check.capability) if check.capability else "nothing (every server)"
    transports = "all" if check.transports == TRANSPORTS else ", ".join(check.transports)
    lines = [
        f"## `{check.id}`", "",
        f"{check.title[0].upper()}{check.title[1:]}.", "",
        f"- Level: {_level(check)}",
        f"- Revisions: {_revisions(check)}",
        f"- Needs declared: {needs}",
        f"- Transports: {transports}",
        f"- Safe on a production server: {'yes' if check.safe else 'no: runs only with --unsafe'}",
        f"- Judges the answers to: {_methods(check)}",
        f"- Source: {', '.join(_sources(check))}",
        "",
        "What the conformance suite's scenario asks (and the specification, where quoted):" if check.contract
        else "What the specification says:",
        "",
    ]
    for where, words in check.words:
        lines.append(f"> {where}: {words}")
        lines.append(">")
    lines[-1] = ""
    lines += [f"How it is checked: {check.how}", ""]
    return lines


def family_page(family: Family) -> str:
    checks = [check for check in CHECKS if check.family == family.name]
    lines = [
        f"# Checks: {family.title}", "", GENERATED, "",
        f"`mcpprobe check` ([docs/commands/check.md](../commands/check.md)), the {family.name} family: "
        f"{family.about} Run only these with `--only {family.name}`.", "",
        "| check | level | revisions | needs | transports |", "|---|---|---|---|---|",
    ]
    for check in checks:
        needs = " or ".join(f"`{c}`" for c in check.capability) or "-"
        transports = "all" if check.transports == TRANSPORTS else ", ".join(check.transports)
        lines.append(f"| [`{check.id}`](#{check.id.replace('.', '')}) | {_level(check)} | {_revisions(check)} | "
                     f"{needs} | {transports} |")
    lines.append("")
    for check in checks:
        lines += check_section(check)
    return "\n".join(lines).rstrip() + "\n"


def pages() -> dict[str, str]:
    """docs-relative path -> text, for every family that has checks."""
    return {f"checks/{family.name}.md": family_page(family) for family in FAMILIES
            if any(check.family == family.name for check in CHECKS)}


def write(root: Path) -> list[Path]:
    written = []
    (root / "checks").mkdir(parents=True, exist_ok=True)
    for path, text in pages().items():
        target = root / path
        target.write_text(text, encoding="utf-8")
        written.append(target)
    return written


if __name__ == "__main__":
    docs = Path(__file__).resolve().parents[2] / "docs"
    for page in write(docs):
        print(page.relative_to(docs.parent), file=sys.stderr)
