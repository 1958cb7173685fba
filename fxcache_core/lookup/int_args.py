"""Int arguments on a fresh process's first call: which key torch looks up.

Dynamo treats an int argument as it treats a tensor dim (``_automatic_dynamic``
and ``wrap_symint`` in torch/_dynamo/variables/builder.py): under
``dynamic=None`` (automatic dynamic) and ``dynamic=False`` the first call of a
fresh process traces it *static*: its value is baked into the graph as a
constant (Dynamo guards ``L['n'] == 2``; that guard is not in the cache), so
that key serves only calls with that value. A later call with another value
recompiles with the int a SymInt input (``Sym(s86)``, source ``L['n']``), a
key of its own. A fresh process never starts with that second key: its first
call bakes in its own value, and looks up the key traced with that value.

The cache records which input a SymInt came from (the AOTAutograd entry's
sources), but not which value a static key baked in. This module reads it by
aligning the static key's printed forward graph with that of a key of the
same function that takes the int as a SymInt (:func:`specialized_values`):
where the graphs are equal but for the SymInt placeholders, each of which
stands where the static graph has one constant, that constant is the value.
Where they differ in anything else, the value is not known and the verdict
is undecided, never guessed.

:func:`int_argument_rule` applies this to one AOTAutograd key for a call
(:class:`IntArgsCall`);
:mod:`fxcache_core.lookup.match` uses it. Nothing here imports torch.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey
from fxcache_core.catalog.reader import Catalog
from fxcache_core.decode.entries import (
    DecodedEntry,
    GraphInput,
    Origin,
)
from fxcache_core.errors import param
from fxcache_core.functions.frames import CompiledFrom, compiled_from
from fxcache_core.lookup.binding import DynamicMode, InputValue, TensorArg
from fxcache_core.lookup.branch_ints import branched_only
from fxcache_core.lookup.fit_floats import baked_provenance
from fxcache_core.lookup.floats import baked_floats, graph_text
from fxcache_core.lookup.given_tensors import input_type, tensors_not_given
from fxcache_core.lookup.inputs import candidates, taken_sources
from fxcache_core.lookup.optional_tensors import (
    float_default_tensorified,
    item_not_taken,
    list_element,
    tensor_default_unseen,
    tensor_given,
    tensor_left_out,
)
from fxcache_core.lookup.pinned import judge_pinned, pinned_items, pinned_value
from fxcache_core.lookup.printed_graphs import PrintedGraph, parse_printed_graph, specialized_values
from fxcache_core.lookup.pyvalues import PyValue
from fxcache_core.lookup.sequence_lengths import element_of, shorter_sequence, vararg_name
from fxcache_core.lookup.source_values import LOCAL_RE, is_param
from fxcache_core.lookup.symbol_names import name_inputs
from fxcache_core.reasons import Reason, code_of


@dataclass(frozen=True, slots=True)
class IntRule:
    """What the int arguments of a call say about one AOTAutograd key.

    Attributes:
        problems: why the call cannot look this key up (the key does not fit):
            ``int-baked-differs``.
        notes: what keeps the verdict undecided, with the reason
            (``int-constant-sibling``, ``int-not-input``, ``int-graphs-differ``,
            ``int-depends-on-mode``, ``pgo-state-unread``).
        about: per input of the call the rule spoke of (the user's source), what it
            said: ``problem``, ``note``, or ``baked`` (the value the key baked in was
            read, and is the call's), with the reason; the parameters' accounting
            (:mod:`fxcache_core.lookup.accounting`) reads it.
    """

    problems: tuple[Reason, ...] = ()
    notes: tuple[Reason, ...] = ()
    about: tuple[tuple[str, str, Reason], ...] = ()


class FunctionKeys:
    """The AOTAutograd keys of each traced function, with their first readable
    entry, and their printed forward graphs (read on demand, once).

    One per ``match`` call: the first use decodes every AOTAutograd entry
    (the light form; :meth:`graph` decodes one entry in full).
    """

    def __init__(self, catalog: Catalog) -> None:
        self._catalog = self.catalog = catalog
        self._by_fn: dict[tuple[str, str], list[tuple[CacheKey, DecodedEntry]]] | None = None
        self._graphs: dict[str, PrintedGraph | None] = {}
        self._resumed: set[str] | None = None
        self._taken: dict[int, tuple[DecodedEntry, set[str]]] = {}
        self._fx_only: dict[tuple[str, str], list[tuple[CacheKey, DecodedEntry]]] | None = None

    def of(self, origin: Origin) -> list[tuple[CacheKey, DecodedEntry]]:
        """The AOTAutograd keys traced from ``origin``'s function (same name and file)."""
        if self._by_fn is None:
            self._by_fn = {}
            for k in self._catalog.scan.keys:
                if k.kind is not KeyKind.AOT_AUTOGRAD:
                    continue
                first = self._catalog.first_readable(k)
                if first is not None and (d := first[1]).origin is not None:
                    self._by_fn.setdefault((d.origin.function, d.origin.file), []).append((k, d))
        return self._by_fn.get((origin.function, origin.file), [])

    def taken(self, d: DecodedEntry) -> set[str]:
        """:func:`~fxcache_core.lookup.inputs.taken_sources` of ``d``, remembered (each key asks of its siblings')."""
        if (got := self._taken.get(id(d))) is None or got[0] is not d:
            got = self._taken[id(d)] = (d, taken_sources(d))
        return got[1]

    def floats(self, key: CacheKey, name: str) -> tuple[float, ...] | None:
        """:func:`~fxcache_core.lookup.floats.baked_floats` of ``key`` for parameter ``name``."""
        return baked_floats(self._catalog, key, name)

    def fx_only_of(self, origin: Origin) -> list[tuple[CacheKey, DecodedEntry]]:
        """The FX keys traced from ``origin``'s function that no AOTAutograd entry loads
        (looked up by their own guards), with their first readable entry."""
        if self._fx_only is None:
            self._fx_only = {}
            for k in self._catalog.scan.keys:
                if k.kind is not KeyKind.FX_GRAPH or self._catalog.loaders_of(k.key):
                    continue
                first = self._catalog.first_readable(k)
                if first is not None and (d := first[1]).origin is not None:
                    self._fx_only.setdefault((d.origin.function, d.origin.file), []).append((k, d))
        return self._fx_only.get((origin.function, origin.file), [])

    def fx_graph(self, key: CacheKey) -> PrintedGraph | None:
        """The printed post-grad graph of an FX key's first entry that holds one."""
        if "fx:" + key.key not in self._graphs:
            self._graphs["fx:" + key.key] = parse_printed_graph(graph_text(self._catalog, key))
        return self._graphs["fx:" + key.key]

    def baked_in_fx(self, entry: DecodedEntry, dynamic: list[tuple[CacheKey, GraphInput]]
                    ) -> tuple[int, CacheKey, GraphInput] | None:
        """:func:`_baked_in` for FX keys that take the int as a SymInt: the graph compared
        is that of the FX key the AOTAutograd ``entry`` loads (both post-grad graphs)."""
        fx = self._catalog.scan.key(entry.forward.key) if entry.forward is not None else None
        static = self.fx_graph(fx) if fx is not None else None
        if static is None:
            return None
        found = []
        for other, inp in dynamic:
            g = self.fx_graph(other)
            values = specialized_values(g, static) if g is not None else None
            v = values.get(inp.name or "", values.get(inp.symbol or "")) if values is not None else None
            if v is not None:
                found.append((v, other, inp))
        return found[0] if found and len({v for v, _, _ in found}) == 1 else None

    def resumed(self, function: str) -> bool:
        """Whether a key of the cache was compiled from a resume frame of ``function``
        (a graph break in it; :attr:`~fxcache_core.functions.frames.CompiledFrom.parent`).
        The first use reads every key's compiled frame."""
        if self._resumed is None:
            self._resumed = {c.parent for k in self._catalog.scan.keys
                             if (c := compiled_from(self._catalog, k)) is not None and c.parent}
        return function in self._resumed

    def graph(self, key: CacheKey) -> PrintedGraph | None:
        """The printed forward graph of the key's first readable entry."""
        if key.key not in self._graphs:
            first = self._catalog.first_readable(key, full=True)
            self._graphs[key.key] = parse_printed_graph(first[1].forward_graph) if first is not None else None
        return self._graphs[key.key]


def _symint_input(d: DecodedEntry, source: str) -> GraphInput | None:
    return next((i for i in d.inputs if i.source == source and i.is_symint), None)


@dataclass(frozen=True, slots=True)
class IntArgsCall:
    """One AOTAutograd key and the call whose int arguments (and the floats, 0-d
    tensors and tensors given where the key may take none) :func:`int_argument_rule`
    judges against it.

    Attributes:
        key: the AOTAutograd key.
        entry: its first readable entry (torch's order).
        origin: where its graph was traced from; the keys traced from the same
            function (name and file) are its siblings (:meth:`FunctionKeys.of`).
        inputs: the call's inputs by the user's sources (``L['n']`` -> 9).
        mode: the call's ``torch.compile(dynamic=...)``
            (:class:`~fxcache_core.lookup.binding.DynamicMode`).
        pgo: the cache dir holds profile-guided automatic-dynamic state
            (torch/_dynamo/pgo.py) fxcache could not read: nothing is ruled out,
            only noted.
        of_function: the call is known to be of this key's function (``--fn``).
        params, keywords: the positional and the keyword-only parameter names of the
            key's compiled frame (taken from ``frame`` when it is given).
        unread: the parameters the frame's source never reads, None when not known
            (taken from ``frame`` when it is given).
        frame: the key's compiled frame
            (:func:`~fxcache_core.functions.frames.compiled_from`), None when the
            cache records none.
    """

    key: CacheKey
    entry: DecodedEntry
    origin: Origin
    inputs: Mapping[str, InputValue]
    mode: DynamicMode
    pgo: bool = False
    of_function: bool = False
    params: Sequence[str] = ()
    unread: frozenset[str] | None = None
    frame: CompiledFrom | None = None
    keywords: Sequence[str] = ()
    settled: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if self.frame is not None:
            object.__setattr__(self, "params", self.frame.params)
            object.__setattr__(self, "unread", self.frame.unread)
            object.__setattr__(self, "keywords", self.frame.keywords)


def int_argument_rule(keys: FunctionKeys, call: IntArgsCall) -> IntRule:
    """How the call's int arguments (and the floats and 0-d tensors it gives where an
    int may have been) decide whether torch looks up ``key``.

    ``call`` (:class:`IntArgsCall`) is the key and the call; ``keys`` the cache's
    AOTAutograd keys by function (:class:`FunctionKeys`, one per ``match`` call).
    For each int the call gives (``L['n']`` -> 9), under ``call.mode``:

    * ``key`` takes it as a SymInt: under ``none``/``false`` the first call
      bakes it in, so a key where it is a SymInt is not looked up (checked by
      :func:`fxcache_core.lookup.fit.fit`); without ``--dynamic``, if the function also has a key
      where it is a constant, the verdict is undecided.
    * ``key`` does not take it, and a key of the same function takes it as a
      SymInt: the value ``key`` baked in is read by :func:`specialized_values`.
      Another value: the call traces another graph (a problem). The same
      value: ``key`` is torch's under ``none``/``false``; without ``--dynamic``
      undecided (under ``true`` the int is a SymInt). Not readable: undecided.
    * ``key`` does not take it and no key of the function does: whether the
      graph depends on it is unknown. With ``of_function`` (the call is known
      to be of this key's function, ``--fn``), or the input being a parameter of the
      key's compiled frame (``params``): undecided. Otherwise nothing says the
      function has such an argument, and the int is not this key's concern.

    A Python float or a 0-d tensor the call gives where ``key`` takes nothing
    (:func:`_not_an_int`): if ``key`` baked an int there (read as above), torch traces
    another graph (an int is a constant or a SymInt, a float a constant or a 0-d
    float64 input, a 0-d tensor a tensor input: ``VariableBuilder`` in
    torch/_dynamo/variables/builder.py wraps each its own way); otherwise, for a
    parameter of the function, undecided.

    A tensor the call gives where ``key`` takes nothing, for a parameter of the
    function: if it was None when ``key`` was traced (an optional ``attention_mask``),
    torch traces another graph; if the code never reads it, ``key`` is torch's. A tensor
    input of ``key`` the call does not give: if the call leaves it out, another graph.
    Both are undecided, unless the function's source shows the parameter is never read
    (``unread``, :attr:`~fxcache_core.functions.frames.CompiledFrom.unread`: then no
    value of it changes the graph, and nothing is said), or the function has a graph
    break (a key of a resume frame of it, or ``key`` is one): each graph then takes only
    the arguments its part of the code reads. ``frame``: the key's compiled frame, which
    gives ``params`` and ``unread``.

    ``dynamic=True`` is left alone for ints (the int is a SymInt on the first call;
    :func:`fxcache_core.lookup.fit.fit` binds it). ``pgo``: the cache dir holds Dynamo's
    profile-guided automatic-dynamic state (torch/_dynamo/pgo.py), which can
    make a first call's int dynamic: then nothing is ruled out, only noted.

    Mirrors ``_automatic_dynamic`` and ``wrap_symint`` in
    torch/_dynamo/variables/builder.py (see the module docstring). Raises nothing:
    the verdict is the returned :class:`IntRule`.
    """
    return _IntJudge(keys, call).run()


class _IntJudge:
    """One :func:`int_argument_rule`: the key's facts read once (what it takes, its
    siblings, whether its function has a graph break), and one step per kind of
    value the call gives."""

    def __init__(self, keys: FunctionKeys, call: IntArgsCall) -> None:
        self.keys, self.call = keys, call
        self.fn = call.origin.function
        self.taken = taken_sources(call.entry)
        self.problems: list[Reason] = []
        self.notes: list[Reason] = []
        self.about: list[tuple[str, str, Reason]] = []
        self.baked_why = Reason("", "baked-constant")
        self.unknown_why: Reason | None = None
        self._siblings: list[tuple[CacheKey, DecodedEntry]] | None = None
        self.vararg = vararg_name(call.frame)  # a `*xs` is a tuple parameter too

    def run(self) -> IntRule:
        call = self.call
        missing = [(src, why) for src, why in tensors_not_given(call.entry, call.inputs, call.params, self.vararg, call.keywords)
                   if not float_default_tensorified(src, input_type(call.entry, src), call.frame)]
        if missing and not self.broken():
            given = [c for s in call.inputs for c in candidates(s, call.params)]
            for src, why in missing:
                left_out = shorter_sequence(src, given, call.frame) or self.left_out(src)
                why = tensor_default_unseen(src, input_type(call.entry, src), call.frame) or why
                (self.problems if left_out is not None else self.notes).append(left_out or why)
        for user_src, value in call.inputs.items():
            if user_src in call.settled:
                continue  # recorded evidence says what the key was traced with
            before = (len(self.problems), len(self.notes))
            self.input(user_src, value)
            if len(self.problems) > before[0]:
                self.about.append((user_src, "problem", self.problems[-1]))
            elif len(self.notes) > before[1]:
                self.about.append((user_src, "note", self.notes[-1]))
        return IntRule(tuple(self.problems), tuple(self.notes), tuple(self.about))

    def input(self, user_src: str, value: InputValue) -> None:
        """What one input of the call says (a step of :meth:`run`)."""
        call = self.call
        if isinstance(value, PyValue):
            v = value.value
            if isinstance(v, tuple) and v and all(type(i) is int for i in v):
                self.pinned_tuple(user_src, v)
            return  # a bool, None, str or tuple: the parameters' accounting reads it
        src = next((c for c in candidates(user_src, call.params) if c in self.taken), user_src)
        # A parameter of this key's frame; where its source was not read, any input of
        # the function asked for (a resume frame's locals are not the first frame's).
        mine = is_param(user_src, call.params, call.keywords) if call.params or call.keywords else call.of_function
        if mine and call.unread is not None and (m := LOCAL_RE.fullmatch(user_src)) and m.group(1) in call.unread:
            return  # the function never reads it: no value of it changes the graph
        if isinstance(value, TensorArg) and value.same_as is not None:
            return  # the very tensor of another input: fxcache_core.lookup.aliased_inputs judges it
        if isinstance(value, TensorArg) and value.shape != ():
            self.tensor(user_src, src)
        elif type(value) is int and (pinned := pinned_value(call.entry, src)) is not None and pinned != value:
            self.pinned(src, value, pinned)
        elif not isinstance(value, int):
            if src not in self.taken and (isinstance(value, float)
                                          or (isinstance(value, TensorArg) and value.shape == ())):
                branched = isinstance(value, float) and call.mode is not DynamicMode.UNKNOWN and mine \
                    and branched_only(call.frame, user_src)
                _not_an_int(self.keys, call.key, src, value, self.siblings(), mine, self.problems, self.notes,
                            branched)
        elif call.mode is DynamicMode.TRUE:
            return
        elif src in self.taken:
            self.int_taken(src)
        elif call.mode is not DynamicMode.UNKNOWN and mine and branched_only(call.frame, user_src):
            return  # only branched on: the parameters' accounting reads the side its graph took
        elif self.int_baked(src, value, mine):
            self.about.append((user_src, "baked", self.baked_why))

    def pinned_tuple(self, user_src: str, value: tuple[int, ...]) -> None:
        """A tuple of ints whose items the key takes as SymInts Dynamo specialized
        (``L['dims'][0]`` is ``Sym(2)``), given with another item: as :meth:`pinned`."""
        for c in candidates(user_src, self.call.params):
            pins = pinned_items(self.call.entry, c, len(value))
            if pins and any(value[i] != p for i, p in pins.items()):
                self.pinned(c, value, "(" + ", ".join(str(pins.get(i, "?")) for i in range(len(value))) + ")")
                return

    def pinned(self, src: str, value: object, pinned: object) -> None:
        """An int (or a tuple's items) the key takes as SymInts Dynamo specialized, given
        another value: :func:`judge_pinned`'s problem or note."""
        kind, why = judge_pinned(self.keys.catalog, self.call.key, self.call.frame, self.call.inputs, src,
                                 value, pinned)
        (self.problems if kind == "problem" else self.notes).append(why)

    def broken(self) -> bool:
        """A graph break in the function (read only when a tensor rule would speak)."""
        frame = self.call.frame
        return frame is not None and (frame.parent is not None or self.keys.resumed(frame.function))

    def siblings(self) -> list[tuple[CacheKey, DecodedEntry]]:
        """The other keys of the function (made once, and only for an input that asks)."""
        if self._siblings is None:
            self._siblings = [(k, d) for k, d in self.keys.of(self.call.origin) if k.key != self.call.key.key]
        return self._siblings

    def sibling_taking(self, src: str, takes: bool) -> CacheKey | None:
        """A key of the function that takes an input from ``src`` (or, with ``takes``
        False, one that takes none)."""
        return next((k for k, d in self.siblings() if any(
            t == src or t.startswith((src + "[", src + ".")) for t in self.keys.taken(d)) == takes), None)

    def given(self, src: str) -> Reason | None:
        """:func:`~fxcache_core.lookup.optional_tensors.tensor_given` for this key (its inputs, where all named)."""
        named = bool(srcs := self.call.entry.arg_sources) and all(srcs)
        return tensor_given(src, self.call.frame, self.fn, self.sibling_taking, self.call.inputs if named else None,
                            lambda: graph_text(self.keys.catalog, self.call.key)
                            if self.call.key.kind is KeyKind.AOT_AUTOGRAD else None)

    def left_out(self, src: str) -> Reason | None:
        """:func:`~fxcache_core.lookup.optional_tensors.tensor_left_out` for this key."""
        return tensor_left_out(src, self.call.frame, self.fn, self.sibling_taking)

    def tensor(self, user_src: str, src: str) -> None:
        """A tensor the call gives for ``src``, which the key takes no input from (an
        element of a list argument: :func:`~fxcache_core.lookup.optional_tensors.list_element`)."""
        call = self.call
        if (el := element_of(src)) is not None and (is_param(el[0], call.params, call.keywords) or el[0] == f"L['{self.vararg}']") \
                and src not in self.taken and not self.broken():
            why = list_element(src, el[0], self.taken, call.frame)
            if why is not None:
                (self.problems if code_of(why) == "list-longer" else self.notes).append(why)
            return
        if (why := item_not_taken(src, lambda s: is_param(s, call.params, call.keywords), self.taken)) is not None:
            self.notes.append(why)
            return
        if (is_param(user_src, call.params, call.keywords) if call.params or call.keywords else call.of_function) and not any(
                t == src or t.startswith((src + "[", src + ".")) for t in self.taken) and not self.broken():
            if (why := self.given(src)) is not None:  # aliased-inputs-unknown: the call may pass one tensor twice
                (self.notes if code_of(why) == "aliased-inputs-unknown" else self.problems).append(why)
                return
            self.notes.append(Reason(
                f"{src} is a tensor, and this key takes no input from it: if it was None (or not a "
                "tensor) when this key was traced, torch traces another graph; if the code never "
                "reads it, this key is torch's. The cache does not record which", "tensor-not-input"))

    def int_taken(self, src: str) -> None:
        """An int the key takes (as a SymInt): without the mode, a sibling key that has it
        a constant makes the verdict undecided."""
        if self.call.mode is DynamicMode.UNKNOWN and _symint_input(self.call.entry, src) is not None:
            static = next((k for k, d in self.siblings() if src not in self.keys.taken(d)), None)
            if static is not None:
                self.notes.append(Reason(
                    f"{self.fn} was also compiled with {src} a constant (key {static.key[:12]}): under "
                    f"dynamic=None a fresh process's first call bakes {src} into the graph and "
                    "looks up such a key; this one serves dynamic=True and the calls after a "
                    f"recompile (pass {param('dynamic')})", "int-constant-sibling"))

    def fx_only_symint(self, src: str) -> list[tuple[CacheKey, GraphInput]]:
        """The FX keys of the function no AOTAutograd entry loads (torch bypassed that
        cache) that take ``src`` as a SymInt, their inputs named by their symbols
        (:func:`~fxcache_core.lookup.symbol_names.name_inputs`)."""
        out = []
        for k, d in self.keys.fx_only_of(self.call.origin):
            named = name_inputs(d, self.call.inputs, self.call.params)
            if named is not None and (i := _symint_input(named.apply(d), src)) is not None:
                out.append((k, i))
        return out

    def by_expressions(self, src: str, value: int) -> bool | None:
        """Whether the float constants the function computes from the int ``src`` decide
        (:func:`~fxcache_core.lookup.fit_floats.baked_provenance`: every read of it is in
        an expression whose value is a float constant of one op), as they decide a float
        argument: ``differs`` is a problem (False); ``same`` makes this key torch's for it
        under dynamic=None (True, :attr:`baked_why` says how; without the mode, a note and
        False). None where they do not decide."""
        m = LOCAL_RE.fullmatch(src)
        if m is None:
            return None
        prov = baked_provenance(self.keys.catalog, self.call.key, m.group(1), self.call.inputs, self.call.frame)
        if prov is not None and prov.status == "unknown" and prov.why is not None:
            self.unknown_why = prov.why  # why its expressions do not decide: said in place of int-not-input
        if prov is None or prov.why is None or prov.status not in ("same", "differs"):
            return None
        if prov.status == "differs":
            self.problems.append(prov.why)
            return False
        if self.call.mode is DynamicMode.UNKNOWN:
            self.notes.append(Reason(
                f"{prov.why}: torch looks this key up under dynamic=None; under dynamic=True {src} is a "
                f"SymInt on the first call (pass {param('dynamic')})", "int-depends-on-mode"))
            return False
        self.baked_why = Reason(str(prov.why), "baked-constant")
        return True

    def int_baked(self, src: str, value: int, mine: bool) -> bool:
        """An int the key does not take: the value it baked in, read from a sibling key
        that takes ``src`` as a SymInt (:func:`_baked_in`), against the call's. True when
        that value was read and is the call's (:attr:`baked_why` says how), and nothing
        else is said."""
        self.unknown_why = None
        dynamic = [(k, i) for k, d in self.siblings() if (i := _symint_input(d, src)) is not None]
        found = _baked_in(self.keys, self.call.key, dynamic) if dynamic else None
        if not dynamic and (fx := self.fx_only_symint(src)):
            dynamic, found = fx, self.keys.baked_in_fx(self.call.entry, fx)
        if found is None and (mine or dynamic) and (decided := self.by_expressions(src, value)) is not None:
            return decided
        if not dynamic:
            if mine and self.unknown_why is not None:
                self.notes.append(self.unknown_why)
            elif mine:
                self.notes.append(Reason(
                    f"{src} is not an input of this key: a fresh process's first call under "
                    f"dynamic=None bakes an int argument into the graph, and no key of {self.fn} takes "
                    f"{src} as a SymInt to read the value this key was traced with from; if the "
                    f"graph does not depend on {src}, this key is torch's", "int-not-input"))
            return False
        if found is None:
            other, inp = dynamic[0]
            self.notes.append(Reason(
                f"{src} is a constant in this key's graph (key {other.key[:12]} takes it as "
                f"{inp.expr}), but the graphs differ in more than that constant: fxcache cannot "
                "read which value this key was traced with", "int-graphs-differ"))
            return False
        baked, other, inp = found
        if baked != value:
            why = (f"{src} was {baked} when this key was traced: its graph has the constant {baked} "
                   f"where key {other.key[:12]} takes {src} as {inp.expr}, so {src}={value} traces "
                   "another graph")
            if self.call.pgo:
                self.notes.append(Reason(why + " (unless the profile-guided automatic-dynamic state in this "
                                         "cache dir makes it a SymInt: fxcache could not read that state)",
                                         "pgo-state-unread"))
            else:
                self.problems.append(Reason(why, "int-baked-differs"))
        elif self.call.mode is DynamicMode.UNKNOWN:
            self.notes.append(Reason(
                f"{src} was {value} when this key was traced: torch looks it up under dynamic=None; "
                f"under dynamic=True {src} is a SymInt on the first call (a key like "
                f"{other.key[:12]}) (pass {param('dynamic')})", "int-depends-on-mode"))
        else:
            self.baked_why = Reason(f"{value} is the constant this key's graph has where key {other.key[:12]} "
                                    f"takes it as {inp.expr}", "baked-constant")
            return True
        return False


def _not_an_int(keys: FunctionKeys, key: CacheKey, src: str, value: InputValue,
                siblings: list[tuple[CacheKey, DecodedEntry]], mine: bool,
                problems: list[Reason], notes: list[Reason], branched: bool = False) -> None:
    """A float or a 0-d tensor given for ``src``, which ``key`` takes no input from.

    Where a key of the function takes ``src`` as a SymInt and ``key``'s graph has a
    constant there (:func:`_baked_in`), ``key`` was traced with an int: a problem. A
    float whose constant the graph shows is :func:`fxcache_core.lookup.fit.fit_baked_floats`'
    to judge; one the code only branches on (``branched``) leaves none: the branch rule's.
    Otherwise, for a parameter of the function (``mine``), the cache cannot tell what
    ``key`` was traced with there: a note.
    """
    given = f"the float {value}" if isinstance(value, float) else f"a 0-d tensor {value}"
    dynamic = [(k, i) for k, d in siblings if (i := _symint_input(d, src)) is not None]
    found = _baked_in(keys, key, dynamic) if dynamic else None
    if found is not None:
        baked, other, inp = found
        problems.append(Reason(
            f"{src} was the Python int {baked} when this key was traced (its graph has the constant "
            f"{baked} where key {other.key[:12]} takes {src} as {inp.expr}), given {given}: "
            + ("a float is a float constant or a float64 input" if isinstance(value, float)
               else "a tensor is a tensor input") + ", so torch traces another graph", "scalar-kind-differs"))
        return
    if not mine or branched:
        return
    name = re.fullmatch(r"L\['(\w+)'\]", src)
    if isinstance(value, float) and name is not None and keys.floats(key, name.group(1)) is not None:
        return  # the graph computes with it: fit_baked_floats compares the constants
    notes.append(Reason(
        f"{src} is {given}, and this key takes no input from it: if it was traced with a Python "
        f"{'int or another float' if isinstance(value, float) else 'int or float'} there (baked in "
        "as a constant), torch traces another graph; if its code never reads it, this key is "
        "torch's. The cache does not record which", "scalar-not-input"))


def _baked_in(keys: FunctionKeys, key: CacheKey, dynamic: list[tuple[CacheKey, GraphInput]]
              ) -> tuple[int, CacheKey, GraphInput] | None:
    """The value ``key``'s graph has where one of ``dynamic``'s keys takes the SymInt
    input, from the first key whose graph aligns; None if none does, or two disagree."""
    static = keys.graph(key)
    if static is None:
        return None
    found: list[tuple[int, CacheKey, GraphInput]] = []
    for other, inp in dynamic:
        g = keys.graph(other)
        values = specialized_values(g, static) if g is not None else None
        if values is None:
            continue
        v = values.get(inp.name or "", values.get(inp.symbol or ""))
        if v is not None:
            found.append((v, other, inp))
    if not found or len({v for v, _, _ in found}) > 1:
        return None
    return found[0]
