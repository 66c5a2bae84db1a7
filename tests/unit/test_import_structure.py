"""No import circle in codeyard: every import counts, at the top of a module, inside a function or
under TYPE_CHECKING (a circle only for typing still ties the modules together for a reader).

The layers (which package may import which) are import-linter's contracts in pyproject.toml,
checked by `make lint`."""

from __future__ import annotations

import ast
from pathlib import Path

import codeyard

SOURCE = Path(codeyard.__file__).parent
PACKAGE = "codeyard"


def module_files() -> dict[str, tuple[Path, bool]]:
    """Every module by dotted name: its file and whether it is a package's `__init__`."""
    found = {}
    for path in sorted(SOURCE.rglob("*.py")):
        parts = [PACKAGE, *path.relative_to(SOURCE).with_suffix("").parts]
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def imported_names(tree: ast.Module, package: str) -> list[str]:
    """The dotted names TREE imports, relative imports resolved against PACKAGE: for `from X import
    a`, `X.a` (a module or a name in X; the caller keeps the longest module prefix)."""
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            names += [f"{base}.{alias.name}" for alias in node.names]
    return names


def import_graph() -> dict[str, set[str]]:
    """Each codeyard module and the codeyard modules it imports."""
    modules = module_files()

    def module_of(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for name, (path, is_package) in modules.items():
        package = name if is_package else name.rpartition(".")[0]
        targets = {module_of(imported) for imported in imported_names(ast.parse(path.read_text()), package)}
        graph[name] = {target for target in targets if target is not None and target != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
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


def test_the_circle_finder_sees_a_circle_and_a_typing_import():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .x import Y\n"
                     "def f():\n    from ..z import w\n")  # fmt: skip
    assert imported_names(tree, "codeyard.api") == ["typing.TYPE_CHECKING", "codeyard.api.x.Y", "codeyard.z.w"]


def test_no_module_imports_itself_back_through_others():
    graph = import_graph()
    assert len(graph) > 150  # the walk found the package
    assert circles(graph) == []
