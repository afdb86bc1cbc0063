"""The shape of src/aintern, read from its source: no import loop between its modules, none past 500 lines, no SQL
in the layers over the Python API.

Every import counts, wherever it stands (inside a function, under ``TYPE_CHECKING``): a loop that only a
function-level import keeps from failing at start-up is still two modules that each need the other.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "aintern"
MAX_LINES = 500


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path) -> dict[str, set[str]]:
    """Each module of the package under ``root`` and the package's modules it imports (``from pkg import
    name`` is an edge to ``pkg.name`` when that is a module, else to ``pkg``)."""
    files = {module_name(p): p for p in root.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                graph[name].update(a.name for a in node.names if a.name in files)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                for alias in node.names:
                    target = f"{base}.{alias.name}"
                    if target in files:
                        graph[name].add(target)
                    elif base in files:
                        graph[name].add(base)
        graph[name].discard(name)
    return graph


def loops(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
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


def test_the_loop_finder_finds_loops() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"f"}, "f": {"e"}, "g": set()}
    assert sorted(loops(graph)) == [["a", "b", "c"], ["e", "f"]]
    assert loops({"a": {"b"}, "b": set()}) == []


def test_no_module_imports_itself_back() -> None:
    graph = import_graph(SRC)
    assert "aintern.store.sqlite" in graph["aintern.store"], "the graph reads the imports"
    assert loops(graph) == []


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The same graph between the packages (and top-level modules) of aintern: ``aintern.store.sqlite`` counts
    as ``aintern.store``. The package ``aintern`` itself (its ``__init__``, the public API) is left out."""
    packages: dict[str, set[str]] = {}
    for name, targets in graph.items():
        here = ".".join(name.split(".")[:2])
        packages.setdefault(here, set()).update(
            t for t in {".".join(t.split(".")[:2]) for t in targets} if t != here and "aintern" not in (here, t)
        )
    packages.pop("aintern", None)
    return packages


def test_no_package_imports_another_that_imports_it_back() -> None:
    """Layers, not a web: data flows down (scan → chunk → embed → store → retrieve → assemble → answer, the
    workspace and the servers above), so no package needs one that needs it."""
    packages = package_graph(import_graph(SRC))
    assert "aintern.store" in packages["aintern.retrieve"], "the graph reads the imports"
    assert loops(packages) == []


def test_no_module_is_over_500_lines() -> None:
    long = {
        str(p.relative_to(SRC)): n
        for p in SRC.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}, "split these by responsibility"


def test_the_cli_web_and_mcp_layers_run_no_sql() -> None:
    """They stay thin over the Python API: what one of them needs of the database is a function of the store (or
    the workspace), which the others can call too, not a query of its own against the store's connection."""
    sql = re.compile(r"\.conn\b|\bexecute(many|script)?\(|\b(SELECT|INSERT|UPDATE|DELETE)\s")
    found = [
        f"{path.relative_to(SRC)}:{n}: {line.strip()}"
        for layer in ("cli", "web", "mcp")
        for path in sorted((SRC / layer).rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if sql.search(line)
    ]
    assert found == [], "give the store (or the workspace) a function for it"
