"""A module's own state given with a call (``self.training=True``): what the cache cannot see.

A module compiled whole (or a method with ``self``) reads its attributes while Dynamo
traces it: ``training`` above all (``model.train()``/``model.eval()``; dropout and batch
norm trace other ops by it), and any flag its ``forward`` or its layers read. Dynamo
guards each value it read (``L['self']._modules['bn'].training == False``, torch/_dynamo/guards.py),
and the graph holds what the value made the code do, never the value; the cache keeps
neither the guards nor the module. A call that gives such a value (``--inputs
self.training=True``, a source ``L['self'].training``) asks about state no key records:
its lookup is undecided, naming it (``module-state-unrecorded``), instead of the value
being dropped because no input of the key takes it, unless it is a float or an int the
key's graph shows as a constant read exactly
(:mod:`fxcache_core.lookup.state_constants`: ``y = self.fc(x) * self.scale`` puts
``self.scale`` into ``aten.mul``), which decides, or an attribute the code only tests
(``if self.use_act:``, ``... if self.training else ...``) whose side the key's graph shows
(the branch rule, as for a parameter). Where the call gives none, the module
is taken to be as it was when the key was compiled.

A run's trace of a compile that looked the key up (:mod:`fxcache_core.lookup.recorded_state`)
records Dynamo's guards on the attributes its code read: the value the call gives
guarded there accounts for it (``module-state-recorded``; ``self.training`` answers for
each submodule's ``training``, as ``model.train()`` sets them all), and so does an
attribute no guard of such a compile names, its guards read in full: that trace never read
it (``module-state-unread``). A value guarded at another value only fails the key's
guards, and torch traces again: what that gives is for the rules above to say, else it is
undecided (``module-state-differs-from-record``).

Never imports torch; decodes only through the judge it is given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fxcache_core.cache.scan import CacheKey
from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.lookup.binding import InputValue, TensorArg
from fxcache_core.lookup.param_account import ParamAccount
from fxcache_core.lookup.pyvalues import PyValue, text_of
from fxcache_core.lookup.recorded_state import attr_evidence
from fxcache_core.lookup.state_constants import SELF_ATTR_RE, StateJudge
from fxcache_core.reasons import Reason

__all__ = ["module_state"]


def module_state(inputs: Mapping[str, InputValue], frame: CompiledFrom, key: CacheKey,
                 judge: StateJudge | None = None, records: Sequence[Mapping[str, object]] = (),
                 branch: StateJudge | None = None) -> list[ParamAccount]:
    """One :class:`~fxcache_core.lookup.param_account.ParamAccount` per attribute of the
    module the call gives (``L['self'].training``; not a tensor), for a frame that is a
    module's (compiled whole, or a method of a class); [] otherwise. Each is what
    ``records`` (the key's, from runs' traces) show of it where they account for it, else
    what ``judge`` says of it (:func:`~fxcache_core.lookup.state_constants.state_judge`: a
    float or int read exactly as a constant of the key's graph), else what ``branch`` says
    where it decides (the attribute only tested by the code, and the key's graph showing
    the side: :func:`~fxcache_core.lookup.branch_accounts.branch_account`), else undecided."""
    if not (frame.whole_module or frame.module_class is not None):
        return []
    out = []
    given = [s for s, v in inputs.items() if SELF_ATTR_RE.fullmatch(s) and not isinstance(v, TensorArg)]
    for src, v in inputs.items():
        m = SELF_ATTR_RE.fullmatch(src)
        if m is None or isinstance(v, TensorArg):
            continue
        name = "self" + m.group(1)
        value = v.value if isinstance(v, PyValue) else v
        seen = attr_evidence(records, src, value, given)
        if seen is not None and seen[0] != "differs":
            out.append(_recorded(name, v, src, key, seen[0]))
            continue
        if judge is not None and (got := judge(src, name, value)) is not None:
            out.append(got)
            continue
        if branch is not None and (got := branch(src, name, value)) is not None \
                and (got.status != "undecided" or got.how.code == "branch-may-be-made-up"):
            out.append(got)
            continue
        if seen is not None:
            shown = " or ".join(text_of(x) for x in seen[1])
            out.append(ParamAccount(name, str(v), True, "undecided", Reason(
                f"{name}={v}: key {key.key[:12]} was traced with {name}={shown} (Dynamo's guard in a run's trace), "
                "so its guards fail and torch traces the call again; whether that gives this key's graph the cache "
                "cannot tell", "module-state-differs-from-record"), src))
            continue
        out.append(ParamAccount(name, str(v), True, "undecided", Reason(
            f"{name}={v}: state of the module, which Dynamo guards where the code reads it "
            f"(model.train() and model.eval() set self.training, and dropout and batch norm trace other "
            f"ops by it); the cache does not record which value key {key.key[:12]} was traced with: "
            "undecided (left out, the module is taken to be as it was when the key was compiled)",
            "module-state-unrecorded"), src))
    return out


def _recorded(name: str, v: object, src: str, key: CacheKey, how: str) -> ParamAccount:
    """The account of a module attribute a run's trace accounts for (``how``: ``same``,
    ``unread``)."""
    if how == "same":
        return ParamAccount(name, str(v), True, "accounted", Reason(
            f"{name}={v}: Dynamo's guard in a traced compile that looked key {key.key[:12]} up",
            "module-state-recorded"), src, "Dynamo's guard in a traced run")
    return ParamAccount(name, str(v), True, "accounted", Reason(
        f"{name}={v}: no guard of a traced compile that looked key {key.key[:12]} up reads it (all its guards "
        "read): that trace never read it", "module-state-unread"), src, "Dynamo's guards in a traced run")
