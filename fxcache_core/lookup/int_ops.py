"""An int, a bool or a None passed to an op that keeps it verbatim: ``x.std(dim=d, keepdim=k)``.

Dynamo specializes an int given as a dim (and any bool or None) and puts its value in the
call of its graph; for the calls of :data:`OPS` AOTAutograd's graph keeps that value in a
fixed place of the call's aten op (softmax: of each of its two), as the code gave it (a negative dim stays negative, an int
dim of ``std`` becomes the list of it, a value equal to the op's default is left
unprinted). Printed by torch 2.13 for such calls on CPU:

* ``x.std(dim=-1, keepdim=True)`` -> ``aten.var.correction(x, [-1], correction = 1.0,
  keepdim = True)`` (``var`` the same; ``dim=None`` and ``keepdim=False`` print nothing);
* ``x.unsqueeze(-1)`` -> ``aten.unsqueeze.default(x, -1)``; ``x.squeeze(-2)`` ->
  ``aten.squeeze.dim(x, -2)``;
* ``x.topk(k)`` -> ``aten.topk.default(x, 2)`` (its ``dim`` next, ``-1`` unprinted);
* ``x.softmax(-1)`` -> ``aten.amax.default(x, [-1], True)`` and
  ``aten.sum.dim_IntList(exp, [-1], True)``: two ops, each holding the dim
  (``log_softmax`` the same);
* ``x.cumsum(0)`` -> ``aten.cumsum.default(x, 0)`` (``cumprod``, ``cummax``, ``cummin``,
  ``logcumsumexp`` the same); ``x.prod(1)`` -> ``aten.prod.dim_int(x, 1)``;
  ``x.max(-1)`` -> ``aten.max.dim(x, -1)`` (``min`` the same; ``x.max()`` is
  ``aten.max.default(x)``, and ``x.max(y)`` of a tensor ``aten.maximum``);
  ``x.argmax(-1)`` -> ``aten.argmax.default(x, -1)``; ``x.sort(0)`` ->
  ``aten.sort.default(x, 0)`` and ``x.argsort(-1)`` -> ``aten.sort.default(x)`` (-1
  unprinted); ``x.select(-1, 2)`` -> ``aten.select.int(x, -1, 2)``; ``x.diagonal(1)`` ->
  ``aten.diagonal.default(x, 1)``.

Calls that are *not* here because the graph does not keep the value as given:
``transpose`` and ``flip`` (a permute or ``prims.rev`` with the dims made positive),
``F.softmax`` and ``F.pad`` (traced in torch/nn/functional.py, not at the statement),
``narrow`` (a slice whose end is start plus length), ``torch.cat`` (copies and views), ``torch.roll`` (an index arithmetic whose
constants are the shift modulo the size), ``index_select`` (an index op without its dim),
``tril``/``triu`` (a comparison with the offset). ``permute`` keeps its list verbatim and is a
size-list family (:mod:`fxcache_core.lookup.int_sizes`).

:func:`op_args` decides under the exactness conditions of
:mod:`fxcache_core.lookup.int_sizes`: every read of the parameter is one argument of
such a call on a tensor (positional where the table allows it, or by keyword; never
starred), for each op name the statement's calls that trace one and its ops of that name
are as many, taken in the order Python makes the calls and the graph holds the ops (the i-th
call is the i-th op; a call read for its ``.shape`` alone may be left out of the graph
while another call's op of that name stands in its place: not read), and each argument
the call gives as a literal is the op's. Nothing here imports torch or runs the source.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from fxcache_core.lookup.ast_reads import SIMPLE_STATEMENTS, calls_in_order
from fxcache_core.lookup.ast_reads import parents as ast_parents
from fxcache_core.lookup.float_exprs import compute
from fxcache_core.lookup.pyvalues import same_value

__all__ = ["OPAQUE", "OPS", "IntArg", "OpRule", "op_args", "op_site", "printed_op", "printed_value"]

REQUIRED = object()
"""An argument's ``absent`` where the op always prints it."""

OPAQUE = object()
"""A printed argument that is not a constant (a name: a SymInt, a tensor)."""


@dataclass(frozen=True, slots=True)
class IntArg:
    """One argument of a call that an op keeps.

    Attributes:
        name: the Python keyword (``dim``, ``keepdim``, ``k``).
        pos: its position among a method call's arguments (``x.std(1)``), None where
            fxcache reads it by keyword only (a position that overloads share
            ambiguously, as ``std(dim, unbiased, keepdim)``).
        aten: where the op holds it: a positional index (``1`` after ``self``) or a
            keyword name (``keepdim``).
        absent: what the op holds when it prints nothing there (the op's default), or
            :data:`REQUIRED`.
        kind: ``list`` (an int is the list of it), ``int`` or ``bool``.
    """

    name: str
    pos: int | None
    aten: int | str
    absent: object
    kind: str


@dataclass(frozen=True, slots=True)
class OpRule:
    """A method's aten ops (``stems``: the stem of each op one call traces, each holding
    the arguments in the same places) and the arguments they keep."""

    stems: tuple[str, ...]
    args: tuple[IntArg, ...]


_DIM_LIST = IntArg("dim", 0, 1, None, "list")
_DIM = IntArg("dim", 0, 1, REQUIRED, "int")
_KEEPDIM = IntArg("keepdim", None, "keepdim", False, "bool")

OPS: Mapping[str, OpRule] = {
    "std": OpRule(("var",), (_DIM_LIST, _KEEPDIM)),
    "var": OpRule(("var",), (_DIM_LIST, _KEEPDIM)),
    "unsqueeze": OpRule(("unsqueeze",), (IntArg("dim", 0, 1, REQUIRED, "int"),)),
    "squeeze": OpRule(("squeeze",), (IntArg("dim", 0, 1, REQUIRED, "int"),)),
    "topk": OpRule(("topk",), (IntArg("k", 0, 1, REQUIRED, "int"), IntArg("dim", 1, 2, -1, "int"))),
    "softmax": OpRule(("amax", "sum"), (IntArg("dim", 0, 1, REQUIRED, "list"),)),
    "log_softmax": OpRule(("amax", "sum"), (IntArg("dim", 0, 1, REQUIRED, "list"),)),
    "cumsum": OpRule(("cumsum",), (_DIM,)),
    "cumprod": OpRule(("cumprod",), (_DIM,)),
    "cummax": OpRule(("cummax",), (_DIM,)),
    "cummin": OpRule(("cummin",), (_DIM,)),
    "logcumsumexp": OpRule(("logcumsumexp",), (_DIM,)),
    "prod": OpRule(("prod",), (_DIM,)),
    "max": OpRule(("max",), (_DIM,)),
    "min": OpRule(("min",), (_DIM,)),
    "argmax": OpRule(("argmax",), (IntArg("dim", 0, 1, None, "int"),)),
    "argmin": OpRule(("argmin",), (IntArg("dim", 0, 1, None, "int"),)),
    "sort": OpRule(("sort",), (IntArg("dim", 0, 1, -1, "int"),)),
    "argsort": OpRule(("sort",), (IntArg("dim", 0, 1, -1, "int"),)),
    "select": OpRule(("select",), (_DIM, IntArg("index", 1, 2, REQUIRED, "int"))),
    "diagonal": OpRule(("diagonal",), (IntArg("offset", 0, 1, 0, "int"),)),
}
"""A tensor method -> the aten op it traces in AOTAutograd's graph and the arguments
that op keeps verbatim (checked against torch 2.13's printed graphs, module docstring)."""


_METADATA = frozenset({"shape", "size", "dim", "ndim", "ndimension", "numel", "dtype", "device", "is_contiguous"})
"""Attributes of a tensor that need no op: a call read for one alone may trace none."""


def _rule(call: ast.AST, tensor: Callable[[ast.expr], bool]) -> OpRule | None:
    f = call.func if isinstance(call, ast.Call) else None
    if isinstance(f, ast.Attribute) and f.attr in OPS and tensor(f.value):
        return OPS[f.attr]
    return None


def _given(call: ast.Call, arg: IntArg) -> ast.expr | None:
    for k in call.keywords:
        if k.arg == arg.name:
            return k.value
    if arg.pos is not None and arg.pos < len(call.args):
        return call.args[arg.pos]
    return None


def _readable(call: ast.Call, rule: OpRule) -> bool:
    """No starred or ``**`` argument, no positional one the table does not place, and no
    keyword but the table's and :data:`_FREE_KEYWORDS` (``x.argsort(stable=True)`` traces
    another overload, whose arguments sit elsewhere)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return False
    if any(k.arg not in {a.name for a in rule.args} | _FREE_KEYWORDS for k in call.keywords):
        return False
    placed = {a.pos for a in rule.args if a.pos is not None}
    return all(i in placed for i in range(len(call.args)))


_FREE_KEYWORDS = frozenset({"dtype", "unbiased", "correction"})
"""Keywords a call of :data:`OPS` may give beside the table's, which move none of its
arguments (``x.cumsum(0, dtype=torch.float64)`` is ``aten.cumsum.default(x, 0, dtype =
torch.float64)``; ``x.std(1, unbiased=False)`` is ``aten.var.correction(x, [1],
correction = 0)`` before its sqrt)."""


def op_site(e: ast.expr, parents: Mapping[ast.AST, ast.AST], tensor: Callable[[ast.expr], bool]
            ) -> tuple[ast.Call, IntArg] | None:
    """The call of :data:`OPS` on a tensor and the argument of it that ``e`` is
    (``x.std(dim=e)``, ``x.unsqueeze(e)``); None otherwise."""
    p = parents.get(e)
    call = parents.get(p) if isinstance(p, ast.keyword) else p
    if not isinstance(call, ast.Call) or e is call.func or (rule := _rule(call, tensor)) is None:
        return None
    if not _readable(call, rule):
        return None
    for arg in rule.args:
        if _given(call, arg) is e:
            return call, arg
    return None




def _value(node: ast.expr, kind: str, values: Mapping[str, object]) -> object:
    """What the call gives there as the op holds it: an int, a bool, a tuple of ints, None
    (the code's ``None``); ``REQUIRED`` where fxcache cannot compute it."""
    if (isinstance(node, ast.Constant) and node.value is None) or (
            isinstance(node, ast.Name) and node.id in values and values[node.id] is None):
        return None
    if isinstance(node, ast.Constant) and type(node.value) is bool:
        v: object = node.value
    elif isinstance(node, ast.Name) and isinstance(values.get(node.id), (bool, tuple)):
        v = values[node.id]
    elif isinstance(node, (ast.Tuple, ast.List)):
        items = [_value(x, "int", values) for x in node.elts]
        v = tuple(items) if all(type(i) is int for i in items) else REQUIRED
    else:
        v = compute(ast.unparse(node), {k: x for k, x in values.items() if type(x) in (int, float)})
    if kind == "bool":
        return v if type(v) is bool else REQUIRED
    if type(v) is int:
        return (v,) if kind == "list" else v
    if isinstance(v, tuple) and all(type(i) is int for i in v):
        return v
    return REQUIRED


def _held(args: tuple[object, ...], kwargs: Mapping[str, object], arg: IntArg) -> object:
    """What the op holds at the argument's place (its default where it prints none)."""
    if isinstance(arg.aten, str):
        return kwargs.get(arg.aten, arg.absent)
    return args[arg.aten] if len(args) > arg.aten else arg.absent


def printed_op(op: str, call: ast.Call) -> tuple[str, tuple[object, ...], dict[str, object]]:
    """An op line of a printed graph (:func:`~fxcache_core.lookup.traced_lines.op_calls`'
    op stem and parsed call) as (stem, positional arguments, keyword arguments), each
    :func:`printed_value`."""
    return (op, tuple(printed_value(a) for a in call.args),
            {k.arg: printed_value(k.value) for k in call.keywords if k.arg is not None})


def printed_value(node: ast.expr) -> object:
    """A printed argument's value: an int, float or bool constant, None, a negative
    number, ``inf``, ``-inf`` and ``nan`` (FX prints those floats as the names it
    imports from :mod:`math`: torch/fx/graph.py ``_register_custom_builtin``; no node
    is named so), a list of such numbers (as a tuple); :data:`OPAQUE` for anything else."""
    if isinstance(node, ast.Constant) and (node.value is None or type(node.value) in (int, float, bool)):
        return node.value
    if isinstance(node, ast.Name) and node.id in _FX_FLOATS:
        return _FX_FLOATS[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = printed_value(node.operand)
        return -v if type(v) in (int, float) and not isinstance(node.operand, ast.UnaryOp) else OPAQUE
    if isinstance(node, ast.List):
        items = tuple(printed_value(e) for e in node.elts)
        return items if all(type(i) in (int, float, bool) for i in items) else OPAQUE
    return OPAQUE


_FX_FLOATS = {"inf": math.inf, "nan": math.nan}


def op_args(stmt: ast.stmt, exprs: Sequence[ast.expr],
            ops: Sequence[tuple[str, tuple[object, ...], Mapping[str, object]]],
            values: Mapping[str, object], tensor: Callable[[ast.expr], bool]) -> bool | str | tuple[str, str]:
    """The values the statement's ops of :data:`OPS` hold where ``exprs`` (the reads of
    one parameter, each an argument of such a call, :func:`op_site`) are, against the
    reads' values for the call.

    ``ops``: the statement's ops in the graph's order, as (stem, positional arguments,
    keyword arguments; a list as a tuple, a name or ``None`` as None). ``values``: the
    call's Python values by name; ``tensor``: whether an expression is a tensor. Returns
    True (every value is the call's), ``(want, have)`` in words (they differ: another
    graph), or a reason in words where the ops cannot be paired with the calls exactly.
    """
    if not isinstance(stmt, SIMPLE_STATEMENTS) or stmt.value is None:
        return "the statement is not a plain assignment, return or expression"
    parents = ast_parents(stmt)
    sites = {id(e): op_site(e, parents, tensor) for e in exprs}
    if any(s is None for s in sites.values()):
        return "a read is not an argument fxcache reads of an op that keeps it"
    calls = [c for c in calls_in_order(stmt.value) if isinstance(c.func, ast.Attribute) and c.func.attr in OPS]
    if any(_rule(c, tensor) is None or not _readable(c, OPS[c.func.attr]) for c in calls):  # type: ignore[attr-defined]
        return "a call there of the same name is not one whose arguments fxcache reads"
    if any(isinstance(a := parents.get(c), ast.Attribute) and a.attr in _METADATA for c in calls):
        return "a call there is read for its metadata only (its op may be left out of the graph)"
    mine = {(id(s[0]), s[1].name) for s in sites.values() if s is not None}
    want: list[object] = []
    have: list[object] = []
    for stem in sorted({s for c in calls for s in OPS[c.func.attr].stems}):  # type: ignore[attr-defined]
        group = [c for c in calls if stem in OPS[c.func.attr].stems]  # type: ignore[attr-defined]
        traced = [(a, k) for st, a, k in ops if st == stem]
        if len(traced) != len(group):
            return (f"its graph has {len(traced)} {stem} op(s) from it, for {len(group)} "
                    "in the code (another call there may trace one, or one may be left out)")
        for call, (args, kwargs) in zip(group, traced, strict=True):
            rule = OPS[call.func.attr]  # type: ignore[attr-defined]
            for arg in rule.args:
                node = _given(call, arg)
                held = _held(args, kwargs, arg)
                if held is REQUIRED or held is OPAQUE:
                    return f"a {call.func.attr}() op there has no constant {arg.name}"  # type: ignore[attr-defined]
                if node is None:
                    if not same_value(arg.absent, held) and arg.absent is not REQUIRED:
                        return f"a {call.func.attr}() there leaves {arg.name} out, and its op has {held}"  # type: ignore[attr-defined]
                    continue
                ours = (id(call), arg.name) in mine
                v = _value(node, arg.kind, values)
                if v is REQUIRED:
                    if ours:
                        return f"{ast.unparse(node)} there is not a value fxcache computes"
                    continue  # another parameter's, or a tensor's: read by its own rule
                if v is None and arg.absent is not None:
                    return f"{ast.unparse(node)} there is None, which {call.func.attr}() does not take"  # type: ignore[attr-defined]
                if ours:
                    want.append(v)
                    have.append(held)
                elif _literal(node) and not same_value(v, held):
                    return f"a {call.func.attr}() there has {ast.unparse(node)} where its op has {held}"  # type: ignore[attr-defined]
    if len(want) != sum(len(OPS[s[0].func.attr].stems) for s in sites.values() if s is not None):  # type: ignore[attr-defined]
        return "a read is not an argument of a call the statement's ops pair with"
    if all(same_value(w, h) for w, h in zip(want, have, strict=True)):
        return True
    return (", ".join(map(_text, want)), ", ".join(map(_text, have)))


def _literal(node: ast.expr) -> bool:
    return not any(isinstance(x, ast.Name) for x in ast.walk(node))


def _text(v: object) -> str:
    return "[" + ", ".join(map(str, v)) + "]" if isinstance(v, tuple) else str(v)
