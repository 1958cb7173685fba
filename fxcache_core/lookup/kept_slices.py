"""An int parameter that only says how many positions a slice keeps (``logits_to_keep``).

A causal LM's ``forward`` keeps the last ``k`` positions of its hidden states before the
vocabulary projection, inline::

    s = slice(-logits_to_keep, None) if isinstance(logits_to_keep, int) else logits_to_keep
    logits = self.lm_head(hidden_states[:, s, :])

or through a helper of another module (transformers' ``slice_logits_to_keep``)::

    if isinstance(logits_to_keep, int):
        logits_to_keep = slice(-logits_to_keep, None)
    return hidden_states[:, logits_to_keep, :]

Dynamo bakes the int in (a fresh process's first call under ``dynamic=None``): the
subscript's ops hold the slice's start, read here from the printed graph, never run
(checked with torch 2.13, CPU):

* a start of 0 (``k=0``, the default) is a slice over the whole dim: where the key's
  sizes are static the subscript traces one ``aten.alias`` and no slice; where that dim
  is symbolic (automatic dynamic's second key), ``aten.slice.Tensor(x, dim, 0, INT64_MAX)``;
* a negative start ``-k`` is ``aten.slice.Tensor(x, dim, -k, INT64_MAX)`` for every
  size, ``k`` at or past the size too (``k=8`` and ``k=100`` of a length 8 are two keys,
  neither the ``k=0`` one).

:func:`kept_slice` decides only where every read of the parameter is in that one
pattern (the ``isinstance`` tests are the same for every int), the statement has no
other slicing subscript nor call, and the graph holds exactly one such op of it (an
``alias``, or a slice at that dim, with constant bounds): the start there against the
call's is ``same`` or ``differs``. A start the call makes positive (a negative ``k``),
a start the graph holds as a symbol (the int a SymInt), or any other count is
``unknown``. Where the code is not this pattern, None: the other rules read it.
"""

from __future__ import annotations

import ast
import os
import weakref
from collections.abc import Mapping, Sequence

from fxcache_core.functions.params import left_out_defaults
from fxcache_core.functions.trees import inside_function, module_node
from fxcache_core.lookup.ast_reads import literal_int
from fxcache_core.lookup.ast_reads import parents as _parents
from fxcache_core.lookup.float_exprs import Provenance, _statement, compute, unknown_provenance
from fxcache_core.lookup.py_names import _bindings, call_values, shadowing
from fxcache_core.lookup.traced_lines import op_calls
from fxcache_core.reasons import Reason

__all__ = ["kept_slice", "kept_slice_provenance"]

INT64_MAX = 9223372036854775807
_BUILTINS = frozenset({"slice", "isinstance", "int"})
_SLICING = frozenset(
    {
        "narrow",
        "split",
        "chunk",
        "tensor_split",
        "unbind",
        "split_with_sizes",
        "hsplit",
        "vsplit",
        "dsplit",
        "unflatten",
        "alias",
        "detach",
        "view_as",
    }
)
"""Calls whose ops may include a slice or an alias: a statement with one is not read."""


def kept_slice_provenance(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    file: str,
    graph: str,
    param: str,
    values: Mapping[str, object],
) -> Provenance | None:
    """:func:`kept_slice` for a call's Python values by name (``values``): a parameter the
    call leaves out is read at its literal int or float default, the values ``fn``
    overwrites are dropped and the builtins it rebinds are not read
    (:mod:`~fxcache_core.lookup.py_names`). Call it only for a frame Dynamo compiled as
    written: under a decorator's wrapper the function may get other values than the call's."""
    with shadowing(file, fn):
        given = {**left_out_defaults(fn, values, _scalar), **values}
        return kept_slice(fn, file, graph, param, call_values(fn, given, param))


def _scalar(node: ast.expr) -> int | float | None:
    """A literal default's int (``-3`` too) or float; None for anything else."""
    if isinstance(node, ast.Constant) and type(node.value) is float:
        return node.value
    return literal_int(node)


def kept_slice(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    file: str,
    graph: str,
    param: str,
    values: Mapping[str, object],
) -> Provenance | None:
    """What the call's int ``values[param]`` does to the key whose printed forward graph
    is ``graph``, where ``fn`` (in ``file``) reads ``param`` only as the start of a kept
    slice (see the module docstring); None where it reads it otherwise."""
    v = values.get(param)
    if type(v) is not int:
        return None
    reads = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == param]
    if not reads or any(not isinstance(n.ctx, ast.Load) for n in reads) or _rebinds(file, fn):
        return None
    parents = _parents(fn)
    scalars = {k: x for k, x in values.items() if type(x) in (int, float)}
    site = _inline(fn, file, param, reads, parents, scalars) or _helper(
        fn, file, param, reads, parents, v
    )
    if site is None:
        return None
    where, stmt, dim, start = site
    return _judge(
        graph,
        where,
        stmt,
        dim,
        start,
        param,
        v,
        "" if where == file else f" of {os.path.basename(where)}",
    )


def _rebinds(file: str, fn: ast.AST) -> bool:
    """Whether ``file``'s module or ``fn`` binds ``slice``, ``isinstance`` or ``int``, or
    binds ``torch`` other than by ``import torch`` (``import torch.x``) at module level
    (then the tests read here mean something else); True where the module is not readable."""
    module = module_node(file)
    if module is None:
        return True
    if _bindings(fn, nested=True) & {*_BUILTINS, "torch"}:
        return True
    got = _MODULE_REBINDS.get(module)
    if got is None:
        got = _MODULE_REBINDS[module] = _module_rebinds(module)
    return got


_MODULE_REBINDS: weakref.WeakKeyDictionary[ast.Module, bool] = weakref.WeakKeyDictionary()
""":func:`_module_rebinds` per parsed module, kept while its tree is: many keys ask of one module."""


def _module_rebinds(module: ast.Module) -> bool:
    """:func:`_rebinds` of the module alone."""
    if _bindings(module, nested=False) & _BUILTINS or any(
        isinstance(n, ast.Global) and {*_BUILTINS, "torch"} & set(n.names) for n in ast.walk(module)
    ):
        return True
    for s in module.body:
        if isinstance(s, ast.Import):
            if any(a.asname == "torch" for a in s.names):
                return True
        elif "torch" in _bindings(_wrap(s), nested=False):
            return True
    return False


def _slice_start(node: ast.expr, name: str, scalars: Mapping[str, object]) -> int | None:
    """``slice(E, None)`` (a ``None`` or ``1`` step): the value of ``E`` for ``scalars``,
    where ``E`` reads ``name``; None for anything else."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "slice"
        and not node.keywords
        and 2 <= len(node.args) <= 3
    ):
        return None
    lo, *rest = node.args
    if not (isinstance(rest[0], ast.Constant) and rest[0].value is None):
        return None
    if len(rest) == 2 and not (
        isinstance(rest[1], ast.Constant)
        and rest[1].value in (None, 1)
        and type(rest[1].value) is not bool
    ):
        return None
    if not any(isinstance(x, ast.Name) and x.id == name for x in ast.walk(lo)):
        return None
    r = compute(ast.unparse(lo), scalars)
    return r if type(r) is int else None


def _is_int_test(test: ast.expr, name: str) -> bool | None:
    """What ``test`` is for an int ``name`` that the code has not rebound: True for
    ``isinstance(name, int)``, False for ``isinstance(name, torch.Tensor)``, ``and``/``or``/
    ``not`` of those as Python evaluates them (left to right, stopping where the result
    is known); None for anything else."""
    if (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Name)
        and test.func.id == "isinstance"
        and len(test.args) == 2
        and not test.keywords
        and isinstance(test.args[0], ast.Name)
        and test.args[0].id == name
    ):
        kind = ast.unparse(test.args[1])
        return True if kind == "int" else False if kind == "torch.Tensor" else None
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        r = _is_int_test(test.operand, name)
        return None if r is None else not r
    if isinstance(test, ast.BoolOp):
        stop = isinstance(test.op, ast.Or)  # the operand value that decides the whole
        for operand in test.values:
            r = _is_int_test(operand, name)
            if r is None:
                return None
            if r is stop:
                return stop
        return not stop
    return None


def _subscript_at(sub: ast.AST | None, name: str) -> int | None:
    """The dim of ``T[:, name, :]`` where ``name`` is, every other index a bare ``:``."""
    if not isinstance(sub, ast.Subscript) or not isinstance(sub.value, (ast.Name, ast.Attribute)):
        return None
    elts = sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice]
    dims = [d for d, e in enumerate(elts) if isinstance(e, ast.Name) and e.id == name]
    if len(dims) != 1 or not all(
        isinstance(e, ast.Slice) and e.lower is None and e.upper is None and e.step is None
        for d, e in enumerate(elts)
        if d != dims[0]
    ):
        return None
    return dims[0]


def _inline(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    file: str,
    param: str,
    reads: Sequence[ast.Name],
    parents: Mapping[ast.AST, ast.AST],
    scalars: Mapping[str, object],
) -> tuple[str, ast.stmt, int, int] | None:
    """``s = slice(E, None) [if isinstance(param, int) else param]`` then one read of ``s``
    as ``T[:, s, :]``, both statements of ``fn``'s body: (``file``, the subscript's
    statement, its dim, the start)."""
    assign = next(
        (s for s in fn.body if isinstance(s, ast.Assign) and reads[0] in set(ast.walk(s.value))),
        None,
    )
    if assign is None or len(assign.targets) != 1 or not isinstance(assign.targets[0], ast.Name):
        return None
    if any(r not in set(ast.walk(assign.value)) for r in reads):
        return None
    value, local = assign.value, assign.targets[0].id
    if isinstance(value, ast.IfExp):
        if _is_int_test(value.test, param) is not True or not (
            isinstance(value.orelse, ast.Name) and value.orelse.id == param
        ):
            return None
        value = value.body
    start = _slice_start(value, param, scalars)
    uses = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == local]
    if start is None or local == param or len(uses) != 2 or uses.count(assign.targets[0]) != 1:
        return None
    use = next(u for u in uses if u is not assign.targets[0])
    sub = parents.get(use)
    sub = parents.get(sub) if isinstance(sub, ast.Tuple) else sub
    dim = _subscript_at(sub, local)
    stmt = _statement(use, parents, fn)
    if dim is None or stmt is None or stmt not in fn.body or stmt.lineno <= assign.lineno:
        return None
    return file, stmt, dim, start


def _helper(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    file: str,
    param: str,
    reads: Sequence[ast.Name],
    parents: Mapping[ast.AST, ast.AST],
    v: int,
) -> tuple[str, ast.stmt, int, int] | None:
    """One read of ``param``, an argument of a call ``h(...)`` in a statement of ``fn``'s
    body, where ``h`` is a module-level function of ``file`` or imported from a module
    next to it (``from ..m import h``) whose body keeps a slice of the argument
    (module docstring): (the helper's file, its ``return`` statement, the dim, the start)."""
    if len(reads) != 1:
        return None
    call = parents.get(reads[0])
    kw = None
    if isinstance(call, ast.keyword):
        kw, call = call.arg, parents.get(call)
    if (
        not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name))
        or _statement(call, parents, fn) not in fn.body
        or any(isinstance(a, ast.Starred) for a in call.args)
        or any(k.arg is None for k in call.keywords)
    ):
        return None
    if call.func.id in _bindings(fn, nested=True) or inside_function(file, fn):
        return None  # the name may be a local's or a closure's, not the module's def
    found = _resolve(file, call.func.id)
    if found is None:
        return None
    where, h = found
    a = h.args
    names = [p.arg for p in (*a.posonlyargs, *a.args)]
    if kw is None:
        i = next(i for i, x in enumerate(call.args) if x is reads[0])
        if i >= len(names):
            return None
        q = names[i]
    elif kw in {p.arg for p in (*a.args, *a.kwonlyargs)}:
        q = kw
    else:
        return None
    if _rebinds(where, h):
        return None
    return _helper_body(where, h, q, v)


def _helper_body(
    where: str, h: ast.FunctionDef, q: str, v: int
) -> tuple[str, ast.stmt, int, int] | None:
    """``h``'s statements for ``q`` the int ``v``: tests of its type (skipped or entered as
    they read), one ``q = slice(E, None)``, then ``return T[:, q, :]``."""
    start: int | None = None
    for i, s in enumerate(h.body):
        if (
            i == 0
            and isinstance(s, ast.Expr)
            and isinstance(s.value, ast.Constant)
            and isinstance(s.value.value, str)
        ):
            continue
        if isinstance(s, ast.If) and start is None:
            t = _is_int_test(s.test, q)
            if t is None or (not t and s.orelse):
                return None
            if not t:
                continue
            if (
                s.orelse
                or len(s.body) != 1
                or not isinstance(s.body[0], ast.Assign)
                or len(s.body[0].targets) != 1
                or not (isinstance(s.body[0].targets[0], ast.Name) and s.body[0].targets[0].id == q)
            ):
                return None
            start = _slice_start(s.body[0].value, q, {q: v})
            if start is None:
                return None
            continue
        if isinstance(s, ast.Return) and start is not None:
            dim = _subscript_at(s.value, q)
            return None if dim is None else (where, s, dim, start)
        return None
    return None


def _resolve(file: str, name: str) -> tuple[str, ast.FunctionDef] | None:
    """The module-level ``def name`` that ``name`` is in ``file``: its own, or the one a
    relative ``from ..m import name`` brings from a readable file (``m.py``, ``m/__init__.py``);
    None where ``file`` binds ``name`` otherwise or more than once, or the def is decorated."""
    module = module_node(file)
    if module is None:
        return None
    binds = [n for n in module.body if name in _bindings(_wrap(n), nested=False)]
    if len(binds) != 1 or any(
        isinstance(n, ast.Global) and name in n.names for n in ast.walk(module)
    ):
        return None
    b = binds[0]
    if isinstance(b, ast.FunctionDef):
        return (file, b) if not b.decorator_list else None
    if not (isinstance(b, ast.ImportFrom) and b.level >= 1 and b.module):
        return None
    alias = next((a for a in b.names if (a.asname or a.name) == name), None)
    if alias is None:
        return None
    base = os.path.dirname(file)
    for _ in range(b.level - 1):
        base = os.path.dirname(base)
    stem = os.path.join(base, *b.module.split("."))
    for path in (stem + ".py", os.path.join(stem, "__init__.py")):
        other = module_node(path)
        if other is None:
            continue
        defs = [n for n in other.body if alias.name in _bindings(_wrap(n), nested=False)]
        if len(defs) == 1 and isinstance(defs[0], ast.FunctionDef) and not defs[0].decorator_list:
            return path, defs[0]
        return None
    return None


def _wrap(stmt: ast.stmt) -> ast.Module:
    return ast.Module(body=[stmt], type_ignores=[])


def _judge(
    graph: str, where: str, stmt: ast.stmt, dim: int, start: int, param: str, v: int, of: str
) -> Provenance:
    """The subscript's op in ``graph`` (traced from ``stmt`` of ``where``, ``of`` naming that
    file where it is a helper's) against the call's ``start``."""
    line, last = stmt.lineno, stmt.end_lineno or stmt.lineno
    if start > 0:
        return _unknown(
            param, line, f"{param}={v} makes the slice start at {start}, which is not read here"
        )
    # Any other subscript (``x[...]``, ``y.shape[1]``) may trace an alias or a slice of its
    # own on these lines, or make the kept slice's a size read that traces no op.
    other = [n for n in ast.walk(stmt) if isinstance(n, ast.Subscript)]
    if len(other) != 1 or any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _SLICING
        for n in ast.walk(stmt)
    ):
        return _unknown(param, line, "the statement slices something else too")
    mine = [(op, call) for f, ln, op, call in op_calls(graph) if f == where and line <= ln <= last]
    slices = [c for op, c in mine if op == "slice" and len(c.args) >= 2 and literal_int(c.args[1]) == dim]
    aliases = [c for op, c in mine if op == "alias"]
    if len(slices) + len(aliases) != 1:
        return _unknown(
            param,
            line,
            f"its graph has {len(slices)} slice(s) at dim {dim} and {len(aliases)} "
            "alias(es) from that statement, for one subscript",
        )
    if aliases:
        have = 0
    else:
        args = [literal_int(a) for a in slices[0].args] + [None] * 3
        have, end, step = args[2] if len(slices[0].args) > 2 else 0, args[3], args[4]
        if len(slices[0].args) <= 3:
            end = INT64_MAX
        if len(slices[0].args) <= 4:
            step = 1
        if have is None or end != INT64_MAX or step != 1 or slices[0].keywords:
            return _unknown(
                param,
                line,
                f"the slice at dim {dim} there holds no constant start, or an end or step "
                "(the int a SymInt, or another slice)",
            )
    held = "the whole dim" if have == 0 else f"the start {have}"
    if have != start:
        return Provenance(
            "differs",
            Reason(
                f"{param}={v} makes the slice at line {line}{of} start at {start}; this key's graph slices {held} "
                "there: torch traces another graph",
                "baked-value-differs",
            ),
        )
    return Provenance(
        "same",
        Reason(
            f"{param}={v} gives this key's graph its slice at line {line}{of} ({held} at dim {dim})",
            "baked-value-same",
        ),
    )


def _unknown(param: str, line: int, why: str) -> Provenance:
    return unknown_provenance(param, line, why, code="baked-value-unknown")
