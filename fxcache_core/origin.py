"""Which function a key was compiled from: the one place that decides it.

A compiled graph's printed form annotates its ops with the user code they
came from (``# File: demo/cases.py:12 in branch_on_size, code: ...``);
:func:`~fxcache_core.decode.parse_origin` reads that into an
:class:`~fxcache_core.decode.Origin`. A key's origin is that of its first
entry (in torch's order) that has one: every entry of a key holds the same
graph, traced from the same code.

``ls`` (the function column, ``--by function``, ``--fn``) and ``match``
(``--fn``, the verdict per function) both ask here, so a change to what "the
function a key was compiled from" means is made once.

:func:`key_origins` serves many keys at once: from the index's per-key table
where it has the key (one row per key, valid while the entry it came from is
unchanged), else by decoding the key's first entries (on every CPU when there
are many, :meth:`~fxcache_core.catalog.Catalog.read_ahead`), remembering what
it found.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from .catalog import Catalog
from .decode import DecodedEntry, Origin
from .store import CacheKey

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
        out[k.key] = found
        if idx is not None and source is not None:
            idx.put_key_origin(k, source, found)
    return out


def function_of(origin: Origin | None) -> str | None:
    """The function name keys are grouped under (``ls --by function``, match's
    verdict lines): the frame the graph's first op was traced in."""
    return None if origin is None else origin.function


def compiled_from(origin: Origin | None, name: str) -> bool:
    """Whether a key with this origin was compiled from function ``name`` (``--fn``):
    one of the graph's frames is ``name``, or the frame Dynamo resumes ``name``
    in after a graph break (:meth:`~fxcache_core.decode.Origin.traced_from`)."""
    return origin is not None and origin.traced_from(name)


def function_names(origins: Iterable[Origin | None]) -> list[str]:
    """The distinct :func:`function_of` names, sorted (for "no key was compiled
    from that function" messages)."""
    return sorted({f for o in origins if (f := function_of(o)) is not None})


def frame_label(function: str) -> str:
    """A frame name as a user reads it: Dynamo's resume functions
    (``torch_dynamo_resume_in_f_at_12``, torch/_dynamo/resume_execution.py)
    become ``f (resumed after the graph break at line 12)``."""
    m = _RESUME_RE.fullmatch(function)
    return f"{m.group(1)} (resumed after the graph break at line {m.group(2)})" if m else function
