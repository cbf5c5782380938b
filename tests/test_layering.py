"""Imports point one way: assistant (the app) -> tools -> kb and memory; prompts is a leaf below them all.

Read from the source with ``ast``, so lazy imports inside functions and imports for type checking count too:
an import that only a type checker follows still ties the two modules together.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("assistant", "tools", "kb", "memory", "prompts")


def imported_modules(path: Path) -> set[str]:
    """Every dotted name an import statement brings in ("from a.b import c" gives "a.b.c")."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.update(f"{node.module}.{alias.name}" for alias in node.names)
    return out


def sources(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def offending(package: str, forbidden: tuple[str, ...]) -> list[str]:
    bad = set()
    for path in sources(package):
        for name in imported_modules(path):
            if name.split(".")[0] in forbidden:
                bad.add(f"{path.relative_to(ROOT)} imports {name}")
    return sorted(bad)


@pytest.mark.parametrize("package", ["kb", "memory"])
def test_the_stores_import_nothing_from_tools_or_the_app(package):
    assert offending(package, ("tools", "assistant")) == []


def test_the_tools_import_nothing_from_the_app():
    assert offending("tools", ("assistant",)) == []


def test_the_prompts_import_nothing_of_the_project():
    assert offending("prompts", ("assistant", "tools", "kb", "memory")) == []


def private_tool_imports(path: Path) -> list[str]:
    """Private modules or names of tools/ ("tools._cells", "tools.table_qa._x"): the app uses public ones only."""
    return sorted(n for n in imported_modules(path)
                  if n.split(".")[0] == "tools" and any(part.startswith("_") for part in n.split(".")[1:]))


def test_the_app_uses_only_public_modules_of_the_tools():
    bad = [f"{p.relative_to(ROOT)} imports {n}" for p in sources("assistant") for n in private_tool_imports(p)]
    assert bad == []


def test_only_the_llm_client_imports_openai():
    users = [str(p.relative_to(ROOT)) for pkg in ("assistant", "tools", "kb", "memory") for p in sources(pkg)
             if any(m.split(".")[0] == "openai" for m in imported_modules(p))]
    assert users == ["assistant/llm.py"]


# -- no import loops ----------------------------------------------------------------------------------------
def module_name(path: Path, root: Path = ROOT) -> str:
    rel = path.relative_to(root).with_suffix("")
    return ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)


def import_graph(paths: list[Path], root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the project modules it imports (a name is cut back to the longest module it names)."""
    modules = {module_name(p, root): p for p in paths}

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    return {name: {m for m in map(resolve, imported_modules(path)) if m and m != name}
            for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
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
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_no_import_loops():
    assert cycles(import_graph([p for pkg in PACKAGES for p in sources(pkg)])) == []


def test_the_loop_check_finds_a_loop_through_a_type_checking_import(tmp_path):
    pkg = tmp_path / "tools"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from tools.b import f\n")
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from tools.c import g\n")
    (pkg / "c.py").write_text("def g():\n    from tools.a import f\n")
    (pkg / "d.py").write_text("from tools.a import f\n")  # on the way in, not in the loop
    assert cycles(import_graph(sorted(pkg.glob("*.py")), tmp_path)) == [["tools.a", "tools.b", "tools.c"]]


def test_the_check_sees_a_lazy_private_import(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from tools._cells import TypedTable\n    from tools.lang import read\n    return 1\n")
    assert private_tool_imports(probe) == ["tools._cells.TypedTable"]
