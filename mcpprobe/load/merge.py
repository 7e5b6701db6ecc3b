"""`load --merge`: the documents of several load runs against one server (workers on several
machines, a CI matrix, a Kubernetes Indexed Job) combined into one.

Percentiles cannot be averaged, but histograms in one fixed layout add: every load document carries
its buckets in the layout named by `histogram.layout` (mcpprobe.load.histogram.LAYOUT), so the
merged percentiles are those of all the runs' requests pooled, exact to the layout's resolution
(0.4 %). Counts and errors by kind add; throughput is the requests over the union of the runs'
measured windows (`clock.startedAt` to `clock.endedAt`, wall-clock: workers on several machines
need synchronised clocks, as any distributed load does); the exact minimum, maximum and mean come
from each run's own. The SLOs the runs were given are judged again on the merged figures. Each run
keeps a row of its own (`workers`).

Runs that do not measure the same thing are refused, naming the field: another server (`transport`,
`target`, the config name, `serverInfo.name`, `protocolVersion`), other operations
(`settings.operations`), another histogram layout, or a document that is not a load run's.
Pure: documents in, a document out; the command line reads the files.
"""

from __future__ import annotations

import math
from typing import Any

from mcpprobe.errors import UsageProblem
from mcpprobe.exitcodes import ExitCode, worst
from mcpprobe.load.histogram import LAYOUT, Histogram
from mcpprobe.load.run import LoadOutcome
from mcpprobe.load.slo import SloSyntax, parse

# What must be the same in every run for their requests to be one population.
SAME_SERVER = ("transport", "target", "protocolVersion")
QUANTILES = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999))


class MergeMismatch(UsageProblem):
    """Documents that cannot be merged: exit 2, naming the file and the field."""


def merge(documents: list[tuple[str, Any]]) -> dict[str, Any]:
    """One load document from `documents` ((file name, parsed JSON) pairs, two or more)."""
    if len(documents) < 2:
        raise MergeMismatch("--merge takes two or more load documents (files written by `mcpprobe load --json`)")
    for name, doc in documents:
        _check_one(name, doc)
    first_name, first = documents[0]
    for name, doc in documents[1:]:
        for field, mine, theirs in _identity(first, doc):
            if mine != theirs:
                raise MergeMismatch(f"{name}: {field} is {_shown(theirs)} where {first_name} has {_shown(mine)}: "
                                    "only runs against the same server with the same operations can be merged")
    ran = [(name, doc) for name, doc in documents if doc.get("overall") is not None]
    started = [doc["clock"]["startedAt"] for _, doc in ran]
    ended = [doc["clock"]["endedAt"] for _, doc in ran]
    seconds = max(ended) - min(started) if ran else 0.0
    overall_histogram = _histogram([doc["histogram"] for _, doc in ran], [doc["overall"] for _, doc in ran])
    overall = _figures([doc["overall"] for _, doc in ran], overall_histogram, seconds)
    operations = []
    for index, row in enumerate(first.get("operations") or []):
        rows = [doc["operations"][index] for _, doc in ran]
        histograms = [r.get("histogram") for r in rows]
        histogram = _histogram(histograms, rows) if all(h is not None for h in histograms) else None
        merged_row: dict[str, Any] = {key: row[key] for key in ("operation", "method", "weight")}
        merged_row.update(_figures(rows, histogram, seconds))
        if histogram is not None:
            merged_row["histogram"] = histogram.to_json()
        operations.append(merged_row)
    slos, findings = _judged(first, overall)
    codes = [_exit_code(doc) for _, doc in documents]
    if any(not judged["met"] for judged in slos):
        codes.append(ExitCode.FINDINGS)
    code = worst(codes)
    for index, (_, doc) in enumerate(documents, 1):
        for finding in doc.get("findings") or []:
            if isinstance(finding, dict):
                findings.append({**finding, "detail": {**(finding.get("detail") or {}), "worker": index}})
    merged: dict[str, Any] = {key: first.get(key) for key in (
        "formatVersion", "command", "transport", "target", "protocolVersion", "era", "eraReason", "serverInfo",
        "instructions", "capabilities", "supportedVersions", "client")}
    if "server" in first:
        merged["server"] = first["server"]
    merged.update({
        "ok": code == ExitCode.OK, "exitCode": int(code), "findings": findings, "timings": [], "error": None,
        "serverStderr": [], "settings": first.get("settings"),
        "interrupted": any(bool(doc.get("interrupted")) for _, doc in documents),
        "clock": {"startedAt": min(started) if ran else None, "endedAt": max(ended) if ran else None,
                  "measuredSeconds": round(seconds, 3)},
        "overall": overall if ran else None, "operations": operations,
        "histogram": overall_histogram.to_json() if ran else None,
        "intervals": [], "intervalsDropped": 0, "serverSamples": [], "clientCost": None, "schedule": None,
        "slos": slos,
        "merged": {"runs": len(documents), "workers": [_worker(name, doc) for name, doc in documents]},
    })
    return merged


def _check_one(name: str, doc: Any) -> None:
    if not isinstance(doc, dict) or doc.get("command") != "load":
        raise MergeMismatch(f"{name}: not a load document (its command is {_shown(_get(doc, 'command'))}); write one "
                            "with `mcpprobe load --json ... > FILE`")
    if doc.get("overall") is None:
        return  # a run that measured nothing (it could not connect): a row of its own, no figures
    histogram = doc.get("histogram")
    layout = histogram.get("layout") if isinstance(histogram, dict) else None
    if layout != LAYOUT:
        raise MergeMismatch(f"{name}: histogram.layout is {_shown(layout)}, not {LAYOUT!r}: written by another "
                            "version of mcpprobe, whose buckets do not add to these")
    clock = doc.get("clock")
    if not isinstance(clock, dict) or not all(_number(clock.get(k)) for k in ("startedAt", "endedAt")):
        raise MergeMismatch(f"{name}: clock.startedAt and clock.endedAt are missing: written by an older mcpprobe")
    for row in [doc["overall"], *(doc.get("operations") or [])]:
        if not isinstance(row, dict) or not isinstance(row.get("requests"), int):
            raise MergeMismatch(f"{name}: overall and operations must each have a whole number of requests")


def _identity(first: dict[str, Any], doc: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    pairs: list[tuple[str, Any, Any]] = [(key, first.get(key), doc.get(key)) for key in SAME_SERVER]
    pairs.append(("server.name", _get(first.get("server"), "name"), _get(doc.get("server"), "name")))
    pairs.append(("serverInfo.name", _get(first.get("serverInfo"), "name"), _get(doc.get("serverInfo"), "name")))
    pairs.append(("settings.operations", _get(first.get("settings"), "operations"),
                  _get(doc.get("settings"), "operations")))
    return pairs


def _histogram(documents: list[Any], figures: list[dict[str, Any]]) -> Histogram:
    merged = Histogram()
    for histogram in documents:
        for bucket in (histogram or {}).get("buckets") or []:
            try:
                merged.add_bucket(int(bucket["fromUs"]), int(bucket["toUs"]), int(bucket["count"]))
            except (KeyError, TypeError, ValueError) as exc:
                raise MergeMismatch(f"histogram: a bucket that is not of layout {LAYOUT}: {exc}") from None
    lows = [f["latencyUs"]["min"] for f in figures if _number(_get(f.get("latencyUs"), "min"))]
    highs = [f["latencyUs"]["max"] for f in figures if _number(_get(f.get("latencyUs"), "max"))]
    merged.bound(min(lows) if lows else None, max(highs) if highs else None)
    return merged


def _figures(rows: list[dict[str, Any]], histogram: Histogram | None, seconds: float) -> dict[str, Any]:
    requests = sum(row["requests"] for row in rows)
    errors_by_kind: dict[str, int] = {}
    for row in rows:
        for kind, n in (row.get("errorsByKind") or {}).items():
            if isinstance(n, int):
                errors_by_kind[kind] = errors_by_kind.get(kind, 0) + n
    errors = sum(errors_by_kind.values())
    weighted = [row["latencyUs"]["mean"] * row["requests"] for row in rows
                if _number(_get(row.get("latencyUs"), "mean"))]
    latency: dict[str, Any] = {"min": None, "p50": None, "p90": None, "p99": None, "p999": None, "max": None,
                               "mean": round(sum(weighted) / requests, 1) if requests and weighted else None}
    if histogram is not None and histogram.count:
        latency.update({"min": histogram.minimum, "max": histogram.maximum})
        latency.update({key: histogram.quantile(q) for key, q in QUANTILES})
    return {"requests": requests, "ok": requests - errors, "errors": errors,
            "errorRate": round(errors / requests, 6) if requests else 0.0,
            "errorsByKind": dict(sorted(errors_by_kind.items())),
            "throughput": round(requests / seconds, 3) if seconds > 0 else 0.0, "latencyUs": latency}


def _judged(first: dict[str, Any], overall: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The runs' SLOs judged again on the merged figures, and a finding for each one missed."""
    slos, findings = [], []
    for text in _get(first.get("settings"), "slos") or []:
        try:
            slo = parse(str(text))
        except SloSyntax:
            continue  # not one this version reads: the runs' own verdicts stand in their rows
        judged = slo.judge(overall)
        slos.append(judged)
        if not judged["met"]:
            findings.append({"code": "slo-missed", "severity": "error", "kind": "server",
                             "message": f"SLO {slo.text} missed by the merged runs: measured {judged['measured']} "
                                        f"{judged['unit']}", "detail": judged})
    return slos, findings


def _worker(name: str, doc: dict[str, Any]) -> dict[str, Any]:
    overall = doc.get("overall") or {}
    latency = overall.get("latencyUs") or {}
    clock = doc.get("clock") or {}
    return {"file": name, "exitCode": _exit_code(doc), "interrupted": bool(doc.get("interrupted")),
            "requests": overall.get("requests", 0), "errors": overall.get("errors", 0),
            "throughput": overall.get("throughput", 0.0),
            "latencyUs": {key: latency.get(key) for key in ("p50", "p99", "max")},
            "startedAt": clock.get("startedAt"), "endedAt": clock.get("endedAt")}


def _exit_code(doc: dict[str, Any]) -> ExitCode:
    code = doc.get("exitCode")
    try:
        return ExitCode(code) if isinstance(code, int) else ExitCode.SOFTWARE
    except ValueError:
        return ExitCode.SOFTWARE


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _shown(value: Any) -> str:
    import json

    text = json.dumps(value, ensure_ascii=True, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def as_outcome(document: dict[str, Any]) -> LoadOutcome:
    """The merged document as a load outcome, for the renderers a run has (human, OpenMetrics, HTML)."""
    from mcpprobe.findings import CODES, Finding, Severity

    outcome = LoadOutcome("load", overall=document["overall"], operations=document["operations"],
                          clock=dict(document["clock"]), slos=document["slos"])
    outcome.interrupted = bool(document["interrupted"])
    if document["histogram"] is not None:
        outcome.histogram = _histogram([document["histogram"]], [document["overall"]])
    outcome.operation_histograms = [_histogram([row["histogram"]], [row]) for row in document["operations"]
                                    if row.get("histogram") is not None]
    for found in document["findings"]:
        if found.get("code") in CODES:
            severity = found.get("severity")
            outcome.findings.append(Finding(
                found["code"], str(found.get("message", "")), str(found.get("kind", "server")),
                Severity(severity) if severity in {s.value for s in Severity} else None,
                found.get("detail") or {}))
    return outcome
