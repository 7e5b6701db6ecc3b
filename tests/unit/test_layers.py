"""The house's rules, read from the code's own imports: the folders are layers, top to bottom; no
module imports one of a higher layer, no two modules import each other in a circle, and click is
imported only under mcpprobe/cli/. Every import counts, the lazy ones inside functions and those
under `if TYPE_CHECKING:` too: a lazy import upward is still a dependency upward."""

from __future__ import annotations

import ast
from pathlib import Path

import mcpprobe

PACKAGE = Path(mcpprobe.__file__).parent

# Top to bottom. A module may import its own layer's modules and any layer below it.
LAYERS: list[tuple[str, ...]] = [
    ("mcpprobe.launch", "mcpprobe.__main__", "mcpprobe.demo"),
    ("mcpprobe.cli",),
    ("mcpprobe.exporter",),
    ("mcpprobe.render",),
    ("mcpprobe.watch", "mcpprobe.fleet", "mcpprobe.tap"),
    ("mcpprobe.check", "mcpprobe.load", "mcpprobe.lint"),
    ("mcpprobe.operations",),
    ("mcpprobe.auth",),
    ("mcpprobe.client",),
    ("mcpprobe.wire",),
    ("mcpprobe.safety",),
    ("mcpprobe.errors", "mcpprobe.exitcodes", "mcpprobe.findings", "mcpprobe.paths", "mcpprobe.signals",
     "mcpprobe.testhooks", "mcpprobe"),
]
# A prefix that stands for itself alone, not for everything under it: the package's own __init__.
EXACT = {"mcpprobe"}

# Modules that import by a name they compute (importlib.import_module of a variable), and where the
# names come from: (module, table, field) read at test time, each of the table's entries one import of
# the module. A new dynamic import fails test_every_dynamic_import_says_where_it_leads until it is here.
DYNAMIC: dict[str, tuple[str, str, str]] = {
    "mcpprobe.check.runner": ("mcpprobe.check.catalogue", "FAMILIES", "modules"),
    "mcpprobe.cli.main": ("mcpprobe.cli.registry", "COMMANDS", "module"),
}
# Functions that import the module names they are given (a warm-up on a thread): a literal module name
# passed to one of them is an import of the caller.
IMPORTING_FUNCTIONS = {"import_module", "preload"}

# Operations and the layers below them return what happened; only the CLI, the renderers' caller,
# writes to the terminal. These still write to stderr themselves (issue #35) and may only shrink.
# The notes channel (safety/notice.py) and the server's own stderr passed through (wire/stdio.py).
KNOWN_WRITERS: list[str] = ["mcpprobe.safety.notice", "mcpprobe.wire.stdio"]
NEVER_WRITE_FROM = LAYERS.index(("mcpprobe.operations",))


# What is left of the house's untangling (issue #23). These lists may only shrink: a new circle, or a new
# long module without its comment, fails the tests below, and so does one of these once it is mended
# without being struck from its list.
KNOWN_CIRCLES: list[list[str]] = []
KNOWN_LONG: list[str] = []


def _module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules(package: Path = PACKAGE) -> dict[str, Path]:
    return {_module_name(p, package): p for p in package.rglob("*.py")}


def _called(node: ast.Call) -> str:
    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _imports(path: Path, known: set[str]) -> set[str]:
    """The mcpprobe modules `path` imports (a `from PACKAGE import NAME` of a module counts as that module),
    by an import statement or by a literal name given to importlib.import_module (or to a function of
    IMPORTING_FUNCTIONS)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in known)
        elif isinstance(node, ast.Call) and _called(node) in IMPORTING_FUNCTIONS:
            found.update(c.value for arg in node.args for c in ast.walk(arg)
                         if isinstance(c, ast.Constant) and isinstance(c.value, str))
    return {name for name in found if name in known}


def _dynamic(name: str) -> set[str]:
    """What a module of DYNAMIC imports by computed names: the `field` of every entry of its table."""
    import importlib

    module, table, field = DYNAMIC[name]
    entries = getattr(importlib.import_module(module), table)
    found: set[str] = set()
    for entry in entries.values() if isinstance(entries, dict) else entries:
        value = getattr(entry, field)  # one module name, or a tuple of them
        found.update((value,) if isinstance(value, str) else value)
    return found


def _graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    modules = _modules(package)
    known = set(modules)
    graph = {name: (_imports(path, known) | (_dynamic(name) if name in DYNAMIC and package == PACKAGE else set()))
             - {name} for name, path in modules.items()}
    # Importing mcpprobe.x.y runs mcpprobe.x/__init__ too; that is not an arrow of the code's own.
    return {name: {t for t in targets if not name.startswith(t + ".")} for name, targets in graph.items()}


def _layer(name: str) -> int | None:
    best = None
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            inside = name == prefix or (prefix not in EXACT and name.startswith(prefix + "."))
            if inside and (best is None or len(prefix) > best[1]):
                best = (index, len(prefix))
    return None if best is None else best[0]


# ----- the rules, each a function of a tree, so that each is also shown failing on a broken one -----


def unplaced(package: Path) -> list[str]:
    return sorted(name for name in _modules(package) if _layer(name) is None)


def upward(package: Path) -> list[str]:
    graph = _graph(package)
    return sorted(f"{a} -> {b}" for a, targets in graph.items() for b in targets
                  if None not in (_layer(a), _layer(b)) and _layer(b) < _layer(a))  # type: ignore[operator]


def circles(package: Path) -> list[list[str]]:
    graph = _graph(package)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph[node]):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return sorted(found)


def click_outside_cli(package: Path) -> list[str]:
    outside = []
    for name, path in _modules(package).items():
        if name.startswith("mcpprobe.cli.") or name == "mcpprobe.cli":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n == "click" or n.startswith("click.") for n in names):
                outside.append(name)
    return sorted(set(outside))


def top_level_files(package: Path) -> int:
    """Every file counts, not only modules: `launch.py`, `testhooks.py`, and a data file too."""
    return len([p for p in package.iterdir() if p.is_file()])


def long_without_reason(package: Path) -> list[str]:
    return sorted(name for name, path in _modules(package).items()
                  if path.read_text(encoding="utf-8").count("\n") > 600
                  and "One room:" not in path.read_text(encoding="utf-8"))


def writers(package: Path) -> list[str]:
    """Modules of the operations layer and below that write to the terminal themselves: print(), sys.stdout
    or sys.stderr (or their __originals__), os.write to 1 or 2."""
    found = set()
    for name, path in _modules(package).items():
        layer = _layer(name)
        if layer is None or layer < NEVER_WRITE_FROM:
            continue
        if any(_writes(node) for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))):
            found.add(name)
    return sorted(found)


def _writes(node: ast.AST) -> bool:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
        return True
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "sys":
        return node.attr in ("stdout", "stderr", "__stdout__", "__stderr__")
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "write"
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "os" and bool(node.args)
            and isinstance(node.args[0], ast.Constant) and node.args[0].value in (1, 2))


def private_imports(package: Path) -> list[str]:
    """`from mcpprobe.x import _name` in a module other than mcpprobe.x (dunders such as __version__ are public)."""
    found = []
    for name, path in _modules(package).items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module != name \
                    and node.module.split(".")[0] == "mcpprobe":
                found += [f"{name} <- {node.module}.{a.name}" for a in node.names
                          if a.name.startswith("_") and not a.name.startswith("__")]
    return sorted(found)


def unexplained_dynamic_imports(package: Path) -> list[str]:
    """Modules that call import_module with a computed name, outside a function of IMPORTING_FUNCTIONS,
    without an entry in DYNAMIC that says where the names come from."""
    found = set()
    for name, path in _modules(package).items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        wrappers = [f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name in IMPORTING_FUNCTIONS]
        inside = {id(n) for f in wrappers for n in ast.walk(f)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and _called(node) == "import_module" and id(node) not in inside
                    and node.args and not any(isinstance(c, ast.Constant) for c in ast.walk(node.args[0]))
                    and name not in DYNAMIC):
                found.add(name)
    return sorted(found)


def budgets_worked_out_again(package: Path) -> list[str]:
    """Modules other than the one that defines `Settings.connect_budget` (the time to connect and
    finish the handshake, never more than --timeout) that work it out again: a `min()` of a
    `connect_timeout` and a `timeout`."""
    found = set()
    for name, path in _modules(package).items():
        if name == "mcpprobe.client.settings":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "min":
                attrs = {n.attr for arg in node.args for n in ast.walk(arg) if isinstance(n, ast.Attribute)}
                if {"connect_timeout", "timeout"} <= attrs:
                    found.add(name)
    return sorted(found)


def configuration_in_wire(package: Path) -> list[str]:
    """Modules of wire/ that define the run's configuration (`Settings`): the wire takes plain values
    from its callers; the configuration lives with its lowest user, the client (issue #35)."""
    found = set()
    for name, path in _modules(package).items():
        if name.startswith("mcpprobe.wire."):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            if any(isinstance(node, ast.ClassDef) and node.name == "Settings" for node in tree.body):
                found.add(name)
    return sorted(found)


# ----- the house as it is -----


def test_every_module_has_a_layer() -> None:
    assert unplaced(PACKAGE) == [], "say where these stand in LAYERS"


def test_no_import_runs_upward() -> None:
    assert upward(PACKAGE) == []


def test_no_circles() -> None:
    assert circles(PACKAGE) == KNOWN_CIRCLES


def test_click_is_imported_only_under_cli() -> None:
    assert click_outside_cli(PACKAGE) == []


def test_the_top_level_holds_at_most_a_dozen_files() -> None:
    assert top_level_files(PACKAGE) <= 12


def test_a_module_over_600_lines_says_why_it_is_one_room() -> None:
    assert long_without_reason(PACKAGE) == KNOWN_LONG


def test_operations_and_below_never_write_to_the_terminal() -> None:
    assert writers(PACKAGE) == KNOWN_WRITERS


def test_no_private_name_is_imported_from_another_module() -> None:
    assert private_imports(PACKAGE) == []


def test_the_connect_budget_is_worked_out_once() -> None:
    assert budgets_worked_out_again(PACKAGE) == []


def test_the_configuration_is_not_in_wire() -> None:
    assert configuration_in_wire(PACKAGE) == []


def test_every_dynamic_import_says_where_it_leads() -> None:
    assert unexplained_dynamic_imports(PACKAGE) == []
    for name in DYNAMIC:  # and the tables it names are there, each entry a module of the package
        assert _dynamic(name) and _dynamic(name) <= set(_modules()), name


# ----- each rule fails on a tree that breaks it -----


BROKEN_TREE = {
    "__init__.py": "",
    "stray.py": "",  # in no layer: only the package's own __init__ is `mcpprobe` itself
    "wire/__init__.py": "",
    "wire/a.py": "import click\nfrom mcpprobe.cli import x\nprint('hello')\n",
    "wire/b.py": "import importlib\nimportlib.import_module('mcpprobe.cli.y')\n"
                 "budget = min(settings.connect_timeout, settings.timeout)\nclass Settings:\n    pass\n",
    "wire/long.py": "x = 1\n" * 601,
    "cli/__init__.py": "",
    "cli/x.py": "import importlib\nfrom mcpprobe.cli.y import _hidden\n\ndef load(name):\n"
                "    return importlib.import_module(name)\n",
    "cli/y.py": "from mcpprobe.cli.x import load\n_hidden = 1\n",
    **{f"top{i}.py": "" for i in range(12)},
}


def test_each_rule_fails_on_a_tree_that_breaks_it(tmp_path: Path) -> None:
    package = tmp_path / "mcpprobe"
    for relative, text in BROKEN_TREE.items():
        (package / relative).parent.mkdir(parents=True, exist_ok=True)
        (package / relative).write_text(text, encoding="utf-8")
    assert "mcpprobe.stray" in unplaced(package) and "mcpprobe.top0" in unplaced(package)
    assert upward(package) == ["mcpprobe.wire.a -> mcpprobe.cli", "mcpprobe.wire.a -> mcpprobe.cli.x",
                               "mcpprobe.wire.b -> mcpprobe.cli.y"]
    assert circles(package) == [["mcpprobe.cli.x", "mcpprobe.cli.y"]]
    assert click_outside_cli(package) == ["mcpprobe.wire.a"]
    assert top_level_files(package) == 14
    assert long_without_reason(package) == ["mcpprobe.wire.long"]
    assert writers(package) == ["mcpprobe.wire.a"]
    assert private_imports(package) == ["mcpprobe.cli.x <- mcpprobe.cli.y._hidden"]
    assert unexplained_dynamic_imports(package) == ["mcpprobe.cli.x"]
    assert budgets_worked_out_again(package) == ["mcpprobe.wire.b"]
    assert configuration_in_wire(package) == ["mcpprobe.wire.b"]
