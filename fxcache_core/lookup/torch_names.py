"""Which of a module's names are torch's: ``torch``, ``F``, ``nn``, ``functional``.

A rule that reads a call as ``torch.nn.functional.pad`` (or ``gelu``, or
``scaled_dot_product_attention``) because the code writes ``F.pad(...)`` must know that
``F`` is that module: ``import torchvision.transforms.functional as F`` gives another
``pad``, with its own order of pads. :func:`torch_roots` maps each of those names to the
module it names where every binding of the name in the function's module is an import of
that one module (``import torch``, ``import torch.nn.functional as F``, ``from torch.nn
import functional``, ``from torch import nn``) and the function binds none of them;
:func:`torch_name` gives a call's full dotted name through them. Reads source text only
(the module's, through :func:`~fxcache_core.functions.trees.module_node`); never
imports or runs it.
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Mapping

from fxcache_core.functions.trees import module_node

__all__ = ["ROOTS", "torch_name", "torch_roots"]

ROOTS: Mapping[str, str] = {
    "torch": "torch",
    "F": "torch.nn.functional",
    "nn": "torch.nn",
    "functional": "torch.nn.functional",
}
"""The names code uses for torch's modules -> the module each must name."""


def torch_roots(file: str, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, str]:
    """The names of :data:`ROOTS` that ``file``'s module binds only by importing the module
    each must name, and ``fn`` does not bind: name -> module. {} where the module's source
    is not readable or imports ``*``."""
    module = module_node(file)
    if module is None:
        return {}
    seen = _module_bindings(module)
    if seen is None:
        return {}
    own = {
        n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
    }
    return {r: m for r, m in ROOTS.items() if seen.get(r) == {m} and r not in own}


_BINDINGS: weakref.WeakKeyDictionary[ast.Module, dict[str, frozenset[str]] | None] = (
    weakref.WeakKeyDictionary()
)
"""Per parsed module (kept while its tree is, :mod:`~fxcache_core.functions.trees`), what
:func:`_module_bindings` found: the keys of one function ask of its module again."""


def _module_bindings(module: ast.Module) -> dict[str, frozenset[str]] | None:
    """Each name ``module`` binds anywhere -> what binds it (the module an import names,
    ``?`` for anything else); None where it imports ``*``. Read once per parsed module."""
    if module in _BINDINGS:
        return _BINDINGS[module]
    got = _BINDINGS[module] = _walk_bindings(module)
    return got


def _walk_bindings(module: ast.Module) -> dict[str, frozenset[str]] | None:
    seen: dict[str, set[str]] = {}
    for n in ast.walk(module):
        if isinstance(n, ast.Import):
            for a in n.names:
                name = a.asname or a.name.split(".")[0]
                seen.setdefault(name, set()).add(a.name if a.asname else name)
        elif isinstance(n, ast.ImportFrom):
            for a in n.names:
                if a.name == "*":
                    return None
                full = f"{n.module}.{a.name}" if n.level == 0 and n.module else "?"
                seen.setdefault(a.asname or a.name, set()).add(full)
        elif isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            seen.setdefault(n.id, set()).add("?")
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            seen.setdefault(n.name, set()).add("?")
        elif isinstance(n, ast.arg):
            seen.setdefault(n.arg, set()).add("?")
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            for g in n.names:
                seen.setdefault(g, set()).add("?")
        elif isinstance(n, ast.ExceptHandler) and n.name:
            seen.setdefault(n.name, set()).add("?")
        elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
            seen.setdefault(n.name, set()).add("?")
    return {k: frozenset(v) for k, v in seen.items()}


def torch_name(func: ast.expr, roots: Mapping[str, str]) -> str | None:
    """``func``'s full dotted name (``torch.nn.functional.pad`` for ``F.pad`` where ``F`` is
    that module in ``roots``, :func:`torch_roots`); None where it is no attribute chain on
    one of ``roots``."""
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name) or not parts or (root := roots.get(func.id)) is None:
        return None
    return ".".join([root, *reversed(parts)])
