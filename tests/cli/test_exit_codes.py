"""Every exit code the CLI gives is named (fxcache_cli._errors), as pip's
``cli/status_codes.py``: no module of fxcache_cli passes an int literal other than 0
to ``typer.Exit``, ``sys.exit`` or ``SystemExit``. No torch, no subprocess."""

from __future__ import annotations

import ast
from pathlib import Path

import fxcache_cli

_EXITS = {"Exit", "exit", "SystemExit"}


def _literal_exits(source: str) -> list[tuple[int, object]]:
    """(line, value) of each exit call whose code is an int literal other than 0."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        if name not in _EXITS:
            continue
        args = list(node.args) + [k.value for k in node.keywords if k.arg in ("code", "status")]
        for a in args:
            for n in ast.walk(a):  # also inside `2 if missing else code`
                if isinstance(n, ast.Constant) and type(n.value) is int and n.value != 0:
                    found.append((node.lineno, n.value))
    return found


def test_no_cli_module_exits_with_a_bare_number():
    bad = {p.name: hits for p in Path(fxcache_cli.__file__).parent.rglob("*.py")
           if (hits := _literal_exits(p.read_text()))}
    assert bad == {}


def test_the_check_finds_a_bare_number():
    """The check is shown to fail: each spelling of an exit with a number is caught."""
    src = ("import sys, typer\n"
           "raise typer.Exit(1)\n"
           "sys.exit(2)\n"
           "raise SystemExit(3)\n"
           "raise typer.Exit(code=2 if x else ok)\n"
           "raise typer.Exit(0)\n"
           "raise typer.Exit(FAILURE)\n")
    assert _literal_exits(src) == [(2, 1), (3, 2), (4, 3), (5, 2)]
