"""Files and values the user gives mcpprobe (`--args @FILE`, `KEY:=JSON`, configs, `--expect`,
`--baseline`, numbers), read into usage errors (exit 2) with one line that names the input, never
a traceback: a file that is not UTF-8, JSON or YAML nested deeper than can be parsed or used, a
number that is not a number (`nan`).

Standard library only: option callbacks use it, so `--help` loads it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from mcpprobe.errors import UsageProblem

# Deeper JSON than this is refused: nothing a person writes by hand, or a server publishes in a
# catalog, comes near it, and everything below (schema validation, comparing snapshots,
# encoding the request) may recurse once per level.
MAX_DEPTH = 200
# YAML's aliases let a few hundred bytes stand for billions of values ("billion laughs"): PyYAML
# shares the aliased objects, so memory stays small, but everything that walks the result (the
# depth check, `${...}` expansion, comparing snapshots) walks it expanded. A file is refused when its
# expanded tree has more nodes than this: a 2,000-server fleet written out by hand has ~40,000.
MAX_YAML_NODES = 200_000
# A file the user names (`--args @FILE`, a config, an expectation, a baseline) is read up to this:
# the largest message mcpprobe sends by default (--max-message-size) is 64 MiB.
MAX_FILE_BYTES = 64 * 1024 * 1024


def read_text(path: str, what: str, *, error: type[UsageProblem] = UsageProblem, encoding: str = "utf-8",
              limit: int = MAX_FILE_BYTES) -> str:
    """The text of a file the user named; `what` prefixes the message (`--args @f.json`). At most
    `limit` bytes: a file that goes on (`/dev/zero`, a pipe that never ends) is refused once it
    has given more, not read until memory runs out."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise error(f"{what}: cannot read: {exc.strerror or exc}") from None
    except MemoryError:
        raise error(f"{what}: too large to read") from None
    if len(data) > limit:
        raise error(f"{what}: larger than {limit // (1024 * 1024)} MiB; nothing mcpprobe reads is that large") from None
    return decode(data, what, error=error, encoding=encoding)


def decode(data: bytes, what: str, *, error: type[UsageProblem] = UsageProblem, encoding: str = "utf-8") -> str:
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise error(f"{what}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None


def loads(text: str, what: str, *, error: type[UsageProblem] = UsageProblem,
          parse: Callable[[str], Any] = json.loads) -> Any:
    """JSON from the user (parsed by `parse`): nested deeper than MAX_DEPTH is a usage error.
    json.JSONDecodeError, and whatever else `parse` raises, is left to the caller to word."""
    try:
        value = parse(text)
    except RecursionError:
        raise too_deep(what, error) from None
    check_depth(value, what, error=error)
    return value


def load_yaml(text: str, what: str, *, error: type[UsageProblem] = UsageProblem) -> Any:
    """YAML from the user, within MAX_DEPTH and MAX_YAML_NODES counted with every alias expanded
    (measured on the composed nodes, once per node, before anything is built). yaml.YAMLError is
    left to the caller to word, with its line."""
    import yaml

    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        check_yaml_node(node, what, error=error)
        return loader.construct_document(node)
    except RecursionError:
        raise too_deep(what, error) from None
    finally:
        loader.dispose()


def check_yaml_node(root: Any, what: str, *, error: type[UsageProblem] = UsageProblem) -> None:
    """Refuse a composed YAML document that is recursive (`&a [*a]`), deeper than MAX_DEPTH or
    larger than MAX_YAML_NODES once its aliases are expanded. Each node is measured once
    (an alias is the same node object), so an alias bomb costs what its text costs."""
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        children = _yaml_children(node)
        if children_done:
            open_nodes.discard(key)
            size[key] = 1 + sum(size[id(c)] for c in children)
            depth[key] = 1 + max((depth[id(c)] for c in children), default=0)
            if depth[key] > MAX_DEPTH:
                raise too_deep(what, error)
            if size[key] > MAX_YAML_NODES:
                raise error(f"{what}: more than {MAX_YAML_NODES:,} values once its YAML aliases are expanded")
            continue
        if key in size:
            continue
        if key in open_nodes:
            raise error(f"{what}: a YAML alias refers to a value that contains it")
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in size)


def _yaml_children(node: Any) -> list[Any]:
    value = getattr(node, "value", None)
    if not isinstance(value, list):
        return []  # a scalar
    return [part for item in value for part in (item if isinstance(item, tuple) else (item,))]


def too_deep(what: str, error: type[UsageProblem] = UsageProblem) -> UsageProblem:
    return error(f"{what}: nested more than {MAX_DEPTH} levels deep")


def check_depth(value: Any, what: str, *, error: type[UsageProblem] = UsageProblem) -> None:
    """Refuse a value nested deeper than MAX_DEPTH (measured without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > MAX_DEPTH:
            raise too_deep(what, error)
        stack.extend((child, depth + 1) for child in children)


def finite(value: float | None, what: str) -> float | None:
    """A number from the command line that must be a real number: not nan, not infinite."""
    if value is not None and not math.isfinite(value):
        raise UsageProblem(f"{what}: must be a finite number, not {value!r}")
    return value
