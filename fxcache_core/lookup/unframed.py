"""The closed-world rule for a key whose entries record no compiled frame (its function
unrecorded, or found only by a function it was traced through), or whose frame's source
cannot be read here (moved, deleted, or changed since the compile): nothing but its inputs
is known, so every argument of the call that is not bound to one of them (a tensor, or an
int the key takes as a symbol) leaves its lookup undecided (``argument-unaccounted``), and so
does a float it takes as an input (``float-input-tested``: whether the code tests it in Python,
which Dynamo's guards hold and the cache does not, is in the source alone). :func:`~fxcache_core.lookup.accounting.account`
applies it; a HIT of such a key rests on its inputs and guards alone. Never imports torch."""

from __future__ import annotations

import re
from collections.abc import Mapping

from fxcache_core.errors import param
from fxcache_core.guards.user_terms import user_source
from fxcache_core.lookup.binding import InputValue, TensorArg
from fxcache_core.lookup.float_inputs import float_input_read
from fxcache_core.lookup.param_account import ParamAccount
from fxcache_core.lookup.pyvalues import PyValue, text_of
from fxcache_core.reasons import Reason

__all__ = ["NO_FRAME", "unframed"]


NO_FRAME = "this key's entries record no compiled frame"


def unframed(inputs: Mapping[str, InputValue], taken: frozenset[str], settled: frozenset[str],
             cause: str = NO_FRAME, tensors: bool = True) -> tuple[ParamAccount, ...]:
    """For a key whose entries record no compiled frame (its function unrecorded, or found
    only by the name of a function it was traced through): each argument of the call that
    is not bound to one of the key's inputs (a tensor, an int it takes as a symbol), and
    each float it takes as an input, undecided. The key's inputs say what
    its guards check; the code that read anything else (a Python value folded into the
    graph or branched on, a list element beyond those the key takes, whose length Dynamo
    guards) is not in the cache, so a verdict that this key serves the call would rest on
    arguments nothing checked. ``inputs``: the call's, by source; ``taken``: the sources
    the key takes inputs from; ``settled``: the call's Python values a run's trace
    recorded for the key (Dynamo's guard pinned them), accounted as for any key; ``cause``:
    why the code is not known (:data:`NO_FRAME`, or that its source cannot be read);
    ``tensors``: whether a tensor the key takes no input from is undecided too (False
    where the frame is known but its source is not: the call may name another frame's
    locals, a resume frame's, and a tensor the code computes with is an input of its key)."""
    out = []
    for src, v in inputs.items():
        value = v.value if isinstance(v, PyValue) else v
        if src in settled or (src in taken and (isinstance(v, TensorArg) or type(value) is int)):
            continue  # a tensor or a SymInt the key takes: its guards decide
        if src in taken and type(value) is float:  # a Python test of it is Dynamo's guard, not the cache's
            out.append(ParamAccount(user_source(src), text_of(value), True, "undecided", float_input_read(
                None, user_source(src), value, inputs, cause), src))
            continue
        if isinstance(v, TensorArg) and not tensors:
            continue
        name = user_source(src)
        shown = str(v) if isinstance(v, TensorArg) else text_of(v.value if isinstance(v, PyValue) else v)
        el = re.fullmatch(r"(L\['\w+'\])\[[0-9]+\]", src)
        if not isinstance(v, TensorArg):
            what = "a Python value (a key's inputs show at most what its guards check of one)"
        elif el is not None and any(t.startswith(el.group(1) + "[") for t in taken):
            what = (f"an element of {user_source(el.group(1))} this key takes no input from while it takes others "
                    "(Dynamo guards a list's length: unless the code never reads it, another graph)")
        else:
            what = "a tensor this key takes no input from"
        out.append(ParamAccount(name, shown, True, "undecided", Reason(
            f"{name}={shown}: {what}; {cause}, so what its code does "
            f"with {name} is not in the cache, nor whether {name}={shown} traces this key's graph (the "
            "parameters the call leaves out go unchecked too)"
            + ("" if isinstance(v, TensorArg) else "; Dynamo's guards in a run's TORCH_TRACE would say (the trace "
               f"explained, or given as {param('from_trace')})"), "argument-unaccounted"), src))
    return tuple(out)
