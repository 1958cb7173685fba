"""``demo`` is product-facing: it never imports the tests, and its modules form no cycle.

The tests import ``demo`` (the case type, ``build_cache``, ``recorder``); the tests'
corpus lives in ``tests/harness/cases.py``. This reads the sources (no torch): every
import in ``demo/``, at any depth (inside functions too).
"""

from __future__ import annotations

import ast
from pathlib import Path

DEMO = Path(__file__).resolve().parents[2] / "demo"


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, dotted, at any depth."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


def _demo_graph() -> dict[str, set[str]]:
    mods = {f"demo.{p.stem}": p for p in DEMO.glob("*.py") if p.stem != "__init__"}
    return {m: {i for i in _imports(p) if i in mods and i != m} for m, p in mods.items()}


def test_demo_never_imports_the_tests_or_the_tools():
    for path in DEMO.glob("*.py"):
        bad = {i for i in _imports(path) if i.split(".")[0] in ("tests", "tools", "conftest", "helpers")}
        assert not bad, f"{path.name} imports {sorted(bad)}"


def test_demo_modules_import_each_other_in_no_cycle():
    graph = _demo_graph()
    assert "demo.build_cache" in graph and "demo.recorder" in graph

    def reaches(src: str, dst: str, seen: set[str]) -> bool:
        return any(n == dst or (n not in seen and reaches(n, dst, seen | {n})) for n in graph[src])

    cycles = sorted(m for m in graph if reaches(m, m, {m}))
    assert not cycles, f"import cycle through {cycles}"
