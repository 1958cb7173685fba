"""Whether a call's inputs can be a key's: the binding of one entry's graph inputs.

Dynamo traces a call into a graph whose inputs carry sizes and strides, each a
static int or a symbol; the cache keeps one key per graph. Before any guard is
evaluated the call must be traceable into *this* graph: the same rank, the same
static sizes and strides, symbols where Dynamo would make the call's dims
symbolic (``_automatic_dynamic`` and ``wrap_symint`` in
torch/_dynamo/variables/builder.py, ``ShapeEnv.create_symbol`` in
torch/fx/experimental/symbolic_shapes.py: 0/1 specialization, duck sizing,
marked dims, static parameters), floats specialized or tensorified as
``VariableBuilder.wrap_symfloat`` does. :func:`fit` mirrors that for a fresh
process's first call (see :class:`~fxcache_core.lookup.binding.DynamicMode`) and
returns a :class:`~fxcache_core.lookup.fit_binding.Binding`: the symbol values it
found, the problems that rule the key out, and notes on what the cache cannot tell.

This module fits sizes, strides, dtypes and int arguments; duck sizing and the
key's shared symbols are :mod:`fxcache_core.lookup.duck_sizing`'s, floats
:mod:`fxcache_core.lookup.fit_floats`'. Never evaluates guards (:mod:`fxcache_core.lookup.judge` does), never prints.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace

from fxcache_core.decode.entries import DecodedEntry, GraphInput
from fxcache_core.errors import param
from fxcache_core.lookup.binding import DynamicMode, InputValue, TensorArg
from fxcache_core.lookup.duck_sizing import duck_sizing, shared_symbols
from fxcache_core.lookup.fit_binding import (
    INT_RE,
    SYMBOL_RE,
    Binding,
    Sibling,
    Siblings,
    Static,
    Symbolic,
)
from fxcache_core.lookup.fit_floats import fit_tensorified
from fxcache_core.lookup.floats import tensorified_base
from fxcache_core.lookup.graph_types import TensorType
from fxcache_core.lookup.pyvalues import PyValue
from fxcache_core.lookup.query import CallQuery
from fxcache_core.lookup.source_values import is_size_source
from fxcache_core.reasons import Reason

__all__ = ["Binding", "Sibling", "dim_kind", "fit", "fit_dtype", "inputs_gave_stride", "positional_inputs",
           "stride_symbols"]

_PARAM_RE = re.compile(r"\._(parameters|buffers)\[")


def dim_kind(source: str, dim: int, val: TensorArg, mode: DynamicMode,
             duck_shape: bool | None = None) -> str:
    """How Dynamo makes dim ``dim`` of the call's ``source`` symbolic (see DynamicMode).

    ``dynamic`` (a symbol of its own), ``duck`` (equal sizes share a symbol),
    ``static``, ``marked-static`` (``mark_static``: static in every mode, whatever
    automatic dynamic or a saved profile says), ``param`` (a parameter or buffer: static, never duck-sized) or
    ``unknown`` (the mode was not given). With ``duck_shape`` False
    (``torch.fx.experimental._config.use_duck_shape = False``, read by
    ``ShapeEnv.create_symbol``) an unmarked dim under dynamic=True gets a symbol of
    its own too.
    """
    if dim in val.marked:
        return "dynamic"
    if dim in val.static:
        return "marked-static"
    if _PARAM_RE.search(source):
        return "param"
    if mode is DynamicMode.TRUE and duck_shape is False:
        return "dynamic"
    return {DynamicMode.TRUE: "duck", DynamicMode.NONE: "static",
            DynamicMode.FALSE: "static", DynamicMode.UNKNOWN: "unknown"}[mode]


def fit(d: DecodedEntry, query: CallQuery, *, hints: Mapping[str, int] | None = None,
        guards: str | None = None, siblings: Siblings | None = None,
        auto: frozenset[str] = frozenset()) -> Binding:
    """Fit the user's tensors to the entry's tensor inputs (rank, sizes, strides).

    Mirrors how Dynamo would trace the call (a fresh process's first call,
    see :class:`~fxcache_core.lookup.binding.DynamicMode`): a static size must match;
    a symbolic size of 0 or 1 is specialized (another graph); a dim Dynamo
    traces static cannot be this key's symbol; two duck-sized dims of equal
    size share one symbol, so they cannot be two symbols of the key, nor a
    symbol and a dim the key has specialized; one symbol takes one value.

    The call is ``query`` (:class:`~fxcache_core.lookup.query.CallQuery`), its
    ``inputs`` by the entry's sources (after
    :func:`~fxcache_core.lookup.inputs.alias`); ``sym``, ``only`` and ``function``
    play no part here. With ``query.pgo`` (the cache dir holds torch's
    profile-guided automatic-dynamic state, torch/_dynamo/pgo.py, which can make a
    first call's dims dynamic; None counts as False here, the fit reads no cache)
    "traced static" is a note, not a problem.
    Where that depends on ``query.mode`` and the mode is unknown, the binding gets a
    note (the verdict is undecided) instead of a problem. ``query.duck_shape``:
    torch's ``use_duck_shape`` (None: not said; then an entry compiled with equal
    sizes on separate symbols, ``hints`` (symbol -> its compile-time hint), is
    evidence that duck sizing was off, and a conflict that rests on duck sizing is
    undecided). ``guards``: the entry's
    guards expression, which shows where the graph forces two inputs equal.
    ``siblings``: the other keys of the same function
    (:class:`~fxcache_core.lookup.fit_binding.Sibling`), read only
    when a rule needs them: a symbol this key shares between two dims that a sibling
    keeps apart came from duck sizing, not from the graph; a sibling compiled with
    equal sizes on separate symbols is evidence that duck sizing was off. Sizes and
    strides that are expressions (``2*s17``) are checked once every plain symbol has
    its value. ``auto``: int and float arguments automatic dynamic (or a saved
    profile) makes a SymInt or a tensor input (:mod:`fxcache_core.lookup.phases`;
    its dims come as ``marked`` dims of the inputs), and the strides it makes symbols of their own
    (``L['y'].stride()[1]``).

    Duck sizing and shared symbols are :mod:`fxcache_core.lookup.duck_sizing`'s rules,
    floats :mod:`fxcache_core.lookup.fit_floats`'. Raises nothing: what rules the key
    out is a problem of the returned :class:`~fxcache_core.lookup.fit_binding.Binding`.
    """
    inputs, mode, duck_shape, pgo = query.inputs, query.mode, query.duck_shape, bool(query.pgo)
    b = Binding({}, {}, [], [])
    symbolic: list[Symbolic] = []
    static: list[Static] = []
    own_strides = stride_symbols(d)
    for inp in d.inputs:
        if inp.source:
            _fit_input(b, inp, inputs, mode, pgo, duck_shape, symbolic, static, auto, own_strides)
    duck_sizing(b, symbolic, static, hints if duck_shape is None else None,
                siblings if duck_shape is None else None)
    shared_symbols(b, d, symbolic, inputs, guards, siblings)
    has_symint = any(i.is_symint for i in d.inputs)
    if mode is DynamicMode.TRUE and not symbolic and not b.later and not has_symint and any(
            k == "duck" for _, _, k in static):
        b.notes.append(Reason(
            "this key has no symbols (a static compile, e.g. under dynamic=None); under "
            "dynamic=True torch traces the sizes as symbols and looks up another key, unless the "
            "code fixes every one of them", "static-key-under-dynamic"))
    return b


def _fit_input(b: Binding, inp: GraphInput, inputs: Mapping[str, InputValue], mode: DynamicMode,
               pgo: bool, duck_shape: bool | None, symbolic: list[Symbolic], static: list[Static],
               auto: frozenset[str] = frozenset(), own_strides: Mapping[str, str] | None = None) -> None:
    """One graph input (with a source) against the value the call gives it. ``own_strides``:
    the key's symbols made for a stride (symbol -> its source, ``L['y'].stride()[1]``)."""
    if (fbase := tensorified_base(inp.source)) is not None:
        # Made a tensor by automatic dynamic: as dynamic=True does on the first call.
        fit_tensorified(b, fbase, inputs.get(fbase), DynamicMode.TRUE if fbase in auto else mode)
        return
    val = inputs.get(inp.source)
    name = inp.source
    if isinstance(val, float) and re.match(r"f64\[\]", inp.type):
        # a float taken as a 0-d float64 tensor
        fit_tensorified(b, name, val, DynamicMode.TRUE if name in auto else mode)
        return
    if isinstance(val, (float, PyValue)):
        given = (f"the float {val}" if isinstance(val, float) else "None" if val.value is None
                 else f"the Python {val.kind} {val}")
        b.problems.append(Reason(f"{name} is a {'Python int (a SymInt)' if inp.is_symint else 'tensor'} here, "
                                 f"given {given}", "wrong-input-type"))
        return
    if inp.is_symint:
        if inp.source not in auto:  # else a SymInt, as automatic dynamic makes it
            _fit_symint(b, inp, val, mode, pgo)
        return
    tt = TensorType.parse(inp.type)
    if tt is None or val is None:
        return
    if not isinstance(val, TensorArg):
        b.problems.append(Reason(f"{name} is a tensor {inp.type} here, given the int {val}", "wrong-input-type"))
        return
    fit_dtype(b, name, inp.type, tt, val)
    if len(val.shape) != len(tt.sizes):
        b.problems.append(Reason(f"{name} has {len(tt.sizes)} dims here ({inp.type}), given {len(val.shape)}",
                                 "rank-differs"))
        return
    for dim, (want, got) in enumerate(zip(tt.sizes, val.shape, strict=True)):
        _fit_size(b, name, dim, want, got, dim_kind(name, dim, val, mode, duck_shape), mode, pgo,
                  symbolic, static)
    _fit_strides(b, name, tt, val, mode, pgo, own_strides, auto)


BARE_DTYPE = "float32"
"""The dtype a tensor given by its shape alone reads as (``x=[4,8]``: ``torch.randn(4, 8)``);
a floating key of another dtype leaves the call undecided (:func:`fit_dtype`)."""

_FLOATING = ("float", "bfloat", "complex")


def fit_dtype(b: Binding, name: str, printed: str, tt: TensorType, val: TensorArg) -> None:
    """The key's dtype for input ``name`` against the call's.

    Dynamo guards every tensor input's dtype (``TENSOR_MATCH``, torch/_dynamo/guards.py) and
    the key hashes the graph's input dtypes, so another dtype traces another graph:
    a problem. A tensor given without a dtype is taken to have the key's (``b.assumed``,
    said in the report): an integer or bool input's (token ids, masks, labels: what a
    tokenizer or an index gives), and a floating input's where that is ``float32``, what
    a bare shape reads as (torch's default dtype, what ``torch.randn`` makes); a floating
    key of another dtype (``float16``, ``bfloat16``, ``float64``, complex) leaves it open
    whether the call's tensor is of it: a note (``dtype-not-given``), so undecided. A dtype
    prefix fxcache does not know is a note.
    """
    want = tt.dtype_name
    if val.dtype is None:
        if want is not None:
            b.assumed[name] = want
            if want != BARE_DTYPE and want.startswith(_FLOATING):
                b.notes.append(Reason(
                    f"{name} is {want} here ({printed}), and the call gives no dtype: torch guards a tensor's "
                    f"dtype, and a shape alone reads as {BARE_DTYPE}; say :dtype={want} (or the dtype it has) "
                    "to decide", "dtype-not-given"))
        return
    if want is None:
        b.notes.append(Reason(f"{name} has dtype {tt.dtype} here ({printed}), which fxcache does not "
                              f"know; given {val.dtype}", "dtype-unknown"))
    elif want != val.dtype:
        b.problems.append(Reason(f"{name} is {want} here ({printed}), given {val.dtype}: torch guards a "
                                 "tensor's dtype and traces another graph", "dtype-differs"))


def _fit_symint(b: Binding, inp: GraphInput, val: InputValue | None, mode: DynamicMode, pgo: bool) -> None:
    """An int argument the key takes as a SymInt: under dynamic=None/False a fresh
    process's first call bakes it in instead. A tensor given there (``t=[]``, a 0-d
    tensor) is a tensor input of the graph, not an int: another graph."""
    if isinstance(val, TensorArg) and not is_size_source(inp.source):
        b.problems.append(Reason(
            f"{inp.source} is a Python int here (a SymInt, {inp.expr}), given a "
            f"{len(val.shape)}-d tensor {val}: a tensor is a tensor input of the graph, so torch "
            "traces another graph", "wrong-input-type"))
        return
    if not (isinstance(val, int) and mode in (DynamicMode.NONE, DynamicMode.FALSE)):
        return
    why = (f"{inp.source} is an int argument, a SymInt ({inp.expr}) here: under "
           f"dynamic={mode.value.capitalize()} a fresh process's first call specializes it "
           "to its value, so torch looks up another key")
    if pgo:
        b.notes.append(Reason(why + " (unless the profile-guided automatic-dynamic state in this "
                              "cache dir makes it a SymInt: fxcache could not read that state)", "pgo-state-unread"))
    else:
        b.problems.append(Reason(why, "int-specialized"))


def _fit_size(b: Binding, name: str, dim: int, want: str, got: int, kind: str, mode: DynamicMode,
              pgo: bool, symbolic: list[Symbolic], static: list[Static]) -> None:
    """Dim ``dim`` of input ``name``: the key's printed size ``want``, the call's ``got``."""
    where = f"{name}.size()[{dim}]"
    if INT_RE.fullmatch(want):
        if int(want) != got:
            b.problems.append(Reason(f"dim {dim} of {name} is static {want}, got {got}", "static-dim-differs"))
        elif got > 1 and kind == "dynamic":
            b.problems.append(Reason(
                f"dim {dim} of {name} is marked dynamic but static {want} here: torch traces "
                "it as a symbol (another key), or, if the code fixes that size, mark_dynamic "
                "fails with ConstraintViolationError", "marked-dim-static"))
        elif got > 1:
            static.append((where, got, kind))
    elif SYMBOL_RE.fullmatch(want):
        if kind == "marked-static":
            b.problems.append(Reason(
                f"dim {dim} of {name} is marked static (mark_static) but symbolic here ({want}): torch "
                f"traces it static at {got}, another graph", "marked-static-dim-symbolic"))
        elif got in (0, 1):
            b.problems.append(Reason(
                f"dim {dim} of {name} is {got}: torch specializes sizes 0 and 1, "
                f"so this call compiles another graph (not {want})", "size-specialized"))
        elif kind == "static" and pgo:
            b.notes.append(Reason(
                f"dim {dim} of {name} is symbolic here ({want}); under dynamic=None a fresh "
                "process traces an unmarked dim static, unless the profile-guided "
                "automatic-dynamic state in this cache dir (dynamo/code_state_*, saved "
                "under a job id) marks it dynamic: fxcache could not read that state", "pgo-state-unread"))
            b.where.setdefault(want, where)
            b.syms.setdefault(want, got)
        elif kind == "static":
            b.problems.append(Reason(
                f"dim {dim} of {name} is symbolic here ({want}), but under "
                f"dynamic={mode.value.capitalize()} a fresh process's first call traces "
                f"an unmarked dim static, so torch looks up a key with {got} there (after a "
                "recompile, automatic dynamic marks a changed dim: "
                f"{param('phase')} asks about those calls)", "dim-traced-static"))
        elif b.syms.setdefault(want, got) != got:
            b.problems.append(Reason(f"{want} is {b.where[want]} = {b.syms[want]}, but {where} = {got}",
                                     "symbol-conflict"))
        else:
            b.where.setdefault(want, where)
            symbolic.append((where, want, got, kind))
    else:
        b.later.append((f"{where}", want, got))


def stride_symbols(d: DecodedEntry) -> dict[str, str]:
    """The entry's symbols made for a stride (symbol -> its source, ``L['y'].stride()[1]``):
    a SymInt input whose source is a stride, as automatic dynamic makes one when a call
    changes a stride (``_automatic_dynamic`` in torch/_dynamo/variables/builder.py)."""
    return {i.expr: i.source for i in d.inputs
            if i.is_symint and i.expr and i.source and _STRIDE_SOURCE_RE.search(i.source)}


_STRIDE_SOURCE_RE = re.compile(r"\.stride\(\)\[[0-9]+\]$")


def _fit_strides(b: Binding, name: str, tt: TensorType, val: TensorArg, mode: DynamicMode = DynamicMode.UNKNOWN,
                 pgo: bool = False, own: Mapping[str, str] | None = None, auto: frozenset[str] = frozenset()) -> None:
    """The key's strides against the call's (given, or contiguous). A stride that is a symbol
    of its own (``own``: made for that stride, by automatic dynamic at a recompile) is one a
    fresh process's first call under dynamic=None/False traces static (Dynamo infers strides
    from the sizes then): another key; ``auto``'s strides (the pass after a recompile) are
    symbols as this key has them."""
    if len(tt.strides) != len(val.shape):
        return
    for dim, (want, got) in enumerate(zip(tt.strides, val.strides(), strict=True)):
        # a size-0/1 dim's stride counts too: Dynamo traces the tensor's strides as they are
        # (a [4,1] column of a transposed matrix, strides (1,4), is another key than (1,1))
        where = f"{name}.stride()[{dim}]"
        if INT_RE.fullmatch(want):
            if int(want) != got:
                b.problems.append(Reason(f"stride {dim} of {name} is {want} here, got {got}"
                                         + ("" if inputs_gave_stride(val) else " (contiguous)"),
                                         "stride-differs"))
        elif (own or {}).get(want) == f"{name}.stride()[{dim}]" and where not in auto and \
                mode in (DynamicMode.NONE, DynamicMode.FALSE):
            why = Reason(f"stride {dim} of {name} is a symbol of its own here ({want}), as automatic dynamic "
                         f"makes a stride that changed at a recompile; under dynamic={mode.value.capitalize()} a "
                         f"fresh process's first call traces strides from the sizes, so torch looks up a key with "
                         f"{got} there ({param('phase')} asks about the calls after a recompile)",
                         "stride-traced-static")
            if pgo:
                b.notes.append(Reason(why + " (unless the profile-guided automatic-dynamic state in this cache dir "
                                      "marks it dynamic: fxcache could not read that state)", "pgo-state-unread"))
            else:
                b.problems.append(why)
        else:
            b.later.append((where, want, got))


def inputs_gave_stride(val: TensorArg) -> bool:
    return val.stride is not None


def positional_inputs(d: DecodedEntry) -> DecodedEntry:
    """``d`` with its tensor inputs named ``#0``, ``#1``... in graph order (for
    ``positional``, the CLI's ``--arg``)."""
    out, n = [], 0
    for i in d.inputs:
        if not i.is_symint and TensorType.parse(i.type) is not None:
            out.append(replace(i, source=f"#{n}"))
            n += 1
        else:
            out.append(replace(i, source=None))
    return replace(d, inputs=tuple(out))
