"""Which function a key was compiled from: the one place that decides it.

A compiled graph's printed form annotates its ops with the user code they
came from (``# File: demo/cases.py:12 in branch_on_size, code: ...``);
:func:`~fxcache_core.decode.entries.parse_origin` reads that into an
:class:`~fxcache_core.decode.entries.Origin`. A key's origin is that of its first
entry (in torch's order) that has one: every entry of a key holds the same
graph, traced from the same code.

``ls`` (the function column, ``--by function``, ``--fn``) and ``match``
(``--fn``, the verdict per function) both ask here, so a change to what "the
function a key was compiled from" means is made once.

:func:`key_origins` serves many keys at once: from the index's per-key table
where it has the key (one row per key, valid while the entry it came from is
unchanged), else by decoding the key's first entries (on every CPU when there
are many, :meth:`~fxcache_core.catalog.catalog.Catalog.read_ahead`), remembering what
it found.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey
from fxcache_core.catalog.catalog import Catalog
from fxcache_core.decode.entries import DecodedEntry, Origin
from fxcache_core.functions.frames import CompiledFrom

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


def function_of(origin: Origin | None, compiled: CompiledFrom | None = None) -> str | None:
    """The function name keys are grouped under (``ls --by function``, match's
    verdict lines): the function the user compiled where the cache records it
    (``compiled``, :func:`fxcache_core.functions.frames.compiled_from`: a module's
    ``Class.forward``, a wrapper's name), else the compiled frame the graph's
    op stacks share (:attr:`~fxcache_core.decode.entries.Origin.outer`), else the frame
    the graph's first op was traced in."""
    if compiled is not None:
        return compiled.name
    if origin is None:
        return None
    return origin.outer[0][0] if origin.outer else origin.function


def frame_label(function: str) -> str:
    """A frame name as a user reads it: Dynamo's resume functions
    (``torch_dynamo_resume_in_f_at_12``, torch/_dynamo/resume_execution.py)
    become ``f (resumed after the graph break at line 12)``."""
    m = _RESUME_RE.fullmatch(function)
    return f"{m.group(1)} (resumed after the graph break at line {m.group(2)})" if m else function
