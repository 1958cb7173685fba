"""What a lookup prediction found, as values: per key (:class:`KeyMatch`) and per call
(:class:`MatchReport`).

:mod:`fxcache_core.lookup.match` makes them; :mod:`fxcache_core.lookup.prediction` folds
them per function. Each result carries its derived facts (:attr:`KeyMatch.status`
states torch's rule for a miss, a hit and an aborted lookup) and its JSON form;
reasons carry stable codes (:class:`~fxcache_core.reasons.Reason`), which the JSON
adds beside the texts. Nothing here decodes an entry or prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey, Entry
from fxcache_core.decode.entries import Origin
from fxcache_core.decode.symbols import SymbolInfo
from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.functions.origin import function_name
from fxcache_core.lookup.accounting import ParamAccount
from fxcache_core.lookup.assumptions import Assumption, dtype_assumptions, param_assumptions
from fxcache_core.lookup.binding import DynamicMode
from fxcache_core.lookup.judge import EntryVerdict, FxLoad
from fxcache_core.reasons import Reason, code_of


class Phase(Enum):
    """Which call of a function under automatic dynamic (``dynamic=None``) is asked about.

    * ``FIRST``: the first call in a fresh process (every unmarked dim static,
      unless a saved profile marks it dynamic);
    * ``AFTER_RECOMPILE``: the call after a size changed, which Dynamo recompiles
      with the changed dims symbolic (automatic dynamic).
    """

    FIRST = "first"
    AFTER_RECOMPILE = "after-recompile"

    @property
    def heading(self) -> str:
        """How a verdict line names the phase."""
        return {"first": "first call in a fresh process",
                "after-recompile": "after a recompile (automatic dynamic)"}[self.value]


@dataclass(frozen=True, slots=True)
class KeyMatch:
    """The lookup of one key for the given inputs.

    Attributes:
        key: the key.
        fits: False when the inputs cannot be this key's (rank, a static
            dim, inconsistent shared symbols, 0/1 specialization); then
            ``entries`` is empty and ``reasons`` says why.
        reasons: why the key does not fit, or notes (inputs not given), each a
            :class:`~fxcache_core.reasons.Reason` with its code.
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
            entry passed (see :class:`~fxcache_core.lookup.judge.EntryVerdict`).
        uncertain: what fxcache cannot know from the cache that would change the
            outcome (e.g. whether a static dim was specialized under dynamic=True);
            the status is then ``undecided``, ``hit`` says what the guards alone give.
        bound: each input the user gave that this key takes, as (the user's source,
            the key's source): ``(L['input_ids'], L['kwargs']['input_ids'])`` for a
            module compiled whole, equal sources for a plain parameter.
        compiled: the function the key was compiled from
            (:func:`fxcache_core.functions.frames.compiled_from`), where the cache records it.
        assumed: (input, dtype) for each tensor given without a dtype: the fit took the
            key's (:attr:`assumptions` says so in words). Not a reason for ``undecided``.
        auto: what this lookup traces as symbols by automatic dynamic or a saved
            profile (:mod:`fxcache_core.lookup.phases`), in the user's terms (``x.size(1)``).
        profile: the saved profile (its file) the first call's ``auto`` comes from, if any.
        raises: torch raises for this call (a marked range, :mod:`fxcache_core.lookup.mark_ranges`):
            before any lookup (``mark-range-outside``: the status is ``error``), or after
            loading ``hit`` (``mark-range-raises``; ``mark-range-may-raise`` where fxcache
            cannot tell): the status stays ``hit``, the function's verdict says both.
        params: each parameter of the compiled frame, how it is accounted for
            (:class:`~fxcache_core.lookup.accounting.ParamAccount`); () where not checked.
        params_unchecked: why the parameters were not checked (the source cannot be
            read here, the frame is not recorded); None when they were, or the key was
            not looked up by its own guards.
        ambient: the state the call leaves out that the key is looked up under (the grad
            mode, each input's ``requires_grad``, a module's state, globals, global settings),
            taken from the key's entry or as when it was compiled
            (:func:`~fxcache_core.lookup.assumptions.ambient_assumptions`); () where the key
            was not looked up by its own guards.
    """

    key: CacheKey
    fits: bool
    reasons: tuple[Reason, ...] = ()
    symbols: tuple[SymbolInfo, ...] = ()
    values: tuple[tuple[str, int | None], ...] = ()
    entries: tuple[EntryVerdict, ...] = ()
    hit: Entry | None = None
    decided: bool = True
    shadowed: tuple[Entry, ...] = ()
    loads: tuple[FxLoad, ...] = field(default=())
    loaded_by: tuple[str, ...] = ()
    origin: Origin | None = None
    aborted: Reason | None = None
    uncertain: tuple[Reason, ...] = ()
    bound: tuple[tuple[str, str], ...] = ()
    compiled: CompiledFrom | None = None
    assumed: tuple[tuple[str, str], ...] = ()
    auto: tuple[str, ...] = ()
    profile: str | None = None
    raises: Reason | None = None
    params: tuple[ParamAccount, ...] = ()
    params_unchecked: Reason | None = None
    ambient: tuple[Assumption, ...] = ()

    def __post_init__(self) -> None:
        # Several rules may find the same thing not known (a float read twice, a
        # reason carried over from the keys beside this one): say each once.
        if len(set(self.uncertain)) != len(self.uncertain):
            object.__setattr__(self, "uncertain", tuple(dict.fromkeys(self.uncertain)))

    @property
    def assumptions(self) -> tuple[Reason, ...]:
        """:attr:`assumed` in words, one line: ``assumed the dtypes of this key:
        L['mask'] int64, L['x'] float32 ...``; () when none was assumed."""
        if not self.assumed:
            return ()
        return (Reason("assumed the dtypes of this key: " + ", ".join(f"{src} {dtype}" for src, dtype in self.assumed)
                       + " (another dtype: NAME=[...]:dtype=NAME)", "dtype-assumed"),)

    @property
    def assumption_records(self) -> tuple[Assumption, ...]:
        """Everything this lookup takes for granted that the call does not say, one
        :class:`~fxcache_core.lookup.assumptions.Assumption` each: the dtypes, the parameters
        accounting assumed, then :attr:`ambient`."""
        return (*dtype_assumptions(self.assumed), *param_assumptions(self.params), *self.ambient)

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
        if code_of(self.raises) == "mark-range-outside":
            return "error"
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
        ``function``, ``compiled_from``, ``bound``, ``hit``, ``fits``, ``reasons`` and
        ``reason_codes``, ``uncertain`` and ``uncertain_codes``, ``aborted`` and
        ``aborted_code``, ``values``, ``symbols``, ``shadowed``, ``loads``,
        ``loaded_by``, ``entries``, ``assumed``: input -> the dtype assumed,
        ``auto_dynamic``, ``profile``, ``raises``, ``raises_code``, ``params``: each parameter accounted for
        (:meth:`~fxcache_core.lookup.accounting.ParamAccount.to_json`), ``params_unchecked``
        and ``params_unchecked_code``, ``assumptions``: :attr:`assumption_records`, each
        ``name``, ``value``, ``from``, ``code``)."""
        names = self.user_names
        return {
            "kind": self.key.kind.value, "key": self.key.key, "status": self.status,
            "origin": str(self.origin) if self.origin else None,
            "function": function_name(self.origin, self.compiled).name,
            "compiled_from": str(self.compiled) if self.compiled else None,
            "bound": dict(self.bound),
            "hit": self.hit.name if self.hit else None,
            "fits": self.fits, "reasons": list(self.reasons),
            "reason_codes": [code_of(r) for r in self.reasons],
            "uncertain": list(self.uncertain), "uncertain_codes": [code_of(r) for r in self.uncertain],
            "aborted": self.aborted, "aborted_code": code_of(self.aborted),
            "values": dict(self.values),
            "symbols": {s.placeholder: s.to_json() for s in self.symbols},
            "user_names": names,
            "shadowed": [e.name for e in self.shadowed],
            "loads": [ld.to_json() for ld in self.loads],
            "loaded_by": list(self.loaded_by),
            "entries": [v.to_json(names) for v in self.entries],
            "assumed": dict(self.assumed),
            "auto_dynamic": list(self.auto), "profile": self.profile,
            "raises": self.raises, "raises_code": code_of(self.raises),
            "params": [p.to_json() for p in self.params],
            "params_unchecked": self.params_unchecked, "params_unchecked_code": code_of(self.params_unchecked),
            "assumptions": [a.to_json() for a in self.assumption_records],
        }


@dataclass(frozen=True, slots=True)
class PassResults:
    """The same call's keys judged once more, for one phase of automatic dynamic
    (:class:`~fxcache_core.lookup.phases.Phase`) under one mode.

    Attributes:
        phase: the first call in a fresh process, or the call after a recompile.
        mode: ``none`` (automatic dynamic), or ``true``: what ``dynamic=True``
            would do, asked when the mode was not given.
        results: one :class:`KeyMatch` per key, as :attr:`MatchReport.results`.
    """

    phase: Phase
    mode: DynamicMode
    results: tuple[KeyMatch, ...]

    def to_json(self) -> dict[str, object]:
        return {"phase": self.phase.value, "mode": self.mode.value,
                "results": [m.to_json() for m in self.results]}


@dataclass(frozen=True, slots=True)
class UnboundKey:
    """A key of the function asked for that the inputs name none of the inputs of.

    Attributes:
        key: the key (e.g. a graph break's resume frame, keyed on its own locals).
        origin: the frame it was compiled from, else the origin of its graph.
        takes: the user inputs it takes (``L['t']``), in the user's terms.
        unnamed: for an FX key no AOTAutograd entry loads, whose inputs nothing in the
            cache names (``takes`` is then empty): its graph inputs' types in graph
            order (``f32[8, 8]``), as ``--arg`` binds them; () otherwise.
    """

    key: CacheKey
    origin: Origin | CompiledFrom | None
    takes: tuple[str, ...]
    unnamed: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {"kind": self.key.kind.value, "key": self.key.key,
                "origin": str(self.origin) if self.origin is not None else None,
                "takes": list(self.takes), "unnamed": list(self.unnamed)}


@dataclass(frozen=True, slots=True)
class MatchReport:
    """Everything ``match`` found: one :class:`KeyMatch` per key the inputs bind.

    AOTAutograd keys come first (torch looks them up first), then FX keys.
    ``unbound`` (only when a function was asked for): keys traced from it that
    the inputs name none of the inputs of (:class:`UnboundKey`).
    ``unused``: inputs given that no key considered takes (a misspelt or
    extra name). ``function_missing``: no key was compiled from the function asked
    for; ``functions_held`` lists those the cache holds keys of when no key records the
    function asked for. ``unattributed``: no key records it, and these keys record no
    function at all: ``results`` are theirs (:mod:`fxcache_core.lookup.unattributed`).
    ``phase``: under automatic dynamic (``dynamic=None``, or not given), the phase
    ``results`` and the verdicts' status are of (see :mod:`fxcache_core.lookup.phases`);
    None when the mode has one phase. ``passes``: the keys judged per phase (and,
    without the mode, under ``dynamic=True``), for the functions automatic dynamic
    concerns; one of them may be ``results`` itself. ``dynamo_config``: the Dynamo config
    items the call states (``("torch._dynamo.config.assume_static_by_default", "False")``),
    which leave every decided verdict undecided (:mod:`fxcache_core.lookup.prediction`).
    """

    inputs: tuple[tuple[str, str], ...]
    results: tuple[KeyMatch, ...]
    keys_considered: int
    unbound: tuple[UnboundKey, ...] = ()
    unused: tuple[str, ...] = ()
    function_missing: bool = False
    functions_held: tuple[str, ...] = ()
    unattributed: tuple[str, ...] = ()
    phase: Phase | None = None
    passes: tuple[PassResults, ...] = ()
    dynamo_config: tuple[tuple[str, str], ...] = ()

    def folded(self, results: tuple[KeyMatch, ...] | None = None) -> frozenset[str]:
        """FX keys only loaded by AOTAutograd keys that hit: after such a hit torch
        loads them by exact guards string (each hit's ``loads``), never by their
        own guards, so their own verdicts add nothing for this call. Of ``results``
        (one of :attr:`passes`) when given."""
        results = self.results if results is None else results
        hit_aot = {m.key.key for m in results
                   if m.status == "hit" and m.key.kind is KeyKind.AOT_AUTOGRAD}
        return frozenset(m.key.key for m in results
                         if m.loaded_by and set(m.loaded_by) <= hit_aot)

    def to_json(self) -> dict[str, object]:
        """``inputs``, ``results`` (:meth:`KeyMatch.to_json` each), ``unbound``
        (``kind``, ``key``, ``origin``, ``takes`` each), ``unused``,
        ``function_missing`` and ``functions_held``, ``unattributed``, ``phase`` and ``passes`` (each
        :meth:`PassResults.to_json`, but for the one that is ``results``)."""
        return {
            "inputs": dict(self.inputs),
            "results": [m.to_json() for m in self.results],
            "unbound": [u.to_json() for u in self.unbound],
            "unused": list(self.unused),
            "function_missing": self.function_missing,
            "functions_held": list(self.functions_held),
            "unattributed": list(self.unattributed),
            "phase": self.phase.value if self.phase else None,
            "passes": [p.to_json() for p in self.passes if p.results is not self.results],
        }
