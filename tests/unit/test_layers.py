"""The package's shape is checked, not hoped for.

- ``make lint`` runs import-linter's contracts from pyproject.toml (``[tool.importlinter]``):
  the layers (data flows one way, the CLI on top) and no import cycle at any depth,
  imports inside functions included. Here the same contracts are run on the tree, and
  on a copy with one upward import planted, to show the check can fail.
- Core speaks in parameters, never in CLI flags: no string in ``fxcache_core`` but a
  docstring names one (``--shapes``); messages name parameters through
  :func:`fxcache_core.errors.param` and the CLI renders its flags.
- No module of ``fxcache_core`` or ``fxcache_cli`` is over 600 lines, and
  ``fxcache_core`` keeps at most 6 modules at its top.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
while not (REPO / "pyproject.toml").is_file():  # tests/<tier>/ or tests/
    REPO = REPO.parent
PACKAGES = ("fxcache_core", "fxcache_cli")


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("lint-imports")
    if not exe.exists():
        pytest.skip("import-linter is not installed (pip install -e '.[dev]')")
    return subprocess.run([str(exe), "--no-cache"], cwd=root, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(root)}, timeout=120)


def _copy_tree(dst: Path) -> Path:
    shutil.copy2(REPO / "pyproject.toml", dst / "pyproject.toml")
    for pkg in PACKAGES:
        shutil.copytree(REPO / pkg, dst / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def test_the_import_contracts_hold():
    proc = _lint_imports(REPO)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "0 broken" in proc.stdout


@pytest.mark.parametrize(("module", "planted", "contract"), [
    # an upward import hidden inside a function: cache/ is below lookup/
    ("fxcache_core/cache/keys.py", "def _planted():\n    from fxcache_core.lookup import match  # noqa\n",
     "Layers"),
    # a cycle between two sibling modules of one layer
    ("fxcache_core/guards/in_force.py", "def _planted():\n    from fxcache_core.guards import key_guards  # noqa\n",
     None),
])
def test_an_upward_import_or_a_cycle_fails_the_lint(tmp_path, module, planted, contract):
    root = _copy_tree(tmp_path)
    target = root / module
    if contract is None:  # make the cycle: key_guards must import in_force back
        kg = root / "fxcache_core/guards/key_guards.py"
        kg.write_text(kg.read_text() + "\n\ndef _planted_back():\n    from fxcache_core.guards import in_force  # noqa\n")
    target.write_text(target.read_text() + "\n\n" + planted)
    proc = _lint_imports(root)
    assert proc.returncode != 0, proc.stdout[-3000:]
    assert "BROKEN" in proc.stdout
    if contract:
        assert re.search(contract + r".*BROKEN", proc.stdout, re.S)


def _non_doc_strings(tree: ast.AST):
    docs = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docs.add(id(body[0].value))
        # attribute docstrings: a bare string right after an assignment
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list):
                for a, b in zip(stmts, stmts[1:], strict=False):
                    if isinstance(a, (ast.Assign, ast.AnnAssign)) and isinstance(b, ast.Expr) \
                            and isinstance(b.value, ast.Constant) and isinstance(b.value.value, str):
                        docs.add(id(b.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            yield node


_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]*")


def test_no_string_in_core_names_a_cli_flag():
    found = []
    for path in sorted((REPO / "fxcache_core").rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in _non_doc_strings(tree):
            for flag in _FLAG.findall(node.value):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: {flag}")
    assert not found, "core names CLI flags (use errors.param):\n" + "\n".join(found)


def test_the_flag_check_finds_a_flag():
    tree = ast.parse('"""doc --shapes"""\nX = "give --shapes"\nY = f"pass {1} --sym"\n')
    flags = [f for n in _non_doc_strings(tree) for f in _FLAG.findall(n.value)]
    assert flags == ["--shapes", "--sym"]


def test_no_module_is_over_600_lines_and_core_has_few_top_modules():
    long = [f"{p.relative_to(REPO)}: {n}" for pkg in PACKAGES for p in (REPO / pkg).rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 600]
    assert not long, long
    top = sorted(p.name for p in (REPO / "fxcache_core").glob("*.py") if p.name != "__init__.py")
    subpackages = [p.name for p in (REPO / "fxcache_core").iterdir() if (p / "__init__.py").is_file()]
    assert len(top) <= 6, top
    assert len(subpackages) >= 5, subpackages
