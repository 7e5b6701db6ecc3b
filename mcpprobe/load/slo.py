"""Service level objectives: `--slo 'p99<50ms'`, `--slo 'errors<0.1%'`, `--slo 'throughput>500/s'`.

An objective is METRIC OP VALUE: a latency (min, p50, p90, p95, p99, p99.9, max, mean) against a
duration (us, ms, s), `errors` against a percentage of the requests or a count, `throughput`
against requests per second (`/s`). OP is <, <=, > or >=. Parsed before anything is started; a
bad one is a usage error. Judged on the overall figures of the measured window (warm-up excluded).
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

LATENCIES = {"min": 0.0, "p50": 0.50, "p90": 0.90, "p95": 0.95, "p99": 0.99, "p99.9": 0.999, "max": 1.0,
             "mean": -1.0}
UNITS = {"us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0}
OPERATORS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le, ">=": operator.ge, "<": operator.lt, ">": operator.gt}
_SYNTAX = re.compile(r"^\s*(?P<metric>[a-z][a-z0-9.]*)\s*(?P<op><=|>=|<|>)\s*(?P<value>[0-9]+(?:\.[0-9]+)?)"
                     r"\s*(?P<unit>us|µs|ms|s|%|/s)?\s*$")


class SloSyntax(ValueError):
    pass


@dataclass(frozen=True)
class Slo:
    text: str
    metric: str  # a LATENCIES key, "errors" or "throughput"
    op: str
    value: float  # seconds for a latency, a fraction (percent) or count for errors, per second for throughput
    percent: bool = False  # errors as a share of the requests

    def measured(self, figures: dict[str, Any]) -> float | None:
        """The figure this objective is about, in its own unit, from an overall figures object."""
        if self.metric == "throughput":
            return figures.get("throughput")
        if self.metric == "errors":
            requests, errors = figures.get("requests", 0), figures.get("errors", 0)
            if not self.percent:
                return float(errors)
            return 100.0 * errors / requests if requests else None
        key = {"p99.9": "p999"}.get(self.metric, self.metric)
        micros = figures.get("latencyUs", {}).get(key)
        return None if micros is None else micros / 1e6

    def judge(self, figures: dict[str, Any]) -> dict[str, Any]:
        value = self.measured(figures)
        met = value is not None and OPERATORS[self.op](value, self.value)
        return {"slo": self.text, "met": met, "measured": _rounded(value), "limit": _rounded(self.value),
                "unit": self.unit}

    @property
    def unit(self) -> str:
        if self.metric == "throughput":
            return "/s"
        if self.metric == "errors":
            return "%" if self.percent else "requests"
        return "s"


def _rounded(value: float | None) -> float | None:
    return None if value is None else float(f"{value:.6g}")


def parse(text: str) -> Slo:
    match = _SYNTAX.match(text)
    if match is None:
        raise SloSyntax(f"{text!r} is not METRIC<VALUE: write for example 'p99<50ms', 'errors<0.1%' or "
                        f"'throughput>500/s'")
    metric, op, unit = match["metric"], match["op"], match["unit"]
    value = float(match["value"])
    if not math.isfinite(value):
        raise SloSyntax(f"{text!r}: the value is not a number")
    if metric in LATENCIES:
        if unit not in UNITS:
            raise SloSyntax(f"{text!r}: a latency needs a unit: us, ms or s (e.g. '{metric}{op}50ms')")
        return Slo(text, metric, op, value * UNITS[unit])
    if metric == "errors":
        if unit not in (None, "%"):
            raise SloSyntax(f"{text!r}: errors are a percentage ('errors<0.1%') or a count ('errors<=5')")
        return Slo(text, metric, op, value, percent=unit == "%")
    if metric == "throughput":
        if unit not in (None, "/s"):
            raise SloSyntax(f"{text!r}: throughput is in requests per second ('throughput>500/s')")
        return Slo(text, metric, op, value)
    known = ", ".join([*LATENCIES, "errors", "throughput"])
    raise SloSyntax(f"{text!r}: unknown metric {metric!r} (known: {known})")
