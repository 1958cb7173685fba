"""A list, tuple or ``*args`` argument's length: what the elements a key takes say
about the calls it can serve.

A key is looked up by its graph, and Dynamo makes each element of a list, a tuple or a
``*args`` parameter (a tuple local of the frame: ``L['xs']``, its elements
``L['xs'][0]``...) that the code computes with an input of that graph. So a key that
takes element ``j`` as an input was traced with a sequence of more than ``j`` elements,
and a call whose sequence ends before ``j``, where the code reads every element (below)
and no index past the call's, traces a graph without that input: another graph
(:func:`shorter_sequence`; read by index, the call's trace raises ``IndexError``). (Within one process Dynamo also guards the length,
``SEQUENCE_LENGTH`` in torch/_dynamo/variables/builder.py ``wrap_listlike``; a fresh
process traces anew, and only the graph decides.) A call's sequence is the elements it
gives (``xs[0]=[4,4]`` alone is a one-element sequence).

The other way needs the source: a key that does not take an element the call gives was
traced with a shorter sequence only if the code reads that element into the graph
whenever it is there, as a loop over the sequence (or over a slice of it open at the
end) accumulating an op on each, ``sum`` of a generator over it and ``torch.cat``/
``torch.stack`` of it do, unconditionally (:func:`reads_every_element`): then the
call's trace takes it as an input, and its graph is another. Where the code reads
elements by index only, an element past them changes nothing (torch hits the key with
it), and nothing here says so. The ``def`` is read with ``ast``
(:func:`~fxcache_core.functions.trees.function_node`), never run. Never imports torch.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable

from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.functions.trees import function_node
from fxcache_core.reasons import Reason

__all__ = ["EveryElement", "Sequence", "element_of", "reads_every", "reads_every_element", "shorter_sequence",
           "vararg_name"]

_ELEMENT_RE = re.compile(r"(L\['\w+'\])\[([0-9]+)\]")
_JOINS = ("cat", "concat", "concatenate", "stack")
"""``torch`` functions whose first argument is a sequence of tensors, every one an input of the op."""


def element_of(src: str) -> tuple[str, int] | None:
    """``(base, index)`` of a sequence element's source (``L['xs'][2]`` -> (``L['xs']``,
    2)); None for any other source (a nested path, a dict key, an attribute)."""
    m = _ELEMENT_RE.fullmatch(src)
    return None if m is None else (m.group(1), int(m.group(2)))


def vararg_name(frame: CompiledFrom | None) -> str | None:
    """The name of the ``*args`` parameter of ``frame``'s function (``xs`` for
    ``def f(*xs)``), read from its source; None where it has none or the source is not
    readable."""
    if frame is None:
        return None
    fn = function_node(frame.file, frame.line, frame.function)
    return None if fn is None or fn.args.vararg is None else fn.args.vararg.arg


def shorter_sequence(src: str, given: Iterable[str], frame: CompiledFrom | None) -> Reason | None:
    """A tensor input ``src`` of the key that is element ``j`` of a sequence
    (``L['xs'][1]``), where the call gives elements of that sequence (``given``: the
    call's sources, ``L['xs'][0]``) and none at ``j`` or past it, and the source of
    ``frame`` reads every element from an index at or before ``j`` on
    (:func:`reads_every_element`) and otherwise only elements the call gives, by int
    index (so the call's trace does not raise): the key was traced with more elements
    than the call has, and the call's trace cannot take that input: another graph, the
    reason (``list-shorter``). None where ``src`` is no element, the call gives no
    element of its sequence or one at ``j`` or later (an element left out in the middle
    is the user's to give), or the source does not show that (an index past the call's
    elements raises ``IndexError`` in the trace; ``len()`` may branch)."""
    el = element_of(src)
    if el is None or frame is None:
        return None
    base, j = el
    indices = [e[1] for g in given if (e := element_of(re.sub(r"^(L\['\w+'\]\[[0-9]+\]).+$", r"\1", g))) and e[0] == base]
    if not indices or max(indices) >= j:
        return None
    n = max(indices) + 1
    name = base[3:-2]
    fn = function_node(frame.file, frame.line, frame.function)
    every = reads_every_element(fn, name) if fn is not None else None
    if fn is None or every is None or every.start > j or not _reads_within(fn, name, n):
        return None
    return Reason(
        f"{src} is a tensor input of this key, and the call's {base} has {n} element{'s' if n > 1 else ''}: "
        f"this key was traced with more than {j}, the code reads every element (line {every.line}), and the "
        "call's trace cannot take that input: torch traces another graph", "list-shorter")


def _reads_within(fn: ast.FunctionDef | ast.AsyncFunctionDef, name: str, n: int) -> bool:
    """Whether every read of ``name`` in ``fn`` is a loop or join's sequence (the name
    itself, a slice of it, ``enumerate``/``reversed`` of those) or an element below ``n``
    by an int literal index: nothing that raises on ``n`` elements or asks their number."""
    parent: dict[ast.AST, ast.AST] = {c: p for p in ast.walk(fn) for c in ast.iter_child_nodes(p)}
    for node in ast.walk(fn):
        if not (isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)):
            continue
        up = parent.get(node)
        if isinstance(up, ast.Subscript) and up.value is node:
            if isinstance(up.slice, ast.Slice):
                continue
            if isinstance(up.slice, ast.Constant) and type(up.slice.value) is int and 0 <= up.slice.value < n:
                continue
            return False
        if isinstance(up, (ast.For, ast.AsyncFor, ast.comprehension)) and up.iter is node:
            continue
        if isinstance(up, ast.Call) and node in up.args and (
                (isinstance(up.func, ast.Name) and up.func.id in ("enumerate", "reversed")) or _is_join(up.func)):
            continue
        return False
    return True


class EveryElement(tuple[int, int]):
    """``(line, start)``: the line of the code that reads every element of a sequence
    from index ``start`` on (a loop, a comprehension, ``torch.cat``)."""

    __slots__ = ()

    @property
    def line(self) -> int:
        """The line of the loop or call (1-based, in the function's file)."""
        return self[0]

    @property
    def start(self) -> int:
        """The first index it reads (0, or ``k`` of a slice ``xs[k:]``)."""
        return self[1]


def reads_every_element(fn: ast.FunctionDef | ast.AsyncFunctionDef, param: str,
                        stores: int = 0) -> EveryElement | None:
    """Where ``fn`` reads every element of the sequence parameter ``param`` from some index
    on into an op of the graph, in a form whose every element is surely read: a statement
    of the function's own body (not inside an ``if``, a loop, a ``with``, a nested
    ``def``, a ``lambda``, a conditional expression or ``and``/``or``) that is a ``for``
    over ``param`` itself, a slice of it open at the end (``param[1:]``, a non-negative int
    literal start, no step) or ``enumerate``/``reversed`` of those, whose body is only
    assignments that accumulate (``out = out + x``, ``out += x``) an op on the element and
    in-place ops on it (``p.add_(g)``); a ``return`` of a list comprehension over one of
    them, or ``sum`` of a generator, whose element is an op on it; or
    ``torch.cat``/``concat``/``concatenate``/``stack`` of one of them (or of such a
    comprehension). The first such place, None when there is none or the name is assigned
    in the function more than ``stores`` times (a parameter: never; a local: its one
    assignment), as the loop may read another sequence. ``zip`` stops at its shortest
    sequence and ``all``/``any`` read no element into the graph: neither counts."""
    if sum(isinstance(n, ast.Name) and n.id == param and not isinstance(n.ctx, ast.Load)
           for n in ast.walk(fn)) > stores:
        return None
    return reads_every(fn, lambda e: _start(e, param))


Sequence = Callable[[ast.expr], "int | None"]
"""Whether an expression is the sequence asked about: the first index of it that it
yields (``xs`` -> 0, ``xs[2:]`` -> 2), None when it is another expression."""


def reads_every(fn: ast.FunctionDef | ast.AsyncFunctionDef, seq: Sequence) -> EveryElement | None:
    """Where ``fn`` reads every element of the sequence ``seq`` recognises into an op of the
    graph, in the forms :func:`reads_every_element` lists; None where it does not."""
    for stmt in fn.body:
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            start = _loop_start(stmt.iter, stmt.target, seq)
            if start is not None and _accumulates(stmt.body, start[1]):
                return EveryElement((stmt.lineno, start[0]))
        if isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.ListComp):
            got = _comprehension_start(stmt.value, seq)
            if got is not None:
                return EveryElement((stmt.lineno, got))
        for n in _unconditional(stmt):
            got = _whole_read(n, seq)
            if got is not None:
                return EveryElement((getattr(n, "lineno", stmt.lineno), got))
    return None


def _unconditional(node: ast.AST) -> Iterable[ast.AST]:
    """The nodes of a statement that run whenever it does: not under a nested ``def``,
    ``lambda``, ``if``, loop, ``with``, ``try``, conditional expression or ``and``/``or``."""
    yield node
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.If, ast.IfExp,
                         ast.BoolOp, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try,
                         ast.comprehension)):
        return
    for child in ast.iter_child_nodes(node):
        yield from _unconditional(child)


def _loop_start(it: ast.expr, target: ast.expr, seq: Sequence) -> tuple[int, set[str]] | None:
    """(the first index read, the names the element is bound to) of a loop ``for TARGET in
    IT`` over the sequence (as ``seq`` recognises it: the parameter or a slice of it open at
    the end), or ``enumerate``/``reversed`` of it; None otherwise."""
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id in ("enumerate", "reversed") \
            and len(it.args) == 1 and not it.keywords:
        start = seq(it.args[0])
        if start is None:
            return None
        if it.func.id == "enumerate":
            if not (isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(target.elts[1], ast.Name)):
                return None
            return start, {target.elts[1].id}
        return (start, {target.id}) if isinstance(target, ast.Name) else None
    start = seq(it)
    return (start, {target.id}) if start is not None and isinstance(target, ast.Name) else None


_METADATA = frozenset({"dim", "ndimension", "size", "numel", "nelement", "stride", "storage_offset",
                       "is_contiguous", "element_size", "is_floating_point", "is_complex", "get_device",
                       "data_ptr", "type", "tolist", "item"})
"""Tensor methods that read metadata, not the tensor's values: no op of the graph takes it."""
_NOT_OPS = frozenset({"len", "isinstance", "print", "type", "id", "hasattr", "getattr", "bool", "int", "float",
                      "str", "repr", "all", "any"})


def _op_on(expr: ast.AST, names: set[str]) -> bool:
    """Whether ``expr`` applies an op to one of ``names``: an operand of arithmetic, an
    argument of a call that is no builtin of :data:`_NOT_OPS`, or the receiver of a
    method that is no metadata read (:data:`_METADATA`)."""
    def named(e: ast.AST) -> bool:
        return isinstance(e, ast.Name) and e.id in names
    for n in _unconditional(expr):
        if isinstance(n, ast.BinOp) and (named(n.left) or named(n.right)):
            return True
        if isinstance(n, ast.UnaryOp) and named(n.operand):
            return True
        if isinstance(n, ast.Call):
            if isinstance(n.func, ast.Name) and n.func.id in _NOT_OPS:
                continue
            if any(named(a) for a in n.args):
                return True
            if isinstance(n.func, ast.Attribute) and named(n.func.value) and n.func.attr not in _METADATA:
                return True
    return False


def _accumulates(body: list[ast.stmt], names: set[str]) -> bool:
    """Whether a loop body is only assignments that each keep what they computed (the
    target is read in its own value, or augmented) and in-place ops on the element
    (``p.add_(g)``), and at least one applies an op to the element (``names``)."""
    op = False
    for stmt in body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute) \
                and stmt.value.func.attr.endswith("_") and not stmt.value.func.attr.startswith("_") \
                and isinstance(stmt.value.func.value, ast.Name) and stmt.value.func.value.id in names:
            op = True  # an in-place op on the element (p.add_(g)): a mutation the graph keeps
            continue
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            value = stmt.value
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                and any(isinstance(n, ast.Name) and n.id == stmt.targets[0].id for n in ast.walk(stmt.value)):
            value = stmt.value
        else:
            return False
        op = op or _op_on(value, names)
    return op


def _whole_read(n: ast.AST, seq: Sequence) -> int | None:
    """The first index of the sequence a ``sum(<generator>)`` or a ``torch`` join reads
    into the graph at ``n``; None when ``n`` is neither."""
    if not (isinstance(n, ast.Call) and n.args):
        return None
    arg = n.args[0]
    is_sum = isinstance(n.func, ast.Name) and n.func.id == "sum" and isinstance(arg, ast.GeneratorExp)
    if not is_sum and not _is_join(n.func):
        return None
    if isinstance(arg, (ast.GeneratorExp, ast.ListComp)):
        return _comprehension_start(arg, seq)
    return None if is_sum else seq(arg)


def _comprehension_start(comp: ast.GeneratorExp | ast.ListComp, seq: Sequence) -> int | None:
    """The first index of the sequence that a comprehension with one unfiltered loop over
    it reads into an op of each element; None otherwise."""
    if len(comp.generators) != 1 or comp.generators[0].ifs or comp.generators[0].is_async:
        return None
    got = _loop_start(comp.generators[0].iter, comp.generators[0].target, seq)
    return got[0] if got is not None and _op_on(comp.elt, got[1]) else None


def _is_join(f: ast.expr) -> bool:
    return isinstance(f, ast.Attribute) and f.attr in _JOINS and isinstance(f.value, ast.Name) \
        and f.value.id == "torch"


def _start(node: ast.expr, param: str) -> int | None:
    """The first index of ``param`` that ``node`` (``param`` or ``param[k:]``) yields."""
    if isinstance(node, ast.Name) and node.id == param:
        return 0
    if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == param
            and isinstance(node.slice, ast.Slice) and node.slice.upper is None and node.slice.step is None):
        return None
    lower = node.slice.lower
    if lower is None:
        return 0
    if isinstance(lower, ast.Constant) and type(lower.value) is int and lower.value >= 0:
        return lower.value
    return None
