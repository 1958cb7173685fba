"""The one component that explains a new key, in the user's terms.

A new key's nearest key (:mod:`fxcache_core.trace.nearest`) can differ in dozens
of components: run a newer torch on a shipped cache and ``torch_version``
differs beside every config key whose default changed with it and a backward
graph whose nodes were renamed. :func:`root_cause` picks the component that
explains the rest, in this order:

1. ``torch_version`` (a digest of torch's sources, ``torch_key()`` in
   torch/_inductor/codecache.py): given as the versions themselves, this run's
   from the trace's ``torch_version`` artifact, the cache's from the recorded
   builds (:mod:`fxcache_core.keying.torch_builds`; else its hash, said as
   such). Its **consequences**: settings that one side lacks, or that differ
   where neither side is known to be off its own torch's default
   (:func:`fxcache_core.keying.defaults.default_settings_for`: each torch at its
   own default means the default changed with the version), ``system_info``
   (the build: CUDA, compilers), and a graph (``gm``) that differs only in the
   names of its nodes. What else differs is ``also``.
2. a setting (``inductor_config[max_autotune]``): with the variable that sets it
   (:mod:`fxcache_core.keying.config_env`, from torch/_inductor/config.py).
3. an example input (``example_inputs[0]``): with the argument's name (the
   traced tensor of the same dtype and shape, ``L['x']`` -> ``x``) and the
   fields that differ (dtype, shape, stride) as this/cache; other inputs with
   the same change of the same field (a model cast to float64) are its
   consequences.
4. the build (``system_info``, ``cpp_runtime_thread_count``), then the graph.

With no torch version change, the first component in that order is the root
cause and the rest are ``also`` (they do not follow from it). Nothing here
reads the cache or imports torch.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from fxcache_core.keying.anatomy import Component, ComponentDiff, is_setting, tensor_fields
from fxcache_core.keying.config_env import env_var
from fxcache_core.keying.defaults import default_settings_for
from fxcache_core.keying.torch_builds import version_of
from fxcache_core.trace.explain_report import RootCause
from fxcache_core.trace.nearest import Nearest
from fxcache_core.trace.run_facts import TensorFact, TraceCompile
from fxcache_core.trace.user_terms import user_source

_BUILD_GROUPS = ("system_info", "cpp_runtime_thread_count")


def root_cause(near: Nearest, compile: TraceCompile | None, torch_version: str | None,
               graph: str | None = None) -> RootCause | None:
    """The root cause of a new key against its nearest key ``near`` (see the module
    docstring); ``compile``: the traced compile (its tensors name the inputs);
    ``torch_version``: this run's (``2.14.1+cu130``, the trace's); ``graph``: the
    lookup's (``backward``: its inputs are saved tensors and tangents, none the user's
    argument, so a traced tensor of the same dtype and shape names none of them). None
    where ``near`` has no differing component to read."""
    if graph == "backward" or near.role == "backward":
        compile = None
    diffs = near.diffs
    if not diffs:
        return None
    by_name = {d.name: d for d in diffs}
    tv = by_name.get("torch_version")
    if tv is not None:
        return _version_change(tv, [d for d in diffs if d is not tv], torch_version)
    order = ([d for d in diffs if is_setting(d.name.split("[", 1)[0])]
             + [d for d in diffs if d.name.startswith("example_inputs[")]
             + [d for d in diffs if d.name.split("[", 1)[0] in _BUILD_GROUPS]
             + [d for d in diffs if d.name == "gm"])
    if not order:
        order = list(diffs)
    first = order[0]
    also = tuple(d.name for d in diffs if d is not first)
    group = first.name.split("[", 1)[0]
    if first.name.startswith("example_inputs["):
        rc = _input_change(first, compile, also)
        # The same change in other inputs (a model cast to another dtype: every parameter
        # and argument) is one cause, not one per input.
        same = tuple(d.name for d in diffs if d is not first and d.name.startswith("example_inputs[")
                     and rc.code != "input" and _field_change(d, rc.code) == (rc.this, rc.cache))
        return replace(rc, consequences=same, also=tuple(n for n in also if n not in same))
    this, cache = _value(first.a), _value(first.b)
    if is_setting(group):
        code = "inductor-config" if group.startswith("inductor_config") else "setting"
        return RootCause(first.name, this, cache, code, env=env_var(first.name), also=also)
    if group in _BUILD_GROUPS:
        return RootCause(first.name, this, cache, "build", also=also)
    if first.name == "gm":
        return RootCause("gm", _graph(first.a), _graph(first.b), "graph", also=also)
    return RootCause(first.name, this, cache, "component", also=also)


def _value(c: Component | None) -> str | None:
    return c.readable if c is not None else None


def _version_change(tv: ComponentDiff, rest: Sequence[ComponentDiff], this_version: str | None) -> RootCause:
    this = this_version or (version_of(tv.a.hash) if tv.a is not None else None)
    cache = version_of(tv.b.hash) if tv.b is not None else None
    if this is None and tv.a is not None:
        this = f"torch with sources hash {tv.a.hash[:12]}"
    if cache is None and tv.b is not None:
        cache = f"torch with sources hash {tv.b.hash[:12]} (a build fxcache has not recorded)"
    if this is not None and this == cache and tv.a is not None and tv.b is not None:
        # One version, other sources (a patched or rebuilt install): say the hashes.
        this, cache = f"{this} (sources hash {tv.a.hash[:12]})", f"{cache} (sources hash {tv.b.hash[:12]})"
    this_v = version_of(tv.a.hash) if tv.a is not None else None
    cache_v = version_of(tv.b.hash) if tv.b is not None else None
    consequences, also = [], []
    for d in rest:
        (consequences if _follows_from_version(d, this_v or this_version, cache_v) else also).append(d.name)
    return RootCause("torch_version", this, cache, "torch-version",
                     consequences=tuple(consequences), also=tuple(also))


def _follows_from_version(d: ComponentDiff, this_version: str | None, cache_version: str | None) -> bool:
    group = d.name.split("[", 1)[0]
    if group == "system_info":
        return True  # torch's build: its CUDA, compilers, device
    if d.name == "gm":
        return d.a is not None and d.b is not None and _same_graph(d.a, d.b)
    if not is_setting(group):
        return False
    if d.a is None or d.b is None:
        return True  # a setting one torch has and the other lacks
    # A side known to be off its own torch's default was set by someone: not the version.
    for side, version in ((d.a, this_version), (d.b, cache_version)):
        defaults = default_settings_for(version) if version else None
        if defaults is not None and d.name in defaults and not side.hash.startswith(defaults[d.name][0]):
            return False
    return True


_SAME_GRAPH: dict[tuple[str, str], bool] = {}
"""(hash, hash) -> :func:`same_but_names`: a run's lookups compare the same two graphs
again and again (forward and AOTAutograd, every rank), and a graph can be megabytes."""


def _same_graph(a: Component, b: Component) -> bool:
    got = _SAME_GRAPH.get((a.hash, b.hash))
    if got is None:
        if len(_SAME_GRAPH) > 4096:
            _SAME_GRAPH.clear()
        got = _SAME_GRAPH[(a.hash, b.hash)] = same_but_names(a.value, b.value)
    return got


_IDENT_RE = re.compile(r"[A-Za-z_]\w*")
_NAME_RE = re.compile(r"(?<![.\w])[A-Za-z_]\w*")
_DEF_RE = re.compile(r"^\s*(?:def \w+\((.*)\)|(\w+)\s*(?::[^=]*)?=(?!=))")


def same_but_names(a: str, b: str) -> bool:
    """Whether two printed FX graphs (``gm`` components) are one graph but for the names
    of their nodes: each name a node is given (an assignment's target, a ``forward``
    parameter) renamed in order of first definition, comments dropped."""
    return _canonical(a) == _canonical(b)


def _canonical(text: str) -> str:
    lines = [ln.split("#", 1)[0].rstrip() for ln in text.splitlines()]
    lines = [ln for ln in lines if ln.strip()]
    names: dict[str, str] = {}
    for ln in lines:
        m = _DEF_RE.match(ln)
        if m is None:
            continue
        defined = _IDENT_RE.findall(re.sub(r":\s*\"[^\"]*\"", "", m.group(1))) if m.group(1) is not None \
            else [m.group(2)]
        for n in defined:
            if n != "self":
                names.setdefault(n, f"n{len(names)}")
    # An attribute (``aten.mm``) is never a node, whatever a node is named.
    return "\n".join(_NAME_RE.sub(lambda m: names.get(m.group(0), m.group(0)), ln) for ln in lines)


def _graph(c: Component | None) -> str | None:
    if c is None:
        return None
    from fxcache_core.keying.anatomy import graph_summary

    return graph_summary(c)


def _input_change(d: ComponentDiff, compile: TraceCompile | None, also: tuple[str, ...]) -> RootCause:
    """An example input: the argument it is and the fields that differ."""
    fa = tensor_fields(d.a.value) if d.a is not None else None
    fb = tensor_fields(d.b.value) if d.b is not None else None
    name = _argument(fa, compile) if fa is not None else None
    if fa is None or fb is None:
        return RootCause(d.name, _value(d.a), _value(d.b), "input", input=name, also=also)
    for fld in ("dtype", "shape", "stride", "device"):
        if fa.get(fld) != fb.get(fld):
            return RootCause(d.name, fa.get(fld), fb.get(fld), f"input-{fld}", input=name, also=also)
    return RootCause(d.name, _value(d.a), _value(d.b), "input", input=name, also=also)


def _field_change(d: ComponentDiff, code: str) -> tuple[str | None, str | None] | None:
    """(this, cache) of the field ``code`` names (``input-dtype``: the dtype) of an
    example input's diff; None where a side is not tensor metadata."""
    fa = tensor_fields(d.a.value) if d.a is not None else None
    fb = tensor_fields(d.b.value) if d.b is not None else None
    if fa is None or fb is None:
        return None
    fld = code.removeprefix("input-")
    return fa.get(fld), fb.get(fld)


def _argument(fields: dict[str, str], compile: TraceCompile | None) -> str | None:
    """The user's name of the traced tensor these fields describe: the one tensor of
    the compile with this dtype and shape (None: none, or more than one)."""
    if compile is None:
        return None
    dims = [x.strip() for x in fields["shape"].strip("[]").split(",") if x.strip()]
    hits = [t for t in compile.tensors if _same_tensor(t, fields["dtype"], dims)]
    sources = {t.source for t in hits}
    return user_source(hits[0].source) if len(sources) == 1 else None


def _same_tensor(t: TensorFact, dtype: str, dims: list[str]) -> bool:
    if t.dtype is None or t.dtype.removeprefix("torch.") != dtype or len(t.size) != len(dims):
        return False
    return all(not (isinstance(v, int) and d.isascii() and d.isdigit()) or int(d) == v for v, d in zip(t.size, dims, strict=True))


__all__ = ["root_cause", "same_but_names"]
