"""How a Python float argument reaches a key, as torch 2.13 makes it.

Mirrors ``VariableBuilder.wrap_symfloat`` in torch/_dynamo/variables/builder.py
(``specialize_float = False`` by default, torch/_dynamo/config.py):

* **specialized**: the value is baked into the graph as a constant (and guarded by
  Dynamo's ``CONSTANT_MATCH``, which the cache does not keep) when the float is
  nan or inf, ``specialize_float`` is set, or ``assume_static_by_default`` holds
  (``dynamic=None``/``False``) and automatic dynamic has not yet seen it change:
  a fresh process's first call. Each value then has a graph, and a key, of its own;
* **tensorified**: otherwise (``dynamic=True``, or a later call after the value
  changed under automatic dynamic) it becomes a graph input, a 0-d ``f64[]``
  tensor whose source is the float's own (``L['scale']``; Dynamo's proxy wears
  ``FloatTensorSource``, ``___as_tensor(L['scale'])``), with no guard on its value:
  every value takes the same key.

Which constant a specialized key baked in is read off the stored graph: the
op lines under a ``# File: ..., code: ...`` comment whose code names the
parameter (:func:`baked_floats`). The graph text is read with the stub
unpickler, as every entry is, in a worker process under the decoding budgets
(:mod:`fxcache_core.decode.workers`); nothing is run.
"""

from __future__ import annotations

import functools
import re

from fxcache_core.cache.scan import CacheKey
from fxcache_core.catalog.reader import Catalog
from fxcache_core.decode.entries import entry_root
from fxcache_core.decode.origins import graph_comment
from fxcache_core.decode.unpickler import MAX_ENTRY_BYTES
from fxcache_core.decode.workers import run_one, task

AS_TENSOR = "___as_tensor("

_FLOAT_RE = re.compile(r"(?<![\w.])-?(?:[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?|[0-9]+[eE][-+]?[0-9]+|inf|nan)(?![\w.])")
MAX_LINES = 100_000


def tensorified_base(source: str) -> str | None:
    """``L['scale']`` for a tensorified float's source ``___as_tensor(L['scale'])``, else None."""
    if source.startswith(AS_TENSOR) and source.endswith(")"):
        return source[len(AS_TENSOR):-1]
    return None


def floats_in_code(graph: str, name: str) -> tuple[float, ...] | None:
    """The float constants of the ops traced from code lines that name ``name``.

    None when no ``# File: ... code:`` line of ``graph`` names it (the function
    does not compute with it in this graph).
    """
    word = re.compile(rf"(?<![\w.]){re.escape(name)}(?!\w)")
    found: list[float] = []
    mentioned, inside = False, False
    for n, line in enumerate(graph.splitlines()):
        if n >= MAX_LINES:
            break
        c = graph_comment(line)
        if c is not None:
            inside = word.search(c.code or "") is not None
            mentioned = mentioned or inside
            continue
        if inside and "= torch.ops." in line:
            call = line.split("= torch.ops.", 1)[1]
            found += [float(x) for x in _FLOAT_RE.findall(call.split(";")[0])]
    return tuple(found) if mentioned else None


def baked_floats(catalog: Catalog, key: CacheKey, name: str) -> tuple[float, ...] | None:
    """The constants the key's graph computes ``name`` with (:func:`floats_in_code`),
    read from its first readable entry's stored graph; None where no code line of
    it names ``name`` or no entry can be read (nor decoded within the CPU budget)."""
    graph = graph_text(catalog, key)
    return floats_in_code(graph, name) if graph is not None else None


def graph_text(catalog: Catalog, key: CacheKey) -> str | None:
    """The printed graph of the key's first entry that decodes: an AOTAutograd entry's
    forward graph (``aot_forward_graph_str``), an FX entry's post-grad graph
    (``inductor_post_grad_graph_str``); None when no entry holds one (or none decodes
    within the CPU budget: each is read in a decode worker)."""
    for e in key.entries:
        if e.size > MAX_ENTRY_BYTES:
            continue
        got = _graph_text(e.file.where, e.size, e.file.mtime_ns, e.file.ino)
        if isinstance(got, list) and len(got) == 2 and got[0] == "found" and isinstance(got[1], str):
            return got[1]
    return None


@functools.lru_cache(maxsize=16)
def _graph_text(where: str, size: int, mtime_ns: int, ino: int) -> object:
    """The ``graph-text`` task's value for one entry file (its path, size, mtime and
    inode), read once while among the last few asked: the rules ask of one key's graph
    for each name they read."""
    return run_one("graph-text", where, size)


@task("graph-text")
def _graph_text_task(where: str) -> list:
    """Worker side: an entry's path -> ``["found", its printed graph]``, or ``["none"]``
    when the entry has none (or cannot be read)."""
    root = entry_root(where)
    if root is not None:
        for field in ("aot_forward_graph_str", "inductor_post_grad_graph_str"):
            graph = root.field(field)
            if isinstance(graph, str):
                return ["found", graph]
    return ["none"]
