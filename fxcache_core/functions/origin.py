"""Which function a key was compiled from: the one place that decides it.

A compiled graph's printed form annotates its ops with the user code they
came from (``# File: demo/cases.py:12 in branch_on_size, code: ...``);
:func:`~fxcache_core.decode.entries.parse_origin` reads that into an
:class:`~fxcache_core.decode.entries.Origin`. A key's origin is that of its first
entry (in torch's order) that has one: every entry of a key holds the same
graph, traced from the same code.

The function a key was compiled from is decided here and nowhere else, from
two facts: the frames every op's stack shares where the cache records them
(:func:`~fxcache_core.functions.frames.named` of the origin's ``outer``, or the
key's :func:`~fxcache_core.functions.frames.compiled_from`: decorator wrappers
folded, a method named ``Class.function``), else the key's origin (the first op).
:func:`function_name` names it, one :class:`FunctionName` for every use: the name
keys are grouped under (``ls``'s function column and ``--by function``, match's
verdict per function), the one line every command shows
(``T5ForConditionalGeneration.forward (modeling_t5.py:939)``; explain too), the
name that tells apart two functions of one name (match's static siblings) and the
frame's file and line (:func:`key_function_name` does it for a key); and
:func:`keys_of_function` finds the keys a ``--fn NAME`` means (``ls --fn``,
``match --fn``; a NAME that means several functions is an error). Never imports or
runs user code; nothing here prints.

:func:`key_origins` serves many keys at once: from the index's per-key table
where it has the key (one row per key, valid while the entry it came from is
unchanged), else by reading where the graph of the key's first entry came from (one
batch on every CPU, :meth:`~fxcache_core.catalog.reader.Catalog.origins`),
remembering what it found.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey, Entry
from fxcache_core.catalog.reader import Catalog, Unreadable
from fxcache_core.decode.entries import DecodedEntry, Origin
from fxcache_core.errors import FunctionAmbiguousError
from fxcache_core.functions.frames import CompiledFrom, compiled_from, label, named


def key_origin(catalog: Catalog, key: CacheKey) -> Origin | None:
    """The origin of ``key``'s first entry (torch's order) that records one; None
    when no readable entry does. Decodes entries in order until one does."""
    for e in key.entries:
        d = catalog.load(e)
        if isinstance(d, DecodedEntry) and d.origin is not None:
            return d.origin
    return None


def key_origins(catalog: Catalog, keys: Sequence[CacheKey]) -> dict[str, Origin | None]:
    """Key name -> :func:`key_origin`, for each of ``keys``; an AOTAutograd key's with
    the compiled frames (``outer``) of its forward FX key's first readable entry, where
    its own entries record none (only FX entries store the op stacks,
    ``cache_linemap``; every entry of a key holds the same graph, the rule
    :meth:`~fxcache_core.catalog.reader.Catalog.first_readable` rests on).

    Warm (the index has a valid row per key): one pass over the index's key
    table, no entry read. Otherwise the first entry of each key the index lacks is
    read in one batch of worker processes, only where its graph came from
    (:meth:`~fxcache_core.catalog.reader.Catalog.origins`); the forward FX keys' first
    entries are among them when those keys are listed too. Only what that round left
    unknown (a key whose first entry is unreadable or records no origin, a forward FX
    key not listed) is read in one more batch: every entry of such a key not read yet
    (a key whose entries record no origin then costs one round, not one per entry).
    What is found is remembered in the index. Cost cold: one entry read per key, and
    every entry of the keys whose first readable entry records no origin.
    """
    idx = catalog.index
    out: dict[str, Origin | None] = idx.key_origins(keys) if idx is not None else {}
    known: dict[str, DecodedEntry | Unreadable] = {}
    pending = [k for k in keys if k.key not in out]
    while pending:
        asked: dict[str, Entry] = {}
        left: list[CacheKey] = []
        for k in pending:
            got = _origin_from(catalog, k, known)
            if isinstance(got, list):
                for e in got:
                    asked.setdefault(e.file.where, e)
                left.append(k)
                continue
            found, source = got
            out[k.key] = found
            if idx is not None and source is not None:
                idx.put_key_origin(k, source, found)
        if asked:
            known.update(catalog.origins(asked.values()))
        pending = left
    return out


def _origin_from(catalog: Catalog, key: CacheKey, known: dict[str, DecodedEntry | Unreadable],
                 ) -> list[Entry] | tuple[Origin | None, Entry | None]:
    """:func:`key_origins`'s answer for ``key`` from the entries read so far (``known``:
    :meth:`Catalog.origins`), with the entry it rests on; or the entries to read next
    (of ``key``, or of its forward FX key): the first one, or, once it was read and
    settled nothing, every one not read yet (:func:`_to_read`)."""
    found, source, first = None, None, None
    for n, e in enumerate(key.entries):
        d = known.get(e.file.where)
        if d is None:
            return _to_read(key.entries, n, known)
        if isinstance(d, DecodedEntry):
            source = source or e
            first = first or d
            if d.origin is not None:
                found, source, first = d.origin, e, d
                break
    if found is None or found.outer or key.kind is not KeyKind.AOT_AUTOGRAD or first is None \
            or first.forward is None:
        return found, source
    fx = catalog.scan.key(first.forward.key)
    fx_entries = fx.entries if fx is not None else ()
    for n, e in enumerate(fx_entries):
        fd = known.get(e.file.where)
        if fd is None:
            return _to_read(fx_entries, n, known)
        if isinstance(fd, DecodedEntry):
            if fd.origin is not None and fd.origin.outer:
                found = Origin(found.function, found.file, found.line, found.functions, fd.origin.outer)
            break
    return found, source


def _to_read(entries: Sequence[Entry], n: int, known: dict[str, DecodedEntry | Unreadable]) -> list[Entry]:
    """What to read of a key's ``entries`` whose ``n``-th is the first not read: that one
    alone when it is the first (one entry answers for most keys), else every one not
    read yet (the ones read settled nothing: one more round, not one per entry)."""
    return [entries[n]] if n == 0 else [e for e in entries[n:] if e.file.where not in known]


@dataclass(frozen=True, slots=True)
class FunctionName:
    """How one function is named: every way a command names a key's function, decided
    once by :func:`function_name` from the key's compiled frame (where the cache records
    it) or its origin (the graph's first op).

    Attributes:
        name: the name keys are grouped under (``ls``'s function column and ``--by
            function``, match's verdict per function, explain): the compiled frame's
            :attr:`~fxcache_core.functions.frames.CompiledFrom.name` (a module's
            ``Class.forward``, decorators folded), else the function the first op was
            traced in. None when nothing is known.
        label: the one line every command shows: ``T5ForConditionalGeneration.forward
            (modeling_t5.py:985)``, ``loss_fn, resumed after the graph break at line 14
            (train.py:10)`` (``str`` of the compiled frame); where no stack is recorded,
            the first op's function (resume frames worded) at that op's line. None when
            nothing is known.
        distinct: the function told apart from others of its name: ``label`` where the
            compiled frame is recorded, else the bare name of the first op's function
            (how match groups a function's keys across the cache).
        file: the file of the frame (as the cache records it, not shortened).
        line: its line (1-based): the compiled function's first line, else the first op's.
    """

    name: str | None
    label: str | None
    distinct: str | None
    file: str | None = None
    line: int | None = None

    @property
    def readable(self) -> str | None:
        """``name`` as a user reads it: Dynamo's resume functions
        (``torch_dynamo_resume_in_f_at_12``, torch/_dynamo/resume_execution.py) become
        ``f, resumed after the graph break at line 12``
        (:func:`~fxcache_core.functions.frames.label`); None when ``name`` is unknown
        or empty."""
        return label(self.name) if self.name else None


_UNKNOWN = FunctionName(None, None, None)


def function_name(origin: Origin | CompiledFrom | None, compiled: CompiledFrom | None = None) -> FunctionName:
    """The one decision of how a key's function is named (:class:`FunctionName`).

    ``compiled`` (the key's :func:`~fxcache_core.functions.frames.compiled_from`), else
    ``origin`` when it is a compiled frame, else the frame the origin's shared stack
    names (:func:`~fxcache_core.functions.frames.named` of
    :attr:`~fxcache_core.decode.entries.Origin.outer`: decorator wrappers folded, a
    method named ``Class.function``); without any, the function the graph's first op
    was traced in. Every field None when neither is given. Reads nothing.
    """
    c = _named(origin, compiled)
    if c is not None:
        return FunctionName(c.name, str(c), str(c), c.file, c.line)
    if not isinstance(origin, Origin):
        return _UNKNOWN
    return FunctionName(origin.function, f"{label(origin.function)} ({os.path.basename(origin.file)}:{origin.line})",
                        origin.function, origin.file, origin.line)


def key_function_name(catalog: Catalog, key: CacheKey) -> FunctionName:
    """:func:`function_name` of ``key``: its compiled frame, else its origin (decoded
    only when the frame is not recorded)."""
    c = compiled_from(catalog, key)
    return function_name(key_origin(catalog, key) if c is None else None, c)


def _named(origin: Origin | CompiledFrom | None, compiled: CompiledFrom | None = None) -> CompiledFrom | None:
    """The key's compiled frame as given, else as the origin's shared stack names it
    (:func:`~fxcache_core.functions.frames.named`), else None."""
    if compiled is not None:
        return compiled
    if isinstance(origin, CompiledFrom):
        return origin
    outer = getattr(origin, "outer", None)
    return named(outer) if outer else None


def keys_compiled_from(catalog: Catalog, name: str) -> tuple[list[CacheKey], list[CompiledFrom]]:
    """The keys compiled from the function ``name`` (:meth:`CompiledFrom.names`: the
    function, ``Class.function``, its class, a decorator's wrapper, the label), and
    what every other key was compiled from (to list when nothing matched).

    An FX key belongs to the function of the AOTAutograd keys that load it: one no
    readable entry records a frame for is NAME's when such a key is.

    Raises:
        FunctionAmbiguousError: ``name`` means more than one function (two
            classes' ``forward``, a wrapper shared by several models).
    """
    mine: list[CacheKey] = []
    others: list[CompiledFrom] = []
    which: dict[tuple[str, str], CompiledFrom] = {}
    for k in catalog.scan.keys:
        c = compiled_from(catalog, k)
        if c is None:
            if k.kind is KeyKind.FX_GRAPH and any(
                    (cc := compiled_from(catalog, catalog.scan.find(e.key))) is not None
                    and name in cc.names() for e in catalog.loaders_of(k.key)):
                mine.append(k)
            continue
        if name in c.names():
            mine.append(k)
            which.setdefault(c.ident, c)
        else:
            others.append(c)
    if len(which) > 1:
        raise FunctionAmbiguousError(name, sorted({_resumed_as_itself(c) for c in which.values()}))
    return mine, others


def _resumed_as_itself(c: CompiledFrom) -> str:
    """``c``'s label, a resume frame's as the function it resumes."""
    if c.parent is None:
        return str(c)
    base = f"{c.module_class}.{c.parent}" if c.module_class else c.parent
    return f"{base} ({os.path.basename(c.file)}:{c.line})"


def keys_of_function(catalog: Catalog, name: str) -> tuple[set[str], tuple[str, ...]]:
    """The names of the keys compiled from function ``name`` (``--fn NAME`` of
    ``match`` and ``ls``), and, when there is none, the functions the cache does
    hold (:func:`held_functions`).

    :func:`keys_compiled_from`, plus the keys no readable entry records a compiled
    frame of whose graph was traced through a function of that name
    (:meth:`~fxcache_core.decode.entries.Origin.traced_from`: caches that predate
    ``cache_linemap``, or whose FX entries are unreadable).

    Raises:
        FunctionAmbiguousError: ``name`` means more than one function (it lists them).
    """
    found, others = keys_compiled_from(catalog, name)
    mine = {k.key for k in found}
    traced: set[str] = set()  # what the keys without a compiled frame were traced from
    for k in catalog.scan.keys:
        if k.key not in mine and compiled_from(catalog, k) is None:
            o = key_origin(catalog, k)
            if o is not None and o.traced_from(name):
                mine.add(k.key)
            elif o is not None:
                traced.add(f"{o.function} ({os.path.basename(o.file)}:{o.line})")
    return mine, (() if mine else tuple(sorted(set(held_functions(others)) | traced)))


def held_functions(others: list[CompiledFrom]) -> list[str]:
    """One line per function the cache holds keys of, for "no key was compiled from NAME"."""
    return sorted({str(c) for c in others})
