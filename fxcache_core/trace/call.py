"""The inputs of a traced call, as ``fxcache match`` takes them (``match --from-trace``).

A compile in a TORCH_TRACE (:class:`~fxcache_core.trace.run_facts.TraceCompile`)
records the call Dynamo traced: each tensor input with its source, sizes,
strides, storage offset and the dims marked dynamic (``describe_tensor`` /
``describe_source``), each symbol with its source and value
(``create_symbol``), and the Dynamo config it ran under. This module turns
that into :mod:`fxcache_core.lookup.binding` values, so the call can be matched
against any cache without typing ``--shapes``:

* a tensor -> :class:`~fxcache_core.lookup.binding.TensorArg` (shape, strides,
  offset, dtype); an int input that became a symbol (``L['n']``) -> its value;
* a Python value Dynamo guarded as a constant (``L['clip'] == True``,
  ``L['act'] == 'gelu'``, ``L['mask'] is None``, ``L['n'] == 3``, a tuple:
  :func:`~fxcache_core.trace.constants.guard_constants`) -> that value (an int or a
  float as such, the others as a :class:`~fxcache_core.lookup.pyvalues.PyValue`);
* the mode -> :class:`~fxcache_core.lookup.binding.DynamicMode` from
  ``TraceCompile.dynamic``;
* under ``dynamic=None``/``False``, a dim that the compile made symbolic was
  either marked (``mark_dynamic``) or made dynamic by automatic dynamic after
  an earlier call changed it; either way Dynamo gives it a symbol of its own
  (``DimDynamic.DYNAMIC``, torch/_dynamo/variables/builder.py
  ``_automatic_dynamic``), which is what a marked dim means to ``match``.

Nothing here imports torch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from fxcache_core.errors import ShapeSpecError, param
from fxcache_core.functions.frames import CompiledFrom, is_wrapper_frame, named
from fxcache_core.lookup.binding import (
    DTYPE_ABBRS,
    DTYPE_ALIASES,
    DynamicMode,
    InputValue,
    checked_int,
    checked_tensor,
)
from fxcache_core.lookup.pyvalues import PyValue
from fxcache_core.trace.constants import guard_constants
from fxcache_core.trace.run_facts import TraceCompile, TraceRun

_SIZE_RE = re.compile(r"(.+)\.size\(\)\[([0-9]{1,9})\]")  # a longer index is no dim of a tensor


@dataclass(frozen=True)
class TracedCall:
    """One traced call's inputs.

    Attributes:
        compile: the compile it was read from.
        inputs: source (``L['x']``) -> tensor or int, as ``match`` takes them.
        mode: the ``dynamic=`` the function was compiled with (UNKNOWN when
            the trace does not say).
        function: the compiled function's name (``match --fn``), as ``ls`` and ``match``
            name it (:func:`traced_function`); None when the compiled frame is a decorator
            wrapper, which the trace does not say the function of.
    """

    compile: TraceCompile
    inputs: dict[str, InputValue]
    mode: DynamicMode
    function: str | None


def _dtype(text: str | None) -> str | None:
    """``torch.float32`` (``describe_tensor``'s dtype) -> ``float32``; None when the trace
    does not say or names a dtype fxcache does not know (then the key's is assumed)."""
    name = (text or "").removeprefix("torch.")
    name = DTYPE_ALIASES.get(name, name)
    return name if name in DTYPE_ABBRS.values() else None


def call_inputs(run: TraceRun, compile_id: str, rank: int | None = None) -> TracedCall:
    """The inputs of the call traced by compile ``compile_id`` (``0/1``, tlparse's
    ``[0/1]``, or ``0/0#2`` for the second compile that used the id: after a
    ``torch._dynamo.reset()``), on ``rank`` when the trace has several.

    Raises:
        ShapeSpecError: no such compile, the id names several (ranks, or
            reuses) and the choice was not made, or it recorded no input; or a
            value ``--shapes`` would refuse (a negative size, one past int64:
            :func:`~fxcache_core.lookup.binding.checked_tensor`), naming the trace.
    """
    found = run.find_compile(compile_id, rank)
    if not found:
        known = ", ".join(dict.fromkeys(str(c.ref) for c in run.compiles)) or "none"
        raise ShapeSpecError(f"the trace has no compile {compile_id!r} (compiles: {known[:300]})",
                             param="compile_id", value=compile_id)
    ranks = {c.rank for c in found}
    if rank is None and len(ranks) > 1:
        raise ShapeSpecError(f"compile {compile_id} is on ranks {sorted(ranks, key=str)}: choose one with "
                             f"{param('rank')}", param="rank", value=rank)
    if len(found) > 1:
        raise ShapeSpecError(f"compile id {compile_id} was used {len(found)} times (torch._dynamo.reset() "
                             f"starts ids again): say which, {', '.join(run.label(c) for c in found)}",
                             param="compile_id", value=compile_id)
    c = found[0]
    mode = {"true": DynamicMode.TRUE, "none": DynamicMode.NONE, "false": DynamicMode.FALSE}.get(
        c.dynamic or "", DynamicMode.UNKNOWN)
    symbolic: dict[str, set[int]] = {}
    for s in c.symbols:
        m = _SIZE_RE.fullmatch(s.source or "")
        if m:
            symbolic.setdefault(m.group(1), set()).add(int(m.group(2)))
    inputs: dict[str, InputValue] = {}
    for t in c.tensors:
        if not all(isinstance(x, int) for x in (*t.size, *t.stride)):
            continue
        marked = set(t.marked)
        if mode is not DynamicMode.TRUE:
            marked |= symbolic.get(t.source, set())
        what = f"{param('from_trace')} compile {compile_id}: {t.source[:200]}"
        inputs[t.source] = checked_tensor(what, t.size, t.stride, t.storage_offset or 0,  # type: ignore[arg-type]
                                          sorted(marked), _dtype(t.dtype), name="from_trace", value=compile_id)
    for s in c.symbols:
        if (s.source and s.value is not None and s.source not in inputs
                and not any(p in s.source for p in (".size()", ".stride()", ".storage_offset()"))):
            inputs[s.source] = checked_int(f"{param('from_trace')} compile {compile_id}: {s.source[:200]}",
                                           s.value, name="from_trace", value=compile_id)
    for src, v in guard_constants(c.final_guards or ()).items():
        if src in inputs or any(src.startswith(t + "[") for t in inputs):
            continue
        if type(v) is int:
            inputs[src] = checked_int(f"{param('from_trace')} compile {compile_id}: {src[:200]}", v,
                                      name="from_trace", value=compile_id)
        else:
            inputs[src] = v if type(v) is float else PyValue(v)
    if not inputs:
        raise ShapeSpecError(f"compile {compile_id} recorded no input (describe_tensor / create_symbol)",
                             param="compile_id", value=compile_id)
    t = traced_function(c)
    return TracedCall(c, inputs, mode, t.name if t is not None and not t.wrappers else None)


def traced_function(c: TraceCompile) -> CompiledFrom | None:
    """The function compile ``c`` compiled, from the trace alone: its frame (``co_name``,
    ``co_filename``, ``co_firstlineno``) named as the cache's stacks are
    (:func:`~fxcache_core.functions.frames.named`: ``Class.forward`` where the file is
    readable). A decorator wrapper (:func:`~fxcache_core.functions.frames.is_wrapper_frame`)
    is returned with itself as its only wrapper: the trace does not record the frame it
    calls, only a key's stack does. None when the trace names no function."""
    if not c.function:
        return None
    frame = (c.function, c.filename or "", c.firstlineno or 0)
    got = named((frame,))
    return replace(got, wrappers=(frame,)) if is_wrapper_frame(*frame) else got
