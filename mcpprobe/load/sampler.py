"""What a stdio server spends while it is under load: the resident memory, open file descriptors and
threads of its whole process tree, read from /proc several times a second, and the trend that says a leak.

Sampling does not follow `--interval` (a row of figures per second gave an 8 s soak 8 samples, too
few to judge): it starts every PERIOD seconds, and when KEEP samples are held every other one is
dropped and the period doubles, so the samples stay evenly spaced and bounded whatever the run's length.

The server runs in a session of its own (mcpprobe.wire.stdio), so its tree is every process whose
session id is the server's pid, descendants that were reparented included. Linux only: elsewhere, or
over HTTP (the server is not ours to look at), there are no samples and no leak finding.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from mcpprobe.findings import Finding

PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
# A trend is judged on the measured samples (warm-up excluded) less their first third: a server's own
# warm-up (a JIT, a heap finding its size: server-everything on Node grows 68 to 76 MiB in its first
# seconds under load, then levels off) is not a leak. It is a leak only when all of these hold: enough
# samples; a straight-line fit that explains most of the variation (a garbage collector's sawtooth
# around a plateau does not); growth of at least MIN_GROWTH_BYTES and MIN_GROWTH_SHARE of the start;
# the last third of the samples entirely above the first third; and no levelling off (the second
# half grows at least half as fast as the first).
MIN_SAMPLES = 9
MIN_FIT = 0.8
MIN_GROWTH_BYTES = 16 * 1024 * 1024
MIN_GROWTH_SHARE = 0.2
MIN_FD_GROWTH = 16
PERIOD = 0.25  # seconds between samples at first (a sample reads a few /proc files: about a millisecond)
# Samples held at most; then every other one goes and the period doubles. Odd, so that thinning keeps
# the first sample and the last (the one that filled it), and the next, a doubled period later, is
# as far from it as the kept ones are from each other.
KEEP = 2049


@dataclass
class Sample:
    t: float  # seconds since the load started
    rss: int
    fds: int
    threads: int
    processes: int
    measured: bool  # after the warm-up

    def to_json(self) -> dict[str, Any]:
        return {"t": round(self.t, 3), "rssBytes": self.rss, "fds": self.fds, "threads": self.threads,
                "processes": self.processes, "warmup": not self.measured}


class Samples:
    """The samples of one run, evenly spaced and at most KEEP of them (see the module's docstring)."""

    def __init__(self, period: float = PERIOD) -> None:
        self.period = period
        self.kept: list[Sample] = []

    def add(self, sample: Sample) -> None:
        self.kept.append(sample)
        if len(self.kept) >= KEEP:
            self.kept = self.kept[::2]
            self.period *= 2


def _stat(pid: str) -> tuple[int, int] | None:
    """(session id, threads) of a process, or None when it is gone or unreadable."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            text = handle.read()
    except OSError:
        return None
    fields = text[text.rfind(b")") + 2:].split()
    return int(fields[3]), int(fields[17])  # field 6 (session) and 20 (num_threads), after pid and comm


def _descendants(pid: int) -> list[str] | None:
    """Every descendant of `pid` (its children's children...), from /proc/PID/task/TID/children; None
    when the kernel does not offer those files. mcpprobe is the subreaper of what its servers start
    (mcpprobe.wire.orphans), so a process of a server's session that lost its parent is still ours."""
    found: list[str] = []
    todo = [str(pid)]
    while todo:
        current = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{current}/task/{task}/children", "rb") as handle:
                    children = handle.read().split()
            except FileNotFoundError:
                if current == str(pid):
                    return None  # no children files at all (CONFIG_PROC_CHILDREN off)
                continue
            except OSError:
                continue
            for child in children:
                found.append(child.decode())
                todo.append(child.decode())
    return found


def sample_tree(root: int) -> tuple[int, int, int, int] | None:
    """(rss bytes, fds, threads, processes) of every process in the server's session; None when none.
    The candidates are mcpprobe's own descendants (a few files to read), or, without the kernel's
    children files, every process (hundreds on a busy machine: milliseconds per sample)."""
    rss = fds = threads = processes = 0
    pids = _descendants(os.getpid())
    if pids is None:
        try:
            pids = [name for name in os.listdir("/proc") if name.isdigit()]
        except OSError:
            return None
    for pid in pids:
        stat = _stat(pid)
        if stat is None or stat[0] != root:
            continue
        try:
            with open(f"/proc/{pid}/statm", "rb") as handle:
                rss += int(handle.read().split()[1]) * PAGE
            fds += len(os.listdir(f"/proc/{pid}/fd"))
        except (OSError, IndexError, ValueError):
            continue
        threads += stat[1]
        processes += 1
    return (rss, fds, threads, processes) if processes else None


def available(pid: int | None) -> bool:
    return pid is not None and os.path.isdir(f"/proc/{pid}")


def _fit(points: list[tuple[float, float]]) -> tuple[float, float]:
    """Least squares: (slope per second, r squared)."""
    n = len(points)
    mean_t = sum(t for t, _ in points) / n
    mean_v = sum(v for _, v in points) / n
    stt = sum((t - mean_t) ** 2 for t, _ in points)
    svv = sum((v - mean_v) ** 2 for _, v in points)
    stv = sum((t - mean_t) * (v - mean_v) for t, v in points)
    if stt == 0 or svv == 0:
        return 0.0, 0.0
    slope = stv / stt
    return slope, (stv * stv) / (stt * svv)


def trend(samples: list[Sample], field: str) -> dict[str, Any] | None:
    """The straight-line trend of one field over the measured samples, with the evidence; None when
    there are too few samples."""
    points = [(s.t, float(getattr(s, field))) for s in samples if s.measured]
    if len(points) < MIN_SAMPLES:
        return None
    points = points[len(points) // 3:]
    slope, fit = _fit(points)
    half = len(points) // 2
    early, late = _fit(points[:half + 1])[0], _fit(points[half:])[0]
    third = max(1, len(points) // 3)
    first, last = [v for _, v in points[:third]], [v for _, v in points[-third:]]
    span = points[-1][0] - points[0][0]
    return {"slopePerSecond": round(slope, 3), "fit": round(fit, 3), "first": int(points[0][1]),
            "last": int(points[-1][1]), "growth": round(slope * span), "seconds": round(span, 3),
            "firstThirdMax": int(max(first)), "lastThirdMin": int(min(last)), "samples": len(points),
            "earlySlope": round(early, 3), "lateSlope": round(late, 3)}


def leak_findings(samples: list[Sample], throughput: float) -> list[Finding]:
    """A `server-leak` finding for memory, and one for file descriptors, that grew steadily under load."""
    findings = []
    memory = trend(samples, "rss")
    if memory is not None and _steady(memory, max(MIN_GROWTH_BYTES, MIN_GROWTH_SHARE * memory["first"])):
        per_request = memory["slopePerSecond"] / throughput if throughput else None
        findings.append(Finding(
            "server-leak",
            f"the server's resident memory grew steadily under constant load: {_mib(memory['first'])} to "
            f"{_mib(memory['last'])} in {memory['seconds']:.1f} s ({_mib(memory['slopePerSecond'])}/s"
            + (f", about {per_request / 1024:.1f} KiB per request" if per_request else "")
            + f"; straight-line fit r²={memory['fit']:.2f})",
            kind="server", detail={"resource": "memory", **memory,
                                   **({"bytesPerRequest": round(per_request)} if per_request else {})}))
    fds = trend(samples, "fds")
    if fds is not None and _steady(fds, MIN_FD_GROWTH):
        findings.append(Finding(
            "server-leak",
            f"the server's open file descriptors grew steadily under constant load: {fds['first']} to "
            f"{fds['last']} in {fds['seconds']:.1f} s (r²={fds['fit']:.2f})",
            kind="server", detail={"resource": "fds", **fds}))
    return findings


def _steady(found: dict[str, Any], minimum: float) -> bool:
    return bool(found["fit"] >= MIN_FIT and found["growth"] >= minimum
                and found["lastThirdMin"] > found["firstThirdMax"] and found["lateSlope"] >= found["earlySlope"] / 2)


def _mib(value: float) -> str:
    return f"{value / (1024 * 1024):.1f} MiB"
