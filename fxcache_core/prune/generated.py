"""gc's rules for generated code in the cache root: wrapper modules that go with
their only FX entry, and, with the ``artifacts`` policy, code unused for ``older_than_s``.

Generated code (kernels and FX wrapper modules, see
:class:`~fxcache_core.cache.scan.Artifact`) is derived: torch writes it again when
missing. It never counts towards an entry's size, except an FX entry's wrapper
module when that entry is its only user: then it goes with the entry. Mirrors
torch's CPU ISA check for ``.load_ok`` markers (below). Decides only: never
touches a file.
"""

from __future__ import annotations

from collections.abc import Sequence

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import Artifact, Entry
from fxcache_core.catalog.reader import Catalog
from fxcache_core.decode.entries import DecodedEntry
from fxcache_core.prune.policy import TEMP_FILE_GRACE_S, GcPolicy
from fxcache_core.prune.removal import Removal, last_use
from fxcache_core.quantities import format_duration
from fxcache_core.reasons import Reason

LOAD_OK = ".load_ok"
"""Suffix of the empty marker torch 2.14+ writes beside a library that passed its
load check (``VecISA.check_build`` in torch/_inductor/cpu_vec_isa.py:
``<key[1:3]>/<key>.so.load_ok``)."""


def owned_wrappers(catalog: Catalog, code: Sequence[Artifact]) -> dict[str, Artifact]:
    """FX entry path (``FileInfo.where``) -> its wrapper module, for wrappers exactly one FX entry uses.

    Every FX entry of the scan counts as a user (symlinked ones too); an
    unreadable one might be a user, so a wrapper key is only matched against
    what decoded, and a wrapper with no decoded user is left to the
    ``artifacts`` policy.
    """
    py = {a.key: a for a in code if a.file.name == f"{a.key}.py"}
    users: dict[str, list[Entry]] = {}
    for e in catalog.scan.entries():
        if e.kind is KeyKind.FX_GRAPH:
            d = catalog.load(e)
            if isinstance(d, DecodedEntry) and d.wrapper_key in py:
                users.setdefault(d.wrapper_key, []).append(e)
    return {u[0].file.where: py[k] for k, u in users.items() if len(u) == 1}


def code_removals(removals: list[Removal], owned: dict[str, Artifact], code: Sequence[Artifact],
                  policy: GcPolicy, now: float) -> list[Removal]:
    """Generated code the plan removes: the wrapper modules only removed FX
    entries used, and, with the ``artifacts`` policy, files unused for
    ``older_than_s``; never code used within :data:`TEMP_FILE_GRACE_S`
    (execution would refuse it).

    A library and its ``.load_ok`` marker are one unit. Torch's CPU ISA check
    builds ``<key>.so`` when it is missing, then, if the marker exists, trusts
    the library without the ``dlopen`` probe in a child process that wrote the
    marker in the first place: a marker left behind vouches for whatever is
    built next. So the unit is judged by its most recent use, the marker is
    removed first, and a marker whose library is gone is removed on its own
    (torch then probes the rebuilt library again).
    """
    out: dict[str, Removal] = {}
    for r in removals:
        a = owned.get(r.file.where)
        if a is not None and now - last_use(a.file) > TEMP_FILE_GRACE_S:  # else execution refuses it
            out[a.file.where] = Removal(a.file, KeyKind.CODE, a.key, None, (Reason(
                f"wrapper module of FX entry {r.key[:10]}/{(r.entry or '')[:10]}, its only user, "
                "which is removed", "wrapper-of-removed-entry"),))
    if policy.artifacts and policy.older_than_s is not None:
        paths = {a.file.where for a in code}
        markers = {a.file.where[:-len(LOAD_OK)]: a for a in code if a.file.name.endswith(LOAD_OK)}
        for a in code:
            marker = markers.get(a.file.where)
            if a.file.name.endswith(LOAD_OK):
                orphan = a.file.where[:-len(LOAD_OK)] not in paths
                if orphan and now - last_use(a.file) > TEMP_FILE_GRACE_S:
                    out[a.file.where] = Removal(a.file, KeyKind.CODE, a.key, None, (Reason(
                        "load-check marker of a library that is gone: torch would trust the "
                        "rebuilt library without checking that it loads", "orphaned-load-marker"),))
                continue  # else it goes (or stays) with its library, below
            age = now - max(last_use(a.file), last_use(marker.file) if marker else 0.0)
            if age > max(policy.older_than_s, TEMP_FILE_GRACE_S) and a.file.where not in out:
                if marker is not None:
                    out[marker.file.where] = Removal(marker.file, KeyKind.CODE, marker.key, None, (
                        Reason(f"load-check marker of {a.file.name}, removed with it", "load-marker-with-library"),))
                out[a.file.where] = Removal(a.file, KeyKind.CODE, a.key, None, (
                    Reason(f"generated code unused for {format_duration(age)}", "unused-generated-code"),))
    return list(out.values())


__all__ = ["LOAD_OK", "code_removals", "owned_wrappers"]
