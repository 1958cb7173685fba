"""What ``fxcache ls`` lists: keys with the function each was compiled from,
filtered by function, sorted, grouped by function.

A user thinks in functions, the cache in base32 keys; this module puts the
function (:mod:`fxcache_core.functions.origin`) next to each key and folds keys into one
row per function (:class:`FunctionGroup`, like ``hf cache ls`` does repos).
Values only; the CLI renders them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey
from fxcache_core.catalog.reader import Catalog
from fxcache_core.decode.entries import Origin
from fxcache_core.errors import FunctionLookupError
from fxcache_core.functions.origin import function_name, key_origins, keys_of_function

Sort = Literal["size", "age", "name"]
"""``size``: largest first; ``age``: least recently used first (what ``gc
--max-size`` removes first); ``name``: by function name, then key."""


@dataclass(frozen=True, slots=True)
class KeyRow:
    """A key and the function it was compiled from (None where no entry says)."""

    key: CacheKey
    origin: Origin | None

    def to_json(self, *, unreadable: Mapping[str, str] | None = None,
                regions: Mapping[str, Any] | None = None,
                remote: tuple[str | None, str | None] | None = None) -> dict[str, object]:
        """:meth:`CacheKey.to_json` plus ``origin`` (the first traced op, ``fn (file:line)``),
        ``function`` and ``compiled_from`` (:class:`~fxcache_core.functions.origin.FunctionName`'s ``name`` and
        ``label``, as ``match`` names it),
        ``file`` and ``line`` (of the first traced op; None where unknown).

        What a listing learnt beyond the scan, each given only when it was asked for:
        ``unreadable`` (entry path, ``Entry.file.where`` -> why it cannot be decoded)
        adds ``unreadable`` to each entry (None: it decodes); ``regions`` (entry path ->
        the shapes it serves, a :class:`~fxcache_core.guards.user_terms.Region`, or None
        where unknown) adds ``region`` to each entry; ``remote`` (the Redis key the row
        was read from, and ``same``/``differs``/None from
        :func:`~fxcache_core.remote.redis_store.agreement`) adds ``redis_key`` and ``local``."""
        o = self.origin
        body: dict[str, Any] = {**self.key.to_json(), "origin": str(o) if o else None,
                                "function": function_name(o).name, "compiled_from": function_name(o).label,
                                "file": o.file if o else None, "line": o.line if o else None}
        if unreadable is not None or regions is not None:
            for e, ej in zip(self.key.entries, body["entries"], strict=True):
                if unreadable is not None:
                    ej["unreadable"] = unreadable.get(e.file.where)
                if regions is not None:
                    reg = regions.get(e.file.where)
                    ej["region"] = reg.to_json() if reg is not None else None
        if remote is not None:
            body["redis_key"], body["local"] = remote
        return body


@dataclass(frozen=True, slots=True)
class FunctionGroup:
    """The keys of one function.

    Attributes:
        function: its name (None: keys whose graph records no origin).
        origin: the first key's origin (file and line of the first traced op).
        keys: its keys, in the listing's order.
    """

    function: str | None
    origin: Origin | None
    keys: tuple[KeyRow, ...]

    @property
    def size(self) -> int:
        """Bytes of every entry of its keys."""
        return sum(r.key.size for r in self.keys)

    @property
    def entries(self) -> int:
        return sum(len(r.key.entries) for r in self.keys)

    @property
    def last_used(self) -> float | None:
        """When an entry of its keys was last used (epoch seconds)."""
        return max((r.key.last_used for r in self.keys if r.key.last_used is not None), default=None)

    def to_json(self) -> dict[str, object]:
        o = self.origin
        return {"function": self.function, "compiled_from": function_name(o).label,
                "origin": str(o) if o else None,
                "file": o.file if o else None, "line": o.line if o else None,
                "size": self.size, "entries": self.entries, "last_used": self.last_used,
                "fx_keys": sum(1 for r in self.keys if r.key.kind is KeyKind.FX_GRAPH),
                "aot_keys": sum(1 for r in self.keys if r.key.kind is KeyKind.AOT_AUTOGRAD),
                "keys": [r.to_json() for r in self.keys]}


def key_rows(catalog: Catalog, function: str | None = None, sort: Sort | None = None) -> tuple[KeyRow, ...]:
    """Every key of the catalog's scan with its origin (:func:`~fxcache_core.functions.origin.key_origins`),
    only those compiled from ``function`` when given, in ``sort`` order (else the scan's).

    Raises:
        FunctionLookupError: ``function`` matches no key (it lists those that do).
    """
    keys = catalog.scan.keys
    if function is not None:  # match --fn's meaning: the function the user compiled
        mine, held = keys_of_function(catalog, function)
        if not mine:
            raise FunctionLookupError(function, held)
        keys = tuple(k for k in keys if k.key in mine)
    origins = key_origins(catalog, keys)
    rows = [KeyRow(k, origins.get(k.key)) for k in keys]
    return tuple(_sorted(rows, sort, lambda r: (r.key.size, r.key.last_used, function_name(r.origin).name,
                                                r.key.key)))


def by_function(rows: Sequence[KeyRow], sort: Sort | None = None) -> tuple[FunctionGroup, ...]:
    """``rows`` folded into one :class:`FunctionGroup` per function, in ``sort``
    order (else by name), the rows of each in their given order."""
    groups: dict[str | None, list[KeyRow]] = {}
    for r in rows:
        groups.setdefault(function_name(r.origin).name, []).append(r)
    out = [FunctionGroup(f, next((r.origin for r in rs if r.origin is not None), None), tuple(rs))
           for f, rs in groups.items()]
    return tuple(_sorted(out, sort or "name", lambda g: (g.size, g.last_used, g.function, "")))


def _sorted(items: list, sort: Sort | None, fields) -> list:
    """``items`` by ``sort``; ``fields(item)`` gives (size, last used, name, tie-break)."""
    if sort is None:
        return items
    if sort == "size":
        return sorted(items, key=lambda x: (-fields(x)[0], fields(x)[3]))
    if sort == "age":
        return sorted(items, key=lambda x: (fields(x)[1] is None, fields(x)[1] or 0.0, fields(x)[3]))
    return sorted(items, key=lambda x: (fields(x)[2] is None, fields(x)[2] or "", fields(x)[3]))
