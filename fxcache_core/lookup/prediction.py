"""The answer first: for each function a call reaches, does torch hit the cache?

:func:`~fxcache_core.lookup.match.match` predicts torch's lookup key by key
(:class:`~fxcache_core.lookup.match_report.KeyMatch`). A user asks about a call of a
function, so :func:`verdicts` folds those per function
(:attr:`~fxcache_core.functions.origin.FunctionName.name` of each key's origin) into one
:class:`FunctionVerdict`:

* ``hit``: a key the call takes has an entry whose guards hold (for an
  AOTAutograd key, with the FX entries it loads present);
* ``miss``: the call takes a key, but none of its entries' guards hold (or
  the lookup stops at a raising guard, or an AOTAutograd hit's FX entry is
  gone): torch compiles a new entry;
* ``new-graph``: no key of the function can take the call (a static size, a
  rank, a stride, 0/1 specialization...): Dynamo traces another graph, and
  torch compiles it under a new key;
* ``error``: an FX lookup stops at a raising guard, and the compile fails; or torch
  raises for a marked range (:mod:`fxcache_core.lookup.mark_ranges`): before any lookup,
  or after a hit (the verdict then names the entry it loads);
* ``undecided``: the cache cannot tell (how the call is compiled, an input not
  given, a frame after a graph break whose locals were not named, a module's forward
  whose source files register forward hooks: :mod:`fxcache_core.lookup.module_hooks`).

Which keys count: AOTAutograd keys, which torch looks up first, and FX keys no
AOTAutograd entry loads; an FX key an AOTAutograd entry loads is looked up
through it (:attr:`~fxcache_core.lookup.match_report.KeyMatch.loads`). Among the keys of one
function that take the call (the graphs of a branch, say), one that hits is
the graph Dynamo traces: its entry's guards hold the branch's condition. A
key whose binding the cache cannot decide (``KeyMatch.uncertain``: duck sizing,
``dynamic=None`` or ``True``, a saved profile) is not ruled out by another key's hit, as it differs in its
graph inputs: the function is then undecided, and says whether either way an
entry's guards hold.

Under automatic dynamic (``dynamic=None``, :mod:`fxcache_core.lookup.phases`) the
report judges a function's keys once per phase, and its verdict says both
(:attr:`FunctionVerdict.phases`): the first call in a fresh process (static
sizes, or the dims a saved profile marks; a call no static key holds is
``static ... was never compiled``), and the call after a recompile. Its status is
that of the phase asked (the first call unless ``--after-recompile``). Without
the mode, a function that shows automatic dynamic is judged under
``dynamic=True`` too, and a phase is decided only where both modes agree.

:attr:`CallVerdict.exit_code` is what ``fxcache match`` exits with, as
``grep`` and ``diff`` do: 0 every function counted hits, 1 some function
misses (or needs a new graph, or fails to compile), 3 none misses but some is
undecided. A function counts when ``--fn`` names it; without ``--fn``, a
function none of whose keys can take the call is reported (``others``) but
not counted, unless no function at all can take it: a parameter called ``x``
in another function says nothing about this call.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey
from fxcache_core.decode.entries import Origin
from fxcache_core.decode.pgo import job_of
from fxcache_core.decode.workers import UNFINISHED_CODES
from fxcache_core.errors import param
from fxcache_core.functions.frames import label as readable_name
from fxcache_core.functions.origin import function_name
from fxcache_core.guards.user_terms import user_source, user_text
from fxcache_core.lookup.accounting import ARGUMENT_CODES, ParamAccount
from fxcache_core.lookup.assumptions import Assumption, said
from fxcache_core.lookup.binding import DynamicMode
from fxcache_core.lookup.match_report import KeyMatch, MatchReport, PassResults, Phase, UnboundKey
from fxcache_core.lookup.module_hooks import hooks_registered
from fxcache_core.lookup.unattributed import attribute_verdicts
from fxcache_core.reasons import Reason, code_of

Status = Literal["hit", "miss", "new-graph", "error", "undecided"]

EXIT_HIT, EXIT_MISS, EXIT_UNDECIDED = 0, 1, 3

# Reasons about a Python scalar's value, not the sizes: a first call's new graph says them
# as they are (a float's, or an int's a key's constant shows differs); static sizes, and
# ints no constant shows, are "static ... was never compiled".
_SCALAR_CODES = ("float-", "scalar-type-", "baked-value-")

_HEAD = {"hit": "HIT", "miss": "MISS", "new-graph": "NEW GRAPH", "error": "ERROR", "undecided": "UNDECIDED"}


@dataclass(frozen=True, slots=True)
class FunctionVerdict:
    """What torch does for the call in one function (see the module docstring).

    Attributes:
        function: the function (:attr:`~fxcache_core.functions.origin.FunctionName.name`), None
            for keys whose graph records no origin.
        origin: where it was traced from (file and line), where known.
        status: ``hit``, ``miss``, ``new-graph``, ``error`` or ``undecided``.
        why: the reason, in the user's terms (``x.size(0)=10 fails x.size(0) >= 16``),
            or for a hit what loads: a :class:`~fxcache_core.reasons.Reason` whose code
            is that of the key's reason it comes from (``clause-failed``,
            ``placeholder-not-given``, ``static-dim-differs``...), ``hit`` for a hit.
        key: the key that decides (the hit, the first miss), None for ``new-graph``.
        entry: the entry torch loads, for ``hit``.
        keys: every key of the function the call was matched against.
        phase: under automatic dynamic, the phase this verdict is of
            (:class:`~fxcache_core.lookup.phases.Phase`); None when the mode has one.
        phases: under automatic dynamic, the verdict of each phase, the first call
            in a fresh process first (the verdict itself is the one of ``phase``).
        heading: the phase as a line names it (``first call in a fresh process``,
            with the saved profile that makes it dynamic), None without phases.
    """

    function: str | None
    origin: Origin | None
    status: Status
    why: Reason
    key: CacheKey | None = None
    entry: str | None = None
    keys: tuple[KeyMatch, ...] = ()
    phase: Phase | None = None
    phases: tuple[FunctionVerdict, ...] = ()
    heading: str | None = None

    @property
    def label(self) -> str:
        """The function as a user reads it (a resume frame named after its function)."""
        return readable_name(self.function) if self.function else "(function unknown)"

    @property
    def line(self) -> Reason:
        """The verdict as one line: ``HIT entry 7ybz... (aot acka7ix5pil6)``,
        ``MISS: torch will compile a new entry: ...``, ``NEW GRAPH: ...`` (the code: :attr:`why`'s)."""
        if self.status == "hit":
            assert self.key is not None and self.entry is not None
            return Reason(f"HIT entry {self.entry[:16]} ({self.key.kind.short} {self.key.key[:12]}){self.why}",
                          code_of(self.why) or "unspecified")
        return Reason(f"{_HEAD[self.status]}: {self.why}", code_of(self.why) or "unspecified")

    @property
    def assumed(self) -> tuple[Reason, ...]:
        """The dtypes the deciding key's fit assumed (tensors given without one), in the
        user's terms: ``assumed attention_mask is int64, as in the key``."""
        m = self._deciding()
        return tuple(_in_user_terms(r) for r in m.assumptions) if m is not None else ()

    def _deciding(self) -> KeyMatch | None:
        return next((m for m in self.keys if self.key is not None and m.key.key == self.key.key), None)

    @property
    def params(self) -> tuple[ParamAccount, ...]:
        """How the deciding key's lookup accounts for each parameter of the compiled
        function (:mod:`fxcache_core.lookup.accounting`); () without a deciding key."""
        m = self._deciding()
        return m.params if m is not None else ()

    @property
    def params_unchecked(self) -> Reason | None:
        """For a decided HIT, MISS or ERROR: why the parameters it rests on were not
        checked (the function's source cannot be read here); None when they were."""
        m = self._deciding()
        return m.params_unchecked if m is not None and self.status in ("hit", "miss", "error") else None

    @property
    def assumed_params(self) -> Reason | None:
        """For a decided verdict, the parameters the call leaves out (or gives their
        default) that nothing says the deciding key was traced with, taken to have been
        so then too (:mod:`fxcache_core.lookup.accounting`: ``default-assumed``,
        ``module-default``), as one line; None where there are none."""
        if self.status not in ("hit", "miss", "error"):
            return None
        shown = [f"{p.name}={p.value}" if p.value is not None else p.name
                 for p in self.params if p.status == "assumed"]
        if not shown:
            return None
        return Reason("assumed as when the key was compiled (the cache does not record them): "
                      + ", ".join(shown), "params-assumed")

    @property
    def assumptions(self) -> tuple[Assumption, ...]:
        """For a decided verdict (HIT, MISS, ERROR), everything the deciding key's lookup
        takes for granted that the call does not say
        (:attr:`~fxcache_core.lookup.match_report.KeyMatch.assumption_records`); () otherwise."""
        m = self._deciding()
        return m.assumption_records if m is not None and self.status in ("hit", "miss", "error") else ()

    @property
    def assumed_state(self) -> tuple[Reason, ...]:
        """:attr:`assumptions` of the state the call runs under, in words (the grad mode
        and ``requires_grad`` the key's entry shows; what is taken as when the key was
        compiled): :func:`~fxcache_core.lookup.assumptions.said`."""
        return said(self.assumptions)

    @property
    def rests_on(self) -> Reason | None:
        """For a decided verdict, the Python arguments it rests on that evidence beyond
        the key's inputs accounts for (a run's guards, the side of a test the graph
        took, None for a tensor parameter), as one line; None where there are none."""
        if self.status not in ("hit", "miss", "error"):
            return None
        shown = [f"{p.name}={p.value}: {p.brief}" for p in self.params if p.status == "accounted" and p.brief]
        return Reason("rests on " + "; ".join(shown), "params-evidence") if shown else None

    def to_json(self) -> dict[str, object]:
        """``function``, ``origin``, ``status``, ``line``, ``why`` and ``why_code``, ``key``,
        ``entry``, ``keys`` and ``assumed`` (:attr:`assumed`'s texts); ``assumptions`` (each
        thing a decided verdict takes for granted that the call does not say: ``name``,
        ``value``, ``from``, ``code``, :attr:`assumptions`); ``params`` (each
        parameter of the compiled function and how the deciding key accounts for it:
        ``name``, ``value``, ``given``, ``status``, ``how``, ``detail``), ``params_unchecked``
        and ``params_unchecked_code``; ``phase`` and ``phases`` (phase -> ``heading``,
        ``status``, ``line``, ``why``, ``why_code``, ``key``, ``entry``, ``params``,
        ``params_unchecked``, ``assumptions``), empty without phases."""
        return {"function": self.function, "origin": str(self.origin) if self.origin else None,
                "status": self.status, "line": self.line, "why": self.why, "why_code": code_of(self.why),
                "key": self.key.key if self.key else None, "entry": self.entry,
                "keys": [m.key.key for m in self.keys], "assumed": list(self.assumed),
                "assumptions": [a.to_json() for a in self.assumptions],
                "params": [p.to_json() for p in self.params], "params_unchecked": self.params_unchecked,
                "params_unchecked_code": code_of(self.params_unchecked),
                "phase": self.phase.value if self.phase else None,
                "phases": {p.phase.value: p._phase_json() for p in self.phases if p.phase is not None}}

    def _phase_json(self) -> dict[str, object]:
        return {"heading": self.heading, "status": self.status, "line": self.line, "why": self.why,
                "why_code": code_of(self.why), "key": self.key.key if self.key else None, "entry": self.entry,
                "params": [p.to_json() for p in self.params], "params_unchecked": self.params_unchecked,
                "assumptions": [a.to_json() for a in self.assumptions]}


@dataclass(frozen=True, slots=True)
class CallVerdict:
    """The verdict per function for one call.

    Attributes:
        functions: the functions that count towards :attr:`exit_code`.
        others: (without ``--fn``) functions none of whose keys take the call.
    """

    functions: tuple[FunctionVerdict, ...]
    others: tuple[FunctionVerdict, ...] = ()

    @property
    def exit_code(self) -> int:
        """0 every counted function hits; 1 some misses, needs a new graph or fails
        to compile (or nothing takes the call); 3 none of those, but some is undecided."""
        statuses = {f.status for f in self.functions}
        if not statuses or statuses & {"miss", "new-graph", "error"}:
            return EXIT_MISS
        return EXIT_UNDECIDED if "undecided" in statuses else EXIT_HIT

    def to_json(self) -> dict[str, object]:
        return {"exit_code": self.exit_code, "functions": [f.to_json() for f in self.functions],
                "others": [f.to_json() for f in self.others]}


@dataclass(frozen=True)
class MatchAnswer:
    """One call's lookup, key by key, and its verdict per function: what a match reports.

    Attributes:
        report: the lookup of each key (:func:`~fxcache_core.lookup.match.match`).
        verdict: :func:`verdicts` of ``report``.
    """

    report: MatchReport
    verdict: CallVerdict

    def to_json(self) -> dict[str, object]:
        """:meth:`MatchReport.to_json <fxcache_core.lookup.match_report.MatchReport.to_json>`
        with ``verdicts`` (:meth:`CallVerdict.to_json`) added last."""
        body = self.report.to_json()
        body["verdicts"] = self.verdict.to_json()
        return body


def _counts(m: KeyMatch) -> bool:
    """Whether torch looks ``m``'s key up by its own guards for the call."""
    return m.fits and (m.key.kind is KeyKind.AOT_AUTOGRAD or not m.loaded_by)


def _in_user_terms(reason: str) -> Reason:
    """``reason`` in the user's terms (:func:`~fxcache_core.guards.user_terms.user_text`),
    keeping its code."""
    return Reason(user_text(reason), code_of(reason) or "unspecified")


def _miss_why(m: KeyMatch) -> Reason:
    names = m.user_names
    if m.aborted:
        return _in_user_terms(m.aborted)
    gone = [ld for ld in m.loads if ld.entry is None]
    if m.hit is not None and gone:
        return Reason(f"entry {m.hit.name[:16]} passes its guards, but the {gone[0].role} FX entry it loads "
                      f"({gone[0].key[:12]}) is gone: torch will recompile", "fx-entry-gone")
    fails = [(i, v) for i, v in enumerate(m.entries) if v.outcome == "fail"]
    if not fails:
        if not m.entries or all(v.outcome == "unreadable" for v in m.entries):
            return Reason("torch will compile a new entry: no entry of this key can be read", "no-readable-entry")
        return Reason("torch will compile a new entry", "no-entry-passes")
    vals = {v.user_values(names) for _, v in fails}
    if len(vals) == 1:
        (shown,) = vals
        parts = [f"{v.user_clause(names)}" + (f" (#{i})" if len(m.entries) > 1 else "") for i, v in fails]
        return Reason(f"torch will compile a new entry: {shown} fails " + " and ".join(parts), "clause-failed")
    return Reason("torch will compile a new entry: " + "; ".join(
        f"#{i}: {v.user_values(names)} fails {v.user_clause(names)}" for i, v in fails), "clause-failed")


def _undecided_why(m: KeyMatch) -> Reason:
    if m.uncertain:
        return _in_user_terms(m.uncertain[0])
    names = m.user_names
    for v in m.entries:
        if v.outcome == "unknown" and code_of(v.reason) == "corrupt-entry-torch-loads":
            return v.reason  # type: ignore[return-value]
        if v.outcome == "unknown" and code_of(v.reason) in UNFINISHED_CODES:
            return Reason(f"fxcache could not decode entry {v.entry.name[:16]} ({code_of(v.reason)}), and "
                          "torch tries it before the entries after it", code_of(v.reason))
        if v.outcome == "unknown" and v.reason:
            needs = [names.get(p.strip(), p.strip()) for p in v.reason.removeprefix("needs ").split(",")]
            return Reason(f"entry {v.entry.name[:16]} needs {', '.join(needs)}: give it", code_of(v.reason))
        if v.outcome == "unparsable":
            return Reason(f"entry {v.entry.name[:16]}'s guards are outside what fxcache reads: {v.reason}",
                          "guards-unparsable")
    return Reason("the cache cannot tell", "undecided")


def _new_graph_why(group: Sequence[KeyMatch]) -> Reason:
    """The first reason a key of the function cannot take the call, and how many keys
    (and other reasons) there are: the line stays one line, the keys below say the rest."""
    own = [m for m in group if m.key.kind is KeyKind.AOT_AUTOGRAD or not m.loaded_by] or list(group)
    reasons: list[Reason] = []
    for m in own:
        r = _in_user_terms(m.reasons[0]) if m.reasons else Reason("it cannot take these inputs", "no-fit")
        if r not in reasons:
            reasons.append(r)
    if len(own) == 1:
        tail = ""
    elif len(reasons) == 1:
        tail = f" (in every cached key: {len(own)})"
    else:
        tail = f" (and {len(reasons) - 1} other reason{'s' if len(reasons) > 2 else ''} in the other keys)"
    return Reason("torch will trace and compile another graph: " + reasons[0] + tail, reasons[0].code)


def function_verdict(function: str | None, group: Sequence[KeyMatch]) -> FunctionVerdict:
    """The verdict of one function from its keys' lookups (see the module docstring)."""
    origin = next((m.origin for m in group if m.origin is not None), None)
    keys = tuple(group)
    # An FX key whose loaders are not in the report (asked for with --key) is looked up itself;
    # one whose loaders miss (forward-may-hit) is looked up inside the new graph's compile.
    looked = [m for m in group if _counts(m)] or [
        m for m in group if m.fits and not any(code_of(u) == "forward-may-hit" for u in m.uncertain)]
    if not looked:
        return FunctionVerdict(function, origin, "new-graph", _new_graph_why(group), keys=keys)
    hit = next((m for m in looked if m.status == "hit"), None)
    # A key the cache cannot tell torch looks up (how the call is compiled: duck sizing, a
    # saved profile) may be the one torch takes instead of the hit: the graphs differ in
    # their inputs, not in a branch's guards, so the hit does not rule it out.
    rival = next((m for m in looked if m.status == "undecided" and m.uncertain), None)
    if hit is not None and rival is not None:
        assert hit.hit is not None
        either = rival.hit is not None and all(ld.entry is not None for ld in rival.loads)
        why = _undecided_why(rival)
        return FunctionVerdict(
            function, origin, "undecided", Reason(
                f"{why} (otherwise torch looks up key {hit.key.key[:12]}, whose entry "
                f"{hit.hit.name[:16]} hits" + ("; either way an entry's guards hold)" if either else ")"),
                why.code),
            rival.key, keys=keys)
    # Two keys whose entries both serve the call are two graphs of it that differ in
    # something the call does not say or the cache does not show (a Python value of an
    # unreadable source, the grad mode): torch can take but one, and which is not known.
    other = next((m for m in looked if m.status == "hit" and hit is not None and m.key != hit.key), None)
    if hit is not None and other is not None:
        return FunctionVerdict(
            function, origin, "undecided", Reason(
                f"keys {hit.key.key[:12]} and {other.key.key[:12]} both serve this call: their graphs differ in "
                "what the call leaves unsaid or the cache does not show (a Python value, global state); "
                "which one torch looks up is not known", "several-keys-fit"),
            hit.key, keys=keys)
    if hit is not None and hit.raises is not None:
        assert hit.hit is not None
        status: Status = "error" if code_of(hit.raises) == "mark-range-raises" else "undecided"
        return FunctionVerdict(function, origin, status, _in_user_terms(hit.raises), hit.key,
                               hit.hit.name if status == "error" else None, keys)
    if hit is not None:
        assert hit.hit is not None
        loads = "".join(f", loads {ld.role} fx {ld.key[:12]}/{(ld.entry or '')[:16]}" for ld in hit.loads)
        return FunctionVerdict(function, origin, "hit", Reason(loads, "hit"), hit.key, hit.hit.name, keys)
    und = next((m for m in looked if m.status == "undecided"), None)
    if und is not None:
        return FunctionVerdict(function, origin, "undecided", _undecided_why(und), und.key, keys=keys)
    err = next((m for m in looked if m.status == "error"), None)
    if err is not None and err.raises is not None:
        return FunctionVerdict(function, origin, "error", _in_user_terms(err.raises), keys=keys)
    if err is not None:
        why = _miss_why(err)
        return FunctionVerdict(function, origin, "error", Reason("the compile fails: " + why, why.code),
                               err.key, keys=keys)
    first = looked[0]
    return FunctionVerdict(function, origin, "miss", _miss_why(first), first.key, keys=keys)


def _unattributed(report: MatchReport, function: str, found: list[FunctionVerdict]) -> list[FunctionVerdict]:
    """``found`` over keys that record no function, as what holds whichever function they
    are (:func:`~fxcache_core.lookup.unattributed.attribute_verdicts`)."""
    why = attribute_verdicts(report, function, [(v.status, v.line, v.keys) for v in found])
    if not isinstance(why, Reason):  # a new graph whichever function they are: said so
        return [replace(v, why=Reason(f"{v.why}{why}", code_of(v.why) or "unspecified")) for v in found]
    return [FunctionVerdict(None, None, "undecided", why, keys=tuple(m for v in found for m in v.keys))]


def _groups(report: MatchReport, results: tuple[KeyMatch, ...]) -> dict[str | None, list[KeyMatch]]:
    """``results`` per function, in the order of their first key, without the FX keys
    only loaded by AOTAutograd hits (part of those hits)."""
    folded = report.folded(results)
    groups: dict[str | None, list[KeyMatch]] = {}
    for m in results:
        if m.key.key not in folded:
            groups.setdefault(function_name(m.origin, m.compiled).name, []).append(m)
    return groups


def _user_inputs(group: Sequence[KeyMatch], inputs: Sequence[tuple[str, str]]) -> str:
    """The inputs the function's keys take, as the user wrote them: ``x=[4,12]``."""
    taken = {given for m in group for given, _ in m.bound}
    return ", ".join(f"{user_source(src)}={v}" for src, v in inputs if not taken or src in taken)


def _phase_verdict(function: str | None, group: Sequence[KeyMatch], phase: Phase,
                   inputs: Sequence[tuple[str, str]]) -> FunctionVerdict:
    """One phase's verdict (:func:`function_verdict`), with its heading: the first call
    says whether a saved profile makes it dynamic, and a first call traced static that
    no key takes says so (``static x=[4,12] was never compiled``)."""
    v = function_verdict(function, group)
    heading = phase.heading
    if phase is Phase.FIRST:
        saved = next((m for m in group if m.profile is not None), None)
        if saved is not None:
            heading += (f" (traced dynamic: job id {job_of(saved.profile or '')}'s saved profile, "
                        f"{os.path.basename(saved.profile or '')}, marks {', '.join(saved.auto)} dynamic)")
        elif v.status == "new-graph" and not any(m.auto for m in group) and ":mark_dynamic=" not in str(inputs) \
                and not (code_of(v.why) or "").startswith(_SCALAR_CODES) \
                and not any(code_of(r) in ARGUMENT_CODES for m in group for r in m.reasons):
            v = replace(v, why=_never_compiled(group, inputs))
    return replace(v, phase=phase, heading=heading)


def _never_compiled(group: Sequence[KeyMatch], inputs: Sequence[tuple[str, str]]) -> Reason:
    """Why a first call traced static is a new graph, naming its cause: the Python
    arguments that rule keys out (``x.requires_grad=True``: the parameter and its value),
    alone where they rule out every key, else with the static sizes no key holds."""
    own = [m for m in group if m.key.kind is KeyKind.AOT_AUTOGRAD or not m.loaded_by] or list(group)
    ruling = list({(p.name, p.value): p for m in own for p in m.params if p.status == "rules-out"}.values())
    if not ruling:
        return Reason(f"static {_user_inputs(group, inputs)} was never compiled (under dynamic=None a fresh "
                      "process traces its first call with static sizes, and no key holds these)",
                      "static-never-compiled")
    named = ", ".join(f"{p.name}={p.value}" for p in ruling)
    if all(any(p.status == "rules-out" for p in m.params) for m in own):
        first = ruling[0]
        why = user_text(str(first.how).removeprefix(f"{first.name}={first.value}: "))
        return Reason(f"{named} {'was' if len(ruling) == 1 else 'were'} never compiled: {why}", first.how.code)
    ruled = {p.source for p in ruling}
    static = _user_inputs(group, [(src, v) for src, v in inputs if src not in ruled])
    return Reason(f"static {static} with {named} was never compiled (under dynamic=None a "
                  "fresh process traces its first call with static sizes, and no key holds these sizes with "
                  + ("this value)" if len(ruling) == 1 else "these values)"), "static-never-compiled")


def _either(none: FunctionVerdict, true: FunctionVerdict) -> FunctionVerdict:
    """Without the mode: the verdict of ``dynamic=None``'s phase if ``dynamic=True`` gives
    the same (status, key and entry), else undecided, saying both."""
    if (none.status, none.key, none.entry) == (true.status, true.key, true.entry):
        return none
    tail = "; either way an entry's guards hold" if none.status == true.status == "hit" else ""
    return replace(none, status="undecided", key=none.key or true.key, entry=None, why=Reason(
        f"under dynamic=None {_short(none)}; under dynamic=True {_short(true)}{tail} "
        f"(pass {param('dynamic')})", "mode-changes-verdict"))


def _short(v: FunctionVerdict) -> str:
    """A verdict's line without what a hit loads: ``HIT entry ... (aot ...)``."""
    if v.status == "hit" and v.key is not None and v.entry is not None:
        return f"HIT entry {v.entry[:16]} ({v.key.kind.short} {v.key.key[:12]})"
    return v.line


def _phased(v: FunctionVerdict, function: str | None, report: MatchReport,
            passes: Sequence[tuple[PassResults, dict[str | None, list[KeyMatch]]]]) -> FunctionVerdict:
    """``v`` (of ``report.results``) as the verdict of the phase asked, with both phases."""
    by = {(p.phase, p.mode): g[function] for p, g in passes if function in g}
    first = by.get((Phase.FIRST, DynamicMode.NONE))
    after = by.get((Phase.AFTER_RECOMPILE, DynamicMode.NONE))
    if first is None or after is None or report.phase is None:
        return v
    phases = [_phase_verdict(function, first, Phase.FIRST, report.inputs),
              _phase_verdict(function, after, Phase.AFTER_RECOMPILE, report.inputs)]
    if (true := by.get((Phase.FIRST, DynamicMode.TRUE))) is not None:
        tv = function_verdict(function, true)
        phases = [replace(_either(p, tv), heading=p.heading) for p in phases]
    chosen = phases[0] if report.phase is Phase.FIRST else phases[1]
    return replace(chosen, keys=v.keys, phases=tuple(phases))


def _hooked(v: FunctionVerdict) -> FunctionVerdict:
    """``v``, undecided where it is decided (HIT, MISS, NEW GRAPH, ERROR) but a key of it is a
    module's forward whose source files register a forward hook
    (:func:`~fxcache_core.lookup.module_hooks.hooks_registered`); its phases alike."""
    if v.status not in _HOOKED or (why := hooks_registered(v.keys)) is None:
        return v
    phases = tuple(replace(p, status="undecided", entry=None, why=why) if p.status in _HOOKED else p
                   for p in v.phases)
    return replace(v, status="undecided", entry=None, why=why, phases=phases)


_HOOKED = frozenset({"hit", "miss", "new-graph", "error"})

def _configured(v: FunctionVerdict, stated: Sequence[tuple[str, str]]) -> FunctionVerdict:
    """``v``, undecided where it is decided but the call states a Dynamo config item
    (``torch._dynamo.config.assume_static_by_default=False``...): which keys a call is
    looked up in rests on what Dynamo traces static or as symbols (a fresh process's
    first call static, automatic dynamic after a recompile, ints and floats specialized),
    and those rules are Dynamo's config; the cache does not record the values its keys
    were compiled with. Every key that fits is undecided already
    (:mod:`~fxcache_core.lookup.global_state`); this covers the keys those rules ruled out."""
    if not stated or (v.status not in _HOOKED and not any(p.status in _HOOKED for p in v.phases)):
        return v
    why = Reason(
        f"{', '.join(f'{name}={value}' for name, value in stated)}: Dynamo's config decides which dims and Python values it traces static "
        "or as symbols, which the keys this call is looked up in rest on, and the cache does not record "
        f"which value its keys were compiled with: undecided (leave it out of {param('inputs')} to take it "
        "as when the keys were compiled)", "dynamo-config-unrecorded")
    phases = tuple(replace(p, status="undecided", entry=None, why=why) if p.status in _HOOKED else p
                   for p in v.phases)
    if v.status not in _HOOKED:
        return replace(v, phases=phases)
    return replace(v, status="undecided", entry=None, why=why, phases=phases)


def _unbound_reason(u: UnboundKey) -> Reason:
    """Why a key the inputs do not bind leaves its function undecided."""
    if u.unnamed:
        n = len(u.unnamed)
        return Reason(
            f"key {u.key.key[:12]} is an FX key no AOTAutograd entry loads (torch saves a training graph's "
            f"AOTAutograd entry only once its backward has compiled), and nothing in the cache names its "
            f"inputs: no AOTAutograd key takes the call, so AOTAutograd traces it again (unless torch "
            f"bypasses that cache for this graph), and Inductor may then find this FX key. To see its lookup, "
            f"give its {n} input{'s' if n != 1 else ''} by position with {param('positional')}, in graph order "
            f"({', '.join(u.unnamed)}; a module's parameters and buffers among them)", "inputs-unnamed")
    at = re.search(r"torch_dynamo_resume_in_\w+?_at_([0-9]+)$", getattr(u.origin, "function", "") or "")
    return Reason(
        f"key {u.key.key[:12]} takes {', '.join(user_source(t) for t in u.takes)}, which the inputs "
        + (f"do not name: what the frame resumed after the graph break at line {at.group(1)} starts "
           "with, which the cache does not record (nor ties to the first frame's outputs); give each "
           f"as that frame gets it with {param('inputs')}, a tensor by its shape"
           if at is not None else
           f"do not name (a frame's locals, e.g. after a graph break): give them with {param('inputs')}"),
        "inputs-not-named")


def verdicts(report: MatchReport, count_all: bool = False, function: str | None = None) -> CallVerdict:
    """One :class:`FunctionVerdict` per function the call's inputs reach, in the
    order of their first key; ``count_all``: every function counts (the report was
    made for one function, ``--fn``, or one key, ``--key``). Frames the inputs do not bind
    (``report.unbound``, after a graph break) are undecided: their locals were not given.
    ``function``: the function the report was made for; where no key records it and
    ``report.unattributed`` were judged instead, the verdict is what holds whichever
    function those keys came from (:mod:`fxcache_core.lookup.unattributed`).
    Under automatic dynamic (``report.phase``), a function the report's ``passes`` judge
    gets the verdict of each phase, and its status is that of the phase asked. A counted
    function of a module's forward whose files register forward hooks is undecided
    (:func:`_hooked`)."""
    groups = _groups(report, report.results)
    passes = [(p, _groups(report, p.results)) for p in report.passes]
    found = [_phased(function_verdict(f, g), f, report, passes) for f, g in groups.items()]
    for u in report.unbound:
        name = function_name(u.origin).name
        if u.unnamed and any(v.function == name for v in found):
            # A key whose inputs nothing names may serve the call where the function's
            # named keys do not: its NEW GRAPH or MISS is not known then (one line a function).
            found = [replace(v, status="undecided", why=_unbound_reason(u), key=u.key, entry=None, phases=())
                     if v.function == name and v.status in ("new-graph", "miss") else v for v in found]
            continue
        found.append(FunctionVerdict(name, u.origin, "undecided", _unbound_reason(u), u.key))
    if report.unattributed and function is not None:
        found = _unattributed(report, function, found)
    found = [_configured(_hooked(v), report.dynamo_config) for v in found]
    if count_all or all(v.status == "new-graph" for v in found):
        return CallVerdict(tuple(found))
    return CallVerdict(tuple(v for v in found if v.status != "new-graph"),
                       tuple(v for v in found if v.status == "new-graph"))
