"""A Python scalar passed straight to an op's argument, read off the op by its place.

Dynamo specializes a float (and, under ``dynamic=None``/``False`` on a fresh process's
first call, an int) and calls the op with its value; a None given for an optional bound
makes the code call no op for it. For the calls of :data:`OPS` and a comparison of a
tensor with a scalar, AOTAutograd's graph keeps the value at a fixed place of a fixed op,
so which op holds which value is read by position, not by counting constants (two bounds
of one ``clamp`` are two ops, each with its own). Printed by torch 2.13 on CPU:

* ``torch.clamp(x, min=lo, max=hi)`` (``x.clamp``, ``torch.clip``, ``x.clip``) ->
  ``aten.clamp_min.default(x, lo)`` then ``aten.clamp_max.default(_, hi)``; a bound that
  is None traces no op (the ``clamp`` decomposition in torch/_inductor/decomposition.py:
  ``if min is not None: x = x.clamp_min(min)``, then the same for ``max``);
* ``torch.clamp_min(x, v)``, ``x.clamp_min(v)`` -> ``aten.clamp_min.default(x, v)``
  (``clamp_max`` the same);
* ``x > v`` (``<``, ``>=``, ``<=``, ``==``, ``!=``; the scalar on either side, reflected
  as Python does: ``v < x`` is ``x > v``) -> ``aten.gt.Scalar(x, v)``.

:func:`float_op_provenance` decides only where that is exact: every read of the
parameter is such an argument (the parameter itself or a pure arithmetic expression of
the call's scalars, :func:`~fxcache_core.lookup.float_exprs.compute`) in a plain
statement outside any loop, alone on its lines; every call of that statement is one of
:data:`OPS` (with no argument but those placed) or of :data:`NO_SUCH_OPS` (whose ops are
none of these), so the statement's ops of these names are the sites' own; no part of it
may be skipped (a conditional expression, ``and``/``or``, a comprehension); it does not
hold both clamp's bounds and a comparison (clamp's backward compares too: a training
graph's forward may hold those masks); no site's result is a tuple's item or read for its
metadata (an op whose result nothing reads is left out of the graph); the statement
traced an op; and every value of the statement's sites is a number or None for the call
(a tensor bound traces other ops). Then the ops of each
name, in the graph's order, against the sites' values in the order Python calls them,
say ``same`` or ``differs`` (another graph), for the names the parameter's reads feed.
Nothing here imports torch, runs the source or the graph.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass

from fxcache_core.functions.params import left_out_defaults
from fxcache_core.lookup.ast_reads import (
    MAY_NOT_RUN,
    SIMPLE_STATEMENTS,
    in_loop,
    root_name,
    shares_lines,
)
from fxcache_core.lookup.ast_reads import parents as ast_parents
from fxcache_core.lookup.float_exprs import (
    FloatUse,
    Provenance,
    TensorKinds,
    _is_pure,
    _statement,
    compute,
)
from fxcache_core.lookup.int_ops import OPAQUE, printed_value
from fxcache_core.lookup.py_names import call_values, shadowing
from fxcache_core.lookup.pyvalues import same_value
from fxcache_core.lookup.traced_lines import op_calls
from fxcache_core.reasons import Reason

__all__ = ["NO_SUCH_OPS", "OPS", "float_op_provenance"]


@dataclass(frozen=True, slots=True)
class ScalarArg:
    """One scalar argument of a call in :data:`OPS`: its keyword, its position among a
    method's arguments (a function's is one more: the tensor comes first), and the op
    that holds it at its argument 1 (None for a bound that is None: no op)."""

    name: str
    pos: int
    op: str


_BOUNDS = (ScalarArg("min", 0, "clamp_min"), ScalarArg("max", 1, "clamp_max"))
OPS: Mapping[str, tuple[ScalarArg, ...]] = {
    "clamp": _BOUNDS, "clip": _BOUNDS,
    "clamp_min": (ScalarArg("min", 0, "clamp_min"),),
    "clamp_max": (ScalarArg("max", 0, "clamp_max"),),
}
"""A torch function or tensor method -> its scalar arguments and the op each becomes
(checked against torch 2.13's printed graphs: module docstring)."""

NO_SUCH_OPS = frozenset({"where", "sin", "cos", "exp", "tanh", "sigmoid", "neg"})
"""Torch functions and tensor methods a statement may call beside the sites, whose ops
are none of the sites' (``torch.where`` traces ``where`` and ``scalar_tensor``; each
elementwise function here traces its own aten op, and its backward multiplies by a value
computed from its input or output, so no partition moves a comparison or a clamp of it
into the forward: ``relu``, whose backward masks, is not one)."""

_CMP: Mapping[type[ast.cmpop], tuple[str, str]] = {
    ast.Gt: ("gt", "lt"), ast.Lt: ("lt", "gt"), ast.GtE: ("ge", "le"), ast.LtE: ("le", "ge"),
    ast.Eq: ("eq", "eq"), ast.NotEq: ("ne", "ne"),
}
"""A comparison -> the op of ``tensor OP scalar`` and of ``scalar OP tensor`` (reflected)."""

_CLAMP_OPS = frozenset({"clamp_min", "clamp_max"})
_METADATA = frozenset({"shape", "dtype", "device", "ndim", "is_contiguous", "size", "dim", "numel"})


@dataclass(frozen=True, slots=True)
class _Site:
    """One place of a statement whose value an op holds: the op, the expression there
    (None: the op's tensor is on both sides, not a scalar), its order among the calls."""

    op: str
    expr: ast.expr


def _method(call: ast.Call, kinds: TensorKinds) -> tuple[str, bool] | None:
    """The name of a call of :data:`OPS` or :data:`NO_SUCH_OPS` and whether it is a
    tensor's method (else ``torch.NAME``); None for any other call."""
    f = call.func
    if not isinstance(f, ast.Attribute) or (f.attr not in OPS and f.attr not in NO_SUCH_OPS):
        return None
    if isinstance(f.value, ast.Name) and f.value.id == "torch":
        return f.attr, False
    if root_name(f) != "torch" and kinds.tensor(f.value):
        return f.attr, True
    return None


def _argument(call: ast.Call, arg: ScalarArg, method: bool) -> ast.expr | None | bool:
    """What the call gives for ``arg``: its expression, None when left out, False where
    the call cannot be read (starred, ``**``, or more positional arguments than the
    table places)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return False
    for k in call.keywords:
        if k.arg == arg.name:
            return k.value
    i = arg.pos + (0 if method else 1)
    return call.args[i] if i < len(call.args) else None


def _sites(stmt: ast.stmt, kinds: TensorKinds) -> tuple[list[_Site], list[str]]:
    """The statement's sites in the order Python evaluates them, and why the statement's
    ops of those names may not be the sites' alone (empty when they are)."""
    out: list[_Site] = []
    why: list[str] = []
    parents = ast_parents(stmt)

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            visit(child)
        if isinstance(node, ast.Call):
            got = _method(node, kinds)
            if got is None:
                why.append(f"it calls {ast.unparse(node.func)[:40]}(), whose ops fxcache does not know")
                return
            name, method = got
            p = parents.get(node)
            if isinstance(p, (ast.Tuple, ast.List, ast.Set, ast.Dict, ast.Starred)) or (
                    isinstance(p, ast.Attribute) and p.attr in _METADATA):
                why.append(f"the result of {name}() there may be left out of the graph")
            if name in NO_SUCH_OPS:
                return
            if len(node.args) > len(OPS[name]) + (0 if method else 1) or any(
                    k.arg not in {a.name for a in OPS[name]} for k in node.keywords):
                why.append(f"{name}() there has arguments fxcache does not place")
                return
            for arg in OPS[name]:
                e = _argument(node, arg, method)
                if e is False:
                    why.append(f"{name}() there has a starred argument")
                    return
                out.append(_Site(arg.op, ast.Constant(None) if e is None else e))  # type: ignore[arg-type]
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _CMP:
            left, right = node.left, node.comparators[0]
            lt, rt = kinds.tensor(left), kinds.tensor(right)
            if lt != rt:
                out.append(_Site(_CMP[type(node.ops[0])][0 if lt else 1], right if lt else left))
        elif isinstance(node, ast.Compare) and any(kinds.tensor(x) for x in (node.left, *node.comparators)):
            why.append("a chained comparison of a tensor there")
        elif isinstance(node, MAY_NOT_RUN):
            why.append(f"a part of it may not run ({type(node).__name__})")

    visit(stmt)
    kinds_of = {s.op in _CLAMP_OPS for s in out}
    if len(kinds_of) > 1:  # clamp's backward compares too (its masks): in a training graph, beside the sites'
        why.append("it has clamp's bounds and a comparison")
    return out, why


def _value(e: ast.expr, values: Mapping[str, object]) -> object:
    """The site's value for the call: a number, None (no op), or OPAQUE."""
    if isinstance(e, ast.Constant) and e.value is None:
        return None
    if isinstance(e, ast.Name) and e.id in values and values[e.id] is None:
        return None
    v = compute(ast.unparse(e), {k: x for k, x in values.items() if type(x) in (int, float)})
    return OPAQUE if v is None else v


def float_op_provenance(fn: ast.FunctionDef | ast.AsyncFunctionDef, file: str, graph: str, param: str,
                        values: Mapping[str, object], tensors: frozenset[str]) -> Provenance | None:
    """What the call's value of ``param`` (a float, an int or None, in ``values`` with the
    call's other Python values by name; ``tensors``: its tensor arguments' names) does to
    the key whose printed graph is ``graph``, traced from ``fn`` in ``file``, where every
    read of it is a site the module docstring names: ``same``, ``differs`` or ``unknown``
    (a reason says why); None where a read is no such site (another rule's to read)."""
    with shadowing(file, fn):
        return _float_op_provenance(fn, file, graph, param, values, tensors)


def _float_op_provenance(fn: ast.FunctionDef | ast.AsyncFunctionDef, file: str, graph: str, param: str,
                         values: Mapping[str, object], tensors: frozenset[str]) -> Provenance | None:
    values = call_values(fn, {**left_out_defaults(fn, values, _number, none=True), **values}, param)
    if param not in values:
        return None
    a = fn.args
    kinds = TensorKinds(fn, tensors, frozenset(p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)))
    parents = ast_parents(fn)
    scalars = {k: x for k, x in values.items() if type(x) in (int, float)}
    names = {**scalars, **{k: 0 for k, x in values.items() if x is None}}
    mine: dict[int, tuple[ast.stmt, set[int]]] = {}  # statement -> the ids of its sites' expressions that read param
    for n in ast.walk(fn):
        if not (isinstance(n, ast.Name) and n.id == param):
            continue
        stmt = _statement(n, parents, fn)
        if stmt is None or not isinstance(n.ctx, ast.Load) or not isinstance(stmt, SIMPLE_STATEMENTS):
            return None
        e: ast.expr = n
        while (p := parents.get(e)) is not None and p is not stmt and _is_pure(p, names):
            e = p  # type: ignore[assignment]
        mine.setdefault(id(stmt), (stmt, set()))[1].add(id(e))
    if not mine:
        return None
    ops = [(line, op, call) for f, line, op, call in op_calls(graph) if f == file]
    shown: list[str] = []
    uses: list[FloatUse] = []  # each site's constant as its expr (the float fxcache_core.lookup.float_restart looks for)
    for stmt, exprs in mine.values():
        sites, why = _sites(stmt, kinds)
        if not exprs <= {id(s.expr) for s in sites}:
            return None  # a read that is no site: another rule's to read
        if why:
            return _unknown(param, stmt.lineno, why[0])
        line, last = stmt.lineno, stmt.end_lineno or stmt.lineno
        if in_loop(stmt, parents, fn):
            return _unknown(param, line, "the statement is in a loop")
        if shares_lines(stmt, fn, parents):
            return _unknown(param, line, "another statement shares its lines")
        if any(_value(s.expr, values) is OPAQUE for s in sites):
            return _unknown(param, line, "a value of its ops there is not one fxcache computes (a tensor bound, "
                            "which traces other ops)")
        traced = [(op, call) for n, op, call in ops if line <= n <= last]
        if not traced:
            return _unknown(param, line, "no op of the graph was traced from that statement")
        for op in sorted({s.op for s in sites if id(s.expr) in exprs}):
            want = [_value(s.expr, values) for s in sites if s.op == op]
            if any(w is OPAQUE for w in want):
                return _unknown(param, line, f"a value {op} takes there is not one fxcache computes")
            want = [w for w in want if w is not None]
            have = [printed_value(c.args[1]) if len(c.args) > 1 else OPAQUE for o, c in traced if o == op]
            if any(h is OPAQUE for h in have):
                return _unknown(param, line, f"a {op} op there has no constant scalar")
            where = f"the {op} op{'s' if len(have) != 1 else ''} at line {line}"
            if len(want) != len(have) or not all(same_value(w, h) for w, h in zip(want, have, strict=True)):
                return Provenance("differs", Reason(
                    f"{param}={_text(values[param])} gives {where} {_list(want)}; this key's graph has "
                    f"{_list(have)} there: torch traces another graph", "float-op-differs"))
            shown.append(f"{where}: {_list(have)}")
            uses += [FloatUse(line, last, repr(w), frozenset({op}), text=ast.unparse(s.expr))
                     for s in sites if s.op == op and id(s.expr) in exprs
                     and type(w := _value(s.expr, values)) is float]
    return Provenance("same", Reason(f"{param}={_text(values[param])} gives this key's graph its constants "
                                     f"({'; '.join(shown)})", "float-op-same"), tuple(uses))


def _number(d: ast.expr) -> int | float | None:
    """A default written as an int or float literal; None for anything else."""
    try:
        v = ast.literal_eval(d)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return v if type(v) in (int, float) else None


def _text(v: object) -> str:
    return repr(v)


def _list(vs: list[object]) -> str:
    return "no op" if not vs else ", ".join(map(repr, vs))


def _unknown(param: str, line: int, why: str) -> Provenance:
    return Provenance("unknown", Reason(
        f"{param} reaches this key's graph at line {line}, but {why}: fxcache cannot tell which value it had "
        "when the key was traced", "float-op-unknown"))
