"""Ints Dynamo specialized while tracing: a key's SymInt input that is a number.

Under ``dynamic=True`` (or after automatic dynamic made it one) an int argument is a
SymInt input of the graph; where the code needs its value concrete (a reduction's
``dim``, a shape), ``ShapeEnv`` specializes it to its hint
(torch/fx/experimental/symbolic_shapes.py): the key still takes the input, printed
``Sym(1)``, and its entries guard ``L['dim'] == 1``. A call with another value fails
that guard, and Dynamo traces again with the new value baked in where this graph has
1: that graph is this key's only if its constants come out the same, which
:func:`judge_pinned` reads with :func:`~fxcache_core.lookup.fit_floats.baked_provenance`.
The int rule (:mod:`fxcache_core.lookup.int_args`) asks it for a value the call gives,
the parameters' accounting (:mod:`fxcache_core.lookup.accounting`) for one it leaves out
at its default (a guard the fit never checks). Never imports torch.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from fxcache_core.cache.scan import CacheKey
from fxcache_core.catalog.reader import Catalog
from fxcache_core.decode.entries import DecodedEntry
from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.lookup.binding import InputValue
from fxcache_core.lookup.fit_floats import baked_provenance
from fxcache_core.lookup.pyvalues import PyValue
from fxcache_core.reasons import Reason

__all__ = ["judge_pinned", "pinned_default", "pinned_items", "pinned_value"]


def pinned_value(entry: DecodedEntry, src: str) -> int | None:
    """The value a SymInt input of ``entry`` from ``src`` was specialized to while tracing
    (``Sym(1)``: its expression is a number), None when it is no such input."""
    i = next((i for i in entry.inputs if i.source == src and i.is_symint), None)
    if i is None or i.expr is None or re.fullmatch(r"-?[0-9]{1,19}", i.expr.strip()) is None:
        return None
    return int(i.expr)


def pinned_items(entry: DecodedEntry, src: str, n: int) -> dict[int, int]:
    """:func:`pinned_value` of each of the ``n`` items of a tuple ``src`` (``L['dims'][0]``)."""
    return {i: p for i in range(n) if (p := pinned_value(entry, f"{src}[{i}]")) is not None}


def judge_pinned(catalog: Catalog, key: CacheKey, frame: CompiledFrom | None, inputs: Mapping[str, InputValue],
                 src: str, value: object, pinned: object) -> tuple[str, Reason]:
    """An int (or a tuple of ints) of ``src`` that ``key`` takes as SymInts Dynamo
    specialized while tracing (``Sym(1)``: a guard ``L['dim'] == 1``), whose call value
    ``value`` (given, or the default the call leaves it at) is not ``pinned``. The guard
    fails, and torch traces again with the call's value, which the new graph has where
    this one has ``pinned``: where the key's constants show it
    (:func:`~fxcache_core.lookup.fit_floats.baked_provenance`, ``inputs`` with ``value``)
    and they differ, that graph is another key's (``("problem", why)``); otherwise which
    key it is the cache cannot tell (``("note", why)``). Never the guard's MISS of this
    key. Mirrors ``ShapeEnv``'s specialization of a SymInt to its hint
    (torch/fx/experimental/symbolic_shapes.py)."""
    m = re.fullmatch(r"L\['(\w+)'\]", src)
    shown = "(" + ", ".join(map(str, value)) + ")" if isinstance(value, tuple) else str(value)
    given = {**inputs, src: PyValue(value) if isinstance(value, tuple) else value}
    prov = baked_provenance(catalog, key, m.group(1), given, frame) if m is not None else None  # type: ignore[arg-type]
    if prov is not None and prov.status == "differs" and prov.why is not None:
        return "problem", Reason(
            f"{src} was specialized to {pinned} when this key was traced (its guard {src} == {pinned}): "
            f"torch traces again with {shown}, and {prov.why}", "specialized-int-differs")
    return "note", Reason(
        f"{src}={shown} fails this key's guard {src} == {pinned} (Dynamo specialized the int while "
        f"tracing): torch traces again with {shown}, and whether that graph is this key's (a new entry) "
        "or another key's the cache cannot tell", "specialized-int-retraced")


def pinned_default(catalog: Catalog, key: CacheKey, entry: DecodedEntry, frame: CompiledFrom | None,
                   inputs: Mapping[str, InputValue], sources: tuple[str, ...],
                   value: object) -> tuple[str, Reason] | None:
    """A parameter the call leaves out, at its default ``value`` (an int or a tuple of
    ints), that ``entry``'s key takes (from one of ``sources``) as SymInts Dynamo
    specialized to another value: :func:`judge_pinned`'s answer. None where the default
    is the pinned value, or nothing is pinned."""
    for src in sources:
        if type(value) is int:
            pins = {0: p} if (p := pinned_value(entry, src)) is not None else {}
            items: tuple[int, ...] = (value,)
            was: object = pins.get(0)
        elif isinstance(value, tuple) and value and all(type(i) is int for i in value):
            pins, items = pinned_items(entry, src, len(value)), value
            was = "(" + ", ".join(str(pins.get(i, "?")) for i in range(len(value))) + ")"
        else:
            return None
        if pins and any(items[i] != v for i, v in pins.items()):
            return judge_pinned(catalog, key, frame, inputs, src, value, was)
    return None
