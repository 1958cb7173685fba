"""The restricted unpickler: read a pickle without importing or running anything it names.

An entry file is a pickle; ``pickle.loads`` would import torch and run
whatever callables the pickle names. :class:`StubUnpickler` resolves *every*
global to an inert :class:`Stub` class: calling it, ``__new__``,
``__setstate__``, ``append``/``extend``/``add``/``__setitem__`` only record
their arguments, so nothing named in the file is imported or run.
Where the caller asks, a read also records how it used each global it named
(:class:`GlobalUse`: called, as the ``REDUCE`` opcode calls ``f(*args)``; made,
as ``NEWOBJ`` makes ``cls.__new__(cls, *args)``; or only named): what
``pickle.load`` would do with it. :func:`load_stubs` runs it under the memory budget, falling back to the
pure-Python unpickler (whose memo a huge ``PUT`` index cannot inflate) for
entries up to :data:`PY_FALLBACK_MAX_BYTES`, and, where the caller gives one, an
object bound counted as the objects are built (the read stops at the first past
it); :func:`plain` and the small
readers below turn stubbed containers into plain values, within
:data:`MAX_PLAIN_NODES` visits.

Mirrors the pickle machine of Python's ``pickle`` module (``find_class``,
``persistent_load``), with every class replaced. Never imports a name from a
pickle, never calls ``pickle.loads``, never imports torch.
"""

from __future__ import annotations

import functools
import io
import pickle
import re
import threading
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from fxcache_core.decode.memlimit import budget_for
from fxcache_core.errors import EntryDecodeError, EntryTooLarge
from fxcache_core.reasons import Reason

__all__ = [
    "CALLED",
    "MADE",
    "MAX_ENTRY_BYTES",
    "GlobalUse",
    "MAX_PLAIN_NODES",
    "PY_FALLBACK_MAX_BYTES",
    "ReadUses",
    "Stub",
    "StubUnpickler",
    "iter_str_items",
    "load_stubs",
    "may_name",
    "opt_int",
    "opt_str",
    "plain",
    "str_items",
]

MAX_ENTRY_BYTES = 512 * 1024 * 1024
"""Entries larger than this (bytes) are refused rather than read into memory."""

CALLED = "call"
"""A global the pickle calls, ``f(*args)``: ``REDUCE`` (and protocol 0's ``INST``/``OBJ``,
which call a class with arguments). ``pickle.load`` runs whatever it names."""
MADE = "new"
"""A class the pickle makes without calling it: ``NEWOBJ``/``NEWOBJ_EX``
(``cls.__new__(cls, *args)``), whose ``BUILD`` then runs the class's ``__setstate__``."""


class GlobalUse(NamedTuple):
    """How one read used a global it named (a named tuple: one is made per global of
    every entry decoded, and a frozen dataclass costs several times more to make).

    ``pickle.load`` imports ``module`` and looks ``name`` up in it for every global a
    pickle names, then does with it what the opcodes say; :class:`StubUnpickler`
    records which.

    Attributes:
        name: ``module.name``.
        uses: :data:`CALLED` and/or :data:`MADE`; empty when the global is only
            named (passed as a value: a class reference, a dtype, a factory).
        args: the positional arguments of its first call or make, as the stubs saw
            them (plain values and stubs), None when it was neither.
        kwargs: the keyword arguments of that call (``NEWOBJ_EX``), else None.
    """

    name: str
    uses: frozenset[str] = frozenset()
    args: tuple[Any, ...] | None = None
    kwargs: dict[str, Any] | None = None


class _Recording(threading.local):
    """What the current read of this thread records: the first instance of each stub
    class made (``made``) and the classes called (``called``); None outside a read
    that asked for uses (the default: nothing is recorded, nothing is paid)."""

    made: dict[type, Any] | None = None
    called: set[type] | None = None


_RECORDING = _Recording()

_EMPTY: Mapping[Any, Any] = MappingProxyType({})
"""The ``_kwargs`` and ``_dict`` of a stub that has none: read-only, shared."""


class Stub:
    """An inert stand-in for a class or function named in a pickle.

    Subclasses are made per ``(module, name)`` by :class:`StubUnpickler`; the
    class attributes ``stub_module``/``stub_name`` keep the name. Instances
    record what the pickle did to them and nothing else: ``_args``/``_kwargs``
    (the call or ``__new__``), ``_state`` (``BUILD``), ``_items`` (``append``,
    ``extend``, ``add``) and ``_dict`` (``__setitem__``, ``__setattr__``). An
    instance holds only what was recorded on it (an entry makes thousands of
    stubs, most of them with no arguments and no items); the rest are the empty,
    read-only class defaults.
    """

    stub_module = ""
    stub_name = ""
    _args: tuple[Any, ...] = ()
    _kwargs: Mapping[str, Any] = _EMPTY
    _state: Any = None
    _items: list[Any] | tuple[()] = ()
    _dict: Mapping[Any, Any] = _EMPTY

    def __new__(cls, *args: Any, **kwargs: Any) -> Stub:
        self = object.__new__(cls)
        if args:
            self.__dict__["_args"] = args
        if kwargs:
            self.__dict__["_kwargs"] = kwargs
        made = _RECORDING.made
        if made is not None and cls not in made:
            made[cls] = self
        return self

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Only a call runs __init__ (type.__call__: REDUCE, INST, OBJ); NEWOBJ does not.
        called = _RECORDING.called
        if called is not None:
            called.add(type(self))

    # What the pickle machine may do to an object; each only records.
    def __setstate__(self, state: Any) -> None:
        self.__dict__["_state"] = state

    def append(self, item: Any) -> None:
        own = self.__dict__
        items = own.get("_items")
        if items is None:
            own["_items"] = [item]
        else:
            items.append(item)

    def extend(self, items: Any) -> None:
        own = self.__dict__
        mine = own.get("_items")
        if mine is None:
            own["_items"] = list(items)
        else:
            mine.extend(items)

    def add(self, item: Any) -> None:
        Stub.append(self, item)

    def __setitem__(self, key: Any, value: Any) -> None:
        own = self.__dict__
        d = own.get("_dict")
        if d is None:
            own["_dict"] = {key: value}
        else:
            d[key] = value

    def __setattr__(self, name: str, value: Any) -> None:
        Stub.__setitem__(self, name, value)

    @property
    def qualname(self) -> str:
        """``module.name`` of the global this stub stands for."""
        return f"{self.stub_module}.{self.stub_name}"

    def field(self, name: str, default: Any = None) -> Any:
        """An attribute as the pickle set it (``__setstate__`` dict, slots or kwargs)."""
        st = self._state
        if type(st) is dict:  # the usual case (a dataclass's or plain object's __dict__), first
            if name in st:
                return st[name]
        elif isinstance(st, tuple) and len(st) == 2:
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
        self.globals_seen: set[str] = set()

    def find_class(self, module: str, name: str) -> type[Stub]:  # noqa: D102
        cls = _stub_class(module, name)
        self.globals_seen.add(cls._qualname)
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
        {"stub_module": module, "stub_name": name, "_qualname": f"{module}.{name}",
         "__module__": "fxcache_core.decode.unpickler"},
    )


class _TooManyObjects(Exception):
    """Raised from inside the unpickler when a read's object bound is spent."""


class _Allowance:
    """How many more calls into Python one bounded read may make."""

    __slots__ = ("left",)

    def __init__(self, left: int) -> None:
        self.left = left

    def take(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise _TooManyObjects


class _CountedStub(Stub):
    """The calls of :class:`Stub` that a pickle makes, each counted against the read's
    :class:`_Allowance` (``_allowance``, set on the per-read subclass) first."""

    _allowance: _Allowance

    def __new__(cls, *args: Any, **kwargs: Any) -> Stub:
        cls._allowance.take()
        return super().__new__(cls, *args, **kwargs)

    def __setstate__(self, state: Any) -> None:
        type(self)._allowance.take()
        super().__setstate__(state)

    def append(self, item: Any) -> None:
        type(self)._allowance.take()
        super().append(item)

    def extend(self, items: Any) -> None:
        type(self)._allowance.take()
        super().extend(items)

    def add(self, item: Any) -> None:
        type(self)._allowance.take()
        super().add(item)

    def __setitem__(self, key: Any, value: Any) -> None:
        type(self)._allowance.take()
        super().__setitem__(key, value)

    def __setattr__(self, name: str, value: Any) -> None:
        type(self)._allowance.take()
        super().__setattr__(name, value)


def _counted(unpickler: Any, allowance: _Allowance) -> Any:
    """``unpickler`` made to count every call it makes into Python (a global resolved,
    a stub built, an item or state recorded) against ``allowance``: its globals
    resolve to subclasses of their stub classes made for this read alone, so reads
    without a bound run the plain classes and pay nothing."""
    plain_find = unpickler.find_class
    classes: dict[type[Stub], type[Stub]] = {}

    def find_class(module: str, name: str) -> type[Stub]:
        allowance.take()
        base = plain_find(module, name)
        cls = classes.get(base)
        if cls is None:
            cls = classes[base] = type(base.__name__, (_CountedStub, base),
                                       {"_allowance": allowance, "__module__": base.__module__})
        return cls

    unpickler.find_class = find_class
    return unpickler


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
        self.globals_seen: set[str] = set()

    find_class = StubUnpickler.find_class
    persistent_load = StubUnpickler.persistent_load


class ReadUses(Mapping):
    """How one read used each global it named (``module.name`` -> :class:`GlobalUse`),
    as :func:`load_stubs` fills a dict, but kept as the read recorded it and made into
    :class:`GlobalUse` values only when looked at: a caller that checks most reads
    against a table by their :meth:`signature` first (every entry of a cache names
    the same dozen globals the same way) builds nothing for them."""

    __slots__ = ("_called", "_made", "_named", "_uses")

    def __init__(self) -> None:
        self._named: set[str] = set()
        self._made: dict[type, Any] = {}
        self._called: set[type] = set()
        self._uses: dict[str, GlobalUse] | None = None

    def _recorded(self, named: set[str], made: dict[type, Any], called: set[type]) -> None:
        self._named, self._made, self._called, self._uses = named, made, called, None

    def signature(self) -> tuple[frozenset, frozenset, frozenset]:
        """What decides every value's ``name`` and ``uses`` (not its arguments): the
        classes made, those called, the globals named. Equal signatures, equal names
        and uses."""
        return frozenset(self._made), frozenset(self._called), frozenset(self._named)

    def _all(self) -> dict[str, GlobalUse]:
        if self._uses is None:
            self._uses = {}
            _fill_uses(self._named, self._made, self._called, self._uses)
        return self._uses

    def __getitem__(self, name: str) -> GlobalUse:
        return self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


def load_stubs(data: bytes, max_objects: int | None = None,
               uses: dict[str, GlobalUse] | ReadUses | None = None) -> tuple[Any, frozenset[str]]:
    """Read a pickle into plain containers and :class:`Stub` objects.

    ``uses``, when given, is filled with a :class:`GlobalUse` per global the read
    named, by ``module.name``, also when the read then fails (what was named
    before the failure); a :class:`ReadUses` keeps them as recorded instead.

    ``max_objects``, when given, bounds the calls the read makes into Python (a
    global resolved, a stub built, an item or state recorded on a stub), counted
    as the unpickler makes them: the read stops at the first one past it, so a
    file of object-building opcodes costs at most that many, never its length.
    The C unpickler's own containers (lists, dicts, tuples) cost no call; their
    number is bounded by the bytes and the memory budget.

    Call it under :func:`fxcache_core.decode.memlimit.decoding_budget` (as
    :func:`decode_entry` does): when the C unpickler runs out of that budget,
    the pickle is read again by the pure-Python one, whose memo cannot be
    inflated by a huge ``PUT`` index.

    Returns:
        The root object and the set of globals the pickle named.

    Raises:
        EntryTooLarge: decoding needs more memory than the budget.
        EntryDecodeError: truncated or corrupt data (the message says which), or
            more than ``max_objects`` objects (``too-many-objects``).
    """
    readers = (StubUnpickler, _PyStubUnpickler) if len(data) <= PY_FALLBACK_MAX_BYTES else (StubUnpickler,)
    for cls in readers:
        up = cls(io.BytesIO(data))
        if max_objects is not None:
            _counted(up, _Allowance(max_objects))
        named = up.globals_seen
        if uses is not None:
            if type(uses) is not ReadUses:
                uses.clear()
            _RECORDING.made, _RECORDING.called = {}, set()
        try:
            root = up.load()
        except _TooManyObjects:
            raise EntryDecodeError(Reason(f"the pickle builds more than {max_objects} objects",
                                          "too-many-objects")) from None
        except EOFError as e:
            raise EntryDecodeError(Reason(f"truncated pickle ({len(data)} bytes): {e}",
                                          "truncated-pickle")) from None
        except RecursionError:
            raise EntryDecodeError(Reason("pickle nests too deeply", "nests-too-deeply")) from None
        except MemoryError:
            del up
            continue
        except Exception as e:  # UnpicklingError, ValueError, TypeError, KeyError...
            raise EntryDecodeError(Reason(f"corrupt pickle: {type(e).__name__}: {e}",
                                          "corrupt-pickle")) from None
        finally:
            if uses is not None:
                _collect_uses(named, uses)
        return root, frozenset(named)
    raise EntryTooLarge(Reason(f"decoding it needs more than fxcache's memory budget "
                               f"({budget_for(len(data)) >> 20} MiB for {len(data)} bytes)",
                               "over-memory-budget"))


_CALLED_ONLY = frozenset({CALLED})
_MADE_ONLY = frozenset({MADE})


_new_use = tuple.__new__
"""Makes a :class:`GlobalUse` from its four fields without the named tuple's own
``__new__`` (a Python function, called for a dozen globals of every entry)."""


@functools.lru_cache(maxsize=4096)
def _named_only(name: str) -> GlobalUse:
    return GlobalUse(name)


def _collect_uses(named: set[str], uses: dict[str, GlobalUse] | ReadUses) -> None:
    """Fill ``uses`` from what this thread's read recorded (every global of ``named``),
    and stop recording."""
    made, called = _RECORDING.made or {}, _RECORDING.called or set()
    _RECORDING.made = _RECORDING.called = None
    if type(uses) is ReadUses:
        uses._recorded(named, made, called)
    else:
        _fill_uses(named, made, called, uses)


def _fill_uses(named: set[str], made: dict[type, Any], called: set[type], uses: dict[str, GlobalUse]) -> None:
    """``uses`` filled from a read's record: the first instance ``made`` of each stub
    class made, the classes ``called``, the globals ``named``. It builds little: a
    global only named is one shared :class:`GlobalUse`."""
    for cls, first in made.items():
        name = cls._qualname
        how = _CALLED_ONLY if cls in called else _MADE_ONLY
        was = uses.get(name)
        if was is not None:  # two classes of one name (a counted read's subclass): both uses
            how = how | was.uses
        uses[name] = _new_use(GlobalUse, (name, how, first._args, first._kwargs or None))
    for name in named:
        if name not in uses:
            uses[name] = _named_only(name)


# --- plain views of stubbed data ----------------------------------------------


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
            raise EntryDecodeError(Reason(f"entry data has more than {MAX_PLAIN_NODES} nested objects",
                                          "too-many-objects"))
        out: Any = o
        if isinstance(o, Stub):
            if o.stub_name in ("list", "Size", "OrderedSet", "set", "tuple", "deque"):
                first = o._args[0] if o._args and isinstance(o._args[0], (list, tuple)) else []
                out = [conv(i, depth + 1) for i in [*first, *o._items]]
            elif o.stub_name in ("OrderedDict", "defaultdict", "dict"):
                out = {k: conv(v, depth + 1) for k, v in o._dict.items()}
        else:
            out = [conv(i, depth + 1) for i in o]
        memo[id(o)] = out
        return out

    return conv(obj, 0)


def str_items(v: Any) -> tuple[str, ...]:
    """The top-level ``str`` items of a (stubbed) list; nothing nested is visited."""
    if isinstance(v, Stub) and v.stub_name in ("list", "tuple"):
        first = v._args[0] if v._args and isinstance(v._args[0], (list, tuple)) else []
        v = [*first, *v._items]
    if not isinstance(v, (list, tuple)):
        return ()
    if set(map(type, v)) <= {str}:  # the usual case, checked at C speed
        return tuple(v)
    return tuple([x for x in v if type(x) is str])


def iter_str_items(v: Any) -> Iterator[str]:
    """:func:`str_items` one at a time, without building the tuple: for a reader that
    stops early (an FX entry's debug lines are read up to their example inputs)."""
    if isinstance(v, Stub) and v.stub_name in ("list", "tuple"):
        first = v._args[0] if v._args and isinstance(v._args[0], (list, tuple)) else []
        return (x for part in (first, v._items) for x in part if type(x) is str)
    if not isinstance(v, (list, tuple)):
        return iter(())
    return (x for x in v if type(x) is str)


def opt_str(v: Any) -> str | None:
    """``v`` when it is a str, else None."""
    return v if isinstance(v, str) else None


def opt_int(v: Any) -> int | None:
    """An int64 field (torch's counters and times are), else None: a huge int from
    a hostile pickle would not even print (Python's 4,300-digit limit)."""
    return v if isinstance(v, int) and not isinstance(v, bool) and -(2**63) <= v < 2**63 else None


_KEY_CHARS_ESCAPES = frozenset(b"xuU01234567")
"""What may follow a backslash in an escape that spells an ASCII letter or digit:
``\\xHH`` and ``\\OOO`` (``STRING``, Python's ``escape_decode``), ``\\uXXXX`` and
``\\UXXXXXXXX`` (``UNICODE``, ``raw-unicode-escape``)."""


def may_name(data: bytes, names: frozenset[bytes] | set[bytes]) -> bool:
    """Whether reading ``data`` with :func:`load_stubs` could give a ``str`` equal to
    one of ``names`` (ASCII letters and digits, e.g. cache keys); False is a proof
    that it cannot, True only "maybe" (the caller decodes to know).

    Why a byte test is a proof: the stub unpickler makes a ``str`` only from a
    pickle's string opcodes (no global is ever called, so nothing is computed).
    ``BINUNICODE``/``SHORT_BINUNICODE``/``BINUNICODE8`` hold UTF-8, where an ASCII
    character has one encoding, its own byte; ``BINSTRING``/``SHORT_BINSTRING``
    hold ASCII bytes; ``UNICODE`` (``raw-unicode-escape``) and ``STRING`` (quoted,
    ``escape_decode``, one line) hold their characters as bytes too, except after
    a backslash followed by one of ``x u U 0-7``. Frames (protocol 4) are
    contiguous bytes. So where no name occurs literally and no such escape occurs
    anywhere, no ``str`` of the pickle equals a name. Mirrors the string opcodes
    of CPython's Modules/_pickle.c (``load_string``, ``load_unicode``, ``load_binunicode*``).
    Linear in ``len(data)`` per name.
    """
    if any(n in data for n in names):
        return True
    at = data.find(b"\\")
    while at >= 0:
        if at + 1 < len(data) and data[at + 1] in _KEY_CHARS_ESCAPES:
            return True
        at = data.find(b"\\", at + 1)
    return False
