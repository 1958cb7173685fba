"""Whether a tensor input was an ``nn.Parameter``, as an AOTAutograd key's graph records it.

Dynamo makes an ``nn.Parameter`` argument a static input of the graph it traces (as it
does a module's parameters and buffers, and a tensor marked with
``torch._dynamo.mark_static_address``); AOTAutograd passes the places of those inputs on
to Inductor (``static_input_indices``), and Inductor hashes them into the FX graph's key
(``fx_kwargs[static_input_idxs]``, ``FxGraphHashDetails`` in torch/_inductor/codecache.py).
So a call that gives a plain tensor where a key's graph took a Parameter, or the reverse,
looks up another key, whatever its ``requires_grad`` (an ``nn.Parameter(t,
requires_grad=False)`` and a plain tensor are two keys too). The key's forward FX key's
components say which places are static, and the AOTAutograd entry names the source of each
place (:func:`static_sources`): for an input the call says is a Parameter or is not
(``w=[8,8]:param``, ``w=[8,8]:param=False``), that decides (``parameter``,
``parameter-differs``); where the entry does not show it, the lookup is undecided
(``parameter-unrecorded``). A call that does not say is taken to be as when the key was
compiled (``parameter-from-entry``, said on the verdict where the key's input was static).
Only AOTAutograd keys are judged so (an FX key is judged through the AOTAutograd entries
that load it). Reads the entry with the stub unpickler, in a decode worker; never imports
torch.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey
from fxcache_core.decode.entries import DecodedEntry, decode_entry
from fxcache_core.decode.unpickler import MAX_ENTRY_BYTES
from fxcache_core.decode.workers import run_one, task
from fxcache_core.guards.user_terms import user_source
from fxcache_core.lookup.binding import InputValue, TensorArg
from fxcache_core.lookup.param_account import ParamAccount
from fxcache_core.reasons import Reason

__all__ = ["parameter_accounts", "parameter_assumed", "static_places", "static_sources"]

_STATIC_RE = re.compile(r"\bfx_kwargs\[static_input_idxs\]: \[([0-9, ]{0,4000})\]\s*$")


def static_places(debug_lines: tuple[str, ...] | list[str]) -> tuple[int, ...] | None:
    """The places an FX key's components (``debug_lines``) say are static inputs
    (``fx_kwargs[static_input_idxs]: [1]``); None where no such component is there."""
    for line in debug_lines:
        m = _STATIC_RE.search(line) if isinstance(line, str) else None
        if m is not None:
            return tuple(int(n) for n in m.group(1).replace(" ", "").split(",") if n)
    return None


def static_sources(key: CacheKey, entry: DecodedEntry) -> frozenset[str] | None:
    """The Dynamo sources of the inputs that AOTAutograd key ``key``'s forward graph holds
    static, read from its first entry that decodes (the components of the forward FX key it
    records); ``entry`` (its first readable entry) names the source of each place. None
    where that is not shown: no entry says, or a place has no source."""
    if key.kind is not KeyKind.AOT_AUTOGRAD:
        return None
    places = _places(key)
    if places is None:
        return None
    by_place = {i.position: i.source for i in entry.inputs}
    if sorted(by_place) != list(range(len(entry.inputs))) or any(p not in by_place for p in places):
        return None
    sources = [by_place[p] for p in places]
    if any(s is None for s in sources):
        return None
    return frozenset(s for s in sources if s is not None)


_READ: dict[tuple[str, int], tuple[int, ...] | None] = {}


def _places(key: CacheKey) -> tuple[int, ...] | None:
    """The static places of AOTAutograd key ``key``'s first entry that shows them, read once
    per entry file in this process (a key is judged in each phase of a match)."""
    for e in key.entries:
        if e.size > MAX_ENTRY_BYTES:
            continue
        k = (e.file.where, e.size)
        if k not in _READ:
            got = run_one("static-input-places", [e.file.where, key.kind.value], e.size)
            ok = isinstance(got, list) and all(isinstance(n, int) and 0 <= n < 1 << 20 for n in got)
            _READ[k] = tuple(got) if ok else None  # type: ignore[arg-type]
        if _READ[k] is not None:
            return _READ[k]
    return None


@task("static-input-places")
def _static_places_task(arg: list) -> list | None:
    """Worker side of :func:`static_sources`: ``[path, kind]`` -> the static places of the
    entry's forward FX key, or None where the entry or that component cannot be read."""
    where, kind = arg
    try:
        with open(where, "rb") as fh:
            data = fh.read(MAX_ENTRY_BYTES + 1)
        if len(data) > MAX_ENTRY_BYTES:
            return None
        d = decode_entry(data, KeyKind(kind))
    except Exception:  # noqa: BLE001 - an entry that does not decode shows nothing
        return None
    if d.forward is None:
        return None
    got = static_places(d.forward.debug_lines)
    return list(got) if got is not None else None


def _name(src: str) -> str:
    """How a verdict names whether input ``src`` is a Parameter (``isinstance(w, nn.Parameter)``)."""
    return f"isinstance({user_source(src)}, nn.Parameter)"


def parameter_accounts(key: CacheKey, entry: DecodedEntry, inputs: Mapping[str, InputValue],
                       bound: Mapping[str, str]) -> list[ParamAccount]:
    """One account per tensor input the call says is a Parameter or is not
    (:attr:`~fxcache_core.lookup.binding.TensorArg.param`) and the AOTAutograd key
    ``key`` (its first readable ``entry``; ``bound``: the user's sources -> the key's)
    takes: as its graph records (``parameter``), another key (``parameter-differs``), or
    undecided (``parameter-unrecorded``). [] for another kind of key."""
    said = {src: t for src, t in inputs.items() if isinstance(t, TensorArg) and t.param is not None
            and bound.get(src, src) in entry.arg_sources}
    if key.kind is not KeyKind.AOT_AUTOGRAD or not said:
        return []
    static = static_sources(key, entry)
    out = []
    for src, t in said.items():
        name, value, key_src = _name(src), str(bool(t.param)), bound.get(src, src)
        if static is None:
            out.append(ParamAccount(name, value, True, "undecided", Reason(
                f"{user_source(src)}: whether key {key.key[:12]}'s graph took it as a static input (an nn.Parameter) "
                "its entries do not show (the forward FX key's static_input_idxs), and torch hashes that into the "
                "key", "parameter-unrecorded"), src))
        elif (key_src in static) != t.param:
            was = "an nn.Parameter (a static input of its graph)" if key_src in static else "a plain tensor"
            now = "an nn.Parameter" if t.param else "a plain tensor"
            out.append(ParamAccount(name, value, True, "rules-out", Reason(
                f"{user_source(src)} is {now}, and key {key.key[:12]} was compiled with {was}: Dynamo makes a "
                "Parameter a static input, and Inductor hashes the static inputs into the FX key "
                "(static_input_idxs): torch looks up another key", "parameter-differs"), src))
        else:
            out.append(ParamAccount(name, value, True, "accounted", Reason(
                f"{user_source(src)}: {'an nn.Parameter' if t.param else 'a plain tensor'}, as key {key.key[:12]}'s "
                "graph records (its static inputs)", "parameter"), src, "the key's static inputs"))
    return out


def parameter_assumed(key: CacheKey, entry: DecodedEntry, inputs: Mapping[str, InputValue],
                      bound: Mapping[str, str]) -> list[str]:
    """The user's sources of the tensor inputs the call does not say are Parameters or not
    that AOTAutograd key ``key``'s graph took as static inputs (taken to be Parameters, as
    when the key was compiled); [] where none is or the entry does not show it."""
    open_ = {src for src, t in inputs.items() if isinstance(t, TensorArg) and t.param is None}
    if key.kind is not KeyKind.AOT_AUTOGRAD or not open_:
        return []
    static = static_sources(key, entry)
    if not static:
        return []
    return [src for src in sorted(open_) if bound.get(src, src) in static]
