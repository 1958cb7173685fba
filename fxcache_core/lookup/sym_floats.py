"""A specialized float computed with a symbolic int: what Dynamo leaves of it in the graph.

After a recompile, automatic dynamic traces an int argument that changed as a SymInt
(``step`` in ``-lr / (1 - beta1 ** step)``) while a float that did not change stays a
Python constant. Dynamo then folds each part of the expression that reads no symbol
(``-lr`` is ``-0.001``, ``beta1`` is ``0.9``: plain Python arithmetic on constants,
``ConstantVariable`` in torch/_dynamo/variables/constant.py) and traces the rest as
Python operators on SymNodes (``SymNodeVariable``, torch/_dynamo/variables/tensor.py):
the graph gets one node per operator, each printed with its constant operand,
``truediv: "Sym(...)" = -0.001 / sub``. The folded values are the whole expression's
no longer; they are those nodes' operands.

:func:`symbolic_group` reads one statement's reads of a float parameter that way: the
folded parts of each read's expression (its pure locals inlined), each with the operator
and side it is an operand of, against the constant operands of the symbolic nodes traced
from the statement's lines (and from the lines of the locals inlined). It decides only
where that is exact: every operator-and-side of the expression's folded parts appears
once among the nodes and no node is left over; each folded part is a number; then the
call's values either are the nodes' constants (``same``) or differ in a part that reads
the parameter and in nothing else (``differs``: another graph). Anything else is
``unknown``. Nothing here imports torch, runs the source or the graph, or prints.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

from fxcache_core.decode.origins import graph_comment
from fxcache_core.lookup.traced_lines import MAX_LINES

__all__ = ["local_lines", "sym_node_operands", "symbolic_group"]

_SYM_RE = re.compile(r'^\s*\w+: "Sym\([^"]{0,2000}\)" = (?P<rhs>[^;]{1,200})(?:;|$)')
_OPS: dict[type[ast.operator], str] = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**",
}

Operand = tuple[str, str, float | int]
"""One constant operand of a symbolic node: the operator (``/``), the side the constant
is on (``left``, ``right``) and its value."""


def local_lines(texts: Iterable[str], local: Mapping[str, ast.expr]) -> set[int]:
    """The lines of the assignments of the pure locals ``texts`` read (``bias`` of
    ``-lr / bias``), and of those they read in turn: where their symbolic nodes are traced."""
    out: set[int] = set()
    seen: set[str] = set()
    todo: list[ast.AST] = []
    for t in texts:
        try:
            todo.append(ast.parse(t, mode="eval"))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    while todo:
        for x in ast.walk(todo.pop()):
            if isinstance(x, ast.Name) and x.id in local and x.id not in seen:
                seen.add(x.id)
                v = local[x.id]
                out.update(range(v.lineno, (v.end_lineno or v.lineno) + 1))
                todo.append(v)
    return out


def sym_node_operands(graph: str, file: str, lines: Iterable[int]) -> list[Operand] | None:
    """The constant operands of the Python-operator nodes on SymNodes (``-0.001 / sub``,
    ``0.9 ** sym_float``) traced from ``lines`` of ``file`` in a printed graph; None when
    such a node has another form (two constants, a call: not read)."""
    want = set(lines)
    out: list[Operand] = []
    here = False
    for n, text in enumerate(graph.splitlines()):
        if n >= MAX_LINES:
            return None
        c = graph_comment(text)
        if c is not None:
            here = c.file == file and c.line in want
            continue
        m = _SYM_RE.match(text) if here else None
        if m is None:
            continue
        rhs = m.group("rhs").strip()
        try:
            node = ast.parse(rhs, mode="eval").body  # parsed, never run
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        if not isinstance(node, ast.BinOp):
            if any(isinstance(x, ast.Constant) and _number(x.value) for x in ast.walk(node)):
                return None  # a constant in a form not read here (a call's argument)
            continue
        op = _OPS.get(type(node.op))
        left, right = _constant(node.left), _constant(node.right)
        if op is None or (left is None) == (right is None):
            if left is None and right is None and isinstance(node.left, ast.Name) and isinstance(node.right, ast.Name):
                continue  # two symbols: no constant
            return None
        out.append((op, "left", left) if left is not None else (op, "right", right))  # type: ignore[arg-type]
    return out


def symbolic_group(exprs: Sequence[str], param: str, symbolic: frozenset[str], scalars: Mapping[str, object],
                   operands: Sequence[Operand], evaluate: Callable[[str, Mapping[str, object]], object]
                   ) -> tuple[str, str] | None:
    """What the call's ``scalars`` say of one statement's reads of ``param``, each
    expression of ``exprs`` (pure locals inlined: ``-lr / (1 - beta1 ** step)``) read with
    ``symbolic`` names traced as symbols, against the statement's symbolic nodes'
    ``operands`` (:func:`sym_node_operands`). ``evaluate`` computes a folded part for the
    call (:func:`~fxcache_core.lookup.float_exprs.compute`). Returns ``("same", shown)``,
    ``("differs", shown)`` (``shown``: the graph's value and the call's), ``("unknown",
    why)``, or None when no expression reads a symbolic name (not this module's case)."""
    parts: list[tuple[str, str, object, bool]] = []
    for e in exprs:
        try:
            tree = ast.parse(e, mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return "unknown", f"{e} does not parse"
        found = _folded(tree, symbolic, param)
        if found is None:
            return None
        if isinstance(found, str):
            return "unknown", found
        parts += found
    if not parts:
        return "unknown", "no part of it is folded into a constant"
    want: list[tuple[str, str, float | int, bool]] = []
    for op, side, sub, reads in parts:
        v = evaluate(sub, scalars) if isinstance(sub, str) else sub
        if not _number(v):
            return "unknown", f"{sub} is not a number for the call"
        want.append((op, side, v, reads))  # type: ignore[arg-type]
    # Traced once per pass of a loop, or once for two equal reads: compare the distinct ones.
    keys = Counter((op, side) for op, side, _, _ in {(o, s, v, r) for o, s, v, r in want})
    have = Counter((op, side) for op, side, _ in set(operands))
    if keys != have or any(n != 1 for n in keys.values()):
        return "unknown", ("the symbolic nodes traced from it hold other constant operands than its folded "
                           f"parts ({_shown(operands)})")
    got = {(op, side): v for op, side, v in operands}
    differs = [(op, side, v) for op, side, v, _ in want if got[(op, side)] != v]
    if not differs:
        return "same", " and ".join(sorted({f"{v!r}" for _, _, v, r in want if r}))
    if any(not r for op, side, v, r in want if got[(op, side)] != v):
        return "unknown", "a part that does not read it differs as well"
    (op, side, v), *_ = differs
    return "differs", f"the graph has {got[(op, side)]!r} there, the call gives {v!r}"


def _folded(node: ast.expr, symbolic: frozenset[str], param: str
            ) -> list[tuple[str, str, object, bool]] | str | None:
    """The folded parts of ``node`` (module doc) with the operator and side each is an
    operand of; None when it reads no symbolic name; a reason when it has a form not
    read here (a call, a name neither symbolic nor a scalar, a fold under a unary minus
    of a symbol)."""
    out: list[tuple[str, str, object, bool]] = []

    def symbolic_in(n: ast.expr) -> bool:
        return any(isinstance(x, ast.Name) and x.id in symbolic for x in ast.walk(n))

    def visit(n: ast.expr) -> str | None:
        if isinstance(n, ast.BinOp):
            op = _OPS.get(type(n.op))
            if op is None:
                return f"{ast.unparse(n)}: an operator not read here"
            for side, child in (("left", n.left), ("right", n.right)):
                if symbolic_in(child):
                    if (why := visit(child)) is not None:
                        return why
                    continue
                other = n.right if side == "left" else n.left
                if not symbolic_in(other):
                    continue  # unreachable: a fully folded BinOp is a child of one that is not
                reads = any(isinstance(x, ast.Name) and x.id == param for x in ast.walk(child))
                value: object = ast.unparse(child)
                if isinstance(child, ast.Constant):
                    value = child.value
                out.append((op, side, value, reads))
            return None
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd)):
            return visit(n.operand) if isinstance(n.operand, ast.Name) else (
                f"{ast.unparse(n)}: a sign on a symbolic expression")
        if isinstance(n, ast.Name):
            return None
        return f"{ast.unparse(n)}: a form not read here"

    if not symbolic_in(node):
        return None
    why = visit(node)
    return why if why is not None else out


def _constant(n: ast.expr) -> float | int | None:
    if isinstance(n, ast.Constant) and _number(n.value):
        return n.value  # type: ignore[no-any-return]
    if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub) and isinstance(n.operand, ast.Constant) \
            and _number(n.operand.value):
        return -n.operand.value  # type: ignore[operator,no-any-return]
    return None


def _number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _shown(operands: Sequence[Operand]) -> str:
    return ", ".join(sorted({f"{v!r} {op} (the {side} operand)" for op, side, v in operands})) or "none"
