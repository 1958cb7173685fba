"""The closed-world rule where a key's compiled code cannot be read: no frame recorded, or
its source file not there (a cache from another machine, a function defined in
``python -c``, a moved checkout) or changed since the compile.

Then the parameters the call leaves out are unknown, and so is what the code did with
any of them: a key that takes the call by its inputs and guards may still have been
traced with another value of one of them (another graph: torch traces again). A lookup
of such a key is decided only where a run's trace recorded a compile that looked it up
(:func:`covering_record`) with every argument Dynamo's guards named given by the call,
and each Python value among them at the call's value: an argument no guard of that
compile names did not change what it looked up, and the call gives every one that did,
as that compile had it. Otherwise the lookup is undecided (``source-unread``, one
:class:`~fxcache_core.lookup.param_account.ParamAccount`), naming what would decide it:
the source at its path, the directory it was moved to (``source_dirs``), or the trace
of a run that compiled it. A key that takes no input and fits nothing is no part of
it: a call that no key of the function takes by its inputs is another graph whatever
the code does, so NEW GRAPH stays decided; a MISS (the key takes the call, no entry's
guards pass) is torch's only for the same graph, and is undecided with the HIT.
A file that is there but edited since the compile (``source-changed``,
:mod:`fxcache_core.lookup.source_lines`) is read as not there too, and no record decides
for it: a traced compile ran the code as it was, and says nothing of what the edited code
traces. Never imports torch.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from fxcache_core.errors import param
from fxcache_core.lookup.binding import InputValue, TensorArg
from fxcache_core.lookup.inputs import candidates
from fxcache_core.lookup.kwargs_evidence import ALL_GUARDS
from fxcache_core.lookup.param_account import ParamAccount
from fxcache_core.lookup.pyvalues import PyValue, same_value
from fxcache_core.reasons import Reason

__all__ = ["GUARDED_LOCALS", "covering_record", "unread_account"]

GUARDED_LOCALS = "#locals"
"""A record's entry: the arguments the compile's guards name (a tuple of sources),
kept only with all of its guards (:data:`fxcache_core.trace.constants.GUARDED_LOCALS`:
the trace layer sits above this one)."""

_ROOT_RE = re.compile(r"L\['(\w+)'\](\[(?:'\w+'|[0-9]+)\])?")


def _root(src: str) -> str | None:
    """The argument ``src`` is part of: ``L['x']`` of ``L['x'][0]``, ``L['kwargs']['m']`` of
    ``L['kwargs']['m'][1]``."""
    m = _ROOT_RE.match(src)
    if m is None:
        return None
    name, item = m.group(1), m.group(2)
    return f"L[{name!r}]" + (item if name in ("args", "kwargs") and item else "")


def covering_record(records: Sequence[Mapping[str, object]], inputs: Mapping[str, InputValue],
                    taken: frozenset[str], params: Sequence[str], settled: frozenset[str] = frozenset()
                    ) -> Mapping[str, object] | None:
    """The first of ``records`` (one compile's constants each, that looked the key up:
    :func:`fxcache_core.trace.constants.key_constants`) that shows the call is traced as
    that compile was: all of its guards read (:data:`ALL_GUARDS`); every argument they
    name (:data:`GUARDED_LOCALS`, a module's ``self`` aside) given by the call; each
    Python value the call gives pinned there to the same value, or taken by the key as an
    int or float input, or ``settled`` (an int read off this key's graph as the call's);
    each tensor the call gives one the key takes or one the guards name, not pinned to a
    value (``None``). ``inputs``: the call's, by the user's source; ``taken``: the sources
    the key takes inputs from; ``params``: the frame's parameter names, where known. None
    when no record does."""
    for r in records:
        named = r.get(GUARDED_LOCALS)
        if r.get(ALL_GUARDS) is not True or not isinstance(named, tuple):
            continue
        given_roots: set[str] = set()
        ok = True
        for src, v in inputs.items():
            cands = candidates(src, params)
            given_roots.update(x for c in cands if (x := _root(c)) is not None)
            if isinstance(v, TensorArg):
                if any(c in r for c in cands) or not (src in taken or any(_root(c) in named for c in cands)):
                    ok = False
                continue
            value = v.value if isinstance(v, PyValue) else v
            if src in settled or (src in taken and type(value) in (int, float)):
                continue
            if not any(c in r and same_value(r[c], value) for c in cands):
                ok = False
        if ok and all(s in given_roots or s == "L['self']" or (s in ("L['args']", "L['kwargs']") and any(
                g.startswith(s + "[") for g in given_roots)) for s in named):
            return r
    return None


def unread_account(cause: str, key: str, changed: bool = False) -> ParamAccount:
    """The undecided account of a key whose code cannot be read (``cause``: why) and that
    no record covers: the parameters the call leaves out, and what the code did with any
    of them, are unknown. ``changed``: the file is there but edited since the compile
    (``source-changed``): what the code does now is not what the key was traced from,
    and a trace of the old code says nothing of the new."""
    if changed:
        return ParamAccount("(the parameters left out)", None, False, "undecided", Reason(
            f"{cause}, so whether torch traces key {key[:12]}'s graph from the code as it is now is not "
            "known: the source as it was compiled would say (put back, or read from a copy with "
            f"{param('source_dirs')} OLD=NEW), or the call compiled again", "source-changed"))
    return ParamAccount("(the parameters left out)", None, False, "undecided", Reason(
        f"{cause}, so which parameters the call leaves out, and whether key {key[:12]} was traced with "
        "their defaults, is not known: the source at its recorded path would say, or read from where it "
        f"is now ({param('source_dirs')} OLD=NEW), or Dynamo's guards in the TORCH_TRACE of a run that "
        f"compiled it (the trace explained, or given as {param('from_trace')})", "source-unread"))
