"""What a pack says about its entries, read from the entries themselves.

A manifest (:mod:`fxcache_core.pack.manifest`) names the torch build that made the
keys, the settings not at torch's defaults, and per entry its inputs, guards and
C++ thread count. Each is a fact of the entry's own content: the FX key's debug
lines (``FxGraphCachePickler.debug_lines`` in torch/_inductor/codecache.py: the
build components ``torch_version`` and ``system_info``, the settings, the example
inputs, ``cpp_runtime_thread_count``) and its guards string. :func:`entry_claims`
reads them from one decoded entry and :func:`combine` makes the manifest's
``build``, ``settings`` and ``entries`` of them: ``fxcache pack`` writes what it
gives, and ``fxcache unpack`` computes it again from the packed entries
(:mod:`fxcache_core.pack.contents`) and holds the manifest to it
(:func:`contradiction`), so nothing ``unpack`` says rests on the manifest's word.

Function names are the exception: which function a key was compiled from is read
from the entries too, but its spelling depends on the source files the machine
has (:func:`fxcache_core.functions.frames.named` reads them for the class and the
first line), so unpack shows the name it reads and never compares the manifest's.
Nothing here touches the file system but through the catalog.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import Entry
from fxcache_core.catalog.reader import Catalog
from fxcache_core.decode.entries import DecodedEntry
from fxcache_core.functions.origin import key_function_name
from fxcache_core.keying.anatomy import (
    BUILD_COMPONENTS,
    is_setting,
    parse_debug_lines,
    settings_not_at_default,
)
from fxcache_core.keying.defaults import default_settings_for
from fxcache_core.keying.torch_builds import version_of
from fxcache_core.pack.manifest import BuildInfo, Manifest, PackedEntry
from fxcache_core.reasons import Reason

PER_GRAPH_GROUPS = frozenset({"fx_kwargs"})
"""Setting groups that describe the graph compiled (``is_backward``, ``static_input_idxs``),
not a setting the run chooses: left out of the manifest's settings."""


@dataclass(frozen=True)
class EntryClaims:
    """What one entry's content says (:func:`entry_claims`).

    Attributes:
        packed: the manifest's row for it.
        build: FX entries: (component, hash) of the build components, sorted; () else.
        values: FX entries: build component -> its readable value.
        settings: FX entries: (setting, readable value) not at the defaults of the torch
            that built the key, where those defaults are recorded.
        defaults_unknown: FX entries whose builder's defaults fxcache has no record of:
            that torch (version, else the first 12 characters of its hash); else None.
        hashed: FX entries: (setting, readable value) of every setting the key hashes.
    """

    packed: PackedEntry
    build: tuple[tuple[str, str], ...] = ()
    values: tuple[tuple[str, str], ...] = ()
    settings: frozenset[tuple[str, str]] = frozenset()
    defaults_unknown: str | None = None
    hashed: frozenset[tuple[str, str]] = frozenset()


def entry_claims(catalog: Catalog, e: Entry, d: DecodedEntry, torch_version: str | None = None) -> EntryClaims:
    """Read the manifest's facts of entry ``e`` from ``d``, its decoding with debug lines
    (``catalog.load(e, full=True)``). ``torch_version``: the readable version of the
    torch that built it where something else says it (a trace); the key's own
    ``torch_version`` component, where fxcache has recorded that build, comes first."""
    key = catalog.scan.key(e.key)
    function = key_function_name(catalog, key).distinct if key is not None else None
    if e.kind is not KeyKind.FX_GRAPH:
        return EntryClaims(PackedEntry(e.kind.value, e.key, e.name, function, (), d.guards_expr, None))
    comps = parse_debug_lines(d.debug_lines)
    inputs = tuple(c.readable for c in comps if c.group == "example_inputs")
    build = tuple(sorted((c.name, c.hash) for c in comps if c.group in BUILD_COMPONENTS))
    values = tuple(sorted((c.name, c.readable) for c in comps if c.group in BUILD_COMPONENTS))
    cpp = next((int(c.value.strip()) for c in comps
                if c.name == "cpp_runtime_thread_count" and c.value.strip().isascii() and c.value.strip().isdigit()), None)
    built_hash = next((c.hash for c in comps if c.name == "torch_version"), None)
    built_by = (version_of(built_hash) if built_hash else None) or torch_version
    table = default_settings_for(built_by) if built_by else None
    settings: set[tuple[str, str]] = set()
    unknown = None
    if table is None:
        unknown = built_by or (built_hash[:12] if built_hash else "?")
    else:
        for g in settings_not_at_default(comps, table):
            if g.group not in PER_GRAPH_GROUPS:
                settings.update((c.name, c.readable) for c, _ in g.not_default)
    return EntryClaims(PackedEntry(e.kind.value, e.key, e.name, function, inputs, d.guards_expr, cpp),
                       build, values, frozenset(settings), unknown,
                       frozenset((c.name, c.readable) for c in comps if is_setting(c.group)))


@dataclass(frozen=True)
class Combined:
    """The manifest's claims of a set of entries (:func:`combine`).

    Attributes:
        build: the torch build that made the keys (the most common among the FX entries).
        settings: the settings not at torch's defaults, sorted.
        entries: the entries' rows, sorted by kind, key, entry.
        defaults_unknown: the builds whose defaults fxcache has no record of, sorted.
        mixed: a reason (code ``mixed-builds``) when the FX entries were made by more
            than one build, else None.
        hashed: every (setting, readable value) the FX entries hash.
    """

    build: BuildInfo
    settings: tuple[tuple[str, str], ...]
    entries: tuple[PackedEntry, ...]
    defaults_unknown: tuple[str, ...] = ()
    mixed: Reason | None = None
    hashed: frozenset[tuple[str, str]] = frozenset()


def combine(claims: Sequence[EntryClaims], torch_version: str | None = None) -> Combined:
    """The manifest's ``build``, ``settings`` and ``entries`` of ``claims``: the build
    most FX entries name (its readable version: the recorded one of its
    ``torch_version`` hash, else ``torch_version`` as given), the union of their
    settings, their rows sorted."""
    builds: Counter[tuple[tuple[str, str], ...]] = Counter(c.build for c in claims if c.build)
    main = dict(builds.most_common(1)[0][0]) if builds else {}
    values: dict[str, str] = {}
    for c in claims:
        values.update(c.values)
    threads = Counter(c.packed.cpp_threads for c in claims if c.packed.cpp_threads is not None)
    version = (version_of(main["torch_version"]) if "torch_version" in main else None) or torch_version
    build = BuildInfo(version, main, {k: v for k, v in values.items() if k in main},
                      threads.most_common(1)[0][0] if threads else None)
    mixed = (Reason(f"the entries were made by {len(builds)} torch builds; the manifest names the most "
                    "common one", "mixed-builds") if len(builds) > 1 else None)
    return Combined(build, tuple(sorted(set().union(*(c.settings for c in claims)))),
                    tuple(sorted((c.packed for c in claims), key=lambda p: (p.kind, p.key, p.entry))),
                    tuple(sorted({c.defaults_unknown for c in claims if c.defaults_unknown})), mixed,
                    frozenset().union(*(c.hashed for c in claims)))


def contradiction(manifest: Manifest, read: Combined) -> str | None:
    """The first claim of ``manifest`` that what its entries say (``read``, of exactly
    the entries it lists) contradicts, as a phrase; None when none does.

    The build components, their readable values, every entry's inputs, guards and
    C++ thread count must be the entries' own. The readable torch version and the
    settings may be fewer than the entries tell (a version or a defaults table this
    fxcache has recorded and the packer's had not), never other: a version must be
    the one the build's hash names where that is recorded, and a setting listed
    must be one the entries hash, with that value (and one not at the defaults,
    where the defaults of every build are recorded). Function names are not
    compared (module docstring).
    """
    b, r = manifest.build, read.build
    if dict(b.components) != dict(r.components):
        differ = sorted(set(b.components.items()) ^ set(r.components.items()))
        return f"its build components are not the entries' ({differ[0][0]} differs)"
    for name, value in b.values.items():
        if r.values.get(name) != value:
            return f"the readable value of {name} is not the entries'"
    if b.cpp_threads != r.cpp_threads:
        return f"it says {b.cpp_threads} C++ threads, the entries hash {r.cpp_threads}"
    if b.torch_version is not None and r.torch_version is not None and b.torch_version != r.torch_version:
        return f"it says torch {b.torch_version[:40]!r}, the entries' build is torch {r.torch_version!r}"
    if read.defaults_unknown:
        extra, why = sorted(set(manifest.settings) - read.hashed), "which the entries do not hash"
    else:
        extra = sorted(set(manifest.settings) - set(read.settings))
        why = "which the entries do not hash away from torch's defaults"
    if extra:
        return f"it lists the setting {extra[0][0][:80]}={extra[0][1][:80]}, {why}"
    mine = {(e.kind, e.key, e.entry): e for e in read.entries}
    for e in manifest.entries:
        got = mine.get((e.kind, e.key, e.entry))
        if got is None:
            return f"it lists {e.kind} entry {e.key[:12]}/{e.entry[:12]}, which is not one of its members"
        if e.inputs != got.inputs:
            return f"the inputs of {e.kind} entry {e.key[:12]}/{e.entry[:12]} are not the entry's"
        if (e.guards or None) != (got.guards or None):
            return f"the guards of {e.kind} entry {e.key[:12]}/{e.entry[:12]} are not the entry's"
        if e.cpp_threads != got.cpp_threads:
            return f"the C++ thread count of {e.kind} entry {e.key[:12]}/{e.entry[:12]} is not the entry's"
    if len(manifest.entries) != len(read.entries):
        return "it lists fewer entries than it holds"
    return None


__all__ = ["PER_GRAPH_GROUPS", "Combined", "EntryClaims", "combine", "contradiction", "entry_claims"]
