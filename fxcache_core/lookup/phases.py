"""Automatic dynamic's two phases: a fresh process's first call, and the calls after a recompile.

Under ``torch.compile(dynamic=None)`` (torch's default) Dynamo traces a
function's first call with every unmarked dim static, so a fresh process looks
up a key of static shapes. When a later call changes a size, Dynamo records
the change (``update_automatic_dynamic`` in torch/_dynamo/pgo.py) and
recompiles with the changed dims traced as symbols of their own
(``DimDynamic.DYNAMIC``, never duck-sized: ``_automatic_dynamic`` and
``get_automatic_dynamic_shapes_mark_as`` in torch/_dynamo/variables/builder.py);
an int or float argument whose value changed becomes a SymInt or a tensor
input the same way (``wrap_symint``/``wrap_symfloat``). That recompile looks
up a key with those dims symbolic; later calls reuse the graph in memory. With
``dynamic=False`` automatic dynamic is off (``automatic_dynamic_shapes=False``,
torch/_dynamo/eval_frame.py), so there is one phase.

With a job id, Dynamo saves what it learnt (:mod:`fxcache_core.decode.pgo`), and
a fresh process with that job id traces its *first* call with the saved dims
already symbolic.

This module says which dims each phase traces as symbols (:class:`Auto`): for
the first call, those a saved profile marks (:class:`Profiles`); after a
recompile, those the key being judged has symbolic (the dims that changed when
the cache was built), plus the profile's. :func:`fxcache_core.lookup.match.match`
then judges the keys once per phase; :mod:`fxcache_core.lookup.prediction` says both.
Never imports torch.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey
from fxcache_core.catalog.reader import Catalog
from fxcache_core.decode.entries import DecodedEntry
from fxcache_core.decode.pgo import CodeProfile, PgoState, SourceHashes, read_pgo_states
from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.functions.origin import function_name, key_function_name
from fxcache_core.lookup.binding import DynamicMode, InputValue, TensorArg
from fxcache_core.lookup.fit_binding import INT_RE, Binding
from fxcache_core.lookup.floats import tensorified_base
from fxcache_core.lookup.graph_types import TensorType
from fxcache_core.lookup.inputs import Dims, entry_dims
from fxcache_core.lookup.match_report import KeyMatch, MatchReport, PassResults, Phase
from fxcache_core.reasons import Reason, code_of

__all__ = ["Auto", "Phase", "Profiles", "auto_scalars_taken", "evidence", "key_auto",
           "static_after_recompile", "static_dims_under_dynamic_true", "symbolic_by_function",
           "with_phases"]


@dataclass(frozen=True, slots=True)
class Auto:
    """What a phase traces as symbols beyond the mode's own: automatic dynamic's
    dims (``DimDynamic.DYNAMIC``, as ``mark_dynamic`` gives) and scalars.

    Attributes:
        dims: (tensor source, dim) traced as a symbol of its own.
        every: tensor sources every dim of which is (a profile that saw the rank change).
        scalars: int arguments traced as SymInts and floats taken as tensors
            (``L['n']``, ``L['scale']``).
        strides: tensor strides traced as symbols of their own (``L['y'].stride()[1]``), as
            automatic dynamic makes a stride that changed.
        profile: the saved profile the first call's dims come from (its file), if any.
        uncertain: what keeps it from being known (a profile fxcache cannot match
            to the code, profiles that disagree), None when known.
    """

    dims: frozenset[tuple[str, int]] = frozenset()
    every: frozenset[str] = frozenset()
    scalars: frozenset[str] = frozenset()
    strides: frozenset[str] = frozenset()
    profile: str | None = None
    uncertain: Reason | None = None

    def __bool__(self) -> bool:
        return bool(self.dims or self.every or self.scalars or self.strides or self.uncertain)

    def __or__(self, other: Auto) -> Auto:
        return Auto(self.dims | other.dims, self.every | other.every, self.scalars | other.scalars,
                    self.strides | other.strides, self.profile or other.profile, self.uncertain or other.uncertain)

    def mark(self, inputs: Mapping[str, InputValue]) -> dict[str, InputValue]:
        """``inputs`` with the tensors' automatic-dynamic dims added to ``marked``
        (keyed by the key's sources, after :func:`~fxcache_core.lookup.inputs.alias`)."""
        out = dict(inputs)
        for src, val in inputs.items():
            if not isinstance(val, TensorArg):
                continue
            add = {d for s, d in self.dims if s == src and d < len(val.shape)}
            if src in self.every:
                add |= set(range(len(val.shape)))
            add -= val.static  # mark_static wins over automatic dynamic
            if add - val.marked:
                out[src] = replace(val, marked=val.marked | frozenset(add))
        return out

    def shown(self, inputs: Mapping[str, InputValue] | None = None) -> tuple[str, ...]:
        """The dims and scalars, in the user's terms (``x.size(1)``, ``n``); only those
        of ``inputs`` when given."""
        from fxcache_core.guards.user_terms import user_source

        out = [f"{user_source(s)}.size({d})" for s, d in sorted(self.dims)
               if inputs is None or s in inputs]
        out += [f"{user_source(s)} (every dim)" for s in sorted(self.every) if inputs is None or s in inputs]
        out += [user_source(s) for s in sorted(self.scalars) if inputs is None or s in inputs]
        out += [user_source(s) for s in sorted(self.strides)
                if inputs is None or s.rsplit(".stride()", 1)[0] in inputs]
        return tuple(out)


def key_auto(catalog: Catalog, key: CacheKey, floats: Mapping[str, InputValue] | None = None) -> Auto:
    """What a key traced as symbols, read from its first readable entry: the
    tensor dims whose size is a symbol or an expression, the int arguments it
    takes as SymInts (a source of its own, not a size), the floats it takes as
    tensors: ``___as_tensor(L['scale'])``, the strides it takes as symbols of their own
    (a SymInt input whose source is ``L['y'].stride()[1]``), and a 0-d float64 input whose own source
    (``L['scale']``, as torch 2.13's AOTAutograd entries name a tensorified float) the
    call ``floats`` (by the key's sources) gives a Python float, which only a float made
    an input can be. Empty for a key of static shapes."""
    first = catalog.first_readable(key)
    dims: set[tuple[str, int]] = set()
    scalars: set[str] = set()
    strides: set[str] = set()
    for inp in first[1].inputs if first is not None else ():
        if not inp.source:
            continue
        if (base := tensorified_base(inp.source)) is not None:
            scalars.add(base)
        elif floats and type(floats.get(inp.source)) is float and _F64_0D.match(inp.type):
            scalars.add(inp.source)
        elif inp.is_symint:
            if not _SIZE_RE.search(inp.source):
                scalars.add(inp.source)  # L['n'], not L['x'].size()[0]
            elif _STRIDE_RE.search(inp.source):
                strides.add(inp.source)  # L['y'].stride()[1]
        elif (tt := TensorType.parse(inp.type)) is not None:
            dims.update((inp.source, i) for i, s in enumerate(tt.sizes) if not (s.isascii() and s.lstrip("-").isdigit()))
    return Auto(frozenset(dims), frozenset(), frozenset(scalars), frozenset(strides))


_F64_0D = re.compile(r"f64\[\](\[\])?\w*$")


def keyed_inputs(inputs: Mapping[str, InputValue] | None, bound: Sequence[tuple[str, str]]) -> dict[str, InputValue]:
    """The call's ``inputs`` by the key's sources too, through ``bound`` ((user source, key
    source) pairs of a :class:`~fxcache_core.lookup.match_report.KeyMatch`)."""
    out = dict(inputs or {})
    out.update({ks: out[us] for us, ks in bound if us in out})
    return out


AutoOf = Callable[[CacheKey, Any], Auto]
"""What a pass traces as symbols for a key, given the key and its compiled frame (a
callable giving the :class:`~fxcache_core.functions.frames.CompiledFrom`)."""


_SIZE_RE = re.compile(r"\.(size|stride|storage_offset)\(\)")
_STRIDE_RE = re.compile(r"\.stride\(\)\[[0-9]+\]$")
_CALL_IMPL = ("_call_impl", os.path.join("torch", "nn", "modules", "module.py"))


class Profiles:
    """The saved profiles of a catalog's cache dir (:func:`fxcache_core.decode.pgo.read_pgo_states`),
    read once, on first use, and matched to the frames keys were compiled from.

    A code object is the profile's when its file, name and a first line at or
    before the frame's line agree (the nearest such), and the file here still has
    the content the profile hashed (torch looks a code object up by
    ``(file_hash, firstlineno, name, closure_hash)``, ``CodeId`` in
    torch/_dynamo/pgo.py; a file changed since makes another ``CodeId``, so the
    profile does not apply). A module compiled whole runs ``Module._call_impl``,
    whose one code object every module compiled whole shares. A profile of a
    code object with a closure is keyed on Python's ``hash`` of the closure,
    which fxcache cannot compute: its dims are uncertain.
    """

    def __init__(self, catalog: Catalog) -> None:
        self._catalog = catalog
        self._states: tuple[PgoState, ...] | None = None
        self._by_frame: dict[tuple[object, ...], Auto] = {}
        self._hashes = SourceHashes()  # each source file read once, however many profiles name it

    @property
    def states(self) -> tuple[PgoState, ...]:
        if self._states is None:
            self._states = read_pgo_states(self._catalog.scan.root) if self._catalog.has_pgo_state() else ()
        return self._states

    @property
    def unread(self) -> bool:
        """A profile is there that could not be read (what it marks is unknown)."""
        return any(s.problem is not None for s in self.states)

    def for_frame(self, frame: CompiledFrom | None) -> Auto:
        """What the saved profiles mark dynamic for the code a key was compiled from
        (empty when none records it, or there is no profile)."""
        if frame is None or not self.states:
            return Auto()
        k = (frame.function, frame.file, frame.line, frame.wrappers[:1], frame.whole_module)
        if k not in self._by_frame:
            self._by_frame[k] = self._for_frame(frame)
        return self._by_frame[k]

    def _for_frame(self, frame: CompiledFrom) -> Auto:
        found: list[tuple[PgoState, CodeProfile]] = []
        for st in self.states:
            code = _code_of(st.codes, frame)
            if code is not None and _same_file(code, self._hashes):
                found.append((st, code))
        if not found:
            return Auto()
        autos = [(st, _auto_of(st, code)) for st, code in found]
        marked = [(st, a) for st, a in autos if a]
        if not marked:
            return Auto()
        st, a = marked[0]
        if len({(b.dims, b.every, b.scalars) for _, b in autos}) > 1:
            jobs = ", ".join(s.path.name for s, _ in autos)
            return replace(a, uncertain=Reason(
                f"the saved profiles {jobs} mark different dims of this code dynamic: which one "
                "a fresh process reads depends on its job id (TORCH_COMPILE_JOB_ID)", "profiles-differ"))
        code = next(c for s, c in found if s is st)
        if code.closure_hash is not None:
            return replace(a, uncertain=Reason(
                f"the saved profile {st.path.name} marks {', '.join(a.shown())} dynamic for a function "
                "with a closure: torch keys it on Python's hash of the closure, which fxcache cannot "
                "compute, so whether a fresh process finds it is unknown", "profile-closure"))
        return a


def _code_of(codes: Sequence[CodeProfile], frame: CompiledFrom) -> CodeProfile | None:
    """The code object Dynamo compiled for ``frame``: the outermost decorator wrapper
    when one was folded into the function (:attr:`CompiledFrom.wrappers`), else the
    function; the nearest code object of that name and file at or before its line."""
    if frame.whole_module:
        hits = [c for c in codes if c.name == _CALL_IMPL[0] and c.filename.endswith(_CALL_IMPL[1])]
        return hits[0] if len(hits) == 1 else None
    fn, file, line = frame.wrappers[0] if frame.wrappers else (frame.function, frame.file, frame.line)
    hits = [c for c in codes if c.name == fn and c.filename == file and c.firstlineno <= line]
    return max(hits, key=lambda c: c.firstlineno) if hits else None


def _same_file(code: CodeProfile, hashes: SourceHashes) -> bool:
    """Whether the file here hashes as the profile recorded (when it cannot be read,
    or is not here, the profile is taken to be its)."""
    now = hashes(code.filename)
    if now is None or now == code.filename or code.file_hash is None:
        return True
    return now == code.file_hash


def _auto_of(st: PgoState, code: CodeProfile) -> Auto:
    dims: set[tuple[str, int]] = set()
    every: set[str] = set()
    scalars: set[str] = set()
    for s in code.dynamic():
        if s.rank is not None:
            dims.update((s.source, d) for d in s.dims)
        elif s.every_dim and s.scalar:
            scalars.add(s.source)  # an int's or float's entry (or a tensor whose rank changed)
            every.add(s.source)
    return Auto(frozenset(dims), frozenset(every), frozenset(scalars), profile=str(st.path))


def auto_scalars_taken(b: Binding, d: DecodedEntry, inputs: Mapping[str, InputValue], auto: Auto) -> None:
    """An int or float argument automatic dynamic makes a SymInt (or a tensor) that the
    key does not take as an input: the key baked it in, so torch traces another graph
    (after a recompile); a saved profile's first call is noted, not ruled out (the
    graph may not depend on the value)."""
    taken = {tensorified_base(i.source) or i.source for i in d.inputs if i.source}
    for src in sorted(auto.scalars):
        if src not in inputs or src in taken:
            continue
        what = "a SymInt" if isinstance(inputs[src], int) else "a tensor input"
        if auto.profile is not None:
            b.notes.append(Reason(
                f"the saved profile {auto.profile} marks {src} dynamic, so a fresh process traces it as "
                f"{what}, which this key does not take: unless its graph does not depend on {src}, "
                "torch traces another graph", "profile-scalar-not-input"))
        else:
            b.problems.append(Reason(
                f"{src} is a constant of this key's graph, but after a recompile automatic dynamic "
                f"traces it as {what}: torch looks up another key", "auto-scalar-baked"))


def _dims(catalog: Catalog, key: CacheKey) -> Dims:
    """:data:`~fxcache_core.lookup.inputs.Dims` of a key's first readable entry."""
    first = catalog.first_readable(key)
    return entry_dims(first[1]) if first is not None else {}


def static_sibling(catalog: Catalog, key: CacheKey, function: str,
                   statics: dict[str, list[tuple[CacheKey, Dims]]]) -> CacheKey | None:
    """An AOTAutograd key of the same function compiled with static shapes.

    Under ``dynamic=None`` Dynamo compiles a function's first call with static
    shapes and only marks a dim dynamic when a later call changes it
    (automatic dynamic), so such a function leaves a static key beside its
    dynamic one. A static size of 0 or 1 does not count: ``dynamic=True``
    specializes those too. ``statics``: :func:`static_keys` of the catalog.
    """
    dims = _dims(catalog, key)
    symbolic = {k for k, v in dims.items() if not INT_RE.fullmatch(v)}
    for other, odims in statics.get(function, ()):
        if other.key != key.key and any(int(odims[k]) > 1 for k in symbolic if k in odims):
            return other
    return None


def static_keys(catalog: Catalog) -> dict[str, list[tuple[CacheKey, Dims]]]:
    """Function (:attr:`~fxcache_core.functions.origin.FunctionName.distinct` of
    :func:`~fxcache_core.functions.origin.key_function_name`) -> its AOTAutograd keys
    whose tensor dims are all static, with the dims."""
    out: dict[str, list[tuple[CacheKey, Dims]]] = {}
    for k in catalog.scan.keys:
        if k.kind is not KeyKind.AOT_AUTOGRAD:
            continue
        odims = _dims(catalog, k)
        if odims and all(INT_RE.fullmatch(v) for v in odims.values()):
            name = key_function_name(catalog, k).distinct
            if name is not None:
                out.setdefault(name, []).append((k, odims))
    return out


def evidence(catalog: Catalog, results: Sequence[KeyMatch]) -> set[str | None]:
    """The functions (:attr:`~fxcache_core.functions.origin.FunctionName.name`) that show
    automatic dynamic in the cache: an AOTAutograd key with symbols beside one of
    the same function with those dims static (> 1: dynamic=True specializes 0 and 1
    too, :func:`static_sibling`), or a saved profile that marks their dims."""
    out: set[str | None] = set()
    statics: dict[str, list[tuple[CacheKey, Dims]]] | None = None
    for m in results:
        if m.profile is not None:
            out.add(function_name(m.origin, m.compiled).name)
        if not (m.key.kind is KeyKind.AOT_AUTOGRAD and m.symbols and m.origin is not None):
            continue
        if statics is None:
            statics = static_keys(catalog)
        fname = function_name(m.origin, m.compiled).distinct
        if fname is not None and static_sibling(catalog, m.key, fname, statics) is not None:
            out.add(function_name(m.origin, m.compiled).name)
    return out


def symbolic_by_function(catalog: Catalog, results: Sequence[KeyMatch],
                         profiles: Profiles | None, inputs: Mapping[str, InputValue] | None = None
                         ) -> dict[str, Auto]:
    """Function (:attr:`~fxcache_core.functions.origin.FunctionName.distinct`) -> what its
    keys (those torch looks up by their own guards) trace as symbols, together
    (:func:`~fxcache_core.lookup.phases.key_auto`, the call's ``inputs`` naming the
    floats), with what a saved profile marks."""
    out: dict[str, Auto] = {}
    for m in results:
        if not (m.key.kind is KeyKind.AOT_AUTOGRAD or not catalog.loaders_of(m.key.key)):
            continue
        fname = function_name(m.origin, m.compiled).distinct or ""
        own = key_auto(catalog, m.key, keyed_inputs(inputs, m.bound))
        saved = profiles.for_frame(m.compiled) if profiles is not None else Auto()
        if not saved.uncertain:
            own = own | replace(saved, profile=None)
        out[fname] = out.get(fname, Auto()) | own
    return out


_PARAM_RE = re.compile(r"\._(parameters|buffers)\[")


def static_dims_under_dynamic_true(catalog: Catalog, m: KeyMatch,
                                   inputs: Mapping[str, InputValue] | None = None) -> KeyMatch:
    """A key of a function that shows automatic dynamic, judged as ``dynamic=True``
    would trace the call: its static dims (> 1, of inputs, not parameters) look like
    dims automatic dynamic kept static because they never changed, and ``dynamic=True``
    traces them as symbols (duck sizing) unless the code fixes the size. Where another
    key of the function has that dim symbolic, the code does not fix it: the key does
    not fit (unless the call's size there equals another of its sizes, which duck
    sizing could tie to a fixed one); elsewhere the lookup is noted as undecided.
    ``inputs``: the call's (the user's sources), for that check."""
    if not m.fits:
        return m
    static = [(src, i, v) for (src, i), v in _dims(catalog, m.key).items()
              if INT_RE.fullmatch(v) and int(v) > 1 and not _PARAM_RE.search(src)]
    if not static:
        return m
    fname = function_name(m.origin, m.compiled).distinct
    symbolic: set[tuple[str, int]] = set()
    for k in catalog.scan.keys:
        if k.key != m.key.key and (k.kind is KeyKind.AOT_AUTOGRAD or not catalog.loaders_of(k.key)) \
                and fname is not None and key_function_name(catalog, k).distinct == fname:
            symbolic |= {d for d, size in _dims(catalog, k).items() if not INT_RE.fullmatch(size)}
    user = {ks: us for us, ks in m.bound}
    sizes = [d for v in (inputs or {}).values() if isinstance(v, TensorArg) for d in v.shape]
    for src, i, v in static:
        if (src, i) in symbolic and inputs is not None and sizes.count(int(v)) == 1 and \
                isinstance(got := inputs.get(user.get(src, src)), TensorArg) and i < len(got.shape):
            return KeyMatch(key=m.key, fits=False, symbols=m.symbols, origin=m.origin, bound=m.bound,
                            compiled=m.compiled, loaded_by=m.loaded_by, reasons=(Reason(
                                f"dim {i} of {src} is static {v} in this key, as automatic dynamic "
                                "(dynamic=None) leaves a dim that never changed, and another key of this "
                                "function has it symbolic: under dynamic=True torch traces it as a symbol "
                                "and looks up another key", "static-dim-under-dynamic"),))
    if not m.symbols and any(code_of(r) == "static-key-under-dynamic" for r in m.uncertain):
        return m  # the fit noted it already, for the whole key
    src, i, v = static[0]
    return replace(m, uncertain=m.uncertain + (Reason(
        f"dim {i} of {src} is static {v} in this key, as automatic dynamic (dynamic=None) leaves a dim "
        "that never changed: under dynamic=True torch traces it as a symbol and looks up another key, "
        "unless the code fixes that size", "static-dim-under-dynamic"),))


def with_phases(catalog: Catalog, report: MatchReport, run: Callable[[DynamicMode, AutoOf | None], Any],
                first_call: AutoOf, mode: DynamicMode, phase: Phase, mine: set[str] | None,
                profiles: Profiles | None, inputs: Mapping[str, InputValue] | None = None) -> MatchReport:
    """``report`` with the keys judged per phase of automatic dynamic (see
    :func:`fxcache_core.lookup.match.match`): ``run(mode, auto_of)`` makes a pass over
    keys (``.keys(keys, mine)``), ``first_call`` gives what a key's first call traces as
    symbols (a saved profile's dims); ``inputs``: the call's (for
    :func:`static_dims_under_dynamic_true`)."""
    unknown = mode is DynamicMode.UNKNOWN
    wanted = evidence(catalog, report.results) if unknown else None
    keys = [m.key for m in report.results
            if wanted is None or function_name(m.origin, m.compiled).name in wanted]
    if not keys:
        return report

    def after(k: CacheKey, frame: Any) -> Auto:
        own = key_auto(catalog, k, inputs)
        saved = first_call(k, frame)
        return own if saved.uncertain else replace(own | saved, profile=None)

    first = report.results if not unknown else tuple(run(DynamicMode.NONE, first_call).keys(keys, mine)[0])
    recompiled = run(DynamicMode.NONE, after)
    recompiled.recompiled = symbolic_by_function(catalog, report.results, profiles, inputs)
    second = tuple(_changed_unknown(m) for m in recompiled.keys(keys, mine)[0])
    passes = [PassResults(Phase.FIRST, DynamicMode.NONE, tuple(first)),
              PassResults(Phase.AFTER_RECOMPILE, DynamicMode.NONE, second)]
    if unknown:
        true = run(DynamicMode.TRUE, first_call).keys(keys, mine)[0]
        passes.append(PassResults(Phase.FIRST, DynamicMode.TRUE,
                                  tuple(static_dims_under_dynamic_true(catalog, m, inputs) for m in true)))
        results = report.results
    else:
        results = passes[0].results if phase is Phase.FIRST else second
    return replace(report, results=results, phase=phase, passes=tuple(passes))


def _changed_unknown(m: KeyMatch) -> KeyMatch:
    """A key with symbols that takes the call after a recompile, its lookup decided: torch
    traces as symbols exactly the sizes and Python numbers that changed before this call in
    the process (``update_automatic_dynamic`` in torch/_dynamo/pgo.py), and looks this key
    up only if those are the ones it has as symbols (``m.auto``). The call does not say what
    changed, so the lookup is undecided (``dynamic-after-recompile-unknown``), saying what
    it would be."""
    if not (m.fits and m.auto) or m.status not in ("hit", "miss"):
        return m
    return replace(m, uncertain=(*m.uncertain, Reason(
        "after a recompile Dynamo traces as symbols the sizes and numbers that changed before this call in "
        f"the process; this key takes the call if exactly {', '.join(m.auto)} did (then its lookup is a "
        f"{m.status}), and another set traces another graph: the call does not say which changed",
        "dynamic-after-recompile-unknown"),))


def static_after_recompile(catalog: Catalog, m: KeyMatch, recompiled: Mapping[str, Auto],
                           inputs: Mapping[str, InputValue]) -> KeyMatch:
    """After a recompile, a key of static shapes that fits is looked up only if the
    recompile changed no size the call has above 1: automatic dynamic traces each dim
    (and int) that changed since the function's first call in the process as a symbol
    (a changed dim of size 0 or 1 stays static), and a recompile that a guard on a
    Python value forced (a flag, the grad mode) changes none. Which sizes changed is not
    part of the call, so such a key is undecided (``static-after-recompile-unknown``),
    naming the dims the function's other keys show changing (``recompiled``:
    :func:`symbolic_by_function`); where every size of the call is 0 or 1 it is judged.
    Mirrors automatic dynamic's marking of changed dims (``update_automatic_dynamic`` in
    torch/_dynamo/pgo.py)."""
    own = key_auto(catalog, m.key, keyed_inputs(inputs, m.bound)) if m.fits else Auto()
    if (not m.fits or own or m.symbols
            or not (m.key.kind is KeyKind.AOT_AUTOGRAD or not m.loaded_by)):
        return m
    if all(isinstance(v, TensorArg) and max(v.shape, default=0) <= 1 for v in inputs.values()):
        return m  # every size 0 or 1: specialized, whatever changed
    fname = function_name(m.origin, m.compiled).distinct
    d = recompiled.get(fname or "", Auto())
    user = {ks: us for us, ks in m.bound}
    shown: list[str] = []
    for src, dim in sorted(d.dims):
        v = inputs.get(user.get(src, src))
        if isinstance(v, TensorArg) and dim < len(v.shape) and v.shape[dim] > 1:
            shown.append(f"{src}.size()[{dim}]")
    shown += [src for src in sorted(d.scalars) if user.get(src, src) in inputs]
    which = (f"{', '.join(shown)}, as this function's other keys show it changing" if shown
             else "no key of this function has one: torch would compile a new graph")
    return replace(m, uncertain=m.uncertain + (Reason(
        "after a recompile automatic dynamic traces each size that changed since the function's first call "
        f"as a symbol ({which}), and this key of static shapes is then not looked up; but a recompile that "
        "changed no size (a guard on a Python value failed: a flag, the grad mode) traces the call static "
        "again, and torch looks this key up. Which sizes changed before this call is not part of it",
        "static-after-recompile-unknown"),))
