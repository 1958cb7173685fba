"""Which names of a function's code keep the meaning the expression rules give them.

:mod:`~fxcache_core.lookup.py_exprs` computes an expression of a call's values the way
Python would, reading ``min``/``max``/``abs``/``int``/``float``/``round``/``len`` as the
builtins and ``math`` as the module, and each name it is given as the call's value. Both
hold only where the code binds no such name:

* a builtin's name is the builtin only where neither the function's module (an
  assignment, a ``def``, a ``class``, an import of that name, or a ``global`` of it
  anywhere), nor the function (a parameter, a local, a nested ``def``) nor a function
  around it (a closure) binds it; ``math`` is the module only where every binding of it
  is ``import math``. Where the module's source is not readable, only the function's own
  bindings are looked at; a caller with no source at all (statements quoted by a
  graph's comments) trusts none (:func:`no_builtins`).
* a parameter's value is the call's only where the function never assigns it (an
  assignment, an augmented one, a walrus, a ``for`` or ``with`` target, ``del``), and a
  tensor's size only where the function never assigns the tensor's name.

:func:`shadowing` gives :mod:`~fxcache_core.lookup.py_exprs` the builtins a function's
code rebinds for the rules it runs; :func:`call_values` drops the values the function
overwrites. Reads source text only; never imports or runs it.
"""

from __future__ import annotations

import ast
import re
import weakref
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager

from fxcache_core.functions.trees import module_node
from fxcache_core.lookup.py_exprs import SHADOWABLE, shadowed_names

__all__ = ["assigned_names", "call_values", "no_builtins", "shadowed", "shadowing", "tested"]

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_SIZE_RE = re.compile(r"(\w+)\.shape\[-?[0-9]+\]")


def _is_math_import(a: ast.alias) -> bool:
    return a.name == "math" and a.asname in (None, "math")


def _bindings(root: ast.AST, *, nested: bool) -> set[str]:
    """The names ``root``'s code binds (``import math`` left out); a nested scope's own
    code counted only where ``nested`` (a def's or class's name always is)."""
    out: set[str] = set()
    todo = list(ast.iter_child_nodes(root))
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            out.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            for a in n.names:
                if a.name == "*":
                    out |= SHADOWABLE
                elif not (isinstance(n, ast.Import) and _is_math_import(a)):
                    out.add(a.asname or a.name.split(".")[0])
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            out.update(n.names)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            out.add(n.name)
        elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
            out.add(n.name)
        elif isinstance(n, ast.MatchMapping) and n.rest:
            out.add(n.rest)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
        if nested or not isinstance(n, _SCOPES):
            todo.extend(ast.iter_child_nodes(n))
        else:  # a nested scope's defaults and decorators run here; its body does not
            args = n.args if not isinstance(n, ast.ClassDef) else None
            todo.extend(
                [
                    *getattr(n, "decorator_list", []),
                    *(args.defaults if args else []),
                    *(d for d in (args.kw_defaults if args else []) if d is not None),
                ]
            )
    return out


def assigned_names(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """Every name ``fn``'s body binds (a parameter it assigns among them), nested
    functions' code included."""
    got = _ASSIGNED.get(fn)
    if got is None:
        got = _ASSIGNED[fn] = (
            frozenset().union(*(_bindings(s, nested=True) for s in fn.body))
            if fn.body
            else frozenset()
        )
    return got


def shadowed(file: str, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """The builtin names (and ``math``) that ``fn`` of ``file`` does not read as Python's own."""
    module = module_node(file)
    if module is None:
        return frozenset(_scope_bindings(fn) & SHADOWABLE)
    got = _SHADOWED.get(fn)
    if got is not None and got[0]() is module:
        return got[1]
    own, scopes = _module_facts(module)
    out = set(own)
    out |= _scope_bindings(fn)
    for start, end, n in scopes:  # the functions around fn: their locals are its closure
        if start < fn.lineno and end >= (fn.end_lineno or fn.lineno):
            out |= _scope_bindings(n)
    result = frozenset(out & SHADOWABLE)
    _SHADOWED[fn] = (weakref.ref(module), result)
    return result


_FACTS: weakref.WeakKeyDictionary[
    ast.Module, tuple[frozenset[str], tuple[tuple[int, int, ast.AST], ...]]
] = weakref.WeakKeyDictionary()
"""Per parsed module (kept while its tree is, :mod:`~fxcache_core.functions.trees`), what
:func:`shadowed` reads of the module alone: many keys' calls ask of one function."""
_SCOPE_BINDINGS: weakref.WeakKeyDictionary[ast.AST, frozenset[str]] = weakref.WeakKeyDictionary()
_SHADOWED: weakref.WeakKeyDictionary[ast.AST, tuple[weakref.ref[ast.Module], frozenset[str]]] = (
    weakref.WeakKeyDictionary()
)
"""Per function (of a kept tree): :func:`shadowed` of it, with the module it was read in
(held weakly: the module holds the function)."""
_ASSIGNED: weakref.WeakKeyDictionary[ast.AST, frozenset[str]] = weakref.WeakKeyDictionary()
"""Per function (of a kept tree): :func:`assigned_names` of it."""


def _module_facts(
    module: ast.Module,
) -> tuple[frozenset[str], tuple[tuple[int, int, ast.AST], ...]]:
    """The names ``module``'s own code binds (``global`` s anywhere in it included) and its
    functions and lambdas as (first line, last line, node), in walk order."""
    got = _FACTS.get(module)
    if got is None:
        own = _bindings(module, nested=False)
        scopes: list[tuple[int, int, ast.AST]] = []
        for n in ast.walk(module):
            if isinstance(n, ast.Global):
                own.update(n.names)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                scopes.append((n.lineno, n.end_lineno or n.lineno, n))
        got = _FACTS[module] = (frozenset(own), tuple(scopes))
    return got


def _scope_bindings(n: ast.AST) -> frozenset[str]:
    """:func:`_bindings` of a function of a kept module, nested scopes included, once."""
    got = _SCOPE_BINDINGS.get(n)
    if got is None:
        got = _SCOPE_BINDINGS[n] = frozenset(_bindings(n, nested=True))
    return got


@contextmanager
def shadowing(file: str, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[None]:
    """Within it, :mod:`~fxcache_core.lookup.py_exprs` refuses the builtins ``fn`` rebinds."""
    token = shadowed_names.set(shadowed(file, fn) | shadowed_names.get())
    try:
        yield
    finally:
        shadowed_names.reset(token)


@contextmanager
def no_builtins() -> Iterator[None]:
    """Within it, :mod:`~fxcache_core.lookup.py_exprs` reads no name as a builtin or
    ``math``: for code whose module is not known."""
    token = shadowed_names.set(SHADOWABLE)
    try:
        yield
    finally:
        shadowed_names.reset(token)


def call_values(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, values: Mapping[str, object], keep: str
) -> dict[str, object]:
    """``values`` (the call's scalars by name, sizes by ``x.shape[i]``) less the names ``fn``
    assigns, other than ``keep`` (the parameter a rule reads, which says so itself), and
    the sizes of tensors it assigns: those the code reads are not the call's."""
    assigned = assigned_names(fn)
    out: dict[str, object] = {}
    for k, v in values.items():
        m = _SIZE_RE.fullmatch(k)
        if (m.group(1) if m else k) in assigned and k != keep:
            continue
        out[k] = v
    return out


def tested(fn: ast.FunctionDef | ast.AsyncFunctionDef, names: Collection[str]) -> int | None:
    """The first line where ``fn`` tests one of ``names`` in Python (an ``if``/``while``/
    conditional expression/``assert``/``match``/comprehension test, an ``and``/``or``
    operand), or None where it tests none."""
    tests: list[ast.AST] = []
    for n in ast.walk(fn):
        if isinstance(n, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            tests.append(n.test)
        elif isinstance(n, ast.Match):
            tests.append(n.subject)
        elif isinstance(n, ast.comprehension):
            tests.extend(n.ifs)
        elif isinstance(n, ast.BoolOp):
            tests.extend(n.values)
    lines = [
        t.lineno for t in tests for x in ast.walk(t) if isinstance(x, ast.Name) and x.id in names
    ]
    return min(lines) if lines else None
