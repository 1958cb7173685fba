"""How a user's inputs name a key's inputs: Dynamo sources, the call's inputs, aliases.

A key's entries record where each graph input came from as a Dynamo source
(``L['x']``, ``L['kwargs']['input_ids'].size()[0]``, a resume frame's
``L['___stack0']``; ``Source.name()`` in torch/_dynamo/source.py). A user names
inputs as the call's parameters (``x``, ``input_ids``, ``args[0]``); this module
decides which of the key's sources such a name stands for (a module compiled
whole takes its inputs as ``L['args']``/``L['kwargs']``), and names a key's
sources back in the user's terms.

Values only: never decodes an entry itself (but :func:`takes` asks the catalog
for one), never decides whether a key fits.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from fxcache_core.cache.scan import CacheKey
from fxcache_core.catalog.reader import Catalog
from fxcache_core.decode.entries import DecodedEntry
from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.functions.params import frame_reads
from fxcache_core.lookup.binding import InputValue
from fxcache_core.lookup.floats import tensorified_base
from fxcache_core.lookup.graph_types import TensorType
from fxcache_core.lookup.source_values import source_base
from fxcache_core.reasons import Reason


def input_bases(d: DecodedEntry, extra_sources: Mapping[str, str]) -> set[str]:
    """The user inputs (``L['x']``...) an entry's inputs come from."""
    out = set()
    for src in (*d.arg_sources, *(i.source for i in d.inputs), *extra_sources.values()):
        if src and (s := tensorified_base(src) or src).startswith("L["):
            out.add(source_base(s))
    return out


_NOT_INPUT_RE = re.compile(r"\._(parameters|buffers|modules)\[|^L\['self'\]")


def is_call_input(base: str) -> bool:
    """Whether a source base is an input of the call (``L['x']``, ``L['args'][0]``,
    ``L['kwargs']['input_ids']``, a resume frame's ``L['___stack0']``), not a
    parameter, buffer or submodule of the module (``L['self']...``)."""
    return base.startswith("L[") and _NOT_INPUT_RE.search(base) is None


_LOCAL_RE = re.compile(r"^L\['(?P<name>[A-Za-z_]\w*)'\](?P<rest>.*)$")
_ARG_RE = re.compile(r"^L\['args'\]\[(?P<i>[0-9]+)\](?P<rest>.*)$")


def candidates(src: str, params: Sequence[str]) -> list[str]:
    """The sources a user's input may stand for in a key, in order of preference.

    ``L['input_ids']`` may be a local of the compiled frame, a keyword of a module
    call (``L['kwargs']['input_ids']``) or, by the forward's parameter list, a
    positional one (``L['args'][0]``); ``L['args'][0]`` (given positionally) may be
    the frame's first parameter.
    """
    out = [src]
    if (m := _ARG_RE.match(src)) is not None:
        i, rest = int(m.group("i")), m.group("rest")
        if i < len(params):
            out += [f"L[{params[i]!r}]{rest}", f"L['kwargs'][{params[i]!r}]{rest}"]
    elif (m := _LOCAL_RE.match(src)) is not None:
        name, rest = m.group("name"), m.group("rest")
        out.append(f"L['kwargs'][{name!r}]{rest}")
        if name in params:
            out.append(f"L['args'][{params.index(name)}]{rest}")
    return out


def alias(inputs: Mapping[str, InputValue], bases: set[str],
           frame: CompiledFrom | None | Callable[[], CompiledFrom | None]
           ) -> tuple[dict[str, InputValue], tuple[tuple[str, str], ...]]:
    """The user's inputs renamed to the key's sources (see :func:`candidates` and
    :func:`varkw_candidates`), and
    (user source, key source) for each input the key takes. ``frame`` (or a function
    giving it, called only when a name does not bind as given) has the parameter names."""
    out: dict[str, InputValue] = {}
    bound: list[tuple[str, str]] = []
    params: Sequence[str] | None = None
    f: CompiledFrom | None = None

    def key_takes(cand: str) -> bool:
        return cand in bases or any(b.startswith(cand) and b[len(cand):len(cand) + 1] in ("[", ".")
                                    for b in bases)

    for src, val in inputs.items():
        if key_takes(src):
            out.setdefault(src, val)
            bound.append((src, src))
            continue
        if params is None:
            f = frame() if callable(frame) else frame
            params = f.params if f is not None else ()
        for cand in candidates(src, params)[1:] + varkw_candidates(src, f):
            if key_takes(cand):
                out.setdefault(cand, val)
                bound.append((src, cand))
                break
        else:
            out.setdefault(src, val)
    return out, tuple(bound)


def varkw_candidates(src: str, frame: CompiledFrom | None) -> list[str]:
    """``L['bias']`` as a keyword of the call that reaches the compiled function's
    ``**kw`` dict: ``[L['kw']['bias']]``, where the function's source is readable and
    names its ``**`` parameter otherwise than ``kwargs`` (:func:`candidates` has that
    one), and ``bias`` is none of its parameters; else ``[]``."""
    m = _LOCAL_RE.match(src)
    if m is None or frame is None or frame.whole_module:
        return []
    reads = frame_reads(frame)
    if isinstance(reads, Reason) or reads.varkw_name in (None, "kwargs") or reads.param(m.group("name")) is not None:
        return []
    return [f"L[{reads.varkw_name!r}][{m.group('name')!r}]{m.group('rest')}"]


_STACK_RE = re.compile(r"^L\['___stack([0-9]+)'\]")


def user_name(base: str, params: Sequence[str] = ()) -> str:
    """A key's input source in the user's terms: ``L['kwargs']['input_ids']`` ->
    ``input_ids``, ``L['args'][0]`` -> ``args[0]`` (``args[0] (x)`` where the
    forward's parameter list is known), ``L['xs'][0]`` -> ``xs[0]``; a resume
    frame's ``L['___stack0']`` says what it is."""
    if (m := re.match(r"^L\['kwargs'\]\['([^']*)'\](.*)$", base)) is not None:
        return m.group(1) + m.group(2)
    if (m := _ARG_RE.match(base)) is not None:
        i = int(m.group("i"))
        return f"args[{i}]{m.group('rest')}" + (f" ({params[i]})" if i < len(params) else "")
    if _STACK_RE.match(base):
        name = base[3:base.index("']")] + base[base.index("']") + 2:]
        return (f"{name} (a value left on the stack at the graph break, e.g. the result of the call "
                f"that broke the graph; name it {name}=[...])")
    if (m := _LOCAL_RE.match(base)) is not None:
        return m.group("name") + m.group("rest")
    return base


def takes(catalog: Catalog, key: CacheKey, frame: CompiledFrom | None = None) -> tuple[str, ...]:
    """The inputs of the call a key's first readable entry is bound by, in the user's
    terms (:func:`user_name`), sorted; parameters, buffers and submodules of a
    module (``L['self']...``) and globals are not inputs of the call."""
    params = frame.params if frame is not None else ()
    first = catalog.first_readable(key)
    if first is None:
        return ()
    bases = sorted(b for b in input_bases(first[1], catalog.sources_for(key)) if is_call_input(b))
    return tuple(user_name(b, params) for b in bases)


Dims = dict[tuple[str, int], str]
"""(input source, dim) -> printed size (``s27``, ``8``), of an entry's tensor inputs."""


def entry_dims(d: DecodedEntry) -> Dims:
    """:data:`Dims` of the tensor inputs (with a source) of entry ``d``."""
    out: Dims = {}
    for inp in d.inputs:
        tt = TensorType.parse(inp.type) if inp.source and not inp.is_symint else None
        for i, size in enumerate(tt.sizes if tt is not None else ()):
            out[(inp.source, i)] = size  # type: ignore[index]
    return out


def taken_sources(d: DecodedEntry) -> set[str]:
    """The sources ``d`` takes inputs from; a tensorified float's as its own (``L['scale']``)."""
    out = {s for s in (*d.arg_sources, *(i.source for i in d.inputs)) if s}
    return out | {b for s in out if (b := tensorified_base(s)) is not None}
