"""The names a call's inputs are given by (``--inputs NAME=VALUE``), as Dynamo's sources.

``x`` is ``L['x']``, a list's element ``xs[0]`` is ``L['xs'][0]``, a dict's item
``cfg['n']`` (or ``cfg["n"]``) is ``L['cfg']['n']`` and a dataclass's field ``cfg.n`` is
``L['cfg'].n``, as torch/_dynamo/source.py names them (``LocalSource``,
``GetItemSource``/``DictGetItemSource``, ``AttrSource``). :func:`canonical_source` reads a
name; :func:`item_path` and :func:`not_whole_and_items` refuse the names no rule of
match reads, so that no value given is left unread beside a verdict. Reads the user's
words only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from fxcache_core.errors import ShapeSpecError, param

__all__ = ["canonical_source", "item_path", "not_whole_and_items"]

_NAME_RE = re.compile(r"""[A-Za-z_]\w*((\[-?[0-9]+\])|(\['[^'\]]*'\])|(\["[^"'\]\\]*"\])|(\.[A-Za-z_]\w*))*""")
_SEGMENT_RE = re.compile(r"""\[(-?[0-9]+)\]|\['([^'\]]*)'\]|\["([^"]*)"\]|\.([A-Za-z_]\w*)""")
_SOURCE_RE = re.compile(r"[LG]\[.+")


def canonical_source(name: str) -> str:
    """The Dynamo source a user's input name stands for.

    ``x`` -> ``L['x']``, ``xs[0]`` -> ``L['xs'][0]``, ``cfg.n`` -> ``L['cfg'].n``,
    ``cfg['n']`` and ``cfg["n"]`` -> ``L['cfg']['n']``; a name that already starts with
    ``L[`` or ``G[`` is returned unchanged.

    Raises:
        ShapeSpecError: the name is neither form, or names an item by an empty key
            (``cfg['']``: no item the code reads by a constant key).
    """
    name = name.strip()
    if _SOURCE_RE.fullmatch(name):
        return name
    if not _NAME_RE.fullmatch(name):
        raise ShapeSpecError(
            f"{name!r} is not an input name (use the parameter name, e.g. x, xs[0], cfg['n'], or a "
            "source like L['x'])", param="inputs", value=name)
    m = re.match(r"[A-Za-z_]\w*", name)
    assert m is not None
    out = [f"L[{m.group(0)!r}]"]
    for seg in _SEGMENT_RE.finditer(name, m.end()):
        index, single, double, attr = seg.groups()
        key = single if single is not None else double
        if key == "":
            raise ShapeSpecError(f"{param('inputs')} {name}: an item by an empty key; give each item the code "
                                 "reads by its key, e.g. cfg['n']=4", param="inputs", value=name)
        out.append(seg.group(0) if key is None else f"['{key}']")
    return "".join(out)


def item_path(source: str, name: str, spec: str) -> None:
    """Raises ShapeSpecError for a Python value given as an item of an item of a parameter
    (``cfg['n']['m']=4``, ``cfg.n.m=4``, ``xs[0].n=4``): match reads a dict's, dataclass's
    or NamedTuple's items one level deep (:mod:`fxcache_core.lookup.container_items`), and
    would otherwise leave the value unread. A module's state (``self.block.training``) and
    a list's items (``xs[0][1]``) are other forms; a tensor is bound to a key's input by its
    source, at any depth."""
    m = re.fullmatch(r"L\['(\w+)'\](.*)", source)
    if m is None or m.group(1) == "self":
        return
    segs = [s.group(0) for s in _SEGMENT_RE.finditer(m.group(2))]
    if len(segs) > 1 and any(not re.fullmatch(r"\[-?[0-9]+\]", s) for s in segs):
        n = name.strip()
        raise ShapeSpecError(
            f"{param('inputs')} {n}: an item of an item; match reads the items of a dict, a dataclass or a "
            f"NamedTuple parameter one level deep ({m.group(1)}['n']=4, {m.group(1)}.n=4)",
            param="inputs", value=spec)


def not_whole_and_items(names: Mapping[str, str]) -> None:
    """Raises ShapeSpecError where one input is given whole and another by an item of it
    (``n=2`` and ``n['k']=4``, ``x=[4]`` and ``x.n=3``): one of them is not the call.
    ``names``: each source given -> the name the user wrote."""
    for inner in names:
        whole = next((inner[:i] for i, c in enumerate(inner) if c in "[." and inner[:i] in names), None)
        if whole is not None:
            raise ShapeSpecError(f"{param('inputs')}: {names[whole]} is given whole and by its item {names[inner]}: "
                                 "give one or the other", param="inputs", value=names[inner])
