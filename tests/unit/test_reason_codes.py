"""Every reason fxcache_core makes carries its code.

``Reason(text, code)`` requires the code: a call that leaves it out raises ``TypeError``
only when that path runs (a traceback instead of a verdict). This reads the source with
``ast`` so that such a call is found before any input reaches it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import fxcache_core

ROOT = Path(fxcache_core.__file__).parent


def _reason_calls_without_code() -> list[str]:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "Reason"
            ):
                continue
            has_code = len(node.args) >= 2 or any(
                k.arg == "code" or k.arg is None for k in node.keywords
            )
            starred = any(isinstance(a, ast.Starred) for a in node.args)
            if not (has_code or starred):
                found.append(f"{path.relative_to(ROOT.parent)}:{node.lineno}")
    return found


def test_every_reason_is_made_with_its_code() -> None:
    assert _reason_calls_without_code() == []


def test_the_check_finds_a_reason_without_a_code(tmp_path, monkeypatch) -> None:
    (tmp_path / "fxcache_core").mkdir()
    (tmp_path / "fxcache_core" / "m.py").write_text(
        'Reason("made", "a-code")\nReason(f"no code {1}")\n'
    )
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path / "fxcache_core")
    assert _reason_calls_without_code() == ["fxcache_core/m.py:2"]
