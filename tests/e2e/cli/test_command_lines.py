"""Nothing escapes the edge, whatever the command line: a property-based test (Hypothesis) that builds
command lines from each command's own click parameters (its options, flags, choices and arguments,
found by introspecting the command tree, so that a parameter added later is covered too), with odd
values among them (empty, unicode, control characters, huge and negative numbers, nan, URL-like
words, `--` after an option, and with nothing after it), and runs each in-process. Every run must
end with an exit code of docs/exit-codes.md, and print no Python traceback; a bad value is a usage
error, never a bug (70).

No example reaches anything outside the machine or starts a program: the server is a URL on a
loopback port that refuses connections, or a command that does not exist, given after the generated
words; URL-like values point at loopback (no host name, so no DNS lookup); generated words are never
`--` (so that none is ever a command to run) and never contain `/`, so that a file an option writes
stays in the example's own empty directory, under a home directory of its own (no config, no stored
token is read or removed). A few options that bound how long a run lasts (`watch --duration`,
`load --requests`, the exporter's address) are pinned after the generated words, where click takes
the last value: they are checked with odd values elsewhere (test_user_input.py). Bounded for CI:
EXAMPLES examples per command, no deadline per example, the same examples on every run.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import socket
import tempfile
from collections.abc import Iterator

import click
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpprobe.cli.main import COMMANDS, cli
from mcpprobe.exitcodes import ExitCode

EXAMPLES = 50
DOCUMENTED = {int(code) for code in ExitCode}
# `tap` ends with its server's status (docs/commands/tap.md), and as a shell does when there is none to run:
# 127 for a command not found, 126 for one that cannot run.
TAP_DOCUMENTED = DOCUMENTED | {126, 127}
NO_SUCH_SERVER = "mcpprobe-test-no-such-server-command"


def _leaves() -> list[tuple[tuple[str, ...], click.Command]]:
    """Every command mcpprobe runs, as (its words, the click command): subcommands of a group too."""
    found: list[tuple[tuple[str, ...], click.Command]] = []
    for name, entry in sorted(COMMANDS.items()):
        command = getattr(importlib.import_module(entry.module), entry.attribute)
        if isinstance(command, click.Group):
            found += [((name, sub), cmd) for sub, cmd in sorted(command.commands.items())]
        else:
            found.append(((name,), command))
    return found


LEAVES = _leaves()


@contextlib.contextmanager
def _held_port() -> Iterator[int]:
    """A loopback port bound and not listening: connections to it are refused, and nothing else
    (a parallel test's server) can take it meanwhile."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def _odd_texts(port: int) -> st.SearchStrategy[str]:
    # No "/" outside the fixed URL-like words: a relative file name at most (see the module's docstring).
    url_like = [f"http://127.0.0.1:{port}/mcp", f"https://127.0.0.1:{port}", "http://", "https://[::1",
                f"http://[::1]]:{port}/mcp", "ftp://127.0.0.1/x", f"http://127.0.0.1:{port}/a b",
                "http://127.0.0.1:99999/mcp", "mcp://", f"http://user:pw@127.0.0.1:{port}/"]
    numbers = ["0", "-1", "-0", "1", "0.0001", "1e308", "1e999", "-1e999", "nan", "inf", "-inf",
               "99999999999999999999999999", "-99999999999999999999", "0x10", "1_000", " 1", "1 "]
    odd = ["", " ", "-", "-x", "---", "=", "a=b", "a:=1", "a:={", "@", "@0", "@-1", "@1", "=@", "\x00",
           "\x1b[31m", "\r\n", "\u202e", "é", "名前",
           "\udcff",  # what undecodable bytes in argv become (surrogateescape)
           "🙂" * 3, "a" * 300, "{}", "[]", "null",
           "json", "human", "on", "off", "tools", "auto", "legacy", "modern", "2025-11-25", "K: V", "K=V"]
    free = st.text(alphabet=st.characters(blacklist_characters="/", blacklist_categories=("Cs",)),
                   max_size=12).filter(lambda word: word != "--")
    return st.one_of(st.sampled_from(url_like + numbers + odd), free)


PLAIN = ["1", "2", "0.5", "x", "a=b", "K: V", "json", "tools"]  # values that often pass, so that runs go further


def _value(param: click.Parameter, port: int) -> st.SearchStrategy[str]:
    """A value for one parameter: one it may accept (a choice, a plain word) or an odd one."""
    odd = _odd_texts(port)
    if isinstance(param.type, click.Choice):
        return st.one_of(st.sampled_from([str(c) for c in param.type.choices]), odd)
    if isinstance(param.type, click.types.IntParamType | click.types.FloatParamType):
        return st.one_of(st.sampled_from(["1", "2", "0.5"]), st.integers(-10**30, 10**30).map(str),
                         st.floats().map(repr), odd)
    return st.one_of(st.sampled_from(PLAIN), odd)


def _option_words(option: click.Option, port: int) -> st.SearchStrategy[list[str]]:
    names = [*option.opts, *option.secondary_opts]
    name = st.sampled_from(names)
    if option.is_flag or option.count:
        return name.map(lambda n: [n])
    value = _value(option, port)
    if getattr(option, "_flag_needs_value", False):  # --lint[=MODE]: alone, with a value, or =VALUE
        return st.one_of(name.map(lambda n: [n]), st.tuples(name, value).map(list),
                         st.tuples(st.sampled_from(option.opts), value).map(lambda t: [f"{t[0]}={t[1]}"]))
    words = st.lists(value, min_size=max(option.nargs, 1), max_size=max(option.nargs, 1))
    return st.tuples(name, words).map(lambda t: [t[0], *t[1]])


def _pinned(words: tuple[str, ...], port: int) -> list[str]:
    """Options placed after the generated ones, so that every run ends soon (click keeps the last)."""
    return {
        ("watch",): ["--duration", "0.5"],
        ("load",): ["--requests", "1", "--duration", "0.5"],
        ("exporter",): ["--listen-address", f"127.0.0.1:{port}"],  # taken: the exporter cannot serve
    }.get(words, [])


@st.composite
def _command_line(draw: st.DrawFn, words: tuple[str, ...], command: click.Command, port: int) -> list[str]:
    options = [p for p in command.params if isinstance(p, click.Option) and not p.hidden
               and "--help" not in p.opts]
    chosen = draw(st.lists(st.sampled_from(options), max_size=4)) if options else []
    line: list[str] = []
    for option in chosen:
        line += draw(_option_words(option, port))
    arguments = [p for p in command.params if isinstance(p, click.Argument)]
    for argument in arguments:
        if argument.name == "url":  # the server: ours, after the generated words; sometimes an odd one too
            continue
        count = argument.nargs if argument.nargs > 0 else draw(st.integers(0, 2))
        if argument.nargs == 1 and not argument.required and draw(st.booleans()):
            count = 0
        line += draw(st.lists(_value(argument, port), min_size=count, max_size=count))
    line += _pinned(words, port)
    # The server: where a command takes one (an argument named url, or the words after the others).
    if any(a.name == "url" or a.nargs == -1 for a in arguments):
        target = draw(st.sampled_from(["url", "command", "odd", "dangling", "none"]))
        if "--timeout" in {o for p in command.params for o in getattr(p, "opts", [])} and target != "none":
            line += ["--timeout", "2"]
        if target == "url":
            line.append(f"http://127.0.0.1:{port}/mcp")
        elif target == "odd":
            line.append(draw(_odd_texts(port)))
        elif target == "command":
            line += ["--", NO_SUCH_SERVER]
        elif target == "dangling":
            line.append("--")  # `--` with no command after it
    return [*words, *line]


def _run(args: list[str], home: str) -> tuple[int, str, str, BaseException | None]:
    env = {"HOME": home, "XDG_CONFIG_HOME": os.path.join(home, "config"), "MCPPROBE_CONFIG_DIR": None,
           "DISPLAY": None, "WAYLAND_DISPLAY": None, "MCPPROBE_TRACEBACK": None, "COLUMNS": "120"}
    for proxy in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        env[proxy] = None
    runner = CliRunner()
    old = os.getcwd()
    os.chdir(home)
    try:
        result = runner.invoke(cli, args, env=env, catch_exceptions=True)
    finally:
        os.chdir(old)
    exception = result.exception if not isinstance(result.exception, SystemExit) else None
    return result.exit_code, result.stdout, result.stderr, exception


@pytest.mark.parametrize("words, command", LEAVES, ids=[" ".join(w) for w, _ in LEAVES])
def test_every_command_line_ends_with_a_documented_code_and_no_traceback(words, command):
    with _held_port() as port:

        @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
        @given(args=_command_line(words, command, port))
        def run(args: list[str]) -> None:
            with tempfile.TemporaryDirectory(prefix="mcpprobe-lines-") as home:
                code, out, err, exception = _run(args, home)
            assert exception is None, (args, repr(exception))
            assert code in (TAP_DOCUMENTED if words[0] == "tap" else DOCUMENTED), (args, code, err[-2000:])
            assert code != ExitCode.SOFTWARE, (args, err[-2000:])  # bad input is usage (2), never a bug
            assert "Traceback" not in err and "Traceback" not in out, (args, err[-3000:])

        run()


def test_the_command_tree_is_walked():
    names = {" ".join(words) for words, _ in LEAVES}
    assert {"probe", "check", "call", "watch", "load", "auth login", "auth logout", "docs"} <= names
