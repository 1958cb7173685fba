"""Floats in the fit: taken as a tensor (tensorified) or baked into the graph.

``VariableBuilder.wrap_symfloat`` (torch/_dynamo/variables/builder.py) specializes a
Python float into the graph as a constant on a fresh process's first call under
``dynamic=None``/``False``, and under ``dynamic=True`` (or after a recompile) makes
it a 0-d float64 graph input; nan and inf are always specialized. Reading which
floats a key tensorified or baked in is :mod:`fxcache_core.lookup.floats`'s; this
module judges the call's floats against them, adding to the fit's
:class:`~fxcache_core.lookup.fit_binding.Binding`. Never prints.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from fxcache_core.cache.scan import CacheKey
from fxcache_core.catalog.reader import Catalog
from fxcache_core.lookup.binding import DynamicMode, InputValue
from fxcache_core.lookup.fit_binding import Binding, how
from fxcache_core.lookup.floats import baked_floats
from fxcache_core.reasons import Reason


def fit_tensorified(b: Binding, base: str, val: InputValue | None, mode: DynamicMode) -> None:
    """A float the key takes tensorified (a 0-d float64 graph input whose source is
    ``L['scale']``, see :mod:`fxcache_core.lookup.floats`): any value serves, but only where torch
    tensorifies it: not on a fresh process's first call under dynamic=None/False,
    nor for nan and inf."""
    if val is None:
        return
    if not isinstance(val, float):
        b.problems.append(Reason(f"{base} is a Python float taken as a tensor here, given {val}",
                                 "wrong-input-type"))
    elif math.isnan(val) or math.isinf(val):
        b.problems.append(Reason(f"{base} = {val}: torch specializes nan and inf floats, so it traces "
                                 "another graph (this key takes the float as a tensor)", "float-specialized"))
    elif mode in (DynamicMode.NONE, DynamicMode.FALSE):
        b.problems.append(Reason(
            f"{base} is a Python float taken as a tensor here (tensorified), but under "
            f"dynamic={mode.value.capitalize()} a fresh process's first call specializes a float "
            "into the graph as a constant, so torch looks up another key (after a call with "
            "another value, automatic dynamic tensorifies it: this key)", "float-specialized"))
    elif mode is DynamicMode.UNKNOWN:
        b.notes.append(Reason(
            f"{base} is a float taken as a tensor here: under dynamic=True torch does that and "
            "looks up this key; under dynamic=None a fresh process's first call specializes it "
            f"into another key ({how()})", "float-depends-on-mode"))


def fit_baked_floats(catalog: Catalog, key: CacheKey, b: Binding,
                     inputs: Mapping[str, InputValue], bases: set[str], mode: DynamicMode) -> None:
    """Floats the user gave that the key does not take: specialized, a constant of the
    graph (:mod:`fxcache_core.lookup.floats`). The key serves only the value it baked in."""
    for src, val in inputs.items():
        if not isinstance(val, float) or src in bases:
            continue
        got = baked_float(catalog, key, src, val, mode)
        if got is not None and got[0] == "problem":
            b.problems.append(got[1])
        elif got is not None and got[0] == "note":
            b.notes.append(got[1])


def baked_float(catalog: Catalog, key: CacheKey, src: str, val: float,
                mode: DynamicMode) -> tuple[str, Reason] | None:
    """What the float ``val`` of ``src`` (``L['scale']``) says about a key that does not
    take it: ``("baked", why)`` when the graph has it as a constant where its code
    computes with it (and the mode specializes it), ``("note", why)`` when that depends
    on the mode, ``("problem", why)`` when the graph has another constant or the mode
    tensorifies it; None when no op of the graph computes with ``src`` (its code lines
    never name it: nothing read here says what the key was traced with)."""
    m = re.fullmatch(r"L\['(\w+)'\]", src)
    if m is None:
        return None
    consts = baked_floats(catalog, key, m.group(1))
    if consts is None:
        return None
    special = math.isnan(val) or math.isinf(val)
    if val in consts or (math.isnan(val) and any(map(math.isnan, consts))):
        if mode is DynamicMode.TRUE and not special:
            return "problem", Reason(
                f"{src} = {val} is a constant of this key's graph (specialized), but under "
                "dynamic=True torch takes a float as a tensor input: another key", "float-tensorified")
        if mode is DynamicMode.UNKNOWN and not special:
            return "note", Reason(
                f"{src} = {val} is a constant of this key's graph: torch specializes a float "
                "so on a fresh process's first call under dynamic=None, not under "
                f"dynamic=True ({how()})", "float-depends-on-mode")
        return "baked", Reason(f"{val} is a constant of this key's graph where its code computes with "
                               f"{m.group(1)}", "baked-constant")
    shown = ", ".join(sorted({repr(c) for c in consts})) or "no float constant"
    return "problem", Reason(
        f"{src} is specialized into this key's graph as a constant ({shown} where its code "
        f"computes with it), given {val}: torch traces another graph", "float-constant-differs")
