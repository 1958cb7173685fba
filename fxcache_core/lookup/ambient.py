"""What a key depends on beyond the values of the call's arguments: the grad mode, each
input's ``requires_grad``, and globals of the function's module.

AOTAutograd hashes the grad mode into its key (``grad_enabled = torch.is_grad_enabled()``,
``AOTAutogradCacheDetails._record_runtime_state`` in
torch/_functorch/_aot_autograd/autograd_cache.py) and each tensor input's
``requires_grad`` (the example inputs' ``TensorMetadata``, ``FxGraphHashDetails`` in
torch/_inductor/codecache.py); Dynamo guards both (``GLOBAL_STATE``'s ``grad_mode``,
``TENSOR_MATCH``'s ``requires_grad``, torch/_dynamo/guards.py). With grad enabled and an
input that requires grad it compiles a training graph, with a backward, unless no output
requires grad (``create_aot_state`` in torch/_functorch/aot_autograd.py). An AOTAutograd
entry records each input's flag (``runtime_metadata.input_info[i].requires_grad``,
:attr:`~fxcache_core.decode.entries.DecodedEntry.requires_grad`) and its backward, not the
grad mode. So, for an AOTAutograd key the call otherwise fits (:func:`ambient_accounts`):

* an input the call says requires grad, or not (``w=[8,8]:requires_grad=True``), against
  the entry's flag for that input: another value is another key (``requires-grad-differs``);
* the grad mode the call gives (``torch.is_grad_enabled()=False``,
  :data:`~fxcache_core.lookup.binding.GRAD_MODE`): an entry with a backward was compiled
  with grad enabled (``grad-mode``), so a call under ``torch.no_grad()`` looks up another
  key (``grad-mode-differs``); an entry without one was compiled under ``no_grad``, or with
  grad enabled and nothing that needed a backward: the cache cannot tell which
  (``grad-mode-unrecorded``), unless its graph computes an output from an input that
  required grad by ops that carry grad (:mod:`fxcache_core.lookup.grad_paths`): then grad
  was disabled (``grad-mode-off``; with grad enabled another key, ``grad-mode-off-differs``),
  or a run's trace recorded the grad mode a compile that looked it up was entered under
  (Dynamo's ``GLOBAL_STATE`` guard, :func:`~fxcache_core.lookup.global_state.recorded_account`:
  the same, ``state-recorded``; another, ``state-differs-from-record``);
* a global given with the call (``G['GAIN']=3.0``, not a tensor the key takes): Dynamo
  guards the value the code read and bakes it into the graph, and the cache does not
  record it (``global-unrecorded``), unless the key's graph shows it as a constant read
  exactly (:mod:`fxcache_core.lookup.state_constants`: ``x.relu() * GAIN``), which decides.

What the call does not say is taken to be as when the key was compiled (as the dtypes
and a module's own state are). Never imports torch.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey
from fxcache_core.decode.entries import DecodedEntry
from fxcache_core.errors import param
from fxcache_core.guards.user_terms import user_source
from fxcache_core.lookup.binding import GRAD_MODE, InputValue, TensorArg
from fxcache_core.lookup.global_state import recorded_account
from fxcache_core.lookup.param_account import ParamAccount
from fxcache_core.lookup.pyvalues import PyValue
from fxcache_core.lookup.state_constants import StateJudge
from fxcache_core.reasons import Reason

__all__ = ["ambient_accounts"]


def ambient_accounts(key: CacheKey, entry: DecodedEntry, inputs: Mapping[str, InputValue],
                     bound: Mapping[str, str], grad_enabled: bool | None,
                     accounted: frozenset[str] = frozenset(), judge: StateJudge | None = None,
                     grad_off: Callable[[], str | None] | None = None,
                     records: Sequence[Mapping[str, object]] = ()) -> list[ParamAccount]:
    """One :class:`~fxcache_core.lookup.param_account.ParamAccount` per thing the module
    docstring lists that the call says: the grad mode, each tensor input given with
    ``requires_grad``, each global given; [] for a key that is no AOTAutograd key.

    ``entry`` is the key's first readable entry; ``bound`` maps the user's sources to the
    key's (``KeyMatch.bound``); ``accounted``: the sources already accounted for (a
    global the key takes is its input); ``judge``: what a global's value says where the
    key's graph shows it as a constant read exactly
    (:func:`~fxcache_core.lookup.state_constants.state_judge`), else it is undecided;
    ``grad_off``: for an entry without a backward, the path by which its graph computes an
    output from an input that required grad (:func:`~fxcache_core.lookup.grad_paths.grad_off_path`),
    asked on demand: then it was compiled with grad disabled; ``records``: the key's, from
    runs' traces."""
    if key.kind is not KeyKind.AOT_AUTOGRAD:
        return []
    out = [_requires_grad(key, entry, src, t, bound.get(src, src))
           for src, t in inputs.items() if isinstance(t, TensorArg) and t.requires_grad is not None]
    out = [a for a in out if a is not None]
    if grad_enabled is not None:
        out.append(_grad_mode(key, entry, grad_enabled, grad_off, records))
    for src, v in inputs.items():
        if src.startswith("G[") and not isinstance(v, TensorArg) and src not in accounted and src not in bound:
            if judge is not None and (got := judge(src, src, v.value if isinstance(v, PyValue) else v)):
                out.append(got)
                continue
            out.append(ParamAccount(src, str(v), True, "undecided", Reason(
                f"{src}={v}: a global the code may read, which Dynamo guards and bakes into the graph; the "
                f"cache does not record which value key {key.key[:12]} was traced with: undecided (left out, "
                "the global is taken to be as it was when the key was compiled)", "global-unrecorded"), src))
    return out


def _requires_grad(key: CacheKey, entry: DecodedEntry, src: str, t: TensorArg, key_src: str) -> ParamAccount | None:
    """The call's ``requires_grad`` for input ``src`` against the entry's flag."""
    name = f"{user_source(src)}.requires_grad"
    try:
        flag = entry.requires_grad[entry.arg_sources.index(key_src)]
    except (ValueError, IndexError):
        flag = None
    if flag is None:
        if key_src not in entry.arg_sources:
            return None  # not an input of this key (the key's other rules speak of it)
        return ParamAccount(name, str(t.requires_grad), True, "undecided", Reason(
            f"{name}={t.requires_grad}: the entry of key {key.key[:12]} does not record whether it required "
            "grad when compiled (torch hashes requires_grad into the key)", "requires-grad-unrecorded"), src)
    if flag != t.requires_grad:
        return ParamAccount(name, str(t.requires_grad), True, "rules-out", Reason(
            f"{name}={t.requires_grad}: key {key.key[:12]} was compiled with it {'' if flag else 'not '}requiring "
            "grad, and torch hashes requires_grad into the key: torch looks up another key",
            "requires-grad-differs"), src)
    return ParamAccount(name, str(t.requires_grad), True, "accounted", Reason(
        f"{name}={t.requires_grad}: as the entry of key {key.key[:12]} records", "requires-grad"), src,
        "the entry's requires_grad")


def _grad_mode(key: CacheKey, entry: DecodedEntry, enabled: bool,
               grad_off: Callable[[], str | None] | None = None,
               records: Sequence[Mapping[str, object]] = ()) -> ParamAccount:
    """The call's grad mode against what the entry shows of it (the module docstring)."""
    said = f"{GRAD_MODE}={enabled}"
    path = grad_off() if entry.backward is None and grad_off is not None else None
    if path is not None and enabled:
        return ParamAccount(GRAD_MODE, str(enabled), True, "rules-out", Reason(
            f"{said}: key {key.key[:12]} has no backward, though its graph computes an output from an input that "
            f"required grad by ops that carry grad ({path}), so it was compiled with grad disabled, and torch hashes "
            "the grad mode into the key: with grad enabled torch looks up another key", "grad-mode-off-differs"),
            GRAD_MODE)
    if path is not None:
        return ParamAccount(GRAD_MODE, str(enabled), True, "accounted", Reason(
            f"{said}: key {key.key[:12]} has no backward, though its graph computes an output from an input that "
            f"required grad by ops that carry grad ({path}): it was compiled with grad disabled", "grad-mode-off"),
            GRAD_MODE, "the entry's graph (grad disabled)")
    if entry.backward is not None:
        if enabled:
            return ParamAccount(GRAD_MODE, str(enabled), True, "accounted", Reason(
                f"{said}: key {key.key[:12]} has a backward, compiled with grad enabled", "grad-mode"), GRAD_MODE,
                "the entry's backward (grad enabled)")
        return ParamAccount(GRAD_MODE, str(enabled), True, "rules-out", Reason(
            f"{said}: key {key.key[:12]} has a backward, so it was compiled with grad enabled, and torch hashes "
            "the grad mode into the key: under torch.no_grad() torch looks up another key", "grad-mode-differs"),
            GRAD_MODE)
    if (recorded := recorded_account(key, GRAD_MODE, enabled, records)) is not None:
        return recorded
    return ParamAccount(GRAD_MODE, str(enabled), True, "undecided", Reason(
        f"{said}: key {key.key[:12]} has no backward: it was compiled under torch.no_grad(), or with grad "
        "enabled and nothing that needed a backward, and torch hashes the grad mode into the key; the cache "
        f"does not record which (leave {GRAD_MODE} out of {param('inputs')} to take it as when the key was "
        "compiled)", "grad-mode-unrecorded"), GRAD_MODE)
