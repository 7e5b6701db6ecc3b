"""--format openmetrics: OpenMetrics text for a Prometheus textfile collector or a Pushgateway.

Every sample carries `server` (the config name, or the URL or command). The samples of one metric
family stay together across servers, as the format requires; the exposition ends with `# EOF`.
Label values are server or config text, made inert (`sanitize.visible`) before they are escaped.
"""

from __future__ import annotations

import time
from typing import Any

from mcpprobe.client.catalog import KINDS
from mcpprobe.findings import Severity
from mcpprobe.safety.sanitize import visible

# name -> (help, samples function)
FAMILIES = (
    ("mcpprobe_up", "1 when the server was reached and the protocol negotiated, else 0"),
    ("mcpprobe_stage", "1 for the stage where the probe stopped: config, connect, negotiate, list or done"),
    ("mcpprobe_exit_code", "the exit code mcpprobe probe gave for this server (docs/exit-codes.md)"),
    ("mcpprobe_probe_duration_seconds", "wall time of the whole probe of this server"),
    ("mcpprobe_phase_duration_seconds", "time spent in each phase: connect, discover, initialize, list KIND"),
    ("mcpprobe_items", "valid items listed, per kind (declared kinds only)"),
    ("mcpprobe_list_complete", "1 when the kind was listed to the end, or the server answered -32601 for an "
                               "optional kind (none of it), else 0 (declared kinds only)"),
    ("mcpprobe_kind_declared", "1 when the server declared the capability the kind needs, else 0"),
    ("mcpprobe_list_pages", "pages fetched per kind (declared kinds only)"),
    ("mcpprobe_findings", "findings per severity"),
    ("mcpprobe_findings_by_code", "findings per code and severity (docs/findings.md)"),
    ("mcpprobe_expectations_failed", "expectations not met (with --expect)"),
    ("mcpprobe_breaking_changes", "breaking changes since the baseline (with --baseline)"),
    ("mcpprobe_server_info", "what the server said about itself, as labels; always 1"),
    ("mcpprobe_last_run_timestamp_seconds", "when this probe finished, in seconds since the epoch"),
    ("mcpprobe_auth_token_expiry_timestamp_seconds",
     "when the access token sent expires, in seconds since the epoch (when known)"),
    ("mcpprobe_auth_token_renewable", "1 when mcpprobe can renew the token sent without a person, else 0"),
)


def escape_label(value: str) -> str:
    """A label value: inert on a terminal first (server text: no escape sequences, no lone
    surrogates, no CR; `sanitize.visible`), then escaped as the exposition format requires."""
    return visible(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(labels: dict[str, str]) -> str:
    return "{" + ",".join(f'{k}="{escape_label(str(v))}"' for k, v in labels.items()) + "}"


def _number(value: float) -> str:
    if float(value).is_integer():
        return str(int(value))
    return repr(round(float(value), 6))


STAGES = ("config", "connect", "negotiate", "list", "done")


def stage(report: Any) -> str:
    """Where the probe stopped: `config` (the entry or its baseline could not be used), `connect` (not started or
    not reached: exit 4 or 7 before negotiation), `negotiate` (no usable handshake or discover),
    `list` (negotiated, then the run or a list failed) or `done`."""
    outcome = report.outcome
    if getattr(report.member, "problem", None) is not None:
        return "config"
    negotiated = bool(outcome.snapshot and outcome.snapshot.negotiated)
    if not negotiated:
        if outcome.error is not None and int(outcome.error.exit_code) in (4, 7):
            return "connect"
        return "negotiate"
    if outcome.error is not None or any(listing.error is not None for listing in outcome.listings.values()):
        return "list"
    return "done"


def _samples(name: str, report: Any, now: float) -> list[tuple[dict[str, str], float]]:
    outcome = report.outcome
    server: dict[str, str] = {"server": report.member.label}
    snapshot = outcome.snapshot
    negotiated = bool(snapshot and snapshot.negotiated)
    if name == "mcpprobe_up":
        return [(server, 1 if negotiated and outcome.error is None else 0)]
    if name == "mcpprobe_stage":
        reached = stage(report)
        return [({**server, "stage": s}, int(s == reached)) for s in STAGES]
    if name == "mcpprobe_exit_code":
        return [(server, int(report.exit_code))]
    if name == "mcpprobe_probe_duration_seconds":
        return [(server, report.elapsed)]
    if name == "mcpprobe_phase_duration_seconds":
        phases: dict[str, float] = {}
        for timing in outcome.timings:
            phases[timing.phase] = phases.get(timing.phase, 0.0) + timing.ms / 1000
        return [({**server, "phase": phase}, seconds) for phase, seconds in phases.items()]
    if name == "mcpprobe_kind_declared":
        return [({**server, "kind": kind}, int(listing.declared)) for kind, listing in outcome.listings.items()]
    if name in ("mcpprobe_items", "mcpprobe_list_complete", "mcpprobe_list_pages"):
        out: list[tuple[dict[str, str], float]] = []
        for kind in KINDS:
            listing = outcome.listings.get(kind)
            if listing is None or not listing.declared:
                continue
            value = {"mcpprobe_items": len(listing.items), "mcpprobe_list_pages": len(listing.pages)}.get(
                name, int(listing.whole))  # whole: no alert for templates a server has none of
            out.append(({**server, "kind": kind}, value))
        return out
    if name == "mcpprobe_findings":
        found = outcome.all_findings()
        return [({**server, "severity": s.value}, sum(1 for f in found if f.severity is s)) for s in Severity]
    if name == "mcpprobe_findings_by_code":
        counts: dict[tuple[str, str], int] = {}
        for f in outcome.all_findings():
            key = (f.code, (f.severity or Severity.INFO).value)
            counts[key] = counts.get(key, 0) + 1
        return [({**server, "code": code, "severity": sev}, n) for (code, sev), n in sorted(counts.items())]
    if name == "mcpprobe_expectations_failed":
        return [] if report.checks is None else [(server, sum(1 for c in report.checks if c.ok is False))]
    if name == "mcpprobe_breaking_changes":
        return [] if report.drift is None else [(server, sum(1 for c in report.drift.changes if c.breaking))]
    if name == "mcpprobe_server_info":
        if not negotiated:
            return []
        info = snapshot.server_info or {}
        return [({**server, "server_name": str(info.get("name", "")), "server_version": str(info.get("version", "")),
                  "protocol_version": snapshot.protocol_version, "era": snapshot.era,
                  "transport": snapshot.transport}, 1)]
    if name == "mcpprobe_last_run_timestamp_seconds":
        return [(server, round(now, 3))]
    token = getattr(report.member.target, "token", None)
    if name == "mcpprobe_auth_token_expiry_timestamp_seconds":
        return [] if token is None or token.expires_at is None else [(server, round(token.expires_at, 3))]
    if name == "mcpprobe_auth_token_renewable":
        return [] if token is None else [(server, int(token.renewable))]
    raise KeyError(name)


def families(reports: list[Any], now: float | None = None) -> list[tuple[str, str, list[tuple[dict[str, str], float]]]]:
    """(name, help, samples) of every family that has samples, in the exposition's order. Label
    values are as found (not yet made inert or escaped): the `exporter` encodes them its own way."""
    now = time.time() if now is None else now
    reports = [report for report in reports if getattr(report.member, "skipped", None) is None]  # disabled
    out = []
    for name, help_text in FAMILIES:
        samples = [sample for report in reports for sample in _samples(name, report, now)]
        if samples:
            out.append((name, help_text, samples))
    return out


def render(reports: list[Any], now: float | None = None) -> str:
    lines: list[str] = []
    for name, help_text, samples in families(reports, now):
        lines.append(f"# TYPE {name} gauge")
        lines.append(f"# HELP {name} {help_text}")
        lines.extend(f"{name}{_labels(labels)} {_number(value)}" for labels, value in samples)
    lines.append("# EOF")
    return "\n".join(lines)
