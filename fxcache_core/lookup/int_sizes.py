"""An int argument baked into a size list: ``x.view(b, groups, -1)``, ``y.repeat(groups)``.

Dynamo computes with a specialized int as a Python constant, so a size list that holds
it reaches the graph with its value in that place: ``x.view(x.shape[0], groups, -1)``
traced with ``groups=3`` is ``aten.view.default(x, [4, 3, -1])`` in the graph
AOTAutograd keeps, ``y.repeat(groups)`` is ``aten.repeat.default(y, [3])``
(``Tensor.view``, ``reshape``, ``repeat`` and ``expand`` take their sizes as one list,
given as separate ints or as one tuple or list; ``permute`` its dims, kept as given:
``x.permute(2, 0, -2)`` is ``aten.permute.default(x, [2, 0, -2])``; ``torch.zeros(n, m)``
and ``torch.ones`` are ``aten.full.default([4, 3], 0, ...)``). :func:`size_lists` reads those values
for :func:`~fxcache_core.lookup.int_exprs.value_provenance`, deciding only where the
provenance is exact:

* each read of the parameter (an int, or a pure arithmetic expression of it and the
  call's other scalars, :func:`~fxcache_core.lookup.float_exprs.compute`) is an element
  of the size list of such a call on a tensor (or of ``torch.zeros``/``torch.ones``,
  whose other keywords, ``dtype`` and the like, move no size), given as plain arguments
  or as one tuple or list (never starred, never by keyword);
* the ops the statement traced of each family (``view`` and ``_unsafe_view`` for
  ``view``/``reshape``; ``repeat``; ``expand``; ``full`` for the factories) are as many as the statement's calls of
  that family, taken in the order Python runs them (a call's receiver and arguments
  before the call): the i-th call is the i-th op. An op another call of the statement
  adds (``flatten`` and ``matmul`` trace views too), one AOTAutograd leaves out, or a
  reshape traced as a copy makes the counts differ: unknown, never guessed;
* each op's list has as many items as its call's, the literal ints of the call where
  the call has them, and an int constant where the call has the parameter's expression.

Then those constants against the expression's value for the call say ``same`` or
``differs`` (another graph). Nothing here imports torch or runs the source.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping, Sequence

from fxcache_core.lookup.ast_reads import SIMPLE_STATEMENTS, calls_in_order
from fxcache_core.lookup.ast_reads import parents as ast_parents
from fxcache_core.lookup.float_exprs import compute

__all__ = ["FACTORIES", "FAMILIES", "size_call", "size_lists"]

FAMILIES: Mapping[str, frozenset[str]] = {
    "view": frozenset({"view", "_unsafe_view"}),
    "reshape": frozenset({"view", "_unsafe_view"}),
    "repeat": frozenset({"repeat"}),
    "expand": frozenset({"expand"}),
    "permute": frozenset({"permute"}),
}
"""A size-list method -> the stems of the aten ops a call of it traces in AOTAutograd's
graph (``reshape`` of a tensor that cannot be viewed is a copy, then ``_unsafe_view``)."""

FACTORIES: Mapping[str, frozenset[str]] = {"zeros": frozenset({"full"}), "ones": frozenset({"full"})}
"""A ``torch`` factory that takes its sizes as one list (separate ints, or one tuple or
list) -> the stems of the aten ops a call traces in AOTAutograd's graph: ``torch.zeros``
and ``torch.ones`` decompose to ``aten.full.default([sizes], 0 or 1, dtype=...)``
(torch/_refs/__init__.py), whose list is its first argument."""

_FACTORY_KEYWORDS = frozenset({"dtype", "layout", "device", "pin_memory", "requires_grad"})
"""The keywords a factory call may give: none moves a size."""

_WILD = object()


def size_call(e: ast.expr, parents: Mapping[ast.AST, ast.AST], tensor: Callable[[ast.expr], bool]
              ) -> ast.Call | None:
    """The size-list call (:data:`FAMILIES`) on a tensor whose list has ``e`` as an item
    (``x.view(a, e, -1)``, ``x.view((a, e))``); None otherwise."""
    p = parents.get(e)
    if isinstance(p, (ast.Tuple, ast.List)):
        call = parents.get(p)
        if isinstance(call, ast.Call) and call.args == [p] and _sized(call, tensor):
            return call
        return None
    if isinstance(p, ast.Call) and e in p.args and _sized(p, tensor):
        return p
    return None


def _sized(call: ast.Call, tensor: Callable[[ast.expr], bool]) -> bool:
    f = call.func
    if any(isinstance(a, ast.Starred) for a in call.args):
        return False
    if _factory(call):
        return all(k.arg in _FACTORY_KEYWORDS for k in call.keywords)
    return isinstance(f, ast.Attribute) and f.attr in FAMILIES and tensor(f.value) and not call.keywords


def _factory(call: ast.Call) -> bool:
    """Whether ``call`` is ``torch.zeros(...)`` or ``torch.ones(...)`` (:data:`FACTORIES`)."""
    f = call.func
    return isinstance(f, ast.Attribute) and f.attr in FACTORIES and isinstance(f.value, ast.Name) \
        and f.value.id == "torch"


def _stems(call: ast.Call) -> frozenset[str]:
    return (FACTORIES if _factory(call) else FAMILIES)[call.func.attr]  # type: ignore[attr-defined]


def _items(call: ast.Call) -> list[ast.expr]:
    """The size list's items as the call writes them (one tuple or list argument, or the
    arguments themselves)."""
    if len(call.args) == 1 and isinstance(call.args[0], (ast.Tuple, ast.List)):
        return list(call.args[0].elts)
    return list(call.args)




def size_lists(stmt: ast.stmt, exprs: Sequence[ast.expr], ops: Sequence[tuple[str, tuple[object, ...]]],
               values: Mapping[str, object], tensor: Callable[[ast.expr], bool]) -> bool | str | tuple[str, str]:
    """The constants the statement's size-list ops hold where ``exprs`` (the reads of one
    parameter, each an item of such a list) are, against the reads' values for the call.

    ``ops``: the statement's ops, in the graph's order, as (stem, positional arguments;
    a list as a tuple, a name as None). ``values``: the call's Python values by name (ints,
    floats, tuples); ``tensor``: whether an expression of the function is a tensor. A
    parameter that is a tuple of ints given whole as the list (``x.reshape(shape)``) is
    compared item by item. Returns True (every
    constant is the call's), ``(want, have)`` in words (they differ: another graph), or a
    reason in words where the ops cannot be told apart exactly (see the module docstring).
    """
    if not isinstance(stmt, SIMPLE_STATEMENTS) or stmt.value is None:
        return "the statement is not a plain assignment, return or expression"
    parents = ast_parents(stmt)
    calls = [c for c in calls_in_order(stmt.value) if isinstance(c.func, ast.Attribute)
             and (c.func.attr in FAMILIES or _factory(c))]
    if any(size_call(e, parents, tensor) is None for e in exprs):
        return "a read is not an item of a size list fxcache reads"
    if any(not _sized(c, tensor) for c in calls):
        return "a view, reshape, repeat, expand, torch.zeros or torch.ones there is not one whose list fxcache reads"
    mine = set(map(id, exprs))
    want: list[int] = []
    have: list[object] = []
    for stems in {_stems(c) for c in calls}:
        sites = [c for c in calls if _stems(c) == stems]
        traced = [args for stem, args in ops if stem in stems]
        if len(traced) != len(sites):
            return (f"its graph has {len(traced)} {'/'.join(sorted(stems))} op(s) from it, for {len(sites)} "
                    "in the code (another call there may trace one, or one may be left out)")
        for call, args in zip(sites, traced, strict=True):
            items = _items(call)
            at = 0 if _factory(call) else 1  # full's list is its first argument, a view's its second
            got = args[at] if len(args) > at else None
            whole = _whole(call, mine, values)
            if whole is not None:  # x.reshape(shape), shape a tuple of ints: the list is the tuple
                if not isinstance(got, tuple) or len(got) != len(whole) or any(type(g) is not int for g in got):
                    return f"a {call.func.attr}() there takes the tuple whole, and its op has another list"  # type: ignore[attr-defined]
                want += whole
                have += got
                continue
            if not isinstance(got, tuple) or len(got) != len(items):
                return f"a {call.func.attr}() there has {len(items)} sizes, its op another list"  # type: ignore[attr-defined]
            for item, value in zip(items, got, strict=True):
                if id(item) in mine:
                    v = compute(ast.unparse(item), {k: x for k, x in values.items() if type(x) in (int, float)})
                    if type(v) is not int or type(value) is not int:
                        return f"{ast.unparse(item)} there is not an int in both the code and the graph"
                    want.append(v)
                    have.append(value)
                elif _literal_int(item) is not None and _literal_int(item) != value:
                    return f"a {call.func.attr}() there has {ast.unparse(item)} where its op has {value}"  # type: ignore[attr-defined]
    if len(want) != sum(len(w) if (w := _whole_of(e, values)) is not None else 1 for e in exprs):
        return "a read is not in a size list of the statement"
    if want == have:
        return True
    return (", ".join(map(str, want)), ", ".join(map(str, have)))


def _literal_int(node: ast.expr) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and type(node.operand.value) is int:
        return -node.operand.value
    return None


def _whole_of(e: ast.expr, values: Mapping[str, object]) -> tuple[int, ...] | None:
    """The call's tuple of ints where ``e`` is a parameter holding one."""
    v = values.get(e.id) if isinstance(e, ast.Name) else None
    return v if isinstance(v, tuple) and all(type(i) is int for i in v) else None


def _whole(call: ast.Call, mine: set[int], values: Mapping[str, object]) -> tuple[int, ...] | None:
    """The tuple a size-list call takes whole as its one argument (one of the reads)."""
    if len(call.args) != 1 or id(call.args[0]) not in mine:
        return None
    return _whole_of(call.args[0], values)
