"""Tests the branch rule reads besides an ``if`` statement on a parameter.

:func:`~fxcache_core.functions.params.frame_reads` reads two more kinds of test as a
:class:`~fxcache_core.functions.params.BranchTest`:

* a conditional expression that is the whole value of a one-line statement, alone on its
  line (``return y + x if residual else y``, ``a = F.gelu(y) if act == 'gelu' else y``):
  :func:`cond_statement` finds it, :func:`bare_side` says which side makes no op at all (a
  bare name or constant). Its two sides share the line, so a key's graph tells them apart
  only where one side is bare: an op traced from the line is the other side's.
* a module's attribute tested in a method (``if self.use_act:``, ``... if self.training
  else ...``): :func:`self_attrs_tested` rewrites the test so that ``self.use_act`` reads as
  a name of its own, and :func:`attr_reads` says where else the method reads each one, and
  whether it may change it (a store to ``self.use_act`` in the method, or in any method of
  the file but ``__init__``, ``setattr``/``delattr``, ``self`` rebound).

:func:`submodules` and :func:`nn_layers` say which attributes are submodules that
``__init__`` makes (and which of them are stock ``torch.nn`` layers), for the rules that ask
whether a call of one runs alike in two traces.

Reads the source with ``ast`` only; never runs it. Never imports torch.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterable

__all__ = ["attr_reads", "bare_side", "cond_statement", "lines_alone", "loaded_attrs", "nn_layers", "self_attrs_tested",
           "stored_in_file", "submodules"]


def lines_alone(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[int]:
    """The lines of ``fn``'s body on which exactly one statement starts and no other
    statement (a simple one spanning lines, a compound one's header) lies: for
    :func:`cond_statement`."""
    starts: dict[int, int] = {}
    spans: list[tuple[int, int]] = []
    for n in ast.walk(fn):
        if isinstance(n, ast.stmt) and n is not fn:
            starts[n.lineno] = starts.get(n.lineno, 0) + 1
            if not hasattr(n, "body") and (n.end_lineno or n.lineno) > n.lineno:
                spans.append((n.lineno, n.end_lineno or n.lineno))
    return {n for n, c in starts.items() if c == 1 and not any(a < n <= b for a, b in spans)}


def cond_statement(s: ast.stmt, alone: set[int]) -> ast.IfExp | None:
    """The conditional expression that is the whole value of ``s``: a ``return``, or an
    assignment to names, on one line that holds no other statement (``alone``); None
    otherwise."""
    if (s.end_lineno or s.lineno) != s.lineno or s.lineno not in alone:
        return None
    if isinstance(s, ast.Return):
        v = s.value
    elif isinstance(s, ast.Assign) and all(isinstance(t, ast.Name) for t in s.targets):
        v = s.value
    elif isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name):
        v = s.value
    else:
        return None
    return v if isinstance(v, ast.IfExp) else None


def _bare(e: ast.expr) -> bool:
    return isinstance(e, (ast.Name, ast.Constant))


def bare_side(e: ast.IfExp) -> bool | None:
    """True where the body of ``e`` is a bare name or constant (no op) and the ``else`` is
    not, False the other way round, None where both or neither are."""
    b, o = _bare(e.body), _bare(e.orelse)
    return None if b == o else b


def _self_attr(n: ast.AST) -> str | None:
    """``self.X`` -> ``self.X``; None for anything else."""
    if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self":
        return f"self.{n.attr}"
    return None


class _AsNames(ast.NodeTransformer):
    def __init__(self) -> None:
        self.seen: list[ast.Attribute] = []

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        name = _self_attr(node)
        if name is None:
            return self.generic_visit(node)
        self.seen.append(node)
        return ast.copy_location(ast.Name(id=name, ctx=ast.Load()), node)


def self_attrs_tested(test: ast.expr) -> tuple[ast.expr, list[ast.Attribute]]:
    """``test`` with each ``self.X`` read as a name ``self.X`` (a copy; ``test`` is left
    as it is), and the attribute nodes so read."""
    t = _AsNames()
    out = t.visit(copy.deepcopy(test))
    originals = [n for n in ast.walk(test) if _self_attr(n) is not None]
    return out, originals if t.seen else []


def loaded_attrs(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The attributes ``self.X`` that method ``fn``'s body reads."""
    return {name for s in fn.body for n in ast.walk(s)
            if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load) and (name := _self_attr(n)) is not None}


def stored_in_file(module: ast.Module | None) -> frozenset[str] | None:
    """The attributes ``self.X`` that some method of ``module`` other than ``__init__``
    stores or deletes; None where the module cannot be read (any may be)."""
    if module is None:
        return None
    out: set[str] = set()
    for fn in ast.walk(module):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.name == "__init__":
            continue
        for n in ast.walk(fn):
            if isinstance(n, ast.Attribute) and isinstance(n.ctx, (ast.Store, ast.Del)) \
                    and (name := _self_attr(n)) is not None:
                out.add(name)
    return frozenset(out)


def submodules(module: ast.Module | None) -> frozenset[str]:
    """The attributes ``self.X`` that an ``__init__`` of ``module`` sets to what a call
    makes (``self.lin = torch.nn.Linear(8, 8)``) from arguments that do not name ``self``,
    that no other method stores, and that name no ``def`` of the file: a submodule, whose
    code reads its own state, not the module's (none where the file cannot be read)."""
    if module is None:
        return frozenset()
    defs = {n.name for n in ast.walk(module) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    made: set[str] = set()
    for fn in ast.walk(module):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.name != "__init__":
            continue
        for n in ast.walk(fn):
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and (name := _self_attr(n.targets[0])) \
                    and isinstance(n.value, ast.Call) \
                    and not any(isinstance(x, ast.Name) and x.id == "self" for x in ast.walk(n.value)):
                made.add(name)
    return frozenset(m for m in made if m.removeprefix("self.") not in defs) - (stored_in_file(module) or frozenset())


def nn_layers(module: ast.Module | None) -> dict[str, str]:
    """The submodules (:func:`submodules`) that an ``__init__`` of ``module`` makes as a stock
    layer, ``torch.nn.X(...)`` or ``nn.X(...)`` (where the file binds ``nn`` only by
    ``from torch import nn`` or ``import torch.nn as nn``): attribute name -> ``X``."""
    if module is None:
        return {}
    nn_ok = any(isinstance(n, ast.ImportFrom) and n.module == "torch" and any(a.name == "nn" and a.asname in
                (None, "nn") for a in n.names) or isinstance(n, ast.Import) and any(
                a.name == "torch.nn" and a.asname == "nn" for a in n.names) for n in module.body)
    binds_nn = sum(isinstance(n, ast.Name) and n.id == "nn" and isinstance(n.ctx, ast.Store)
                   for n in ast.walk(module))
    subs = submodules(module)
    out: dict[str, str] = {}
    for fn in ast.walk(module):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.name != "__init__":
            continue
        for n in ast.walk(fn):
            if not (isinstance(n, ast.Assign) and len(n.targets) == 1 and (name := _self_attr(n.targets[0])) in subs
                    and isinstance(n.value, ast.Call) and isinstance(f := n.value.func, ast.Attribute)):
                continue
            base = f.value
            stock = isinstance(base, ast.Attribute) and base.attr == "nn" and isinstance(base.value, ast.Name) \
                and base.value.id == "torch" or isinstance(base, ast.Name) and base.id == "nn" and nn_ok \
                and not binds_nn
            if stock and name is not None:
                out.setdefault(name.removeprefix("self."), f.attr)
                if out[name.removeprefix("self.")] != f.attr:
                    out[name.removeprefix("self.")] = ""  # made two ways
    return out


def attr_reads(fn: ast.FunctionDef | ast.AsyncFunctionDef, covered: set[int], stored: frozenset[str] | None,
               names: Iterable[str]) -> tuple[dict[str, list[int]], set[str]]:
    """For the attributes ``names`` (``self.X``) of method ``fn``: the lines where it reads
    each other than in the tests whose nodes are ``covered`` (``id()`` s), and those it may
    change (all of them where ``self`` is rebound, ``setattr``/``delattr``/``__dict__`` are
    named, or the file cannot be read: ``stored`` None)."""
    wanted = set(names)
    other: dict[str, list[int]] = {n: [] for n in wanted}
    changed = set(wanted & (stored or frozenset())) if stored is not None else set(wanted)
    for n in (x for s in fn.body for x in ast.walk(s)):
        if isinstance(n, ast.Name) and (n.id in ("setattr", "delattr", "__dict__")
                                        or n.id == "self" and isinstance(n.ctx, (ast.Store, ast.Del))):
            changed |= wanted
        elif isinstance(n, ast.Attribute) and n.attr == "__dict__":
            changed |= wanted
        elif (name := _self_attr(n)) in wanted:
            assert name is not None
            if isinstance(n.ctx, (ast.Store, ast.Del)):
                changed.add(name)
            elif id(n) not in covered:
                other[name].append(n.lineno)
        elif isinstance(n, ast.arg) and n.arg == "self":
            changed |= wanted  # a nested function's or lambda's self is another
    return other, changed
