"""``unpack BLOB``: a mega-cache blob installed by the pack rules.

A blob (:mod:`fxcache_core.cache.blob`) is laid out where torch's
``load_cache_artifacts`` places its entries, in a private temp dir; every entry is
decoded there with the restricted decoding and bounds of any cache (the catalog);
the whole is then packed (:func:`~fxcache_core.pack.select.plan_pack`, everything)
into a temp pack, which ``unpack`` verifies and installs as it installs any pack:
link-safe, new files only, nothing replaced. So a blob is installed exactly as a
pack of the same entries, and an entry that does not decode (a pickle naming a
foreign global, truncated...) stops it before anything is written. Its saved
profiles (``pgo``) are not installed, but they are read as the code scan reads a
cache dir's: one that names a global torch does not write stops it too (the same
blob given to ``load_cache_artifacts`` would have torch unpickle it).

What a blob never holds: compiled libraries (torch builds every C++ kernel its
wrappers name on the first load: ``cpp_pybinding`` in
torch/_inductor/async_compile.py compiles ``<k>.main.so`` when missing) and, for
bundled AOTAutograd entries, the FX graph cache keys the manifest's build facts
are read from.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from fxcache_core.cache.blob import Blob, BlobError, as_cache_dir, read_blob
from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import scan_cache
from fxcache_core.catalog.reader import Catalog
from fxcache_core.decode.entries import DecodedEntry
from fxcache_core.decode.pgo import read_pgo_states
from fxcache_core.functions.origin import key_function_name
from fxcache_core.pack.archive import write_pack
from fxcache_core.pack.bundled import entry_graphs
from fxcache_core.pack.closure import kernel_sources
from fxcache_core.pack.select import plan_pack


@dataclass(frozen=True, slots=True)
class BlobPack:
    """A blob turned into a pack.

    Attributes:
        blob: what the blob holds.
        pack: the temp pack written from it (removed with ``tmp``).
        kernels: per function (as the manifest names it), the kernels its entries'
            wrappers build on the first load (none of them is in a blob).
        skipped: artifact types not installed (``pgo``, ``autotune``, ``precompile``)
            and how many of each.
    """

    blob: Blob
    pack: Path
    kernels: Mapping[str, int]
    skipped: Mapping[str, int]


def pack_of_blob(path: Path, tmp: tempfile.TemporaryDirectory[str]) -> BlobPack:
    """The blob at ``path`` as a pack written in ``tmp`` (the module docstring).

    Raises:
        BlobError: the blob is damaged or unknown (:func:`~fxcache_core.cache.blob.read_blob`),
            holds no entry fxcache places, or an entry of it does not decode.
        PackError: the temp pack cannot be written.
    """
    blob = read_blob(path)
    root = as_cache_dir(blob)
    catalog = Catalog(scan_cache(root))
    if not any(a.placed for a in blob.artifacts):
        raise BlobError(f"{path}: the blob holds no FX graph or AOTAutograd entry")
    bad = [e for e in catalog.scan.entries() if not isinstance(catalog.load(e, full=True), DecodedEntry)]
    if bad:
        cause = getattr(catalog.load(bad[0], full=True), "cause", None) or "it does not decode"
        raise BlobError(f"{path}: {len(bad)} entr{'y' if len(bad) == 1 else 'ies'} of the blob cannot be read "
                        f"({bad[0].kind.value} {bad[0].key[:10]}: {cause}): nothing written")
    hostile = [p for p in read_pgo_states(root) if p.foreign]
    if hostile:
        raise BlobError(f"{path}: a saved profile of the blob ({hostile[0].path.name}) "
                        f"{hostile[0].foreign[0].reason}: nothing written")
    plan = plan_pack(catalog, everything=True)
    out = Path(tmp.name) / "blob.tar.gz"
    write_pack(plan, out)
    kernels: dict[str, int] = {}
    for e in catalog.scan.entries():
        k = catalog.scan.key(e.key)
        fn = key_function_name(catalog, k).distinct if k is not None else None
        graphs = entry_graphs(e.path, e.kind is KeyKind.FX_GRAPH, None, e.size) or []
        n = sum(len(kernel_sources(s)) for _, s in graphs if s)
        kernels[fn or "?"] = kernels.get(fn or "?", 0) + n
    skipped: dict[str, int] = {}
    for a in blob.artifacts:
        if not a.placed:
            skipped[a.type] = skipped.get(a.type, 0) + 1
    return BlobPack(blob, out, kernels, skipped)


__all__ = ["BlobPack", "pack_of_blob"]
