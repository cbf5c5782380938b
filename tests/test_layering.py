"""Imports point one way: assistant (app and shared contracts) -> tools -> kb and memory.

Read from the source with ``ast``, so lazy imports inside functions count too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# What tools/ may take from assistant/: the shared contracts, not the app.
SHARED_CONTRACTS = frozenset({"assistant.prompts", "assistant.evidence", "assistant.deps", "assistant.session"})


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


def offending(package: str, forbidden: tuple[str, ...], allowed: frozenset[str] = frozenset()) -> list[str]:
    bad = set()
    for path in sources(package):
        for name in imported_modules(path):
            if name.split(".")[0] in forbidden and not any(name.startswith(a + ".") for a in allowed):
                bad.add(f"{path.relative_to(ROOT)} imports {name}")
    return sorted(bad)


@pytest.mark.parametrize("package", ["kb", "memory"])
def test_the_stores_import_nothing_from_tools_or_the_app(package):
    assert offending(package, ("tools", "assistant")) == []


def test_tools_take_only_the_shared_contracts_from_the_app():
    assert offending("tools", ("assistant",), SHARED_CONTRACTS) == []


def test_only_the_llm_client_imports_openai():
    users = [str(p.relative_to(ROOT)) for pkg in ("assistant", "tools", "kb", "memory") for p in sources(pkg)
             if any(m.split(".")[0] == "openai" for m in imported_modules(p))]
    assert users == ["assistant/llm.py"]


def test_the_check_sees_a_lazy_upward_import(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from tools._registry import tool\n    return tool\n")
    assert offending_in(probe) == ["tools._registry.tool"]


def offending_in(path: Path) -> list[str]:
    return sorted(n for n in imported_modules(path) if n.split(".")[0] in ("tools", "assistant"))
