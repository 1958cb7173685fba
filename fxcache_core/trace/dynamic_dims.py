"""A recompile that made more dims symbolic: the dims, and the root cause they are.

Automatic dynamic (``automatic_dynamic_shapes`` in torch/_dynamo/config.py; the
frame state of torch/_dynamo/pgo.py) recompiles a frame whose size guard failed
with the changed dims symbolic. The new key's nearest key is then the one the
earlier compile of the same frame wrote, and it differs in many components, all
of them following from the new symbols: the graph (the same ops, sizes now
symbols), the example inputs (a SymInt input added: every later input moves one
place, ``example_inputs[0]`` ``int64[1, 8]`` against ``('s27',)``), and
``fx_kwargs[static_input_idxs]`` (the parameters' places moved with them;
``static_input_idxs`` in torch/_inductor/compile_fx.py). Without this the root
cause would be one of those consequences (``static_input_idxs is [2, 3...]``),
in no user's terms.

:func:`newly_symbolic` finds the dims (sources of symbols this compile created
that the earlier one did not) with their value in the earlier compile;
:func:`dynamic_root_cause` makes them the root cause of a new key, its
consequences the components above where they read that way and the rest
``also``. Nothing here reads the cache or imports torch.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from fxcache_core.guards.user_terms import user_source
from fxcache_core.keying.anatomy import ComponentDiff, tensor_fields
from fxcache_core.reasons import Reason
from fxcache_core.trace.explain_report import RootCause
from fxcache_core.trace.run_facts import TraceCompile, TraceRun

_DIM_RE = re.compile(r"^(.*)\.(size|stride)\(\)\[([0-9]+)\]$")
_OP_RE = re.compile(r"torch\.ops\.([\w.]+)\(")
# Ops a graph gains when a size becomes a symbol (torch/_ops.py aten.sym_* overloads,
# torch/fx/experimental/symbolic_shapes.py's runtime asserts): not a change of the model's ops.
_SYM_OPS = ("aten.sym_size", "aten.sym_stride", "aten.sym_numel", "aten.sym_storage_offset",
            "aten._assert_scalar", "aten.sym_constrain_range", "aten._assert_async")


def newly_symbolic(run: TraceRun, c: TraceCompile,
                   written_by: int | None) -> tuple[TraceCompile | None, tuple[tuple[str, int | None], ...]]:
    """The dims ``c`` made symbolic that the compile which wrote its nearest key (lookup
    ``written_by`` of ``run``) did not: (that compile, ((source, its value in that
    compile or None), ...)); sources as torch names them (``L['x'].size()[0]``).
    Nothing where the trace does not show that compile."""
    prev = run.compile_of(run.lookups[written_by]) if written_by is not None else None
    if prev is None or prev is c:
        return None, ()
    before = {s.source for s in prev.symbols if s.source}
    new = [s.source for s in c.symbols if s.source and s.source not in before
           and (".size()[" in s.source or ".stride()[" in s.source)]
    return prev, tuple((src, _value_in(prev, src)) for src in dict.fromkeys(new))


def more_dynamic_note(run: TraceRun, c: TraceCompile, written_by: int | None) -> list[Reason]:
    """The ``more-dynamic-dims`` note of a recompile's new key (see :func:`newly_symbolic`)."""
    prev, dims = newly_symbolic(run, c, written_by)
    if prev is None or not dims:
        return []
    names = ", ".join(dict.fromkeys(user_source(src) for src, _ in dims))
    key = (run.lookups[written_by].key or "") if written_by is not None else ""
    return [Reason(f"a recompile with more dynamic dims than key {key[:12]} (compile {run.label(prev)}): "
                   f"{names} now symbolic", "more-dynamic-dims")]


def dynamic_root_cause(dims: Sequence[tuple[str, int | None]], diffs: Sequence[ComponentDiff]) -> RootCause | None:
    """The root cause of a new key whose compile made ``dims`` symbolic (from
    :func:`newly_symbolic`) against a nearest key differing in ``diffs``: code
    ``more-dynamic-dims``, component the first dim's source, ``this`` ``symbolic``,
    ``cache`` its value in the earlier compile, ``input`` the argument's name. The
    graph is a consequence if its ops are the same but for the ops of symbolic sizes;
    the example inputs if the tensors among them are the same dtypes, ranks and devices
    (moved by the SymInts added); ``fx_kwargs[static_input_idxs]`` always. None without
    dims, where no differing component is one of those (then the dims explain nothing), or
    where the graph calls other ops (the recompile took another branch: more than sizes changed)."""
    if not dims or not diffs:
        return None
    inputs = [d for d in diffs if d.name.startswith("example_inputs[")]
    inputs_follow = bool(inputs) and _same_tensors(inputs)
    consequences, also = [], []
    for d in diffs:
        if d.name == "fx_kwargs[static_input_idxs]" or (d.name.startswith("example_inputs[") and inputs_follow) \
                or (d.name == "gm" and d.a is not None and d.b is not None and _same_ops(d.a.value, d.b.value)):
            consequences.append(d.name)
        else:
            also.append(d.name)
    if not consequences or "gm" in also:
        return None  # the graph calls other ops: more changed than sizes (a branch taken)
    source, value = dims[0]
    m = _DIM_RE.match(source)
    arg = user_source(m.group(1)) if m else None
    return RootCause(source, "symbolic", str(value) if value is not None else None, "more-dynamic-dims",
                     input=arg, consequences=tuple(consequences), also=tuple(also))


def _value_in(c: TraceCompile, source: str) -> int | None:
    m = _DIM_RE.match(source)
    if m is None:
        return None
    base, what, i = m.group(1), m.group(2), int(m.group(3))
    for t in c.tensors:
        if t.source == base:
            dims = t.size if what == "size" else t.stride
            v = dims[i] if i < len(dims) else None
            return v if isinstance(v, int) else None
    return None


def _same_tensors(inputs: Sequence[ComponentDiff]) -> bool:
    """The tensors among the differing example inputs, either side, are the same
    (dtype, rank, device) multiset: moved, or with symbolic sizes, not changed."""
    sides: list[Counter[tuple[str, int, str]]] = [Counter(), Counter()]
    for d in inputs:
        for i, comp in enumerate((d.a, d.b)):
            f = tensor_fields(comp.value) if comp is not None else None
            if f is not None:
                rank = len([x for x in f["shape"].strip("[]").split(",") if x.strip()])
                sides[i][(f["dtype"], rank, f.get("device", ""))] += 1
    return sides[0] == sides[1]


def _same_ops(a: str, b: str) -> bool:
    """Two printed FX graphs call the same ops in the same order, the ops of symbolic
    sizes aside."""
    def ops(text: str) -> list[str]:
        return [o for o in _OP_RE.findall(text) if not o.startswith(_SYM_OPS)]
    return ops(a) == ops(b)


__all__ = ["dynamic_root_cause", "more_dynamic_note", "newly_symbolic"]
