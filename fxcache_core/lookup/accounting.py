"""Every parameter the compiled function's code reads, accounted for before a verdict.

A key's graph is what Dynamo traced for one call, and any argument its code reads
can change that trace: a tensor's sizes, an int or float baked in, and the Python
values Dynamo specializes on (a bool the code branches on, a string it compares,
None for an optional tensor). The cache keeps a key's inputs and their guards, not
the values it specialized on. So a verdict that torch looks a key up (HIT, MISS)
must account for every parameter of the key's compiled frame that its code reads
(:func:`fxcache_core.functions.params.frame_reads`), each as one of
(:class:`ParamAccount`, codes in :data:`HOW`):

* ``key-input``: the key takes an input from it; its guards decide (a float it takes as an
  input only where the source shows no Python test of it, which Dynamo's guards hold and the
  cache does not: :mod:`fxcache_core.lookup.float_inputs`, else ``float-input-tested``);
* ``baked-constant``: an int, float or ``torch.dtype`` the graph has as a constant,
  the call's value, read exactly (:func:`baked_account`: :mod:`fxcache_core.lookup.int_args`,
  :func:`fxcache_core.lookup.fit_floats.baked_float`, :mod:`fxcache_core.lookup.dtype_args`);
* ``trace-guard``: a run's TORCH_TRACE recorded Dynamo's guard for it in a compile that
  looked the key up (``L['clip'] == True``; the query's ``recorded``, kept by
  explain in the usage store, or read from the trace given as the call);
* ``branch``: every read of it is the test of an ``if`` (``if clip:``,
  ``if act == 'gelu':``), and the key's graph has ops from the side of each that
  the call's value takes (:mod:`fxcache_core.lookup.branches`), or, for an ``if``
  without ``else``, none from a body that another key of the function shows makes ops;
* ``no-input-none``: None, for a tensor parameter (annotated as one, or an input of
  another key of the function) the key takes no input from;
* ``unread``: the code never reads it;
* for a dict, dataclass or NamedTuple the call gives item by item (``cfg['n']=4``), each
  item the code reads, as a parameter of its own
  (:mod:`fxcache_core.lookup.container_items`);
* ``tensor-given``: a tensor the key takes no input from (the key's own notes,
  :mod:`fxcache_core.lookup.int_args`, say what that decides).

A parameter left out takes its default from the source (``torch.float16`` too). The
keywords that reach a ``**kwargs`` (given or none) are accounted as one dict, by
exact evidence only (:mod:`fxcache_core.lookup.kwargs_evidence`: the code never reads
it, or Dynamo's guards on it in a run's trace). One that nothing accounts for makes
the key's lookup undecided (``constant-unrecorded``, ``constant-differs-from-record``,
``branch-unknown``, ``kwargs-unrecorded``, ``default-not-literal``,
``argument-not-given``; ``partial-binds`` for one left out that a ``functools.partial``
of the function binds: :mod:`fxcache_core.functions.partials`), naming it and what
would decide it;
evidence that the key was traced through a side of a test the call's value does not
take, whose ops no other code of the function may make up (``branch-not-taken``; where some
may, ``branch-may-be-made-up``: :mod:`fxcache_core.lookup.made_up_ops`), or that it takes an input from a parameter the call leaves
out as None (``none-for-input``), rules the key out: torch traces another graph.
Two cases are assumed rather than accounted (status ``assumed``, said on the verdict):
a parameter left out, or given its default, whose default is None (``default-assumed``:
the "not given" of an optional argument; an ``if`` on it the key's graph does not show
the side of still leaves it undecided), and one left out of a module compiled whole
(``module-default``: ``Module._call_impl(*args, **kwargs)`` is the frame Dynamo
compiled, and the cache records the keywords a call gives as tensors only). Both are
taken to have been so when the key was compiled; a run's trace would say.
Where the source cannot be read (a cache from another machine, a moved checkout: see
:mod:`fxcache_core.functions.source_dirs` for reading it from where it is now), nothing
but the key's inputs is known: every argument of the call that is not bound to one of them
is undecided (``argument-unaccounted``, :mod:`fxcache_core.lookup.unframed`), and so are the
parameters the call leaves out (``source-unread``, :mod:`fxcache_core.lookup.unread_source`)
unless a run's trace recorded a compile of the key that had every argument its guards name,
as the call gives it. A file edited since the compile (a line the key was traced from is no
longer there: :mod:`fxcache_core.lookup.source_lines`) is read as not there, and the lookup
is undecided (``source-changed``) whatever a record says: a record is of the code as it was.
Where no entry records the compiled frame (a key that records no
function, or one found only through a function it was traced through) the arguments the
call gives are held to the same rule, and the parameters it leaves out are taken as when
the key was compiled (``params-unchecked``, said on the verdict). Never imports torch.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey
from fxcache_core.catalog.reader import Catalog
from fxcache_core.decode.entries import DecodedEntry
from fxcache_core.errors import param
from fxcache_core.functions.frames import CompiledFrom, compiled_from
from fxcache_core.functions.params import FrameReads, ParamUse, frame_reads
from fxcache_core.functions.partials import partial_bindings
from fxcache_core.functions.source_dirs import withheld
from fxcache_core.guards.user_terms import user_source
from fxcache_core.lookup.baked_accounts import baked_account
from fxcache_core.lookup.binding import DynamicMode, InputValue, TensorArg
from fxcache_core.lookup.branch_accounts import branch_account
from fxcache_core.lookup.branches import TracedCode, traced_code
from fxcache_core.lookup.container_items import item_accounts
from fxcache_core.lookup.dtype_args import default_dtype
from fxcache_core.lookup.fit_floats import float_default
from fxcache_core.lookup.float_inputs import float_input_read
from fxcache_core.lookup.floats import tensorified_base
from fxcache_core.lookup.inputs import candidates
from fxcache_core.lookup.int_args import IntRule
from fxcache_core.lookup.kwargs_evidence import keywords_account, left_out_in
from fxcache_core.lookup.module_state import module_state
from fxcache_core.lookup.param_account import ARGUMENT_CODES as ARGUMENT_CODES
from fxcache_core.lookup.param_account import HOW as HOW
from fxcache_core.lookup.param_account import ParamAccount as ParamAccount
from fxcache_core.lookup.pinned import pinned_default
from fxcache_core.lookup.pyvalues import PyValue, kind_of, same_value, text_of
from fxcache_core.lookup.source_values import param_sources
from fxcache_core.lookup.state_constants import state_judge
from fxcache_core.lookup.unframed import unframed
from fxcache_core.lookup.unread_source import covering_record, unread_account
from fxcache_core.reasons import Reason

RecordedConstants = Mapping[str, Sequence[Mapping[str, object]]]
"""Key -> the constants Dynamo's guards pinned in each compile of a run that looked it
up (source ``L['clip']`` -> value): :func:`fxcache_core.trace.constants.key_constants`."""


@dataclass(frozen=True, slots=True)
class Accounting:
    """The parameters of one key's compiled frame, accounted for.

    Attributes:
        params: one :class:`ParamAccount` per parameter.
        unchecked: why the parameters were not checked (the source cannot be read, the
            frame is not recorded); None when they were.
    """

    params: tuple[ParamAccount, ...] = ()
    unchecked: Reason | None = None

    @property
    def problems(self) -> tuple[Reason, ...]:
        """Why the key is not the call's graph."""
        return tuple(p.how for p in self.params if p.status == "rules-out")

    @property
    def notes(self) -> tuple[Reason, ...]:
        """What leaves the key's lookup undecided."""
        return tuple(dict.fromkeys(p.how for p in self.params if p.status == "undecided"))


@dataclass
class Ledger:
    """What accounting reads across the keys of one ``match``: each key's traced code
    and the keys of each compiled frame (read once, on demand), and the recorded
    constants (``recorded``)."""

    catalog: Catalog
    recorded: RecordedConstants = field(default_factory=dict)
    _traced: dict[tuple[str, str, str], TracedCode | None] = field(default_factory=dict)
    _by_frame: dict[tuple[str, str], list[tuple[CacheKey, DecodedEntry]]] | None = None

    def traced(self, key: CacheKey, frame: FrameReads, function: str) -> TracedCode | None:
        k = (key.key, function, frame.file)
        if k not in self._traced:
            self._traced[k] = traced_code(self.catalog, key, function, frame.file)
        return self._traced[k]

    def siblings(self, key: CacheKey, frame: CompiledFrom) -> list[tuple[CacheKey, DecodedEntry]]:
        """The other keys torch looks up by their own guards (AOTAutograd keys, and FX
        keys none loads) compiled from the same frame."""
        if self._by_frame is None:
            self._by_frame = {}
            cat = self.catalog
            for k in cat.scan.keys:
                if k.kind is KeyKind.FX_GRAPH and cat.loaders_of(k.key):
                    continue
                first = cat.first_readable(k)
                c = compiled_from(cat, k) if first is not None else None
                if c is not None and first is not None:
                    self._by_frame.setdefault((c.function, c.file), []).append((k, first[1]))
        return [(k, d) for k, d in self._by_frame.get((frame.function, frame.file), []) if k.key != key.key]


@dataclass(frozen=True)
class KeyCall:
    """One key's lookup for a call, as accounting reads it.

    Attributes:
        key, entry: the key and its first readable entry.
        frame: its compiled frame, None where no entry records it.
        inputs: the call's inputs by the user's source.
        taken: the sources the key takes inputs from.
        mode: ``torch.compile(dynamic=...)``.
        int_rule: what :func:`~fxcache_core.lookup.int_args.int_argument_rule` said
            of the call's ints and floats.
        int_default: asks the same rule about a parameter left out, given its
            default (the user's source -> value).
        auto_scalars: the ints and floats this pass makes symbols or tensors (``Auto.scalars``).
    """

    key: CacheKey
    entry: DecodedEntry
    frame: CompiledFrom | None
    inputs: Mapping[str, InputValue]
    taken: frozenset[str]
    mode: DynamicMode
    int_rule: IntRule = IntRule()
    int_default: Callable[[str, int | float], IntRule] | None = None
    auto_scalars: frozenset[str] = frozenset()


def settled_by_record(ledger: Ledger, key: CacheKey, frame: CompiledFrom | None,
                      inputs: Mapping[str, InputValue]) -> frozenset[str]:
    """The call's inputs (the user's sources) whose value a recorded compile that looked
    ``key`` up had: the int rule need not speak of them."""
    records = ledger.recorded.get(key.key, ())
    params = frame.params if frame is not None else ()
    out = set()
    for src, v in inputs.items():
        if isinstance(v, TensorArg):
            continue
        value = v.value if isinstance(v, PyValue) else v
        if any(same_value(r[c], value) for r in records for c in candidates(src, params) if c in r):
            out.add(src)
    return frozenset(out)


def account(ledger: Ledger, call: KeyCall) -> Accounting:
    """Account for every parameter of ``call.frame`` that its code reads (see the
    module docstring). Raises nothing: what cannot be read is said."""
    frame = call.frame
    records = ledger.recorded.get(call.key.key, ())
    if frame is None:
        settled = settled_by_record(ledger, call.key, None, call.inputs)
        return Accounting(unframed(call.inputs, call.taken, settled), Reason(
            "the cache does not record the function this key was compiled from: its parameters were not checked",
            "params-unchecked"))
    reads = frame_reads(frame)
    if isinstance(reads, Reason):
        why = str(reads) if withheld(frame.file) is reads else {
            "source-unreadable": "cannot be read here",
            "source-changed": "no longer has the function at that line"}.get(reads.code or "", "is not read: " + reads)
        where = f"the source of {frame.name} ({os.path.basename(frame.file)}) {why}"
        # What a run recorded, and an int the int rule read off this key's graph as the
        # call's (its constant, :mod:`fxcache_core.lookup.int_args`), need no source.
        settled = settled_by_record(ledger, call.key, frame, call.inputs) | frozenset(
            src for src, kind, _ in call.int_rule.about if kind == "baked")
        if reads.code == "source-changed":  # a record is of a compile of the code as it was
            records = ()
        return _unread(unframed(call.inputs, call.taken, settled, where, tensors=False), call, records,
                       frame.params, settled, where, Reason(f"parameters not checked: {where}", "params-unchecked"),
                       reads.code == "source-changed")
    params = [a for p in reads.params for a in ParamAccounting(ledger, call, frame, reads, p).accounts()]
    return Accounting(tuple(params + keywords_account(call, frame, reads, params, ledger.recorded.get(call.key.key, ()))
                            + module_state(call.inputs, frame, call.key, state_judge(
                                ledger.catalog, call.key, frame, call.inputs, call.mode),
                                records=records, branch=_attr_branch(ledger, call, frame, reads))))


def _attr_branch(ledger: Ledger, call: KeyCall, frame: CompiledFrom, reads: FrameReads
                 ) -> Callable[[str, str, object], ParamAccount | None]:
    """Branch evidence for a module attribute the call gives (``self.use_act``, from
    ``src`` ``L['self'].use_act``) that the code tests (:meth:`FrameReads.attr`)."""
    def judge(src: str, name: str, v: object) -> ParamAccount | None:
        p = reads.attr(name)
        if p is None:
            return None
        acc = ParamAccounting(ledger, call, frame, reads, p)
        acc.user_src, acc.given = src, v
        return branch_account(acc, v, f"{name}={text_of(v)}")
    return judge


def _unread(params: tuple[ParamAccount, ...], call: KeyCall, records: Sequence[Mapping[str, object]],
            names: Sequence[str], settled: frozenset[str], cause: str, unchecked: Reason,
            changed: bool = False) -> Accounting:
    """A key whose code cannot be read (``cause``; ``changed``: the file was edited since
    the compile): decided by a record that covers the call
    (:func:`~fxcache_core.lookup.unread_source.covering_record`), else undecided."""
    if covering_record(records, call.inputs, call.taken, names, settled) is not None:
        return Accounting(params + (ParamAccount("(the parameters left out)", None, False, "accounted", Reason(
            "every argument Dynamo's guards named in a traced compile that looked this key up is given, "
            "at the value it had there", "trace-guard"), brief="Dynamo's guards in a traced run"),))
    return Accounting(params + (unread_account(cause, call.key.key, changed),), unchecked)


_MISSING = object()


class ParamAccounting:
    """One parameter's accounting: its value in the call and each kind of evidence in turn."""

    def __init__(self, ledger: Ledger, call: KeyCall, frame: CompiledFrom, reads: FrameReads, p: ParamUse) -> None:
        self.ledger, self.call, self.frame, self.reads, self.p = ledger, call, frame, reads, p
        self.sources = param_sources(p.name, frame)
        self.user_src, self.given = next(((s, call.inputs[s]) for s in self.sources if s in call.inputs),
                                         (None, None))

    def result(self, status: str, how: Reason, value: object = _MISSING, brief: str = "") -> ParamAccount:
        shown: str | None
        if value is _MISSING:
            value = self.value()
        if value is _MISSING:
            shown = None
        elif isinstance(value, TensorArg):
            shown = str(value)
        else:
            shown = text_of(value)
        return ParamAccount(self.p.name, shown, self.user_src is not None, status, how, self.user_src, brief)

    def value(self) -> object:
        """The call's value: as given (a TensorArg, or the Python value), else the
        default; _MISSING when neither."""
        if self.user_src is not None:
            g = self.given
            return g.value if isinstance(g, PyValue) else g
        d = self.p.default
        return d.value if d.given and d.literal else (d.given and default_dtype(d.text)) or _MISSING

    def accounts(self) -> list[ParamAccount]:
        """The parameter's account, or one per item where the call gives it item by item
        (:func:`~fxcache_core.lookup.container_items.item_accounts`)."""
        items = item_accounts(self)
        return items if items is not None else [self.account()]

    def account(self) -> ParamAccount:
        p, frame = self.p, self.frame
        if not p.read and not self.reads.opaque:
            return self.result("accounted", Reason(f"{p.name}: the code never reads it", "unread"))
        if self.user_src is None and (bound := self.partial()) is not None:
            return bound
        if self.takes():
            d = p.default
            if self.user_src is None and d.given and d.literal and d.value is None:
                return self.result("rules-out", Reason(
                    f"{p.name} is left out (None, its default), and this key takes an input from it: torch "
                    f"traces another graph (if the call passes it, give it with {param('inputs')})",
                    "none-for-input"))
            if self.user_src is None and d.given and d.literal and (pinned := self.pinned_default(d.value)):
                return pinned
            if self.user_src is None and d.given and d.literal and type(d.value) is float and (got := float_default(
                    p.name, d.value, [(i.source, i.type) for i in self.call.entry.inputs], self.sources,
                    self.call.mode, self.call.auto_scalars)):
                return self.result(*got)
            if (longer := self.longer()) is not None:
                return longer
            if type(v := self.value()) is float and (why := float_input_read(
                    frame, p.name, v, self.call.inputs, "its code calls locals()/vars()/eval()/exec()"
                    if self.reads.opaque else None)) is not None:
                return self.result("undecided", why)  # a Python test of it: Dynamo's guards, not the cache's
            return self.result("accounted", Reason(f"{p.name}: an input of this key", "key-input"))
        v = self.value()
        if self.user_src is None and frame.whole_module and v is _MISSING:
            return self.assumed(v)
        if isinstance(v, TensorArg):
            branch = self.branch(v, f"{p.name}={v}")
            if branch is not None and branch.status == "rules-out":
                return branch
            return self.result("accounted", Reason(
                f"{p.name}: a tensor this key takes no input from (the key's own notes say what that "
                "decides)", "tensor-given"))
        if v is _MISSING:
            if p.default.given:
                return self.result("undecided", Reason(
                    f"{p.name}: left out, and its default ({p.default.text}) is not a value fxcache reads: "
                    f"give it with {param('inputs')}", "default-not-literal"))
            return self.result("undecided", Reason(
                f"{p.name}: the call does not give it, and the code reads it: give it with "
                f"{param('inputs')}", "argument-not-given"))
        return self.evidence(v)

    def partial(self) -> ParamAccount | None:
        """Undecided where the call leaves this parameter out and a ``functools.partial``
        of the function in its own file binds it (:mod:`~fxcache_core.functions.partials`):
        a call of the partial gives the frame the partial's value, a call of the function
        its default, and the description is the same. None where no partial binds it."""
        p, frame = self.p, self.frame
        names = [q.name for q in self.reads.params]
        for b in partial_bindings(frame.file, frame.function):
            written = dict(b.keywords).get(p.name)
            if written is None and p.name not in names[:b.positional]:
                continue
            what = f"{p.name}={written}" if written is not None else p.name
            return self.result("undecided", Reason(
                f"{p.name}: left out, and functools.partial({frame.function}, ...) at line {b.line} of "
                f"{os.path.basename(frame.file)} binds {what}: a call through it gives the frame that, a call "
                f"of {frame.function} itself its default; give {p.name} with {param('inputs')}",
                "partial-binds"))
        return None

    def pinned_default(self, value: object) -> ParamAccount | None:
        """A parameter left out at its default ``value``, which the key takes as a SymInt
        Dynamo specialized to another value (:func:`~fxcache_core.lookup.pinned.pinned_default`):
        another graph, or undecided. None where nothing says so."""
        call = self.call
        got = pinned_default(self.ledger.catalog, call.key, call.entry, call.frame, call.inputs, self.sources, value)
        if got is None:
            return None
        return self.result("rules-out" if got[0] == "problem" else "undecided", got[1])

    def longer(self) -> ParamAccount | None:
        """Undecided where the call gives this parameter as a whole tuple or list
        (``dims=(0, 1)``) with items past the last one the key takes an input from
        (``dims[0]``): Dynamo guards a sequence's length, so unless the code never reads
        those items the key was traced with a shorter one, and torch traces another graph;
        the key's inputs do not say which. (A tuple too short for an item the key takes is
        no fit at all: :func:`~fxcache_core.lookup.source_values.value_of`.)"""
        v = self.value()
        if self.user_src is None or not isinstance(v, (tuple, list)):
            return None
        base = self.user_src
        items = [int(m.group(1)) for t in self.call.taken if (m := re.match(re.escape(base) + r"\[([0-9]+)\]", t))]
        if not items or len(v) <= max(items) + 1:
            return None
        last = user_source(f"{base}[{max(items)}]")
        return self.result("undecided", Reason(
            f"{self.p.name}={text_of(v)}: {len(v)} items, and this key takes inputs from {self.p.name} up to {last} "
            f"only: Dynamo guards a sequence's length, so unless the code never reads the items past {last} "
            "(then this key's graph) the key was traced with a shorter one and torch traces another graph; "
            "which, the cache does not show", "sequence-longer-unknown"))

    def takes(self) -> bool:
        taken = self.call.taken
        return any(t == s or t.startswith((s + "[", s + ".")) or tensorified_base(t) == s
                   for s in self.sources for t in taken)

    def evidence(self, v: object) -> ParamAccount:
        p, call, frame = self.p, self.call, self.frame
        what = f"{p.name}={text_of(v)}" + ("" if self.user_src is not None else " (its default)")
        records = self.ledger.recorded.get(call.key.key, ())
        left_out = left_out_in(records, frame.params, p.name, p.default.value) if frame.whole_module \
            and p.default.literal else []  # Dynamo's guards on the wrapper's kwargs show it left out
        recorded = [r[s] for r in records for s in self.sources if s in r] + left_out
        if any(same_value(r, v) for r in recorded):
            there = f" (left out there: {p.name} not in its kwargs)" if any(same_value(d, v) for d in left_out) else ""
            return self.result("accounted", Reason(
                f"{what}: Dynamo's guard in a traced compile that looked this key up{there}", "trace-guard"),
                brief="Dynamo's guard in a traced run")
        baked = baked_account(self, v)
        if baked is not None and baked.status != "undecided":
            return baked
        branch = self.branch(v, what)
        if branch is not None and branch.status == "rules-out":
            return branch  # the graph went the other way: whatever its constants say
        if baked is not None:
            return baked
        if branch is not None and branch.status != "undecided":
            return branch
        if v is None and self.tensor_kind():
            return self.result("accounted", Reason(
                f"{what}: a tensor parameter this key takes no input from, as when it is None",
                "no-input-none"), brief="no input of the key comes from it")
        if branch is not None and not recorded and not (self.user_src is None and self.frame.whole_module):
            return branch
        if recorded:
            shown = ", ".join(sorted({text_of(r) for r in recorded}))
            return self.result("undecided", Reason(
                f"{what}: this key was traced with {p.name}={shown} (Dynamo's guards in a run's trace); "
                "torch traces the call again, and whether the graph is the same the cache cannot tell",
                "constant-differs-from-record"))
        d = p.default
        as_default = self.user_src is None or (d.given and d.literal and same_value(v, d.value))
        if as_default and ((d.given and d.literal and d.value is None) or self.frame.whole_module):
            return self.assumed(v)
        line = min([*(n for _, n in p.tests), *p.other], default=None)
        return self.result("undecided", Reason(
            f"{what}: a Python {kind_of(v)} the code reads" + (f" (line {line})" if line else "")
            + f"; the cache does not record which value key {call.key.key[:12]} was traced with; Dynamo's "
            f"guards in a run's TORCH_TRACE would (the trace explained, or given as {param('from_trace')})",
            "constant-unrecorded"))

    def assumed(self, v: object) -> ParamAccount:
        """A parameter the call leaves out (or gives its default), with nothing that says
        what the key was traced with: taken to have been left out then too
        (``module-default`` for a module compiled whole, ``default-assumed`` for a
        default of None), and said."""
        p = self.p
        if self.frame.whole_module:
            return self.result("assumed", Reason(
                f"{p.name}: left out of the call of a module compiled whole (forward's default "
                f"{p.default.text or '(none)'}), as taken to be when key {self.call.key.key[:12]} was "
                "compiled: the cache records the keywords a call gives as tensors only", "module-default"), v)
        return self.result("assumed", Reason(
            f"{p.name}: None, its default, as taken to be when key {self.call.key.key[:12]} was "
            f"compiled: the cache does not record it; Dynamo's guards in a run's TORCH_TRACE would",
            "default-assumed"), v)

    def tensor_kind(self) -> bool:
        """Whether the parameter takes tensors: annotated as one, or another key of the
        function takes an input from it."""
        if self.p.tensor_annotated:
            return True
        for _, d in self.ledger.siblings(self.call.key, self.frame):
            srcs = [s for s in (*d.arg_sources, *(i.source for i in d.inputs)) if s]
            if any(t == s or t.startswith((s + "[", s + ".")) for s in self.sources for t in srcs):
                return True
        return False

    def branch(self, v: object, what: str) -> ParamAccount | None:
        """Branch evidence (:func:`~fxcache_core.lookup.branch_accounts.branch_account`)."""
        return branch_account(self, v, what)


__all__ = ["ARGUMENT_CODES", "HOW", "Accounting", "KeyCall", "Ledger", "ParamAccount", "RecordedConstants",
           "account", "param_sources", "settled_by_record"]
