"""Global state and settings a call runs under, beyond the grad mode (which
:mod:`fxcache_core.lookup.ambient` reads): inference mode, autocast, deterministic
algorithms, the default dtype, ``torch.compile``'s keywords and Dynamo's, Inductor's and
AOTAutograd's config.

Each is part of what torch looks a key up with, and none is recorded in the cache:

* autocast: Dynamo guards it (``GLOBAL_STATE``, torch/_dynamo/guards.py) and AOTAutograd
  hashes each device's autocast dtype into its key (``autocast_state``,
  ``AOTAutogradCacheDetails._record_runtime_state`` in
  torch/_functorch/_aot_autograd/autograd_cache.py);
* deterministic algorithms: Dynamo guards them, AOTAutograd and Inductor hash them
  (``deterministic_algorithms``; ``deterministic_algorithms_settings`` in
  ``FxGraphHashDetails``, torch/_inductor/codecache.py);
* the default dtype: Dynamo guards it, Inductor hashes it (``default_dtype``);
* the intra-op thread count: Dynamo guards it, Inductor hashes it for CPU code
  (``cpp_runtime_thread_count``);
* ``torch.compile(mode=...)`` sets Inductor config, and Inductor hashes its config into
  every FX key (``freezing`` on a module compiled under ``no_grad`` skips the caches);
  AOTAutograd hashes its own (``autograd_config``); Dynamo's config decides what is
  traced and guarded (``specialize_float``, ``automatic_dynamic_shapes``...).

So a call that gives any of them (:func:`~fxcache_core.lookup.binding.is_state_item`)
gets an undecided account on every key that otherwise fits (``<what>-unrecorded``): the
value may or may not be the one the key was compiled with, and a wrong guess is a wrong
verdict. A run's trace of a compile that looked the key up records the global state it was
entered under, which AOTAutograd and Inductor compiled it under (Dynamo's ``GLOBAL_STATE``
guard: :mod:`fxcache_core.lookup.recorded_state`): the call's value there accounts for it
(``state-recorded``); another fails the key's guards, and where the key hashes the item
(:data:`HASHED`: autocast and the grad mode into AOTAutograd's, the default dtype and
deterministic algorithms into both kinds) torch looks up another key
(``state-differs-from-record``), else it is undecided (``state-differs-unhashed``). Left out, each is taken to be as when the key was compiled, as the grad mode
is. Decided, because nothing of a key depends on them: inference mode (it turns the grad
mode off, and the grad mode's rule decides; AOTAutograd hashes the grad mode, not
inference mode, for inputs made outside it), ``fullgraph=False`` (in no guard and no key)
and ``backend='inductor'`` (the caches fxcache reads are Inductor's). Never imports torch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey
from fxcache_core.errors import param
from fxcache_core.lookup.binding import DEFAULT_DTYPE, INFERENCE_MODE, NUM_THREADS
from fxcache_core.lookup.match_report import KeyMatch, MatchReport
from fxcache_core.lookup.param_account import ParamAccount
from fxcache_core.lookup.pyvalues import PyValue, TorchDtype, text_of
from fxcache_core.lookup.recorded_state import recorded_state
from fxcache_core.reasons import Reason, code_of

__all__ = ["HASHED", "config_stated", "recorded_account", "state_accounts"]

_UNRECORDED = {
    "torch.is_autocast_enabled()": Reason(
        "Dynamo guards the autocast state and AOTAutograd hashes each device's autocast dtype into its key",
        "autocast-unrecorded"),
    "torch.are_deterministic_algorithms_enabled()": Reason(
        "Dynamo guards torch.use_deterministic_algorithms, and AOTAutograd and Inductor hash it into their keys",
        "deterministic-unrecorded"),
    NUM_THREADS: Reason("Dynamo guards the thread count and Inductor hashes it into a CPU kernel's key",
                        "num-threads-unrecorded"),
    DEFAULT_DTYPE: Reason("Dynamo guards the default dtype and Inductor hashes it into its key",
                          "default-dtype-unrecorded"),
    "torch.compile.mode": Reason("the mode sets Inductor's config, which Inductor hashes into its key",
                                 "compile-mode-unrecorded"),
    "torch.compile.fullgraph": Reason(
        "fullgraph is in no key, but where the function breaks its graph torch raises instead",
        "fullgraph-unrecorded"),
    "torch.compile.backend": Reason("another backend than Inductor reads none of the caches fxcache reads",
                                    "backend-unrecorded"),
    "torch._dynamo.config.": Reason("Dynamo's config decides what it traces and guards", "dynamo-config-unrecorded"),
    "torch._inductor.config.": Reason("Inductor hashes its config into its key", "inductor-config-unrecorded"),
    "torch._functorch.config.": Reason("AOTAutograd hashes its config into its key", "functorch-config-unrecorded"),
}
"""Each state item match cannot decide: why it matters, and the code (a name ending in
``.`` covers every config value under it)."""


_FIELDS = {
    "torch.is_grad_enabled()": ("grad_mode", "the grad mode"),
    "torch.is_autocast_enabled()": ("autocast", "autocast (on for any device)"),
    DEFAULT_DTYPE: ("default_dtype", "the default dtype"),
    "torch.are_deterministic_algorithms_enabled()": ("deterministic", "deterministic algorithms"),
    NUM_THREADS: ("num_threads", "the thread count"),
}
"""Each state item a run's trace records: its field
(:data:`~fxcache_core.lookup.recorded_state.STATE_FIELDS`) and what it is, in words."""

HASHED = {
    "grad_mode": (KeyKind.AOT_AUTOGRAD,),
    "autocast": (KeyKind.AOT_AUTOGRAD,),
    "default_dtype": (KeyKind.AOT_AUTOGRAD, KeyKind.FX_GRAPH),
    "deterministic": (KeyKind.AOT_AUTOGRAD, KeyKind.FX_GRAPH),
}
"""The kinds of key each field is hashed into, whatever the graph
(``AOTAutogradCacheDetails._record_runtime_state``: ``grad_enabled``, ``autocast_state``,
``deterministic_algorithms``; ``FxGraphHashDetails``, which AOTAutograd's details extend:
``default_dtype``, ``deterministic_algorithms_settings``). The thread count is hashed only
for a graph with CPU C++ code, and is left out."""


def recorded_account(key: CacheKey, name: str, value: object,
                     records: Sequence[Mapping[str, object]]) -> ParamAccount | None:
    """What ``records`` (the key's, from runs' traces) show of state item ``name`` at the
    call's ``value`` (see the module docstring); None where they record nothing of it, or
    where autocast was on there and is on in the call (which dtype, the call does not say)."""
    field, what = _FIELDS.get(name, (None, ""))
    if field is None:
        return None
    seen = recorded_state(records, field)
    mine = value.name if isinstance(value, TorchDtype) else value
    if not seen or (field == "autocast" and mine is True and True in seen):
        return None
    said = f"{name}={text_of(value)}"
    if any(type(s) is type(mine) and s == mine for s in seen):
        return ParamAccount(name, text_of(value), True, "accounted", Reason(
            f"{said}: as when key {key.key[:12]} was compiled (Dynamo's guard on the global state in a run's trace)",
            "state-recorded"), name, "Dynamo's global state guard in a traced run")
    shown = " or ".join(f"torch.{s}" if field == "default_dtype" else text_of(s) for s in seen)
    if key.kind in HASHED.get(field, ()):
        return ParamAccount(name, text_of(value), True, "rules-out", Reason(
            f"{said}: key {key.key[:12]} was compiled with {what} {shown} (Dynamo's guard on the global state in a "
            "run's trace), and torch hashes it into the key: torch looks up another key",
            "state-differs-from-record"), name)
    return ParamAccount(name, text_of(value), True, "undecided", Reason(
        f"{said}: key {key.key[:12]} was compiled with {what} {shown} (Dynamo's guard on the global state in a "
        "run's trace), so its guards fail and torch traces the call again; this kind of key does not hash it, and "
        "whether the new trace gives this key the cache cannot tell", "state-differs-unhashed"), name)


def _why(name: str) -> Reason:
    return _UNRECORDED.get(name) or next(v for k, v in _UNRECORDED.items() if k.endswith(".") and name.startswith(k))


def state_accounts(key: CacheKey, state: Mapping[str, PyValue],
                   records: Sequence[Mapping[str, object]] = ()) -> list[ParamAccount]:
    """One :class:`~fxcache_core.lookup.param_account.ParamAccount` per state item the
    call gives (``state``: item name -> value, as
    :attr:`~fxcache_core.lookup.query.CallQuery.state` holds them), for ``key``, a key
    that otherwise fits: ``accounted`` where nothing of the key depends on the value,
    what ``records`` (the key's, from runs' traces) show of it where they record it,
    else ``undecided`` (the module docstring)."""
    out = []
    for name, v in state.items():
        value = v.value
        said = f"{name}={v}"
        if (got := recorded_account(key, name, value, records)) is not None:
            out.append(got)
            continue
        if name == INFERENCE_MODE:
            out.append(ParamAccount(name, str(v), True, "accounted", Reason(
                f"{said}: " + ("inference mode turns the grad mode off, and the grad mode's rule decides; " if value
                               else "") + "no key hashes inference mode itself (taken for inputs made outside it)",
                "inference-mode"), name, "inference mode: no part of the key"))
        elif (name, value) in (("torch.compile.fullgraph", False), ("torch.compile.backend", "inductor")):
            out.append(ParamAccount(name, str(v), True, "accounted", Reason(
                f"{said}: no part of Dynamo's guards or of the keys", "compile-keyword"), name,
                "a torch.compile keyword in no key"))
        else:
            why = _why(name)
            out.append(ParamAccount(name, str(v), True, "undecided", Reason(
                f"{said}: {why}; the cache does not record which value key {key.key[:12]} was compiled with: "
                f"undecided (leave it out of {param('inputs')} to take it as when the key was compiled)",
                why.code), name))
    return out


_TRACING_CODES = frozenset({
    "dim-traced-static", "stride-traced-static", "static-key-under-dynamic", "int-specialized",
    "auto-scalar-baked", "int-constant-sibling",
})
"""Why a key does not fit that rests on what Dynamo traces static or as a symbol under its
default config (a fresh process's first call static, automatic dynamic after a recompile,
ints specialized)."""


def config_stated(report: MatchReport) -> MatchReport:
    """``report`` where the call states Dynamo config items (``report.dynamo_config``): each
    key ruled out only by a rule of what Dynamo traces static or as a symbol
    (:data:`_TRACING_CODES`) is undecided in every phase, as that is the config stated, and
    the cache does not record the values its keys were compiled with."""
    if not report.dynamo_config:
        return report
    stated = ", ".join(f"{name}={value}" for name, value in report.dynamo_config)
    why = Reason(f"{stated}: Dynamo's config decides which dims and Python values it traces static or as "
                 "symbols, which ruled this key out; the cache does not record which value its keys were "
                 "compiled with", "dynamo-config-unrecorded")

    def undecided(m: KeyMatch) -> KeyMatch:
        if m.fits or not any(code_of(r) in _TRACING_CODES for r in m.reasons):
            return m
        return replace(m, fits=True, uncertain=(*m.uncertain, why))

    return replace(report, results=tuple(undecided(m) for m in report.results),
                   passes=tuple(replace(p, results=tuple(undecided(m) for m in p.results)) for p in report.passes))
