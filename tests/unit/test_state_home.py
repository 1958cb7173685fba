"""fxcache's own state has one home: only :mod:`fxcache_core.state` opens a database.

The index of decoded entries, the usage store, the remote read stamps and the check
that a database is fxcache's own (never through a link, never another application's
file) live in ``fxcache_core/state``; a module elsewhere that imported ``sqlite3``
would be a second, unchecked way to open one. The check is ast-based and shown to
fail on a planted import.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("fxcache_core", "fxcache_cli")
STATE = Path("fxcache_core") / "state"


def sqlite_users(root: Path) -> list[str]:
    """Modules under ``root``'s packages, outside ``fxcache_core/state``, that import
    ``sqlite3`` (or ``_sqlite3``) in any form, as ``path:line``."""
    found = []
    for pkg in PACKAGES:
        for path in sorted((root / pkg).rglob("*.py")):
            rel = path.relative_to(root)
            if STATE in rel.parents:
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
                if any(n.split(".")[0] in ("sqlite3", "_sqlite3") for n in names):
                    found.append(f"{rel}:{node.lineno}")
    return found


def test_only_the_state_package_opens_a_database():
    assert (REPO / STATE / "own_db.py").is_file()
    assert sqlite_users(REPO) == []


def test_the_check_fails_on_a_planted_sqlite_import(tmp_path):
    for pkg in PACKAGES:
        (tmp_path / pkg).mkdir()
    (tmp_path / "fxcache_core" / "state").mkdir()
    (tmp_path / "fxcache_core" / "state" / "index.py").write_text("import sqlite3\n")
    (tmp_path / "fxcache_core" / "cache.py").write_text("def f():\n    from sqlite3 import connect\n")
    (tmp_path / "fxcache_cli" / "ls.py").write_text("import json, sqlite3 as db\n")
    assert sqlite_users(tmp_path) == [str(Path("fxcache_core/cache.py")) + ":2",
                                      str(Path("fxcache_cli/ls.py")) + ":1"]
