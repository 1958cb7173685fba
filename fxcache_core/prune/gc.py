"""Pruning the cache: a plan first, then its execution.

:func:`plan_gc` decides, from a scan and a policy, which files to delete and
why; it touches nothing, so a dry run is just printing the plan. The plan
records, for each file, the dirs on its path from the cache dir down (device
and inode of each: :mod:`fxcache_core.prune.deletion`).
:func:`execute_plan` then deletes exactly the planned files, one by one,
reaching each through directory file descriptors opened level by level
without following a symlink, each dir checked against the plan, and the file
checked in its dir right before it is unlinked there (a regular file, the same
inode, size and mtime, unused since the plan). Key dirs that end up empty are
removed with ``rmdir`` (never ``rmtree``: a compile may be writing a new entry
into the dir at that moment).

Generated code in the cache root (kernels and FX wrapper modules, see
:class:`~fxcache_core.cache.scan.Artifact`) is derived: torch writes it again when
missing. It never counts towards an entry's size, except an FX entry's wrapper
module when that entry is its only user: then it goes with the entry. With
``--artifacts --older-than`` it is pruned by age on its own, each file under
torch's compile lock for its key, and its two-letter dirs are never removed.

"Last use" of an entry is ``max(atime, mtime)``: where the file system records
reads (relatime), a lookup that read the entry moved its atime; where it does
not (noatime), atime is not newer than mtime and mtime counts. A hit seen in a
TORCH_TRACE (``fxcache explain``, :mod:`fxcache_core.trace.usage`) is a use too:
``GcPolicy.trace_use``.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from fxcache_core.cache.inventory import Inventory, Kind, detect_layout, take_inventory
from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import Artifact, CacheKey, Entry, FileInfo, scan_artifacts
from fxcache_core.catalog.catalog import Catalog, Unreadable
from fxcache_core.decode.entries import DecodedEntry
from fxcache_core.errors import KeyLookupError
from fxcache_core.keying.anatomy import parse_debug_lines, stale_components
from fxcache_core.prune import units as prune
from fxcache_core.prune.deletion import DirId, DirWalk, Located, Refused, locate
from fxcache_core.prune.units import Unit
from fxcache_core.quantities import format_duration

TEMP_FILE_GRACE_S = 3600.0
"""Temp files and generated code younger than this (seconds) may belong to a
compile in flight (written, about to be loaded); never touched."""


@dataclass(frozen=True)
class GcPolicy:
    """What to prune. An entry goes if any selected rule selects it.

    Attributes:
        older_than_s: entries last used more than this many seconds ago.
        max_size_bytes: then, least recently used first, until the entries
            left total at most this many bytes.
        keep_last: per key, keep at most the N most recently used entries.
        unreadable: entries that cannot be decoded or whose file name is not
            the sha256 of their content (torch names every entry so), and temp
            files older than :data:`TEMP_FILE_GRACE_S`.
        dangling: AOTAutograd entries whose forward or backward FX entry is
            gone (torch can never serve them).
        artifacts: generated-code files last used more than ``older_than_s``
            ago (which it needs), never younger than :data:`TEMP_FILE_GRACE_S`.
        stale_against: the installed torch's build component hashes
            (``((name, hash), ...)`` from :func:`fxcache_core.keying.current.current_build`):
            FX entries built by another torch or system, which no lookup can
            reach again (with the AOTAutograd entries that load them).
        stale_include_dir: the installed torch's include dir (with
            ``stale_against``): precompiled headers and compiled libraries
            built against other headers (:mod:`fxcache_core.cache.provenance`).
        orphaned_locks: lock files whose compile key, precompiled header, PGO
            state or Triton dir is gone, untouched for :data:`TEMP_FILE_GRACE_S`.
        now: the clock (epoch seconds) ages are measured against.
        trace_use: ``((entry name, last hit in a trace (epoch seconds, 0: none),
            compile seconds a trace recorded or None), ...)`` from
            :class:`fxcache_core.trace.usage.UsageStore`: a hit is a use, whatever atime says.
        keep_costly_s: with ``max_size_bytes``: entries that took at least this
            many seconds to compile (as a trace recorded, else as the entry
            stores) go only once every cheaper entry is gone.

    The rules for what is not an entry (Triton kernels, precompiled headers,
    PGO state, locks, temp files) are :mod:`fxcache_core.prune.units`'s.

    Raises:
        ValueError: ``artifacts`` without ``older_than_s``.
    """

    older_than_s: float | None = None
    max_size_bytes: int | None = None
    keep_last: int | None = None
    unreadable: bool = False
    dangling: bool = False
    artifacts: bool = False
    stale_against: tuple[tuple[str, str], ...] | None = None
    stale_include_dir: str | None = None
    orphaned_locks: bool = False
    now: float | None = None
    trace_use: tuple[tuple[str, float, float | None], ...] = ()
    keep_costly_s: float | None = None

    def __post_init__(self) -> None:
        if self.artifacts and self.older_than_s is None:
            raise ValueError("--artifacts prunes generated code by age: give --older-than too")

    @classmethod
    def default(cls, now: float | None = None) -> GcPolicy:
        """What gc does with no policy given: only what torch can never use
        (``unreadable``, ``dangling`` and ``orphaned_locks``)."""
        return cls(unreadable=True, dangling=True, orphaned_locks=True, now=now)

    @property
    def is_empty(self) -> bool:
        return (self.older_than_s is None and self.max_size_bytes is None
                and self.keep_last is None and not self.unreadable and not self.dangling
                and not self.artifacts and self.stale_against is None and not self.orphaned_locks)


@dataclass(frozen=True)
class Removal:
    """One file the plan deletes.

    Attributes:
        file: the file as scanned (path, size in bytes, mtime).
        kind, key: where it lives: an entry or temp file of that cache key, or
            (``KeyKind.CODE``) a generated-code file of that code-cache key.
        entry: the entry name (None for a temp file or generated code).
        reasons: why, one short phrase per rule that selected it.
        at: where the plan found it under the cache dir: its path from the
            cache dir down and the ``(st_dev, st_ino)`` of every dir on the way
            (:func:`fxcache_core.prune.deletion.locate`); execution reaches it
            through those very dirs. None when a dir on the way could not be
            opened without following a symlink (execution skips it).
        content: what the file is (:class:`~fxcache_core.cache.inventory.Kind`), for
            files of a :class:`~fxcache_core.prune.units.Unit` (``kind`` is then
            ``CODE`` and ``key`` the unit's name); None for entries, their temp
            files and gc's own generated-code removals.
        lock: the lock file held while it is deleted, as names below the cache
            dir (None: the code key's ``locks/<key>.lock`` for ``CODE``, else none).
    """

    file: FileInfo
    kind: KeyKind
    key: str
    entry: str | None
    reasons: tuple[str, ...]
    at: Located | None = None
    content: Kind | None = None
    lock: tuple[str, ...] | None = None

    @property
    def size(self) -> int:
        return self.file.size

    @property
    def what(self) -> str:
        """``entry``, ``temp`` (a dot-prefixed temp file), ``code`` (generated code),
        or for a unit's file its content kind (``triton``, ``precompiled-header``...)."""
        if self.content is not None:
            return self.content.value
        if self.kind is KeyKind.CODE:
            return "code"
        return "entry" if self.entry is not None else "temp"

    def to_json(self) -> dict[str, object]:
        """``path``, ``what``, ``kind``, ``key``, ``entry``, ``size`` (bytes), ``reasons``."""
        return {"path": self.file.where, "what": self.what, "kind": self.kind.value, "key": self.key,
                "entry": self.entry, "size": self.size, "reasons": list(self.reasons)}


@dataclass(frozen=True)
class GcPlan:
    """What gc will do; executing it is :func:`execute_plan`.

    Attributes:
        root: the cache dir.
        policy: the policy it was made from.
        removals: files to delete, in deletion order.
        total_bytes: bytes of all entries before.
        total_entries: entries before.
        code_bytes: bytes of all generated code in the cache root before.
        last_use: how ages were measured (``max(atime, mtime)``).
        kept: (path, why) for entries a rule would have selected had fxcache
            been able to look everywhere it needed to (an AOTAutograd entry whose
            FX entry may be in a dir that could not be listed): not proven, kept.
        all_bytes: bytes of every regular file under the cache dir before
            (what ``fxcache df`` totals, what ``--max-size`` is measured against).
        dirs: dirs (names below the cache dir) removed once the removals left
            them empty (Triton kernel dirs, Triton temp dirs), deepest first.
        undecided: (what, why) for what a rule could not judge (kept).
    """

    root: Path
    policy: GcPolicy
    removals: tuple[Removal, ...]
    total_bytes: int
    total_entries: int
    code_bytes: int = 0
    last_use: str = "max(atime, mtime)"
    kept: tuple[tuple[Path, str], ...] = ()
    all_bytes: int = 0
    dirs: tuple[tuple[str, ...], ...] = ()
    undecided: tuple[tuple[str, str], ...] = ()

    @property
    def bytes_freed(self) -> int:
        """Bytes the plan frees."""
        return sum(r.size for r in self.removals)

    @property
    def entries_removed(self) -> int:
        return sum(1 for r in self.removals if r.entry is not None)

    def to_json(self, removals: bool = True) -> dict[str, object]:
        """``cache_dir``, ``total_bytes``, ``total_entries``, ``code_bytes``,
        ``all_bytes``, ``bytes_freed`` (bytes), ``last_use`` (how ages were
        measured), ``kept`` (``path``, ``why``), ``undecided`` (``what``, ``why``)
        and ``removals`` (:meth:`Removal.to_json` each; None with
        ``removals=False``, for a caller that streams them)."""
        return {"cache_dir": str(self.root), "total_bytes": self.total_bytes,
                "total_entries": self.total_entries, "code_bytes": self.code_bytes,
                "all_bytes": self.all_bytes,
                "bytes_freed": self.bytes_freed, "last_use": self.last_use,
                "kept": [{"path": str(p), "why": w} for p, w in self.kept],
                "undecided": [{"what": w, "why": y} for w, y in self.undecided],
                "removals": [r.to_json() for r in self.removals] if removals else None}


def last_use(f: FileInfo) -> float:
    """When an entry was last used, epoch seconds (see the module docstring)."""
    return max(f.atime, f.mtime)


def plan_gc(catalog: Catalog, policy: GcPolicy) -> GcPlan:
    """Decide what to delete under ``policy``; nothing is touched.

    With an index behind the catalog, the plan is made from it, then what the
    removals rest on (:func:`_reread_what_removals_rest_on`), where it came
    from an index row, is read again from the files; if any of it differs, the
    plan is made again, until it rests on bytes only.

    Consistency: an AOTAutograd entry needs the FX entries it loads (torch
    raises ``FXGraphCacheMiss`` and recompiles without them), so when the
    plan removes an FX entry it removes the AOTAutograd entries that load it
    too, and ``--max-size`` counts those against the budget. Removing an
    AOTAutograd entry leaves its FX entries: torch can still hit them on
    their own.

    Never selected: entries reached through a symlink, and, for
    ``--unreadable``, entries fxcache merely could not read (permissions,
    size limit): only content that is not a valid entry counts. ``--dangling``
    needs proof that the FX entry is gone: successful listings from the cache
    dir down, and every entry of its key read (:meth:`Catalog.fx_entry_state`);
    an AOTAutograd entry it would select without that proof is kept, and
    listed in :attr:`GcPlan.kept` with why.

    Finally every removal is located (:func:`fxcache_core.prune.deletion.locate`):
    the plan records the dirs on its path, which execution checks again.
    """
    plan = _plan_gc(catalog, policy)
    while _reread_what_removals_rest_on(catalog, plan):
        plan = _plan_gc(catalog, policy)
    return _located(plan)


def _located(plan: GcPlan) -> GcPlan:
    """``plan`` with each removal's :attr:`Removal.at` recorded."""
    where = locate(plan.root, [r.file.where for r in plan.removals])
    return replace(plan, removals=tuple(
        replace(r, at=w if isinstance(w, Located) else None)
        for r, w in zip(plan.removals, where, strict=True)))


def _reread_what_removals_rest_on(catalog: Catalog, plan: GcPlan) -> bool:
    """Read again from their files what ``plan``'s removals rest on, where it came
    from index rows in this run (a cold run re-reads nothing); True if any of it
    differs from what the rows said.

    What they rest on: an AOTAutograd entry's removal, on the entry itself and
    every entry of the FX keys it loads (its FX entry is gone, or removed); an
    FX entry's removal, on which AOTAutograd entries load it, which only their
    files can say (a row naming no FX key would leave its loader dangling), so
    every AOTAutograd entry, and every entry of the FX keys with a removed
    entry (an AOTAutograd entry loads the first whose guards string is its own).
    """
    scan = catalog.scan
    gone_aot = {r.file.where for r in plan.removals if r.kind is KeyKind.AOT_AUTOGRAD and r.entry}
    fx_keys = {r.key for r in plan.removals if r.kind is KeyKind.FX_GRAPH and r.entry}
    aot = [e for e in scan.entries() if e.kind is KeyKind.AOT_AUTOGRAD and not e.via_symlink
           and (fx_keys or e.file.where in gone_aot)]
    stale_aot = [e for e in aot if catalog.from_index(e)]
    # Hashes of what the index said (frozen records), not the records: memory.
    before = {e.file.where: hash(catalog.load(e)) for e in stale_aot}
    catalog.read_ahead(stale_aot, from_bytes=True)
    fx_keys |= {r.key for e in aot if e.file.where in gone_aot
                and isinstance(d := catalog.load(e), DecodedEntry)
                for r in (d.forward, d.backward) if r is not None}
    fx = [e for k in sorted(fx_keys) if (key := scan.key(k)) is not None for e in key.entries]
    stale_fx = [e for e in fx if catalog.from_index(e)]
    before.update({e.file.where: hash(catalog.load(e)) for e in stale_fx})
    catalog.read_ahead(stale_fx, from_bytes=True)
    return any(hash(catalog.load(e)) != before[e.file.where] for e in stale_aot + stale_fx)


def _plan_gc(catalog: Catalog, policy: GcPolicy) -> GcPlan:
    scan = catalog.scan
    now = time.time() if policy.now is None else policy.now
    # Keyed by the entry file's path string (FileInfo.where): no Path per entry.
    chosen: dict[str, list[str]] = {}
    entries = [e for e in scan.entries() if not e.via_symlink]
    by_path = {e.file.where: e for e in entries}
    catalog.read_ahead(scan.entries())  # the joins below decode (nearly) all of them
    code = scan_artifacts(scan.root)
    inv = take_inventory(scan.root, detect_layout(scan.root))
    all_units = prune.units(inv)
    unit_chosen, undecided = prune.select(
        all_units, now=now, grace_s=TEMP_FILE_GRACE_S, older_than_s=policy.older_than_s,
        artifacts=policy.artifacts, temp=policy.unreadable, locks=policy.orphaned_locks,
        stale_include_dir=policy.stale_include_dir if policy.stale_against is not None else None)
    owned_cache: list[dict[str, Artifact]] = []

    def owned() -> dict[str, Artifact]:
        # Decodes every FX entry: only done when an FX entry may go.
        if not owned_cache:
            owned_cache.append(_owned_wrappers(catalog, code))
        return owned_cache[0]

    def cost(e: Entry) -> int:
        # What removing e frees: its wrapper module too, unless used within the
        # hour (then _code_removals keeps it, and so must the budget's count).
        a = owned().get(e.file.where)
        return e.size + (a.file.size if a is not None and now - last_use(a.file) > TEMP_FILE_GRACE_S
                         else 0)

    traced = {name: (t, c) for name, t, c in policy.trace_use}

    def used(e: Entry) -> float:
        return max(last_use(e.file), traced.get(e.name, (0.0, None))[0])

    def costly(e: Entry) -> bool:
        if policy.keep_costly_s is None:
            return False
        seconds = traced.get(e.name, (0.0, None))[1]
        if seconds is None and isinstance(d := catalog.load(e), DecodedEntry) and d.compile_time_ns:
            seconds = d.compile_time_ns / 1e9
        return seconds is not None and seconds >= policy.keep_costly_s

    def pick(e: Entry, why: str) -> None:
        chosen.setdefault(e.file.where, []).append(why)

    if policy.older_than_s is not None:
        for e in entries:
            age = now - used(e)
            if age > policy.older_than_s:
                pick(e, f"unused for {format_duration(age)}")
    if policy.keep_last is not None:
        for k in scan.keys:
            ranked = sorted((e for e in k.entries if e.file.where in by_path),
                            key=used, reverse=True)
            for e in ranked[policy.keep_last:]:
                pick(e, f"not among the {policy.keep_last} most recent of its key")
    if policy.unreadable:
        for e in entries:
            d = catalog.load(e)
            if isinstance(d, Unreadable) and d.cause == "corrupt" and catalog.from_index(e):
                d = catalog.decode_now(e)  # the index said so: deletion rests on the bytes as they are
            if isinstance(d, Unreadable) and d.cause == "corrupt":
                pick(e, f"unreadable: {d.reason}")
            elif catalog.name_matches_content(e) is False and catalog.name_matches_content(e, reread=True) is False:
                pick(e, "its name is not the sha256 of its content (altered after torch wrote it)")
    if policy.stale_against is not None:
        current = dict(policy.stale_against)
        for e in entries:
            if e.kind is not KeyKind.FX_GRAPH:
                continue
            d = catalog.decode_now(e)  # the debug lines, not kept: one FX entry's at a time
            if isinstance(d, DecodedEntry):
                differ = stale_components(parse_debug_lines(d.debug_lines), current)
                if differ:
                    pick(e, f"stale: built by another torch or system ({', '.join(differ)} differ)")
    kept: list[tuple[Path, str]] = []
    if policy.dangling:
        for e in entries:
            if e.kind is KeyKind.AOT_AUTOGRAD:
                gone, unsure = _missing_fx(catalog, e)
                if gone:
                    pick(e, "dangling: " + gone)
                elif unsure:
                    kept.append((e.path, unsure))

    loaders = _loaders(catalog, entries)
    if policy.max_size_bytes is not None:
        # Everything df counts is measured against the budget (inv.totals.bytes);
        # entries and units go least recently used first, whatever their kind (an
        # entry that compiles in keep_costly_s or more only once every cheaper one went).
        in_entries = set(by_path) | {a.file.where for a in owned().values()}
        units = [u for u in all_units if not any(i.file.where in in_entries for i in u.items)]
        left = inv.totals.bytes - sum(cost(by_path[p]) for p in chosen) \
            - sum(u.size for u, _ in unit_chosen.values())
        budget = f"least recently used, over the {policy.max_size_bytes:,} byte budget"
        queue: list[tuple[bool, float, int, Entry | Unit]] = [
            (costly(e), used(e), n, e) for n, e in enumerate(entries)]
        queue += [(False, u.last_use, len(queue) + n, u) for n, u in enumerate(units)
                  if now - u.last_use > TEMP_FILE_GRACE_S]
        for _, _, _, x in sorted(queue, key=lambda t: t[:3]):
            if left <= policy.max_size_bytes:
                break
            if isinstance(x, Unit):
                if x.name not in unit_chosen:
                    unit_chosen[x.name] = (x, [budget])
                    left -= x.size
                continue
            e = x
            if e.file.where in chosen:
                continue
            pick(e, budget + (f" (compiles in {policy.keep_costly_s:g} s or more: kept until every cheaper "
                              "entry went)" if costly(e) else ""))
            left -= cost(e)
            for a in loaders.get(e.file.where, ()):
                if a.file.where not in chosen:
                    pick(a, f"loads FX entry {e.key[:10]}/{e.name[:10]} that is removed")
                    left -= cost(a)

    removals = _removals(entries, chosen, loaders)
    fx_goes = any(r.kind is KeyKind.FX_GRAPH for r in removals)
    removals += _code_removals(removals, owned() if fx_goes else {}, code, policy, now)
    unit_removals, dirs = _unit_removals(inv, unit_chosen, {r.file.where for r in removals}, now)
    removals += unit_removals
    if policy.unreadable:
        for k in scan.keys:
            if k.via_symlink:
                continue
            for t in k.temp_files:
                age = now - t.mtime
                if age > TEMP_FILE_GRACE_S:
                    removals.append(Removal(t, k.kind, k.key, None,
                                            (f"stale temp file, untouched for {format_duration(age)}",)))
    return GcPlan(root=scan.root, policy=policy, removals=tuple(removals),
                  total_bytes=scan.size, total_entries=scan.entry_count,
                  code_bytes=sum(a.file.size for a in code),
                  last_use="max(atime, mtime, last hit in a trace)" if traced else "max(atime, mtime)",
                  kept=tuple((p, why) for p, why in kept if str(p) not in chosen),
                  all_bytes=inv.totals.bytes, dirs=dirs, undecided=tuple(undecided))


def _unit_removals(inv: Inventory, chosen: dict[str, tuple[Unit, list[str]]], planned: set[str],
                   now: float) -> tuple[list[Removal], tuple[tuple[str, ...], ...]]:
    """The files of the chosen units as removals (those not already planned), and
    the dirs to remove once empty. A Triton dir that a group file of a kept
    Triton dir names a file in is left out (:func:`fxcache_core.prune.units.group_named`)."""
    kept = [u for u in prune.units(inv) if u.kind is Kind.TRITON and u.name not in chosen]
    named = prune.group_named(inv, kept)
    out: list[Removal] = []
    dirs: list[tuple[str, ...]] = []
    for u, why in chosen.values():
        if u.kind is Kind.TRITON and u.dirs and u.dirs[0] in named:
            continue
        for i in u.items:
            if i.file.where not in planned:
                out.append(Removal(i.file, KeyKind.CODE, u.name, None, tuple(why), content=i.kind,
                                   lock=u.lock))
        dirs.extend(u.dirs)
    return out, tuple(sorted(set(dirs), key=len, reverse=True))


def _owned_wrappers(catalog: Catalog, code: Sequence[Artifact]) -> dict[str, Artifact]:
    """FX entry path (``FileInfo.where``) -> its wrapper module, for wrappers exactly one FX entry uses.

    Every FX entry of the scan counts as a user (symlinked ones too); an
    unreadable one might be a user, so a wrapper key is only matched against
    what decoded, and a wrapper with no decoded user is left to ``--artifacts``.
    """
    py = {a.key: a for a in code if a.file.name == f"{a.key}.py"}
    users: dict[str, list[Entry]] = {}
    for e in catalog.scan.entries():
        if e.kind is KeyKind.FX_GRAPH:
            d = catalog.load(e)
            if isinstance(d, DecodedEntry) and d.wrapper_key in py:
                users.setdefault(d.wrapper_key, []).append(e)
    return {u[0].file.where: py[k] for k, u in users.items() if len(u) == 1}


LOAD_OK = ".load_ok"
"""Suffix of the empty marker torch 2.14+ writes beside a library that passed its
load check (``VecISA.check_build`` in torch/_inductor/cpu_vec_isa.py:
``<key[1:3]>/<key>.so.load_ok``)."""


def _code_removals(removals: list[Removal], owned: dict[str, Artifact], code: Sequence[Artifact],
                   policy: GcPolicy, now: float) -> list[Removal]:
    """Generated code the plan removes: the wrapper modules only removed FX
    entries used, and, with ``--artifacts``, files unused for ``older_than_s``;
    never code used within :data:`TEMP_FILE_GRACE_S` (execution would refuse it).

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
            out[a.file.where] = Removal(a.file, KeyKind.CODE, a.key, None, (
                f"wrapper module of FX entry {r.key[:10]}/{(r.entry or '')[:10]}, its only user, "
                "which is removed",))
    if policy.artifacts and policy.older_than_s is not None:
        paths = {a.file.where for a in code}
        markers = {a.file.where[:-len(LOAD_OK)]: a for a in code if a.file.name.endswith(LOAD_OK)}
        for a in code:
            marker = markers.get(a.file.where)
            if a.file.name.endswith(LOAD_OK):
                orphan = a.file.where[:-len(LOAD_OK)] not in paths
                if orphan and now - last_use(a.file) > TEMP_FILE_GRACE_S:
                    out[a.file.where] = Removal(a.file, KeyKind.CODE, a.key, None, (
                        "load-check marker of a library that is gone: torch would trust the "
                        "rebuilt library without checking that it loads",))
                continue  # else it goes (or stays) with its library, below
            age = now - max(last_use(a.file), last_use(marker.file) if marker else 0.0)
            if age > max(policy.older_than_s, TEMP_FILE_GRACE_S) and a.file.where not in out:
                if marker is not None:
                    out[marker.file.where] = Removal(marker.file, KeyKind.CODE, marker.key, None, (
                        f"load-check marker of {a.file.name}, removed with it",))
                out[a.file.where] = Removal(a.file, KeyKind.CODE, a.key, None,
                                           (f"generated code unused for {format_duration(age)}",))
    return list(out.values())


def _removals(entries: list[Entry], chosen: dict[str, list[str]],
              loaders: dict[str, list[Entry]]) -> list[Removal]:
    """The chosen entries as removals, with the AOTAutograd entries that load a
    removed FX entry added, AOTAutograd entries first (deletion order: an
    interrupted run never leaves an AOTAutograd entry pointing at nothing)."""
    by_path = {e.file.where: e for e in entries}
    for p in [p for p in chosen if by_path[p].kind is KeyKind.FX_GRAPH]:
        fx = by_path[p]
        for a in loaders.get(p, ()):
            if a.file.where not in chosen:
                chosen[a.file.where] = [f"loads FX entry {fx.key[:10]}/{fx.name[:10]} that is removed"]
    ordered = sorted((e for e in entries if e.file.where in chosen),
                     key=lambda e: e.kind is not KeyKind.AOT_AUTOGRAD)
    return [Removal(e.file, e.kind, e.key, e.name, tuple(chosen[e.file.where])) for e in ordered]


def plan_rm(catalog: Catalog, key: CacheKey, entry_prefixes: Sequence[str] = ()) -> GcPlan:
    """Plan the explicit removal of a key's entries (all, or those named by prefix).

    The same rules as :func:`plan_gc`: entries reached through a symlink are
    never removed, the AOTAutograd entries that load a removed FX entry go
    too (read from their files, whatever the index says), and every removal
    is located.

    Raises:
        KeyLookupError: an entry prefix matches no entry of the key, or several.
    """
    plan = _plan_rm(catalog, key, entry_prefixes)
    while _reread_what_removals_rest_on(catalog, plan):
        plan = _plan_rm(catalog, key, entry_prefixes)
    return _located(plan)


def _plan_rm(catalog: Catalog, key: CacheKey, entry_prefixes: Sequence[str]) -> GcPlan:
    entries = [e for e in catalog.scan.entries() if not e.via_symlink]
    mine = [e for e in key.entries if not e.via_symlink]
    if entry_prefixes:
        picked = []
        for prefix in entry_prefixes:
            hits = [e for e in mine if e.name.startswith(prefix)]
            if len(hits) != 1:
                raise KeyLookupError(
                    f"entry prefix {prefix!r} matches {len(hits)} entries of key {key.key[:12]}"
                    + (": " + ", ".join(e.name[:12] for e in hits[:5]) if hits else ""))
            picked.append(hits[0])
        mine = picked
    chosen = {e.file.where: ["removed by name (fxcache rm)"] for e in mine}
    catalog.read_ahead(catalog.scan.entries())
    removals = _removals(entries, chosen, _loaders(catalog, entries))
    code = scan_artifacts(catalog.scan.root)
    removals += _code_removals(removals, _owned_wrappers(catalog, code), code, GcPolicy(), time.time())
    return GcPlan(root=catalog.scan.root, policy=GcPolicy(), removals=tuple(removals),
                  total_bytes=catalog.scan.size, total_entries=catalog.scan.entry_count,
                  code_bytes=sum(a.file.size for a in code))


def _loaders(catalog: Catalog, entries: list[Entry]) -> dict[str, list[Entry]]:
    """FX entry path (``FileInfo.where``) -> the AOTAutograd entries (among
    ``entries``) that load it."""
    out: dict[str, list[Entry]] = {}
    for e in entries:
        if e.kind is not KeyKind.AOT_AUTOGRAD:
            continue
        d = catalog.load(e)
        if not isinstance(d, DecodedEntry):
            continue
        for ref in (d.forward, d.backward):
            fx = catalog.fx_entry_for(ref.key, ref.guards_expr) if ref else None
            if fx is not None:
                out.setdefault(fx.file.where, []).append(e)
    return out


def _missing_fx(catalog: Catalog, e: Entry) -> tuple[str | None, str | None]:
    """(why ``e`` can never be served, when its FX entry is certainly gone; why
    that could not be decided, when fxcache could not look everywhere it may be).
    Both None when its FX entries are there (or ``e`` does not decode)."""
    d = catalog.load(e)
    if not isinstance(d, DecodedEntry):
        return None, None
    unsure = None
    for role, ref in (("forward", d.forward), ("backward", d.backward)):
        if ref is None:
            continue
        fx, certain = catalog.fx_entry_state(ref.key, ref.guards_expr)
        if fx is None and certain:
            return f"its {role} FX entry ({ref.key[:10]}) is gone", None
        if fx is None and unsure is None:
            unsure = (f"kept: its {role} FX entry ({ref.key[:10]}) was not found, but fxcache could "
                      "not list or read everything that may hold it (see the skipped paths)")
    return None, unsure


@dataclass(frozen=True)
class GcResult:
    """What :func:`execute_plan` did.

    Attributes:
        removed: files deleted.
        skipped: (path, why) for planned files left alone because they changed
            since the plan, vanished, or are not safe to touch.
        failed: (path, error) for deletions the OS refused.
        dirs_removed: key and bucket dirs removed because they became empty.
    """

    removed: tuple[Removal, ...]
    skipped: tuple[tuple[Path, str], ...]
    failed: tuple[tuple[Path, str], ...]
    dirs_removed: tuple[Path, ...]

    @property
    def bytes_freed(self) -> int:
        return sum(r.size for r in self.removed)

    def to_json(self) -> dict[str, object]:
        """``removed`` (paths), ``skipped`` (``path``, ``why``), ``failed`` (``path``,
        ``error``), ``dirs_removed`` and ``bytes_freed``."""
        return {"removed": [r.file.where for r in self.removed],
                "skipped": [{"path": str(p), "why": w} for p, w in self.skipped],
                "failed": [{"path": str(p), "error": w} for p, w in self.failed],
                "dirs_removed": [str(d) for d in self.dirs_removed], "bytes_freed": self.bytes_freed}


def _refusal(r: Removal, st: os.stat_result, dir_fd: int) -> str | None:
    """Why a planned file must not be deleted now (None: it may go), from its
    ``fstatat`` in its verified dir ``dir_fd``
    (:meth:`~fxcache_core.prune.deletion.DirWalk.unlink`).

    Checked right before each deletion: a regular file (not a symlink), the very
    file the plan saw (same inode), unchanged (size, mtime) and unused (atime)
    since the plan, for a temp file or generated code, not one a compile may be
    writing or loading, and, for a library, its ``.load_ok`` marker gone from
    that same dir (planned before it, see :func:`_code_removals`; a marker that
    cannot be looked for counts as there).
    """
    f = r.file
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if f.ino and st.st_ino != f.ino:
        return "replaced since the plan (another file has its name now)"
    if st.st_size != f.size or (st.st_mtime_ns != f.mtime_ns if f.mtime_ns else st.st_mtime != f.mtime):
        return "changed since the plan"
    if st.st_atime > f.atime:
        return "used since the plan"
    if r.entry is None and time.time() - max(st.st_mtime, st.st_atime) <= TEMP_FILE_GRACE_S:
        return ("temp file in use" if r.kind is not KeyKind.CODE
                else "generated code used in the last hour (a compile may be loading it)")
    if r.kind is KeyKind.CODE and not f.name.endswith(LOAD_OK):
        try:
            os.stat(f.name + LOAD_OK, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        except OSError:
            pass
        return (f"its {LOAD_OK} marker is still there (torch would trust a rebuilt "
                "library without checking that it loads)")
    return None


def _take_compile_lock(walk: DirWalk, r: Removal) -> tuple[int | None, str | None]:
    """Take torch's compile lock of a generated-code file's key, to hold while it is deleted.

    Torch compiles C++ under ``FileLock(<root>/locks/<key>.lock)`` after checking
    that the source exists (``_worker_compile_cpp`` in torch/_inductor/codecache.py);
    holding the same lock keeps gc out of that window. filelock's Unix lock is
    ``fcntl.flock`` on the whole file, so gc ``flock``s the same file, opened
    through the verified cache dir without following a symlink.

    Returns (the fd holding the lock, to close when done, or None; why not to go
    on, or None). Going on without a lock is right when the key has no lock file
    (no compile ever took it). Entries and temp files need no lock. A unit's
    file takes the unit's lock instead (:attr:`Removal.lock`: a precompiled
    header's, PGO state's, an orphaned lock itself; () for none).
    """
    if r.lock is not None:
        if not r.lock:
            return None, None
        where = r.lock
    elif r.kind is not KeyKind.CODE:
        return None, None
    else:
        where = ("locks", f"{r.key}.lock")
    import fcntl

    try:
        fd = walk.open_in(tuple(where[:-1]), where[-1])
    except FileNotFoundError:
        return None, None
    except Refused as e:
        if e.why.endswith("is gone"):
            return None, None
        return None, "its compile lock is not a plain file in the cache dir"
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR, getattr(errno, "EMLINK", -1)):
            return None, "its compile lock is not a plain file in the cache dir"
        return None, f"cannot check its compile lock: {e.strerror or e}"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            why = "its compile lock is not a plain file in the cache dir"
        else:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd, None
    except BlockingIOError:
        why = "a compile holds its lock"
    except OSError as e:
        why = f"cannot take its compile lock: {e.strerror or e}"
    os.close(fd)
    return None, why


def execute_plan(plan: GcPlan) -> GcResult:
    """Delete what ``plan`` lists, safely (see the module docstring).

    Each file is reached through directory file descriptors from the cache dir
    down, each level checked against what the plan recorded
    (:mod:`fxcache_core.prune.deletion`), and checked again itself (:func:`_refusal`)
    right before it is unlinked in its dir. Key dirs (and FX bucket dirs) that
    end up empty are removed the same way; never the cache's top dirs or the
    generated-code dirs.

    Never raises for a single path: permission and other OS errors are
    collected in ``failed``, changed or unsafe paths in ``skipped``, and the
    rest goes on.
    """
    removed: list[Removal] = []
    skipped: list[tuple[Path, str]] = []
    failed: list[tuple[Path, str]] = []
    touched: dict[tuple[str, ...], tuple[DirId, ...]] = {}
    with DirWalk(plan.root) as walk:
        for r in plan.removals:
            p = r.file.path
            if r.at is None:
                skipped.append((p, "its dir could not be reached without following a symlink "
                                   "when the plan was made"))
                continue
            lock, busy = _take_compile_lock(walk, r)
            try:
                if busy is not None:
                    skipped.append((p, busy))
                    continue
                walk.unlink(r.at, lambda st, fd, r=r: _refusal(r, st, fd))
            except Refused as e:
                (failed if e.kind == "failed" else skipped).append((p, e.why))
                continue
            except FileNotFoundError:
                skipped.append((p, "already gone"))
                continue
            except OSError as e:
                failed.append((p, e.strerror or str(e)))
                continue
            finally:
                if lock is not None:
                    os.close(lock)  # releases the flock
            removed.append(r)
            touched[r.at.parts[:-1]] = r.at.dirs
        dirs_removed = []
        for parts, ids in sorted(touched.items(), key=lambda kv: len(kv[0]), reverse=True):
            # A key dir, then an FX bucket dir; never a top dir (fxgraph, aotautograd)
            # or a generated-code dir (<root>/<2 chars>: torch's write_atomic may be about to use it).
            for depth in range(len(parts), 1, -1):
                if not walk.rmdir(parts[:depth], ids[:depth + 1]):
                    break
                dirs_removed.append(Path(plan.root, *parts[:depth]))
    return GcResult(tuple(removed), tuple(skipped), tuple(failed), tuple(dirs_removed))
