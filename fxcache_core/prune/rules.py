"""gc's rules: one ``_select_<rule>`` function per :class:`~fxcache_core.prune.policy.GcPolicy` field.

:func:`fxcache_core.prune.plan.plan_gc` makes a :class:`Selection` (what the
rules look at: the entries, the generated code, the inventory's
:class:`~fxcache_core.prune.units.Unit` s) and runs :data:`RULES` over it in
order; each rule does nothing unless its policy field asks for it, and adds
what it selects, with a :class:`~fxcache_core.reasons.Reason` (a stable
code beside the words), to the selection. A new rule is one function here,
one line in :data:`RULES` and one test.

The order of :data:`RULES` is the order of each file's reasons. An entry's
rules run before ``max_size``, which measures what is left after them.
Mirrors nothing in torch; the lookup facts it rests on are torch's (an
AOTAutograd entry needs the FX entries it loads: ``FXGraphCacheMiss``). Rules
decide only: nothing here touches a file.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from fxcache_core.cache.inventory import ContentKind, Inventory, detect_layout, take_inventory
from fxcache_core.cache.keys import KeyKind, artifact_key
from fxcache_core.cache.scan import Artifact, Entry
from fxcache_core.catalog.reader import Catalog, Unreadable
from fxcache_core.decode.entries import DecodedEntry
from fxcache_core.prune import units as prune_units
from fxcache_core.prune.generated import owned_wrappers
from fxcache_core.prune.policy import TEMP_FILE_GRACE_S, GcPolicy
from fxcache_core.prune.removal import last_use
from fxcache_core.prune.units import Unit
from fxcache_core.quantities import format_duration
from fxcache_core.reasons import Reason, code_of


class Selection:
    """One plan's working state: what the rules see, and what they selected.

    Attributes:
        catalog, policy: what the plan is made from; ``now``: the policy's clock.
        entries: the scan's entries not reached through a symlink (the only ones
            ever selected); ``by_path``: the same by ``FileInfo.where``.
        code: the generated code in the cache root.
        inv: the inventory of everything under the cache dir; ``units``: its
            :class:`~fxcache_core.prune.units.Unit` s.
        chosen: entry path -> its reasons, in selection order.
        unit_chosen: unit name -> (unit, its reasons), selected by rule.
        unit_budget: unit name -> (unit, its reasons), selected by ``max_size``.
        kept: (path, why) for entries a rule would select without proof.
        undecided: (what, why) for what a rule could not judge.
        traced: entry name -> (last hit in a trace, compile seconds a trace recorded).
    """

    def __init__(self, catalog: Catalog, policy: GcPolicy) -> None:
        scan = catalog.scan
        self.catalog, self.policy = catalog, policy
        self.now = time.time() if policy.now is None else policy.now
        # Keyed by the entry file's path string (FileInfo.where): no Path per entry.
        self.entries = [e for e in scan.entries() if not e.via_symlink]
        self.by_path = {e.file.where: e for e in self.entries}
        if catalog.index is not None:  # the rows' proof, taken as they are served (plan.unproven)
            catalog.index.remember_proof()
        catalog.read_ahead(scan.entries())  # the joins decode (nearly) all of them
        # The entries' records are the scan's: the inventory keeps none of its own, and
        # counts the key dirs the scan read whole from the scan's lstat of their files. The
        # generated code is read off the inventory (one walk, not a second listing).
        self.inv = take_inventory(scan.root, detect_layout(scan.root), entries=False,
                                  tallies={k.where: k.tally for k in scan.keys if k.tally is not None})
        self.code = artifacts_in(self.inv)
        self.units = prune_units.units(self.inv)
        self.chosen: dict[str, list[Reason]] = {}
        self.unit_chosen: dict[str, tuple[Unit, list[Reason]]] = {}
        self.unit_budget: dict[str, tuple[Unit, list[Reason]]] = {}
        self.kept: list[tuple[Path, Reason]] = []
        self.undecided: list[tuple[str, Reason]] = []
        self.traced = {name: (t, c) for name, t, c in policy.trace_use}
        self._owned: dict[str, Artifact] | None = None
        self._loaders: dict[str, list[Entry]] | None = None

    def pick(self, e: Entry, why: Reason) -> None:
        self.chosen.setdefault(e.file.where, []).append(why)

    def pick_unit(self, u: Unit, why: Reason) -> None:
        self.unit_chosen.setdefault(u.name, (u, []))[1].append(why)

    def units_chosen(self) -> dict[str, tuple[Unit, list[Reason]]]:
        """The selected units: by rule in the inventory's order, then by ``max_size``."""
        order = {u.name: n for n, u in enumerate(self.units)}
        out = dict(sorted(self.unit_chosen.items(), key=lambda kv: order[kv[0]]))
        out.update(self.unit_budget)
        return out

    def idle_units(self) -> list[tuple[Unit, float]]:
        """Units unused for more than :data:`TEMP_FILE_GRACE_S`, with their age: no
        rule selects a unit used (or written) within it."""
        return [(u, self.now - u.last_use) for u in self.units if self.now - u.last_use > TEMP_FILE_GRACE_S]

    def owned(self) -> dict[str, Artifact]:
        """FX entry path -> the wrapper module only it uses (decodes every FX
        entry: only asked for when an FX entry may go)."""
        if self._owned is None:
            self._owned = owned_wrappers(self.catalog, self.code)
        return self._owned

    def loaders(self) -> dict[str, list[Entry]]:
        """FX entry path -> the AOTAutograd entries (not via a symlink) that load it."""
        if self._loaders is None:
            self._loaders = loaders_of(self.catalog, self.entries)
        return self._loaders

    def cost(self, e: Entry) -> int:
        """What removing ``e`` frees: its wrapper module too, unless used within
        the hour (then the plan keeps it, and so must the budget's count)."""
        a = self.owned().get(e.file.where)
        return e.size + (a.file.size if a is not None and self.now - last_use(a.file) > TEMP_FILE_GRACE_S
                         else 0)

    def used(self, e: Entry) -> float:
        """``e``'s last use: its file's, or its last hit in a trace if later."""
        if not self.traced:  # no trace: max(last_use(e.file), 0.0) without the name's lookup
            return max(last_use(e.file), 0.0)
        return max(last_use(e.file), self.traced.get(e.name, (0.0, None))[0])

    def costly(self, e: Entry) -> bool:
        """Whether ``e`` took at least ``keep_costly_s`` to compile (as a trace
        recorded, else as the entry stores)."""
        if self.policy.keep_costly_s is None:
            return False
        seconds = self.traced.get(e.name, (0.0, None))[1]
        if seconds is None and isinstance(d := self.catalog.load(e), DecodedEntry) and d.compile_time_ns:
            seconds = d.compile_time_ns / 1e9
        return seconds is not None and seconds >= self.policy.keep_costly_s


def artifacts_in(inv: Inventory) -> tuple[Artifact, ...]:
    """The generated-code files among the inventory's items, sorted by path: what
    :func:`~fxcache_core.cache.scan.scan_artifacts` lists (regular files named
    ``<key>.<ext>`` inside the dir ``key[1:3]`` of the root, no symlink on the way;
    the items are the regular files, reached without following one), with the
    inventory's records."""
    out: list[Artifact] = []
    for i in inv.items:
        parts = i.parts
        if len(parts) == 2 and len(parts[0]) == 2 and (key := artifact_key(parts[1])) is not None \
                and key[1:3] == parts[0]:
            out.append(Artifact(i.file, key))
    return tuple(out)


def loaders_of(catalog: Catalog, entries: list[Entry]) -> dict[str, list[Entry]]:
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


def _select_older_than(s: Selection) -> None:
    """Entries (and Dynamo PGO state) unused for more than ``older_than_s``."""
    if s.policy.older_than_s is None:
        return
    for e in s.entries:
        age = s.now - s.used(e)
        if age > s.policy.older_than_s:
            s.pick(e, Reason(f"unused for {format_duration(age)}", "unused"))
    for u, age in s.idle_units():
        if u.kind is ContentKind.PGO and age > s.policy.older_than_s:
            s.pick_unit(u, Reason(f"PGO state unused for {format_duration(age)}", "unused-pgo-state"))


def _select_keep_last(s: Selection) -> None:
    """Per key, the entries past the ``keep_last`` most recently used."""
    n = s.policy.keep_last
    if n is None:
        return
    for k in s.catalog.scan.keys:
        ranked = sorted((e for e in k.entries if e.file.where in s.by_path), key=s.used, reverse=True)
        for e in ranked[n:]:
            s.pick(e, Reason(f"not among the {n} most recent of its key", "not-most-recent"))


def _select_unreadable(s: Selection) -> None:
    """Entries whose content is not a valid entry (never those fxcache merely
    could not read; one it could not decode within its CPU budget is listed as
    kept), entries whose name is not the sha256 of their content, and temp files
    outside entry key dirs (those of entry key dirs: the plan's last step)
    untouched for :data:`TEMP_FILE_GRACE_S`."""
    if not s.policy.unreadable:
        return
    cat = s.catalog
    for e in s.entries:
        d = cat.load(e)
        if isinstance(d, Unreadable) and d.cause == "corrupt" and cat.from_index(e):
            d = cat.decode_now(e)  # the index said so: deletion rests on the bytes as they are
        if isinstance(d, Unreadable) and d.cause == "corrupt":
            s.pick(e, Reason(f"unreadable: {d.reason}", "unreadable"))
            continue
        if isinstance(d, Unreadable) and d.cause == "too-costly":  # kept, unless its name says altered
            s.kept.append((e.path, Reason(f"not decoded, so not proven unreadable: {d.reason}",
                                          code_of(d.reason) or "over-cpu-budget")))
        if cat.name_matches_content(e) is False and cat.name_matches_content(e, reread=True) is False:
            s.pick(e, Reason("its name is not the sha256 of its content (altered after torch wrote it)",
                             "name-not-content-hash"))
    for u, age in s.idle_units():
        if u.kind is ContentKind.TEMP:
            s.pick_unit(u, Reason(f"stale temp file, untouched for {format_duration(age)}", "stale-temp-file"))


_NOUN = {ContentKind.TRITON: "Triton kernel", ContentKind.PCH: "precompiled header"}


def _select_artifacts(s: Selection) -> None:
    """Triton kernel dirs and precompiled headers unused for ``older_than_s``
    (generated code in the cache root: :func:`fxcache_core.prune.generated.code_removals`,
    once the plan knows which FX entries go)."""
    if not s.policy.artifacts or s.policy.older_than_s is None:
        return
    for u, age in s.idle_units():
        if u.kind in (ContentKind.TRITON, ContentKind.PCH) and age > s.policy.older_than_s:
            s.pick_unit(u, Reason(f"{_NOUN[u.kind]} unused for {format_duration(age)}", "unused-artifact"))


def _select_orphaned_locks(s: Selection) -> None:
    """Lock files whose compile key, header, PGO state or Triton dir is gone."""
    if not s.policy.orphaned_locks:
        return
    for u, age in s.idle_units():
        if u.kind is ContentKind.LOCK:
            s.pick_unit(u, Reason(f"orphaned lock (what it guarded is gone), untouched for {format_duration(age)}",
                                  "orphaned-lock"))


def _select_stale(s: Selection) -> None:
    """FX entries built by another torch or system (their debug lines against
    ``stale_against``) and, with ``stale_include_dir``, precompiled headers and
    libraries built against other headers; what cannot be judged is undecided."""
    if s.policy.stale_against is None:
        return
    from fxcache_core.keying.anatomy import parse_debug_lines, stale_components

    current = dict(s.policy.stale_against)
    stale: dict[str, tuple[str, ...]] = {}

    def took(e: Entry, d: DecodedEntry | Unreadable) -> None:  # the debug lines, not kept: one at a time
        if isinstance(d, DecodedEntry) and (differ := stale_components(parse_debug_lines(d.debug_lines), current)):
            stale[e.file.where] = differ

    fx = [e for e in s.entries if e.kind is KeyKind.FX_GRAPH]
    s.catalog.decode_each_now(fx, took)
    for e in fx:  # picked in the entries' order, whatever order the workers answered in
        if (differ := stale.get(e.file.where)) is not None:
            s.pick(e, Reason(f"stale: built by another torch or system ({', '.join(differ)} differ)",
                             "stale-build"))
    if s.policy.stale_include_dir is None:
        return
    from fxcache_core.cache.provenance import built_by_another_torch

    for u, _ in s.idle_units():
        if u.kind not in (ContentKind.PCH, ContentKind.LIBRARY):
            continue
        i = u.items[-1]  # the library, not its load-check marker
        try:
            stale, why = built_by_another_torch(i.file.where, i.file.mtime, s.policy.stale_include_dir,
                                                pch=u.kind is ContentKind.PCH)
        except OSError as e:
            stale, why = None, f"cannot read it: {e.strerror or e}"
        if stale:
            s.pick_unit(u, Reason("stale: " + why, "stale-headers"))
        elif stale is None:
            s.undecided.append((u.name, Reason(why, "stale-undecided")))


def _select_dangling(s: Selection) -> None:
    """AOTAutograd entries whose FX entry is certainly gone; those it may be
    gone for, where fxcache could not look everywhere, are kept (not proven)."""
    if not s.policy.dangling:
        return
    for e in s.entries:
        if e.kind is KeyKind.AOT_AUTOGRAD:
            gone, unsure = missing_fx(s.catalog, e)
            if gone:
                s.pick(e, Reason("dangling: " + gone, "dangling"))
            elif unsure:
                s.kept.append((e.path, Reason(unsure, "fx-entry-not-proven-gone")))


def _select_max_size(s: Selection) -> None:
    """Least recently used first, until everything under the cache dir fits
    ``max_size_bytes``: entries (with the AOTAutograd entries that load a
    removed FX entry, counted too) and units alike; an entry that compiles in
    ``keep_costly_s`` or more only once every cheaper one went."""
    p = s.policy
    if p.max_size_bytes is None:
        return
    # Everything df counts is measured against the budget (inv.totals.bytes).
    in_entries = set(s.by_path) | {a.file.where for a in s.owned().values()}
    units = [u for u in s.units if not any(i.file.where in in_entries for i in u.items)]
    left = s.inv.totals.bytes - sum(s.cost(s.by_path[path]) for path in s.chosen) \
        - sum(u.size for u, _ in s.unit_chosen.values())
    budget = f"least recently used, over the {p.max_size_bytes:,} byte budget"
    # One Reason for every entry the budget takes (of thousands): memory.
    over = over_costly = Reason(budget, "over-budget")
    if p.keep_costly_s is not None:
        over_costly = Reason(budget + f" (compiles in {p.keep_costly_s:g} s or more: kept until every "
                             "cheaper entry went)", "over-budget")
    queue: list[tuple[bool, float, int, Entry | Unit]] = [
        (s.costly(e), s.used(e), n, e) for n, e in enumerate(s.entries)]
    queue += [(False, u.last_use, len(queue) + n, u) for n, u in enumerate(units)
              if s.now - u.last_use > TEMP_FILE_GRACE_S]
    loaders = s.loaders()
    for _, _, _, x in sorted(queue, key=lambda t: t[:3]):
        if left <= p.max_size_bytes:
            break
        if isinstance(x, Unit):
            if x.name not in s.unit_chosen and x.name not in s.unit_budget:
                s.unit_budget[x.name] = (x, [over])
                left -= x.size
            continue
        e = x
        if e.file.where in s.chosen:
            continue
        s.pick(e, over_costly if s.costly(e) else over)
        left -= s.cost(e)
        for a in loaders.get(e.file.where, ()):
            if a.file.where not in s.chosen:
                s.pick(a, loads_removed(e))
                left -= s.cost(a)


def loads_removed(fx: Entry) -> Reason:
    """Why an AOTAutograd entry goes with the FX entry ``fx`` it loads."""
    return Reason(f"loads FX entry {fx.key[:10]}/{fx.name[:10]} that is removed", "loads-removed-fx-entry")


def missing_fx(catalog: Catalog, e: Entry) -> tuple[str | None, str | None]:
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


Rule = Callable[[Selection], None]

RULES: tuple[Rule, ...] = (
    _select_older_than, _select_keep_last, _select_unreadable, _select_artifacts,
    _select_orphaned_locks, _select_stale, _select_dangling, _select_max_size,
)
"""The rules, in the order they run (the order of a file's reasons); ``max_size`` last."""
