"""Parameters a first frame's graph cannot depend on: read only after its graph break.

When Dynamo cannot trace a statement (a data-dependent ``if y.sum() > 0:``) it compiles
the graph traced so far, runs the statement eagerly and compiles the rest of the
function as a resume frame of its own (``torch_dynamo_resume_in_<fn>_at_<line>``,
torch/_dynamo/resume_execution.py, ``create_call_resume_at`` in
torch/_dynamo/symbolic_convert.py). Dynamo traces a frame's code in order and wraps an
argument only when the code reads it (``LazyVariableTracker``), so an argument the code
first reads after the break line is passed on to the resume frame, never read by the
first frame's trace: the first frame's graph, and its AOTAutograd key (a hash of the
graph), are the same for every value of it.

:func:`read_after_break` says which parameters that holds for, for one key of a first
frame, and only where it is exact:

* the cache holds a resume frame of the function at line ``L`` (a key of
  ``torch_dynamo_resume_in_<fn>_at_L`` from the same file, ``L`` inside the ``def``);
* the key's graph has ops from line ``L`` and none from a later line of the function
  (:func:`~fxcache_core.lookup.branches.traced_code`, the whole user stack of each op),
  so its trace stopped there;
* the statement at ``L`` is one of the function body's own (not inside a loop, a
  ``with`` or a ``try``), an ``if`` or ``while`` whose test is on ``L`` and asks a
  tensor's truth (as far as the source says: a tensor argument of the call, or what the
  code computes from one), which Dynamo cannot trace: any trace that reaches ``L``
  breaks there. The function reads no frame dynamically (``locals()``, ``eval``...), and
  is not compiled through a decorator's wrapper or as a whole module;
* every read of the parameter is on a line after that test, in code the trace
  reaches only through line ``L`` (a read in a nested function or a loop before ``L``
  is on an earlier line), and the body never assigns it.

Anything else leaves the parameter to the other rules. Nothing here imports torch or
runs the source.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from dataclasses import replace

from fxcache_core.cache.scan import CacheKey
from fxcache_core.catalog.reader import Catalog
from fxcache_core.functions.frames import CompiledFrom, compiled_from
from fxcache_core.functions.params import FrameReads, ParamUse, frame_reads
from fxcache_core.functions.trees import function_node
from fxcache_core.lookup.accounting import Accounting
from fxcache_core.lookup.binding import InputValue, TensorArg
from fxcache_core.lookup.branches import traced_code
from fxcache_core.lookup.float_exprs import TensorKinds
from fxcache_core.lookup.source_values import param_sources
from fxcache_core.reasons import Reason

__all__ = ["BreakLines", "accounted_after_break", "late_reads", "read_after_break", "sources_of"]


class BreakLines:
    """The lines each function of the cache has a resume frame at (its graph breaks),
    read from every key's compiled frame on first use (one per ``match``)."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._lines: dict[tuple[str, str], set[int]] | None = None

    def of(self, function: str, file: str) -> frozenset[int]:
        """The lines ``L`` of the keys compiled from ``torch_dynamo_resume_in_<function>_at_L``
        of ``file`` (a resume of that function itself, not of a resume frame of it)."""
        if self._lines is None:
            self._lines = {}
            for k in self.catalog.scan.keys:
                c = compiled_from(self.catalog, k)
                m = re.fullmatch(r"torch_dynamo_resume_in_(\w+?)_at_([0-9]+)", c.function) if c is not None else None
                if c is not None and m is not None and not m.group(1).startswith("torch_dynamo_resume_in_"):
                    self._lines.setdefault((m.group(1), c.file), set()).add(int(m.group(2)))
        return frozenset(self._lines.get((function, file), ()))


def read_after_break(catalog: Catalog, key: CacheKey, frame: CompiledFrom | None,
                     breaks: BreakLines, inputs: Mapping[str, InputValue]) -> Mapping[str, Reason]:
    """The parameters of ``key``'s compiled ``frame`` (a first frame, not a resume
    frame) that its code reads only after the graph break its graph ends at, each with
    the reason (code ``after-break``); empty where that is not known exactly (see the
    module docstring). ``inputs``: the call's, by the user's sources. Raises nothing."""
    if frame is None or frame.parent is not None or frame.wrappers or frame.whole_module \
            or frame.function.startswith("torch_dynamo_resume_in_"):
        return {}
    lines = breaks.of(frame.function, frame.file)
    if not lines:
        return {}
    traced = traced_code(catalog, key, frame.function, frame.file)
    first = catalog.first_readable(key)
    if first is None or traced is None or not traced.lines or max(traced.lines) not in lines:
        return {}
    tensors = frozenset(n for n in frame.params if any(
        isinstance(inputs.get(s), TensorArg) for s in sources_of((n,), frame, inputs)))
    taken = {t for t in (*first[1].arg_sources, *(i.source for i in first[1].inputs)) if t}
    # A parameter the key takes an input from was read before the break: the source says otherwise.
    return {n: why for n, why in late_reads(frame, max(traced.lines), tensors).items()
            if not any(t == s or t.startswith((s + "[", s + ".")) for s in param_sources(n, frame) for t in taken)}


def late_reads(frame: CompiledFrom, at: int, tensors: frozenset[str]) -> dict[str, Reason]:
    """The parameters of ``frame``'s function that its source reads only after the
    function body's own statement at line ``at`` (see the module docstring), each with
    the reason (code ``after-break``): what the cache's part of :func:`read_after_break`
    leaves to the source. Empty where the source is not readable, reads frames
    dynamically, or ``at`` is not such a statement (inside a loop, two on the line...)."""
    reads = frame_reads(frame)
    fn = function_node(frame.file, frame.line, frame.function)
    if isinstance(reads, Reason) or reads.opaque or fn is None:
        return {}
    end = fn.end_lineno or fn.lineno
    if not fn.lineno <= at <= end or any(a <= at <= b for a, b in reads.loops):
        return {}
    a = fn.args
    kinds = TensorKinds(fn, tensors, frozenset(p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)))
    after = _statement_end(fn, at, kinds)
    if after is None:
        return {}
    return {p.name: Reason(
        f"{p.name}: read only after the graph break at line {at} (by the resume frame), where this key's "
        f"graph ends: no value of it changes this graph", "after-break")
        for p in _late(reads, after)}


def _statement_end(fn: ast.FunctionDef | ast.AsyncFunctionDef, line: int, kinds: TensorKinds) -> int | None:
    """The last line of the test of the function body's own ``if`` or ``while`` at
    ``line`` whose truth is a tensor's (:func:`_tensor_test`: Dynamo cannot trace it and
    breaks the graph there, ``generic_jump`` in torch/_dynamo/symbolic_convert.py); None
    where the statement at ``line`` is another, nested in a block, or shares its lines."""
    here = [s for s in fn.body if s.lineno <= line <= (s.end_lineno or s.lineno)]
    if len(here) != 1 or not isinstance(here[0], (ast.If, ast.While)):
        return None
    t = here[0].test
    if not t.lineno <= line <= (t.end_lineno or t.lineno) or not _tensor_test(t, kinds):
        return None
    body = [*here[0].body, *here[0].orelse]
    if body and body[0].lineno <= (t.end_lineno or t.lineno):
        return None  # `if c: y = y * n` on one line
    return t.end_lineno


def _tensor_test(t: ast.expr, kinds: TensorKinds) -> bool:
    """Whether the source says ``t``'s truth is first asked of a tensor: a tensor, a
    comparison with one, ``not`` of such a test, or ``and``/``or`` whose first operand is."""
    if isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not):
        return _tensor_test(t.operand, kinds)
    if isinstance(t, ast.BoolOp):
        return _tensor_test(t.values[0], kinds)
    if isinstance(t, ast.Compare):
        return len(t.ops) == 1 and not isinstance(t.ops[0], (ast.Is, ast.IsNot, ast.In, ast.NotIn)) \
            and (kinds.tensor(t.left) or kinds.tensor(t.comparators[0]))
    return kinds.tensor(t)


def _late(reads: FrameReads, after: int) -> list[ParamUse]:
    """The parameters read, never assigned, and read only on lines after ``after``."""
    out = []
    for p in reads.params:
        lines = [n for _, n in p.tests] + list(p.other)
        if lines and not p.assigned and min(lines) > after:
            out.append(p)
    return out



def sources_of(names: Iterable[str], frame: CompiledFrom | None, inputs: Iterable[str]) -> frozenset[str]:
    """The call's inputs (the user's sources: ``L['n']``, ``L['args'][1]``,
    ``L['kwargs']['n']``) that give the parameters ``names`` of ``frame``."""
    want = {s for n in names for s in param_sources(n, frame)}
    return frozenset(src for src in inputs if src in want)


def accounted_after_break(acc: Accounting, after: Mapping[str, Reason]) -> Accounting:
    """``acc`` with each parameter of ``after`` accounted for by its reason (whatever the
    other rules said of it: no value of it changes the key's graph)."""
    if not after:
        return acc
    return replace(acc, params=tuple(
        replace(p, status="accounted", how=after[p.name], brief="read only after the graph break")
        if p.name in after else p for p in acc.params))
