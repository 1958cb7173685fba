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
returns a :class:`Binding`: the symbol values it found, the problems that rule
the key out, and notes on what the cache cannot tell.

Never evaluates guards (:mod:`fxcache_core.lookup.judge` does), never prints.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from fxcache_core.cache.scan import CacheKey
from fxcache_core.catalog.reader import Catalog
from fxcache_core.decode.entries import DecodedEntry, GraphInput
from fxcache_core.decode.symbols import SymbolInfo
from fxcache_core.errors import GuardParseError, param
from fxcache_core.lookup.binding import (
    DynamicMode,
    InputValue,
    TensorArg,
    TensorType,
    eval_symbolic,
    is_size_source,
)
from fxcache_core.lookup.floats import baked_floats, tensorified_base
from fxcache_core.lookup.inputs import entry_dims
from fxcache_core.reasons import Reason

INT_RE = re.compile(r"-?\d+")
SYMBOL_RE = re.compile(r"[a-z]+\d+")
_PARAM_RE = re.compile(r"\._(parameters|buffers)\[")
_EQ_RE = re.compile(r"^\(?L\['(t\d+)'\] == L\['(t\d+)'\]\)?$")

def how() -> str:
    """How a user settles what depends on the compile mode (a hint in notes; made
    when asked, so the caller's naming of ``dynamic`` is in force)."""
    return (f"pass {param('dynamic')} true/none/false as in torch.compile, and mark_dynamic=[...] on dims "
            "that are marked")

@dataclass(frozen=True)
class Sibling:
    """Another AOTAutograd key of the cache, as evidence of how the call is traced:
    which dims a graph of the same function keeps on separate symbols, and whether
    it was compiled with equal sizes on separate symbols (duck sizing off, or
    marked dims).

    Attributes:
        key: the key's name.
        entry: its first readable entry (torch's order).
        symbols: that entry's ``tN`` table, with hints.
        same_function: traced from the same function as the key being fitted.
    """

    key: str
    entry: DecodedEntry
    symbols: tuple[SymbolInfo, ...]
    same_function: bool


Siblings = Callable[[], Sequence[Sibling]]
"""The other AOTAutograd keys of the cache, those of the key's function first; read
only when a rule needs them."""

Symbolic = tuple[str, str, int, str]
"""A symbolic dim of the call: (where, the key's symbol, size given, dim kind)."""
Static = tuple[str, int, str]
"""A dim the key has static, size > 1: (where, size, dim kind)."""


@dataclass
class Binding:
    """Symbol values found while fitting the inputs to one entry's graph inputs.

    Attributes:
        syms: plain symbol -> value.
        where: plain symbol -> the first input dim that gave it.
        problems: why the inputs cannot be this key's (each a Reason).
        later: (what, expression, value given) for sizes/strides that are
            expressions, checked once ``syms`` are known (:func:`check_later`).
        notes: what the cache cannot tell that would change the outcome.
        static: static size -> a dim that has it.
        assumed: input -> the dtype the fit took from the key, for tensors given
            without one (``x=[2,8]`` rather than ``x=[2,8]:dtype=bool``).
    """

    syms: dict[str, int]
    where: dict[str, str]
    problems: list[Reason]
    later: list[tuple[str, str, int]]
    notes: list[Reason] = field(default_factory=list)
    static: dict[int, str] = field(default_factory=dict)
    assumed: dict[str, str] = field(default_factory=dict)


def dim_kind(source: str, dim: int, val: TensorArg, mode: DynamicMode,
             duck_shape: bool | None = None) -> str:
    """How Dynamo makes dim ``dim`` of the call's ``source`` symbolic (see DynamicMode).

    ``dynamic`` (a symbol of its own), ``duck`` (equal sizes share a symbol),
    ``static``, ``param`` (a parameter or buffer: static, never duck-sized) or
    ``unknown`` (the mode was not given). With ``duck_shape`` False
    (``torch.fx.experimental._config.use_duck_shape = False``, read by
    ``ShapeEnv.create_symbol``) an unmarked dim under dynamic=True gets a symbol of
    its own too.
    """
    if dim in val.marked:
        return "dynamic"
    if _PARAM_RE.search(source):
        return "param"
    if mode is DynamicMode.TRUE and duck_shape is False:
        return "dynamic"
    return {DynamicMode.TRUE: "duck", DynamicMode.NONE: "static",
            DynamicMode.FALSE: "static", DynamicMode.UNKNOWN: "unknown"}[mode]


def fit(d: DecodedEntry, inputs: Mapping[str, InputValue],
        mode: DynamicMode = DynamicMode.UNKNOWN, pgo: bool = False,
        duck_shape: bool | None = None, hints: Mapping[str, int] | None = None,
        guards: str | None = None, siblings: Siblings | None = None,
        auto: frozenset[str] = frozenset()) -> Binding:
    """Fit the user's tensors to the entry's tensor inputs (rank, sizes, strides).

    Mirrors how Dynamo would trace the call (a fresh process's first call,
    see :class:`~fxcache_core.lookup.binding.DynamicMode`): a static size must match;
    a symbolic size of 0 or 1 is specialized (another graph); a dim Dynamo
    traces static cannot be this key's symbol; two duck-sized dims of equal
    size share one symbol, so they cannot be two symbols of the key, nor a
    symbol and a dim the key has specialized; one symbol takes one value.
    With ``pgo`` (the cache dir holds torch's profile-guided automatic-dynamic
    state, torch/_dynamo/pgo.py, which can make a first call's dims dynamic),
    "traced static" is a note, not a problem.
    Where that depends on the mode and the mode is unknown, the binding gets a
    note (the verdict is undecided) instead of a problem. ``duck_shape``: torch's
    ``use_duck_shape`` (None: not said; then an entry compiled with equal sizes
    on separate symbols, ``hints``, is evidence that duck sizing was off, and a
    conflict that rests on duck sizing is undecided). ``guards``: the entry's
    guards expression, which shows where the graph forces two inputs equal.
    ``siblings``: the other keys of the same function (:class:`Sibling`), read only
    when a rule needs them: a symbol this key shares between two dims that a sibling
    keeps apart came from duck sizing, not from the graph; a sibling compiled with
    equal sizes on separate symbols is evidence that duck sizing was off. Sizes and
    strides that are expressions (``2*s17``) are checked once every plain symbol has
    its value. ``auto``: int and float arguments automatic dynamic (or a saved
    profile) makes a SymInt or a tensor input (:mod:`fxcache_core.lookup.phases`;
    its dims come as ``marked`` dims of the inputs).
    """
    b = Binding({}, {}, [], [])
    symbolic: list[Symbolic] = []
    static: list[Static] = []
    for inp in d.inputs:
        if inp.source:
            _fit_input(b, inp, inputs, mode, pgo, duck_shape, symbolic, static, auto)
    _duck(b, symbolic, static, hints if duck_shape is None else None,
          siblings if duck_shape is None else None)
    _shared_symbols(b, d, symbolic, inputs, guards, siblings)
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
               auto: frozenset[str] = frozenset()) -> None:
    """One graph input (with a source) against the value the call gives it."""
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
    if isinstance(val, float):
        b.problems.append(Reason(f"{name} is a {'Python int (a SymInt)' if inp.is_symint else 'tensor'} here, "
                                 f"given the float {val}", "wrong-input-type"))
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
    _fit_strides(b, name, tt, val)


def fit_dtype(b: Binding, name: str, printed: str, tt: TensorType, val: TensorArg) -> None:
    """The key's dtype for input ``name`` against the call's.

    Dynamo guards every tensor input's dtype (``TENSOR_MATCH``, torch/_dynamo/guards.py) and
    the key hashes the graph's input dtypes, so another dtype traces another graph:
    a problem. A tensor given without a dtype is assumed to have the key's
    (``b.assumed``, said in the report, never a reason for undecided); a dtype
    prefix fxcache does not know is a note.
    """
    want = tt.dtype_name
    if val.dtype is None:
        if want is not None:
            b.assumed[name] = want
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
        if got in (0, 1):
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


def _fit_strides(b: Binding, name: str, tt: TensorType, val: TensorArg) -> None:
    """The key's strides against the call's (given, or contiguous)."""
    if len(tt.strides) != len(val.shape):
        return
    for dim, (want, got) in enumerate(zip(tt.strides, val.strides(), strict=True)):
        if val.shape[dim] <= 1:
            continue  # a size-0/1 dim's stride is not part of the layout
        where = f"{name}.stride()[{dim}]"
        if INT_RE.fullmatch(want):
            if int(want) != got:
                b.problems.append(Reason(f"stride {dim} of {name} is {want} here, got {got}"
                                         + ("" if inputs_gave_stride(val) else " (contiguous)"),
                                         "stride-differs"))
        else:
            b.later.append((where, want, got))


def _shared_symbols(b: Binding, d: DecodedEntry, symbolic: list[Symbolic],
                    inputs: Mapping[str, InputValue], guards: str | None,
                    siblings: Siblings | None = None) -> None:
    """Dims that share one of the key's symbols where one of them is traced with a
    symbol of its own (marked dynamic, or duck sizing off).

    Such a dim (``DimDynamic.DYNAMIC``, or DUCK with ``use_duck_shape`` off) gets a
    fresh symbol in ``ShapeEnv.create_symbol`` (torch/fx/experimental/symbolic_shapes.py),
    never one reused by duck sizing. The key can still have one symbol for both: when
    the graph forces the sizes equal (the inner dims of a matmul, the batch of a loss's
    input and target, the dims a ``cat`` joins), the ShapeEnv replaces one symbol by
    the other (``_set_replacement``) and the graph keeps one input for both, exactly
    as duck sizing would have made it. So a shared symbol is a forced equality, and a
    call with equal values (one value per symbol is checked when binding) fits.

    The exception is evidence that the sharing came from duck sizing: another key of
    the same function (``siblings``) keeps those dims on separate symbols, so its graph
    does not force them equal, and a call that gives them a symbol each traces that
    graph, not this one.
    """
    placeholder = {i.source: f"t{n}" for n, i in enumerate(d.symints) if i.source}
    equal = _equated(guards)
    for sym in dict.fromkeys(s for _, s, _, _ in symbolic):
        dims = [(w, k) for w, s, _, k in symbolic if s == sym]
        if len(dims) <= 1 or not any(k == "dynamic" for _, k in dims):
            continue
        phs = [placeholder.get(w) for w, _ in dims]
        if None not in phs and all(_same(equal, phs[0], p) for p in phs[1:]):
            continue  # the guards equate them: the graph's ops made the sizes equal
        apart = _kept_apart(siblings() if siblings is not None else (), [w for w, _ in dims])
        if apart is None:
            continue  # a forced equality: any call with equal sizes traces this graph
        (w1, w2), other = apart
        marked = [w for w, _ in dims if _marked(inputs, w)]
        b.problems.append(Reason(
            f"{w1} and {w2} share {sym} here (one graph input), but key {other[:12]} of the "
            "same function keeps them on separate symbols, so the graph does not force them "
            "equal: this key's sharing comes from duck sizing, and " + (
                "marked dims get a symbol each" if len(marked) == len(dims) else
                f"{marked[0]} is marked dynamic and gets a symbol of its own" if marked else
                "with duck sizing off they get a symbol each")
            + ": torch traces another graph", "marked-dim-shared"))


def _kept_apart(siblings: Sequence[Sibling], dims: Sequence[str]
                ) -> tuple[tuple[str, str], str] | None:
    """Two of ``dims`` (``L['a'].size()[0]``) that a sibling key gives two different
    symbols, with that key's name; None when no sibling does."""
    for sib in siblings:
        if not sib.same_function:
            continue
        sizes = {f"{src}.size()[{i}]": v for (src, i), v in entry_dims(sib.entry).items()}
        for w1, w2 in _pairs(list(dims)):
            a, z = sizes.get(w1), sizes.get(w2)
            if a and z and a != z and SYMBOL_RE.fullmatch(a) and SYMBOL_RE.fullmatch(z):
                return (w1, w2), sib.key
    return None


def _duck_off_sibling(siblings: Sequence[Sibling]) -> tuple[Sibling, str, str, int] | None:
    """A key compiled with two separate symbols of equal hint (> 1) for tensor sizes:
    (that key, symbol, symbol, hint); evidence that the program runs with duck sizing
    off (or marks those dims). Duck sizing is a process-wide setting
    (``torch.fx.experimental._config.use_duck_shape``), so a key of another function
    counts too, after those of the same function. None when no key shows it."""
    for sib in siblings:
        by_hint: dict[int, str] = {}
        for info in sib.symbols:
            if (info.hint is None or info.hint <= 1 or not SYMBOL_RE.fullmatch(info.expr or "")
                    or ".size()[" not in (info.source or "")):
                continue  # an int argument is never duck-sized with a size: no evidence
            other = by_hint.setdefault(info.hint, info.expr or "")
            if other != info.expr:
                return sib, other, info.expr or "", info.hint
    return None


def _marked(inputs: Mapping[str, InputValue], where: str) -> bool:
    """Whether ``where`` (``L['x'].size()[1]``) is a dim the user marked dynamic."""
    m = re.fullmatch(r"(.+)\.size\(\)\[(\d+)\]", where)
    val = inputs.get(m.group(1)) if m else None
    return isinstance(val, TensorArg) and int(m.group(2)) in val.marked  # type: ignore[union-attr]


def fit_tensorified(b: Binding, base: str, val: InputValue | None, mode: DynamicMode) -> None:
    """A float the key takes tensorified (a 0-d float64 graph input whose source is
    ``L['scale']``, see :mod:`fxcache_core.lookup.floats`): any value serves, but only where torch
    tensorifies it: not on a fresh process's first call under dynamic=None/False,
    nor for nan and inf."""
    if val is None:
        return
    if not isinstance(val, float):
        b.problems.append(Reason(f"{base} is a Python float taken as a tensor here, given {val}",
                                 "wrong-input-type"))
    elif math.isnan(val) or math.isinf(val):
        b.problems.append(Reason(f"{base} = {val}: torch specializes nan and inf floats, so it traces "
                                 "another graph (this key takes the float as a tensor)", "float-specialized"))
    elif mode in (DynamicMode.NONE, DynamicMode.FALSE):
        b.problems.append(Reason(
            f"{base} is a Python float taken as a tensor here (tensorified), but under "
            f"dynamic={mode.value.capitalize()} a fresh process's first call specializes a float "
            "into the graph as a constant, so torch looks up another key (after a call with "
            "another value, automatic dynamic tensorifies it: this key)", "float-specialized"))
    elif mode is DynamicMode.UNKNOWN:
        b.notes.append(Reason(
            f"{base} is a float taken as a tensor here: under dynamic=True torch does that and "
            "looks up this key; under dynamic=None a fresh process's first call specializes it "
            f"into another key ({how()})", "float-depends-on-mode"))


def fit_baked_floats(catalog: Catalog, key: CacheKey, b: Binding,
                     inputs: Mapping[str, InputValue], bases: set[str], mode: DynamicMode) -> None:
    """Floats the user gave that the key does not take: specialized, a constant of the
    graph (:mod:`fxcache_core.lookup.floats`). The key serves only the value it baked in."""
    for src, val in inputs.items():
        if not isinstance(val, float) or src in bases:
            continue
        m = re.fullmatch(r"L\['(\w+)'\]", src)
        if m is None:
            continue
        consts = baked_floats(catalog, key, m.group(1))
        if consts is None:
            continue  # no op computes with it: every value traces this graph
        special = math.isnan(val) or math.isinf(val)
        if val in consts or (math.isnan(val) and any(map(math.isnan, consts))):
            if mode is DynamicMode.TRUE and not special:
                b.problems.append(Reason(
                    f"{src} = {val} is a constant of this key's graph (specialized), but under "
                    "dynamic=True torch takes a float as a tensor input: another key", "float-tensorified"))
            elif mode is DynamicMode.UNKNOWN and not special:
                b.notes.append(Reason(
                    f"{src} = {val} is a constant of this key's graph: torch specializes a float "
                    "so on a fresh process's first call under dynamic=None, not under "
                    f"dynamic=True ({how()})", "float-depends-on-mode"))
            continue
        shown = ", ".join(sorted({repr(c) for c in consts})) or "no float constant"
        b.problems.append(Reason(
            f"{src} is specialized into this key's graph as a constant ({shown} where its code "
            f"computes with it), given {val}: torch traces another graph", "float-constant-differs"))


def _equated(guards: str | None) -> list[set[str]]:
    """Placeholders a guards expression's top-level ``L['ti'] == L['tj']`` clauses
    make equal, as classes (ShapeEnv's replacement of one symbol by another,
    ``_set_replacement`` in torch/fx/experimental/symbolic_shapes.py, leaves such
    a clause in the guards)."""
    if not guards:
        return []
    from fxcache_core.guards.expr import parse_guards

    try:
        clauses = parse_guards(guards).clauses
    except (GuardParseError, ValueError):
        return []
    classes: list[set[str]] = []
    for c in clauses:
        m = _EQ_RE.match(c.text.strip())
        if m is None:
            continue
        a, z = m.group(1), m.group(2)
        hit = [cl for cl in classes if a in cl or z in cl]
        merged = {a, z}.union(*hit) if hit else {a, z}
        classes = [cl for cl in classes if cl not in hit] + [merged]
    return classes


def _same(classes: list[set[str]], a: str | None, z: str | None) -> bool:
    return a is not None and z is not None and any(a in cl and z in cl for cl in classes)


def _duck(b: Binding, symbolic: list[Symbolic], static: list[Static],
          hints: Mapping[str, int] | None = None, siblings: Siblings | None = None) -> None:
    """Duck sizing: equal sizes of duck dims get one symbol in Dynamo's ShapeEnv.

    Two such dims the key gives two symbols, or one the key has specialized to
    that size (under ``dynamic=True`` a static size of an input was a symbol
    once), mean torch traces another graph. Only ``duck`` dims take part
    (``ShapeEnv.create_symbol`` registers and reuses a value for DUCK only);
    ``unknown`` ones make a note instead of a problem. With ``hints`` or
    ``siblings`` (given when the user did not say ``use_duck_shape``), an entry of
    this key or of another key of the function compiled with equal sizes on two
    symbols is evidence that duck sizing was off: the conflict is then a note.
    """
    duckish = ("duck", "unknown")
    looked: list[str | None] = []

    def off() -> str | None:
        """The sibling evidence of duck sizing off, in words (looked up once)."""
        if not looked:
            ev = _duck_off_sibling(siblings()) if siblings is not None else None
            looked.append(None if ev is None else
                          f"key {ev[0].key[:12]}"
                          + (" of the same function" if ev[0].same_function else " (another function)")
                          + f" was compiled with {ev[1]} = {ev[2]} = {ev[3]} as two symbols")
        return looked[0]

    for (w1, s1, v1, k1), (w2, s2, v2, k2) in _pairs(symbolic):
        if v1 == v2 and s1 != s2 and k1 in duckish and k2 in duckish:
            h1, h2 = (hints or {}).get(s1), (hints or {}).get(s2)
            own = h1 is not None and h1 == h2
            if k1 == k2 == "duck" and (own or off()):
                shown = (f"this key's entry was compiled with {s1} = {s2} = {h1} as two symbols"
                         if own else off())
                b.notes.append(Reason(
                    f"{w1} and {w2} are both {v1}: duck sizing would give them one symbol, but {shown}: "
                    "with duck sizing off (torch.fx.experimental._config.use_duck_shape = False) or with "
                    f"those dims marked dynamic; pass {param('no_duck_shape')} (or {param('duck_shape')}), "
                    "or mark_dynamic=[...]", "duck-sizing-off"))
            elif k1 == k2 == "duck":
                b.problems.append(Reason(
                    f"{w1} and {w2} are both {v1}: under dynamic=True duck sizing gives equal "
                    f"sizes one symbol, so this call traces another graph (this key has {s1} and {s2})",
                    "duck-sizing"))
            else:
                b.notes.append(Reason(
                    f"{w1} and {w2} are both {v1}: under dynamic=True duck sizing gives them one "
                    f"symbol and torch traces another graph; marked dynamic (mark_dynamic, automatic "
                    f"dynamic) they keep this key's {s1} and {s2} ({how()})", "duck-sizing-depends-on-mode"))
    for w1, _s1, v1, k1 in symbolic:
        for w2, v2, k2 in static:
            if v1 == v2 and k1 in duckish and k2 in duckish:
                if k1 == k2 == "duck" and off():
                    b.notes.append(Reason(
                        f"{w1} = {v1} equals {w2}, static here: with duck sizing on torch traces "
                        f"another graph, but {off()} (duck sizing off, or marked dims); pass "
                        f"{param('no_duck_shape')} (or {param('duck_shape')})", "duck-sizing-off"))
                elif k1 == k2 == "duck":
                    b.problems.append(Reason(
                        f"{w1} = {v1} equals {w2}, static here: under dynamic=True that dim was a "
                        "symbol specialized to its size, and duck sizing gives both one symbol, so "
                        f"torch traces another graph ({w1} is static too)", "duck-sizing"))
                else:
                    b.notes.append(Reason(
                        f"{w1} = {v1} equals {w2}, static here: if both are duck-sized "
                        "(dynamic=True, unmarked), torch traces another graph; if either is marked "
                        f"dynamic or static, it does not ({how()})", "duck-sizing-depends-on-mode"))
                break


def _pairs(items: list) -> list[tuple]:
    return [(a, c) for i, a in enumerate(items) for c in items[i + 1:]]


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


def check_later(b: Binding) -> list[Reason]:
    """Expression sizes/strides against the values given, once the symbols are known."""
    problems = []
    for where, expr, got in b.later:
        want = eval_symbolic(expr, b.syms)
        if want is not None and want != got:
            problems.append(Reason(f"{where} is {expr} = {want} here, got {got}", "expression-differs"))
    return problems
