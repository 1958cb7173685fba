"""A ``split`` into pieces of a SymInt size: the number of pieces is part of the graph.

``x.split(n, dim)`` with ``n`` or the dim's size symbolic makes a list whose length
Dynamo must know: the trace evaluates ``ceil(size / n)`` and guards it
(``((-1 + n + size) // n) == k`` among the entry's guards: ``split`` in
torch/_refs/__init__.py takes ``guard_int`` of ``ceil_div``), and the printed graph
holds ``split = torch.ops.aten.split.Tensor(x, n, dim)`` and one ``split[i]`` per piece
the trace read. A call that fails that equality splits into another number of pieces,
and where the code reads every piece (the list assigned to a local, then an
unconditional loop accumulating an op on each, ``sum`` over it, ``torch.cat`` of it:
:func:`~fxcache_core.lookup.sequence_lengths.reads_every_element`) and this key's graph
reads all ``k`` (``split[0]`` to ``split[k - 1]``), the call's trace reads another
number: not this key's graph, whatever else it does (or it raises).
:func:`split_count_differs` says so. The source is read with ``ast``, never run; never
imports torch.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping, Sequence

from fxcache_core.decode.symbols import SymbolInfo
from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.functions.trees import function_node
from fxcache_core.guards.expr import parse_guards
from fxcache_core.guards.user_terms import clause_in_user_terms, placeholder_names
from fxcache_core.lookup.retrace import int_literal, placeholder_of
from fxcache_core.lookup.sequence_lengths import reads_every, reads_every_element
from fxcache_core.lookup.traced_lines import traced_lines
from fxcache_core.reasons import Reason

__all__ = ["piece_count_clause", "split_count_differs"]

_SPLIT_RE = re.compile(r"^\s*(\w+) = torch\.ops\.aten\.split\.Tensor\((\w+), (\w+)(?:, (-?[0-9]+))?\)\s*$")


def _terms(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _terms(node.left) + _terms(node.right)
    return [node]


def _name(node: ast.expr) -> str | None:
    """``tN`` of ``L['tN']``; ``-1`` as the string ``"-1"``."""
    return placeholder_of(node) or ("-1" if int_literal(node) == -1 else None)


def piece_count_clause(text: str) -> tuple[str, str, int] | None:
    """``(n, size, k)`` for a guard clause ``((-1 + L['tN'] + L['tS']) // L['tN']) == k``
    (the terms of the sum in any order): ``ceil(size / n) == k``, the number of pieces
    of a split; None for any other clause."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq)):
        return None
    left, right = node.left, node.comparators[0]
    if isinstance(left, ast.Constant):
        left, right = right, left
    if not (isinstance(left, ast.BinOp) and isinstance(left.op, ast.FloorDiv) and isinstance(right, ast.Constant)
            and type(right.value) is int and right.value >= 1):
        return None
    n = _name(left.right)
    terms = [_name(t) for t in _terms(left.left)]
    if n is None or n == "-1" or None in terms or len(terms) != 3 or terms.count("-1") != 1 or terms.count(n) != 1:
        return None
    (size,) = [t for t in terms if t not in ("-1", n)]
    return n, size, right.value  # type: ignore[return-value]


def _split_in_graph(graph: str, n_symbol: str, size_symbol: str) -> tuple[str, int, int] | None:
    """``(file, line, pieces read)`` of the one ``aten.split.Tensor`` of ``graph`` whose
    split size is the SymInt ``n_symbol`` and whose split dim has the size ``size_symbol``,
    where its ``split[i]`` are read for ``i`` in ``0..k-1`` (k returned); None otherwise
    (none, two splits, a piece skipped)."""
    lines = list(traced_lines(graph))
    splits = [(f, ln, m) for f, ln, _c, text in lines if (m := _SPLIT_RE.match(text)) is not None]
    if len(splits) != 1 or len([t for *_, t in lines if ".split." in t]) != 1:
        return None
    file, line, m = splits[0]
    name, tensor, size_arg, dim = m.group(1), m.group(2), m.group(3), int(m.group(4) or 0)
    if not re.search(rf'\b{re.escape(size_arg)}: "Sym\({re.escape(n_symbol)}\)"', graph):
        return None
    shape = re.search(rf'\b{re.escape(tensor)}: "[a-z0-9]+\[([^\]]*)\]', graph)
    dims = [d.strip() for d in shape.group(1).split(",")] if shape is not None else []
    if not dims or not -len(dims) <= dim < len(dims) or dims[dim] != size_symbol:
        return None
    read = {int(i) for i in re.findall(rf"= {re.escape(name)}\[([0-9]+)\]", graph)}
    if not read or read != set(range(max(read) + 1)):
        return None
    return file, line, max(read) + 1


def _reads_every_piece(fn: ast.FunctionDef | ast.AsyncFunctionDef, line: int) -> int | None:
    """The line where ``fn`` reads every piece of the ``.split(...)`` call at ``line``, as
    :func:`~fxcache_core.lookup.sequence_lengths.reads_every_element` reads every element
    (an unconditional loop accumulating an op on each, ``sum`` of a generator over it, a
    ``torch`` join of it): over the call itself, or over the local it is assigned to,
    once; None otherwise (``zip`` with another sequence, pieces read by index)."""
    calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and n.func.attr == "split" and n.lineno <= line <= (n.end_lineno or n.lineno)]
    if len(calls) != 1:
        return None
    (call,) = calls
    every = reads_every(fn, lambda e: 0 if e is call else None)
    if every is not None:
        return every.line
    params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
    for node in fn.body:
        if isinstance(node, ast.Assign) and node.value is call and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id not in params:
            every = reads_every_element(fn, node.targets[0].id, stores=1)
            return every.line if every is not None and every.start == 0 else None
    return None


def split_count_differs(guards_expr: str | None, symbols: Sequence[SymbolInfo], values: Mapping[str, int],
                        graph: Callable[[], str | None], frame: Callable[[], CompiledFrom | None]) -> Reason | None:
    """Why a call is not this key's graph where one clause of the entry's guards
    (``guards_expr``, as stored: ``L['tN']`` placeholders) is a split's number of pieces
    (:func:`piece_count_clause`) that the call fails, the key's printed graph reads every
    one of them, and the source of its compiled frame reads every piece of that split
    (module docstring): the reason (``split-pieces-differ``). ``symbols``: the key's
    placeholders; ``values``: the call's value per placeholder; ``graph`` and ``frame``
    read the printed graph and the compiled frame, asked only where a clause is a piece
    count. None where any of that is not shown."""
    if not guards_expr:
        return None
    try:
        counts = [(c.text, got) for c in parse_guards(guards_expr).clauses if (got := piece_count_clause(c.text))]
    except Exception:  # noqa: BLE001 - guards fxcache cannot read decide nothing here
        return None
    text = graph() if counts else None
    f = frame() if text is not None else None
    if text is None or f is None:
        return None
    for clause, got in counts:
        why = _count_differs(text, clause, got, symbols, values, f)
        if why is not None:
            return why
    return None


def _count_differs(graph: str, clause: str, got: tuple[str, str, int], symbols: Sequence[SymbolInfo],
                   values: Mapping[str, int], frame: CompiledFrom) -> Reason | None:
    n, size, k = got
    by = {s.placeholder: s for s in symbols}
    if n not in by or size not in by or not by[n].expr or not by[size].expr or n not in values or size not in values \
            or values[n] < 1:
        return None
    split = _split_in_graph(graph, by[n].expr or "", by[size].expr or "")
    if split is None or split[2] != k or split[0] != frame.file:
        return None
    fn = function_node(frame.file, frame.line, frame.function)
    loop = _reads_every_piece(fn, split[1]) if fn is not None else None
    if loop is None:
        return None
    pieces = -(-values[size] // values[n])
    if pieces == k:
        return None
    names = placeholder_names(symbols)
    return Reason(
        f"this call fails {clause_in_user_terms(clause, names)}: the split at line {split[1]} makes {pieces} "
        f"pieces of {names.get(n, n)} where this key's graph has {k}, and the code reads every piece (line "
        f"{loop}): its trace reads {pieces}, another graph (or it raises)", "split-pieces-differ")
