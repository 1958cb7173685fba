"""Which function a key was compiled from: the one place that decides it.

A compiled graph's printed form annotates its ops with the user code they
came from (``# File: demo/cases.py:12 in branch_on_size, code: ...``);
:func:`~fxcache_core.decode.entries.parse_origin` reads that into an
:class:`~fxcache_core.decode.entries.Origin`. A key's origin is that of its first
entry (in torch's order) that has one: every entry of a key holds the same
graph, traced from the same code.

The function a key was compiled from is decided here and nowhere else, from
two facts: the compiled frame where the cache records it
(:func:`~fxcache_core.functions.frames.compiled_from`), else the key's origin.
:func:`function_of` names it (``ls``'s function column and ``--by function``,
match's verdict per function), :func:`function_frame` gives its frame (the CLI's
``fn (file:line)``), :func:`function_and_place` tells apart two functions of one
name (match's static siblings), and :func:`keys_of_function` finds the keys a
``--fn NAME`` means (``ls --fn``, ``match --fn``). Never imports or runs user
code; nothing here prints.

:func:`key_origins` serves many keys at once: from the index's per-key table
where it has the key (one row per key, valid while the entry it came from is
unchanged), else by decoding the key's first entries (on every CPU when there
are many, :meth:`~fxcache_core.catalog.catalog.Catalog.read_ahead`), remembering what
it found.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey
from fxcache_core.catalog.catalog import Catalog
from fxcache_core.decode.entries import DecodedEntry, Origin
from fxcache_core.functions.frames import CompiledFrom, compiled_from

_RESUME_RE = re.compile(r"torch_dynamo_resume_in_(\w+?)_at_(\d+)")


def key_origin(catalog: Catalog, key: CacheKey) -> Origin | None:
    """The origin of ``key``'s first entry (torch's order) that records one; None
    when no readable entry does. Decodes entries in order until one does."""
    for e in key.entries:
        d = catalog.load(e)
        if isinstance(d, DecodedEntry) and d.origin is not None:
            return d.origin
    return None


def key_origins(catalog: Catalog, keys: Sequence[CacheKey]) -> dict[str, Origin | None]:
    """Key name -> :func:`key_origin`, for each of ``keys``.

    Warm (the index has a valid row per key): one pass over the index's key
    table, no entry read. Otherwise the first entry of each key the index lacks
    is decoded (in worker processes when there are many), then later entries of
    the keys whose first entry told nothing; what is found is remembered in the
    index. Cost cold: about one entry decode per key.
    """
    idx = catalog.index
    out: dict[str, Origin | None] = idx.key_origins(keys) if idx is not None else {}
    todo = [k for k in keys if k.key not in out]
    catalog.read_ahead([k.entries[0] for k in todo if k.entries])
    for k in todo:
        found, source = None, None
        for e in k.entries:
            d = catalog.load(e)
            if isinstance(d, DecodedEntry):
                source = source or e
                if d.origin is not None:
                    found, source = d.origin, e
                    break
        if found is not None and not found.outer and k.kind is KeyKind.AOT_AUTOGRAD:
            found = _with_forward_frames(catalog, found, source)
        out[k.key] = found
        if idx is not None and source is not None:
            idx.put_key_origin(k, source, found)
    return out


def _with_forward_frames(catalog: Catalog, origin: Origin, source: object) -> Origin:
    """An AOTAutograd key's origin with the compiled frames of the forward FX entry
    it loads (only FX entries store the op stacks, ``cache_linemap``)."""
    d = catalog.load(source) if source is not None else None
    ref = d.forward if isinstance(d, DecodedEntry) else None
    fx = catalog.fx_entry_for(ref.key, ref.guards_expr) if ref is not None else None
    fd = catalog.load(fx) if fx is not None else None
    if not isinstance(fd, DecodedEntry) or fd.origin is None or not fd.origin.outer:
        return origin
    return Origin(origin.function, origin.file, origin.line, origin.functions, fd.origin.outer)


def function_frame(origin: Origin | CompiledFrom) -> tuple[str, str, int]:
    """(function, file, line) of the frame an origin's key is grouped under: the
    compiled frame the graph's op stacks share
    (:attr:`~fxcache_core.decode.entries.Origin.outer`), else the frame the graph's
    first op was traced in (a :class:`CompiledFrom`: its own frame). The CLI shows
    it as ``fn (file:line)``."""
    outer = getattr(origin, "outer", None)
    return outer[0] if outer else (origin.function, origin.file, origin.line)


def function_of(origin: Origin | None, compiled: CompiledFrom | None = None) -> str | None:
    """The function name keys are grouped under (``ls --by function``, match's
    verdict lines): the function the user compiled where the cache records it
    (``compiled``, :func:`fxcache_core.functions.frames.compiled_from`: a module's
    ``Class.forward``, a wrapper's name), else the function of
    :func:`function_frame`."""
    if compiled is not None:
        return compiled.name
    if origin is None:
        return None
    return function_frame(origin)[0]


def function_and_place(origin: Origin | None, compiled: CompiledFrom | None = None) -> str | None:
    """A function told apart from others of its name, one line: the compiled frame with
    its file and line (``str(compiled)``, ``loss_fn (train.py:12)``) where the cache
    records it, else the name of the function the first op was traced in."""
    if compiled is not None:
        return str(compiled)
    return origin.function if origin is not None else None


def key_function(catalog: Catalog, key: CacheKey) -> str | None:
    """:func:`function_and_place` of ``key``: its compiled frame, else its origin (read
    only when the frame is not recorded). Groups a function's keys across the cache."""
    c = compiled_from(catalog, key)
    return function_and_place(key_origin(catalog, key) if c is None else None, c)


def frame_label(function: str) -> str:
    """A frame name as a user reads it: Dynamo's resume functions
    (``torch_dynamo_resume_in_f_at_12``, torch/_dynamo/resume_execution.py)
    become ``f (resumed after the graph break at line 12)``."""
    m = _RESUME_RE.fullmatch(function)
    return f"{m.group(1)} (resumed after the graph break at line {m.group(2)})" if m else function


def keys_compiled_from(catalog: Catalog, name: str) -> tuple[list[CacheKey], list[CompiledFrom]]:
    """The keys compiled from the function ``name`` (:meth:`CompiledFrom.names`), and
    what every other key was compiled from (to list when nothing matched).

    An FX key no readable entry records a frame for is NAME's when an AOTAutograd
    key of NAME loads it.
    """
    mine: list[CacheKey] = []
    others: list[CompiledFrom] = []
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
        else:
            others.append(c)
    return mine, others


def keys_of_function(catalog: Catalog, name: str) -> tuple[set[str], tuple[str, ...]]:
    """The names of the keys compiled from function ``name`` (``--fn NAME`` of
    ``match`` and ``ls``), and, when there is none, the functions the cache does
    hold (:func:`held_functions`).

    :func:`keys_compiled_from`, plus the keys no readable entry records a compiled
    frame of whose graph was traced through a function of that name
    (:meth:`~fxcache_core.decode.entries.Origin.traced_from`: caches that predate
    ``cache_linemap``, or whose FX entries are unreadable).
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
