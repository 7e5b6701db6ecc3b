"""The names `--input NAME=VALUE` may give for the package or remote of a server.json that is used.

mcpprobe.fleet.serverjson looks an input's value up lazily, by several names (`_Values.given`):
a positional argument by its `valueHint`, a named one by its flag with or without its dashes, a
header by its `name`, a `{variable}` by its key in `variables` (of an argument, an environment
variable, a header, or a remote's URL). A name given with --input that none of these is known by
would be ignored, and the server started without the value the user meant to give; so it is a
usage error, raised before any value is read (docs/server-json.md, "Values the user gives").

What an entry knows is read from the file, not from a run: an input with the publisher's `value`
or a `default` is never asked for the user's, and its names are known all the same (a correct
--input for it must not be refused). Environment variables take `-e NAME=VALUE` or the user's
environment, not --input: a name that is one of them gets a message that says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from mcpprobe.safety.sanitize import visible

_PLAIN = re.compile(r"[^\s,']+")  # a name a list of names can show as it is
MOST_SHOWN = 30  # names listed in one message; a file can declare thousands


@dataclass(frozen=True)
class Names:
    """What an entry's inputs are known by: `inputs`, every name --input may give (a named
    argument both as `--flag` and `flag`); `shown`, the same as a message lists them (a named
    argument by its bare flag only); `env`, its environment variables that are not also an input's
    name (they take -e, not --input)."""

    inputs: frozenset[str]
    shown: frozenset[str]
    env: frozenset[str]


def _declared(spec: dict[str, Any]) -> set[str]:
    """The keys of an input's `variables`: every one the file declares, used by a placeholder or not."""
    return set(spec.get("variables") or {})


def entry_names(entry: dict[str, Any], is_package: bool) -> Names:
    """Every name `_Values.given` can be asked for while this package or remote is built (the names
    `_arguments`, `fill` and `_build_remote` of mcpprobe.fleet.serverjson pass it). The entry has
    been checked (serverjson.check): the fields read here have their types."""
    inputs: set[str] = set()
    shown: set[str] = set()
    env: set[str] = set()

    def known(*names: str, show: Iterable[str] | None = None) -> None:
        inputs.update(names)
        shown.update(names if show is None else show)

    if is_package:
        for key in ("runtimeArguments", "packageArguments"):
            for argument in entry.get(key, []):
                if argument["type"] == "positional":
                    known(argument.get("valueHint", ""))
                else:
                    flag = argument["name"]
                    bare = flag.lstrip("-")
                    known(bare, flag, show=[bare or flag])
                known(*_declared(argument))
        for spec in entry.get("environmentVariables", []):
            env.add(spec["name"])
            known(*_declared(spec))
    else:
        known(*_declared(entry))  # the URL's {variables}
        for spec in entry.get("headers", []):
            known(spec["name"], *_declared(spec))
    inputs.discard("")  # an empty valueHint names nothing: `given` skips it
    shown.discard("")
    return Names(frozenset(inputs), frozenset(shown), frozenset(env - inputs))


def listed(names: Iterable[str], most: int = MOST_SHOWN) -> str:
    """Names for a message: sorted, each made inert (they come from the file or the command line),
    quoted when a space, comma or quote would blur where it ends; the first `most` of them."""
    ordered = sorted(names)
    words = [visible(name) if _PLAIN.fullmatch(name) else visible(repr(name)) for name in ordered[:most]]
    return ", ".join(words) + (f" and {len(ordered) - most} more" if len(ordered) > most else "")


def unknown_inputs(doc: dict[str, Any], kind: str, index: int, given: Iterable[str]) -> str | None:
    """Why some of the `given` --input names do not fit `doc[kind][index]` (`kind`: "packages" or
    "remotes"), for a usage error; None when every one is a name the entry knows. The message names
    the unknown names, the names the entry knows, its environment variables, and any other entry
    of the file that knows one of them."""
    names = entry_names(doc[kind][index], kind == "packages")
    unknown = sorted(set(given) - names.inputs)
    if not unknown:
        return None
    what = "package" if kind == "packages" else "remote"
    others = [name for name in unknown if name not in names.env]
    parts = []
    if others:
        known = (f"the names it knows: {listed(names.shown)}" if names.shown
                 else "it has no argument, header or {variable} that takes a value")
        if names.env:
            known += f"; its environment variables, given with -e NAME=VALUE or the environment: {listed(names.env)}"
        parts.append(f"--input {listed(others)}: no input of this {what} is known by "
                     f"{'that name' if len(others) == 1 else 'these names'}; {known}")
        for other_kind, option in (("packages", "--package"), ("remotes", "--remote")):
            for number, entry in enumerate(doc.get(other_kind, [])):
                there = [name for name in others if name in entry_names(entry, other_kind == "packages").inputs]
                if there and (other_kind, number) != (kind, index):
                    parts.append(f"$.{other_kind}[{number}] knows {listed(there)} ({option} {number} chooses it)")
    for name in unknown:
        if name in names.env:
            shown = listed([name])
            parts.append(f"--input {shown}: {shown} is an environment variable of this {what}: give it with "
                         f"-e {shown}=VALUE or set it in the environment")
    return ". ".join(parts)
