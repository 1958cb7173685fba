"""Which constants of a graph an int, a tuple of ints or a bool argument became.

Dynamo specializes a Python int on a fresh process's first call under ``dynamic=None``
or ``False``, and always specializes a bool and the ints of a tuple that an op takes
as a dim list (``VariableBuilder`` in torch/_dynamo/variables/builder.py): it computes
with the value as a Python constant, so an expression of it (``n * 2``, ``k + 1``) is
folded and only its *result* reaches Dynamo's graph, verbatim, in the place the code
puts it: a slice bound (``x[:, : n * 2]`` is ``getitem(x, (slice(None), slice(None, 8)))``),
the scalar of an arithmetic op with a tensor (``x * (n + 1)``), the ``dim`` and
``keepdim`` of a reduction (``x.mean(dim=dims, keepdim=keepdim)``). The AOTAutograd key
is a hash of that graph, so another value in any of those places is another key.

The cache keeps the graph AOTAutograd traced from it, whose ops carry those values in
fixed places (``aten.slice.Tensor(x, dim, start, end, step)``,
``aten.mul.Tensor(x, 5)``, ``aten.mean.dim(x, [2, 3], True)``) under
``# File: PATH:LINE ... code:`` comments. :func:`value_provenance` reads, never running
either, every read of the parameter in the compiled function's source (``ast``) and
decides only where each is exact:

* each read is the parameter (an int: inside a pure arithmetic expression of the call's
  scalars and literals, :func:`~fxcache_core.lookup.float_exprs.compute`) in one of the
  places above; any other read (a condition, a call of anything else, a local assigned
  from a tuple) leaves it ``unknown``;
* for each statement and place, the ops the statement traced of that kind (the slices
  of that dim; the reductions of that name) are as many as the statement's sites of that
  kind (every subscript at that dim, every call of that reduction), whose values the
  call gives are all computable: then the constants the graph holds there, against the
  values the call gives, say ``same`` or ``differs`` (another graph). A slice over the
  whole dim, which AOTAutograd leaves out (an alias), or a decomposition that moves a
  constant, makes the counts differ: ``unknown``, never guessed;
* an item of a size list (``x.view(b, groups, -1)``, ``y.repeat(groups)``) is read by
  :func:`~fxcache_core.lookup.int_sizes.size_lists`: each call's op in order, the
  items where the code has literals as the code has them;
* an argument of a call that an aten op keeps verbatim (``x.std(dim=d, keepdim=k)``,
  ``x.unsqueeze(d)``, ``x.topk(k)``) is read by
  :func:`~fxcache_core.lookup.int_ops.op_args`, under the same conditions;
* a bool passed as ``F.dropout``'s ``training`` (with a literal ``p`` strictly between
  0 and 1, and no other call of the statement that draws random numbers) is read from
  whether the statement's ops draw random numbers (``aten.rand``): Dynamo's graph has
  the call with the flag, and AOTAutograd traces the draw for True only;
* scalars of arithmetic ops, and of a comparison of a tensor with a scalar (``x > n``:
  ``aten.gt.Scalar(x, n)``), are counted as
  :func:`~fxcache_core.lookup.float_exprs.float_provenance` counts floats: the ops of the
  operator's kind from the statement hold as many int constants (besides the statement's
  own literals) as there are reads.

A tuple reaches the graph as a list (``[2, 3]``): Dynamo's graph keeps which it was, the
printed graph does not, so a tuple's ``same`` holds for a key traced with a tuple (said
in the reason). Nothing here imports torch, runs the source or the graph, or prints.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fxcache_core.functions.params import left_out_defaults
from fxcache_core.lookup.ast_reads import parents as _parents
from fxcache_core.lookup.float_exprs import (
    _OP_STEMS,
    Provenance,
    TensorKinds,
    _depending,
    _is_pure,
    _statement,
    compute,
    pure_locals,
)
from fxcache_core.lookup.int_ops import OPAQUE, op_args, op_site, printed_op, printed_value
from fxcache_core.lookup.int_sizes import size_call, size_lists
from fxcache_core.lookup.py_names import call_values, shadowing
from fxcache_core.lookup.traced_lines import op_calls
from fxcache_core.reasons import Reason

__all__ = ["REDUCTIONS", "value_provenance"]

REDUCTIONS = frozenset({"sum", "mean", "amax", "amin"})
"""Reductions whose aten op keeps ``(self, dim: int[], keepdim=False)`` in that order
(``aten.sum.dim_IntList``, ``aten.mean.dim``, ``aten.amax.default``,
``aten.amin.default``; torch/_decomp leaves them to Inductor), with ``dim`` as the
code gave it."""

_SLICERS = frozenset({"narrow", "split", "chunk", "tensor_split", "unbind", "split_with_sizes", "hsplit",
                      "vsplit", "dsplit", "unflatten"})
"""Calls whose aten ops may include slices: a statement with one leaves slice counts unknown."""

_RANDOM_OPS = frozenset({"rand", "rand_like", "randn", "randn_like", "randint", "bernoulli", "native_dropout",
                         "inductor_random", "inductor_seeds", "inductor_lookup_seed"})
"""aten (and Inductor's) ops that draw random numbers: what ``F.dropout(training=True)``
traces (``aten.rand`` then ``gt``, ``mul``), and ``training=False`` never does."""

_RANDOM_CALLS = frozenset({"rand", "rand_like", "randn", "randn_like", "randint", "randint_like", "randperm",
                           "bernoulli", "bernoulli_", "normal", "normal_", "uniform_", "multinomial", "dropout",
                           "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
                           "exponential_", "random_", "rrelu", "gumbel_softmax"})
"""Calls whose ops may draw random numbers: a statement with one besides the dropout read
leaves the flag unknown."""

INT64_MAX = 9223372036854775807
_ABSENT = "absent"


@dataclass(frozen=True, slots=True)
class _Op:
    """One op line of a printed graph: the statement it was traced from, the op's
    name stem (``slice`` of ``aten.slice.Tensor``), its positional arguments
    (a name is None; a constant, list or bool its value), and the call as parsed."""

    file: str
    line: int
    op: str
    args: tuple[object, ...]
    call: ast.Call


def _graph_ops(graph: str) -> list[_Op]:
    return [_Op(file, line, op, tuple(_literal(a) for a in call.args), call)
            for file, line, op, call in op_calls(graph)]


def _literal(node: ast.expr) -> object:
    """A printed argument's value: an int, float or bool constant, a list of them (as a
    tuple, lists in it too), a negative number; None for anything else (a name, a dtype)."""
    if isinstance(node, ast.List):
        items = tuple(_literal(e) for e in node.elts)
        return items if all(i is not None for i in items) else None
    v = printed_value(node)
    return None if v is OPAQUE else v


@dataclass(frozen=True, slots=True)
class _Site:
    """A place in a statement a value reaches an op: ``kind`` (``slice`` with its ``dim``
    and argument ``pos``; a reduction's name with ``pos`` 1 (dim) or 2 (keepdim);
    ``scalar`` with the operator's stems), the expression there (None: left out); for a
    slice, the parameter it subscripts (``of``, None for anything else) and which
    subscript of the statement it is (``sub``)."""

    kind: str
    pos: int
    dim: int
    expr: ast.expr | None
    default: object
    of: str | None = None
    sub: int = 0


def _sites(stmt: ast.stmt, kinds: TensorKinds) -> list[_Site] | str:
    """Every slice bound and reduction dim/keepdim of ``stmt``; a reason where a slice
    or reduction of it is not one this module reads."""
    out: list[_Site] = []
    for n in ast.walk(stmt):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _SLICERS:
            return f"{n.func.attr}() at line {n.lineno} may slice too"
        if isinstance(n, ast.Subscript) and kinds.tensor(n.value):
            elts = n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice]
            of = n.value.id if isinstance(n.value, ast.Name) and n.value.id not in kinds.assigned else None
            for d, e in enumerate(elts):
                if not isinstance(e, ast.Slice):
                    if any(isinstance(x, ast.Slice) for x in elts[d:]):
                        return f"the subscript at line {n.lineno} mixes slices with other indices"
                    break
                for pos, part, default in ((2, e.lower, 0), (3, e.upper, INT64_MAX), (4, e.step, 1)):
                    out.append(_Site("slice", pos, d, part, default, of, id(n)))
        elif isinstance(n, ast.Call) and (red := _reduction(n, kinds)) is not None:
            name, method = red
            dim = _argument(n, "dim", 0 if method else 1)
            keep = _argument(n, "keepdim", 1 if method else 2)
            if dim is None:
                if keep is not None:
                    return f"{name}() at line {n.lineno} has keepdim without dim"
                out.append(_Site(name, 1, -1, None, _ABSENT))
                continue
            out.append(_Site(name, 1, -1, dim, None))
            out.append(_Site(name, 2, -1, keep, False))
    return out


def _is_dropout(n: ast.Call) -> bool:
    """``F.dropout(...)``, ``nn.functional.dropout(...)``, ``torch.nn.functional.dropout(...)``."""
    f = n.func
    if not (isinstance(f, ast.Attribute) and f.attr == "dropout"):
        return False
    chain = ast.unparse(f.value)
    return chain in ("F", "functional", "nn.functional", "torch.nn.functional")


def _dropout(stmt: ast.stmt, mine: Sequence[_Op]) -> bool | str:
    """Whether the statement's one ``F.dropout`` was traced with ``training=True`` (its
    ops draw random numbers) or False (none does); a reason where that is not readable:
    another call there may draw them, ``p`` is not a literal strictly between 0 and 1
    (``p=0`` or ``1`` trace no draw either way), or its other ops are not in the graph
    (the statement may not have been traced)."""
    drops = [n for n in ast.walk(stmt) if isinstance(n, ast.Call) and _is_dropout(n)]
    others = [n for n in ast.walk(stmt) if isinstance(n, ast.Call) and n not in drops and (
        (isinstance(n.func, ast.Attribute) and n.func.attr in _RANDOM_CALLS)
        or (isinstance(n.func, ast.Name) and n.func.id in _RANDOM_CALLS))]
    if len(drops) != 1 or others:
        return "the statement has another call that may draw random numbers"
    p = _argument(drops[0], "p", 1)
    if p is not None and not (isinstance(p, ast.Constant) and type(p.value) is float and 0 < p.value < 1):
        return "F.dropout's p there is not a literal between 0 and 1"
    random = [o for o in mine if o.op in _RANDOM_OPS]
    if not random and not mine:
        return "no op of the graph was traced from that statement"
    return bool(random)


def _reduction(n: ast.Call, kinds: TensorKinds) -> tuple[str, bool] | None:
    """``(name, is a method)`` for ``x.sum(...)`` on a tensor or ``torch.sum(x, ...)``."""
    f = n.func
    if not isinstance(f, ast.Attribute) or f.attr not in REDUCTIONS:
        return None
    if isinstance(f.value, ast.Name) and f.value.id == "torch":
        return f.attr, False
    return (f.attr, True) if kinds.tensor(f.value) else None


def _argument(n: ast.Call, name: str, pos: int) -> ast.expr | None:
    for k in n.keywords:
        if k.arg == name:
            return k.value
    return n.args[pos] if pos < len(n.args) and not any(isinstance(a, ast.Starred) for a in n.args) else None


def _value(node: ast.expr | None, default: object, values: Mapping[str, object]) -> object:
    """What a site gives its op: an int, a bool, a list of ints (a tuple), or None when
    not computable. A dim given as an int is the list ``[dim]``, as aten takes it."""
    if node is None:
        return default
    if isinstance(node, ast.Name) and isinstance(values.get(node.id), (tuple, bool)):
        v = values[node.id]
    elif isinstance(node, ast.Constant) and type(node.value) is bool:
        v = node.value
    elif isinstance(node, (ast.Tuple, ast.List)):
        items = [_value(e, None, values) for e in node.elts]
        v = tuple(items) if all(type(i) is int for i in items) else None
    elif isinstance(node, ast.Constant) and node.value is None:
        v = None
    else:
        v = compute(ast.unparse(node), {k: x for k, x in values.items() if type(x) in (int, float)})
    if isinstance(v, tuple) and not all(type(i) is int for i in v):
        return None
    return v if type(v) in (int, bool, tuple) else None


def _printed(site: _Site, op: _Op) -> object:
    """The constant ``op`` holds at the site's place (the op's default where it prints none)."""
    if len(op.args) > site.pos:
        return op.args[site.pos]
    return {1: _ABSENT, 2: False, 3: INT64_MAX, 4: 1}.get(site.pos)


def _norm(kind: str, pos: int, v: object) -> object:
    """A reduction's ``dim`` given as one int is the list of it."""
    return (v,) if kind != "slice" and pos == 1 and type(v) is int else v


def value_provenance(fn: ast.FunctionDef | ast.AsyncFunctionDef, file: str, graph: str, param: str,
                     values: Mapping[str, object], tensors: frozenset[str]) -> Provenance | None:
    """What the call's value of ``param`` (an int, a tuple of ints or a bool; None where
    every read is an argument an op keeps, :mod:`~fxcache_core.lookup.int_ops`; in
    ``values`` with the call's other Python scalars and tuples by name) does to the key
    whose printed graph is ``graph``, traced from ``fn`` in ``file`` with it specialized
    (see the module docstring). ``tensors``: the names of the call's tensor arguments.
    None where a read of it computes a float (the float rule's to judge). The call's other
    values that ``fn`` overwrites, and the builtins it rebinds, are not read
    (:mod:`~fxcache_core.lookup.py_names`). Raises nothing."""
    with shadowing(file, fn):
        return _value_provenance(fn, file, graph, param, call_values(fn, values, param), tensors)


def _value_provenance(fn: ast.FunctionDef | ast.AsyncFunctionDef, file: str, graph: str, param: str,
                      values: Mapping[str, object], tensors: frozenset[str]) -> Provenance | None:
    v = values.get(param)
    none = v is None and param in values  # read only where an op keeps it (int_ops: std's dim=None)
    if not (none or type(v) in (int, bool) or (isinstance(v, tuple) and all(type(i) is int for i in v))):
        return None
    a = fn.args
    kinds = TensorKinds(fn, tensors, frozenset(p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)))
    parents = _parents(fn)
    values = call_values(fn, {**left_out_defaults(fn, values, lambda d: _value(d, None, {})), **values}, param)
    scalars = {k: x for k, x in values.items() if type(x) in (int, float)}
    local = _local_values(fn, param, scalars) if type(v) is int else {}
    scalars.update(local)
    values = {**values, **local}
    defining = {id(x) for name in local for x in ast.walk(_bound(fn, name))}
    reads: list[tuple[ast.stmt, ast.expr, str]] = []  # statement, the pure expression, its place
    for n in ast.walk(fn):
        if not (isinstance(n, ast.Name) and (n.id == param or n.id in local)) or id(n) in defining:
            continue
        if n.id != param and not isinstance(n.ctx, ast.Load):
            continue  # the one assignment of a local computed from it
        if _none_test(n, parents):
            continue  # `k is not None`: the same for every value of it (the branch rule's to read)
        stmt = _statement(n, parents, fn)
        if stmt is None or not isinstance(n.ctx, ast.Load):
            return _unknown(param, n.lineno, "it is assigned, or read in a nested function")
        e: ast.expr = n
        if type(v) is int or n.id != param:
            while (p := parents.get(e)) is not None and p is not stmt and _is_pure(p, scalars):
                e = p  # type: ignore[assignment]
            if type(compute(ast.unparse(e), scalars)) is float:
                return None
        place = _place(e, parents, kinds)
        if none and place != "ops":
            return None
        if place is None:
            return _unknown(param, n.lineno, f"{ast.unparse(e)} is used where no op's constant is read")
        reads.append((stmt, e, place))
    if not reads:
        return None  # no read reaches an op's constant: the other evidence decides
    ops = [o for o in _graph_ops(graph) if o.file == file]
    shown: list[str] = []
    for stmt in {id(s): s for s, _, _ in reads}.values():
        line, last = stmt.lineno, stmt.end_lineno or stmt.lineno
        mine = [o for o in ops if line <= o.line <= last]
        if not mine:
            return _unknown(param, line, "no op of the graph was traced from that statement")
        places = {p for s, _, p in reads if s is stmt}
        if "scalar" in places:
            got = _scalars(stmt, [e for s, e, p in reads if s is stmt and p == "scalar"], mine, scalars, kinds)
            if isinstance(got, Reason):
                return _unknown(param, line, str(got))
            if got is not True:
                return Provenance("differs", Reason(
                    f"{param} reaches this key's graph at line {line} as {got}: torch traces another graph "
                    f"({param}={_text(v)})", "baked-value-differs"))
            shown.append(f"the scalars at line {line}")
        if "dropout" in places:
            got = _dropout(stmt, mine)
            if isinstance(got, str):
                return _unknown(param, line, got)
            if got is not v:
                return Provenance("differs", Reason(
                    f"{param}={v} at line {line}: F.dropout's ops {'are' if got else 'are not'} in this key's "
                    f"graph (it was traced with training={got}): torch traces another graph", "baked-value-differs"))
            shown.append(f"F.dropout's ops at line {line}, {'there' if got else 'not there'}")
        if "sizes" in places:
            got = size_lists(stmt, [e for s, e, p in reads if s is stmt and p == "sizes"],
                             [(o.op, o.args) for o in mine], values, kinds.tensor)
            if isinstance(got, str):
                return _unknown(param, line, got)
            if got is not True:
                return Provenance("differs", Reason(
                    f"{param}={_text(v)} puts {got[0]} in the size lists at line {line}; this key's graph has "
                    f"{got[1]} there: torch traces another graph", "baked-value-differs"))
            shown.append(f"the size lists at line {line}")
        if "ops" in places:
            got = op_args(stmt, [e for s, e, p in reads if s is stmt and p == "ops"], [printed_op(o.op, o.call) for o in mine],
                          values, kinds.tensor)
            if isinstance(got, str):
                return _unknown(param, line, got)
            if got is not True:
                return Provenance("differs", Reason(
                    f"{param}={_text(v)} gives the ops at line {line} {got[0]}; this key's graph has {got[1]} there: "
                    "torch traces another graph", "baked-value-differs"))
            shown.append(f"the arguments of its ops at line {line}")
        if places - {"scalar", "dropout", "sizes", "ops"}:
            sites = _sites(stmt, kinds)
            if isinstance(sites, str):
                return _unknown(param, line, sites)
            groups: dict[tuple[str, int, int], list[_Site]] = {}
            for s in sites:
                groups.setdefault((s.kind, s.pos, s.dim), []).append(s)
            whole = _whole_slices(sites, values)
            if whole:
                shown.append(f"the slice(s) over a whole dim at line {line}, left out of the graph")
            for (kind, pos, dim), every in groups.items():
                if not any(isinstance(x, ast.Name) and x.id in {param, *local} for s in every if s.expr is not None
                           for x in ast.walk(s.expr)):
                    continue
                group = [s for s in every if (s.sub, s.dim) not in whole]
                stem_ops = [o for o in mine if o.op == kind and (kind != "slice" or (o.args[1:2] == (dim,)))]
                want = [_norm(kind, pos, _value(s.expr, s.default, values)) for s in group]
                if any(w is None for w in want):
                    return _unknown(param, line, f"a {kind} there takes a value fxcache cannot compute")
                if len(stem_ops) != len(group):
                    return _unknown(param, line, f"its graph has {len(stem_ops)} {kind} op(s) from it, for "
                                    f"{len(group)} in the code (one over a whole dim is left out)")
                have = [_printed(every[0], o) for o in stem_ops]
                where = f"{kind} {'dim ' + str(dim) + ' ' if kind == 'slice' else ''}argument {pos}"
                if Counter(map(_key, have)) != Counter(map(_key, want)):
                    return Provenance("differs", Reason(
                        f"{param}={_text(v)} gives the {where} at line {line} "
                        f"{', '.join(sorted(_text(w) for w in want))}; this key's graph has "
                        f"{', '.join(sorted(_text(h) for h in have))} there: torch traces another graph",
                        "baked-value-differs"))
                shown.append(f"the {where} at line {line}")
    tuple_note = " (traced with a tuple, as the call gives it: a list traces another graph)" \
        if isinstance(v, tuple) else ""
    return Provenance("same", Reason(f"{param}={_text(v)} gives this key's graph its constants "
                                     f"({'; '.join(shown)}){tuple_note}", "baked-value-same"))


def _local_values(fn: ast.FunctionDef | ast.AsyncFunctionDef, param: str,
                  scalars: Mapping[str, object]) -> dict[str, int | float]:
    """The locals bound once to a pure expression that reads ``param`` (directly or through
    another: :func:`~fxcache_core.lookup.float_exprs.pure_locals`), each with the value the
    call gives it (``m = min(n, x.shape[1])``: Dynamo computes it with the baked ``n``);
    one whose value is not computable is left out (a read of ``param`` there is then read
    where no op's constant is)."""
    local = pure_locals(fn, scalars)
    known: dict[str, object] = dict(scalars)
    out: dict[str, int | float] = {}
    for name, expr in local.items():  # in the order they can be computed
        r = compute(ast.unparse(expr), known)
        if r is None:
            continue
        known[name] = r
        if name in _depending(local, param):
            out[name] = r
    return out


def _bound(fn: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> ast.AST:
    """The value of the one assignment of the local ``name`` (:func:`_local_values`')."""
    for n in ast.walk(fn):
        if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None and any(
                isinstance(t, ast.Name) and t.id == name for t in (n.targets if isinstance(n, ast.Assign)
                                                                   else [n.target])):
            return n.value
    return ast.Constant(None)


def _whole_slices(sites: Sequence[_Site], values: Mapping[str, object]) -> set[tuple[int, int]]:
    """The subscripts' dims (``sub``, ``dim``) that slice a tensor parameter over the whole
    of a size the key fixes: start 0, end at or past the size, step 1. AOTAutograd leaves
    such a slice out of its graph (an ``aten.alias``, checked with torch 2.13: ``x[:, :8]``,
    ``x[:, 0:100]`` of a width 8; ``x[:, -8:]`` keeps its slice)."""
    parts: dict[tuple[int, int], dict[int, object]] = {}
    for s in sites:
        if s.kind == "slice" and s.of is not None:
            parts.setdefault((s.sub, s.dim), {})[s.pos] = _value(s.expr, s.default, values)
    out: set[tuple[int, int]] = set()
    for (sub, dim), p in parts.items():
        of = next(s.of for s in sites if s.kind == "slice" and (s.sub, s.dim) == (sub, dim))
        size = values.get(f"{of}.shape[{dim}]")
        lo, hi, step = p.get(2), p.get(3), p.get(4)
        if type(size) is int and type(lo) is int and type(hi) is int and type(step) is int \
                and lo == 0 and step == 1 and hi >= size:
            out.add((sub, dim))
    return out


def _none_test(n: ast.Name, parents: Mapping[ast.AST, ast.AST]) -> bool:
    """Whether ``n`` is compared with None by identity (``n is None``, ``n is not None``)."""
    p = parents.get(n)
    return isinstance(p, ast.Compare) and len(p.ops) == 1 and isinstance(p.ops[0], (ast.Is, ast.IsNot)) \
        and any(isinstance(c, ast.Constant) and c.value is None for c in (p.left, *p.comparators))


def _key(v: object) -> object:
    return (type(v).__name__, v)


def _text(v: object) -> str:
    return "[" + ", ".join(map(str, v)) + "]" if isinstance(v, tuple) else str(v)


# The aten ops (their names' stems) a comparison between a tensor and a Python scalar
# becomes, with the scalar on either side (``n < x`` is ``x > n``: ``aten.gt.Scalar(x, n)``).
_CMP_STEMS: dict[type[ast.cmpop], frozenset[str]] = {
    ast.Gt: frozenset({"gt", "lt"}), ast.Lt: frozenset({"gt", "lt"}), ast.GtE: frozenset({"ge", "le"}),
    ast.LtE: frozenset({"ge", "le"}), ast.Eq: frozenset({"eq"}), ast.NotEq: frozenset({"ne"}),
}


def _stems(p: ast.AST | None) -> frozenset[str]:
    """The aten op stems of an arithmetic operator or a single comparison ``p``; empty else."""
    if isinstance(p, ast.BinOp):
        return _OP_STEMS.get(type(p.op), frozenset())
    if isinstance(p, ast.Compare) and len(p.ops) == 1:
        return _CMP_STEMS.get(type(p.ops[0]), frozenset())
    return frozenset()


def _place(e: ast.expr, parents: Mapping[ast.AST, ast.AST], kinds: TensorKinds) -> str | None:
    """Where the read's expression goes: ``scalar`` (an operand of arithmetic with a
    tensor), ``site`` (a slice bound of a tensor's subscript, a reduction's dim or
    keepdim), ``dropout`` (``F.dropout``'s ``training``), ``sizes`` (an item of a view's,
    reshape's, repeat's or expand's size list: :mod:`fxcache_core.lookup.int_sizes`), or None."""
    p = parents.get(e)
    if isinstance(p, ast.BinOp) and type(p.op) in _OP_STEMS:
        other = p.right if p.left is e else p.left
        return "scalar" if kinds.tensor(other) else None
    if isinstance(p, ast.Compare) and _stems(p):
        other = p.comparators[0] if p.left is e else p.left
        return "scalar" if kinds.tensor(other) else None
    if isinstance(p, ast.Slice):
        sub = parents.get(p)
        if isinstance(sub, ast.Tuple):
            sub = parents.get(sub)
        return "site" if isinstance(sub, ast.Subscript) and kinds.tensor(sub.value) else None
    if size_call(e, parents, kinds.tensor) is not None:
        return "sizes"
    if op_site(e, parents, kinds.tensor) is not None:
        return "ops"  # an argument an op keeps verbatim: fxcache_core.lookup.int_ops
    call = parents.get(p) if isinstance(p, ast.keyword) else p
    if isinstance(call, ast.Call) and _is_dropout(call) and _argument(call, "training", 2) is e:
        return "dropout"
    if isinstance(call, ast.Call) and e is not call.func and _reduction(call, kinds) is not None:
        _, method = _reduction(call, kinds)  # type: ignore[misc]
        for name, pos in (("dim", 0 if method else 1), ("keepdim", 1 if method else 2)):
            if _argument(call, name, pos) is e:
                return "site"
    return None


def _scalars(stmt: ast.stmt, exprs: Sequence[ast.expr], mine: Sequence[_Op], scalars: Mapping[str, object],
             kinds: TensorKinds) -> bool | str | Reason:
    """The int scalars of the statement's arithmetic ops against the reads' values:
    True (the same), the graph's constants in words (they differ), a Reason (unknown)."""
    parents = _parents(stmt)
    stems = frozenset().union(*(_stems(parents.get(e)) for e in exprs))
    want: Counter[int] = Counter()
    for e in exprs:
        r = compute(ast.unparse(e), scalars)  # type: ignore[arg-type]
        if type(r) is not int:
            return Reason(f"{ast.unparse(e)} cannot be computed as an int for the call's values",
                          "baked-value-unknown")
        want[r] += 1
    literals: Counter[int] = Counter()
    for n in ast.walk(stmt):
        if not (isinstance(n, ast.Constant) and type(n.value) is int):
            continue
        top: ast.AST = n
        while (p := parents.get(top)) is not None and _is_pure(p, scalars):
            top = p
        if any(isinstance(x, ast.Name) and x.id in scalars for x in ast.walk(top)):
            continue
        p = parents.get(top)
        if _stems(p) & stems:
            r = compute(ast.unparse(top), scalars)  # literals and fixed sizes
            if type(r) is int:
                literals[r] += 1
    found: Counter[int] = Counter(a for o in mine if o.op in stems for a in o.args[1:] if type(a) is int)
    found -= literals
    if sum(found.values()) != sum(want.values()):
        return Reason(f"its {'/'.join(sorted(stems))} ops hold {sum(found.values())} int constant(s) besides the "
                      f"statement's own, for {sum(want.values())} read(s)", "baked-value-unknown")
    if found == want:
        return True
    return ", ".join(map(str, sorted(want.elements()))) + " where the graph has " \
        + ", ".join(map(str, sorted(found.elements())))


def _unknown(param: str, line: int, why: str) -> Provenance:
    return Provenance("unknown", Reason(
        f"{param} reaches this key's graph at line {line}, but {why}: fxcache cannot tell which value it had "
        "when the key was traced", "baked-value-unknown"))
