"""What a compile's guards say about the dicts it read: the evidence for ``**kwargs``.

A function taking ``**kwargs`` gets every keyword the call gives beyond its own
parameters in one dict, and Dynamo guards what the code read of it
(torch/_dynamo/guards.py, printed by ``dynamo_cpp_guards_str``): its type
(``___check_type_id(L['kwargs'], ...), type=<class 'dict'>``), whether a key is there
(``DICT_CONTAINS``: ``___dict_contains('output_attentions', L['kwargs'])``, or with
``not``), its length (``DICT_LENGTH``: ``len(L['kwargs']) == 1``, ``not L['kwargs']``),
each value read (``L['kwargs']['flag'] == True``, a tensor's ``check_tensor``), and,
for a dict the code iterates, the order of its keys (a ``DictGuardManager`` line, whose
length check the printout does not show). The cache keeps none of this: which keywords
a key was compiled with is evidence only a run's trace has.

:func:`dict_evidence` keeps, for one compile, the guards of every dict it read whole
(a root local ``L['name']`` guarded as a dict), as pseudo-constants beside
:func:`~fxcache_core.trace.constants.guard_constants`' (so the usage store and
``match --from-trace`` carry them unchanged):

* ``"#all-guards"`` -> ``True``: the compile's guards were read in full (none cut at
  :data:`~fxcache_core.guards.in_force.MAX_GUARDS_IN_FORCE`), so a dict with no guard
  was not read at all;
* ``"guards:L['kwargs']"`` -> the code of each guard that names that dict (sorted; an
  object's address, which differs per process, as ``...``), and ``"DictGuardManager"``
  where one guards it;
* ``"guards:L['args']"`` -> at least the length guards of a wrapper's positional
  arguments (``len(L['args']) == 1``, ``not L['args']``): with the kwargs' guards they
  show which parameters of a module compiled whole its call left out.

:mod:`fxcache_core.lookup.kwargs_evidence` judges a call's keywords against them.
Guard text is parsed by nobody here (substring tests only) and never run. Never
imports torch.
"""

from __future__ import annotations

import re

from fxcache_core.guards.in_force import MAX_GUARD_CHARS_IN_FORCE, MAX_GUARDS_IN_FORCE
from fxcache_core.trace.run_facts import TraceCompile

ALL_GUARDS = "#all-guards"
"""The key of the marker that a compile's guards were read in full."""
GUARDS_OF = "guards:"
"""The prefix of the key of a dict's guards: ``guards:L['kwargs']``."""
MAX_DICT_GUARDS = 200
"""At most this many guards are kept per dict; a dict with more keeps none (no evidence)."""

_ID_RE = re.compile(r"(___check_(?:type|obj)_id\(.{1,1500}?, )[0-9]{1,24}\)")
_MANAGER_RE = re.compile(r"[| ]*\+- (?:\w+: )*(\w*GuardManager): source=(L\['\w{1,200}'\](?:\[[^\]]{1,300}\])*), ")
_ROOT_RE = re.compile(r"L\['(\w{1,200})'\]")
_DICT_TYPE_RE = re.compile(r"^___check_type_id\((L\['\w{1,200}'\]), (?:[0-9]+|\.\.\.)\), type=<class 'dict'>$")
_ARGS_LEN_RE = re.compile(r"len\(L\['args'\]\) == [0-9]{1,6}|not L\['args'\]")
_DICT_USE_RE = re.compile(r"___dict_contains\('[^']{0,200}', (L\['\w{1,200}'\])\)|^not (L\['\w{1,200}'\])$|"
                          r"^len\((L\['\w{1,200}'\])\) == [0-9]+$")


def guard_managers(payload: str) -> tuple[tuple[str, str], ...]:
    """The guard managers of a ``dynamo_cpp_guards_str`` payload that check something
    themselves (a ``DictGuardManager``: the dict's length and the order of its keys),
    as (class, source); a plain ``GuardManager`` only reaches its children's guards,
    and is left out."""
    out: list[tuple[str, str]] = []
    for line in payload.splitlines():
        m = _MANAGER_RE.match(line)
        if m is not None and m.group(1) != "GuardManager" and len(out) < MAX_GUARDS_IN_FORCE:
            out.append((m.group(1), m.group(2)))
    return tuple(out)


def _complete(codes: tuple[str, ...]) -> bool:
    """Whether ``codes`` are all a payload's guards (:func:`record_values.guard_codes`
    stops past its limits)."""
    return len(codes) <= MAX_GUARDS_IN_FORCE and sum(map(len, codes)) <= MAX_GUARD_CHARS_IN_FORCE


def dict_evidence(c: TraceCompile) -> dict[str, object]:
    """Compile ``c``'s guards on the dicts it read (see the module docstring): empty
    when the trace has no guards for it."""
    codes = c.final_guards
    if codes is None:
        return {}
    roots: set[str] = set()
    for code in codes:
        if (m := _DICT_TYPE_RE.match(code)) is not None:
            roots.add(m.group(1))
        elif (m := _DICT_USE_RE.search(code)) is not None:
            roots.add(next(g for g in m.groups() if g))
    managed = {src: kind for kind, src in c.guard_managers}
    roots.update(src for src in managed if _ROOT_RE.fullmatch(src))
    out: dict[str, object] = {ALL_GUARDS: True} if _complete(codes) else {}
    for root in sorted(roots):
        if root.startswith("L['self']"):
            continue
        mine = sorted({_ID_RE.sub(r"\1...)", code) for code in codes if root in code})
        mine += [kind for src, kind in managed.items() if src == root]
        if len(mine) <= MAX_DICT_GUARDS:
            out[GUARDS_OF + root] = tuple(mine)
    lengths = tuple(sorted(code for code in codes if _ARGS_LEN_RE.fullmatch(code)))
    if lengths and GUARDS_OF + "L['args']" not in out:
        out[GUARDS_OF + "L['args']"] = lengths  # a wrapper's positional arguments: how many
    return out


__all__ = ["ALL_GUARDS", "GUARDS_OF", "MAX_DICT_GUARDS", "dict_evidence", "guard_managers"]
