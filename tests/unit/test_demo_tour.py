"""``make demo`` runs every fxcache command: a command added to the CLI shows in the tour too.

Reads ``demo/tour.py``'s source (no torch, nothing run): the command of each
``fxcache(...)`` call is its first literal argument that is neither an option nor
the value of ``--cache-dir``.
"""

from __future__ import annotations

import ast
from pathlib import Path

from fxcache_cli._commands import commands_dict

TOUR = Path(__file__).resolve().parents[2] / "demo" / "tour.py"


def _toured_commands() -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(TOUR.read_text())):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "fxcache"):
            continue
        words = [a.value if isinstance(a, ast.Constant) else None for a in node.args]
        skip = False
        for word in words:
            if skip or word is None:
                skip = False
                continue
            if word == "--cache-dir":
                skip = True
            elif not word.startswith("-"):
                found.add(word)
                break
    return found


def test_the_tour_runs_every_command_of_the_cli():
    missing = sorted(set(commands_dict) - _toured_commands())
    assert not missing, f"demo/tour.py never runs: {', '.join(missing)}"
