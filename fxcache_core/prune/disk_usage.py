"""``fxcache df``: what every kind of content under a cache dir costs, and what gc would free.

In the spirit of ``docker system df``, ``pip cache info`` and ``ccache -s``:
one row per :class:`~fxcache_core.cache.inventory.ContentKind` (files, bytes, oldest and
newest last use), with what gc's default policy would reclaim and, when asked
(it imports torch), what ``--stale`` would. The rows add up to the totals, and
the totals are what ``find`` and ``du`` say of the same dir
(:class:`~fxcache_core.cache.inventory.Totals`). Nothing here prints; each report
knows its JSON form (:meth:`DiskUsage.to_json`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fxcache_core.cache.inventory import ContentKind, Inventory, Item, Totals
from fxcache_core.reasons import code_of

if TYPE_CHECKING:
    from fxcache_core.catalog.reader import Catalog
    from fxcache_core.prune.plan import GcPlan


@dataclass(frozen=True)
class Reclaim:
    """What a gc policy would remove of one kind: ``files`` and ``bytes``."""

    files: int = 0
    bytes: int = 0

    def to_json(self) -> dict[str, int]:
        return {"files": self.files, "bytes": self.bytes}


@dataclass(frozen=True)
class KindUsage:
    """One row of ``df``.

    Attributes:
        kind: the kind of content.
        files: regular files of that kind.
        bytes: their sizes (a hard-linked file counted once, see :class:`~fxcache_core.cache.inventory.Item`).
        oldest, newest: the oldest and newest last use (``max(atime, mtime)``,
            epoch seconds) among them; None for a kind with no file.
        reclaimable: what gc's default policy would remove.
        stale: what ``gc --stale`` would remove (None: not computed).
        by_detail: for ``code`` and ``library``, files and bytes per extension
            (``.py``, ``.main.so``); for ``triton``, per device.
    """

    kind: ContentKind
    files: int
    bytes: int
    oldest: float | None
    newest: float | None
    reclaimable: Reclaim
    stale: Reclaim | None = None
    by_detail: tuple[tuple[str, int, int], ...] = ()

    def to_json(self) -> dict:
        return {"kind": self.kind.value, "label": self.kind.label, "files": self.files,
                "bytes": self.bytes, "oldest_use": self.oldest, "newest_use": self.newest,
                "reclaimable": self.reclaimable.to_json(),
                "stale": None if self.stale is None else self.stale.to_json(),
                "by_extension" if self.kind is not ContentKind.TRITON else "by_device":
                    [{"name": d, "files": n, "bytes": b} for d, n, b in self.by_detail]}


@dataclass(frozen=True)
class DiskUsage:
    """``df`` of one root.

    Attributes:
        root: the dir.
        layout: ``inductor`` or ``triton`` (a ``$TRITON_CACHE_DIR`` of its own).
        kinds: one row per kind present, in :class:`ContentKind` order.
        totals: what ``find``/``du`` say of the root.
        unreadable: (path, why) for what could not be listed or stat'ed: the
            totals leave it out.
        undecided: (what, why) for what ``--stale`` could not judge.

    JSON gives each ``why`` its code (``why_code``, see :mod:`fxcache_core.reasons`).
        index: where fxcache's index of this root is (a file outside the root
            by default; None when turned off) and its size in bytes (0 when absent).
    """

    root: Path
    layout: str
    kinds: tuple[KindUsage, ...]
    totals: Totals
    unreadable: tuple[tuple[str, str], ...] = ()
    undecided: tuple[tuple[str, str], ...] = ()
    index: tuple[str, int] | None = None

    @property
    def reclaimable(self) -> Reclaim:
        """What the default policy would remove, all kinds together."""
        return Reclaim(sum(k.reclaimable.files for k in self.kinds),
                       sum(k.reclaimable.bytes for k in self.kinds))

    @property
    def stale(self) -> Reclaim | None:
        if any(k.stale is None for k in self.kinds):
            return None
        return Reclaim(sum(k.stale.files for k in self.kinds if k.stale),
                       sum(k.stale.bytes for k in self.kinds if k.stale))

    def to_json(self) -> dict:
        """``{"root", "layout", "kinds": [{"kind", "files", "bytes", ...}], "total": {"files",
        "bytes", ...}, ...}``; the kinds' files and bytes add up to ``total``'s."""
        stale = self.stale
        return {
            "root": str(self.root), "layout": self.layout,
            "kinds": [k.to_json() for k in self.kinds],
            "total": {**self.totals.to_json(), "reclaimable": self.reclaimable.to_json(),
                      "stale": None if stale is None else stale.to_json()},
            "complete": not self.unreadable,
            "unreadable": [{"path": p, "why": w, "why_code": code_of(w)} for p, w in self.unreadable],
            "undecided": [{"what": p, "why": w, "why_code": code_of(w)} for p, w in self.undecided],
            "index": None if self.index is None else {"path": self.index[0], "bytes": self.index[1]},
        }

    def to_json_with(self, triton: DiskUsage | None) -> dict:
        """:meth:`to_json` with ``triton_cache_dir``: the usage of ``$TRITON_CACHE_DIR``
        where it is not inside this cache dir (its :meth:`to_json`), else None."""
        body = self.to_json()
        body["triton_cache_dir"] = triton.to_json() if triton is not None else None
        return body


def disk_usage(inv: Inventory, reclaim: Iterable[str] = (), stale: Iterable[str] | None = None,
               undecided: Sequence[tuple[str, str]] = (),
               index: tuple[str, int] | None = None) -> DiskUsage:
    """The ``df`` report of an inventory.

    ``reclaim``: paths (as the inventory spells them) gc's default policy would
    remove; ``stale``: those ``--stale`` would (None: not computed). A path not
    in the inventory (outside the root, or reached through a symlink) is not
    counted.
    """
    gone = set(reclaim)
    stale_set = None if stale is None else set(stale)
    rows: dict[ContentKind, list[Item]] = {}
    for i in inv.items:
        rows.setdefault(i.kind, []).append(i)
    out = []
    for kind in ContentKind:
        items = rows.get(kind)
        if not items:
            continue
        details: dict[str, list[int]] = {}
        if kind in (ContentKind.CODE, ContentKind.LIBRARY, ContentKind.TRITON):
            for i in items:
                d = details.setdefault(i.detail, [0, 0])
                d[0] += 1
                d[1] += i.file.size if i.counted else 0
        out.append(KindUsage(
            kind=kind, files=len(items), bytes=sum(i.file.size for i in items if i.counted),
            oldest=min(i.last_use for i in items), newest=max(i.last_use for i in items),
            reclaimable=_reclaim(items, gone),
            stale=None if stale_set is None else _reclaim(items, stale_set),
            by_detail=tuple((d, n, b) for d, (n, b) in sorted(details.items(), key=lambda t: -t[1][1])),
        ))
    return DiskUsage(root=inv.root, layout=inv.layout, kinds=tuple(out), totals=inv.totals,
                     unreadable=tuple((str(s.path), s.reason) for s in inv.unreadable),
                     undecided=tuple(undecided), index=index)


def _reclaim(items: list[Item], paths: set[str]) -> Reclaim:
    hit = [i for i in items if i.file.where in paths]
    return Reclaim(len(hit), sum(i.file.size for i in hit if i.counted))


def measure(catalog: Catalog, *, stale_against: tuple[tuple[str, str], ...] | None = None,
            stale_include_dir: str | None = None, index_path: Path | None = None,
            now: float | None = None, default_plan: GcPlan | None = None) -> DiskUsage:
    """``df`` of the catalog's cache dir: its inventory, with what gc's default
    policy (and, given the installed torch's build hashes and include dir from
    :func:`fxcache_core.keying.current.current_build`, ``--stale``) would remove,
    planned exactly as ``fxcache gc`` plans it (nothing is touched).

    ``index_path``: fxcache's index file of this cache dir
    (:func:`fxcache_core.state.index.default_index_path`), reported with its size.
    ``default_plan``: gc's default plan of this catalog, when the caller made it already
    (``plan_gc(catalog, GcPolicy.default(...))``); else it is made here.
    """
    import os
    import time

    from fxcache_core.cache.inventory import detect_layout, take_inventory
    from fxcache_core.prune.plan import plan_gc
    from fxcache_core.prune.policy import GcPolicy

    now = time.time() if now is None else now
    root = catalog.scan.root
    # The plans first: each plan's working state (its own inventory of the generated
    # code, its units) is gone before df's inventory of every file is taken.
    default = default_plan if default_plan is not None else plan_gc(catalog, GcPolicy.default(now=now))
    reclaim = [r.file.where for r in default.removals]
    del default
    stale = undecided = None
    if stale_against is not None:
        plan = plan_gc(catalog, GcPolicy(stale_against=stale_against,
                                         stale_include_dir=stale_include_dir, now=now))
        stale, undecided = [r.file.where for r in plan.removals], plan.undecided
        del plan
    # The entry files' records are the scan's (FileInfo shared, not a second copy each).
    records = {f.where: f for k in catalog.scan.keys for f in (*(e.file for e in k.entries), *k.temp_files)}
    inv = take_inventory(root, detect_layout(root),
                         index_dir=None if index_path is None else index_path.parent, records=records)
    del records
    index = None
    if index_path is not None:
        try:
            index = (str(index_path), os.stat(index_path).st_size)
        except OSError:
            index = (str(index_path), 0)
    return disk_usage(inv, reclaim, stale, undecided or (), index)
