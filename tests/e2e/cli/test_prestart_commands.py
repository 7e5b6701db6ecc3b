"""The early start of a stdio server for `call`, `read`, `get-prompt` and `watch` (mcpprobe.wire.prestart):
what these commands refuse, they still refuse as before, sending nothing, and no server outlives
the run, whether the refusal comes before connecting (the early server is ended unused) or after
the handshake (the adopted server is ended as any other).

mcpprobe runs as a real process through the console script's entry, which reports at exit what
became of the early server; the fixture servers record every message they receive.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import FIXTURE, PY, ROOT

from tests.e2e.invoke.test_call import run_on_terminal
from tests.unit.wire.test_prestart import LAUNCH, _gone, _history, _mcpprobe

pytestmark = pytest.mark.skipif(not (sys.platform.startswith("linux") and hasattr(os, "pidfd_open")),
                                reason="the early start is Linux only")

SDK = ROOT / "tests" / "fixtures" / "sdk_server.py"


def _methods(record: Path) -> list[str]:
    if not record.exists():
        return []
    return [json.loads(line).get("method", "") for line in record.read_text().splitlines()]


def _fixture(record: Path, scenario: str = "full") -> list[str]:
    return ["-e", f"FIXTURE_RECORD={record}", "--", PY, str(FIXTURE), scenario]


@pytest.mark.parametrize("args", [
    ["call", "echo", "--args", "{not json"],  # --args is read before connecting
    ["call", "echo", "message:=not-json"],  # KEY:=JSON is checked before connecting
    ["read", "fixture://readme", "x=1"],  # VAR=VALUE without --template
])
def test_a_refusal_before_connecting_ends_the_early_server_unused(tmp_path, args):
    record = tmp_path / "record.jsonl"
    done = _mcpprobe(LAUNCH, [*args, *_fixture(record)])
    assert done.returncode == 2, done.stderr
    history = _history(done)
    assert [event for event, _ in history] == ["started", "discarded"], history
    assert _gone(history[0][1])
    assert _methods(record) == []  # not a byte was sent to it


@pytest.mark.parametrize("args", [
    ["get-prompt", "greet", "--elicit", "maybe"],  # not a choice
    ["watch", "--count", "0"],  # not a positive number
    ["call", "echo", "--timeout", "nan"],
    ["call", "echo", "--timeout", "0"],
    ["list", "tools", "--max-pages", "1.5"],
    ["list", "tools", "--format", "junit"],  # a format of probe's only
    ["probe", "--protocol", "2020-1-1"],
    ["probe", "--cwd", "/no/such/directory"],
    ["probe", "--expect", "/no/such/expect.yaml"],
    ["call", "echo", "message"],  # not KEY=VALUE
])
def test_a_command_line_the_parser_refuses_starts_no_server(tmp_path, args):
    """What can be told wrong cheaply before the imports starts nothing: with `npx -y` a typo in
    --timeout would otherwise start a package download for a run that ends in a usage error."""
    record = tmp_path / "record.jsonl"
    done = _mcpprobe(LAUNCH, [*args, *_fixture(record)])
    assert done.returncode == 2, done.stderr
    assert _history(done) == [], done.stderr
    assert not record.exists()


@pytest.mark.parametrize("args, scenario, never", [
    (["call", "nosuch"], "full", "tools/call"),  # not among the tools
    (["call", "echo", "message=hi"], "none", "tools/call"),  # tools not declared: exit 3, sending nothing
    (["read", "fixture://nosuch"], "full", "resources/read"),
    (["read", "fixture://readme"], "tools-only", "resources/read"),  # resources not declared
    (["get-prompt", "greet"], "full", "prompts/get"),  # a required argument missing
    (["get-prompt", "summary"], "tools-only", "prompts/get"),  # prompts not declared
])
def test_a_refusal_after_the_handshake_still_sends_nothing(tmp_path, args, scenario, never):
    record = tmp_path / "record.jsonl"
    done = _mcpprobe(LAUNCH, [*args, *_fixture(record, scenario)])
    assert done.returncode == 3, done.stderr
    history = _history(done)
    assert [event for event, _ in history] == ["started", "adopted"], history
    assert _gone(history[0][1])
    methods = _methods(record)
    assert "initialize" in methods and never not in methods, methods
    if scenario != "full":  # an undeclared capability: not even its list was asked for
        assert not any(m.endswith("/list") for m in methods), methods


@pytest.mark.parametrize("args, sent", [
    (["call", "echo", "message=hi", "--json", "--yes"], "tools/call"),
    (["read", "fixture://readme", "--json"], "resources/read"),
    (["get-prompt", "greet", "name=Ada", "--json"], "prompts/get"),
    (["watch", "--json", "--duration", "0.5"], "tools/list"),
])
def test_each_command_adopts_the_early_server(tmp_path, args, sent):
    record = tmp_path / "record.jsonl"
    done = _mcpprobe(LAUNCH, [*args, *_fixture(record)])
    assert done.returncode == 0, done.stderr
    history = _history(done)
    assert [event for event, _ in history] == ["started", "adopted"], history
    assert _gone(history[0][1])
    assert sent in _methods(record)


def test_a_tool_not_confirmed_on_a_terminal_is_not_called(tmp_path):
    """The question is asked after the handshake, as before; answered no, nothing is called."""
    record = tmp_path / "record.jsonl"
    argv = [PY, "-c", LAUNCH, "call", "delete_everything", "--env", f"SDK_FIXTURE_RECORD={record}", "--",
            PY, str(SDK)]
    code, text = run_on_terminal(argv, "n", env={"PYTHONPATH": str(ROOT)})
    assert code == 3, text
    assert "not confirmed" in text
    line = next(x for x in text.splitlines() if x.startswith("PRESTART "))
    history = eval(line.removeprefix("PRESTART ").strip())  # noqa: S307 - our own repr of a list of tuples
    assert [event for event, _ in history] == ["started", "adopted"], history
    assert _gone(history[0][1])
    entries = [json.loads(x) for x in record.read_text().splitlines()]
    assert "tools/list" in [e.get("method") for e in entries]
    assert "tools/call" not in [e.get("method") for e in entries]


def test_the_early_starts_checks_are_the_parsers_own_choices():
    """prestart imports nothing to stay ahead of the server's boot, so it keeps its own copy of the
    choices it checks: they must be the parser's, or a valid line would start nothing early (slower)
    and an invalid one would start a server for nothing."""
    import click

    from mcpprobe.cli.main import cli
    from mcpprobe.render.interface import OFFERED
    from mcpprobe.wire import prestart

    assert {name: tuple(f.value for f in formats) for name, formats in OFFERED.items()
            if name in prestart.COMMANDS} == {
        name: prestart.FORMATS.get(name, ("human", "json")) for name in OFFERED if name in prestart.COMMANDS}
    context = click.Context(cli)
    for name in prestart.COMMANDS:
        command = cli.get_command(context, name)
        assert command is not None
        for param in command.params:
            for flag in param.opts:
                if flag in prestart.CHOICES and isinstance(param.type, click.Choice):
                    if flag == "--transport":  # only a stdio server starts early: a subset on purpose
                        assert set(prestart.CHOICES[flag]) <= set(param.type.choices)
                    else:
                        assert tuple(param.type.choices) == prestart.CHOICES[flag], (name, flag)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_the_command_reads_its_input_ends_the_run_and_the_early_server(tmp_path, sig):
    """`call --args -` reads stdin after the imports and before the server is taken: a signal then
    interrupts the read (it was held back until end of input), exit 130, the early server ended."""
    record = tmp_path / "record.jsonl"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("_MCPPROBE_COMPLETE", None)
    proc = subprocess.Popen([PY, "-c", LAUNCH, "call", "echo", "--args", "-", *_fixture(record)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, cwd=ROOT)
    try:
        # Once the early server runs, its signals are held back: during the imports (then the held
        # one interrupts when they are over) or in the read of stdin. The old code waited either way.
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
        deadline = time.monotonic() + 30
        while not children.read_text().strip() and time.monotonic() < deadline:
            time.sleep(0.02)
        proc.send_signal(sig)
        proc.wait(timeout=30)  # stdin still open: end of input must not be what ends it
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, stderr
    history = _history(subprocess.CompletedProcess([], proc.returncode, "", stderr))
    assert [event for event, _ in history] == ["started", "discarded"], history
    assert _gone(history[0][1])
    assert _methods(record) == []


def test_the_early_starts_options_are_the_parsers_own():
    """prestart reads argv with tables of its own (no import of click before the server starts): every
    option it lets through must be one the command's parser has, of the same kind (a flag, or an option
    taking one value), and launch's list of early commands must be prestart's. A table that drifted
    from the parser would start a server for a line the parser then refuses, or take a flag's next
    word as its value."""
    import click

    from mcpprobe import launch
    from mcpprobe.cli.main import cli
    from mcpprobe.wire import prestart

    assert set(launch._EARLY) == set(prestart.COMMANDS)
    context = click.Context(cli)
    for name, (flags, valued, _least, _most) in prestart.COMMANDS.items():
        command = cli.get_command(context, name)
        assert command is not None
        kinds: dict[str, bool] = {}  # option spelling -> whether it takes a value
        for param in command.params:
            if isinstance(param, click.Option):
                for spelling in (*param.opts, *param.secondary_opts):
                    kinds[spelling] = not (param.is_flag or param.count)
        for spelling in prestart.FLAGS | flags:
            assert kinds.get(spelling) is False, (name, spelling, "a flag prestart knows is not the parser's flag")
        for spelling in prestart.VALUED | valued:
            assert kinds.get(spelling) is True, (name, spelling, "prestart takes a value the parser does not")
