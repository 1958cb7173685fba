"""Which constant of a graph a Python float argument became, and through which expression.

Under ``dynamic=None`` a fresh process's first call specializes a float argument
(``VariableBuilder.wrap_symfloat`` in torch/_dynamo/variables/builder.py): Dynamo
computes with it as a Python constant, so an expression of it (``-lr``,
``1 / scale``, ``2 * lim``) is folded by Python and only the *result* reaches the
graph, as a scalar argument of one op (``aten.add.Tensor(p, g, alpha = -0.1)``).
Dynamo guards the float's value (``CONSTANT_MATCH``, not kept in the cache); a call
with another value traces again, and torch looks up the key of the graph it gets:
this key exactly when every constant the expressions give is the same.

:func:`float_provenance` reads that off two things the cache points at, never
running either: the compiled function's source (``ast``, the ``def`` that
:func:`~fxcache_core.functions.trees.function_node` finds), for every read of the
parameter and the expression around it; and the key's stored graph, whose ops carry
``# File: PATH:LINE in FN, code: ...`` comments, for the constants of the ops traced
from each of those statements. It decides only where that is exact:

* every read is a *value* read: the parameter inside a pure expression (constants,
  the call's scalar arguments and the sizes the key fixes, ``+ - * / // % **``,
  comparisons, ``a if c else b``, ``min``/``max``/``abs``/``round``/``math.floor`` and
  the rest of :mod:`~fxcache_core.lookup.py_exprs`' builtins)
  whose result is an operand of an arithmetic operator with a tensor (``x * E``) or
  an argument of a torch function or a tensor method (``torch.clamp(x, max=E)``,
  ``x.add(y, alpha=E)``). Anything else (a condition, a call of a helper, a local
  assigned from it, a closure) is *opaque*: the value that reaches
  the graph is not computable here, and the answer is ``unknown``;
* the ops traced from the statement that hold the expression, of the op the
  context names (``mul`` for ``*``, ``clamp`` for ``torch.clamp``), hold exactly as
  many float constants, once the statement's own float literals are set aside, as
  the statement has reads: those are the expressions' values when the key was
  traced. The call's values, computed by the same expressions (:func:`evaluate`, a
  closed arithmetic whitelist), either are those constants (``same``) or are not
  (``differs``: another graph). Anything less clear is ``unknown``.

Nothing here imports torch, runs the source or the graph, or prints.
"""

from __future__ import annotations

import ast
import copy
import re
import struct
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

from fxcache_core.lookup.ast_reads import SIMPLE_STATEMENTS, in_loop
from fxcache_core.lookup.ast_reads import parents as _parents
from fxcache_core.lookup.ast_reads import root_name as _root_name
from fxcache_core.lookup.float_branches import IfSide, if_sides
from fxcache_core.lookup.provenance import FloatUse as FloatUse
from fxcache_core.lookup.provenance import Provenance as Provenance
from fxcache_core.lookup.provenance import unknown_provenance as unknown_provenance
from fxcache_core.lookup.py_exprs import MAX_POW, compute, truth
from fxcache_core.lookup.py_exprs import is_pure as _is_pure
from fxcache_core.lookup.py_names import assigned_names, call_values, shadowing, tested
from fxcache_core.lookup.sym_floats import local_lines, sym_node_operands, symbolic_group
from fxcache_core.lookup.traced_lines import OP_RE, traced_lines
from fxcache_core.reasons import Reason

__all__ = ["DECOMPOSED", "MAX_POW", "FloatUse", "Provenance", "compute", "evaluate", "float_provenance", "graph_ops", "statement_reads"]

# The aten op (its name's stem) that a Python operator between a tensor and a scalar
# becomes in Dynamo's graph (torch/_dynamo/variables/tensor.py: the operator's torch
# function; aten's decompositions keep these).
_OP_STEMS: dict[type[ast.operator], frozenset[str]] = {
    ast.Add: frozenset({"add"}), ast.Sub: frozenset({"sub", "rsub"}), ast.Mult: frozenset({"mul"}),
    ast.Div: frozenset({"div"}), ast.Pow: frozenset({"pow"}),
}
_ALSO_OPS = {"where": frozenset({"scalar_tensor"})}  # where(c, x, 0.5) is where.self(c, x, scalar_tensor(0.5))
_DECOMPOSED_ARGS: dict[str, tuple[str, int, int, frozenset[str]]] = {
    # x.masked_fill(m, 0.5) is where.self(m, scalar_tensor(0.5), x)
    "masked_fill": ("value", 1, 2, frozenset({"scalar_tensor"})),
    "masked_fill_": ("value", 1, 2, frozenset({"scalar_tensor"})),
    # F.layer_norm(x, s, eps=e): rsqrt(add.Tensor(var, e)); F.group_norm(x, g, eps=e) the same
    "layer_norm": ("eps", -1, 4, frozenset({"add"})),
    "group_norm": ("eps", -1, 4, frozenset({"add"})),
}
"""A torch function or tensor method -> the one float argument of it that its
decomposition keeps verbatim as an op's scalar (its keyword, its position among a
method's arguments and among a function's, -1 where it has none) and the stems of the
ops that hold it: read only there (any other argument of the call is opaque to it).
Checked against torch 2.13's AOTAutograd graphs on CPU."""
DECOMPOSED = frozenset(_DECOMPOSED_ARGS)
"""Calls whose float reaches the printed graph only inside their decomposition's ops
(:data:`_DECOMPOSED_ARGS`): Dynamo's graph calls the function itself with it, an op
``tensorify_python_scalars`` cannot convert (:mod:`fxcache_core.lookup.float_restart`)."""
_TORCH_ROOTS = frozenset({"torch", "F", "nn", "functional"})
_SCALAR_METHODS = frozenset({"size", "dim", "numel", "item", "tolist", "stride", "storage_offset",
                             "element_size", "nelement", "ndimension", "is_contiguous", "data_ptr",
                             "__len__", "get_device"})
_BUILTINS = frozenset({"len", "int", "float", "abs", "max", "min", "round", "sum", "bool", "pow",
                       "divmod", "complex", "str", "print", "isinstance", "type", "range"})
_TENSOR_ATTRS = frozenset({"T", "mT", "H", "mH", "real", "imag", "data"})
# Methods only a tensor has among the values a function computes with (no Python number,
# list or str has them): their receiver is a tensor even where the text does not say so
# (a loop's variable over a list of tensors).
_TENSOR_METHODS = frozenset({
    "add", "sub", "mul", "div", "pow", "clamp", "clamp_min", "clamp_max", "lerp", "addcmul", "addcdiv",
    "masked_fill", "fill_", "copy_", "leaky_relu", "hardtanh", "softmax", "log_softmax", "elu", "celu",
    "relu", "sigmoid", "tanh", "exp", "sqrt", "rsqrt", "neg", "abs", "sum", "mean", "std", "var", "norm",
    "where", "masked_scatter", "scatter", "index_add", "baddbmm", "addmm", "addmv", "addbmm",
    "true_divide", "remainder", "fmod", "maximum", "minimum", "threshold", "renorm",
})
_FLOAT_RE = re.compile(r"(?<![\w.])-?(?:[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?|[0-9]+[eE][-+]?[0-9]+|inf|nan)(?![\w.])")


@dataclass(frozen=True, slots=True)
class GraphOp:
    """One op line of a printed graph: the statement it was traced from (file, line),
    the op's name stem (``mul`` of ``aten.mul.Tensor``), its float arguments (as
    printed, ``repr`` of the float) and the comment's code text."""

    file: str
    line: int
    op: str
    floats: tuple[str, ...]
    code: str


def graph_ops(graph: str) -> list[GraphOp]:
    """The op lines of a printed graph (``aot_forward_graph_str``,
    ``inductor_post_grad_graph_str``) under their ``# File: ...`` comments; ops before
    any comment are left out. At most :data:`~fxcache_core.lookup.traced_lines.MAX_LINES` lines are read."""
    out: list[GraphOp] = []
    for file, line, code, text in traced_lines(graph):
        m = OP_RE.search(text)
        if m is not None:
            floats = tuple(repr(float(f)) for f in _FLOAT_RE.findall(m.group("args")))
            out.append(GraphOp(file, line, m.group("op"), floats, code))
    return out


def evaluate(expr: str, values: Mapping[str, float | int]) -> float | None:
    """The value Python gives ``expr`` (a pure expression: :class:`FloatUse.expr`) with
    ``values`` for its names, by :func:`~fxcache_core.lookup.py_exprs.compute`'s ``ast``
    whitelist (nothing is ``eval``'d); None where it refuses, or the result is not a float."""
    return v if isinstance(v := compute(expr, values), float) else None


def _tensor_method(name: str) -> bool:
    return name in _TENSOR_METHODS or (name.endswith("_") and name.rstrip("_") in _TENSOR_METHODS)


class TensorKinds:
    """Which expressions of one function are tensors, as far as its text says: a tensor
    parameter of the call, a local every assignment of which is one, a torch function's or a
    module's result, a tensor's method (not one that gives a number), arithmetic with a
    tensor, a conditional expression both of whose sides are. Nothing else is known to be."""

    def __init__(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, tensors: frozenset[str],
                 params: frozenset[str]) -> None:
        self.tensors, self.params = tensors, params
        self.assigned: dict[str, list[ast.expr | None]] = {}  # None: bound otherwise (a loop, a with)
        for n in ast.walk(fn):
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    self._bind(t, n.value)
            elif isinstance(n, ast.AnnAssign):
                self._bind(n.target, n.value)
            elif isinstance(n, ast.AugAssign):
                self._bind(n.target, ast.BinOp(n.target, n.op, n.value))
            elif isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension, ast.NamedExpr)):
                self._bind(n.target, None if not isinstance(n, ast.NamedExpr) else n.value)
            elif isinstance(n, (ast.With, ast.AsyncWith)):
                for item in n.items:
                    if item.optional_vars is not None:
                        self._bind(item.optional_vars, None)
        self._busy: set[str] = set()

    def _bind(self, target: ast.expr, value: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            self.assigned.setdefault(target.id, []).append(value)
        else:  # unpacking, an attribute or an item: each name bound, its value not known
            for t in ast.walk(target):
                if isinstance(t, ast.Name):
                    self.assigned.setdefault(t.id, []).append(None)

    def tensor(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Name):
            values = self.assigned.get(node.id, [])
            if node.id in self._busy:
                return True  # h = h * 2: the other assignments of h decide
            if not (node.id in self.tensors if node.id in self.params else values):
                return False
            self._busy.add(node.id)
            try:
                return all(v is not None and self.tensor(v) for v in values)
            finally:
                self._busy.discard(node.id)
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute):
                if f.attr in _SCALAR_METHODS or _root_name(f) == "math":
                    return False
                root = _root_name(f)
                return root in _TORCH_ROOTS or root == "self" or _tensor_method(f.attr) or self.tensor(f.value)
            return False
        if isinstance(node, ast.Subscript):
            return self.tensor(node.value)
        if isinstance(node, ast.Attribute):
            return node.attr in _TENSOR_ATTRS and self.tensor(node.value)
        if isinstance(node, ast.BinOp):
            return self.tensor(node.left) or self.tensor(node.right)
        if isinstance(node, ast.UnaryOp):
            return self.tensor(node.operand)
        if isinstance(node, ast.IfExp):
            return self.tensor(node.body) and self.tensor(node.orelse)
        return False


def pure_locals(fn: ast.FunctionDef | ast.AsyncFunctionDef, scalars: Mapping[str, object]) -> dict[str, ast.expr]:
    """The locals of ``fn`` bound once, by an assignment whose value is a pure expression
    of the call's scalars (and of such locals): ``bias = 1 - beta1 ** step``. A read of
    one is a read of its expression. In the order they can be computed."""
    a = fn.args
    params = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
    kinds = TensorKinds(fn, frozenset(), frozenset(params))
    out: dict[str, ast.expr] = {}
    known: dict[str, object] = dict(scalars)
    changed = True
    while changed:
        changed = False
        for name, values in kinds.assigned.items():
            if name in out or name in params or len(values) != 1 or values[0] is None:
                continue
            if _is_pure(values[0], known):
                out[name] = values[0]
                known[name] = None
                changed = True
    return out


def statement_reads(fn: ast.FunctionDef | ast.AsyncFunctionDef, param: str,
                    scalars: Mapping[str, float | int], tensors: frozenset[str]) -> list[FloatUse]:
    """Every read of ``param`` in ``fn``'s body, each with its pure expression and what
    takes its value (see the module docstring); a read of a local bound to a pure
    expression of it (:func:`pure_locals`) counts as a read of it. ``scalars``: the
    call's Python scalar arguments by name (``param`` among them); ``tensors``: its
    tensor arguments' names."""
    a = fn.args
    params = frozenset(p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs))
    kinds = TensorKinds(fn, tensors, params)
    parents = _parents(fn)
    local = pure_locals(fn, scalars)
    names = {**scalars, **dict.fromkeys(local)}
    through = {param} | _depending(local, param)
    defining = {id(n) for v in local.values() for n in ast.walk(v)}
    out: list[FloatUse] = []
    tops: set[int] = set()  # the pure expressions read: one value each, however many reads it holds
    for n in ast.walk(fn):
        if not (isinstance(n, ast.Name) and n.id in through) or id(n) in defining:
            continue
        stmt = _statement(n, parents, fn)
        line, last = (stmt.lineno, stmt.end_lineno or stmt.lineno) if stmt is not None else (n.lineno, n.lineno)
        if not isinstance(n.ctx, ast.Load):
            if n.id == param:
                out.append(FloatUse(line, last, param, opaque=f"{param} is assigned at line {n.lineno}"))
            continue
        e: ast.AST = n
        while (p := parents.get(e)) is not None and p is not stmt and _is_pure(p, names):
            e = p
        if id(e) in tops:
            continue  # `t * t`: its second read is the same expression, one value
        tops.add(id(e))
        expr = ast.unparse(_inlined(e, local))  # type: ignore[arg-type]
        parent = parents.get(e)
        if isinstance(parent, ast.keyword):
            parent = parents.get(parent)
        use = _use(e, parent, stmt, line, last, expr, kinds)
        out.append(replace(use, loop=in_loop(n, parents, fn), text=ast.unparse(e)))  # type: ignore[arg-type]
    return out


def _depending(local: Mapping[str, ast.expr], param: str) -> set[str]:
    """The locals of ``local`` whose expression reads ``param``, directly or through another."""
    out: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, v in local.items():
            if name not in out and any(isinstance(x, ast.Name) and x.id in ({param} | out) for x in ast.walk(v)):
                out.add(name)
                changed = True
    return out


def _inlined(e: ast.AST, local: Mapping[str, ast.expr]) -> ast.AST:
    """``e`` with each pure local replaced by its expression (in parentheses, as ``ast``
    writes a subexpression), so that it computes from the call's scalars alone."""
    class _Inline(ast.NodeTransformer):
        def __init__(self) -> None:
            self.depth = 0

        def visit_Name(self, node: ast.Name) -> ast.AST:
            if node.id in local and self.depth < 32:
                self.depth += 1
                try:
                    return self.visit(copy.deepcopy(local[node.id]))
                finally:
                    self.depth -= 1
            return node

    return _Inline().visit(copy.deepcopy(e))


def _statement(n: ast.AST, parents: Mapping[ast.AST, ast.AST], fn: ast.AST) -> ast.stmt | None:
    """The innermost statement around ``n`` inside ``fn``; None when ``n`` is in a nested
    function or lambda (a closure: opaque) or in no statement of ``fn``."""
    cur: ast.AST | None = n
    found: ast.stmt | None = None
    while cur is not None and cur is not fn:
        if isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return None
        if found is None and isinstance(cur, ast.stmt):
            found = cur
        cur = parents.get(cur)
    return found


def _use(e: ast.AST, parent: ast.AST | None, stmt: ast.stmt | None, line: int, last: int, expr: str,
         kinds: TensorKinds) -> FloatUse:
    """What takes the value of the pure expression ``e`` (its ``parent``)."""
    if stmt is None:
        return FloatUse(line, last, expr, opaque=f"read in a nested function or lambda at line {line}")
    if not isinstance(stmt, SIMPLE_STATEMENTS):
        return FloatUse(line, last, expr, opaque=f"read in the {type(stmt).__name__.lower()} statement at line {line}")
    if isinstance(parent, ast.BinOp) and type(parent.op) in _OP_STEMS:
        other = parent.right if parent.left is e else parent.left
        if kinds.tensor(other):
            return FloatUse(line, last, expr, ops=_OP_STEMS[type(parent.op)])
        return FloatUse(line, last, expr, opaque=f"{ast.unparse(parent)} at line {line}: not known to be a "
                                                 "tensor operation")
    if isinstance(parent, ast.Call) and e is not parent.func:
        f = parent.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else "a call"
        if isinstance(f, ast.Attribute) and f.attr not in _SCALAR_METHODS and (
                _root_name(f) in _TORCH_ROOTS or _tensor_method(f.attr) or kinds.tensor(f.value)) \
                and _root_name(f) != "math":
            if name in _DECOMPOSED_ARGS:
                keyword, method_pos, fn_pos, stems = _DECOMPOSED_ARGS[name]
                pos = fn_pos if _root_name(f) in _TORCH_ROOTS else method_pos
                given = any(k.arg == keyword and k.value is e for k in parent.keywords) or (
                    0 <= pos < len(parent.args) and parent.args[pos] is e
                    and not any(isinstance(a, ast.Starred) for a in parent.args[:pos + 1]))
                return FloatUse(line, last, expr, ops=frozenset({name.rstrip("_")}) | (stems if given else frozenset()))
            return FloatUse(line, last, expr, ops=frozenset({name.rstrip("_")}) | _ALSO_OPS.get(name, frozenset()))
        return FloatUse(line, last, expr, opaque=f"passed to {name}() at line {line}")
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and parent is stmt:
        return FloatUse(line, last, expr, opaque=f"assigned to a local at line {line}")
    what = type(parent).__name__.lower() if parent is not None else "expression"
    return FloatUse(line, last, expr, opaque=f"used in a {what} at line {line}")


def _literals(stmt_uses: Sequence[FloatUse], fn: ast.FunctionDef | ast.AsyncFunctionDef,
              scalars: Mapping[str, object], stems: frozenset[str], tensors: frozenset[str]) -> Counter[str]:
    """The float constants the statements of ``stmt_uses`` write themselves (a literal, or
    a pure expression of literals alone, which Python folds: ``2.0 * 3.0`` is 6.0), that
    may be arguments of an op of ``stems``: those whose own context names such an op, or
    whose context is not known (then they may be anywhere). Pure expressions of the
    call's scalars are the reads', not the statement's."""
    spans = {(u.line, u.last) for u in stmt_uses}
    out: Counter[str] = Counter()
    parents = _parents(fn)
    a = fn.args
    kinds = TensorKinds(fn, tensors, frozenset(p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)))
    seen: set[int] = set()
    for n in ast.walk(fn):
        if not (isinstance(n, ast.Constant) and type(n.value) is float):
            continue
        if not any(lo <= n.lineno <= hi for lo, hi in spans):
            continue
        top: ast.AST = n
        while (p := parents.get(top)) is not None and _is_pure(p, scalars):
            top = p
        if id(top) in seen or any(isinstance(x, ast.Name) and x.id in scalars for x in ast.walk(top)):
            continue
        seen.add(id(top))
        value = evaluate(ast.unparse(top), scalars)  # type: ignore[arg-type]  # literals and fixed sizes
        if value is None:
            continue
        parent = parents.get(top)
        if isinstance(parent, ast.keyword):
            parent = parents.get(parent)
        stmt = _statement(top, parents, fn)
        use = _use(top, parent, stmt, n.lineno, n.lineno, "", kinds)
        if use.opaque is not None or use.ops & stems or any(_op_of(o, stems) for o in use.ops):
            out[repr(value)] += 1
    return out


def _single(text: str) -> str:
    """A float's ``repr`` rounded to float32 (as a graph computing in float32 prints it)."""
    return repr(struct.unpack("f", struct.pack("f", float(text)))[0])


def _op_of(op: str, stems: frozenset[str]) -> bool:
    """Whether the aten op ``op`` is one the context names: its name, or a variant of it
    (``clamp_max`` of ``torch.clamp(x, max=...)``, ``add_`` of ``add``)."""
    return any(op == s or op.startswith(s + "_") for s in stems)


def _squeeze(text: str) -> str:
    return re.sub(r"[\s()]", "", text)


def _shown(text: str, code: str) -> bool:
    """Whether the source line ``code`` of a graph's comment holds the expression ``text``
    (``ast.unparse``'s spelling): as written, or once both are spelled by ``ast.unparse``
    (the source's ``1e-3`` is ``0.001`` there), where the line parses on its own."""
    if _squeeze(text) in _squeeze(code):
        return True
    try:
        tree = ast.parse(code.strip())
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return _squeeze(text) in _squeeze(ast.unparse(tree))


def float_provenance(fn: ast.FunctionDef | ast.AsyncFunctionDef, file: str, graph: str, param: str,
                     scalars: Mapping[str, float | int], tensors: frozenset[str],
                     symbolic: frozenset[str] = frozenset()) -> Provenance:
    """What the call's value of ``param`` (in ``scalars``, with the call's other Python
    scalar arguments) does to the key whose printed graph is ``graph``, traced from
    ``fn`` in ``file`` with ``param`` specialized (see the module docstring).
    ``tensors``: the names of the call's tensor arguments; ``symbolic``: the scalar
    parameters the key takes as symbols (a statement whose reads compute with one is
    read by :func:`~fxcache_core.lookup.sym_floats.symbolic_group`). The call's other values
    that ``fn`` overwrites, and the builtins it rebinds, are not read
    (:mod:`~fxcache_core.lookup.py_names`). Raises nothing."""
    with shadowing(file, fn):
        return _float_provenance(fn, file, graph, param, call_values(fn, scalars, param),  # type: ignore[arg-type]
                                 tensors, symbolic)


def _float_provenance(fn: ast.FunctionDef | ast.AsyncFunctionDef, file: str, graph: str, param: str,
                      scalars: Mapping[str, float | int], tensors: frozenset[str],
                      symbolic: frozenset[str]) -> Provenance:
    uses = statement_reads(fn, param, scalars, tensors)
    if not uses:
        return Provenance("unread")
    if param in symbolic and (test := tested(fn, {param} | _depending(pure_locals(fn, scalars), param))):
        return _unknown(param, next((u for u in uses if u.line == test), uses[0]),
                        f"the key takes {param} as a symbolic input, and the code tests it in Python at line {test} "
                        "(a guard this cache does not hold)", uses)
    assigned = param in assigned_names(fn)
    sides = {} if param in symbolic or assigned else _if_sides(fn, file, graph, param, scalars)
    for side in sides.values():
        if side.differs is not None:
            return _branch_differs(param, scalars[param], side, uses)
    read = [u for u in uses if not (u.opaque is not None and u.line in sides and u.last == sides[u.line].last)
            and not any(lo <= u.line <= hi for side in sides.values() for lo, hi in side.skip)]
    taken = {f"the if at line {s.line} goes {'its body' if s.call else 'past its body'}, as in this key's graph"
             for s in sides.values() if any(u.line == s.line for u in uses)}
    if not read:
        return Provenance("same", Reason(f"{param}={scalars[param]} gives this key's graph its branches "
                                         f"({'; '.join(sorted(taken))})", "float-constant-same"), tuple(uses))
    uses = read
    for u in uses:
        if u.opaque is not None:
            return Provenance("unknown", Reason(
                f"{param} reaches this key's graph through {u.expr} ({u.opaque}): which value it had when "
                f"the key was traced is not readable, nor whether {param}={scalars[param]} traces the same "
                "graph", "float-provenance-unknown"), tuple(uses))
    ops = [o for o in graph_ops(graph) if o.file == file]
    same: list[FloatUse] = []
    folded: set[str] = set()  # statements computed with a symbol: their folded parts
    for (line, last, stems), group in _groups(uses):
        mine = [o for o in ops if line <= o.line <= last]
        if not mine or not all(any(_shown(u.text or u.expr, o.code) for o in mine) for u in group):
            return _unknown(param, group[0], "no op traced from it shows the expression (the graph was "
                            "traced from other code, or the expression reaches no op)", uses)
        if symbolic and (sym := _symbolic(fn, file, graph, param, group, scalars, symbolic)) is not None:
            if sym[0] == "unknown":
                return _unknown(param, group[0], sym[1], uses)
            if sym[0] == "differs":
                return Provenance("differs", Reason(
                    f"{param} is specialized into this key's graph through {group[0].expr} (line {line}), computed "
                    f"there with a symbol: {sym[1]} ({param}={scalars[param]}): torch traces another graph",
                    "float-constant-differs"), tuple(uses))
            folded.add(f"{group[0].expr} folded to {sym[1]} beside a symbol")
            continue
        found: Counter[str] = Counter(f for o in mine if _op_of(o.op, stems) for f in o.floats)
        literals = _literals(group, fn, {**scalars, **dict.fromkeys(pure_locals(fn, scalars))}, stems, tensors)
        if any(u.loop for u in group):
            # Traced once per pass of the loop, each pass with the same values (the
            # parameter is never assigned): compare the values, not their counts.
            if literals.keys() & {repr(evaluate(u.expr, scalars)) for u in group}:
                return _unknown(param, group[0], "a float literal of the loop's statement equals its value", uses)
            found = Counter(set(found) - set(literals))
            group_n = len({u.expr for u in group})
        else:
            found -= literals
            group_n = len(group)
        if sum(found.values()) != group_n:
            return _unknown(param, group[0], f"its ops hold {sum(found.values())} float constant(s) besides "
                            f"the statement's own, for {group_n} read(s)", uses)
        want: Counter[str] = Counter()
        for u in group if group_n == len(group) else {u.expr: u for u in group}.values():
            v = evaluate(u.expr, scalars)
            if v is None:
                return _unknown(param, u, f"{u.expr} cannot be computed for the call's values", uses)
            want[repr(v)] += 1
        if group_n != len(group) and len(want) != group_n:
            return _unknown(param, group[0], "its expressions give one value for the call", uses)
        if want != found and stems & DECOMPOSED and Counter(map(_single, want.elements())) == found:
            return _unknown(param, group[0], "its op holds the call's value rounded to float32, as a "
                            "decomposition computing in float32 would print it", uses)
        if want != found:
            u = group[0]
            was = ", ".join(sorted(found.elements()))
            now = ", ".join(sorted(want.elements()))
            return Provenance("differs", Reason(
                f"{param} is specialized into this key's graph through {u.expr} (line {u.line}): the graph "
                f"has {was} there, the call gives {now} ({param}={scalars[param]}): torch traces another "
                "graph", "float-constant-differs"), tuple(uses))
        if len(group) > 1 and len({u.expr for u in group}) > 1:
            return _unknown(param, group[0], "several expressions of it reach one op kind there, and "
                            "which constant is which is not readable", uses)
        same += group
    shown = ", ".join(sorted({f"{u.expr} = {evaluate(u.expr, scalars)!r}" for u in same} | folded | taken))
    return Provenance("same", Reason(f"{param}={scalars[param]} gives this key's graph its constants "
                                     f"({shown})", "float-constant-same"), tuple(uses))


def _if_sides(fn: ast.FunctionDef | ast.AsyncFunctionDef, file: str, graph: str, param: str,
              scalars: Mapping[str, float | int]) -> dict[int, IfSide]:
    """:func:`~fxcache_core.lookup.float_branches.if_sides` of the ifs on ``param``."""
    local = pure_locals(fn, scalars)
    names = {**scalars, **dict.fromkeys(local)}
    return if_sides(fn, {param} | _depending(local, param),
                    lambda t: truth(ast.unparse(_inlined(t, local)), scalars),
                    {o.line for o in graph_ops(graph) if o.file == file}, lambda t: _is_pure(t, names))


def _symbolic(fn: ast.FunctionDef | ast.AsyncFunctionDef, file: str, graph: str, param: str,
              group: Sequence[FloatUse], scalars: Mapping[str, float | int], symbolic: frozenset[str]
              ) -> tuple[str, str] | None:
    lines = {n for u in group for n in range(u.line, u.last + 1)} | local_lines(
        [u.text or u.expr for u in group], pure_locals(fn, scalars))
    operands = sym_node_operands(graph, file, lines)
    if operands is None:
        return "unknown", "a symbolic node traced from it has a form not read here"
    return symbolic_group([u.expr for u in group], param, symbolic, scalars, operands, compute)  # type: ignore[arg-type]


def _groups(uses: Sequence[FloatUse]) -> Iterator[tuple[tuple[int, int, frozenset[str]], list[FloatUse]]]:
    """The value reads by statement and op kind, in source order."""
    by: dict[tuple[int, int, frozenset[str]], list[FloatUse]] = {}
    for u in sorted(uses, key=lambda u: (u.line, u.expr)):
        by.setdefault((u.line, u.last, u.ops), []).append(u)
    yield from by.items()


def _unknown(param: str, u: FloatUse, why: str, uses: Sequence[FloatUse]) -> Provenance:
    return Provenance("unknown", Reason(
        f"{param} reaches this key's graph through {u.expr} at line {u.line}, but {why}: fxcache cannot "
        "tell which value it had when the key was traced", "float-provenance-unknown"), tuple(uses))


def _branch_differs(param: str, value: float | int, side: IfSide, uses: Sequence[FloatUse]) -> Provenance:
    return Provenance("differs", Reason(
        f"{param}={value} is specialized, and an if at line {side.line} tests it: {side.differs}: torch traces "
        "another graph", "float-branch-differs"), tuple(uses))
