"""The compiled graphs a bundled AOTAutograd entry carries inside itself.

With ``torch._functorch.config.bundled_autograd_cache`` on (what
``torch._inductor.standalone_compile`` and vLLM use), ``AOTAutogradCache.make_entry``
(torch/_functorch/_aot_autograd/autograd_cache.py) saves a
``BundledAOTAutogradResult`` whose ``compiled_fw`` / ``compiled_bw`` are
``BundledCompiledForward`` / ``BundledCompiledBackward``
(torch/_functorch/_aot_autograd/aot_autograd_result.py): each holds the whole
``CompiledFxGraph`` in its ``result`` field, and a hit loads it from there
(``BundledOutputCodeLoadable.load``), never from the FX graph cache. Such an entry
has no FX entry to follow or to keep; what it needs beside itself is what its
graphs' wrapper modules name, as for an FX entry (:mod:`fxcache_core.pack.closure`):
the wrapper module ``<cache_key>.py`` and the kernels' compiled libraries.

Read with the restricted unpickler (:func:`~fxcache_core.decode.unpickler.load_stubs`)
under fxcache's memory budget; nothing is executed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from fxcache_core.cache.scan import read_entry_bytes
from fxcache_core.decode.memlimit import decoding_budget
from fxcache_core.decode.unpickler import Stub, load_stubs
from fxcache_core.decode.workers import run_one, task
from fxcache_core.pack.closure import wrapper_source

BUNDLED_TYPES = frozenset({"BundledCompiledForward", "BundledCompiledBackward"})
"""The wrappers of a graph carried inside the AOTAutograd entry (torch 2.13)."""


@dataclass(frozen=True, slots=True)
class BundledGraph:
    """One compiled graph inside a bundled AOTAutograd entry.

    Attributes:
        role: ``forward`` or ``backward``.
        wrapper_key: the code-cache key of its wrapper module (``cache_key``:
            ``<root>/<key[1:3]>/<key>.py``), None where not stored.
        source: the wrapper module's source (``source_code``), None where not stored.
    """

    role: str
    wrapper_key: str | None
    source: str | None


def bundled_graphs(data: bytes) -> tuple[BundledGraph, ...]:
    """The graphs a pickled AOTAutograd entry carries inside itself, forward first;
    () for an entry that points into the FX graph cache instead (``CompiledForward``
    holds an ``fx_graph_cache_info``), or bytes that do not decode (reported elsewhere)."""
    try:
        with decoding_budget(len(data)):
            root, _ = load_stubs(data)
    except Exception:  # noqa: BLE001 - a corrupt entry carries nothing (verify reports it)
        return ()
    if not isinstance(root, Stub):
        return ()
    out: list[BundledGraph] = []
    for role, field in (("forward", "compiled_fw"), ("backward", "compiled_bw")):
        holder = root.field(field)
        if not (isinstance(holder, Stub) and holder.stub_name in BUNDLED_TYPES):
            continue
        graph = holder.field("result")
        if not isinstance(graph, Stub):
            continue
        key, src = graph.field("cache_key"), graph.field("source_code")
        out.append(BundledGraph(role, key if isinstance(key, str) else None,
                                src if isinstance(src, str) else None))
    return tuple(out)


def is_bundled(data: bytes) -> bool:
    """Whether a pickled AOTAutograd entry carries its compiled graphs inside itself."""
    return bool(bundled_graphs(data))


__all__ = ["BUNDLED_TYPES", "BundledGraph", "bundled_graphs", "is_bundled"]


def graphs_of(is_fx: bool, wrapper_key: str | None, data: bytes) -> list[tuple[str | None, str | None]]:
    """(wrapper key, wrapper source) of each compiled graph an entry's bytes ``data``
    load from themselves: an FX entry its own (``wrapper_key`` from its decoded form);
    an AOTAutograd entry those it bundles (:func:`bundled_graphs`), none when it points
    into the FX graph cache. The one rule pack selects by and unpack checks a pack's
    members by."""
    if is_fx:
        return [(wrapper_key, wrapper_source(data))]
    return [(g.wrapper_key, g.source) for g in bundled_graphs(data)]


def entry_graphs(path: Path, is_fx: bool, wrapper_key: str | None, n_bytes: int
                 ) -> list[tuple[str | None, str | None]] | None:
    """:func:`graphs_of` the entry file at ``path`` (``n_bytes`` long, for its budget),
    read and decoded again in a decode worker under the CPU budget
    (:mod:`fxcache_core.decode.workers`): the bytes may have changed since the
    catalog decoded them. None when the file cannot be read or its decode did not
    finish."""
    got = run_one("entry-graphs", [os.fspath(path), is_fx, wrapper_key], n_bytes)
    if not isinstance(got, list) or not got or got[0] != "ok":
        return None
    return [(k if isinstance(k, str) else None, src if isinstance(src, str) else None) for k, src in got[1]]


@task("entry-graphs")
def _entry_graphs_task(arg: list) -> list:
    """Worker side of :func:`entry_graphs`: ``[path, is_fx, wrapper_key]`` ->
    ``["ok", [[wrapper key, source], ...]]`` or ``["unreadable"]``."""
    where, is_fx, wrapper_key = arg
    try:
        data = read_entry_bytes(Path(where))
    except OSError:
        return ["unreadable"]
    return ["ok", [list(g) for g in graphs_of(bool(is_fx), wrapper_key, data)]]

