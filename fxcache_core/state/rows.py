"""How an entry is kept as an index row: the light form of a decoded entry, as JSON.

:func:`light` is what a scan of many entries keeps in memory (no debug lines, no
printed forward graph, strings interned and equal values shared); :func:`to_json`
writes that form (or, ``full``, the whole entry) as compact JSON, and
:func:`from_json` reads it back. JSON, never pickle: a tampered row can at worst
mislead, and :func:`from_json` raises on anything that is not such a row.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace

from fxcache_core.cache.keys import KeyKind
from fxcache_core.decode.code_scan import ForeignGlobal
from fxcache_core.decode.entries import DecodedEntry, FxRef, GraphInput, Origin


def _i(s: str | None) -> str | None:
    return None if s is None else sys.intern(s)


def _light_input(i: GraphInput) -> GraphInput:
    return GraphInput(i.position, _i(i.name), sys.intern(i.type), _i(i.expr), i.aot_index, _i(i.source))


_COMPACT = json.JSONEncoder(separators=(",", ":"), check_circular=False)
"""``json.dumps(obj, separators=(",", ":"))`` without making an encoder per call (nor its
check for cycles: a row is built fresh from tuples, never cyclic)."""

_SHARED: dict = {}


def _share(x):
    """One object for equal values across entries (the inputs, sources, origins and
    hints of a function's entries are mostly the same): memory, not semantics."""
    if len(_SHARED) > 1_000_000:
        _SHARED.clear()
    return _SHARED.setdefault(x, x)


def light(d: DecodedEntry) -> DecodedEntry:
    """``d`` as a scan of many entries keeps it in memory: without its debug lines
    (those of its FX refs too), its printed forward graph and the globals its
    pickle named (but those torch does not write, ``foreign``, kept), and with the
    strings many entries repeat (types, sources, file names) interned."""
    def ref(r: FxRef | None) -> FxRef | None:
        return None if r is None else FxRef(sys.intern(r.key), r.guards_expr)

    o = d.origin
    return replace(
        d, debug_lines=(), globals_seen=frozenset(), forward_graph=None,
        type_name=sys.intern(d.type_name),
        inputs=_share(tuple(_light_input(i) for i in d.inputs)),
        arg_sources=_share(tuple(_i(a) for a in d.arg_sources)),
        forward=ref(d.forward), backward=ref(d.backward), hints=_share(d.hints),
        requires_grad=_share(d.requires_grad),
        origin=None if o is None else _share(Origin(sys.intern(o.function), sys.intern(o.file), o.line,
                                                    tuple(sys.intern(f) for f in o.functions),
                                                    o.outer)),
    )


_TEXTS: dict[int, tuple[object, str]] = {}


def _text_of(value: tuple | Origin, build) -> str:
    """The JSON text of ``build(value)``, the JSON-ready lists of one of an entry's
    tuples, remembered by the tuple's identity for the entries that share it (a key's
    entries do: the decoder and :func:`from_json` give them one object each)."""
    got = _TEXTS.get(id(value))
    if got is not None and got[0] is value:
        return got[1]
    out = _COMPACT.encode(build(value))
    if len(_TEXTS) >= 256:
        _TEXTS.clear()
    _TEXTS[id(value)] = (value, out)  # kept alive with its text: its id stays its own
    return out


def _inputs_listed(inputs: tuple[GraphInput, ...]) -> list:
    return [[i.position, i.name, i.type, i.expr, i.aot_index, i.source] for i in inputs]


def _hints_listed(hints: tuple[tuple[str, int], ...]) -> list:
    return [list(h) for h in hints]


def _origin_listed(o: Origin) -> list:
    return [o.function, o.file, o.line, list(o.functions), [list(f) for f in o.outer]]


_SCALARS = {None: "null", True: "true", False: "false"}


def _scalar(v: object) -> str:
    """The JSON text of one of a row's scalars (a str, an int, a flag or None), as the
    encoder writes it inside the row."""
    t = type(v)
    if t is str:
        return _COMPACT.encode(v)
    if v is None or t is bool:
        return _SCALARS[v]  # type: ignore[index]
    if t is int:
        return int.__repr__(v)  # type: ignore[arg-type]
    return _COMPACT.encode(v)


def _ref_text(r: FxRef | None) -> str:
    return "null" if r is None else f"[{_scalar(r.key)},{_scalar(r.guards_expr)}]"


def to_json(d: DecodedEntry, full: bool = False) -> str:
    """The light form of ``d`` as compact JSON (written by hand: ``dataclasses.asdict``
    deep-copies and costs more than decoding the entry); ``full``: with what the light
    form drops (the debug lines, those of its FX refs, the globals its pickle named,
    the printed forward graph), for :func:`from_json` to give ``d`` back whole.

    The text is what ``json.dumps(row, separators=(",", ":"))`` writes of the row's
    list, put together from the text of each of its values: those a key's entries
    share (inputs, sources, hints, origin) are encoded once."""
    o = d.origin
    parts = [
        _scalar(d.kind.value), _scalar(d.type_name), _scalar(d.guards_expr),
        _text_of(d.inputs, _inputs_listed),
        _scalar(d.fx_key), _scalar(d.is_backward), _scalar(d.wrapper_key),
        _ref_text(d.forward), _ref_text(d.backward),
        _text_of(d.arg_sources, list), _scalar(d.compile_time_ns), _text_of(d.hints, _hints_listed),
        "null" if o is None else _text_of(o, _origin_listed),
        _COMPACT.encode([[f.name, list(f.uses), f.call] for f in d.foreign]) if d.foreign else "[]",
        _COMPACT.encode([list(a) for a in d.absent]) if d.absent else "[]",
        _COMPACT.encode(list(d.requires_grad)),
    ]
    if full:
        parts.append(_COMPACT.encode([list(d.debug_lines), sorted(d.globals_seen), d.forward_graph,
                                      None if d.forward is None else list(d.forward.debug_lines),
                                      None if d.backward is None else list(d.backward.debug_lines)]))
    return "[" + ",".join(parts) + "]"


def _shared_from_raw(build, key: tuple, raw: list):
    """The shared object ``build(raw)`` for a JSON value, looked up by ``key`` (the
    raw value as a tuple), so the entries of one function build their inputs,
    origin, hints and sources once."""
    k = (build, key)
    got = _SHARED.get(k)
    if got is None:
        got = _share(build(raw))
        _SHARED[k] = got
    return got


def _inputs_of(raw: list) -> tuple[GraphInput, ...]:
    return tuple(_light_input(GraphInput(*i)) for i in raw)


def _origin_of(o: list) -> Origin:
    outer = tuple((sys.intern(f[0]), sys.intern(f[1]), int(f[2])) for f in o[4]) if len(o) > 4 else ()
    return Origin(sys.intern(o[0]), sys.intern(o[1]), o[2], tuple(sys.intern(f) for f in o[3]), outer)


def _hints_of(raw: list) -> tuple[tuple[str, int], ...]:
    return tuple((sys.intern(str(k)), int(v)) for k, v in raw)


def _arg_sources_of(raw: list) -> tuple[str | None, ...]:
    return tuple(_i(a) for a in raw)


def _grads_of(raw: list) -> tuple[bool | None, ...]:
    return tuple(g if isinstance(g, bool) else None for g in raw)


def from_json(text: str) -> DecodedEntry:
    """Rebuild a :class:`DecodedEntry` from :func:`to_json`: equal to :func:`light` of
    the entry that was written (sharing as it does), or to the entry itself when it
    was written ``full``. The FX keys and guards strings are interned: an AOTAutograd
    entry, the FX refs it records and the FX entries they name hold one string each
    (a plan of 100,000 entries keeps them all).

    Raises:
        ValueError, KeyError, TypeError, IndexError: the text is not such JSON.
    """
    (kind, type_name, guards, inputs, fx_key, is_bw, wrapper, fw, bw, arg_sources, t_ns, hints,
     origin, foreign, absent, grads, *rest) = _loads(text)
    d = DecodedEntry(
        kind=_KINDS[kind] if type(kind) is str else KeyKind(kind), type_name=sys.intern(type_name), guards_expr=_i(guards),
        inputs=_shared_from_raw(_inputs_of, tuple(map(tuple, inputs)), inputs),
        fx_key=_i(fx_key), is_backward=is_bw, wrapper_key=wrapper,
        forward=None if fw is None else FxRef(sys.intern(fw[0]), _i(fw[1])),
        backward=None if bw is None else FxRef(sys.intern(bw[0]), _i(bw[1])),
        arg_sources=_shared_from_raw(_arg_sources_of, tuple(arg_sources), arg_sources),
        compile_time_ns=t_ns,
        hints=_shared_from_raw(_hints_of, tuple(map(tuple, hints)), hints),
        origin=None if origin is None else _shared_from_raw(
            _origin_of, (*origin[:3], tuple(origin[3]),
                         tuple(map(tuple, origin[4])) if len(origin) > 4 else ()), origin),
        foreign=tuple(ForeignGlobal(str(n), tuple(map(str, u)), str(c)) for n, u, c in foreign),
        absent=tuple((str(a[0]), str(a[1])) for a in absent),
        requires_grad=_shared_from_raw(_grads_of, tuple(grads), grads),
    )
    if not rest:
        return d
    debug, seen, fw_graph, fw_debug, bw_debug = rest[0]
    return replace(
        d, debug_lines=tuple(debug), globals_seen=frozenset(seen), forward_graph=fw_graph,
        forward=None if d.forward is None else replace(d.forward, debug_lines=tuple(fw_debug)),
        backward=None if d.backward is None else replace(d.backward, debug_lines=tuple(bw_debug)))


PLAN_FIELDS = ("kind", "type_name", "guards_expr", "fx_key", "is_backward", "wrapper_key", "forward",
               "backward", "compile_time_ns")
"""The fields of an entry that a gc or rm plan reads (its FX refs, its guards string, its
wrapper module, its compile time, and what it is)."""


class PlanFacts(DecodedEntry):
    """An index row read as a plan reads it: :data:`PLAN_FIELDS` only, each in a slot (no
    dict per entry: about a sixth of a light entry's memory); ``inputs`` reads as ``()`` and
    any other field raises AttributeError: only for a catalog whose every
    reader is a plan (``Catalog(plan_only=True)``). Equal to another only if both are facts."""

    __slots__ = PLAN_FIELDS
    inputs = ()

    def __init__(self, kind: KeyKind, type_name: str, guards_expr: str | None, fx_key: str | None,
                 is_backward: bool | None, wrapper_key: str | None, forward: FxRef | None,
                 backward: FxRef | None, compile_time_ns: int | None) -> None:
        put = object.__setattr__  # frozen: the slots are set once, here
        put(self, "kind", kind)
        put(self, "type_name", type_name)
        put(self, "guards_expr", guards_expr)
        put(self, "fx_key", fx_key)
        put(self, "is_backward", is_backward)
        put(self, "wrapper_key", wrapper_key)
        put(self, "forward", forward)
        put(self, "backward", backward)
        put(self, "compile_time_ns", compile_time_ns)

    def __eq__(self, other: object) -> bool:
        return type(other) is PlanFacts and plan_facts(self) == plan_facts(other)

    def __hash__(self) -> int:
        return hash(plan_facts(self))

    def __repr__(self) -> str:
        return f"PlanFacts{plan_facts(self)!r}"


class _NotRead:
    """A field of :class:`DecodedEntry` that :class:`PlanFacts` does not hold: reading it
    raises, so a plan rule that starts reading another field fails in the tests instead
    of seeing the dataclass's default."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: object, owner: type | None = None) -> object:
        if obj is None:
            return self
        raise AttributeError(f"{self.name}: not among the fields a plan reads (PLAN_FIELDS); "
                             "open the catalog without plan_only to read it")


for _name in DecodedEntry.__dataclass_fields__:
    if _name not in PLAN_FIELDS and _name != "inputs":
        setattr(PlanFacts, _name, _NotRead(_name))


def plan_facts(d: DecodedEntry) -> tuple:
    """What a plan reads of ``d`` (:data:`PLAN_FIELDS`, an FX ref as its key and guards
    string), as a tuple: equal for an entry's light form, whole form and :class:`PlanFacts`."""
    def ref(r: FxRef | None) -> tuple[str, str | None] | None:
        return None if r is None else (r.key, r.guards_expr)

    return (d.kind, d.type_name, d.guards_expr, d.fx_key, d.is_backward, d.wrapper_key, ref(d.forward),
            ref(d.backward), d.compile_time_ns)


def _opt_str(v: object) -> str | None:
    if v is None or type(v) is str:
        return v
    raise TypeError(f"not a string: {type(v).__name__}")


def _ref_of(v: object) -> FxRef | None:
    if v is None:
        return None
    if type(v) is not list or len(v) < 2 or type(v[0]) is not str:
        raise TypeError("not an FX ref")
    return FxRef(sys.intern(v[0]), _i(_opt_str(v[1])))


def plan_facts_from_json(text: str) -> PlanFacts:
    """The :class:`PlanFacts` of a row :func:`to_json` wrote: :func:`plan_facts` of
    :func:`from_json` of it, without building the rest (the inputs, sources, hints and
    origin). Each field read is type-checked; the strings are interned as
    :func:`from_json` interns them.

    Raises:
        ValueError, KeyError, TypeError, IndexError: the text is not such a row.
    """
    row = _loads(text)
    if type(row) is not list or len(row) < 16:
        raise ValueError("not an index row")
    kind, type_name, guards, _inputs, fx_key, is_bw, wrapper, fw, bw, _sources, t_ns = row[:11]
    if type(type_name) is not str or not (is_bw is None or type(is_bw) is bool) \
            or not (t_ns is None or type(t_ns) is int):
        raise TypeError("not an index row")
    facts = _new_facts(PlanFacts)  # the slots set as PlanFacts.__init__ sets them, without its calls
    _set_kind(facts, _KINDS[kind] if type(kind) is str else KeyKind(kind))
    _set_type(facts, sys.intern(type_name))
    _set_guards(facts, _i(_opt_str(guards)))
    _set_fx_key(facts, _i(_opt_str(fx_key)))
    _set_bw(facts, is_bw)
    _set_wrapper(facts, _opt_str(wrapper))
    _set_fw_ref(facts, None if fw is None else _ref_of(fw))
    _set_bw_ref(facts, None if bw is None else _ref_of(bw))
    _set_time(facts, t_ns)
    return facts


def _loads(text: str) -> object:
    """``json.loads(text)``: the text as compact JSON of one value with nothing around it
    (as :func:`to_json` writes a row) read by the decoder's scanner alone, anything
    else by ``json.loads`` itself (the same value, or the same error)."""
    try:
        value, end = _scan(text, 0)
    except StopIteration:
        return json.loads(text)
    return value if end == len(text) else json.loads(text)


_scan = json.JSONDecoder().scan_once
_KINDS = {k.value: k for k in KeyKind}
"""``KeyKind(value)`` for a str, as a dict lookup (a KeyError where it raises ValueError)."""
_new_facts = object.__new__
(_set_kind, _set_type, _set_guards, _set_fx_key, _set_bw, _set_wrapper, _set_fw_ref, _set_bw_ref,
 _set_time) = (PlanFacts.__dict__[n].__set__ for n in PLAN_FIELDS)
