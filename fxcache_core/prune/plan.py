"""Pruning the cache, first half: a plan (:class:`GcPlan`) of what to delete and why.

:func:`plan_gc` decides, from a catalog and a :class:`~fxcache_core.prune.policy.GcPolicy`,
which files to delete and why, by running each rule of
:mod:`fxcache_core.prune.rules`; :func:`plan_rm` plans the removal of entries
named by the user. A plan touches nothing, so a dry run is just printing it.
It records, for each file, the dirs on its path from the cache dir down
(device and inode of each: :mod:`fxcache_core.prune.deletion`), which
:func:`fxcache_core.prune.execute.execute_plan` checks again as it deletes.

"Last use" of an entry is ``max(atime, mtime)``
(:func:`fxcache_core.prune.removal.last_use`); a hit seen in a TORCH_TRACE
(``fxcache explain``, :mod:`fxcache_core.state.usage`) is a use too:
``GcPolicy.trace_use``. Mirrors huggingface_hub's ``DeleteCacheStrategy``
(``expected_freed_size`` is :attr:`GcPlan.bytes_freed`); torch itself never
prunes. Never deletes, never writes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from fxcache_core.cache.inventory import ContentKind, Inventory
from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import (
    CacheKey,
    CacheScan,
    Entry,
    FileInfo,
    read_entry_bytes,
    scan_artifacts,
)
from fxcache_core.catalog.reader import Catalog, Unreadable
from fxcache_core.decode.entries import DecodedEntry
from fxcache_core.decode.unpickler import MAX_ENTRY_BYTES, may_name
from fxcache_core.errors import KeyLookupError
from fxcache_core.prune import units as prune_units
from fxcache_core.prune.deletion import Located, locate
from fxcache_core.prune.generated import code_removals, owned_wrappers
from fxcache_core.prune.policy import TEMP_FILE_GRACE_S, GcPolicy
from fxcache_core.prune.removal import Removal
from fxcache_core.prune.rules import RULES, Selection, loaders_of, loads_removed
from fxcache_core.prune.units import Unit
from fxcache_core.quantities import format_duration
from fxcache_core.reasons import Reason, code_of
from fxcache_core.state.rows import plan_facts
from fxcache_core.state.trust import identity_is_proof


@dataclass(frozen=True)
class GcPlan:
    """What gc will do; executing it is :func:`fxcache_core.prune.execute.execute_plan`.

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
            (what ``fxcache df`` totals, what ``max_size_bytes`` is measured against).
        dirs: dirs (names below the cache dir) removed once the removals left
            them empty (Triton kernel dirs, Triton temp dirs), deepest first.
        undecided: (what, why) for what a rule could not judge (kept).
        facts: the files the plan read (every entry file of the scan: its bytes, or
            the index row its identity proves, and its times), as the scan saw them;
            execution checks each one's identity again first
            (:func:`fxcache_core.prune.execute.changed_facts`).
        followed: the ``where`` of the facts reached through a symlink (their
            identity is their target's, as torch reads them).
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
    facts: tuple[FileInfo, ...] = ()
    followed: frozenset[str] = frozenset()

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
        measured), ``kept`` (``path``, ``why``, ``why_code``), ``undecided``
        (``what``, ``why``, ``why_code``) and ``removals``
        (:meth:`~fxcache_core.prune.removal.Removal.to_json` each; None with
        ``removals=False``, for a caller that streams them)."""
        return {"cache_dir": str(self.root), "total_bytes": self.total_bytes,
                "total_entries": self.total_entries, "code_bytes": self.code_bytes,
                "all_bytes": self.all_bytes,
                "bytes_freed": self.bytes_freed, "last_use": self.last_use,
                "kept": [{"path": str(p), "why": w, "why_code": code_of(w)} for p, w in self.kept],
                "undecided": [{"what": w, "why": y, "why_code": code_of(y)} for w, y in self.undecided],
                "removals": [r.to_json() for r in self.removals] if removals else None}

    def run_json(self, *, dry_run: bool, result: Any = None,
                 redis_key: Callable[[Path], str] | None = None, as_text: bool = False,
                 ) -> tuple[dict[str, object], dict[str, Iterable[object]]]:
        """What a run of gc or rm reports, for a caller that streams the long lists:
        ``(head, lists)``, each ``lists[name]`` to be written in the place of ``head[name]``.

        The head is :meth:`to_json` (removals left out) with ``dry_run``, ``remote``,
        ``kept`` (``path``, ``why``, ``why_code``), ``executed``, ``replanned`` (how many
        times execution found a file the plan read changed and planned again: this plan is
        then the last one made) and, once executed, ``bytes_freed`` as ``result`` freed;
        the lists are ``removals`` (:meth:`Removal.to_json
        <fxcache_core.prune.removal.Removal.to_json>` each, with ``redis_key``; ``as_text``:
        as its JSON text, :meth:`~fxcache_core.prune.removal.Removal.json_text`) and, with
        ``result`` (a :class:`~fxcache_core.prune.execute.GcResult`, or a remote
        executor's), the paths ``removed``, ``skipped`` (``path``, ``why``), ``failed``
        (``path``, ``error``) and ``dirs_removed``: empty until the plan is executed.

        ``redis_key``: for a plan of a remote cache's snapshot, a planned path -> the
        Redis key it was read from; every path is then written as its key, and
        ``remote`` is true."""
        key = redis_key or str
        head = self.to_json(removals=False)
        head.update({"dry_run": dry_run, "remote": redis_key is not None,
                     "kept": [{"path": key(p), "why": w, "why_code": code_of(w)} for p, w in self.kept],
                     "executed": result is not None, "removed": [], "skipped": [], "failed": [],
                     "dirs_removed": [], "replanned": getattr(result, "replanned", 0)})
        lists: dict[str, Iterable[object]] = {"removals": (
            r.json_text(key(r.file.path) if redis_key is not None else None) for r in self.removals
        ) if as_text else (
            {**r.to_json(), "redis_key": key(r.file.path) if redis_key is not None else None}
            for r in self.removals)}
        if result is not None:
            head["bytes_freed"] = result.bytes_freed
            lists.update({
                "removed": (key(r.file.path) for r in result.removed),
                "skipped": ({"path": key(p), "why": w} for p, w in result.skipped),
                "failed": ({"path": key(p), "error": w} for p, w in result.failed),
                "dirs_removed": (str(d) for d in result.dirs_removed),
            })
        return head, lists


def plan_gc(catalog: Catalog, policy: GcPolicy, *, trace_facts: bool = False) -> GcPlan:
    """Decide what to delete under ``policy``; nothing is touched.

    ``trace_facts``: also take what traces said about the cache dir's entries
    (hits as uses, compile costs), as ``fxcache explain`` recorded them in
    fxcache's usage store for this cache dir (:mod:`fxcache_core.state.usage`,
    beside the index: none when the index is off); where it holds any, they
    are the plan's ``policy.trace_use``.

    With an index behind the catalog, the plan is made from it. A row proves the
    bytes of its file when its identity (device, inode, size, mtime_ns, ctime_ns) is
    the scanned one, its reading was not racily clean, and the file system is a local
    one (:func:`unproven`); what the removals rest on that came from any other row
    is read again from the files (:func:`_reread_what_removals_rest_on`), and if any
    of it differs, the plan is made again, until it rests on proven rows and bytes
    only. An entry removed as corrupt is decoded from its bytes whatever the row.
    Execution checks the identity of every file the plan read again
    (:attr:`GcPlan.facts`).

    Consistency: an AOTAutograd entry needs the FX entries it loads (torch
    raises ``FXGraphCacheMiss`` and recompiles without them), so when the
    plan removes an FX entry it removes the AOTAutograd entries that load it
    too, and ``max_size_bytes`` counts those against the budget. Removing an
    AOTAutograd entry leaves its FX entries: torch can still hit them on
    their own.

    Never selected: entries reached through a symlink, and, for
    ``unreadable``, entries fxcache merely could not read (permissions,
    size limit): only content that is not a valid entry counts. ``dangling``
    needs proof that the FX entry is gone: successful listings from the cache
    dir down, and every entry of its key read (:meth:`Catalog.fx_entry_state`);
    an AOTAutograd entry it would select without that proof is kept, and
    listed in :attr:`GcPlan.kept` with why.

    Finally every removal is located (:func:`fxcache_core.prune.deletion.locate`):
    the plan records the dirs on its path, which execution checks again.
    """
    if trace_facts:
        policy = _with_trace_facts(policy, catalog.scan.root)
    plan = _plan_gc(catalog, policy)
    while _reread_what_removals_rest_on(catalog, plan):
        plan = _plan_gc(catalog, policy)
    return _located(plan, catalog.scan)


def _with_trace_facts(policy: GcPolicy, root: Path) -> GcPolicy:
    """``policy`` with the usage store's facts of cache dir ``root`` as its
    ``trace_use``, where the store holds any."""
    from fxcache_core.state.usage import UsageStore, usage_path

    store = UsageStore(usage_path(root))
    facts = store.load()
    store.close()
    if not facts:
        return policy
    return replace(policy, trace_use=tuple((n, f.last_use or 0.0, f.compile_s) for n, f in facts.items()))


def _located(plan: GcPlan, scan: CacheScan) -> GcPlan:
    """``plan`` with each removal's :attr:`Removal.at` recorded, and the files its
    facts came from (:attr:`GcPlan.facts`: every entry of ``scan``)."""
    where = locate(plan.root, [r.file.where for r in plan.removals])
    entries = list(scan.entries())
    return replace(plan, facts=tuple(e.file for e in entries),
                   followed=frozenset(e.file.where for e in entries if e.via_symlink), removals=tuple(
        r.located(w if isinstance(w, Located) else None) for r, w in zip(plan.removals, where, strict=True)))


def _reread_what_removals_rest_on(catalog: Catalog, plan: GcPlan) -> bool:
    """Read again from their files what ``plan``'s removals rest on, where it came
    from index rows in this run that do not prove the file's bytes (:func:`unproven`;
    a cold run re-reads nothing); True if any of it differs from what the rows said.

    What they rest on: an AOTAutograd entry's removal, on the entry itself and
    every entry of the FX keys it loads (its FX entry is gone, or removed); an
    FX entry's removal, on which AOTAutograd entries load it, which only their
    files can say (a row naming no FX key would leave its loader dangling), so
    every AOTAutograd entry the plan removes and every one whose file may name
    an FX key with a removed entry (:func:`_may_load`: a file that cannot spell
    the key cannot load it, proven from its bytes without decoding), and every
    entry of the FX keys with a removed entry (an AOTAutograd entry loads the
    first whose guards string is its own).
    """
    scan = catalog.scan
    gone_aot = {r.file.where for r in plan.removals if r.kind is KeyKind.AOT_AUTOGRAD and r.entry}
    fx_keys = {r.key for r in plan.removals if r.kind is KeyKind.FX_GRAPH and r.entry}
    aot = [e for e in scan.entries() if e.kind is KeyKind.AOT_AUTOGRAD and not e.via_symlink
           and (fx_keys or e.file.where in gone_aot)]
    stale_aot = [e for e in unproven(catalog, [e for e in aot if catalog.from_index(e)])
                 if e.file.where in gone_aot or _may_load(e, fx_keys)]
    # Hashes of what the index said of what a plan reads (_rests_on), not the records: memory.
    before = {e.file.where: _rests_on(catalog.load(e)) for e in stale_aot}
    catalog.read_ahead(stale_aot, from_bytes=True)
    fx_keys |= {r.key for e in aot if e.file.where in gone_aot
                and isinstance(d := catalog.load(e), DecodedEntry)
                for r in (d.forward, d.backward) if r is not None}
    fx = [e for k in sorted(fx_keys) if (key := scan.key(k)) is not None for e in key.entries]
    stale_fx = unproven(catalog, [e for e in fx if catalog.from_index(e)])
    before.update({e.file.where: _rests_on(catalog.load(e)) for e in stale_fx})
    catalog.read_ahead(stale_fx, from_bytes=True)
    return any(_rests_on(catalog.load(e)) != before[e.file.where] for e in stale_aot + stale_fx)


def _rests_on(d: DecodedEntry | Unreadable) -> int:
    """A hash of what a plan reads of an entry: the fields of
    :func:`~fxcache_core.state.rows.plan_facts` (alike whether the row was read whole or
    as :class:`~fxcache_core.state.rows.PlanFacts`), or why it is unreadable."""
    return hash(plan_facts(d) if isinstance(d, DecodedEntry) else (d.reason, d.cause))


def unproven(catalog: Catalog, entries: list[Entry]) -> list[Entry]:
    """The entries of ``entries`` (each loaded from an index row in this run) whose row
    does not prove the file's bytes, to be read again: all but those whose row
    :meth:`Index.proven <fxcache_core.state.index.Index.proven>` holds (the scanned
    identity, the reading out of the racily clean window; the index is fxcache's own,
    or it is off) on a file system whose identity is proof
    (:func:`~fxcache_core.state.trust.identity_is_proof`: local, not a network or FUSE
    file system; when unsure, not proof)."""
    index = catalog.index
    if index is None or not entries:
        return entries
    local = identity_is_proof({e.file.dev for e in entries})
    proven = index.proven(e for e in entries if local[e.file.dev])
    return [e for e in entries if e.file.where not in proven]


_FEW_KEYS = 8
"""Up to this many FX keys with a removed entry, a kept AOTAutograd entry's file is
first searched for their names (:func:`_may_load`) before it is decoded."""


def _may_load(e: Entry, fx_keys: set[str]) -> bool:
    """Whether the AOTAutograd entry ``e``, which the plan keeps, may load an FX key of
    ``fx_keys`` (those with a removed entry), as its file says now.

    False only when its bytes cannot spell any of those keys
    (:func:`~fxcache_core.decode.unpickler.may_name`, a proof without decoding):
    then it loads none of them, whatever an index row says, and its removal or
    not cannot change with the removed entries. True when that proof fails,
    when the file cannot be read whole, or for more than :data:`_FEW_KEYS` keys
    (searching for each would cost more than decoding): it is decoded.
    """
    if not fx_keys or len(fx_keys) > _FEW_KEYS or e.size > MAX_ENTRY_BYTES:
        return bool(fx_keys)
    try:
        data = read_entry_bytes(e.path)
    except OSError:
        return True
    return may_name(data, {k.encode() for k in fx_keys})


def _plan_gc(catalog: Catalog, policy: GcPolicy) -> GcPlan:
    """One plan: every rule of :data:`~fxcache_core.prune.rules.RULES` in order,
    then the selection as removals in deletion order."""
    s = Selection(catalog, policy)
    for rule in RULES:
        rule(s)
    scan = catalog.scan
    removals = _removals(s.entries, s.chosen, s.loaders(), s.by_path)
    fx_goes = any(r.kind is KeyKind.FX_GRAPH for r in removals)
    removals += code_removals(removals, s.owned() if fx_goes else {}, s.code, policy, s.now)
    unit_removals, dirs = _unit_removals(s.inv, s.units, s.units_chosen(), {r.file.where for r in removals})
    removals += unit_removals
    if policy.unreadable:  # temp files of entry key dirs (the others are units)
        for k in scan.keys:
            if k.via_symlink:
                continue
            for t in k.temp_files:
                age = s.now - t.mtime
                if age > TEMP_FILE_GRACE_S:
                    removals.append(Removal(t, k.kind, k.key, None, (Reason(
                        f"stale temp file, untouched for {format_duration(age)}", "stale-temp-file"),)))
    return GcPlan(root=scan.root, policy=policy, removals=tuple(removals),
                  total_bytes=scan.size, total_entries=scan.entry_count,
                  code_bytes=sum(a.file.size for a in s.code),
                  last_use="max(atime, mtime, last hit in a trace)" if s.traced else "max(atime, mtime)",
                  kept=tuple((p, why) for p, why in s.kept if str(p) not in s.chosen),
                  all_bytes=s.inv.totals.bytes, dirs=dirs, undecided=tuple(s.undecided))


def _unit_removals(inv: Inventory, units: list[Unit], chosen: dict[str, tuple[Unit, list[Reason]]],
                   planned: set[str]) -> tuple[list[Removal], tuple[tuple[str, ...], ...]]:
    """The files of the chosen units (of ``units``, the inventory's) as removals (those
    not already planned), and the dirs to remove once empty. A Triton dir that a group
    file of a kept Triton dir names a file in is left out
    (:func:`fxcache_core.prune.units.group_named`)."""
    kept = [u for u in units if u.kind is ContentKind.TRITON and u.name not in chosen]
    named = prune_units.group_named(inv, kept)
    out: list[Removal] = []
    dirs: list[tuple[str, ...]] = []
    for u, why in chosen.values():
        if u.kind is ContentKind.TRITON and u.dirs and u.dirs[0] in named:
            continue
        for i in u.items:
            if i.file.where not in planned:
                out.append(Removal(i.file, KeyKind.CODE, u.name, None, tuple(why), content=i.kind,
                                   lock=u.lock))
        dirs.extend(u.dirs)
    return out, tuple(sorted(set(dirs), key=len, reverse=True))


def _removals(entries: list[Entry], chosen: dict[str, list[Reason]],
              loaders: dict[str, list[Entry]], by_path: dict[str, Entry] | None = None) -> list[Removal]:
    """The chosen entries as removals, with the AOTAutograd entries that load a
    removed FX entry added, AOTAutograd entries first (deletion order: an
    interrupted run never leaves an AOTAutograd entry pointing at nothing).
    ``by_path``: ``entries`` by ``FileInfo.where``, where the caller holds it."""
    by_path = by_path if by_path is not None else {e.file.where: e for e in entries}
    for p in [p for p in chosen if by_path[p].kind is KeyKind.FX_GRAPH]:
        fx = by_path[p]
        for a in loaders.get(p, ()):
            if a.file.where not in chosen:
                chosen[a.file.where] = [loads_removed(fx)]
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
    return _located(plan, catalog.scan)


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
                    + (": " + ", ".join(e.name[:12] for e in hits[:5]) if hits else ""),
                    param="entry_prefixes", value=prefix)
            picked.append(hits[0])
        mine = picked
    chosen = {e.file.where: [Reason("removed by name (fxcache rm)", "removed-by-name")] for e in mine}
    catalog.read_ahead(catalog.scan.entries())
    removals = _removals(entries, chosen, loaders_of(catalog, entries))
    code = scan_artifacts(catalog.scan.root)
    removals += code_removals(removals, owned_wrappers(catalog, code), code, GcPolicy(), time.time())
    return GcPlan(root=catalog.scan.root, policy=GcPolicy(), removals=tuple(removals),
                  total_bytes=catalog.scan.size, total_entries=catalog.scan.entry_count,
                  code_bytes=sum(a.file.size for a in code))
