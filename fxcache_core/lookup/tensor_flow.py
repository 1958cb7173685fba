"""Whether a tensor given for a parameter is computed into what the function returns.

Dynamo makes a tensor argument a graph input when a node of the graph it keeps reads
it: a torch op whose result reaches the graph's output. A key that takes no input from
such a parameter was then traced without a tensor there (``None``, or another Python
value), and a call that gives one traces another graph. :func:`computed_into_output`
says where the source shows that exactly, reading the ``def`` with ``ast`` (never
running it): the parameter goes, unconditionally, through torch ops into the value the
function returns.

"Unconditionally" is read strictly: the top-level statements of the body, in order,
up to the first top-level ``return``; none of them may hold an exit that could skip it
(``return``, ``raise``, ``break``, ``continue``), nor a place where Dynamo may break the
graph (a call this reading does not know, a branch on a tensor's value, a loop, a
``with``, an ``assert``: the rest is then another frame, whose key reads the parameter);
the side of a top-level ``if p is not None:`` / ``if p is None: ... else:`` (or of
``a if p is None else b``) that a tensor takes is read as straight-line code, and an
``if`` on whether another name is None is read side by side, a name keeping its kind
where both sides leave it the same. A function that binds names otherwise (``try``,
``import``, a nested ``def`` or ``class``, ``match``, ``global``, ``:=``) is not read.
A name is followed through a simple assignment (the call's tensors and numbers, and a
tensor parameter rebound, included); one bound otherwise is forgotten, and the parameter
itself must never be assigned. The ops are the torch functions of
:data:`_TORCH_FNS` at their tensor arguments (called as ``torch.X``, ``F.X``,
``torch.nn.functional.X``, where the module binds those names only by importing torch),
the tensor methods of :data:`_METHODS` (on the tensor, and at the first argument of
those of :data:`_OPERAND_METHODS`), arithmetic with another tensor or a number, and indexing by
constants, and a conditional expression both of whose sides are so computed. A helper
call, a module call, anything else between the parameter and the ``return`` ends the
chain: those can drop the value, and a dropped value is no graph input.

:func:`body_op_into_output` reads the same way whether the body of a top-level ``if p
is not None:`` makes an op whatever ``p`` is: an op of :data:`_ALWAYS` on a tensor
computed from the call's tensors, whose result the ``return`` is computed from.
"""

from __future__ import annotations

import ast
from collections.abc import Collection
from enum import Enum

from fxcache_core.lookup.torch_names import torch_name, torch_roots

__all__ = ["body_op_into_output", "computed_into_output"]


class _Kind(Enum):
    SOURCE = "source"  # the parameter's own tensor (or a name for it): no op has read it yet
    READ = "read"  # the result of an op that read the parameter's tensor
    TENSOR = "tensor"  # another tensor (a tensor argument of the call, an op's result)
    NUMBER = "number"  # an int or float literal


def _spec(
    names: str, positions: tuple[int, ...], keywords: str
) -> dict[str, tuple[tuple[int, ...], frozenset[str]]]:
    return {n: (positions, frozenset(keywords.split())) for n in names.split()}


_NN_F = "torch.nn.functional."
_TORCH_FNS: dict[str, tuple[tuple[int, ...], frozenset[str]]] = {
    **_spec(_NN_F + "scaled_dot_product_attention", (0, 1, 2, 3), "query key value attn_mask"),
    **_spec(
        " ".join(_NN_F + n for n in "linear conv1d conv2d".split()), (0, 1, 2), "input weight bias"
    ),
    **_spec(_NN_F + "layer_norm", (0, 2, 3), "input weight bias"),
    **_spec(_NN_F + "embedding", (0, 1), "input weight"),
    **_spec(
        " ".join(
            _NN_F + n for n in "softmax log_softmax relu gelu silu tanh sigmoid normalize".split()
        ),
        (0,),
        "input",
    ),
    **_spec(
        "torch.add torch.sub torch.mul torch.div torch.maximum torch.minimum torch.matmul",
        (0, 1),
        "input other",
    ),
    **_spec("torch.mm torch.bmm", (0, 1), "input mat2"),
    **_spec("torch.where", (0, 1, 2), "condition input other"),
    **_spec("torch.masked_fill", (0, 1), "input mask"),
    **_spec("torch.cat torch.concat torch.stack", (0,), "tensors"),
    **_spec(
        "torch.softmax torch.log_softmax torch.exp torch.tanh torch.sigmoid torch.relu torch.sum "
        "torch.mean torch.abs torch.neg torch.sqrt torch.rsqrt",
        (0,),
        "input",
    ),
}
"""Torch functions whose result a graph node computes from the tensors at these positions
and keywords (a list or tuple there: each of its items); their other arguments are not
read as tensors (a dim, a flag)."""

_METHODS = frozenset(
    (
        "softmax log_softmax relu sum mean float half bool transpose permute view reshape "
        "unsqueeze squeeze expand flatten matmul masked_fill add sub mul div exp tanh sigmoid "
        "neg abs t repeat cos sin log sqrt rsqrt"
    ).split()
)
"""Tensor methods that record a node reading the tensor."""
_OPERAND_METHODS = {
    "masked_fill": "mask",
    "matmul": "other",
    "add": "other",
    "sub": "other",
    "mul": "other",
    "div": "other",
}
"""Those of :data:`_METHODS` that also compute from their first argument (a tensor there)."""

_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.MatMult)
_TENSORISH = (_Kind.SOURCE, _Kind.READ, _Kind.TENSOR)


def computed_into_output(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    file: str,
    param: str,
    tensors: Collection[str],
    numbers: Collection[str] = (),
) -> int | None:
    """The line of the ``return`` whose value a torch op computes from the tensor
    ``param`` on every call that gives one (see the module docstring), or None where
    the source does not show that. ``file``: the module ``fn`` is in (the names
    ``torch`` and ``F`` are read from its imports); ``tensors``: the other parameters
    the call gives tensors for; ``numbers``: those it gives an int or a float for."""
    args = fn.args
    if param not in {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}:
        return None
    for n in ast.walk(fn):
        if isinstance(
            n, (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal)
        ):
            return None
        if isinstance(n, ast.Name) and n.id == param and not isinstance(n.ctx, ast.Load):
            return None
        if n is not fn and isinstance(n, _UNFOLLOWED):
            return None
    # A tensor parameter the body rebinds starts as the call's tensor: every statement
    # that binds a name rebinds it to its value's kind or forgets it (``_Flow._step``).
    known = {t: _Kind.NUMBER for t in numbers if t != param}
    known.update({t: _Kind.TENSOR for t in tensors if t != param})
    known[param] = _Kind.SOURCE
    flow = _Flow(torch_roots(file, fn), known, param)
    try:
        return flow.body(fn.body)
    except RecursionError:  # an expression nested past the interpreter's depth: not read
        return None


_UNFOLLOWED = (
    ast.Try,
    ast.Match,
    ast.Import,
    ast.ImportFrom,
    ast.ClassDef,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
)
"""Statements that bind a name :class:`_Flow` does not see (an ``except``, ``import``,
``def``, ``class`` or ``case`` binds no ``ast.Name``) or may skip the rest of a block
(an ``except``): a function holding one is not read."""
if hasattr(ast, "TryStar"):
    _UNFOLLOWED = (*_UNFOLLOWED, ast.TryStar)


def _exits(stmt: ast.stmt) -> bool:
    """Whether ``stmt`` holds a ``return``, ``raise``, ``break`` or ``continue`` (outside
    nested scopes)."""
    stack: list[ast.AST] = [stmt]
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.Return, ast.Raise, ast.Break, ast.Continue)):
            return True
        if n is stmt or not isinstance(
            n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
        ):
            stack.extend(ast.iter_child_nodes(n))
    return False


def _none_test(test: ast.expr, param: str | None) -> type[ast.cmpop] | None:
    """``ast.IsNot`` for ``param is not None``, ``ast.Is`` for ``param is None``, else
    None; ``param`` None: of any name."""
    if (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and (param is None or test.left.id == param)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.Is, ast.IsNot))
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    ):
        return type(test.ops[0])
    return None


class _Flow:
    """One reading of a body: the kinds of the names it follows, statement by statement."""

    def __init__(self, roots: dict[str, str], known: dict[str, _Kind], param: str) -> None:
        self.roots, self.known, self.param = roots, known, param
        self.forgotten: set[str] = set()  # names bound to values of unknown kind (a tensor, maybe)

    def may_break(self, st: ast.stmt) -> bool:
        """Whether Dynamo may break the graph at ``st`` (a call this reading does not know:
        ``print``, ``.item()``, a helper; a branch on a tensor's value; a loop, ``with`` or
        ``assert``): the rest of the function is then another frame, and the parameter's
        ops may be in that frame's key, not in the first frame's."""
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant):
            return False  # a docstring
        if isinstance(st, (ast.Expr, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Assert)):
            return True
        if isinstance(st, ast.If):
            if not _none_test(st.test, None) and self._test_may_break(st.test):
                return True
            return any(self.may_break(s) for s in (*st.body, *st.orelse))
        return any(isinstance(n, ast.Call) and not self._known_call(n) for n in ast.walk(st))

    def _known_call(self, n: ast.Call) -> bool:
        """A torch function of :data:`_TORCH_FNS` or a tensor method of :data:`_METHODS`:
        each records a node; Dynamo breaks the graph at none of them."""
        if (name := torch_name(n.func, self.roots)) is not None:
            return name in _TORCH_FNS
        return isinstance(n.func, ast.Attribute) and n.func.attr in _METHODS

    def _test_may_break(self, test: ast.expr) -> bool:
        """Whether an ``if`` test may read a tensor's value (a call, an index, a name known as
        a tensor or bound to a value of unknown kind): Dynamo breaks the graph there."""
        for n in ast.walk(test):
            if isinstance(n, (ast.Call, ast.Subscript)):
                return True
            if isinstance(n, ast.Name) and (self.known.get(n.id) in _TENSORISH or n.id in self.forgotten):
                return True
        return False

    def body(self, stmts: list[ast.stmt]) -> int | None:
        """The line of the first top-level ``return`` of ``stmts`` whose value an op read
        the parameter into, or None (an exit before it, a ``return`` without it, no
        ``return``)."""
        for st in stmts:
            if isinstance(st, ast.Return):
                if st.value is not None and self._output(st.value):
                    return st.lineno
                return None
            if self.may_break(st):
                return None
            if isinstance(st, ast.If) and (test := _none_test(st.test, self.param)):
                # A tensor runs the body of `if p is not None:`, the else of `if p is None:`.
                side = st.body if test is ast.IsNot else st.orelse
                if any(_exits(s) for s in side):
                    return None
                if (line := self.body(side)) is not None:
                    return line
                continue
            if _exits(st):
                return None
            self._step(st)
        return None

    def _step(self, st: ast.stmt) -> None:
        """Follows one statement that does not exit: the name a simple assignment binds
        gets its value's kind; every other name a statement binds is forgotten."""
        target: ast.expr | None = None
        value: ast.expr | None = None
        if isinstance(st, ast.Assign) and len(st.targets) == 1:
            target, value = st.targets[0], st.value
        elif isinstance(st, ast.AnnAssign) and st.value is not None and st.simple:
            target, value = st.target, st.value
        elif isinstance(st, ast.AugAssign) and isinstance(st.op, _BINOPS):
            target, value = (
                st.target,
                ast.BinOp(left=ast.Name(id=getattr(st.target, "id", "")), op=st.op, right=st.value),
            )
        if isinstance(st, ast.If) and _none_test(st.test, None) and not _exits(st):
            self._merge(st)
            return
        if isinstance(target, ast.Name) and value is not None:
            kind = self.kind(value)
            if kind is None or kind is _Kind.NUMBER:
                self.known.pop(target.id, None)
                if kind is None:
                    self.forgotten.add(target.id)
            else:
                self.known[target.id] = kind
                self.forgotten.discard(target.id)
            return
        for n in ast.walk(st):
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
                self.known.pop(n.id, None)
                self.forgotten.add(n.id)

    def _merge(self, st: ast.If) -> None:
        """Follows an ``if`` on whether a name is None (a test that never reads a
        tensor's values, so never breaks the graph) and holds no exit: each side is
        read on its own, and a name keeps a kind where both leave it the same one."""
        sides = []
        for block in (st.body, st.orelse):
            flow = _Flow(self.roots, dict(self.known), self.param)
            flow.forgotten = set(self.forgotten)
            for s in block:
                flow._step(s)
            sides.append(flow)
        self.known = {k: v for k, v in sides[0].known.items() if sides[1].known.get(k) is v}
        self.forgotten = sides[0].forgotten | sides[1].forgotten | (set(sides[0].known) ^ set(sides[1].known))

    def always(self, e: ast.expr) -> bool:
        """Whether ``e`` records a node of :data:`_ALWAYS` on a tensor this reading knows as
        read, and its value is computed from that node's result (whatever the names it
        does not know are)."""
        if (
            isinstance(e, ast.Call)
            and isinstance(e.func, ast.Attribute)
            and not any(isinstance(a, ast.Starred) for a in e.args)
            and all(k.arg is not None for k in e.keywords)
        ):
            receiver = e.func.value
            if e.func.attr in _METHODS and self.always(receiver):
                return True
            return e.func.attr in _ALWAYS and self.kind(receiver) is _Kind.READ
        if isinstance(e, ast.BinOp) and isinstance(e.op, _BINOPS):
            return (self.always(e.left) and self.kind(e.right) is not None) or (
                self.always(e.right) and self.kind(e.left) is not None
            )
        return False

    def _output(self, value: ast.expr) -> bool:
        if isinstance(value, (ast.Tuple, ast.List)):
            return any(self.kind(e) is _Kind.READ for e in value.elts)
        if isinstance(value, ast.Dict):
            return any(self.kind(e) is _Kind.READ for e in value.values)
        return self.kind(value) is _Kind.READ

    def kind(self, e: ast.expr) -> _Kind | None:
        """What ``e`` is, where this reading knows: None where it does not."""
        if isinstance(e, ast.Name):
            return self.known.get(e.id)
        if isinstance(e, ast.Constant):
            return _Kind.NUMBER if type(e.value) in (int, float) else None
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.Invert)):
            return _read_by_op([self.kind(e.operand)])
        if isinstance(e, ast.BinOp) and isinstance(e.op, _BINOPS):
            kinds = [self.kind(e.left), self.kind(e.right)]
            if any(k is None for k in kinds) or not any(k in _TENSORISH for k in kinds):
                return None
            return _read_by_op(kinds)
        if isinstance(e, ast.Subscript) and _constant_index(e.slice):
            return _read_by_op([self.kind(e.value)])
        if isinstance(e, ast.Call):
            return self._call(e)
        if isinstance(e, ast.IfExp) and (test := _none_test(e.test, self.param)):
            return self.kind(e.body if test is ast.IsNot else e.orelse)  # the side a tensor takes
        if isinstance(e, ast.IfExp):  # either side runs: read where both sides are
            sides = {self.kind(e.body), self.kind(e.orelse)}
            return _Kind.READ if sides == {_Kind.READ} else None
        return None

    def _call(self, e: ast.Call) -> _Kind | None:
        if any(isinstance(a, ast.Starred) for a in e.args) or any(
            k.arg is None for k in e.keywords
        ):
            return None
        if (name := torch_name(e.func, self.roots)) is not None:
            if (spec := _TORCH_FNS.get(name)) is None:
                return None
            positions, keywords = spec
            operands = [a for i, a in enumerate(e.args) if i in positions]
            operands += [k.value for k in e.keywords if k.arg in keywords]
            items = [
                i
                for a in operands
                for i in (a.elts if isinstance(a, (ast.List, ast.Tuple)) else [a])
            ]
            read = any(self.kind(i) in (_Kind.SOURCE, _Kind.READ) for i in items)
            return _Kind.READ if read else _Kind.TENSOR
        if isinstance(e.func, ast.Attribute) and e.func.attr in _METHODS:
            receiver = self.kind(e.func.value)
            if receiver not in _TENSORISH:
                return None
            kw = _OPERAND_METHODS.get(e.func.attr)
            operands = [*e.args[:1], *(k.value for k in e.keywords if k.arg == kw)] if kw else []
            return _read_by_op([receiver, *(self.kind(i) for i in operands)])
        return None


def _read_by_op(kinds: list[_Kind | None]) -> _Kind | None:
    """The kind of an op's result whose operands have ``kinds`` (the first its tensor)."""
    if kinds[0] not in _TENSORISH and kinds[0] is not _Kind.NUMBER:
        return None
    if any(k in (_Kind.SOURCE, _Kind.READ) for k in kinds):
        return _Kind.READ
    return _Kind.TENSOR if any(k is _Kind.TENSOR for k in kinds) else None


def _constant_index(s: ast.expr) -> bool:
    parts = s.elts if isinstance(s, ast.Tuple) else [s]
    for p in parts:
        if isinstance(p, ast.Slice):
            if any(
                x is not None and not (isinstance(x, ast.Constant) and type(x.value) is int)
                for x in (p.lower, p.upper, p.step)
            ):
                return False
        elif not (
            isinstance(p, ast.Constant)
            and (p.value is None or p.value is Ellipsis or type(p.value) is int)
        ):
            return False
    return True


_ALWAYS = frozenset(
    "unsqueeze cos sin exp log tanh sigmoid relu neg abs sqrt rsqrt softmax log_softmax".split()
)
"""Tensor methods that record a node of their own whatever their arguments are (none is
ever elided as a no-op: each changes the rank or computes new values)."""


def body_op_into_output(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    file: str,
    param: str,
    line: int,
    tensors: Collection[str],
) -> tuple[int, int] | None:
    """For the top-level ``if param is not None:`` (without ``else``) at ``line``: (the
    line of a statement of its body that records an op whatever ``param`` is, the line of
    the ``return`` whose value is computed from that op's result), or None where the
    source does not show both. The op is a method of :data:`_ALWAYS` (at the head of a
    chain of :data:`_METHODS`, or in arithmetic with a known operand) on a tensor computed
    from ``tensors`` (the parameters the call gives tensors for, and the key takes as
    inputs): a body that runs then puts a node on its line into any graph that goes on to
    that ``return``. Read as :func:`computed_into_output` reads; ``param`` is never assigned."""
    try:
        return _body_op_into_output(fn, file, param, line, tensors)
    except RecursionError:  # an expression nested past the interpreter's depth: not read
        return None


def _body_op_into_output(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    file: str,
    param: str,
    line: int,
    tensors: Collection[str],
) -> tuple[int, int] | None:
    if any(
        isinstance(n, ast.Name) and n.id == param and not isinstance(n.ctx, ast.Load)
        for n in ast.walk(fn)
    ):
        return None
    if any(
        isinstance(
            n, (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal)
        )
        or _overwrites(n)
        for n in ast.walk(fn)
    ):
        return None  # an in-place write may leave the body's op dead code, which the graph drops
    stored = {
        n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
    }
    roots = torch_roots(file, fn)
    # ``inputs``: READ is "computed from the call's tensors"; ``marked``: READ is "computed from the body's op".
    inputs = _Flow(roots, {t: _Kind.READ for t in tensors if t not in stored and t != param}, "")
    marked = _Flow(roots, {t: _Kind.TENSOR for t in tensors if t not in stored and t != param}, "")
    for i, st in enumerate(fn.body):
        if isinstance(st, ast.If) and st.lineno == line:
            if (
                st.orelse
                or _none_test(st.test, param) is not ast.IsNot
                or any(_exits(s) for s in st.body)
            ):
                return None
            op_line = None
            for s in st.body:
                if (
                    op_line is None
                    and isinstance(s, ast.Assign)
                    and len(s.targets) == 1
                    and isinstance(s.targets[0], ast.Name)
                    and inputs.always(s.value)
                ):
                    op_line = s.lineno
                    marked.known[s.targets[0].id] = _Kind.READ
                    inputs.known.pop(s.targets[0].id, None)
                    continue
                inputs._step(s)
                marked._step(s)
            if op_line is None:
                return None
            ret = marked.body(fn.body[i + 1 :])
            return (op_line, ret) if ret is not None else None
        if _exits(st):
            return None
        inputs._step(st)
        marked._step(st)
    return None


def _overwrites(n: ast.AST) -> bool:
    """Whether ``n`` may overwrite a tensor in place (a method named like ``zero_``, an
    ``out=`` argument): the op that computed the old value may then be dead code, and
    no graph keeps it."""
    return isinstance(n, ast.Call) and (
        (isinstance(n.func, ast.Attribute) and n.func.attr.endswith("_") and not n.func.attr.startswith("__"))
        or any(k.arg == "out" for k in n.keywords)
    )
