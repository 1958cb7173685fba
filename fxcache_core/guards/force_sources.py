"""Which guards in force name which sources, read from their text without parsing them.

``dynamo_cpp_guards_str`` may hold tens of thousands of guards; a check of one
hit's entry needs only those that name its sizes (:mod:`fxcache_core.guards.in_force`).
Sources are found as Dynamo prints them (``L['x'].size()[0]``,
``L['self']._modules['fc']._parameters['weight']``) by a regular expression, and
each guard is indexed under every prefix of each source it names, so a lookup by
a source finds every guard that names it or something under it. Nothing here
imports torch or parses a guard.
"""

from __future__ import annotations

import functools
import re

# A source as Dynamo prints it, ``L['x'].size()[0]``: a root, then attributes,
# no-argument calls and subscripts; and one such part.
_CHAIN_RE = re.compile(r"""[LG]\[(?:'[^'\\]*'|"[^"\\]*")\](?:\.[A-Za-z_]\w*(?:\(\))?|\[(?:'[^'\\]*'|"[^"\\]*"|-?[0-9]+)\])*""")
_PART_RE = re.compile(r"""[LG]\[(?:'[^'\\]*'|"[^"\\]*")\]|\.[A-Za-z_]\w*(?:\(\))?|\[(?:'[^'\\]*'|"[^"\\]*"|-?[0-9]+)\]""")


MAX_PARTS = 64
"""Parts of a source indexed (a real one has a few; a hostile 4 MB chain of
attributes would cost its length squared): a longer source is indexed, and looked
up (:func:`lookup_key`), by its first 64 parts."""


@functools.lru_cache(maxsize=8)
def source_index(in_force: tuple[str, ...]) -> dict[str, tuple[int, ...]]:
    """Each source named in a guard in force, and each prefix of one
    (``L['x']``, ``L['x'].size()``, ``L['x'].size()[0]``) -> the guards naming it (indices)."""
    index: dict[str, list[int]] = {}
    for i, code in enumerate(in_force):
        seen = set()
        for m in _CHAIN_RE.finditer(code):
            prefix = ""
            for part in _PART_RE.findall(m.group())[:MAX_PARTS]:
                prefix += part
                if prefix not in seen:
                    seen.add(prefix)
                    index.setdefault(prefix, []).append(i)
    return {k: tuple(v) for k, v in index.items()}


def lookup_key(source: str) -> str:
    """The key :func:`source_index` holds ``source``'s guards under: the source, cut
    to :data:`MAX_PARTS` parts when longer."""
    if source.count(".") + source.count("[") <= MAX_PARTS:
        return source
    parts = _PART_RE.findall(source)
    return "".join(parts[:MAX_PARTS]) if len(parts) > MAX_PARTS else source


__all__ = ["lookup_key", "source_index"]
