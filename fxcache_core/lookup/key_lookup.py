"""Which entry of one key torch would load for a call: :func:`match_key`.

The call's inputs (a :class:`~fxcache_core.lookup.query.CallQuery`) are bound to
the key's graph inputs by name (:func:`~fxcache_core.lookup.inputs.alias`; for an
FX key no AOTAutograd entry loads, by its symbols' names,
:mod:`fxcache_core.lookup.symbol_names`) or by position; the fit
(:func:`~fxcache_core.lookup.fit.fit`) says whether Dynamo would trace the call into
this key's graph at all; the guard placeholders (``tN``) get their values from the
inputs (with the int-literal default of a parameter the call leaves out:
:func:`_with_int_defaults`), ``sym`` and the symbols the fit found; and the key's entries are judged in
torch's order (:mod:`fxcache_core.lookup.judge`, mirroring
``GuardedCache.find_guarded_entry`` in torch/_inductor/codecache.py). What one key
alone cannot tell (its loaders, sibling keys, the run over a function's keys) is
:mod:`fxcache_core.lookup.match`'s. Nothing here prints.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey, Entry
from fxcache_core.catalog.reader import Catalog
from fxcache_core.decode.entries import DecodedEntry
from fxcache_core.decode.origins import MAX_GRAPH_LINES, graph_comment
from fxcache_core.decode.symbols import SymbolInfo
from fxcache_core.errors import ShapeSpecError, param
from fxcache_core.functions.frames import CompiledFrom, compiled_from
from fxcache_core.functions.params import FrameReads, frame_reads
from fxcache_core.functions.partials import partial_bindings
from fxcache_core.guards.user_terms import clause_in_user_terms, placeholder_names
from fxcache_core.lookup.binding import InputValue
from fxcache_core.lookup.boundaries import size_boundary
from fxcache_core.lookup.fit import fit, positional_inputs
from fxcache_core.lookup.fit_binding import SYMBOL_RE, Binding, Sibling, check_later
from fxcache_core.lookup.fit_floats import fit_baked_floats
from fxcache_core.lookup.floats import graph_text
from fxcache_core.lookup.graph_types import eval_symbolic
from fxcache_core.lookup.inputs import alias, candidates, input_bases
from fxcache_core.lookup.judge import fx_load_doubts, fx_loads, judge_entry, torch_lookup
from fxcache_core.lookup.mark_ranges import mark_range_problem, outside_own_range
from fxcache_core.lookup.match_report import KeyMatch
from fxcache_core.lookup.phases import Auto, auto_scalars_taken
from fxcache_core.lookup.query import CallQuery
from fxcache_core.lookup.retrace import (
    failed_bound,
    failed_equality,
    failed_relation,
    specializing_clause,
)
from fxcache_core.lookup.source_values import check_signs, value_of
from fxcache_core.lookup.split_counts import split_count_differs
from fxcache_core.lookup.symbol_names import NamedInputs, key_symbols, name_inputs
from fxcache_core.reasons import Reason

__all__ = ["KeyFrame", "match_key"]

Readable = list[tuple[Entry, DecodedEntry]]
"""A key's entries that decode, in torch's order, with what they decode to."""


class KeyFrame:
    """A key's compiled frame (:func:`~fxcache_core.functions.frames.compiled_from`),
    read once and only when needed (an AOTAutograd key's is in its FX entry).
    Calling it reads the frame (None when no readable entry records one)."""

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


def match_key(catalog: Catalog, key: CacheKey, query: CallQuery, *, frame: KeyFrame | None = None,
              siblings: Callable[[CacheKey, DecodedEntry], Sequence[Sibling]] | None = None,
              auto: Auto | None = None) -> KeyMatch | None:
    """Predict torch's lookup of ``key`` for the call ``query``; None when the call
    names none of the key's inputs (unless ``query.sym`` or ``query.only`` asks).

    An input binds the key's source of the same name, or, for a module compiled
    whole, the call's keyword of that name (``L['kwargs']['input_ids']``) or the
    positional argument that the forward's parameter of that name takes (``frame``,
    the key's :class:`KeyFrame`); ``args[i]`` binds the i-th positional argument;
    ``query.positional`` binds an FX key's tensor inputs in graph order (``#0``,
    ``#1``...). The result's ``bound`` says which.

    Args:
        siblings: the other AOTAutograd keys of the key's function, given the key
            and its first readable entry (asked only when a rule needs them, see
            :func:`~fxcache_core.lookup.fit.fit`).
        auto: what automatic dynamic or a saved profile traces as symbols on top of
            ``query.mode`` (:class:`~fxcache_core.lookup.phases.Auto`, in the key's
            sources).

    Raises:
        ShapeSpecError: ``query.sym`` names a placeholder or symbol the key does not
            have, or the key has no readable entry to bind it to.
    """
    readable = [(e, d) for e in key.entries if isinstance(d := catalog.load(e), DecodedEntry)]
    if not readable and not key.entries and not query.forced:
        return None
    positional, sym = bool(query.positional), query.sym
    if positional:
        if key.kind is not KeyKind.FX_GRAPH:
            return None
        readable = [(e, positional_inputs(d)) for e, d in readable]
        why = _tensor_count_differs(readable, query)
        if why is not None:
            return KeyMatch(key=key, fits=False, reasons=(why,)) if query.forced else None
        query = query.by_position()
    extra = catalog.sources_for(key)
    named = _named_by_symbols(catalog, key, readable, query.inputs, frame) if not (positional or extra) else None
    if named is not None:
        readable = [(e, named.apply(d)) for e, d in readable]
        extra = dict(named.by_symbol)
    given: tuple[tuple[str, str], ...] = ()
    if readable and not positional:
        inputs, given = alias(query.inputs, input_bases(readable[0][1], extra), frame)
        if not (sym or query.forced) and not given:
            return None
        query = replace(query, inputs=auto.mark(inputs) if auto else inputs)
    elif not readable and not (sym or query.forced):
        return None

    symbols: tuple[SymbolInfo, ...] = catalog.symbols(readable[0][0]) if readable else ()
    if named is not None:
        symbols = tuple(replace(s, source=s.source or named.by_symbol.get(s.expr or "")) for s in symbols)
    reasons: list[Reason] = []
    if not readable and key.entries:
        reasons.append(Reason("no entry of this key can be read: torch skips them all (a miss)",
                              "no-readable-entry"))
    if sym and not symbols:
        raise ShapeSpecError(f"{param('sym')}: key {key.key[:12]} has no readable entry to bind "
                             "placeholders of", param="sym", value=dict(sym))
    if sym:
        check_signs(sym, symbols, "sym")
    if not readable:
        return _looked_up(catalog, key, symbols, {}, None, given, tuple(reasons), ())
    d0 = readable[0][1]
    b = _fit_entry(catalog, key, d0, query, symbols, extra, positional,
                   siblings=(_once(lambda: siblings(key, d0)) if siblings is not None else None), auto=auto,
                   frame=frame)
    values: dict[str, int | None] = {}
    bound_inputs = query.inputs if positional else _with_int_defaults(symbols, query.inputs, frame)
    problems = b.problems or _bind_placeholders(b, symbols, bound_inputs, sym or {}, values)
    if problems:
        return KeyMatch(bound=given, key=key, fits=False, reasons=tuple(problems), symbols=symbols)
    reasons += _not_given(symbols, values)
    if sym:
        _check_sym_names(key, sym, symbols)
    m = _looked_up(catalog, key, symbols, values, len(symbols), given, tuple(reasons), tuple(b.notes))
    m = _at_split_count(catalog, m, frame)
    m = _at_size_boundary(catalog, m)
    m = _at_retrace(catalog, m, frame)
    raises = outside_own_range(query.inputs) or mark_range_problem(m, query.inputs)
    if raises is not None:
        m = replace(m, raises=raises)
    return replace(m, assumed=tuple(b.assumed.items())) if b.assumed else m


def _at_split_count(catalog: Catalog, m: KeyMatch, frame: KeyFrame | None) -> KeyMatch:
    """A key every entry of which the call fails, where the call splits a tensor into
    another number of pieces than the key's graph reads, every one of which the code
    reads (:func:`~fxcache_core.lookup.split_counts.split_count_differs`): another graph."""
    if m.status != "miss" or m.hit is not None or m.aborted is not None or not m.fits or \
            not m.entries or any(v.outcome != "fail" for v in m.entries):
        return m
    why = split_count_differs(m.entries[0].guards_expr, m.symbols, {p: v for p, v in m.values if v is not None},
                              lambda: graph_text(catalog, m.key), frame or (lambda: None))
    return m if why is None else KeyMatch(key=m.key, fits=False, bound=m.bound, symbols=m.symbols, reasons=(why,))


def _at_size_boundary(catalog: Catalog, m: KeyMatch) -> KeyMatch:
    """A key every entry of which the call fails, where the call brings a size of its
    graph to 0 or 1 (:func:`~fxcache_core.lookup.boundaries.size_boundary`): where
    Dynamo solves that size for an input dim, the dim is traced static and the key
    does not fit (another graph); elsewhere the lookup is undecided (``uncertain``), between
    a new entry of this key and another graph."""
    if m.status != "miss" or m.hit is not None or m.aborted is not None or \
            not any(v.outcome == "fail" for v in m.entries):
        return m
    if specializing_clause(m.entries, {p: v for p, v in m.values if v is not None}) is not None:
        return m  # a symbol Dynamo solves for its value: _at_retrace says so
    graph = graph_text(catalog, m.key)
    b = size_boundary(graph, m.symbols, dict(m.values)) if graph is not None else None
    if b is None:
        return m
    if b.solved is not None:
        dim, value = b.solved
        return KeyMatch(key=m.key, fits=False, bound=m.bound, symbols=m.symbols, reasons=(Reason(
            f"{b.shown} is 1 for this call, a size of this key's graph its entries keep from 1: torch "
            f"specializes a size that reaches 1 (0/1 specialization), solves {b.shown} == 1 for "
            f"{dim} = {value} and traces {dim} static: another graph", "size-boundary-specialized"),))
    failed = next(v for v in m.entries if v.outcome == "fail")
    clause = failed.user_clause(m.user_names) or "its guards"
    return replace(m, uncertain=m.uncertain + (Reason(
        f"{b.shown} is {b.value} for this call, a size of this key's graph its entries keep from "
        f"{b.value} (entry {failed.entry.name[:16]} fails {clause}): torch specializes a size that reaches "
        f"0 or 1 and traces again; whether that graph is this key's (a new entry) or another depends on "
        f"what the code does with {b.shown}, which the cache does not show (torch compiles either way)",
        "size-boundary"),))


def _at_retrace(catalog: Catalog, m: KeyMatch, frame: KeyFrame | None = None) -> KeyMatch:
    """A key every entry of which the call fails on a clause whose failure makes Dynamo
    trace another way (:mod:`~fxcache_core.lookup.retrace`): ``tN != c`` with ``tN`` given
    ``c`` (the symbol is specialized: another graph or a new entry of this key), an
    equality (a new entry of this key, another graph or an error), a comparison of two
    inputs, or any other clause (:func:`_at_size_branch`): undecided, naming the clause.
    A failed clause is never read as a new entry of this key (a MISS): nothing in the
    cache shows that the trace does not branch on it."""
    if m.status != "miss" or m.hit is not None or m.aborted is not None or not m.fits:
        return m
    values = {p: v for p, v in m.values if v is not None}
    names = placeholder_names(m.symbols)
    spec = specializing_clause(m.entries, values)
    if spec is not None and spec.placeholder is not None:
        who = names.get(spec.placeholder, spec.placeholder)
        return replace(m, uncertain=m.uncertain + (Reason(
            f"{who}={spec.value} fails {who} != {spec.value}: while tracing this key's graph Dynamo checked "
            f"whether {who} is {spec.value}; this call's trace finds it is and specializes {who} to "
            f"{spec.value}. Where that changes the graph Dynamo records (a view's size list) torch traces "
            f"another graph; where it does not (a slice's bound) it is this key's graph, a new entry, which "
            "Inductor compiles again. The cache does not show which (torch compiles either way)",
            "value-specialized"),))
    eq = failed_equality(m.entries, values)
    if eq is None:
        rel = failed_relation(m.entries, values)
        if rel is None:
            return _at_size_branch(catalog, m, values, frame)
        return replace(m, uncertain=m.uncertain + (Reason(
            f"this call fails {clause_in_user_terms(rel.text, names)}, a comparison of two inputs the trace of "
            "this key's graph made (a slice's end against the size it slices, two sizes a broadcast relates): "
            "torch traces the call again, and whether the ops the other way give this key's graph (a new entry), "
            "another graph, or an error the cache does not show (torch compiles either way, unless the call "
            "raises)", "relation-failed"),))
    shown = clause_in_user_terms(eq.text, names)
    return replace(m, uncertain=m.uncertain + (Reason(
        f"this call fails {shown}, an equality the trace of this key's graph relied on: torch traces the "
        "call again, and whether that gives this key's graph (a new entry), another graph, or an error "
        "depends on what the code does where it checked it, which the cache does not show (torch compiles "
        "either way, unless the call raises)", "equality-failed"),))


def _at_size_branch(catalog: Catalog, m: KeyMatch, values: Mapping[str, int], frame: KeyFrame | None) -> KeyMatch:
    """A key an entry of which the call fails, and none passes, on a clause the rules above
    do not read (a bound, ``x.size(1) * x.size(0) <= 64``, ``not (x.size(0) == 2 or ...)``):
    undecided, naming the clause; ``size-branch`` with the line where the key's code orders
    values in Python (:func:`_ordering`), else ``bound-failed`` (module doc of
    :mod:`~fxcache_core.lookup.retrace`: the cache does not show the check behind the clause)."""
    names = placeholder_names(m.symbols)
    each = [(i, c) for i, v in enumerate(m.entries) if v.outcome == "fail" and (c := v.user_clause(names))]
    if not each:
        return m
    clause = " and ".join(c + (f" (#{i})" if len(m.entries) > 1 else "") for i, c in each)
    found = _ordering(catalog, m.key, frame)
    if found is not None:
        function, line, text = found
        bound = failed_bound(m.entries, values)
        return replace(m, uncertain=m.uncertain + (Reason(
            f"this call fails {clause_in_user_terms(bound.text, names) if bound else clause}, and {function} compares values in Python (line {line}: `{text}`): if "
            "that check made the clause, this call's trace goes the other way there, and whether that gives "
            "this key's graph (a new entry) or another the cache does not show (torch compiles either way)",
            "size-branch"),))
    return replace(m, uncertain=m.uncertain + (Reason(
        f"this call fails {clause}, a check the trace of this key's graph made, and the cache does not show "
        "whose: torch traces the call again, and where the code branches on it (an if, a helper, a loop) "
        "that gives another graph, where an op checks it (torch._check, a pad or a window's size) an error, "
        "and only where neither does it gives this key's graph (a new entry)", "bound-failed"),))


def _ordering(catalog: Catalog, key: CacheKey, frame: KeyFrame | None) -> tuple[str, int, str] | None:
    """The first place (function, line, text) where the key's compiled frame, or a function
    its printed graph has ops from (a callee Dynamo inlined), orders values in Python
    (:attr:`~fxcache_core.functions.params.FrameReads.order_tests`); None where none
    that can be read does (which proves nothing: a helper with no op in the graph is not
    read)."""
    cf = frame() if frame is not None else None
    frames = [cf] if cf is not None else []
    graph = graph_text(catalog, key)
    seen = {(cf.file, cf.function)} if cf is not None else set()
    for text in (graph or "").splitlines()[:MAX_GRAPH_LINES]:
        c = graph_comment(text)
        if c is not None and (c.file, c.function) not in seen and len(seen) < _MAX_CALLEES:
            seen.add((c.file, c.function))
            frames.append(CompiledFrom(function=c.function, file=c.file, line=c.line))
    for f in frames:
        reads = frame_reads(f)
        if isinstance(reads, FrameReads) and reads.order_tests:
            line, text = reads.order_tests[0]
            return reads.function, line, text
    return None


_MAX_CALLEES = 64


def _tensor_count_differs(readable: Readable, query: CallQuery) -> Reason | None:
    """With ``query.positional``: why the FX graph (tensor inputs named ``#0``...) is not
    the call's, when it has another number of tensor inputs than given; None when
    the numbers agree or no entry is readable."""
    if not readable:
        return None
    n_tensors = sum(1 for i in readable[0][1].inputs if i.source)
    if n_tensors == len(query.positional):
        return None
    return Reason(f"the graph has {n_tensors} tensor inputs, given {len(query.positional)} with {param('arg')}",
                  "arg-count-differs")


def _fit_entry(catalog: Catalog, key: CacheKey, d0: DecodedEntry, query: CallQuery,
               symbols: tuple[SymbolInfo, ...], extra: Mapping[str, str], positional: bool,
               siblings: Callable[[], Sequence[Sibling]] | None, auto: Auto | None,
               frame: KeyFrame | None = None) -> Binding:
    """The key's first readable entry ``d0`` fitted to the call (its inputs already
    renamed to the key's sources): :func:`~fxcache_core.lookup.fit.fit`, then the
    scalars automatic dynamic makes inputs the key does not take
    (:func:`~fxcache_core.lookup.phases.auto_scalars_taken`) and the floats the
    key baked in (:func:`~fxcache_core.lookup.fit_floats.fit_baked_floats`, which reads
    the key's compiled ``frame`` for what the function computes with them)."""
    b = fit(d0, replace(query, pgo=query.pgo_state(catalog)),
            hints={s.expr: s.hint for s in symbols if s.expr and s.hint is not None},
            guards=d0.guards_expr, auto=auto.scalars | auto.strides if auto else frozenset(), siblings=siblings)
    if auto and auto.scalars and not positional:
        auto_scalars_taken(b, d0, query.inputs, auto)
    if not positional and any(isinstance(v, float) for v in query.inputs.values()):
        fit_baked_floats(catalog, key, b, query.inputs, input_bases(d0, extra), query.mode,
                         frame if frame is not None else KeyFrame(catalog, key))
    return b


def _once(f: Callable[[], Sequence[Sibling]]) -> Callable[[], Sequence[Sibling]]:
    """``f``, called at most once."""
    memo: list[Sequence[Sibling]] = []

    def once() -> Sequence[Sibling]:
        if not memo:
            memo.append(f())
        return memo[0]
    return once


def _named_by_symbols(catalog: Catalog, key: CacheKey, readable: Readable,
                      inputs: Mapping[str, InputValue], frame: KeyFrame | None) -> NamedInputs | None:
    """An FX key no AOTAutograd entry loads (torch bypassed the AOTAutograd cache): its
    inputs named by its symbols' names (:mod:`fxcache_core.lookup.symbol_names`); None
    for other keys, or when the inputs do not explain every symbol."""
    if (not readable or key.kind is not KeyKind.FX_GRAPH or catalog.loaders_of(key.key)
            or not key_symbols(readable[0][1])):
        return None
    f = frame() if frame is not None else None
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


_PARAM_SOURCE_RE = re.compile(r"^L\['(\w+)'\]$")


def _with_int_defaults(symbols: Sequence[SymbolInfo], inputs: Mapping[str, InputValue],
                       frame: KeyFrame | None) -> Mapping[str, InputValue]:
    """``inputs`` with the int default of each parameter of the key's compiled frame that
    a placeholder takes as its source (``L['h']``), where the call leaves it out: the value
    the frame's local has when Dynamo enters it. Only a default written as an int literal in
    the ``def`` read now (:func:`~fxcache_core.functions.params.frame_reads`: not where the
    source cannot be read, or a line it was traced from changed since), of a frame compiled
    itself (not a module called whole, a resumed frame or one under a decorator's wrapper),
    not of a function a ``functools.partial`` in its file binds (a call through it gives
    the frame the partial's values). ``inputs`` unchanged where none applies."""
    wanted = {m[1] for s in symbols if s.source and (m := _PARAM_SOURCE_RE.match(s.source))}
    cf = frame() if wanted and frame is not None else None
    if cf is None or cf.whole_module or cf.parent is not None or cf.wrappers:
        return inputs
    given = {c for src in inputs for c in candidates(src, cf.params)}  # by name or position
    wanted = {n for n in wanted if not any(g == f"L['{n}']" or g.startswith((f"L['{n}'][", f"L['{n}'].")) for g in given)}
    reads = frame_reads(cf)
    if not isinstance(reads, FrameReads) or reads.function != cf.function or partial_bindings(cf.file, cf.function):
        return inputs
    defaults: dict[str, InputValue] = {}
    for n in sorted(wanted):
        p = reads.param(n)
        if p is not None and p.default.given and p.default.literal and type(p.default.value) is int:
            defaults[f"L['{n}']"] = p.default.value
    return {**defaults, **inputs} if defaults else inputs


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
        uncertain=uncertain + fx_load_doubts(catalog, key, lk.hit),
    )
