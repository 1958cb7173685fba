"""What a run's trace recorded of the state a key was traced under: the module's own
attributes and the global state, read from Dynamo's guards.

Dynamo guards every attribute of a module its code reads (``L['self'].training == False``,
``L['self']._modules['bn'].training == False``, ``L['self'].config.use_cache == True``:
``CONSTANT_MATCH``, and ``NN_MODULE``'s guard on ``training``, torch/_dynamo/guards.py), and
the global state the frame was entered under (``___check_global_state() against {...}``:
``GlobalStateGuard``'s grad mode, autocast per device, default dtype, deterministic
algorithms, thread count). The trace layer keeps them with a compile's constants
(:func:`fxcache_core.trace.state_guards.state_record`) under the keys named here: a
module's attribute by its path (``L['self'].bn.training``, a submodule by its name), the
names any guard of the compile reads (:data:`SELF_NAMES`, where its guards were read in
full) and the global state (:data:`STATE_PREFIX` + a field).

:func:`attr_evidence` says what the records show of a module attribute the call gives
(``self.training=False``): the value it was traced with (the same: accounted; another:
the key's guards fail, and torch traces again), or that no guard of a compile read it (its
guards read in full, and no guard names it: the trace did not read it, so it changed
nothing). ``self.training`` stands for the whole module (``model.train()``/``model.eval()``
set every submodule's), so it answers for a submodule's ``training`` guard too, unless the
call gives that submodule's own. :func:`recorded_state` says what they show of a global
state item. Never imports torch.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from fxcache_core.lookup.kwargs_evidence import ALL_GUARDS
from fxcache_core.lookup.pyvalues import same_value

__all__ = ["SELF_NAMES", "STATE_FIELDS", "STATE_PREFIX", "attr_evidence", "recorded_state", "self_path"]

SELF_NAMES = "#self-names"
"""A record's entry: every attribute or key name the compile's guards read (``training``,
``bn``, ``use_cache``), kept only where all its guards were read (:data:`ALL_GUARDS`), none
reads a whole ``__dict__``, and none pins the module or a submodule by its identity (a
module Dynamo specialized may have its attributes read unguarded)."""

STATE_PREFIX = "#state:"
"""The prefix of a record's global state entries (``#state:grad_mode`` -> False)."""

STATE_FIELDS = ("grad_mode", "autocast", "default_dtype", "deterministic", "num_threads")
"""The global state fields a record keeps: the grad mode, whether autocast is on for any
device, the default dtype's name (``float32``), deterministic algorithms, the thread count."""

SELF = "L['self']"
_SUBMODULE_RE = re.compile(r"\._modules\['(\w{1,200})'\]")
_SUBMODULES_RE = re.compile(r"(?:\._modules\['\w{1,200}'\])*")


def self_path(src: str) -> str | None:
    """``L['self'].bn.training`` for a module attribute's source as the call gives it, or
    as a record keeps it (``L['self']._modules['bn'].training``: a submodule by its name);
    None for any other source."""
    return _SUBMODULE_RE.sub(r".\1", src) if src.startswith(SELF + ".") else None


def _covers(call_src: str, rec_src: str, given: Sequence[str]) -> bool:
    """Whether the call's ``call_src`` (``L['self'].training``) answers for the record's
    ``rec_src`` (``L['self']._modules['bn'].training``): the same attribute, or the
    ``training`` of a submodule of the module whose ``training`` the call gives, that no
    more specific source in ``given`` names."""
    rec = self_path(rec_src)
    if rec is None:
        return False
    if rec == call_src:
        return True
    if not (call_src.endswith(".training") and rec_src.endswith(".training")):
        return False
    base = call_src[: -len(".training")]
    prefix = next((rec_src[:i] for i in range(len(SELF), len(rec_src) + 1)
                   if (rec_src[:i] == SELF and base == SELF) or self_path(rec_src[:i]) == base), None)
    if prefix is None or not _SUBMODULES_RE.fullmatch(rec_src[len(prefix):-len(".training")]):
        return False  # only submodules (model.train() sets theirs), not another object's attribute
    return not any(len(g) > len(call_src) and g.endswith(".training") and _covers(g, rec_src, ()) for g in given)


def attr_evidence(records: Sequence[Mapping[str, object]], src: str, value: object,
                  given: Sequence[str] = ()) -> tuple[str, tuple[object, ...]] | None:
    """What ``records`` (one compile's each, that looked the key up) show of the module
    attribute ``src`` (``L['self'].training``) at the call's ``value``; ``given``: every
    module attribute the call gives (a submodule's own ``training`` answers for it).

    Returns ``("same", ())`` where a record's guards on it hold the call's value,
    ``("unread", ())`` where, in every record that says anything of it, its guards were read
    in full and none names the attribute, ``("differs", values)`` where the records guard it
    at other values only; None where they say nothing."""
    name = src.rsplit(".", 1)[-1]
    same = unread = False
    others: list[object] = []
    for r in records:
        vals = [v for k, v in r.items() if self_path(k) is not None and _covers(src, k, given)]
        if vals:
            if all(same_value(v, value) for v in vals):
                same = True
            else:
                others.extend(v for v in vals if not same_value(v, value))
            continue
        names = r.get(SELF_NAMES)
        if r.get(ALL_GUARDS) is True and isinstance(names, tuple) and name not in names:
            unread = True
    if same:
        return "same", ()
    if others:
        return "differs", tuple(dict.fromkeys(others))
    if unread:
        return "unread", ()
    return None


def recorded_state(records: Sequence[Mapping[str, object]], field: str) -> tuple[object, ...]:
    """The values of global state ``field`` (:data:`STATE_FIELDS`) the compiles of
    ``records`` were entered under, without repeats (empty: none recorded)."""
    return tuple(dict.fromkeys(r[STATE_PREFIX + field] for r in records if STATE_PREFIX + field in r))
