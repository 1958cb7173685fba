"""The test suite is one package, imported one way.

Every module under ``tests/`` imports the suite's own modules as ``tests.<name>``
(``from tests.helpers import ...``), never by a bare name that only resolves when
``tests/`` itself is on ``sys.path`` (``from helpers import ...``): one file would
then load as two modules, with two copies of its state.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def _own_names(root: Path) -> set[str]:
    """The names a bare import of the suite's own code would use: its top-level modules
    and packages (``helpers``, ``synth``, ``harness``, ``unit``, ``conftest``, ...)."""
    names = {p.stem for p in root.glob("*.py")}
    names |= {p.name for p in root.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    # tests/torch is the torch tier: a bare ``import torch`` is torch itself, which
    # is what makes a tests/ on sys.path dangerous, not an import of the suite.
    return names - {"__init__", "torch"}


def bare_imports(source: str, own: set[str]) -> list[str]:
    """``module:line`` texts of the imports in ``source`` that name one of ``own`` bare."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            head = node.module.split(".")[0]
            if head in own:
                found.append(f"from {node.module}:{node.lineno}")
        elif isinstance(node, ast.Import):
            found += [f"import {a.name}:{node.lineno}" for a in node.names if a.name.split(".")[0] in own]
    return found


def test_every_test_module_imports_the_suite_as_tests_dot_name():
    own = _own_names(TESTS)
    assert {"helpers", "cli_run", "synth", "harness"} <= own
    bad = {str(p.relative_to(TESTS)): hits for p in sorted(TESTS.rglob("*.py"))
           if "fixtures" not in p.parts and (hits := bare_imports(p.read_text(), own))}
    assert bad == {}


def test_the_check_sees_a_bare_import():
    own = {"helpers", "synth", "harness"}
    assert bare_imports("from helpers import REPO_ROOT\nimport synth\nfrom harness.oracle import x\n", own) == [
        "from helpers:1", "import synth:2", "from harness.oracle:3"]
    assert bare_imports("from tests.helpers import REPO_ROOT\nimport json\n", own) == []
