"""Which entry torch would load for a call, over every key (or one function's keys).

:func:`match` makes the call's :class:`~fxcache_core.lookup.query.CallQuery` and
runs it over the keys, AOTAutograd keys first (:class:`_Run`): each key's own lookup
is :func:`~fxcache_core.lookup.key_lookup.match_key` (fit, placeholders, entries in
torch's order, mirroring ``GuardedCache.find_guarded_entry`` in
torch/_inductor/codecache.py). An AOTAutograd hit then loads its forward/backward
FX graphs by exact guards string (``FxGraphCacheLoadable.load`` in
torch/_functorch/_aot_autograd/aot_autograd_result.py); when that entry is gone,
the load raises ``FXGraphCacheMiss`` and torch compiles afresh. The run adds what
one key alone cannot tell: FX keys fit through the AOTAutograd keys that load them
and keys of one function under different assumed dtypes
(:mod:`fxcache_core.lookup.across_keys`), int arguments baked into a sibling key
(:mod:`fxcache_core.lookup.int_args`), a function also compiled with static shapes
and automatic dynamic's phases (:mod:`fxcache_core.lookup.phases`).

The result is a value (:class:`~fxcache_core.lookup.match_report.MatchReport`, in
:mod:`fxcache_core.lookup.match_report`); nothing here prints.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey
from fxcache_core.catalog.reader import Catalog
from fxcache_core.decode.entries import DecodedEntry, Origin
from fxcache_core.decode.symbols import SymbolInfo
from fxcache_core.errors import FxcacheError, param
from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.functions.origin import function_name, key_origin, keys_of_function
from fxcache_core.guards.user_terms import user_source
from fxcache_core.lookup.accounting import (
    KeyCall,
    Ledger,
    ParamAccount,
    RecordedConstants,
    account,
    settled_by_record,
)
from fxcache_core.lookup.across_keys import (
    check_negative_ints,
    check_unknown_names,
    dtype_rivals,
    fit_through_loaders,
    unchecked_rivals,
    unfit_through_loaders,
)
from fxcache_core.lookup.after_break import (
    BreakLines,
    accounted_after_break,
    read_after_break,
    sources_of,
)
from fxcache_core.lookup.aliased_inputs import aliased_call
from fxcache_core.lookup.ambient import ambient_accounts
from fxcache_core.lookup.assumptions import ambient_assumptions, parameters_assumed
from fxcache_core.lookup.binding import DYNAMO_CONFIG, DynamicMode, InputValue, TensorArg
from fxcache_core.lookup.fit_binding import Sibling
from fxcache_core.lookup.global_state import config_stated, state_accounts
from fxcache_core.lookup.grad_paths import grad_off_path, inference_forward_graph
from fxcache_core.lookup.inputs import takes
from fxcache_core.lookup.int_args import FunctionKeys, IntArgsCall, IntRule, int_argument_rule
from fxcache_core.lookup.key_lookup import KeyFrame, match_key
from fxcache_core.lookup.match_report import KeyMatch, MatchReport, UnboundKey
from fxcache_core.lookup.param_inputs import parameter_accounts, parameter_assumed
from fxcache_core.lookup.phases import (
    Auto,
    Phase,
    Profiles,
    evidence,
    static_after_recompile,
    static_dims_under_dynamic_true,
    with_phases,
)
from fxcache_core.lookup.query import CallQuery
from fxcache_core.lookup.resume_sides import with_side_unknown
from fxcache_core.lookup.source_lines import read_ahead_lines, source_as_traced
from fxcache_core.lookup.state_constants import state_judge
from fxcache_core.lookup.unattributed import marked, unattributed_keys
from fxcache_core.state.usage import recorded_constants

__all__ = ["CallQuery", "match", "match_key"]


def unnamed_key(catalog: Catalog, k: CacheKey, origin: Origin | CompiledFrom | None) -> UnboundKey | None:
    """``k`` as a key no call can bind by name: an FX key that no AOTAutograd entry loads
    (torch saves a training graph's AOTAutograd entry only once its backward has
    compiled, so a compile whose backward never ran leaves its forward FX key alone),
    with graph inputs and no source for any of them. None for any other key."""
    if k.kind is not KeyKind.FX_GRAPH or catalog.loaders_of(k.key) or catalog.sources_for(k):
        return None
    first = catalog.first_readable(k)
    if first is None or not first[1].inputs or any(i.source for i in first[1].inputs):
        return None
    return UnboundKey(k, origin, (), tuple(i.type for i in first[1].inputs))


def _param_names(frame: CompiledFrom) -> frozenset[str]:
    """Every named parameter of the compiled function, keyword-only ones too, where its
    source is read (:func:`~fxcache_core.functions.params.frame_reads`); else its positional ones."""
    from fxcache_core.functions.params import frame_reads
    from fxcache_core.reasons import Reason

    reads = frame_reads(frame)
    return frozenset(frame.params) | (frozenset() if isinstance(reads, Reason) else {p.name for p in reads.params})


def _base_name(src: str) -> str | None:
    """``n`` of ``L['n']``, ``L['cfg']['n']`` or ``L['cfg'].n``; None for any other source."""
    m = re.match(r"L\['(\w+)'\]", src)
    return m.group(1) if m is not None else None


@dataclass
class _Run:
    """One pass of :func:`match` over the keys: the call and what the pass builds on
    demand across keys. ``auto_of`` gives what a key's lookup traces as symbols beyond
    the mode's own (a phase of automatic dynamic, :mod:`fxcache_core.lookup.phases`);
    ``recompiled``: the pass is the call after a recompile (static keys are ruled out,
    :func:`~fxcache_core.lookup.phases.static_after_recompile`)."""

    catalog: Catalog
    query: CallQuery
    by_key: dict[str, KeyMatch] = field(default_factory=dict)
    int_keys: FunctionKeys | None = None
    aot_symbols: list[tuple[str, DecodedEntry, tuple[SymbolInfo, ...]]] | None = None
    auto_of: Callable[[CacheKey, KeyFrame], Auto] | None = None
    recompiled: dict[str, Auto] | None = None
    ledger: Ledger = None  # type: ignore[assignment]
    breaks: BreakLines = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.ledger is None:
            self.ledger = Ledger(self.catalog, self.query.recorded or {})
        if self.breaks is None:
            self.breaks = BreakLines(self.catalog)

    def skips(self, k: CacheKey, mine: set[str] | None) -> bool:
        """Whether key ``k`` is not looked at: not the function's, or (with
        ``positional``) not an FX key torch looks up by its own guards."""
        if mine is not None and k.key not in mine:
            return True
        return bool(self.query.positional) and self.query.only is None and (
            k.kind is not KeyKind.FX_GRAPH or bool(self.catalog.loaders_of(k.key)))

    def decided_by_loaders(self, k: CacheKey) -> KeyMatch | None:
        """An FX key whose loaders all do not fit, decided without reading its entries."""
        if k.kind is KeyKind.FX_GRAPH and self.query.only is None and not self.query.positional and self.query.function is None:
            return unfit_through_loaders(self.catalog, k, self.by_key)
        return None

    def unbound(self, k: CacheKey, frame: KeyFrame) -> UnboundKey | None:
        """``k`` (of the function asked for) as a key the inputs do not bind, with what it takes."""
        if self.query.function is None or self.query.positional or not (
                k.kind is KeyKind.AOT_AUTOGRAD or not self.catalog.loaders_of(k.key)):
            return None
        o = frame.known or key_origin(self.catalog, k)
        if o is not None and (t := takes(self.catalog, k, frame.known)):
            return UnboundKey(k, o, t)
        return unnamed_key(self.catalog, k, o)

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

    def with_call_rules(self, m: KeyMatch, origin: Origin | None, auto: Auto | None = None) -> KeyMatch:
        """What the call's int arguments say about an AOTAutograd key that fits
        (:func:`~fxcache_core.lookup.int_args.int_argument_rule`), then every parameter
        of the compiled frame accounted for (:func:`~fxcache_core.lookup.accounting.account`),
        for a key torch looks up by its own guards (an AOTAutograd key, an FX key none loads)."""
        k, catalog, q = m.key, self.catalog, self.query
        counted = k.kind is KeyKind.AOT_AUTOGRAD or not catalog.loaders_of(k.key)
        if not (m.fits and counted) or q.positional:
            return m
        first = catalog.first_readable(k)
        if first is None:
            return m
        entry = first[1]
        after = read_after_break(catalog, k, m.compiled, self.breaks, q.inputs)
        settled = settled_by_record(self.ledger, k, m.compiled, q.inputs) | sources_of(after, m.compiled, q.inputs)
        rule = IntRule()
        call: IntArgsCall | None = None
        if k.kind is KeyKind.AOT_AUTOGRAD and origin is not None:
            if self.int_keys is None:
                self.int_keys = FunctionKeys(catalog)
            call = IntArgsCall(k, entry, origin, q.inputs, q.mode, q.pgo_state(catalog),
                               of_function=q.function is not None, frame=m.compiled, settled=settled)
            rule = int_argument_rule(self.int_keys, call)
        alias = aliased_call(entry, m.compiled, q.inputs)  # one tensor passed for two parameters
        rule = replace(rule, problems=rule.problems + alias.problems, notes=rule.notes + alias.notes)
        if rule.problems:  # the arguments that rule the key out are accounted (used: no "no key takes" warning)
            ruling = tuple(ParamAccount(user_source(src), str(q.inputs.get(src)), True, "rules-out", why, source=src)
                           for src, kind, why in rule.about if kind == "problem")
            return KeyMatch(key=k, fits=False, reasons=rule.problems, symbols=m.symbols, origin=origin,
                            bound=m.bound, compiled=m.compiled, auto=m.auto, profile=m.profile, params=ruling)

        def int_default(src: str, v: int | float) -> IntRule:
            if call is None or self.int_keys is None:
                return IntRule()
            # The call's other inputs ride along (settled: judged once already), so that the
            # rule reads which names are tensors and what the other scalars are.
            return int_argument_rule(self.int_keys, replace(call, inputs={**call.inputs, src: v},
                                                            settled=frozenset(call.inputs) - {src}))

        taken = frozenset(s for s in (*entry.arg_sources, *(i.source for i in entry.inputs),
                                      *catalog.sources_for(k).values(), *(sym.source for sym in m.symbols),
                                      *(src for _, src in m.bound)) if s)
        acc = accounted_after_break(
            account(self.ledger, KeyCall(k, entry, m.compiled, q.inputs, taken, q.mode, rule, int_default,
                                         auto.scalars if auto is not None else frozenset())), after)
        acc = alias.applied(acc)
        done = frozenset(p.source for p in acc.params if p.source is not None)
        records = self.ledger.recorded.get(k.key, ())
        acc = replace(acc, params=acc.params + tuple(
            ambient_accounts(k, entry, q.inputs, dict(m.bound), q.grad_enabled, done,
                             state_judge(catalog, k, m.compiled, q.inputs, q.mode), lambda: grad_off_path(
                                 inference_forward_graph(k) or "", entry.requires_grad, m.compiled, taken), records)
            + state_accounts(k, q.state, records) + parameter_accounts(k, entry, q.inputs, dict(m.bound))))
        m = replace(m, params=acc.params, params_unchecked=acc.unchecked, ambient=ambient_assumptions(
            k.kind, entry, m.compiled, q.inputs, dict(m.bound), q.grad_enabled, q.state)
            + parameters_assumed(parameter_assumed(k, entry, q.inputs, dict(m.bound))))
        if acc.problems:
            return KeyMatch(key=k, fits=False, reasons=acc.problems, symbols=m.symbols, origin=origin,
                            bound=m.bound, compiled=m.compiled, auto=m.auto, profile=m.profile,
                            params=acc.params)
        notes = rule.notes + tuple(n for n in acc.notes if n not in rule.notes)
        return replace(m, uncertain=m.uncertain + notes) if notes else m

    def with_loaders(self, m: KeyMatch) -> KeyMatch:
        """An FX key: the AOTAutograd keys that load it, and its fit through them."""
        if m.key.kind is not KeyKind.FX_GRAPH:
            return m
        m = replace(m, loaded_by=tuple(sorted({e.key for e in self.catalog.loaders_of(m.key.key)})))
        return fit_through_loaders(m, self.by_key) if m.fits else m

    def judged(self, k: CacheKey, unbound: list[UnboundKey], used: set[str]) -> KeyMatch | None:
        """Key ``k`` judged: its fit, its call rules and loaders; None (and ``k`` added to
        ``unbound`` where it is the function's) when the call names none of its inputs."""
        catalog = self.catalog
        frame = KeyFrame(catalog, k)
        if self.query.function is not None:
            frame()
        auto = self.auto_of(k, frame) if self.auto_of is not None else None
        m = match_key(catalog, k, self.query, frame=frame, auto=auto, siblings=self.siblings)
        if m is None:
            if (u := self.unbound(k, frame)) is not None:
                unbound.append(u)
            return None
        used.update(src for src, _ in m.bound)
        origin = key_origin(catalog, k)
        m = replace(m, origin=origin, compiled=frame())
        if auto:
            m = replace(m, auto=auto.shown(), profile=auto.profile,
                        uncertain=m.uncertain + ((auto.uncertain,) if auto.uncertain else ()))
        m = self.with_loaders(self.with_call_rules(m, origin, auto))
        used.update(p.source for p in m.params if p.source is not None)
        if not m.fits and m.compiled is not None:  # ruled out before its parameters were read: none unread
            names = _param_names(m.compiled)
            used.update(src for src in self.query.inputs if _base_name(src) in names)
        if self.recompiled is not None:
            m = static_after_recompile(catalog, m, self.recompiled, self.query.inputs)
        return with_side_unknown(m)  # a frame resumed after a jump on the data: which side is the data's

    def keys(self, keys: Sequence[CacheKey], mine: set[str] | None
             ) -> tuple[list[KeyMatch], list[UnboundKey], set[str]]:
        """Every key of ``keys`` judged in order (AOTAutograd keys first): the results,
        the keys of the function the inputs do not bind, and the inputs used."""
        results: list[KeyMatch] = []
        unbound: list[UnboundKey] = []
        used: set[str] = set()
        catalog = self.catalog
        for i, k in enumerate(keys):
            if i % _AHEAD == 0:  # the next keys' recorded lines, in one batch of workers
                read_ahead_lines(catalog, (a for a in keys[i:i + _AHEAD] if not self.skips(a, mine)))
            if self.skips(k, mine):
                continue
            m = self.decided_by_loaders(k)
            if m is None:
                with source_as_traced(catalog, k):  # a file edited since: read as not there
                    m = self.judged(k, unbound, used)
                if m is None:
                    continue
            self.by_key[k.key] = m
            results.append(m)
        return unchecked_rivals(dtype_rivals(results)), unbound, used


_AHEAD = 256
"""Keys whose recorded lines :meth:`_Run.keys` reads at once."""


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
    recorded: RecordedConstants | None = None,
) -> MatchReport:
    """Predict torch's lookup for every key the inputs bind (or just ``only``).

    The arguments are the fields of one :class:`~fxcache_core.lookup.query.CallQuery`
    (see there); :func:`match_query` takes the query itself.

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

    Every parameter the compiled frame's code reads is accounted for before a key's
    lookup is decided (:mod:`fxcache_core.lookup.accounting`: each result's
    ``params``); ``recorded`` is the Python values each key was traced with, from a
    run's trace (:data:`~fxcache_core.lookup.accounting.RecordedConstants`), read with
    those explain kept in the usage store (:func:`~fxcache_core.state.usage.recorded_constants`).

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
    return match_query(catalog, CallQuery(inputs, sym, positional, mode, duck_shape, only=only,
                                          function=function, recorded=recorded), phase)


def match_query(catalog: Catalog, query: CallQuery, phase: Phase = Phase.FIRST) -> MatchReport:
    """:func:`match` for a call already made a :class:`~fxcache_core.lookup.query.CallQuery`
    (its ``pgo`` is decided here, from the saved profiles the cache dir holds).

    Raises:
        ShapeSpecError: ``query.sym`` names a placeholder the key does not have.
        FxcacheError: ``phase`` asks about the calls after a recompile where there is
            one phase (``dynamic=True`` or ``False``, FX keys bound by position).
    """
    query = query.with_grad_mode()
    mode, positional, only, function = query.mode, query.positional, query.only, query.function
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
    no_origin, unattributed = unattributed_keys(catalog, keys) if function is not None and not mine else (set(), ())
    if unattributed:  # judged as the function's keys; the verdicts say what holds either way
        mine = no_origin
    profiles = Profiles(catalog) if mode is not DynamicMode.FALSE and not positional else None
    # dynamic=False: automatic dynamic, and the saved profile, are off
    query = replace(query, pgo=False if mode is DynamicMode.FALSE else
                    profiles.unread if profiles is not None else None)

    def first_call(k: CacheKey, frame: KeyFrame) -> Auto:
        return profiles.for_frame(frame()) if profiles is not None and profiles.states else Auto()

    recorded = {k: tuple(v) for k, v in recorded_constants(catalog.scan.root).items()}
    for k, more in (query.recorded or {}).items():
        recorded[k] = (*recorded.get(k, ()), *(c for c in more if c not in recorded.get(k, ())))
    ledger, breaks = Ledger(catalog, recorded), BreakLines(catalog)

    def run(m: DynamicMode, auto_of: Callable[[CacheKey, KeyFrame], Auto] | None) -> _Run:
        return _Run(catalog, replace(query, mode=m), auto_of=auto_of, ledger=ledger, breaks=breaks)

    results, unbound, used = run(mode, first_call).keys(keys, mine)
    if any(m.fits for m in results):  # a key takes the call by name: torch looks it up first
        unbound = [u for u in unbound if not u.unnamed]
    elif function is None and not positional and only is None and not unbound:
        # Nothing binds the call by name: FX keys whose inputs nothing names may still take it.
        unbound = [u for k in keys if (u := unnamed_key(catalog, k, key_origin(catalog, k))) is not None]
    inputs = query.inputs
    report = MatchReport(
        inputs=tuple((src, str(v)) for src, v in inputs.items()), results=tuple(results),
        keys_considered=len(keys), unbound=tuple(unbound),
        unused=tuple(src for src in inputs if src not in used) if (results or unbound) else (),
        function_missing=function is not None and not mine, functions_held=held,
        unattributed=unattributed,
        dynamo_config=tuple((name, str(v)) for name, v in query.state.items() if name.startswith(DYNAMO_CONFIG)))
    if mode in (DynamicMode.NONE, DynamicMode.UNKNOWN) and not positional and results:
        report = with_phases(catalog, report, run, first_call, mode, phase, mine, profiles, inputs)
    elif mode is DynamicMode.TRUE and not positional and results:
        shows = evidence(catalog, report.results)
        report = replace(report, results=tuple(
            static_dims_under_dynamic_true(catalog, m, inputs)
            if function_name(m.origin, m.compiled).name in shows else m for m in report.results))
    report = config_stated(report)
    check_negative_ints(catalog, report.results, inputs)
    check_unknown_names(report.results, inputs)
    return marked(report, function) if unattributed and function is not None else report
