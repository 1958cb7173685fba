"""Decoding cache entries without executing them.

An entry file is a pickle of a ``CompiledFxGraph`` (fxgraph/) or an
``AOTAutogradResult`` (aotautograd/). ``pickle.loads`` would import torch and
run whatever callables the pickle names; fxcache never does. Instead
:class:`StubUnpickler` resolves *every* global to an inert :class:`Stub`
class: calling it, ``__new__``, ``__setstate__``, ``append``/``extend``/
``add``/``__setitem__`` only record their arguments. Nothing named in the
file is imported or run. From the resulting tree of stubs and plain
containers, :func:`decode_entry` reads the fields fxcache needs into frozen
dataclasses.

Field names mirror torch 2.13: ``CompiledFxGraph`` in
torch/_inductor/output_code.py, ``AOTAutogradResult``/``CompiledForward``/
``CompiledBackward`` in torch/_functorch/_aot_autograd/aot_autograd_result.py
and autograd_cache.py, ``CacheableAOTConfig`` in schemas.py, and the Dynamo
``Source`` classes in torch/_dynamo/source.py.
"""

from __future__ import annotations

import functools
import io
import pickle
import re
from dataclasses import dataclass
from typing import Any

from fxcache_core.cache.keys import KeyKind
from fxcache_core.decode.memlimit import budget_for, decoding_budget
from fxcache_core.errors import EntryDecodeError, EntryTooLarge

MAX_ENTRY_BYTES = 512 * 1024 * 1024
"""Entries larger than this (bytes) are refused rather than read into memory."""


class Stub:
    """An inert stand-in for a class or function named in a pickle.

    Subclasses are made per ``(module, name)`` by :class:`StubUnpickler`; the
    class attributes ``stub_module``/``stub_name`` keep the name. Instances
    record what the pickle did to them and nothing else.
    """

    stub_module = ""
    stub_name = ""

    def __new__(cls, *args: Any, **kwargs: Any) -> Stub:
        self = object.__new__(cls)
        object.__setattr__(self, "_args", args)
        object.__setattr__(self, "_kwargs", kwargs)
        object.__setattr__(self, "_state", None)
        object.__setattr__(self, "_items", [])
        object.__setattr__(self, "_dict", {})
        return self

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    # What the pickle machine may do to an object; each only records.
    def __setstate__(self, state: Any) -> None:
        object.__setattr__(self, "_state", state)

    def append(self, item: Any) -> None:
        self._items.append(item)

    def extend(self, items: Any) -> None:
        self._items.extend(items)

    def add(self, item: Any) -> None:
        self._items.append(item)

    def __setitem__(self, key: Any, value: Any) -> None:
        self._dict[key] = value

    def __setattr__(self, name: str, value: Any) -> None:
        self._dict[name] = value

    @property
    def qualname(self) -> str:
        """``module.name`` of the global this stub stands for."""
        return f"{self.stub_module}.{self.stub_name}"

    def field(self, name: str, default: Any = None) -> Any:
        """An attribute as the pickle set it (``__setstate__`` dict, slots or kwargs)."""
        st = self._state
        if isinstance(st, tuple) and len(st) == 2:
            for part in st:
                if isinstance(part, dict) and name in part:
                    return part[name]
        elif isinstance(st, dict) and name in st:
            return st[name]
        if name in self._kwargs:
            return self._kwargs[name]
        return self._dict.get(name, default)

    def __repr__(self) -> str:
        return f"<stub {self.qualname}>"


class StubUnpickler(pickle.Unpickler):
    """A pickle reader that turns every global into an inert :class:`Stub` class.

    ``find_class`` never imports: it returns a fresh ``Stub`` subclass named
    after the global. Persistent ids become stubs too. The opcodes themselves
    only build containers, so the only code that runs is ``Stub``'s.
    """

    def __init__(self, file: io.BufferedIOBase) -> None:
        super().__init__(file)
        self._classes: dict[tuple[str, str], type[Stub]] = {}
        self.globals_seen: set[str] = set()

    def find_class(self, module: str, name: str) -> type[Stub]:  # noqa: D102
        cls = self._classes.get((module, name))
        if cls is None:
            cls = _stub_class(module, name)
            self._classes[(module, name)] = cls
            self.globals_seen.add(f"{module}.{name}")
        return cls

    def persistent_load(self, pid: Any) -> Stub:  # noqa: D102
        return self.find_class("<persistent>", "pid")(pid)


@functools.lru_cache(maxsize=4096)
def _stub_class(module: str, name: str) -> type[Stub]:
    """The inert class standing for global ``module.name``; shared between reads
    (a class holds nothing but the two names), bounded so a pickle naming
    millions of globals cannot grow it without end."""
    return type(
        "Stub_" + re.sub(r"\W", "_", name)[:64],
        (Stub,),
        {"stub_module": module, "stub_name": name, "__module__": "fxcache_core.decode.entries"},
    )


PY_FALLBACK_MAX_BYTES = 4 * 1024 * 1024
"""Largest entry (bytes) read again by the pure-Python unpickler when the C one
runs out of the memory budget: it reads 3-30 MB/s, so this bounds the time."""


class _PyStubUnpickler(pickle._Unpickler):  # type: ignore[name-defined]
    """:class:`StubUnpickler` on Python's pure-Python unpickler, whose memo is a
    dict: a ``PUT`` index costs nothing whatever its value, where the C
    unpickler allocates an array twice as long. Only used when the C one ran
    out of the memory budget (it is ~30x slower)."""

    def __init__(self, file: io.BufferedIOBase) -> None:
        super().__init__(file)
        self._classes: dict[tuple[str, str], type[Stub]] = {}
        self.globals_seen: set[str] = set()

    find_class = StubUnpickler.find_class
    persistent_load = StubUnpickler.persistent_load


def load_stubs(data: bytes) -> tuple[Any, frozenset[str]]:
    """Read a pickle into plain containers and :class:`Stub` objects.

    Call it under :func:`fxcache_core.decode.memlimit.decoding_budget` (as
    :func:`decode_entry` does): when the C unpickler runs out of that budget,
    the pickle is read again by the pure-Python one, whose memo cannot be
    inflated by a huge ``PUT`` index.

    Returns:
        The root object and the set of globals the pickle named.

    Raises:
        EntryTooLarge: decoding needs more memory than the budget.
        EntryDecodeError: truncated or corrupt data (the message says which).
    """
    readers = (StubUnpickler, _PyStubUnpickler) if len(data) <= PY_FALLBACK_MAX_BYTES else (StubUnpickler,)
    for cls in readers:
        up = cls(io.BytesIO(data))
        try:
            root = up.load()
        except EOFError as e:
            raise EntryDecodeError(f"truncated pickle ({len(data)} bytes): {e}") from None
        except RecursionError:
            raise EntryDecodeError("pickle nests too deeply") from None
        except MemoryError:
            del up
            continue
        except Exception as e:  # UnpicklingError, ValueError, TypeError, KeyError...
            raise EntryDecodeError(f"corrupt pickle: {type(e).__name__}: {e}") from None
        return root, frozenset(up.globals_seen)
    raise EntryTooLarge(f"decoding it needs more than fxcache's memory budget "
                        f"({budget_for(len(data)) >> 20} MiB for {len(data)} bytes)")


# --- plain views of stubbed data ----------------------------------------------


def _is(obj: Any, *names: str) -> bool:
    return isinstance(obj, Stub) and obj.stub_name in names


MAX_PLAIN_NODES = 200_000
"""How many objects :func:`plain` visits before it gives up (a hostile pickle can
share one list many times over, making a naive copy exponential)."""


def plain(obj: Any) -> Any:
    """Best-effort plain value of ``obj``: stubbed lists/dicts/tuples unwrapped.

    ``builtins.list``, ``collections.OrderedDict``/``defaultdict``,
    ``torch.Size`` and ``OrderedSet`` stubs become lists or dicts; other stubs
    are returned as they are. Shared sub-objects are converted once (by
    identity), nesting deeper than 50 is left as it is, and more than
    :data:`MAX_PLAIN_NODES` visits raise.

    Raises:
        EntryDecodeError: the data is too large or too entangled to convert.
    """
    memo: dict[int, Any] = {}
    budget = [MAX_PLAIN_NODES]

    def conv(o: Any, depth: int) -> Any:
        if depth > 50 or not isinstance(o, (Stub, list, tuple)):
            return o
        if id(o) in memo:
            return memo[id(o)]
        budget[0] -= 1
        if budget[0] < 0:
            raise EntryDecodeError(f"entry data has more than {MAX_PLAIN_NODES} nested objects")
        out: Any = o
        if isinstance(o, Stub):
            if o.stub_name in ("list", "Size", "OrderedSet", "set", "tuple", "deque"):
                first = o._args[0] if o._args and isinstance(o._args[0], (list, tuple)) else []
                out = [conv(i, depth + 1) for i in list(first) + o._items]
            elif o.stub_name in ("OrderedDict", "defaultdict", "dict"):
                out = {k: conv(v, depth + 1) for k, v in o._dict.items()}
        else:
            out = [conv(i, depth + 1) for i in o]
        memo[id(o)] = out
        return out

    return conv(obj, 0)


def _str_items(v: Any) -> tuple[str, ...]:
    """The top-level ``str`` items of a (stubbed) list; nothing nested is visited."""
    if isinstance(v, Stub) and v.stub_name in ("list", "tuple"):
        first = v._args[0] if v._args and isinstance(v._args[0], (list, tuple)) else []
        v = list(first) + v._items
    if not isinstance(v, (list, tuple)):
        return ()
    if set(map(type, v)) <= {str}:  # the usual case, checked at C speed
        return tuple(v)
    return tuple([x for x in v if type(x) is str])


def _opt_str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _opt_int(v: Any) -> int | None:
    """An int64 field (torch's counters and times are), else None: a huge int from
    a hostile pickle would not even print (Python's 4,300-digit limit)."""
    return v if isinstance(v, int) and not isinstance(v, bool) and -(2**63) <= v < 2**63 else None


# --- Dynamo sources -----------------------------------------------------------

# Dynamo sources are frozen dataclasses pickled as ``cls(*fields)`` (REDUCE with
# positional args: ``dataclass_with_cached_hash.__reduce__`` in torch/_guards.py),
# so their fields are read by position. Field order as in torch/_dynamo/source.py
# (2.13 to 2.15; 2.14 added ContextVarGetSource and UnwrapCollectiveTensorSource,
# 2.15 ListReverseIteratorBackingListSource); ``base`` comes first in chained sources.
_SOURCE_FIELDS: dict[str, tuple[str, ...]] = {
    "LocalSource": ("local_name", "is_input", "dynamism", "is_derefed_cell_contents",
                    "is_varargs", "is_varkw"),
    "GlobalSource": ("global_name",),
    "GlobalWeakRefSource": ("global_name",),
    "AttrSource": ("base", "member"),
    "ParamBufferSource": ("base", "member"),
    "UnspecializedParamBufferSource": ("base", "member"),
    "CellContentsSource": ("base", "member", "freevar_name"),
    "GradSource": ("base", "member"),
    "TensorPropertySource": ("base", "prop", "idx"),
    "GetItemSource": ("base", "index", "index_is_slice"),
    "DictGetItemSource": ("base", "index"),
    "DictSubclassGetItemSource": ("base", "index"),
    "ListGetItemSource": ("base", "index", "index_is_slice"),
    "ConstDictKeySource": ("base", "index"),
    "NNModuleSource": ("base",),
    "UnspecializedNNModuleSource": ("base",),
    "UnspecializedBuiltinNNModuleSource": ("base",),
    "FSDPNNModuleSource": ("base",),
    "NegateSource": ("base",),
    "ConvertIntSource": ("base",),
    "DynamicScalarSource": ("base", "is_int"),
    "IndexedSource": ("base", "idx"),
    "FloatTensorSource": ("base",),
    "CallMethodItemSource": ("base",),
    "ContextVarGetSource": ("base", "has_default", "default_value"),
    "UnwrapCollectiveTensorSource": ("base",),
    "ListReverseIteratorBackingListSource": ("base",),
}


def _is_literal(v: Any, depth: int = 0) -> bool:
    """A constant whose ``repr`` is what torch prints for it (str, int, tuples of those...)."""
    if isinstance(v, (str, int, float, bool, type(None))):
        return True
    return isinstance(v, tuple) and depth < 5 and all(_is_literal(x, depth + 1) for x in v)


def _sfield(src: Stub, name: str) -> Any:
    """A source's field: from its positional constructor args, else its state."""
    names = _SOURCE_FIELDS.get(src.stub_name, ())
    if name in names:
        i = names.index(name)
        if i < len(src._args):
            return src._args[i]
    return src.field(name)



def source_name(src: Any, depth: int = 0) -> str | None:
    """The guard-style name of a stubbed Dynamo ``Source``: ``L['x'].size()[0]``.

    Mirrors the ``_name_template`` properties in torch/_dynamo/source.py for
    the sources that reach AOTAutograd inputs; None for a class it does not
    know (never a guess).
    """
    if depth > 100 or not isinstance(src, Stub):
        return None
    n = src.stub_name
    if n == "LocalSource":
        name = _sfield(src, "local_name")
        return f"L[{name!r}]" if isinstance(name, str) else None
    if n in ("GlobalSource",):
        name = _sfield(src, "global_name")
        return f"G[{name!r}]" if isinstance(name, str) else None
    if n == "GlobalWeakRefSource":
        name = _sfield(src, "global_name")
        return f"G[{name!r}]()" if isinstance(name, str) else None
    base = source_name(_sfield(src, "base"), depth + 1)
    if base is None:
        return None
    if n in ("AttrSource", "ParamBufferSource", "UnspecializedParamBufferSource",
             "CellContentsSource", "GradSource"):
        member = _sfield(src, "member")
        if not isinstance(member, str):
            return None
        if member.isidentifier() or n == "GradSource":
            return f"{base}.{member}"
        return f"getattr({base}, {member!r})"
    if n == "TensorPropertySource":
        prop = _sfield(src, "prop")
        code = prop._args[0] if isinstance(prop, Stub) and prop._args else None
        idx = _sfield(src, "idx")
        if code == 0:
            return f"{base}.size()[{idx}]"
        if code == 1:
            return f"{base}.stride()[{idx}]"
        if code == 2:
            return f"{base}.storage_offset()"
        return None
    if n in ("GetItemSource", "DictGetItemSource", "DictSubclassGetItemSource"):
        index = _sfield(src, "index")
        if isinstance(index, Stub) and index.stub_name == "ConstDictKeySource":
            inner = source_name(_sfield(index, "base"), depth + 1)
            if inner is None:
                return None
            key = f"list(dict.keys({inner}))[{_sfield(index, 'index')!r}]"
            if n == "DictSubclassGetItemSource":
                return f"dict.__getitem__({base}, {key})"
            return f"{base}[{key}]"
        if _sfield(src, "index_is_slice"):
            # Stored as slice.__reduce__(): (slice, (start, stop, step)); torch prints repr(slice).
            if (isinstance(index, (list, tuple)) and len(index) == 2
                    and isinstance(index[1], (list, tuple)) and len(index[1]) == 3
                    and all(v is None or isinstance(v, int) for v in index[1])):
                a, b, c = index[1]
                return f"{base}[slice({a!r}, {b!r}, {c!r})]"
            return None
        if _is_literal(index):
            return f"{base}[{index!r}]"
        return None
    if n == "ListGetItemSource":
        index = _sfield(src, "index")
        return f"list.__getitem__({base}, {index!r})" if isinstance(index, (int, str)) else None
    if n in ("NNModuleSource", "UnspecializedNNModuleSource",
             "UnspecializedBuiltinNNModuleSource", "FSDPNNModuleSource"):
        return base
    if n == "NegateSource":
        return f"{base}.__neg__()"
    if n == "ConvertIntSource":
        return f"cast_symbool_to_symint_guardless({base})"
    if n == "DynamicScalarSource":
        return f"int({base})"
    if n == "FloatTensorSource":  # a tensorified float (builder.py wrap_symfloat)
        return f"___as_tensor({base})"
    if n == "CallMethodItemSource":
        return f"{base}.item()"
    if n == "IndexedSource":
        return f"({_sfield(src, 'idx')}, {base})"
    if n == "ContextVarGetSource":
        if not _sfield(src, "has_default"):
            return f"{base}.get()"
        default = _sfield(src, "default_value")
        return f"{base}.get({default!r})" if _is_literal(default) else None
    if n == "UnwrapCollectiveTensorSource":
        return f"___unwrap_async_collective_tensor({base})"
    if n == "ListReverseIteratorBackingListSource":
        return f"___list_reverseiterator_backing_list({base})"
    return None


# --- graph inputs ---------------------------------------------------------------

_SYM_RE = re.compile(r"^Sym\((.+)\)$")
_PLACEHOLDER_RE = re.compile(
    r'^\s*(?:def forward\(self,\s*)?(\w+): "([^"]*)",?\s*(?:#\s*(.*))?$'
)
_INLINE_SIG_RE = re.compile(r'(\w+): "([^"]*)"')
_AOT_IDX_RE = re.compile(r"^PlainAOTInput\(idx=(\d+)\)")
_EXAMPLE_INPUT_RE = re.compile(r"^\[\w+\] example_inputs\[(\d+)\]: (.*)$", re.S)
_UNBACKED_RE = re.compile(r"\bu\d+\b")
_SYMBOL_RE = re.compile(r"^[a-z]+\d+$")


@dataclass(frozen=True)
class GraphInput:
    """One placeholder of a compiled graph.

    Attributes:
        position: index among the graph's placeholders.
        name: placeholder name (``arg0_1``, ``primals_3``) where known.
        type: the printed type: ``Sym(s77)`` for a SymInt, ``f32[s77, 4][4, 1]cpu``
            for a tensor (from the graph string), or the debug line's text.
        expr: for a SymInt input, its sympy expression as text (``s77``).
        aot_index: the AOTAutograd flat-argument index (``PlainAOTInput(idx=N)``).
        source: the Dynamo source of that argument (``L['x'].size()[0]``).
    """

    position: int
    name: str | None
    type: str
    expr: str | None = None
    aot_index: int | None = None
    source: str | None = None

    @property
    def is_symint(self) -> bool:
        return self.expr is not None

    @property
    def is_backed_symint(self) -> bool:
        """A SymInt with a hint: torch passes these as ``tN`` to the guards."""
        return self.expr is not None and _UNBACKED_RE.search(self.expr) is None

    @property
    def symbol(self) -> str | None:
        """The symbol when the SymInt is a plain symbol (``s77``), else None."""
        return self.expr if self.expr and _SYMBOL_RE.match(self.expr) else None


def parse_graph_signature(graph_str: str | None) -> tuple[GraphInput, ...]:
    """Placeholders of a printed FX graph (``print_readable`` output).

    Understands both the one-line ``def forward(self, a: "T", ...)`` form and
    the one-placeholder-per-line form with ``# PlainAOTInput(idx=N)`` comments.
    """
    if not graph_str:
        return ()
    lines = graph_str.splitlines()
    start = next((i for i, ln in enumerate(lines) if "def forward(" in ln), None)
    if start is None:
        return ()
    out: list[GraphInput] = []
    head = lines[start]
    if head.rstrip().endswith("):"):  # one-line signature
        for name, typ in _INLINE_SIG_RE.findall(head):
            out.append(_graph_input(len(out), name, typ, None))
        return tuple(out)
    for ln in lines[start + 1:]:
        if ln.strip().startswith("):"):
            break
        m = _PLACEHOLDER_RE.match(ln)
        if m:
            out.append(_graph_input(len(out), m.group(1), m.group(2), m.group(3)))
    return tuple(out)


def _graph_input(pos: int, name: str, typ: str, comment: str | None) -> GraphInput:
    sym = _SYM_RE.match(typ)
    idx = None
    if comment:
        m = _AOT_IDX_RE.match(comment.strip())
        idx = int(m.group(1)) if m else None
    return GraphInput(position=pos, name=name, type=typ, expr=sym.group(1) if sym else None,
                      aot_index=idx)


def parse_example_inputs(debug_lines: tuple[str, ...]) -> tuple[GraphInput, ...]:
    """Graph inputs from an FX key's debug lines (``example_inputs[i]: ...``).

    A SymInt input is printed as ``('s77',)`` (how ``FxGraphCachePickler``
    reduces a SymInt); a tensor as ``TensorMetadata(...)``.
    """
    out: list[GraphInput] = []
    seen = False
    for line in debug_lines:
        if line.find("] example_inputs[", 0, 80) < 0:
            if seen:
                break  # torch writes the example inputs in one run (after gm): the ~600 others follow
            continue
        seen = True
        m = _EXAMPLE_INPUT_RE.match(line)
        if not m:
            continue
        text = m.group(2).strip()
        sym = re.fullmatch(r"\('([^']+)',\)", text)
        out.append(GraphInput(position=int(m.group(1)), name=None, type=text,
                              expr=sym.group(1) if sym else None))
    out.sort(key=lambda g: g.position)
    return tuple(out)


_HINT_RE = re.compile(r"^([a-z]+\d+) = (-?\d{1,40})$")
MAX_GRAPH_LINES = 100_000
"""How many lines of a printed graph or compiled module fxcache reads at most."""


def parse_hints(runnable: str | None) -> tuple[tuple[str, int], ...]:
    """Symbol values from the ``s77 = 4`` lines that head ``runnable_graph_str``.

    Torch 2.13 fills that field on every compile; from 2.14 on it is empty unless
    a structured trace is on (torch/_inductor/compile_fx.py builds it inside
    ``trace_structured``'s payload function), so :func:`parse_get_args` is the
    source every version fills.
    """
    out = []
    for line in (runnable or "").splitlines()[:1000]:
        m = _HINT_RE.match(line.strip())
        if m:
            out.append((m.group(1), int(m.group(2))))
        elif line.strip():
            break
    return tuple(out)


_GET_ARGS = "\ndef get_args():\n"
_ARG_LINE_RE = re.compile(r"    ([A-Za-z_]\w{0,200}) = (-?\d{1,40})")
_RETURN_RE = re.compile(r"    return \[([\w, ]*)\]")


@dataclass(frozen=True)
class HarnessArgs:
    """The int inputs of the benchmark harness torch writes into every
    ``CompiledFxGraph.source_code``.

    ``PythonWrapperCodegen.benchmark_compiled_module`` in
    torch/_inductor/codegen/wrapper.py (2.13 to 2.15) writes ``def get_args():``
    with one line per graph input in placeholder order: ``argN_1 = <int>`` for
    a SymInt input (its value when the graph was compiled: a backed symbol's
    hint; an unbacked one gets a made-up fallback), ``argN_1 = rand_strided(...)``
    for a tensor, then ``return [arg0_1, arg1_1, ...]``.

    Attributes:
        ints: placeholder name -> the int written for it.
        order: the placeholder names of the ``return`` line, in graph order
            (empty when that line was not found).
    """

    ints: dict[str, int]
    order: tuple[str, ...]


def parse_get_args(source_code: str | None) -> HarnessArgs:
    """The ``get_args()`` harness of a compiled module's source (see :class:`HarnessArgs`).

    Reads only the last ``def get_args():`` block, at most
    :data:`MAX_GRAPH_LINES` lines of it; anything else gives empty results.
    """
    ints: dict[str, int] = {}
    if not source_code:
        return HarnessArgs(ints, ())
    start = source_code.rfind(_GET_ARGS)
    if start < 0:
        return HarnessArgs(ints, ())
    pos = start + len(_GET_ARGS)
    for _ in range(MAX_GRAPH_LINES):
        end = source_code.find("\n", pos)
        line = source_code[pos:] if end < 0 else source_code[pos:end]
        if not line.startswith("    "):
            break
        if m := _ARG_LINE_RE.fullmatch(line):
            ints[m.group(1)] = int(m.group(2))
        elif m := _RETURN_RE.fullmatch(line):
            return HarnessArgs(ints, tuple(n.strip() for n in m.group(1).split(",") if n.strip()))
        if end < 0:
            break
        pos = end + 1
    return HarnessArgs(ints, ())


def symbol_hints(inputs: tuple[GraphInput, ...], source_code: str | None,
                 runnable: str | None = None) -> tuple[tuple[str, int], ...]:
    """The compile-time value of each symbol of a graph's backed SymInt inputs.

    From the ``get_args()`` harness of ``source_code`` (:func:`parse_get_args`,
    written by every torch version): the value of placeholder ``argN_1``
    (by name, else by position in the harness's ``return`` list) is the hint of
    its symbol. Inputs that are expressions (``Sym(2*s17)``) or unbacked
    (``u0``: the harness writes a made-up value) give none. ``runnable``
    (``runnable_graph_str``, filled by torch 2.13) adds the symbols the harness
    did not give, where it has them.
    """
    harness = parse_get_args(source_code)
    out: dict[str, int] = {}
    for inp in inputs:
        sym = inp.symbol
        if sym is None or not inp.is_backed_symint or sym in out:
            continue
        name = inp.name
        if name is None and 0 <= inp.position < len(harness.order):
            name = harness.order[inp.position]
        if name is not None and name in harness.ints:
            out[sym] = harness.ints[name]
    for sym, value in parse_hints(runnable):
        out.setdefault(sym, value)
    return tuple(out.items())


_ORIGIN_RE = re.compile(r"File: (.{1,1000}?):(\d{1,9}) in ([\w.<>]{1,200}), code:")


@dataclass(frozen=True)
class Origin:
    """Where the traced code came from: the first ``# File: f.py:12 in fn`` of the graph.

    ``function`` is the frame the first traced op sits in (the compiled
    function, or a function it inlined), ``file``/``line`` that op;
    ``functions`` every frame named in the graph, in order of appearance;
    ``outer`` the frames every op's full user stack passes through, outermost
    (the frame Dynamo compiled) first, as ``(function, file, line)`` with the line
    of the first op (FX entries: from ``cache_linemap``, see
    :func:`parse_linemap_frames`; see fxcache_core/functions/frames.py).
    """

    function: str
    file: str
    line: int
    functions: tuple[str, ...] = ()
    outer: tuple[tuple[str, str, int], ...] = ()

    def __str__(self) -> str:
        return f"{self.function} ({self.file}:{self.line})"

    def traced_from(self, name: str) -> bool:
        """Whether the graph was traced through function ``name``: one of its
        frames, or the frame Dynamo resumes ``name`` in after a graph break
        (``torch_dynamo_resume_in_<name>_at_<line>``, torch/_dynamo/resume_execution.py)."""
        prefix = f"torch_dynamo_resume_in_{name}_at_"
        return any(f == name or (f.startswith(prefix) and f[len(prefix):].isdigit())
                   for f in self.functions)


def parse_origin(graph_str: str | None) -> Origin | None:
    """The source locations annotated in a printed FX graph, if any.

    torch/fx/graph.py (``append_stacktrace_summary``) heads each run of nodes
    with a comment ``# File: f.py:12 in fn, code: ...``; torch 2.14+ writes
    ``# Backward of forward node: File: ...`` above the nodes of a backward
    graph, and any version may put an annotation or recompute tag between the
    ``#`` and ``File:``. Reads line by line (at most :data:`MAX_GRAPH_LINES`,
    and at most three ``File:`` per line), so the cost is linear in the
    string whatever it holds.
    """
    first = None
    names: list[str] = []
    for n, line in enumerate((graph_str or "").splitlines()):
        if n >= MAX_GRAPH_LINES:
            break
        m = _origin_in(line)
        if m is None:
            continue
        if first is None:
            first = m
        if m.group(3) not in names:
            names.append(m.group(3))
    if first is None:
        return None
    return Origin(first.group(3), first.group(1), int(first.group(2)), tuple(names))


def _origin_in(line: str) -> re.Match[str] | None:
    """The ``File: f.py:12 in fn, code:`` of a comment line, or None."""
    at = line.find("File: ")
    if at < 0 or not line[:at].lstrip().startswith("#"):
        return None
    for _ in range(3):
        m = _ORIGIN_RE.match(line, at)
        if m is not None:
            return m
        at = line.find("File: ", at + 1)
        if at < 0:
            return None
    return None


_STACK_FRAME_RE = re.compile(r'^\s*File "(.{1,1000})", line (\d{1,9}), in ([\w.<>]{1,200})\s*$')
MAX_LINEMAP_ITEMS = 20_000
MAX_OUTER_FRAMES = 64


def parse_linemap_frames(linemap: Any) -> tuple[tuple[str, str, int], ...]:
    """The outer frames shared by every stack of a ``cache_linemap``.

    ``CompiledFxGraph.cache_linemap`` (torch/_inductor/output_code.py) is a list
    of ``(line in the generated code, stack trace)``; each stack trace is the
    user stack of an op as Python prints it (``File "f.py", line 12, in fn``),
    outermost first, frames inside torch left out by Dynamo. Returns the frames
    all of them share by ``(file, function)``, each with the line it had in the
    first stack; () when there is none. At most :data:`MAX_LINEMAP_ITEMS` items
    and :data:`MAX_OUTER_FRAMES` frames are read.
    """
    if isinstance(linemap, Stub) and linemap.stub_name == "list":
        linemap = plain(linemap)
    if not isinstance(linemap, (list, tuple)):
        return ()
    common: list[tuple[str, str, int]] | None = None
    for item in linemap[:MAX_LINEMAP_ITEMS]:
        text = item[1] if isinstance(item, (list, tuple)) and len(item) == 2 else None
        if not isinstance(text, str):
            continue
        frames: list[tuple[str, str, int]] = []
        for ln in text.splitlines():
            m = _STACK_FRAME_RE.match(ln)
            if m is not None:
                frames.append((m.group(3), m.group(1), int(m.group(2))))
                if common is not None and len(frames) >= len(common):
                    break
                if len(frames) >= MAX_OUTER_FRAMES:
                    break
        if not frames:
            continue
        if common is None:
            common = frames
            continue
        n = 0
        while n < min(len(common), len(frames)) and common[n][:2] == frames[n][:2]:
            n += 1
        common = common[:n]
        if not common:
            break
    return tuple(common or ())


# --- decoded entries -----------------------------------------------------------


@dataclass(frozen=True)
class FxRef:
    """What an AOTAutograd entry records of one of its FX graphs.

    Attributes:
        key: the FX graph cache key (``f...``).
        guards_expr: the guards string of the FX entry it was saved with; on an
            AOTAutograd hit torch loads the FX entry whose guards string is
            exactly this one.
        debug_lines: the FX key's debug lines.
    """

    key: str
    guards_expr: str | None
    debug_lines: tuple[str, ...] = ()


@dataclass(frozen=True)
class DecodedEntry:
    """What fxcache reads out of one entry file, without executing it.

    Attributes:
        kind: the cache it came from.
        type_name: the pickled root class (``torch._inductor.output_code.CompiledFxGraph``).
        guards_expr: the guards string, verbatim; None or "" means no guards (always a hit).
        inputs: the graph's placeholders in order, with sources where known.
        fx_key: FX entries: the key stored inside the entry (``_fx_graph_cache_key``).
        debug_lines: FX entries: the key's debug lines (the components hashed into the key).
        is_backward: FX entries: compiled as a backward graph (``fx_kwargs['is_backward']``).
        wrapper_key: FX entries: the code-cache key of the wrapper module torch
            writes for it (``cache_key``: ``<root>/<key[1:3]>/<key>.py``).
        forward, backward: AOTAutograd entries: the FX graphs it loads.
        arg_sources: AOTAutograd entries: Dynamo source of each flat input
            (``aot_autograd_arg_pos_to_source``), None where unknown.
        compile_time_ns: time the compile took (ns), where stored.
        origin: the user code the graph was traced from, where the stored
            graph string says (``# File: ... in fn``).
        forward_graph: AOTAutograd entries: the forward graph as printed
            (``aot_forward_graph_str``); only in the full form (the index keeps
            the light one, :func:`fxcache_core.catalog.index.light`, without it).
        hints: FX entries: the value of each symbol when the graph was compiled
            (:func:`symbol_hints`: the ``get_args()`` harness of ``source_code``);
            the entry's guards hold at these values.
        globals_seen: every global the pickle names (for auditing).
    """

    kind: KeyKind
    type_name: str
    guards_expr: str | None
    inputs: tuple[GraphInput, ...]
    fx_key: str | None = None
    debug_lines: tuple[str, ...] = ()
    is_backward: bool | None = None
    wrapper_key: str | None = None
    forward: FxRef | None = None
    backward: FxRef | None = None
    arg_sources: tuple[str | None, ...] = ()
    compile_time_ns: int | None = None
    hints: tuple[tuple[str, int], ...] = ()
    origin: Origin | None = None
    globals_seen: frozenset[str] = frozenset()
    forward_graph: str | None = None

    @property
    def symints(self) -> tuple[GraphInput, ...]:
        """The backed SymInt inputs in order: ``symints[N]`` is ``L['tN']``."""
        return tuple(i for i in self.inputs if i.is_backed_symint)


_FX_TYPES = {"CompiledFxGraph"}
_AOT_TYPES = {"AOTAutogradResult", "BundledAOTAutogradResult", "AOTAutogradCacheEntry",
              "GenericAOTAutogradResult", "BundledAOTAutogradCacheEntry"}


def decode_entry(data: bytes, kind: KeyKind) -> DecodedEntry:
    """Decode one entry file's bytes (see the module docstring for how).

    Memory: decoding adds at most :func:`fxcache_core.decode.memlimit.budget_for`
    the entry's size to the process (on Linux; see :mod:`fxcache_core.decode.memlimit`).

    Raises:
        EntryTooLarge: decoding would need more memory than that budget (not
            evidence that the entry is invalid).
        EntryDecodeError: the bytes are not a pickle, are truncated, hold
            something other than the compiled-graph object ``kind`` expects,
            or hold fields of unexpected types. No other exception escapes:
            a hostile entry is reported, never allowed to crash a command.
    """
    try:
        with decoding_budget(len(data)):
            return _decode_entry(data, kind)
    except EntryDecodeError:
        raise
    except MemoryError:
        raise EntryTooLarge(f"decoding it needs more than fxcache's memory budget "
                            f"({budget_for(len(data)) >> 20} MiB for {len(data)} bytes)") from None
    except RecursionError:
        raise EntryDecodeError("entry data nests too deeply") from None
    except Exception as e:  # a field of an unexpected shape
        raise EntryDecodeError(f"unexpected entry content: {type(e).__name__}: {e}"[:300]) from None


def _decode_entry(data: bytes, kind: KeyKind) -> DecodedEntry:
    if len(data) > MAX_ENTRY_BYTES:
        raise EntryDecodeError(f"entry is {len(data)} bytes, over the {MAX_ENTRY_BYTES} limit")
    root, seen = load_stubs(data)
    if not isinstance(root, Stub):
        raise EntryDecodeError(f"entry holds a {type(root).__name__}, not a compiled graph")
    guards = root.field("guards_expr")
    if guards is not None and not isinstance(guards, str):
        raise EntryDecodeError("guards_expr is not a string")
    if kind is KeyKind.FX_GRAPH:
        if root.stub_name not in _FX_TYPES:
            raise EntryDecodeError(f"fxgraph entry holds {root.qualname}, not CompiledFxGraph")
        debug = _str_items(root.field("_fx_graph_cache_debug_lines"))
        inputs = parse_example_inputs(debug)
        graph_inputs = parse_graph_signature(_opt_str(root.field("inductor_post_grad_graph_str")))
        if not inputs:
            inputs = graph_inputs
        elif len(graph_inputs) == len(inputs):
            inputs = tuple(GraphInput(i.position, g.name, g.type, i.expr) for i, g in
                           zip(inputs, graph_inputs, strict=True))
        fx_kwargs = plain(root.field("fx_kwargs"))
        is_bw = fx_kwargs.get("is_backward") if isinstance(fx_kwargs, dict) else None
        return DecodedEntry(
            kind=kind, type_name=root.qualname, guards_expr=guards, inputs=inputs,
            fx_key=_opt_str(root.field("_fx_graph_cache_key")), debug_lines=debug,
            is_backward=is_bw if isinstance(is_bw, bool) else None,
            wrapper_key=_opt_str(root.field("cache_key")),
            compile_time_ns=_opt_int(root.field("_time_taken_ns")),
            hints=symbol_hints(inputs, _opt_str(root.field("source_code")),
                               _opt_str(root.field("runnable_graph_str"))),
            origin=_with_outer(parse_origin(_opt_str(root.field("inductor_post_grad_graph_str"))),
                               parse_linemap_frames(root.field("cache_linemap"))),
            globals_seen=seen,
        )
    if root.stub_name not in _AOT_TYPES:
        raise EntryDecodeError(f"aotautograd entry holds {root.qualname}, not AOTAutogradResult")
    cfg = root.field("sanitized_aot_config")
    srcs = plain(cfg.field("aot_autograd_arg_pos_to_source")) if isinstance(cfg, Stub) else None
    sources = tuple(source_name(s) for s in srcs) if isinstance(srcs, list) else ()
    inputs = parse_graph_signature(_opt_str(root.field("aot_forward_graph_str")))
    inputs = tuple(_with_source(i, sources) for i in inputs)
    fw_t = _opt_int(root.field("forward_time_taken_ns"))
    bw_t = _opt_int(root.field("backward_time_taken_ns"))
    t = fw_t + (bw_t or 0) if fw_t is not None else None
    return DecodedEntry(
        kind=kind, type_name=root.qualname, guards_expr=guards, inputs=inputs,
        forward=_fx_ref(root.field("compiled_fw")), backward=_fx_ref(root.field("compiled_bw")),
        arg_sources=sources, compile_time_ns=t,
        origin=parse_origin(_opt_str(root.field("aot_forward_graph_str"))
                            or _opt_str(root.field("aot_backward_graph_str"))),
        globals_seen=seen, forward_graph=_opt_str(root.field("aot_forward_graph_str")),
    )


def _with_outer(o: Origin | None, outer: tuple[tuple[str, str, int], ...]) -> Origin | None:
    if not outer:
        return o
    if o is None:
        fn, file, line = outer[-1]
        return Origin(fn, file, line, (), outer)
    return Origin(o.function, o.file, o.line, o.functions, outer)


def _with_source(i: GraphInput, sources: tuple[str | None, ...]) -> GraphInput:
    idx = i.aot_index if i.aot_index is not None else i.position
    src = sources[idx] if 0 <= idx < len(sources) else None
    return GraphInput(i.position, i.name, i.type, i.expr, idx, src)


def _fx_ref(obj: Any) -> FxRef | None:
    if not isinstance(obj, Stub):
        return None
    info = obj.field("fx_graph_cache_info")
    if not (isinstance(info, (list, tuple)) and info and isinstance(info[0], str)):
        return None
    lines = _str_items(info[1]) if len(info) > 1 else ()
    return FxRef(key=info[0], guards_expr=_opt_str(obj.field("fx_graph_guard_expr")),
                 debug_lines=lines)

