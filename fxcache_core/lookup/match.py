"""Which entry torch would load for a call with given input shapes, and why.

For each key the call's inputs bind, :func:`match_key` fits the inputs to the
key's graph (:mod:`fxcache_core.lookup.fit`: would Dynamo trace this call into
this graph?), binds the guard placeholders, and judges the key's entries in
torch's order (:mod:`fxcache_core.lookup.judge`, mirroring
``GuardedCache.find_guarded_entry`` in torch/_inductor/codecache.py). An
AOTAutograd hit then loads its forward/backward FX graphs by exact guards
string (``FxGraphCacheLoadable.load`` in
torch/_functorch/_aot_autograd/aot_autograd_result.py); when that entry is
gone, the load raises ``FXGraphCacheMiss`` and torch compiles afresh.
:func:`match` does that for every key (or the keys of one function) and adds
what one key alone cannot tell: FX keys fit through the AOTAutograd keys that
load them, int arguments baked into a sibling key (:mod:`fxcache_core.lookup.int_args`),
a function also compiled with static shapes.

The result is a value (:class:`~fxcache_core.lookup.match_report.MatchReport`, in
:mod:`fxcache_core.lookup.match_report`); nothing here prints.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey, Entry
from fxcache_core.catalog.reader import Catalog
from fxcache_core.decode.entries import DecodedEntry, Origin
from fxcache_core.decode.symbols import SymbolInfo
from fxcache_core.errors import FxcacheError, ShapeSpecError, param
from fxcache_core.functions.frames import CompiledFrom, compiled_from
from fxcache_core.functions.origin import (
    function_name,
    key_origin,
    keys_of_function,
)
from fxcache_core.lookup.binding import (
    DynamicMode,
    InputValue,
    TensorArg,
    check_signs,
    eval_symbolic,
    value_of,
)
from fxcache_core.lookup.fit import (
    SYMBOL_RE,
    Binding,
    Sibling,
    check_later,
    fit,
    fit_baked_floats,
    positional_inputs,
)
from fxcache_core.lookup.inputs import alias, input_bases, takes
from fxcache_core.lookup.int_args import FunctionKeys, int_argument_rule
from fxcache_core.lookup.judge import fx_loads, judge_entry, torch_lookup
from fxcache_core.lookup.match_report import KeyMatch, MatchReport, UnboundKey
from fxcache_core.lookup.phases import (
    Auto,
    Phase,
    Profiles,
    auto_scalars_taken,
    static_after_recompile,
    with_phases,
)
from fxcache_core.lookup.symbol_names import NamedInputs, key_symbols, name_inputs
from fxcache_core.reasons import Reason

__all__ = ["match", "match_key"]


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
    siblings: Callable[[CacheKey, DecodedEntry], Sequence[Sibling]] | None = None,
    auto: Auto | None = None,
    pgo: bool | None = None,
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
        siblings: the other AOTAutograd keys of the key's function, given the key
            and its first readable entry (asked only when a rule needs them, see
            :func:`~fxcache_core.lookup.fit.fit`).
        auto: what automatic dynamic or a saved profile traces as symbols on top of
            ``mode`` (:class:`~fxcache_core.lookup.phases.Auto`, in the key's sources).
        pgo: the cache dir holds a saved profile fxcache could not read (default:
            any saved profile, :meth:`~fxcache_core.catalog.reader.Catalog.has_pgo_state`).

    Raises:
        ShapeSpecError: ``sym`` names a placeholder or symbol the key does not have.
    """
    readable = [(e, d) for e in key.entries if isinstance(d := catalog.load(e), DecodedEntry)]
    if not readable and not key.entries and not force:
        return None
    if positional:
        if key.kind is not KeyKind.FX_GRAPH:
            return None
        readable = [(e, positional_inputs(d)) for e, d in readable]
        inputs = {f"#{n}": t for n, t in enumerate(positional)}
        n_tensors = sum(1 for i in (readable[0][1].inputs if readable else ()) if i.source)
        if readable and n_tensors != len(positional):
            return None if not force else KeyMatch(key=key, fits=False, reasons=(Reason(
                f"the graph has {n_tensors} tensor inputs, given {len(positional)} with {param('arg')}",
                "arg-count-differs"),))
    extra = catalog.sources_for(key)
    named = _named_by_symbols(catalog, key, readable, inputs, frame) if not (positional or extra) else None
    if named is not None:
        readable = [(e, named.apply(d)) for e, d in readable]
        extra = dict(named.by_symbol)
    given: tuple[tuple[str, str], ...] = ()
    if readable and not positional:
        inputs, given = alias(inputs, input_bases(readable[0][1], extra), frame)
        if not (sym or force) and not given:
            return None
        if auto:
            inputs = auto.mark(inputs)
    elif not readable and not (sym or force):
        return None

    reasons: list[Reason] = []
    uncertain: tuple[Reason, ...] = ()
    symbols: tuple[SymbolInfo, ...] = catalog.symbols(readable[0][0]) if readable else ()
    if named is not None:
        symbols = tuple(replace(s, source=s.source or named.by_symbol.get(s.expr or "")) for s in symbols)
    values: dict[str, int | None] = {}
    if not readable and key.entries:
        reasons.append(Reason("no entry of this key can be read: torch skips them all (a miss)",
                              "no-readable-entry"))
    if sym and not symbols:
        raise ShapeSpecError(f"{param('sym')}: key {key.key[:12]} has no readable entry to bind "
                             "placeholders of", param="sym", value=dict(sym))
    if sym:
        check_signs(sym, symbols, "sym")
    if readable:
        d0 = readable[0][1]
        b = fit(d0, inputs, mode, pgo=catalog.has_pgo_state() if pgo is None else pgo, duck_shape=duck_shape,
                hints={s.expr: s.hint for s in symbols if s.expr and s.hint is not None},
                guards=d0.guards_expr, auto=auto.scalars if auto else frozenset(),
                siblings=_once(lambda: siblings(key, d0)) if siblings is not None else None)
        if auto and auto.scalars and not positional:
            auto_scalars_taken(b, d0, inputs, auto)
        if not positional and any(isinstance(v, float) for v in inputs.values()):
            fit_baked_floats(catalog, key, b, inputs, input_bases(d0, extra), mode)
        problems = b.problems or _bind_placeholders(b, symbols, inputs, sym or {}, values)
        if problems:
            return KeyMatch(bound=given, key=key, fits=False, reasons=tuple(problems), symbols=symbols)
        uncertain = tuple(b.notes)
        reasons += _not_given(symbols, values)
        if sym:
            _check_sym_names(key, sym, symbols)
    m = _looked_up(catalog, key, symbols, values, n_inputs=len(symbols) if readable else None,
                   bound=given, reasons=tuple(reasons), uncertain=uncertain)
    return replace(m, assumed=tuple(b.assumed.items())) if readable and b.assumed else m


def _once(f: Callable[[], Sequence[Sibling]]) -> Callable[[], Sequence[Sibling]]:
    """``f``, called at most once."""
    memo: list[Sequence[Sibling]] = []

    def once() -> Sequence[Sibling]:
        if not memo:
            memo.append(f())
        return memo[0]
    return once


def _named_by_symbols(catalog: Catalog, key: CacheKey, readable: Sequence[tuple[Entry, DecodedEntry]],
                      inputs: Mapping[str, InputValue],
                      frame: CompiledFrom | None | Callable[[], CompiledFrom | None]) -> NamedInputs | None:
    """An FX key no AOTAutograd entry loads (torch bypassed the AOTAutograd cache): its
    inputs named by its symbols' names (:mod:`fxcache_core.lookup.symbol_names`); None
    for other keys, or when the inputs do not explain every symbol."""
    if (not readable or key.kind is not KeyKind.FX_GRAPH or catalog.loaders_of(key.key)
            or not key_symbols(readable[0][1])):
        return None
    f = frame() if callable(frame) else frame
    return name_inputs(readable[0][1], inputs, f.params if f is not None else ())


def _bind_placeholders(b: Binding, symbols: Sequence[SymbolInfo], inputs: Mapping[str, InputValue],
                       sym: Mapping[str, int], values: dict[str, int | None]) -> list[Reason]:
    """Fill ``values`` (placeholder -> value, None when not determined) from ``sym``,
    the inputs (each placeholder's source) and the symbols the fit found; plain
    symbols first (they may come from ``sym`` or sources), then the SymInts that are
    expressions (``2*s77``). The problems that rule the key out, [] when none."""
    for info in symbols:
        if info.expr in sym and SYMBOL_RE.fullmatch(info.expr or ""):
            b.syms[info.expr] = sym[info.expr]  # type: ignore[index]
    for info in symbols:
        v: int | None = None
        if info.placeholder in sym:
            v = sym[info.placeholder]
        elif info.source:
            sv = value_of(info.source, inputs)
            if sv.problem:
                return [sv.problem]
            v = sv.value
        plain = info.expr if info.expr and SYMBOL_RE.fullmatch(info.expr) else None
        if plain is not None:
            if v is None:
                v = b.syms.get(plain)
            elif b.syms.setdefault(plain, v) != v:
                return [Reason(f"{plain} is {v} from {info.source or info.placeholder} but "
                               f"{b.syms[plain]} from {b.where.get(plain, 'elsewhere')}", "symbol-conflict")]
        values[info.placeholder] = v
    for info in symbols:
        if values.get(info.placeholder) is None and info.expr and not SYMBOL_RE.fullmatch(info.expr):
            values[info.placeholder] = eval_symbolic(info.expr, b.syms)
    return check_later(b)


def _not_given(symbols: Sequence[SymbolInfo], values: Mapping[str, int | None]) -> list[Reason]:
    """A note per placeholder whose value the inputs do not determine."""
    return [Reason(f"{info.placeholder} ({info.expr}, {info.source or 'no known source'}) is not given",
                   "placeholder-not-given")
            for info in symbols if values.get(info.placeholder) is None]


def _check_sym_names(key: CacheKey, sym: Mapping[str, int], symbols: Sequence[SymbolInfo]) -> None:
    """Raises ShapeSpecError when ``sym`` names a placeholder or symbol the key does not have."""
    known = {s.placeholder for s in symbols} | {s.expr for s in symbols if s.expr}
    unknown = sorted(set(sym) - known)
    if unknown:
        raise ShapeSpecError(
            f"{param('sym')} {', '.join(unknown)}: key {key.key[:12]} has only "
            + (", ".join(f"{s.placeholder} ({s.expr})" for s in symbols) or "no placeholders"),
            param="sym", value=", ".join(unknown))


def _looked_up(catalog: Catalog, key: CacheKey, symbols: tuple[SymbolInfo, ...],
               values: Mapping[str, int | None], n_inputs: int | None, bound: tuple[tuple[str, str], ...],
               reasons: tuple[Reason, ...], uncertain: tuple[Reason, ...]) -> KeyMatch:
    """The key's entries judged with the bound placeholders, walked in torch's order."""
    known = {k: v for k, v in values.items() if v is not None}
    verdicts = tuple(judge_entry(catalog, e, known, n_inputs) for e in key.entries)
    lk = torch_lookup(key.kind, verdicts)
    return KeyMatch(
        bound=bound, key=key, fits=True, reasons=reasons, symbols=symbols,
        values=tuple(values.items()), entries=verdicts, hit=lk.hit, decided=lk.decided,
        shadowed=lk.shadowed, loads=fx_loads(catalog, key, lk.hit), aborted=lk.aborted,
        uncertain=uncertain,
    )


def _loader_unfit(results: Sequence[KeyMatch]) -> tuple[Reason, ...]:
    why = results[0].reasons[0] if results[0].reasons else "no fit"
    return (Reason(f"loaded by AOTAutograd key {results[0].key.key[:12]}, which does not fit: {why}",
                   "loader-does-not-fit"),)


def _unfit_through_loaders(catalog: Catalog, key: CacheKey,
                           aot: Mapping[str, KeyMatch]) -> KeyMatch | None:
    """An FX key every loader of which was matched and none fits: no fit, decided
    without decoding the key's own entries (what :func:`_fit_through_loaders`
    would conclude after decoding them). None otherwise."""
    loaders = tuple(sorted({e.key for e in catalog.loaders_of(key.key)}))
    results = [aot[k] for k in loaders if k in aot]
    if not loaders or len(results) != len(loaders) or any(r.fits for r in results):
        return None
    return KeyMatch(key=key, fits=False, loaded_by=loaders, origin=results[0].origin,
                    reasons=_loader_unfit(results), compiled=results[0].compiled)  # its loaders' function


def _fit_through_loaders(m: KeyMatch, aot: Mapping[str, KeyMatch]) -> KeyMatch:
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
    return KeyMatch(key=m.key, fits=False, symbols=m.symbols, loaded_by=m.loaded_by, origin=m.origin,
                    reasons=_loader_unfit(results), compiled=m.compiled)


class _Frame:
    """A key's compiled frame (:func:`~fxcache_core.functions.frames.compiled_from`),
    read once and only when needed (an AOTAutograd key's is in its FX entry)."""

    def __init__(self, catalog: Catalog, key: CacheKey) -> None:
        self._catalog, self._key = catalog, key
        self._read, self._value = False, None

    def __call__(self) -> CompiledFrom | None:
        if not self._read:
            self._read, self._value = True, compiled_from(self._catalog, self._key)
        return self._value

    @property
    def known(self) -> CompiledFrom | None:
        """The frame if it was read already, else None (without reading it)."""
        return self._value


@dataclass
class _Run:
    """One pass of :func:`match` over the keys: its arguments and what it builds on
    demand across keys. ``auto_of`` gives what a key's lookup traces as symbols beyond
    the mode's own (a phase of automatic dynamic, :mod:`fxcache_core.lookup.phases`);
    ``recompiled``: the pass is the call after a recompile (static keys are ruled out,
    :func:`~fxcache_core.lookup.phases.static_after_recompile`)."""

    catalog: Catalog
    inputs: Mapping[str, InputValue]
    sym: Mapping[str, int] | None
    only: CacheKey | None
    function: str | None
    positional: Sequence[TensorArg]
    mode: DynamicMode
    duck_shape: bool | None
    by_key: dict[str, KeyMatch] = field(default_factory=dict)
    int_keys: FunctionKeys | None = None
    aot_symbols: list[tuple[str, DecodedEntry, tuple[SymbolInfo, ...]]] | None = None
    auto_of: Callable[[CacheKey, _Frame], Auto] | None = None
    pgo: bool | None = None
    recompiled: dict[str, Auto] | None = None

    def skips(self, k: CacheKey, mine: set[str] | None) -> bool:
        """Whether key ``k`` is not looked at: not the function's, or (with
        ``positional``) not an FX key torch looks up by its own guards."""
        if mine is not None and k.key not in mine:
            return True
        return bool(self.positional) and self.only is None and (
            k.kind is not KeyKind.FX_GRAPH or bool(self.catalog.loaders_of(k.key)))

    def decided_by_loaders(self, k: CacheKey) -> KeyMatch | None:
        """An FX key whose loaders all do not fit, decided without reading its entries."""
        if k.kind is KeyKind.FX_GRAPH and self.only is None and not self.positional and self.function is None:
            return _unfit_through_loaders(self.catalog, k, self.by_key)
        return None

    def unbound(self, k: CacheKey, frame: _Frame) -> UnboundKey | None:
        """``k`` (of the function asked for) as a key the inputs do not bind, with what it takes."""
        if self.function is None or self.positional or not (
                k.kind is KeyKind.AOT_AUTOGRAD or not self.catalog.loaders_of(k.key)):
            return None
        o = frame.known or key_origin(self.catalog, k)
        if o is not None and (t := takes(self.catalog, k, frame.known)):
            return UnboundKey(k, o, t)
        return None

    def siblings(self, key: CacheKey, d: DecodedEntry) -> list[Sibling]:
        """The other AOTAutograd keys of the cache with their symbol tables, those traced
        from ``d``'s function (:meth:`~fxcache_core.lookup.int_args.FunctionKeys.of`) first."""
        if key.kind is not KeyKind.AOT_AUTOGRAD:
            return []
        if self.int_keys is None:
            self.int_keys = FunctionKeys(self.catalog)
        mine = {k.key for k, _ in self.int_keys.of(d.origin)} if d.origin is not None else set()
        if self.aot_symbols is None:
            self.aot_symbols = []
            for k in self.catalog.scan.keys:
                first = self.catalog.first_readable(k) if k.kind is KeyKind.AOT_AUTOGRAD else None
                if first is not None:
                    self.aot_symbols.append((k.key, first[1], self.catalog.symbols(first[0])))
        out = [Sibling(name, other, symbols, name in mine)
               for name, other, symbols in self.aot_symbols if name != key.key]
        return sorted(out, key=lambda s: not s.same_function)

    def with_int_rule(self, m: KeyMatch, origin: Origin | None) -> KeyMatch:
        """What the call's int arguments say about an AOTAutograd key that fits
        (:func:`~fxcache_core.lookup.int_args.int_argument_rule`)."""
        k = m.key
        if not (k.kind is KeyKind.AOT_AUTOGRAD and m.fits and origin is not None):
            return m
        first = self.catalog.first_readable(k)
        if first is None:
            return m
        if self.int_keys is None:
            self.int_keys = FunctionKeys(self.catalog)
        pgo = self.catalog.has_pgo_state() if self.pgo is None else self.pgo
        rule = int_argument_rule(self.int_keys, k, first[1], origin, self.inputs, self.mode,
                                 pgo, of_function=self.function is not None, frame=m.compiled)
        if rule.problems:
            return KeyMatch(key=k, fits=False, reasons=rule.problems, symbols=m.symbols, origin=origin,
                            bound=m.bound, compiled=m.compiled, auto=m.auto, profile=m.profile)
        return replace(m, uncertain=m.uncertain + rule.notes) if rule.notes else m

    def with_loaders(self, m: KeyMatch) -> KeyMatch:
        """An FX key: the AOTAutograd keys that load it, and its fit through them."""
        if m.key.kind is not KeyKind.FX_GRAPH:
            return m
        m = replace(m, loaded_by=tuple(sorted({e.key for e in self.catalog.loaders_of(m.key.key)})))
        return _fit_through_loaders(m, self.by_key) if m.fits else m

    def keys(self, keys: Sequence[CacheKey], mine: set[str] | None
             ) -> tuple[list[KeyMatch], list[UnboundKey], set[str]]:
        """Every key of ``keys`` judged in order (AOTAutograd keys first): the results,
        the keys of the function the inputs do not bind, and the inputs used."""
        results: list[KeyMatch] = []
        unbound: list[UnboundKey] = []
        used: set[str] = set()
        catalog = self.catalog
        for k in keys:
            if self.skips(k, mine):
                continue
            m = self.decided_by_loaders(k)
            if m is None:
                frame = _Frame(catalog, k)
                if self.function is not None:
                    frame()
                auto = self.auto_of(k, frame) if self.auto_of is not None else None
                m = match_key(catalog, k, self.inputs, self.sym, force=self.only is not None,
                              positional=self.positional, mode=self.mode, frame=frame,
                              duck_shape=self.duck_shape, auto=auto, pgo=self.pgo, siblings=self.siblings)
                if m is None:
                    if (u := self.unbound(k, frame)) is not None:
                        unbound.append(u)
                    continue
                used.update(src for src, _ in m.bound)
                origin = key_origin(catalog, k)
                m = replace(m, origin=origin, compiled=frame())
                if auto:
                    m = replace(m, auto=auto.shown(), profile=auto.profile,
                                uncertain=m.uncertain + ((auto.uncertain,) if auto.uncertain else ()))
                m = self.with_loaders(self.with_int_rule(m, origin))
                if self.recompiled is not None:
                    m = static_after_recompile(catalog, m, self.recompiled, self.inputs)
            self.by_key[k.key] = m
            results.append(m)
        return _dtype_rivals(results), unbound, used


def _check_given(inputs: Mapping[str, InputValue], sym: Mapping[str, int] | None,
                 only: CacheKey | None, positional: Sequence[TensorArg]) -> None:
    """Raises ShapeSpecError for ``sym`` without ``only``, or more than one way of
    giving the inputs."""
    if sym and only is None:
        raise ShapeSpecError(f"{param('sym')} binds placeholders of one key: give {param('key')} too",
                             param="sym", value=dict(sym))
    if sum(map(bool, (sym, inputs, positional))) > 1:
        raise ShapeSpecError(f"give one of {param('shapes')}, {param('arg')} or {param('sym')}",
                             param="shapes")


def match(
    catalog: Catalog,
    inputs: Mapping[str, InputValue],
    sym: Mapping[str, int] | None = None,
    only: CacheKey | None = None,
    function: str | None = None,
    positional: Sequence[TensorArg] = (),
    mode: DynamicMode = DynamicMode.UNKNOWN,
    duck_shape: bool | None = None,
    phase: Phase = Phase.FIRST,
) -> MatchReport:
    """Predict torch's lookup for every key the inputs bind (or just ``only``).

    ``function`` keeps only the keys compiled from the function of that name: the
    frame Dynamo compiled, a resume frame of it after a graph break, or for a
    module compiled whole its class (:func:`fxcache_core.functions.origin.keys_of_function`;
    where no entry records the compiled frame, a key traced through a function of
    that name, :meth:`~fxcache_core.decode.entries.Origin.traced_from`). Its keys that the
    inputs do not bind are listed in the report's ``unbound``; when no key was
    compiled from it, ``function_missing`` is set. ``positional``
    binds the tensor inputs of FX keys in graph order instead of by name:
    it applies to FX keys no AOTAutograd entry loads (or to ``only``).
    ``mode`` is the call's ``torch.compile(dynamic=...)``; with
    ``DynamicMode.UNKNOWN`` what depends on it is undecided. ``duck_shape`` is
    torch's ``torch.fx.experimental._config.use_duck_shape`` (None: not said, see
    :func:`~fxcache_core.lookup.fit.fit`).

    Automatic dynamic (:mod:`fxcache_core.lookup.phases`): under ``dynamic=None``
    every key is judged twice, for a fresh process's first call (dims a saved
    profile marks dynamic are symbols, the others static) and for the call after
    a recompile (the dims the key has symbolic are automatic dynamic's); the
    report's ``passes`` hold both, and ``results`` the one ``phase`` asks about.
    Without the mode, the functions that show automatic dynamic in the cache (a
    key of static shapes beside one with those dims symbolic, or a saved profile)
    are judged under both phases and under ``dynamic=True`` too, so the verdict
    can say where the mode changes the answer (``results`` stay those without the
    mode). A saved profile marks a first call's dims under ``dynamic=True`` too (they
    are then not duck-sized); ``dynamic=False`` turns automatic dynamic off.

    Raises:
        ShapeSpecError: ``sym`` given without ``only``, or naming a placeholder
            the key does not have.
        FxcacheError: ``phase`` asks about the calls after a recompile where there is
            one phase (``dynamic=True`` or ``False``, FX keys bound by position).
    """
    _check_given(inputs, sym, only, positional)
    if phase is Phase.AFTER_RECOMPILE and (mode in (DynamicMode.TRUE, DynamicMode.FALSE) or positional):
        raise FxcacheError(
            f"{param('phase')} asks about automatic dynamic's calls after a recompile: under "
            + (f"{param('dynamic')} {mode.value}" if not positional else param("positional"))
            + " there is one phase", param="phase")
    keys = [only] if only is not None else sorted(
        catalog.scan.keys, key=lambda k: (k.kind is not KeyKind.AOT_AUTOGRAD, k.key))
    if only is None:
        catalog.read_ahead(catalog.scan.entries())  # all of them, below: on every CPU
    mine, held = keys_of_function(catalog, function) if function is not None else (None, ())
    profiles = Profiles(catalog) if mode is not DynamicMode.FALSE and not positional else None
    pgo = profiles.unread if profiles is not None else None
    if mode is DynamicMode.FALSE:
        pgo = False  # dynamic=False: automatic dynamic, and the saved profile, are off

    def first_call(k: CacheKey, frame: _Frame) -> Auto:
        return profiles.for_frame(frame()) if profiles is not None and profiles.states else Auto()

    def run(m: DynamicMode, auto_of: Callable[[CacheKey, _Frame], Auto] | None) -> _Run:
        return _Run(catalog, inputs, sym, only, function, positional, m, duck_shape, auto_of=auto_of, pgo=pgo)

    results, unbound, used = run(mode, first_call).keys(keys, mine)
    report = MatchReport(
        inputs=tuple((src, str(v)) for src, v in inputs.items()), results=tuple(results),
        keys_considered=len(keys), unbound=tuple(unbound),
        unused=tuple(src for src in inputs if src not in used) if (results or unbound) else (),
        function_missing=function is not None and not mine, functions_held=held)
    if mode in (DynamicMode.NONE, DynamicMode.UNKNOWN) and not positional and results:
        report = with_phases(catalog, report, run, first_call, mode, phase, mine, profiles)
    _negative_ints_for_tensors(catalog, report.results, inputs)
    return report


def _dtype_rivals(results: list[KeyMatch]) -> list[KeyMatch]:
    """Keys of one function that take the call only under different assumed dtypes
    (``mask=[2,8]`` given without a dtype; one key has it int64, another bool): which
    one torch traces depends on the dtype, so each is undecided (``dtype-not-given``)."""
    by: dict[tuple[str | None, str], dict[str, list[int]]] = {}
    for n, m in enumerate(results):
        if m.fits:
            fn = function_name(m.origin, m.compiled).name
            for src, dtype in m.assumed:
                by.setdefault((fn, src), {}).setdefault(dtype, []).append(n)
    out = list(results)
    for (_, src), dtypes in by.items():
        if len(dtypes) < 2:
            continue
        shown = ", ".join(f"{dtype} in key {results[ns[0]].key.key[:12]}" for dtype, ns in dtypes.items())
        why = Reason(f"{src} is given without a dtype, and keys of this function take it as different "
                     f"dtypes ({shown}): which one torch traces depends on it "
                     f"(give {src}=[...]:dtype=NAME)", "dtype-not-given")
        for ns in dtypes.values():
            for n in ns:
                out[n] = replace(out[n], uncertain=out[n].uncertain + (why,))
    return out


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
        first = catalog.first_readable(m.key)
        for i in first[1].inputs if first is not None else ():
            if i.source in negs:
                (as_int if i.is_symint else as_tensor).add(i.source)
    for src, v in negs.items():
        if src in as_tensor and src not in as_int:
            name = user_source(src)
            raise ShapeSpecError(f"{param('shapes')} {name}={v}: {name} is a tensor in the keys that take it, "
                                 f"and a negative number is no shape; give its shape, e.g. {name}=[{-v}]",
                                 param="shapes", value=f"{name}={v}")
