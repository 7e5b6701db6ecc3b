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
    ("mcpprobe.errors", "mcpprobe.exitcodes", "mcpprobe.findings", "mcpprobe.paths", "mcpprobe.testhooks",
     "mcpprobe"),
]


# What is left of the house's untangling (issue #23). These lists may only shrink: a new circle, or a new
# long module without its comment, fails the tests below, and so does one of these once it is mended
# without being struck from its list.
KNOWN_CIRCLES: list[list[str]] = []
KNOWN_LONG: list[str] = []


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _imports(path: Path, known: set[str]) -> set[str]:
    """The mcpprobe modules `path` imports (a `from PACKAGE import NAME` of a module counts as that module)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in known)
    return {name for name in found if name in known}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    graph = {name: _imports(path, known) - {name} for name, path in modules.items()}
    # Importing mcpprobe.x.y runs mcpprobe.x/__init__ too; that is not an arrow of the code's own.
    return {name: {t for t in targets if not name.startswith(t + ".")} for name, targets in graph.items()}


def _layer(name: str) -> int:
    best = None
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            inside = name == prefix or name.startswith(prefix + ".")
            if inside and (best is None or len(prefix) > best[1]):
                best = (index, len(prefix))
    assert best is not None, f"{name} is in no layer of this test: say where it stands"
    return best[0]


def test_every_module_has_a_layer() -> None:
    for name in _modules():
        _layer(name)


def test_no_import_runs_upward() -> None:
    upward = sorted(f"{a} -> {b}" for a, targets in _graph().items() for b in targets if _layer(b) < _layer(a))
    assert upward == []


def test_no_circles() -> None:
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

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
                circles.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    assert sorted(circles) == KNOWN_CIRCLES


def test_click_is_imported_only_under_cli() -> None:
    outside = []
    for name, path in _modules().items():
        if name.startswith("mcpprobe.cli.") or name == "mcpprobe.cli":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n == "click" or n.startswith("click.") for n in names):
                outside.append(name)
    assert sorted(set(outside)) == []


def test_the_top_level_holds_at_most_a_dozen_files() -> None:
    """Every file counts, not only modules: `launch.py`, `testhooks.py`, and a data file too."""
    assert len([p for p in PACKAGE.iterdir() if p.is_file()]) <= 12


def test_a_module_over_600_lines_says_why_it_is_one_room() -> None:
    long = []
    for name, path in _modules().items():
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > 600 and "One room:" not in text:
            long.append(name)
    assert sorted(long) == KNOWN_LONG
