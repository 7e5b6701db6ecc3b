"""What every renderer takes and returns: the interface between the commands and mcpprobe.render.

A renderer (mcpprobe.render.formats.renderer gives the one of a format) is a pure function of what
a command has to show (a `Subject`: a probe's reports, a check's results, a listing, a
call/read/get-prompt outcome, a watch event, the end of a watch, an interruption, the named
servers) and a `View` (columns, colour, a terminal or not, the clock); it returns the text for
stdout (in pieces, so that a document of 100,000 items is never one string; bytes where a blob
goes out decoded) and for stderr, as `Rendered`. `OFFERED` says which formats each command offers: its --format choices.

Standard library only at import time: `--help` loads this module for the --format choices.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from mcpprobe.fleet.config import Discovery
    from mcpprobe.fleet.probe import Report
    from mcpprobe.load.run import LoadOutcome
    from mcpprobe.operations.outcome import InvokeOutcome, Outcome
    from mcpprobe.safety.redact import Redactor
    from mcpprobe.watch import WatchResult


class Format(StrEnum):
    """Every output format. Each command offers the ones that apply to what it prints (OFFERED)."""

    HUMAN = "human"
    JSON = "json"
    JUNIT = "junit"
    OPENMETRICS = "openmetrics"
    HTML = "html"
    SARIF = "sarif"


# The formats each command offers. JUnit, OpenMetrics and HTML report on servers (a health check,
# a test suite, a page per fleet): they apply to `probe` only. What `list`, `call`, `read`,
# `get-prompt` and `watch` print is a listing, a result or a stream of events, for a person or a
# script: human or JSON. A format not offered is a usage error (exit 2) that says so.
PEOPLE_AND_SCRIPTS = (Format.HUMAN, Format.JSON)
OFFERED: dict[str, tuple[Format, ...]] = {
    "probe": tuple(Format),
    "list": PEOPLE_AND_SCRIPTS,
    "call": PEOPLE_AND_SCRIPTS,
    "read": PEOPLE_AND_SCRIPTS,
    "get-prompt": PEOPLE_AND_SCRIPTS,
    "watch": PEOPLE_AND_SCRIPTS,
    "check": (Format.HUMAN, Format.JSON, Format.JUNIT, Format.HTML, Format.SARIF),
    # A load run is a measurement to read, to keep, to scrape and to look at: JUnit's pass/fail per
    # server says nothing of it (its SLOs are the exit code).
    "load": (Format.HUMAN, Format.JSON, Format.OPENMETRICS, Format.HTML),
}


@dataclass(frozen=True)
class Screen:
    """One output stream as seen by a person: how wide, whether in colour."""

    width: int = 160
    color: bool = False


@dataclass(frozen=True)
class View:
    """Where the text will be shown: how wide, whether in colour, the time of the run, and the
    secrets to keep out of it."""

    width: int = 160
    color: bool = False
    terminal: bool = False  # stdout is a terminal: JSON indented for a person, else compact
    now: float | None = None  # seconds since the epoch; None: the time of rendering
    # stderr's width and colour when not stdout's: or how to find them, asked only when something
    # is shown on stderr (a terminal's colours are rich's to tell, and a document loads no rich).
    stderr: Screen | Callable[[], Screen] | None = None
    # The run's secrets, masked in server text before it is cut short or laid out in columns: the
    # writer masks everything once more, but not a secret cut in two. None: no secrets (a test).
    redactor: Redactor | None = None

    @property
    def secrets(self) -> Redactor:
        if self.redactor is None:
            from mcpprobe.safety.redact import Redactor

            return Redactor(())
        return self.redactor

    @property
    def err(self) -> Screen:
        if self.stderr is None:
            return Screen(self.width, self.color)
        return self.stderr if isinstance(self.stderr, Screen) else self.stderr()


# ----- what a renderer renders -----


@dataclass(frozen=True)
class ProbeRun:
    """`probe`: the report of one server, or of each server of a fleet (`many`)."""

    reports: list[Report]
    many: bool = False


@dataclass(frozen=True)
class Checked:
    """`check`: the report of one server, or of each server of a fleet (`many`), whose outcome is a
    `mcpprobe.check.runner.CheckOutcome` with a result per check."""

    reports: list[Report]
    many: bool = False
    every: bool = False  # -v: the human view lists each check on a line of its own, passes and n/a too


@dataclass(frozen=True)
class Listed:
    """`list KIND`: one kind listed to the end (or as far as it went)."""

    outcome: Outcome


@dataclass(frozen=True)
class Invoked:
    """`call`, `read`, `get-prompt` (outcome.command): what was asked, sent and answered.
    `written`: `read -o PATH` wrote the contents, so stdout shows none of them."""

    outcome: InvokeOutcome
    written: bool = False


@dataclass(frozen=True)
class WatchEvent:
    """One event of `watch`, as it happens. For people the first snapshots make a status header:
    `header` is set for them, `header_ends` for the last one."""

    event: dict[str, Any]
    header: bool = False
    header_ends: bool = False


@dataclass(frozen=True)
class WatchEnded:
    """The end of `watch`, after its `end` event: why it stopped, for people, on stderr.
    `result` is None when it was interrupted before it started."""

    result: WatchResult | None


@dataclass(frozen=True)
class Loaded:
    """`load`: what was measured (also when interrupted: outcome.interrupted)."""

    outcome: LoadOutcome
    named: tuple[str, str] | None = None  # -s NAME: the config name and its file, shown instead of the command
    merged: dict[str, Any] | None = None  # load --merge: the merged document (JSON as it is; a row per run)


@dataclass(frozen=True)
class Interrupted:
    """A run interrupted before its operation had anything to show."""

    command: str


@dataclass(frozen=True)
class Servers:
    """`servers` (and `probe --list-servers`): the named servers of the configs and their files."""

    found: Discovery


Subject = ProbeRun | Checked | Listed | Invoked | WatchEvent | WatchEnded | Loaded | Interrupted | Servers


class NotOffered(ValueError):
    """A format asked to render what it does not apply to; `OFFERED` keeps the CLI from asking."""

    def __init__(self, fmt: Format, subject: Subject) -> None:
        super().__init__(f"--format {fmt} does not apply to {type(subject).__name__}")


@dataclass(frozen=True)
class Rendered:
    stdout: Iterable[str | bytes]  # pieces, joined by the writer; bytes go out raw
    stderr: str = ""

    def text(self) -> str:
        """All of stdout at once (tests; a small document); bytes shown as their size."""
        return "".join(p if isinstance(p, str) else f"[{len(p)} bytes]" for p in self.stdout)


class Renderer(Protocol):
    def __call__(self, subject: Subject, view: View) -> Rendered: ...
