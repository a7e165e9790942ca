"""No import circles between Folio's modules, counting every import: at module level, inside
functions, and under TYPE_CHECKING. import-linter sees only whole packages and layers; a circle
between two modules of one room (or one hidden inside a function) is what this test is for."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("app", "ui", "inference", "ingest", "common")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            found[_module_name(path)] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The Folio modules this module imports anywhere in its text."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            targets.add(base)
            # `from app import chat` imports the module app.chat, not just the package.
            targets.update(f"{base}.{alias.name}" for alias in node.names)
    found: set[str] = set()
    for target in targets:
        # `import app.store.db` also runs app and app.store: the nearest module that exists counts.
        while target and target not in modules:
            target = target.rpartition(".")[0]
        if target and target != name:
            found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(graph[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            if children:
                child = children.pop()
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, sorted(graph.get(child, ()))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _is_package_init(name: str, graph: dict[str, set[str]]) -> bool:
    return any(other.startswith(name + ".") for other in graph)


def test_the_checker_finds_a_circle_hidden_in_a_function() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_function_level_imports_are_edges(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from app.errors import FolioError\n    return FolioError\n")
    assert _imports("m", source, {"app": source, "app.errors": source}) == {"app.errors"}


def test_no_import_circles() -> None:
    graph = import_graph()
    # A package's __init__ that re-exports its modules imports them, and they import siblings through
    # the package name: that is a package's own shape, not a circle between rooms.
    for name in graph:
        if _is_package_init(name, graph):
            graph[name] = {t for t in graph[name] if not t.startswith(name + ".")}
    assert len(graph) > 100  # the walk found the tree
    assert circles(graph) == []
