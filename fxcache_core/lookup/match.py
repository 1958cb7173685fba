"""Which entry torch would load for a call with given input shapes, and why.

The rules mirror ``GuardedCache.find_guarded_entry`` and
``iterate_over_candidates`` in torch/_inductor/codecache.py:

* entries are tried in sorted name order; dot-prefixed temp files are skipped;
* an entry that cannot be unpickled is skipped (torch logs and goes on);
* an entry with no guards is a hit;
* otherwise its guards expression is evaluated on the hints of the backed
  SymInt inputs, and the first entry whose guards hold is the hit.

An AOTAutograd hit then loads its forward/backward FX graphs by key, taking
the FX entry whose guards string *equals* the one the AOTAutograd entry
recorded (``FxGraphCacheLoadable.load`` in
torch/_functorch/_aot_autograd/aot_autograd_result.py); when that entry is
gone, the load raises ``FXGraphCacheMiss`` and torch compiles afresh.

The result is a value (:class:`MatchReport`); nothing here prints.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey, Entry
from fxcache_core.catalog.catalog import Catalog, Unreadable
from fxcache_core.decode.entries import DecodedEntry, Origin
from fxcache_core.decode.symbols import SymbolInfo
from fxcache_core.errors import GuardParseError, ShapeSpecError
from fxcache_core.functions.frames import CompiledFrom, compiled_from, keys_of_function
from fxcache_core.lookup.binding import (
    DynamicMode,
    InputValue,
    TensorArg,
    TensorType,
    eval_symbolic,
    value_of,
)
from fxcache_core.lookup.floats import baked_floats, tensorified_base
from fxcache_core.lookup.int_args import FunctionKeys, int_argument_rule

Outcome = Literal["pass", "fail", "error", "unknown", "unreadable", "unparsable"]


@dataclass(frozen=True)
class EntryVerdict:
    """How one entry fares for the given inputs.

    Attributes:
        entry: the entry.
        outcome: ``pass`` (its guards hold, or it has none), ``fail`` (a clause
            is False), ``error`` (evaluating a clause raises, e.g. a division
            by zero or a ``tN`` the graph does not have: the guard fails, and
            the exception escapes torch's ``find_guarded_entry``, which stops
            the lookup there), ``unknown`` (a clause needs a value the inputs
            do not give), ``unreadable`` (torch would skip it too),
            ``unparsable`` (a guard fxcache refuses to read; undecided).
        reason: one line saying why (the failing clause and the values, the
            missing placeholders, the decode error); None for a pass.
        failed_clause: the first failing clause's text, for ``fail``.
        values: placeholder values used (``t0`` -> 16).
    """

    entry: Entry
    outcome: Outcome
    reason: str | None = None
    failed_clause: str | None = None
    guards_expr: str | None = None
    values: tuple[tuple[str, int], ...] = ()

    @property
    def passed(self) -> bool | None:
        """True/False when decided, None when it could not be decided."""
        if self.outcome == "pass":
            return True
        if self.outcome in ("fail", "error"):
            return False
        return None

    def user_clause(self, names: Mapping[str, str]) -> str | None:
        """The failing clause in the user's terms (``x.size(0) >= 16``; ``names``:
        :func:`~fxcache_core.guards.user_terms.placeholder_names`), None without one."""
        from fxcache_core.guards.user_terms import clause_in_user_terms

        return None if self.failed_clause is None else clause_in_user_terms(self.failed_clause, names)

    def user_values(self, names: Mapping[str, str]) -> str:
        """The values the failing clause read, in the user's terms: ``x.size(0)=10``."""
        if self.failed_clause is None:
            return ""
        used = set(re.findall(r"L\['(t\d+)'\]", self.failed_clause))
        return ", ".join(f"{names.get(p, p)}={v}" for p, v in self.values if p in used)

    def to_json(self, names: Mapping[str, str] | None = None) -> dict[str, object]:
        """``entry``, ``outcome``, ``passed``, ``failed_clause`` (as stored), ``reason``,
        ``values`` (``tN`` -> value) and ``user_clause`` (the failing clause in the
        user's terms, with ``names``)."""
        return {"entry": self.entry.name, "outcome": self.outcome, "passed": self.passed,
                "failed_clause": self.failed_clause, "reason": self.reason,
                "values": dict(self.values), "user_clause": self.user_clause(names or {})}


@dataclass(frozen=True)
class FxLoad:
    """An FX graph an AOTAutograd hit loads.

    Attributes:
        role: ``forward`` or ``backward``.
        key: the FX key.
        entry: the FX entry torch would load (exact guards-string match), or
            None when it is gone (torch then recompiles).
    """

    role: str
    key: str
    entry: str | None

    def to_json(self) -> dict[str, object]:
        return {"role": self.role, "key": self.key, "entry": self.entry}


@dataclass(frozen=True)
class KeyMatch:
    """The lookup of one key for the given inputs.

    Attributes:
        key: the key.
        fits: False when the inputs cannot be this key's (rank, a static
            dim, inconsistent shared symbols, 0/1 specialization); then
            ``entries`` is empty and ``reasons`` says why.
        reasons: why the key does not fit, or notes (inputs not given).
        symbols: the ``tN`` table of the key's first readable entry.
        values: the value bound to each ``tN`` (None when not determined).
        entries: per entry, in torch's order.
        hit: the entry torch loads, None for a miss or when undecided.
        decided: False when an entry before any passing one could not be
            decided (its outcome is ``unknown`` or ``unparsable``).
        shadowed: entries after the hit that would also pass.
        loads: for an AOTAutograd hit, the FX entries it loads.
        loaded_by: for an FX key, the AOTAutograd keys whose entries load it.
        origin: the user code the key's graph was traced from, where known.
        aborted: why the lookup stopped early: a guard raised before any
            entry passed (see :class:`EntryVerdict`).
        uncertain: what fxcache cannot know from the cache that would change the
            outcome (e.g. whether a static dim was specialized under dynamic=True);
            the status is then ``undecided``, ``hit`` says what the guards alone give.
        bound: each input the user gave that this key takes, as (the user's source,
            the key's source): ``(L['input_ids'], L['kwargs']['input_ids'])`` for a
            module compiled whole, equal sources for a plain parameter.
        compiled: the function the key was compiled from
            (:func:`fxcache_core.functions.frames.compiled_from`), where the cache records it.
    """

    key: CacheKey
    fits: bool
    reasons: tuple[str, ...] = ()
    symbols: tuple[SymbolInfo, ...] = ()
    values: tuple[tuple[str, int | None], ...] = ()
    entries: tuple[EntryVerdict, ...] = ()
    hit: Entry | None = None
    decided: bool = True
    shadowed: tuple[Entry, ...] = ()
    loads: tuple[FxLoad, ...] = field(default=())
    loaded_by: tuple[str, ...] = ()
    origin: Origin | None = None
    aborted: str | None = None
    uncertain: tuple[str, ...] = ()
    bound: tuple[tuple[str, str], ...] = ()
    compiled: CompiledFrom | None = None

    @property
    def status(self) -> str:
        """The lookup's outcome: ``hit``, ``miss``, ``undecided``, ``error`` or ``no-fit``.

        ``miss`` also covers an AOTAutograd entry whose guards pass but whose FX
        entry is gone (torch raises ``FXGraphCacheMiss`` and recompiles), and an
        AOTAutograd lookup a raising guard aborted (``AOTAutogradCache._lookup``
        catches the exception: a miss). ``error`` is an FX lookup a raising
        guard aborted: nothing catches it, and the compile fails.
        """
        if not self.fits:
            return "no-fit"
        if self.aborted is not None:
            return "miss" if self.key.kind is KeyKind.AOT_AUTOGRAD else "error"
        if self.uncertain:
            return "undecided"
        if self.hit is not None:
            return "miss" if any(ld.entry is None for ld in self.loads) else "hit"
        return "miss" if self.decided else "undecided"

    @property
    def user_names(self) -> dict[str, str]:
        """``tN`` -> how the user names it (``x.size(0)``), from :attr:`symbols`."""
        from fxcache_core.guards.user_terms import placeholder_names

        return placeholder_names(self.symbols)

    def to_json(self) -> dict[str, object]:
        """One result of ``fxcache match --json`` (``kind``, ``key``, ``status``, ``origin``,
        ``function``, ``compiled_from``, ``bound``, ``hit``, ``fits``, ``reasons``,
        ``uncertain``, ``aborted``, ``values``, ``symbols``, ``shadowed``, ``loads``,
        ``loaded_by``, ``entries``)."""
        from fxcache_core.functions.origin import function_of

        names = self.user_names
        return {
            "kind": self.key.kind.value, "key": self.key.key, "status": self.status,
            "origin": str(self.origin) if self.origin else None,
            "function": function_of(self.origin, self.compiled),
            "compiled_from": str(self.compiled) if self.compiled else None,
            "bound": dict(self.bound),
            "hit": self.hit.name if self.hit else None,
            "fits": self.fits, "reasons": list(self.reasons), "uncertain": list(self.uncertain),
            "aborted": self.aborted,
            "values": dict(self.values),
            "symbols": {s.placeholder: s.to_json() for s in self.symbols},
            "user_names": names,
            "shadowed": [e.name for e in self.shadowed],
            "loads": [ld.to_json() for ld in self.loads],
            "loaded_by": list(self.loaded_by),
            "entries": [v.to_json(names) for v in self.entries],
        }


@dataclass(frozen=True)
class MatchReport:
    """Everything ``match`` found: one :class:`KeyMatch` per key the inputs bind.

    AOTAutograd keys come first (torch looks them up first), then FX keys.
    ``unbound`` (only when a function was asked for): keys traced from it that
    the inputs name none of the inputs of, e.g. a graph break's resume frame
    keyed on its own locals, each with the user inputs it takes (``L['t']``).
    ``unused``: inputs given that no key considered takes (a misspelt or
    extra name). ``function_missing``: no key was compiled from the function asked
    for; ``functions_held`` then lists those the cache holds keys of.
    """

    inputs: tuple[tuple[str, str], ...]
    results: tuple[KeyMatch, ...]
    keys_considered: int
    unbound: tuple[tuple[CacheKey, Origin | CompiledFrom, tuple[str, ...]], ...] = ()
    unused: tuple[str, ...] = ()
    function_missing: bool = False
    functions_held: tuple[str, ...] = ()

    def folded(self) -> frozenset[str]:
        """FX keys only loaded by AOTAutograd keys that hit: after such a hit torch
        loads them by exact guards string (each hit's ``loads``), never by their
        own guards, so their own verdicts add nothing for this call."""
        hit_aot = {m.key.key for m in self.results
                   if m.status == "hit" and m.key.kind is KeyKind.AOT_AUTOGRAD}
        return frozenset(m.key.key for m in self.results
                         if m.loaded_by and set(m.loaded_by) <= hit_aot)

    def to_json(self) -> dict[str, object]:
        """``inputs``, ``results`` (:meth:`KeyMatch.to_json` each), ``unbound``
        (``kind``, ``key``, ``origin``, ``takes`` each), ``unused``,
        ``function_missing`` and ``functions_held``."""
        return {
            "inputs": dict(self.inputs),
            "results": [m.to_json() for m in self.results],
            "unbound": [{"kind": k.kind.value, "key": k.key, "origin": str(o), "takes": list(takes)}
                        for k, o, takes in self.unbound],
            "unused": list(self.unused),
            "function_missing": self.function_missing,
            "functions_held": list(self.functions_held),
        }


def _l_bases(d: DecodedEntry, extra_sources: Mapping[str, str]) -> set[str]:
    """The user inputs (``L['x']``...) an entry's inputs come from."""
    out = set()
    for src in list(d.arg_sources) + [i.source for i in d.inputs] + list(extra_sources.values()):
        if src and (tensorified_base(src) or src).startswith("L["):
            out.add(value_of(tensorified_base(src) or src, {}).base)
    return out


_NOT_INPUT_RE = re.compile(r"\._(parameters|buffers|modules)\[|^L\['self'\]")


def _is_call_input(base: str) -> bool:
    """Whether a source base is an input of the call (``L['x']``, ``L['args'][0]``,
    ``L['kwargs']['input_ids']``, a resume frame's ``L['___stack0']``), not a
    parameter, buffer or submodule of the module (``L['self']...``)."""
    return base.startswith("L[") and _NOT_INPUT_RE.search(base) is None


_LOCAL_RE = re.compile(r"^L\['(?P<name>[A-Za-z_]\w*)'\](?P<rest>.*)$")
_ARG_RE = re.compile(r"^L\['args'\]\[(?P<i>\d+)\](?P<rest>.*)$")


def _candidates(src: str, params: Sequence[str]) -> list[str]:
    """The sources a user's input may stand for in a key, in order of preference.

    ``L['input_ids']`` may be a local of the compiled frame, a keyword of a module
    call (``L['kwargs']['input_ids']``) or, by the forward's parameter list, a
    positional one (``L['args'][0]``); ``L['args'][0]`` (given positionally) may be
    the frame's first parameter.
    """
    out = [src]
    if (m := _ARG_RE.match(src)) is not None:
        i, rest = int(m.group("i")), m.group("rest")
        if i < len(params):
            out += [f"L[{params[i]!r}]{rest}", f"L['kwargs'][{params[i]!r}]{rest}"]
    elif (m := _LOCAL_RE.match(src)) is not None:
        name, rest = m.group("name"), m.group("rest")
        out.append(f"L['kwargs'][{name!r}]{rest}")
        if name in params:
            out.append(f"L['args'][{params.index(name)}]{rest}")
    return out


def _alias(inputs: Mapping[str, InputValue], bases: set[str],
           frame: CompiledFrom | None | Callable[[], CompiledFrom | None]
           ) -> tuple[dict[str, InputValue], tuple[tuple[str, str], ...]]:
    """The user's inputs renamed to the key's sources (see :func:`_candidates`), and
    (user source, key source) for each input the key takes. ``frame`` (or a function
    giving it, called only when a name does not bind as given) has the parameter names."""
    out: dict[str, InputValue] = {}
    bound: list[tuple[str, str]] = []
    params: Sequence[str] | None = None

    def takes(cand: str) -> bool:
        return cand in bases or any(b.startswith(cand) and b[len(cand):len(cand) + 1] in ("[", ".")
                                    for b in bases)

    for src, val in inputs.items():
        if takes(src):
            out.setdefault(src, val)
            bound.append((src, src))
            continue
        if params is None:
            f = frame() if callable(frame) else frame
            params = f.params if f is not None else ()
        for cand in _candidates(src, params)[1:]:
            if takes(cand):
                out.setdefault(cand, val)
                bound.append((src, cand))
                break
        else:
            out.setdefault(src, val)
    return out, tuple(bound)


_STACK_RE = re.compile(r"^L\['___stack(\d+)'\]")


def user_name(base: str, params: Sequence[str] = ()) -> str:
    """A key's input source in the user's terms: ``L['kwargs']['input_ids']`` ->
    ``input_ids``, ``L['args'][0]`` -> ``args[0]`` (``args[0] (x)`` where the
    forward's parameter list is known), ``L['xs'][0]`` -> ``xs[0]``; a resume
    frame's ``L['___stack0']`` says what it is."""
    if (m := re.match(r"^L\['kwargs'\]\['([^']*)'\](.*)$", base)) is not None:
        return m.group(1) + m.group(2)
    if (m := _ARG_RE.match(base)) is not None:
        i = int(m.group("i"))
        return f"args[{i}]{m.group('rest')}" + (f" ({params[i]})" if i < len(params) else "")
    if _STACK_RE.match(base):
        name = base[3:base.index("']")]
        return (f"{name}{base[base.index(']') + 1:]} (a value left on the stack at the graph "
                "break, e.g. the result of the call that broke the graph; name it "
                f"{name}=[...])")
    if (m := _LOCAL_RE.match(base)) is not None:
        return m.group("name") + m.group("rest")
    return base


@dataclass
class _Binding:
    """Symbol values found while fitting the inputs to one entry's graph inputs."""

    syms: dict[str, int]                # plain symbol -> value
    where: dict[str, str]               # plain symbol -> the first input dim that gave it
    problems: list[str]
    later: list[tuple[str, str, int]]   # (what, expression, value given): checked once syms are known
    notes: list[str] = field(default_factory=list)
    static: dict[int, str] = field(default_factory=dict)  # static size -> a dim that has it


_PARAM_RE = re.compile(r"\._(parameters|buffers)\[")


def _dim_kind(source: str, dim: int, val: TensorArg, mode: DynamicMode,
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


_HOW = ("pass --dynamic true/none/false as in torch.compile, and mark_dynamic=[...] on dims "
        "that are marked")


def _fit(d: DecodedEntry, inputs: Mapping[str, InputValue],
         mode: DynamicMode = DynamicMode.UNKNOWN, pgo: bool = False,
         duck_shape: bool | None = None, hints: Mapping[str, int] | None = None,
         guards: str | None = None) -> _Binding:
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
    guards expression, which shows where the graph forces two inputs equal. Sizes and strides
    that are expressions (``2*s17``) are checked once every plain symbol has
    its value.
    """
    b = _Binding({}, {}, [], [])
    symbolic: list[tuple[str, str, int, str]] = []  # (where, symbol, size, kind)
    static: list[tuple[str, int, str]] = []          # (where, size, kind): sizes > 1 the key has static
    for inp in d.inputs:
        if not inp.source:
            continue
        if (fbase := tensorified_base(inp.source)) is not None:
            _fit_tensorified(b, fbase, inputs.get(fbase), mode)
            continue
        val = inputs.get(inp.source)
        name = inp.source
        if isinstance(val, float) and re.match(r"f64\[\]", inp.type):
            _fit_tensorified(b, name, val, mode)  # a float taken as a 0-d float64 tensor
            continue
        if isinstance(val, float):
            b.problems.append(f"{name} is a {'SymInt' if inp.is_symint else 'tensor'} here, given "
                              f"the float {val}")
            continue
        if inp.is_symint:
            if isinstance(val, int) and mode in (DynamicMode.NONE, DynamicMode.FALSE):
                why = (f"{name} is an int argument, a SymInt ({inp.expr}) here: under "
                       f"dynamic={mode.value.capitalize()} a fresh process's first call specializes it "
                       "to its value, so torch looks up another key")
                if pgo:
                    b.notes.append(why + " (unless the profile-guided automatic-dynamic state in this "
                                   "cache dir makes it a SymInt: fxcache does not read that state)")
                else:
                    b.problems.append(why)
            continue
        tt = TensorType.parse(inp.type)
        if tt is None or val is None:
            continue
        if not isinstance(val, TensorArg):
            b.problems.append(f"{name} is a tensor {inp.type} here, given the int {val}")
            continue
        if len(val.shape) != len(tt.sizes):
            b.problems.append(f"{name} has {len(tt.sizes)} dims here ({inp.type}), given {len(val.shape)}")
            continue
        for dim, (want, got) in enumerate(zip(tt.sizes, val.shape, strict=True)):
            where = f"{name}.size()[{dim}]"
            kind = _dim_kind(name, dim, val, mode, duck_shape)
            if _INT_RE.fullmatch(want):
                if int(want) != got:
                    b.problems.append(f"dim {dim} of {name} is static {want}, got {got}")
                elif got > 1 and kind == "dynamic":
                    b.problems.append(
                        f"dim {dim} of {name} is marked dynamic but static {want} here: torch traces "
                        "it as a symbol (another key), or, if the code fixes that size, mark_dynamic "
                        "fails with ConstraintViolationError")
                elif got > 1:
                    static.append((where, got, kind))
            elif _SYMBOL_RE.fullmatch(want):
                if got in (0, 1):
                    b.problems.append(
                        f"dim {dim} of {name} is {got}: torch specializes sizes 0 and 1, "
                        f"so this call compiles another graph (not {want})"
                    )
                elif kind == "static" and pgo:
                    b.notes.append(
                        f"dim {dim} of {name} is symbolic here ({want}); under dynamic=None a fresh "
                        "process traces an unmarked dim static, unless the profile-guided "
                        "automatic-dynamic state in this cache dir (dynamo/code_state_*, saved "
                        "under a job id) marks it dynamic: fxcache does not read that state")
                    b.where.setdefault(want, where)
                    b.syms.setdefault(want, got)
                elif kind == "static":
                    b.problems.append(
                        f"dim {dim} of {name} is symbolic here ({want}), but under "
                        f"dynamic={mode.value.capitalize()} a fresh process's first call traces "
                        f"an unmarked dim static, so torch looks up a key with {got} there (after a "
                        "recompile, automatic dynamic marks a changed dim: mark_dynamic=[...] "
                        "describes that call)")
                elif b.syms.setdefault(want, got) != got:
                    b.problems.append(f"{want} is {b.where[want]} = {b.syms[want]}, but {where} = {got}")
                else:
                    b.where.setdefault(want, where)
                    symbolic.append((where, want, got, kind))
            else:
                b.later.append((f"{where}", want, got))
        if len(tt.strides) == len(val.shape):
            for dim, (want, got) in enumerate(zip(tt.strides, val.strides(), strict=True)):
                if val.shape[dim] <= 1:
                    continue  # a size-0/1 dim's stride is not part of the layout
                where = f"{name}.stride()[{dim}]"
                if _INT_RE.fullmatch(want):
                    if int(want) != got:
                        b.problems.append(f"stride {dim} of {name} is {want} here, got {got}"
                                          + ("" if inputs_gave_stride(val) else " (contiguous)"))
                else:
                    b.later.append((where, want, got))
    _duck(b, symbolic, static, hints if duck_shape is None else None)
    placeholder = {i.source: f"t{n}" for n, i in enumerate(d.symints) if i.source}
    equal = _equated(guards)
    for sym in dict.fromkeys(s for _, s, _, _ in symbolic):
        dims = [(w, k) for w, s, _, k in symbolic if s == sym]
        if len(dims) > 1 and any(k == "dynamic" for _, k in dims):
            phs = [placeholder.get(w) for w, _ in dims]
            if None not in phs and all(_same(equal, phs[0], p) for p in phs[1:]):
                continue  # the guards equate them: the graph's ops made the sizes equal
            if None in phs:
                # A dim traced DYNAMIC (marked, or duck sizing off) gets a symbol, and the
                # graph an input, of its own, and no duck dim reuses its symbol
                # (ShapeEnv.create_symbol: duck=False, no val_to_var entry); equal sizes the
                # graph forces equal keep both inputs and an equality guard, as above. This
                # key has one input for them: duck sizing made it.
                marked = [w for w, _ in dims if _marked(inputs, w)]
                b.problems.append(
                    f"{dims[0][0]} and {dims[1][0]} share {sym} here (one graph input, as duck "
                    "sizing gives), but " + (
                        "marked dims get a symbol each" if len(marked) == len(dims) else
                        f"{marked[0]} is marked dynamic and gets a symbol of its own" if marked else
                        "with duck sizing off they get a symbol each")
                    + ": torch traces another graph")
                continue
            b.notes.append(
                f"{dims[0][0]} and {dims[1][0]} share {sym} here, but a marked dim gets a symbol of "
                "its own, and this entry's guards do not equate them (no L['ti'] == L['tj'] "
                "clause, as when the graph's ops make two sizes equal): the key may come from duck "
                "sizing, which a marked dim never gets")
    has_symint = any(i.is_symint for i in d.inputs)
    if mode is DynamicMode.TRUE and not symbolic and not b.later and not has_symint and any(
            k == "duck" for _, _, k in static):
        b.notes.append(
            "this key has no symbols (a static compile, e.g. under dynamic=None); under "
            "dynamic=True torch traces the sizes as symbols and looks up another key, unless the "
            "code fixes every one of them")
    return b


def _marked(inputs: Mapping[str, InputValue], where: str) -> bool:
    """Whether ``where`` (``L['x'].size()[1]``) is a dim the user marked dynamic."""
    m = re.fullmatch(r"(.+)\.size\(\)\[(\d+)\]", where)
    val = inputs.get(m.group(1)) if m else None
    return isinstance(val, TensorArg) and int(m.group(2)) in val.marked  # type: ignore[union-attr]


def _fit_tensorified(b: _Binding, base: str, val: InputValue | None, mode: DynamicMode) -> None:
    """A float the key takes tensorified (a 0-d float64 graph input whose source is
    ``L['scale']``, see :mod:`fxcache_core.lookup.floats`): any value serves, but only where torch
    tensorifies it: not on a fresh process's first call under dynamic=None/False,
    nor for nan and inf."""
    if val is None:
        return
    if not isinstance(val, float):
        b.problems.append(f"{base} is a Python float taken as a tensor here, given {val}")
    elif math.isnan(val) or math.isinf(val):
        b.problems.append(f"{base} = {val}: torch specializes nan and inf floats, so it traces "
                          "another graph (this key takes the float as a tensor)")
    elif mode in (DynamicMode.NONE, DynamicMode.FALSE):
        b.problems.append(
            f"{base} is a Python float taken as a tensor here (tensorified), but under "
            f"dynamic={mode.value.capitalize()} a fresh process's first call specializes a float "
            "into the graph as a constant, so torch looks up another key (after a call with "
            "another value, automatic dynamic tensorifies it: this key)")
    elif mode is DynamicMode.UNKNOWN:
        b.notes.append(
            f"{base} is a float taken as a tensor here: under dynamic=True torch does that and "
            "looks up this key; under dynamic=None a fresh process's first call specializes it "
            f"into another key ({_HOW})")


def _fit_baked_floats(catalog: Catalog, key: CacheKey, b: _Binding,
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
                b.problems.append(
                    f"{src} = {val} is a constant of this key's graph (specialized), but under "
                    "dynamic=True torch takes a float as a tensor input: another key")
            elif mode is DynamicMode.UNKNOWN and not special:
                b.notes.append(
                    f"{src} = {val} is a constant of this key's graph: torch specializes a float "
                    "so on a fresh process's first call under dynamic=None, not under "
                    f"dynamic=True ({_HOW})")
            continue
        shown = ", ".join(sorted({repr(c) for c in consts})) or "no float constant"
        b.problems.append(
            f"{src} is specialized into this key's graph as a constant ({shown} where its code "
            f"computes with it), given {val}: torch traces another graph")


_EQ_RE = re.compile(r"^\(?L\['(t\d+)'\] == L\['(t\d+)'\]\)?$")


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


def _duck(b: _Binding, symbolic: list[tuple[str, str, int, str]],
          static: list[tuple[str, int, str]], hints: Mapping[str, int] | None = None) -> None:
    """Duck sizing: equal sizes of duck dims get one symbol in Dynamo's ShapeEnv.

    Two such dims the key gives two symbols, or one the key has specialized to
    that size (under ``dynamic=True`` a static size of an input was a symbol
    once), mean torch traces another graph. Only ``duck`` dims take part
    (``ShapeEnv.create_symbol`` registers and reuses a value for DUCK only);
    ``unknown`` ones make a note instead of a problem.
    """
    duckish = ("duck", "unknown")
    for (w1, s1, v1, k1), (w2, s2, v2, k2) in _pairs(symbolic):
        if v1 == v2 and s1 != s2 and k1 in duckish and k2 in duckish:
            h1, h2 = (hints or {}).get(s1), (hints or {}).get(s2)
            if k1 == k2 == "duck" and h1 is not None and h1 == h2:
                b.notes.append(
                    f"{w1} and {w2} are both {v1}: duck sizing would give them one symbol, but this "
                    f"key's entry was compiled with {s1} = {s2} = {h1} as two symbols: with duck "
                    "sizing off (torch.fx.experimental._config.use_duck_shape = False) or with these "
                    "dims marked dynamic; pass --no-duck-shape (or --duck-shape), or mark_dynamic=[...]")
            elif k1 == k2 == "duck":
                b.problems.append(
                    f"{w1} and {w2} are both {v1}: under dynamic=True duck sizing gives equal "
                    f"sizes one symbol, so this call traces another graph (this key has {s1} and {s2})")
            else:
                b.notes.append(
                    f"{w1} and {w2} are both {v1}: under dynamic=True duck sizing gives them one "
                    f"symbol and torch traces another graph; marked dynamic (mark_dynamic, automatic "
                    f"dynamic) they keep this key's {s1} and {s2} ({_HOW})")
    for w1, _s1, v1, k1 in symbolic:
        for w2, v2, k2 in static:
            if v1 == v2 and k1 in duckish and k2 in duckish:
                if k1 == k2 == "duck":
                    b.problems.append(
                        f"{w1} = {v1} equals {w2}, static here: under dynamic=True that dim was a "
                        "symbol specialized to its size, and duck sizing gives both one symbol, so "
                        f"torch traces another graph ({w1} is static too)")
                else:
                    b.notes.append(
                        f"{w1} = {v1} equals {w2}, static here: if both are duck-sized "
                        "(dynamic=True, unmarked), torch traces another graph; if either is marked "
                        f"dynamic or static, it does not ({_HOW})")
                break


def _pairs(items: list) -> list[tuple]:
    return [(a, c) for i, a in enumerate(items) for c in items[i + 1:]]


def inputs_gave_stride(val: TensorArg) -> bool:
    return val.stride is not None


_INT_RE = re.compile(r"-?\d+")
_SYMBOL_RE = re.compile(r"[a-z]+\d+")


def _positional(d: DecodedEntry) -> DecodedEntry:
    """``d`` with its tensor inputs named ``#0``, ``#1``... in graph order (for --arg)."""
    out, n = [], 0
    for i in d.inputs:
        if not i.is_symint and TensorType.parse(i.type) is not None:
            out.append(replace(i, source=f"#{n}"))
            n += 1
        else:
            out.append(replace(i, source=None))
    return replace(d, inputs=tuple(out))


def _check_later(b: _Binding) -> list[str]:
    """Expression sizes/strides against the values given, once the symbols are known."""
    problems = []
    for where, expr, got in b.later:
        want = eval_symbolic(expr, b.syms)
        if want is not None and want != got:
            problems.append(f"{where} is {expr} = {want} here, got {got}")
    return problems


def match_key(
    catalog: Catalog,
    key: CacheKey,
    inputs: Mapping[str, InputValue],
    sym: Mapping[str, int] | None = None,
    force: bool = False,
    positional: Sequence[TensorArg] = (),
    mode: DynamicMode = DynamicMode.UNKNOWN,
    frame: CompiledFrom | None | Callable[[], CompiledFrom | None] = None,
    duck_shape: bool | None = None,
) -> KeyMatch | None:
    """Predict torch's lookup of ``key``; None when the inputs do not name any of its inputs.

    An input binds the key's source of the same name, or, for a module compiled
    whole, the call's keyword of that name (``L['kwargs']['input_ids']``) or the
    positional argument that the forward's parameter of that name takes (``frame``,
    :class:`~fxcache_core.functions.frames.CompiledFrom`); ``args[i]`` binds the i-th
    positional argument. The result's ``bound`` says which.

    Args:
        inputs: user inputs by source (``L['x']`` -> TensorArg/int), see
            :func:`fxcache_core.lookup.binding.parse_shapes`.
        sym: direct placeholder or symbol values (``t0``/``s77`` -> int); when
            given, the key is matched even if ``inputs`` names none of its inputs.
        force: always return a result (the user named this key).
        positional: tensor shapes for an FX key's tensor inputs, in graph order
            (for FX keys no AOTAutograd entry points at, whose inputs have no
            sources); bound as ``#0``, ``#1``...
        mode: how the call is compiled (``torch.compile(dynamic=...)``); it
            decides duck sizing and which dims are static (see
            :class:`~fxcache_core.lookup.binding.DynamicMode`).

    Raises:
        ShapeSpecError: ``sym`` names a placeholder or symbol the key does not have.
    """
    readable = [(e, d) for e in key.entries if isinstance(d := catalog.load(e), DecodedEntry)]
    if not readable and not key.entries and not force:
        return None
    if positional:
        if key.kind is not KeyKind.FX_GRAPH:
            return None
        readable = [(e, _positional(d)) for e, d in readable]
        inputs = {f"#{n}": t for n, t in enumerate(positional)}
        n_tensors = sum(1 for i in (readable[0][1].inputs if readable else ()) if i.source)
        if readable and n_tensors != len(positional):
            if not force:
                return None
            return KeyMatch(key=key, fits=False, reasons=(
                f"the graph has {n_tensors} tensor inputs, given {len(positional)} with --arg",))
    extra = catalog.sources_for(key)
    given: tuple[tuple[str, str], ...] = ()
    if readable and not positional:
        first = readable[0][1]
        inputs, given = _alias(inputs, _l_bases(first, extra), frame)
        if not (sym or force) and not given:
            return None
    elif not readable and not (sym or force):
        return None

    reasons: list[str] = []
    uncertain: tuple[str, ...] = ()
    symbols: tuple[SymbolInfo, ...] = catalog.symbols(readable[0][0]) if readable else ()
    values: dict[str, int | None] = {}
    if not readable and key.entries:
        reasons.append("no entry of this key can be read: torch skips them all (a miss)")
    if sym and not symbols:
        raise ShapeSpecError(f"--sym: key {key.key[:12]} has no readable entry to bind placeholders of")
    if sym:
        check_signs(sym, symbols, "--sym")
    if readable:
        d0 = readable[0][1]
        b = _fit(d0, inputs, mode, pgo=catalog.has_pgo_state(), duck_shape=duck_shape,
                 hints={s.expr: s.hint for s in symbols if s.expr and s.hint is not None},
                 guards=d0.guards_expr)
        if not positional and any(isinstance(v, float) for v in inputs.values()):
            _fit_baked_floats(catalog, key, b, inputs, _l_bases(d0, extra), mode)
        if b.problems:
            return _km(given, key=key, fits=False, reasons=tuple(b.problems), symbols=symbols)
        uncertain = tuple(b.notes)
        for info in symbols:  # plain symbols first: they may come from --sym or sources
            if info.expr in (sym or {}) and _SYMBOL_RE.fullmatch(info.expr or ""):
                b.syms[info.expr] = sym[info.expr]  # type: ignore[index]
        for info in symbols:
            v: int | None = None
            if sym and info.placeholder in sym:
                v = sym[info.placeholder]
            elif info.source:
                sv = value_of(info.source, inputs)
                if sv.problem:
                    return _km(given, key=key, fits=False, reasons=(sv.problem,), symbols=symbols)
                v = sv.value
            plain = info.expr if info.expr and _SYMBOL_RE.fullmatch(info.expr) else None
            if plain is not None:
                if v is None:
                    v = b.syms.get(plain)
                elif b.syms.setdefault(plain, v) != v:
                    return _km(given, key=key, fits=False, symbols=symbols, reasons=(
                        f"{plain} is {v} from {info.source or info.placeholder} but "
                        f"{b.syms[plain]} from {b.where.get(plain, 'elsewhere')}",))
            values[info.placeholder] = v
        for info in symbols:  # SymInts that are expressions (2*s77): computed from the symbols
            if values.get(info.placeholder) is None and info.expr and not _SYMBOL_RE.fullmatch(info.expr):
                values[info.placeholder] = eval_symbolic(info.expr, b.syms)
        late = _check_later(b)
        if late:
            return _km(given, key=key, fits=False, reasons=tuple(late), symbols=symbols)
        for info in symbols:
            if values.get(info.placeholder) is None:
                where = info.source or "no known source"
                reasons.append(f"{info.placeholder} ({info.expr}, {where}) is not given")
        if sym:
            known = {s.placeholder for s in symbols} | {s.expr for s in symbols if s.expr}
            unknown = sorted(set(sym) - known)
            if unknown:
                raise ShapeSpecError(
                    f"--sym {', '.join(unknown)}: key {key.key[:12]} has only "
                    + (", ".join(f"{s.placeholder} ({s.expr})" for s in symbols) or "no placeholders")
                )

    bound = {k: v for k, v in values.items() if v is not None}
    n_inputs = len(symbols) if readable else None
    verdicts: list[EntryVerdict] = []
    for e in key.entries:
        verdicts.append(_judge(catalog, e, bound, n_inputs))

    hit, decided, shadowed, aborted = None, True, [], None
    for v in verdicts:
        if v.outcome == "pass":
            if hit is None and decided and aborted is None:
                hit = v.entry
            elif hit is not None:
                shadowed.append(v.entry)
        elif v.outcome in ("unknown", "unparsable") and hit is None:
            decided = False
        elif v.outcome == "error" and hit is None and decided and aborted is None:
            aborted = (f"the guards of {v.entry.name[:16]} raise ({v.reason}); torch's lookup "
                       + ("stops there and AOTAutograd recompiles"
                          if key.kind is KeyKind.AOT_AUTOGRAD else "raises and the compile fails"))
    loads: tuple[FxLoad, ...] = ()
    if hit is not None and key.kind is KeyKind.AOT_AUTOGRAD:
        d = catalog.load(hit)
        if isinstance(d, DecodedEntry):
            out = []
            for role, ref in (("forward", d.forward), ("backward", d.backward)):
                if ref is not None:
                    fx = catalog.fx_entry_for(ref.key, ref.guards_expr)
                    out.append(FxLoad(role, ref.key, fx.name if fx else None))
            loads = tuple(out)
    return _km(given,
        key=key, fits=True, reasons=tuple(reasons), symbols=symbols,
        values=tuple(values.items()), entries=tuple(verdicts),
        hit=hit, decided=decided,
        shadowed=tuple(shadowed), loads=loads, aborted=aborted, uncertain=uncertain,
    )


def _km(bound: tuple[tuple[str, str], ...], **kw: object) -> KeyMatch:
    return KeyMatch(bound=bound, **kw)  # type: ignore[arg-type]


def _judge(catalog: Catalog, e: Entry, bound: Mapping[str, int],
           n_inputs: int | None) -> EntryVerdict:
    from fxcache_core.guards.expr import (
        parse_guards,  # sympy is only needed once there are guards to read
    )

    d = catalog.load(e)
    if isinstance(d, Unreadable):
        return EntryVerdict(e, "unreadable", f"skipped, as torch would: {d.reason}")
    if not d.guards_expr:
        return EntryVerdict(e, "pass", None, guards_expr=d.guards_expr)
    try:
        g = parse_guards(d.guards_expr)
    except GuardParseError as err:
        return EntryVerdict(e, "unparsable", str(err), guards_expr=d.guards_expr)
    used = {p: bound[p] for p in g.placeholders if p in bound}
    verdict = g.evaluate(used)
    vals = tuple(sorted(used.items(), key=lambda kv: int(kv[0][1:])))
    first = next((r for r in verdict.results if r.status != "pass"), None)
    beyond = [m for m in (first.missing if first else ())
              if n_inputs is not None and int(m[1:]) >= n_inputs]
    if first is not None and first.status == "unknown" and beyond:
        # The first clause torch cannot pass names L['tN'] past the graph's backed
        # SymInt inputs: its eval raises KeyError there.
        return EntryVerdict(e, "error", f"{first.clause.text}  raises KeyError: {beyond[0]!r} "
                            f"(the graph has {n_inputs} backed SymInt inputs)",
                            failed_clause=first.clause.text, guards_expr=d.guards_expr, values=vals)
    if verdict.status == "pass":
        return EntryVerdict(e, "pass", guards_expr=d.guards_expr, values=vals)
    if verdict.status == "fail":
        f = verdict.first_failure
        assert f is not None
        shown = ", ".join(f"{p}={used[p]}" for p in f.clause.placeholders if p in used)
        if f.status == "error":
            return EntryVerdict(e, "error", f"{f.clause.text}  raises {f.error}  with {shown}",
                                failed_clause=f.clause.text, guards_expr=d.guards_expr, values=vals)
        return EntryVerdict(e, "fail", f"{f.clause.text}  is {f.value!r}  with {shown}",
                            failed_clause=f.clause.text, guards_expr=d.guards_expr, values=vals)
    missing = sorted({m for r in verdict.results for m in r.missing}, key=lambda p: int(p[1:]))
    refused = next((r for r in verdict.results if r.status == "unknown" and r.error), None)
    why = (f"needs {', '.join(missing)}" if missing
           else f"{refused.clause.text}  {refused.error}" if refused is not None else "undecided")
    return EntryVerdict(e, "unknown", why, guards_expr=d.guards_expr, values=vals)


def _unfit_through_loaders(catalog: Catalog, key: CacheKey,
                           aot: Mapping[str, KeyMatch]) -> KeyMatch | None:
    """An FX key every loader of which was matched and none fits: no fit, decided
    without decoding the key's own entries (what :func:`_fit_through_loaders`
    would conclude after decoding them). None otherwise."""
    loaders = tuple(sorted({e.key for e in catalog.loaders_of(key.key)}))
    results = [aot[k] for k in loaders if k in aot]
    if not loaders or len(results) != len(loaders) or any(r.fits for r in results):
        return None
    why = results[0].reasons[0] if results[0].reasons else "no fit"
    return KeyMatch(key=key, fits=False, loaded_by=loaders, origin=results[0].origin, reasons=(
        f"loaded by AOTAutograd key {results[0].key.key[:12]}, which does not fit: {why}",))


def _fit_through_loaders(catalog: Catalog, m: KeyMatch, aot: Mapping[str, KeyMatch]) -> KeyMatch:
    """An FX graph's inputs are those of the AOTAutograd graph that compiled it.

    FX entries store no sources for their tensor inputs, so their rank and
    static dims are checked through the AOTAutograd keys that load them: when
    every such key was matched and none fits, the FX key does not fit either.
    """
    results = [aot[k] for k in m.loaded_by if k in aot]
    if not m.loaded_by or len(results) != len(m.loaded_by):
        return m
    if any(r.fits for r in results):
        # What makes every loader's lookup uncertain (how the call is traced) holds here too.
        common = set.intersection(*(set(r.uncertain) for r in results if r.fits))
        return replace(m, uncertain=m.uncertain + tuple(u for u in results[0].uncertain if u in common))
    why = results[0].reasons[0] if results[0].reasons else "no fit"
    return KeyMatch(key=m.key, fits=False, symbols=m.symbols, loaded_by=m.loaded_by, origin=m.origin, reasons=(
        f"loaded by AOTAutograd key {results[0].key.key[:12]}, which does not fit: {why}",))


def _dims(catalog: Catalog, key: CacheKey) -> dict[tuple[str, int], str]:
    """(input source, dim) -> printed size, for the tensor inputs of a key's first readable entry."""
    for e in key.entries:
        d = catalog.load(e)
        if isinstance(d, DecodedEntry):
            out = {}
            for inp in d.inputs:
                tt = TensorType.parse(inp.type) if inp.source and not inp.is_symint else None
                if tt is not None:
                    for i, size in enumerate(tt.sizes):
                        out[(inp.source, i)] = size
            return out
    return {}


def _static_sibling(catalog: Catalog, key: CacheKey, function: str,
                    statics: dict[str, list[tuple[CacheKey, dict[tuple[str, int], str]]]]) -> CacheKey | None:
    """An AOTAutograd key of the same function compiled with static shapes.

    Under ``dynamic=None`` Dynamo compiles a function's first call with static
    shapes and only marks a dim dynamic when a later call changes it
    (automatic dynamic), so such a function leaves a static key beside its
    dynamic one. A static size of 0 or 1 does not count: ``dynamic=True``
    specializes those too. ``statics``: :func:`_static_keys` of the catalog.
    """
    dims = _dims(catalog, key)
    symbolic = {k for k, v in dims.items() if not _INT_RE.fullmatch(v)}
    for other, odims in statics.get(function, ()):
        if other.key != key.key and any(int(odims[k]) > 1 for k in symbolic if k in odims):
            return other
    return None


def _static_keys(catalog: Catalog) -> dict[str, list[tuple[CacheKey, dict[tuple[str, int], str]]]]:
    """Function name -> its AOTAutograd keys whose tensor dims are all static, with the dims."""
    out: dict[str, list[tuple[CacheKey, dict[tuple[str, int], str]]]] = {}
    for k in catalog.scan.keys:
        if k.kind is not KeyKind.AOT_AUTOGRAD:
            continue
        odims = _dims(catalog, k)
        if odims and all(_INT_RE.fullmatch(v) for v in odims.values()):
            name = _function_of(catalog, k)
            if name is not None:
                out.setdefault(name, []).append((k, odims))
    return out


def _function_of(catalog: Catalog, key: CacheKey) -> str | None:
    """The compiled function, for grouping a function's keys: the compiled frame
    (:func:`~fxcache_core.functions.frames.compiled_from`), else the first traced op's frame."""
    c = compiled_from(catalog, key)
    if c is not None:
        return str(c)
    o = _origin(catalog, key)
    return o.function if o is not None else None


def _first_readable(catalog: Catalog, key: CacheKey) -> DecodedEntry | None:
    return next((d for e in key.entries if isinstance(d := catalog.load(e), DecodedEntry)), None)


def _origin(catalog: Catalog, key: CacheKey) -> Origin | None:
    from fxcache_core.functions.origin import key_origin

    return key_origin(catalog, key)


def match(
    catalog: Catalog,
    inputs: Mapping[str, InputValue],
    sym: Mapping[str, int] | None = None,
    only: CacheKey | None = None,
    function: str | None = None,
    positional: Sequence[TensorArg] = (),
    mode: DynamicMode = DynamicMode.UNKNOWN,
    duck_shape: bool | None = None,
) -> MatchReport:
    """Predict torch's lookup for every key the inputs bind (or just ``only``).

    ``function`` keeps only the keys compiled from the function of that name: the
    frame Dynamo compiled, a resume frame of it after a graph break, or for a
    module compiled whole its class (:func:`fxcache_core.functions.frames.keys_compiled_from`;
    where no entry records the compiled frame, a key traced through a function of
    that name, :meth:`~fxcache_core.decode.entries.Origin.traced_from`). Its keys that the
    inputs do not bind are listed in the report's ``unbound``; when no key was
    compiled from it, ``function_missing`` is set. ``positional``
    binds the tensor inputs of FX keys in graph order instead of by name:
    it applies to FX keys no AOTAutograd entry loads (or to ``only``).
    ``mode`` is the call's ``torch.compile(dynamic=...)``; with
    ``DynamicMode.UNKNOWN`` what depends on it is undecided. ``duck_shape`` is
    torch's ``torch.fx.experimental._config.use_duck_shape`` (None: not said, see
    :func:`_fit`).

    Raises:
        ShapeSpecError: ``sym`` given without ``only``, or naming a placeholder
            the key does not have.
    """
    if sym and only is None:
        raise ShapeSpecError("--sym binds placeholders of one key: give --key too")
    if sum(map(bool, (sym, inputs, positional))) > 1:
        raise ShapeSpecError("give one of --shapes, --arg or --sym")
    keys = [only] if only is not None else sorted(
        catalog.scan.keys, key=lambda k: (k.kind is not KeyKind.AOT_AUTOGRAD, k.key))
    if only is None:
        catalog.read_ahead(catalog.scan.entries())  # all of them, below: on every CPU
    mine: set[str] | None = None
    held: tuple[str, ...] = ()
    if function is not None:
        mine, held = keys_of_function(catalog, function)
    results: list[KeyMatch] = []
    unbound: list[tuple[CacheKey, Origin | CompiledFrom, tuple[str, ...]]] = []
    by_key: dict[str, KeyMatch] = {}
    used: set[str] = set()
    statics: dict[str, list[tuple[CacheKey, dict[tuple[str, int], str]]]] | None = None
    int_keys: FunctionKeys | None = None
    for k in keys:
        if mine is not None and k.key not in mine:
            continue
        if positional and only is None and (k.kind is not KeyKind.FX_GRAPH or catalog.loaders_of(k.key)):
            continue
        if k.kind is KeyKind.FX_GRAPH and only is None and not positional and function is None:
            skipped = _unfit_through_loaders(catalog, k, by_key)
            if skipped is not None:  # decided without reading this key's entries
                by_key[k.key] = skipped
                results.append(skipped)
                continue
        known: list[CompiledFrom | None] = []

        def frame_of(k: CacheKey = k, known: list = known) -> CompiledFrom | None:
            if not known:  # read only when needed: an AOTAutograd key's is in its FX entry
                known.append(compiled_from(catalog, k))
            return known[0]

        if function is not None:
            frame_of()
        m = match_key(catalog, k, inputs, sym, force=only is not None, positional=positional,
                      mode=mode, frame=frame_of, duck_shape=duck_shape)
        if m is None:
            frame = known[0] if known else None
            if function is not None and not positional and (
                    k.kind is KeyKind.AOT_AUTOGRAD or not catalog.loaders_of(k.key)):
                o = frame or _origin(catalog, k)
                if o is not None and (takes := _takes(catalog, k, frame)):
                    unbound.append((k, o, takes))
            continue
        used.update(src for src, _ in m.bound)
        frame = frame_of()
        origin = _origin(catalog, k)
        m = replace(m, origin=origin, compiled=frame)
        if k.kind is KeyKind.AOT_AUTOGRAD and m.fits and origin is not None and (
                first := _first_readable(catalog, k)) is not None:
            if int_keys is None:
                int_keys = FunctionKeys(catalog)
            rule = int_argument_rule(int_keys, k, first, origin, inputs, mode, catalog.has_pgo_state(),
                                     of_function=function is not None)
            if rule.problems:
                m = KeyMatch(key=k, fits=False, reasons=rule.problems, symbols=m.symbols, origin=origin,
                             bound=m.bound, compiled=frame)
            elif rule.notes:
                m = replace(m, uncertain=m.uncertain + rule.notes)
        if (mode is DynamicMode.UNKNOWN and k.kind is KeyKind.AOT_AUTOGRAD and m.fits and m.symbols
                and origin is not None):
            if statics is None:
                statics = _static_keys(catalog)
            fname = str(frame) if frame is not None else origin.function
            static = _static_sibling(catalog, k, fname, statics)
            if static is not None:
                m = replace(m, uncertain=m.uncertain + (
                    f"{fname} was also compiled with static shapes (key {static.key[:12]}): "
                    "under automatic dynamic (dynamic=None) a fresh process compiles its first call "
                    "statically and looks up a static key; this key serves the calls after that",))
        if k.kind is KeyKind.FX_GRAPH:
            loaders = tuple(sorted({e.key for e in catalog.loaders_of(k.key)}))
            m = replace(m, loaded_by=loaders)
            if m.fits:
                m = _fit_through_loaders(catalog, m, by_key)
        by_key[k.key] = m
        results.append(m)
    _negative_ints_for_tensors(catalog, results, inputs)
    shown = tuple((src, str(v)) for src, v in inputs.items())
    unused = tuple(src for src in inputs if src not in used) if (results or unbound) else ()
    return MatchReport(inputs=shown, results=tuple(results), keys_considered=len(keys),
                       unbound=tuple(unbound), unused=unused,
                       function_missing=function is not None and not mine,
                       functions_held=held)


def is_size_source(source: str | None) -> bool:
    """Whether a placeholder's source is a size, stride or storage offset of a
    tensor (never negative); False for an int argument (``L['n']``, which may be)
    and for an unknown source (it may be either)."""
    return source is not None and (".size()[" in source or ".stride()[" in source
                                   or source.endswith(".storage_offset()"))


def check_signs(values: Mapping[str, int], symbols: Sequence[SymbolInfo], option: str) -> None:
    """A negative value for a placeholder or symbol whose source is a size, stride or
    storage offset (:func:`is_size_source`) is a usage error: no call gives one.
    Where the source is unknown the value is taken as given (it may be an int argument).

    Raises:
        ShapeSpecError: naming ``option`` (``--sym``, ``--range``), the name and what it is.
    """
    from fxcache_core.guards.user_terms import user_source

    for name, v in values.items():
        info = next((s for s in symbols if name in (s.placeholder, s.expr)), None)
        if v < 0 and info is not None and is_size_source(info.source):
            raise ShapeSpecError(f"{option} {name}={v}: {name} is {user_source(info.source or '')}, "
                                 "which is never negative")


def _negative_ints_for_tensors(catalog: Catalog, results: Sequence[KeyMatch],
                               inputs: Mapping[str, InputValue]) -> None:
    """``x=-5`` where every key that takes ``x`` takes a tensor: a usage error (a
    negative number is no tensor's shape), not a key that "cannot take it".

    Raises:
        ShapeSpecError: naming the input and saying how a tensor is given.
    """
    from fxcache_core.guards.user_terms import user_source

    negs = {src: v for src, v in inputs.items() if isinstance(v, int) and v < 0}
    if not negs:
        return
    as_tensor: set[str] = set()
    as_int: set[str] = set()
    for m in results:
        d = next((d for e in m.key.entries if isinstance(d := catalog.load(e), DecodedEntry)), None)
        for i in d.inputs if d is not None else ():
            if i.source in negs:
                (as_int if i.is_symint else as_tensor).add(i.source)
    for src, v in negs.items():
        if src in as_tensor and src not in as_int:
            name = user_source(src)
            raise ShapeSpecError(f"--shapes {name}={v}: {name} is a tensor in the keys that take it, and "
                                 f"a negative number is no shape; give its shape, e.g. {name}=[{-v}]")


def _takes(catalog: Catalog, key: CacheKey, frame: CompiledFrom | None = None) -> tuple[str, ...]:
    """The inputs of the call a key's first readable entry is bound by, in the user's
    terms (:func:`user_name`), sorted; parameters, buffers and submodules of a
    module (``L['self']...``) and globals are not inputs of the call."""
    params = frame.params if frame is not None else ()
    for e in key.entries:
        d = catalog.load(e)
        if isinstance(d, DecodedEntry):
            bases = sorted(b for b in _l_bases(d, catalog.sources_for(key)) if _is_call_input(b))
            return tuple(user_name(b, params) for b in bases)
    return ()
