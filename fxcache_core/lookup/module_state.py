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

Never imports torch; decodes only through the judge it is given.
"""

from __future__ import annotations

from collections.abc import Mapping

from fxcache_core.cache.scan import CacheKey
from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.lookup.binding import InputValue, TensorArg
from fxcache_core.lookup.param_account import ParamAccount
from fxcache_core.lookup.pyvalues import PyValue
from fxcache_core.lookup.state_constants import SELF_ATTR_RE, StateJudge
from fxcache_core.reasons import Reason

__all__ = ["module_state"]



def module_state(inputs: Mapping[str, InputValue], frame: CompiledFrom, key: CacheKey,
                 judge: StateJudge | None = None, branch: StateJudge | None = None) -> list[ParamAccount]:
    """One :class:`~fxcache_core.lookup.param_account.ParamAccount` per attribute of the
    module the call gives (``L['self'].training``; not a tensor), for a frame that is a
    module's (compiled whole, or a method of a class); [] otherwise. Each is what
    ``judge`` says of it (:func:`~fxcache_core.lookup.state_constants.state_judge`: a
    float or int read exactly as a constant of the key's graph), else what ``branch`` says
    where it decides (the attribute only tested by the code, and the key's graph showing
    the side: :func:`~fxcache_core.lookup.branch_accounts.branch_account`), else undecided."""
    if not (frame.whole_module or frame.module_class is not None):
        return []
    out = []
    for src, v in inputs.items():
        m = SELF_ATTR_RE.fullmatch(src)
        if m is None or isinstance(v, TensorArg):
            continue
        name = "self" + m.group(1)
        if judge is not None and (got := judge(src, name, v.value if isinstance(v, PyValue) else v)) is not None:
            out.append(got)
            continue
        if branch is not None and (got := branch(src, name, v.value if isinstance(v, PyValue) else v)) is not None \
                and (got.status != "undecided" or got.how.code == "branch-may-be-made-up"):
            out.append(got)
            continue
        out.append(ParamAccount(name, str(v), True, "undecided", Reason(
            f"{name}={v}: state of the module, which Dynamo guards where the code reads it "
            f"(model.train() and model.eval() set self.training, and dropout and batch norm trace other "
            f"ops by it); the cache does not record which value key {key.key[:12]} was traced with: "
            "undecided (left out, the module is taken to be as it was when the key was compiled)",
            "module-state-unrecorded"), src))
    return out
