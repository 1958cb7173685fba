"""Whether other code of a function may make up the ops by which two sides of an ``if`` differ.

A key's graph was traced through one side of ``if a:``, and a call goes the other way.
The two sides make different ops, but that alone does not make the call's graph
another one: FX's graph key is the graph's ops, not the lines they came from, so
other code the call runs differently (the body of another ``if``, a loop, a helper)
may make the very ops the skipped side made (``if a: y = y.relu()`` then
``if b: y = y.relu()``: a=True and b=True trace one graph). :func:`may_make_up`
names the first such code, or says there is none: every other place of the function
that may run a different number of times (the sides of another ``if`` or conditional
expression, a loop's body, a comprehension, a ``try``, an ``and``/``or``'s later
operands, a nested function) makes none of those ops, by the name it calls them (a
method or a ``torch.``/``F.`` function), by the ops a key's graph shows its line made,
or by its operator (``*``: ``mul``); and the function calls no code of its own (a
helper, a submodule, ``self.method``: any of them may branch on what the call
changes). Straight-line code runs once in either trace and makes the same ops, but for a
call whose op may be none (``.half()`` of a float16 tensor: :data:`_MAY_BE_NONE`), where the
ops differ by a cast or copy.
Reads the source with ``ast`` only; never runs it. Never imports torch.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Mapping, Sequence

__all__ = ["may_make_up", "op_name"]

# Builtins that make no op of their own (a tensor given to them is not computed on).
_NO_OPS = frozenset({
    "len", "int", "float", "bool", "str", "range", "isinstance", "tuple", "list", "dict", "set",
    "hasattr", "enumerate", "zip", "print", "type", "super", "repr", "id",
})
# Call names that make only the op of their own name (``y.sin()``: ``aten.sin``), read where
# no graph shows the ops of their line. Any other call there may make any op.
_LEAF = frozenset({
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "exp", "exp2", "expm1",
    "log", "log2", "log10", "log1p", "relu", "sigmoid", "abs", "neg", "sqrt", "rsqrt", "erf",
    "floor", "ceil", "round", "trunc", "sign", "reciprocal", "clamp", "clamp_min", "clamp_max",
    "sum", "amax", "amin", "maximum", "minimum", "cumsum", "cumprod", "argmax", "argmin",
})
_NAMED_BUILTINS = frozenset({"abs", "max", "min", "sum", "round", "pow"})
# Calls whose op is none where the tensor already is what they make (``.half()`` of a float16
# tensor, ``.contiguous()`` of a contiguous one): straight-line code that runs once either way
# may still make a cast or copy the skipped side made, or make none where that side did.
_MAY_BE_NONE = frozenset({
    "to", "type", "type_as", "half", "float", "double", "bfloat16", "int", "long", "short", "bool", "byte",
    "char", "contiguous", "reshape", "reshape_as", "flatten", "view_as", "cpu", "cuda",
})
_CASTS = frozenset({"_to_copy", "convert_element_type", "clone", "expand", "view"})
_OPERATOR_OPS: Mapping[type, frozenset[str]] = {
    ast.Add: frozenset({"add"}),
    ast.Sub: frozenset({"sub", "rsub"}),
    ast.Mult: frozenset({"mul"}),
    ast.Div: frozenset({"div"}),
    ast.FloorDiv: frozenset({"floor_divide", "div"}),
    ast.Mod: frozenset({"remainder", "fmod"}),
    ast.Pow: frozenset({"pow"}),
    ast.MatMult: frozenset({"matmul", "mm", "bmm", "addmm", "t", "_unsafe_view", "dot", "mv"}),
    ast.BitAnd: frozenset({"bitwise_and", "logical_and"}),
    ast.BitOr: frozenset({"bitwise_or", "logical_or"}),
    ast.BitXor: frozenset({"bitwise_xor", "logical_xor"}),
    ast.LShift: frozenset({"bitwise_left_shift"}),
    ast.RShift: frozenset({"bitwise_right_shift"}),
    ast.USub: frozenset({"neg"}),
    ast.Invert: frozenset({"bitwise_not", "logical_not"}),
}
_COMPARE_OPS = frozenset({"eq", "ne", "lt", "le", "gt", "ge"})
_SUBSCRIPT_OPS = frozenset({
    "select", "slice", "index", "unsqueeze", "squeeze", "alias", "index_put", "copy",
    "slice_scatter", "select_scatter",
})


def op_name(target: str) -> str:
    """The name of an op target as a graph prints it: ``torch.ops.aten.relu.default`` -> ``relu``."""
    parts = target.split(".")
    return parts[3] if len(parts) >= 4 and parts[:2] == ["torch", "ops"] else parts[-1]


def _same(a: str, b: str) -> bool:
    """Whether call name ``a`` may make op ``b`` (``clamp`` makes ``clamp_min``; ``relu_`` makes ``relu``)."""
    a, b = a.strip("_"), b.strip("_")
    return a == b or a.startswith(b + "_") or b.startswith(a + "_")


def _root(e: ast.expr) -> str | None:
    while isinstance(e, ast.Attribute):
        e = e.value
    return e.id if isinstance(e, ast.Name) else None


def may_make_up(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    test_line: int,
    ops: Iterable[str],
    seen: Mapping[int, Sequence[str]],
    agreed: Mapping[int, tuple[bool, bool]] | None = None,
    after: int | None = None,
    same_calls: Callable[[ast.Call], bool] | None = None,
) -> tuple[int, str] | None:
    """Where code of ``fn`` outside the ``if`` at ``test_line`` may make one of ``ops``
    (op names or targets) a different number of times than a trace through the other side
    of that ``if`` would: (its line, what it is), or None where no code can. ``seen``:
    line -> the op targets a key's graph of the function shows the line made. ``agreed``:
    the line of another ``if`` or conditional expression -> (the side the call takes, whether
    the key's graph has ops from that side), for an ``if`` whose other side the key's graph has no op from: that
    side makes no op in either trace (it is not read), and the side the call takes runs
    once in both where the key's graph has ops from it (read as straight-line code).
    ``after``: the last line of an ``if`` whose body exits (``return``, ``raise``...) and
    has no ``else``: the code after it runs only in the trace that skipped the body, so
    every line past ``after`` is read as code that may run a different number of times.
    ``same_calls``: the calls of the function's own code (``self.lin(x)``) that run alike in
    both traces, where they run once in each (straight-line code); any other such call may
    make anything. The test at ``test_line`` is an ``if`` statement or a conditional
    expression (its sides are what differ)."""
    agreed = agreed or {}
    want = {op_name(o) for o in ops}
    if not want:
        return None
    found: list[tuple[int, str]] = []

    def made(names: Iterable[str], line: int) -> bool:
        return any(_same(n, w) for n in (*names, *(op_name(o) for o in seen.get(line, ()))) for w in want)

    def visit(node: ast.AST, varies: bool) -> None:
        if found:
            return
        if isinstance(node, (ast.If, ast.IfExp)) and node.lineno == test_line:
            return
        if after is not None and getattr(node, "lineno", 0) > after:
            varies = True
        if isinstance(node, ast.If) and node.lineno in agreed:
            body, both = agreed[node.lineno]
            visit(node.test, varies)
            for child in node.body if body else node.orelse:
                visit(child, varies or not both)
            return
        if isinstance(node, ast.IfExp) and node.lineno in agreed \
                and not any(isinstance(n, ast.IfExp) and n is not node for n in ast.walk(node)):
            body, both = agreed[node.lineno]
            visit(node.test, varies)
            visit(node.body if body else node.orelse, varies or not both)
            return
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id in _NO_OPS:
                pass
            elif not varies and same_calls is not None and same_calls(node):
                pass
            elif isinstance(f, ast.Name) and f.id not in _NAMED_BUILTINS or not isinstance(f, (ast.Name, ast.Attribute)) \
                    or _root(f) == "self":
                found.append((line, f"a call of code whose ops the cache does not show ({ast.unparse(f)[:60]})"))
                return
            elif varies:
                name = f.id if isinstance(f, ast.Name) else f.attr  # type: ignore[union-attr]
                if made((name,), line) or (line not in seen and name.strip("_") not in _LEAF):
                    found.append((line, f"`{ast.unparse(f)[:60]}(...)`, which may make them"))
                    return
            elif isinstance(f, ast.Attribute) and f.attr in _MAY_BE_NONE and made(_CASTS | {"_unsafe_view", "alias"}, 0):
                found.append((line, f"`{ast.unparse(f)[:60]}(...)`, whose op depends on what it is given"))
                return
        elif varies and isinstance(node, (ast.BinOp, ast.AugAssign, ast.UnaryOp)):
            names = _OPERATOR_OPS.get(type(node.op), frozenset()) | _CASTS
            if made(names, line):
                found.append((line, f"`{ast.unparse(node)[:60]}`, which may make them"))
                return
        elif varies and isinstance(node, ast.Compare) and made(_COMPARE_OPS | _CASTS, line):
            found.append((line, f"`{ast.unparse(node)[:60]}`, which may make them"))
            return
        elif varies and isinstance(node, ast.Subscript) and made(_SUBSCRIPT_OPS | _CASTS, line):
            found.append((line, f"`{ast.unparse(node)[:60]}`, which may make them"))
            return
        for field, value in ast.iter_fields(node):
            inner = varies or _varies(node, field, value)
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.AST):
                    visit(child, inner)

    for stmt in fn.body:
        visit(stmt, False)
    return found[0] if found else None


def _varies(node: ast.AST, field: str, value: object) -> bool:
    """Whether field ``field`` of ``node`` may run a different number of times from one trace to another."""
    if isinstance(node, (ast.If, ast.IfExp, ast.While)):
        return field != "test"
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return field != "iter"
    if isinstance(node, ast.BoolOp):
        return True  # the first operand always runs; the rest may not (taken as varying too)
    if isinstance(node, ast.Match):
        return field != "subject"
    return isinstance(node, (ast.Try, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda,
                             ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or (
        hasattr(ast, "TryStar") and isinstance(node, ast.TryStar))
