"""Lazy, cached decoding of the entries of one scan.

A :class:`Catalog` reads and decodes an entry the first time it is asked for
and remembers the result (or the :class:`~fxcache_core.errors.EntryDecodeError`),
so ``guards`` and ``match`` decode each file at most once per run (gc reads
again, from the bytes, what a deletion rests on where no index row proves it). It
also joins entries across keys: which AOTAutograd entries load which FX
graphs, and so the source of each FX symbol.

Mirrors how torch reads a key's entries (``GuardedCache.iterate_over_candidates``
in torch/_inductor/codecache.py: sorted names, dotfiles skipped, an entry that
does not unpickle skipped): :meth:`Catalog.first_readable`. Never executes
cache content, never writes the cache; every decode runs in a worker process,
under fxcache's CPU budget (:mod:`fxcache_core.catalog.pool`); checking entries is
:mod:`fxcache_core.catalog.verify`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from fxcache_core.cache.keys import KeyKind, sha256_hash
from fxcache_core.cache.scan import CacheKey, CacheScan, Entry, read_entry_bytes
from fxcache_core.catalog.pool import decode_entries, decode_one, decode_origins, worker_count
from fxcache_core.decode.entries import DecodedEntry
from fxcache_core.decode.symbols import SymbolInfo, symbol_table
from fxcache_core.decode.unpickler import MAX_ENTRY_BYTES
from fxcache_core.state.index import Index
from fxcache_core.state.rows import light


@dataclass(frozen=True)
class Unreadable:
    """An entry that could not be read or decoded, and why (one line).

    ``cause`` tells what kind of failure it was, which decides what gc may do:
    ``corrupt`` (the bytes are not a valid entry: torch's ``pickle.loads``
    would fail too, so gc ``--unreadable`` may remove it), ``io`` (fxcache
    could not read it, e.g. no permission: torch may still load it),
    ``too-large`` (over :data:`~fxcache_core.decode.entries.MAX_ENTRY_BYTES`, not read,
    or needing more memory to decode than fxcache's budget,
    :mod:`fxcache_core.decode.memlimit`: torch, with more memory, may still load it), or
    ``too-costly`` (decoding it took more CPU than fxcache's budget,
    :mod:`fxcache_core.decode.workers`, reason code ``over-cpu-budget``, or the process
    decoding it died: torch may load it, or hang on it). Only ``corrupt`` is evidence
    about the entry.
    """

    entry: Entry
    reason: str
    cause: str = "corrupt"


class Catalog:
    """Decoded view of a :class:`CacheScan`; decodes on demand, never executes.

    With an :class:`~fxcache_core.state.index.Index`, an entry the index has
    unchanged is not decoded again: :meth:`load` returns its light form (no
    debug lines) unless ``full=True`` is asked for.

    Not thread-safe. Memory: one light :class:`DecodedEntry` (no debug
    lines: a few KB) per entry loaded; an entry loaded with ``full=True``
    keeps its debug lines (tens to hundreds of KB for an FX entry).
    """

    def __init__(self, scan: CacheScan, index: Index | None = None,
                 on_read: Callable[[], None] | None = None, hash_on_read: bool = True,
                 not_read: Mapping[str, str] | None = None, plan_only: bool = False) -> None:
        """``on_read`` is called once per entry read from disk or from the index
        (not for entries already in memory): a progress hook for the CLI.
        ``hash_on_read``: hash each file as it is read (for
        :meth:`name_matches_content`); without it that method reads the file again.
        ``not_read``: entry file (``FileInfo.where``) -> why its content was never
        fetched (a remote value over fxcache's limit: the file is a placeholder);
        such an entry is :class:`Unreadable` ``too-large``, its file never read.
        ``plan_only``: every reader of this catalog is a gc or rm plan, so an index row
        is read as the fields a plan reads (:class:`~fxcache_core.state.rows.PlanFacts`:
        the rest read as their defaults), not as the whole light entry; an entry read
        from its file is kept whole as ever."""
        self._plan_only = plan_only
        self.scan = scan
        self._not_read = dict(not_read or {})
        self._hash_on_read = hash_on_read
        self._on_read = on_read
        self._index = index if index is not None and index.enabled else None
        # Keyed by the entry file's path string (already in memory: no new key objects).
        self._decoded: dict[str, DecodedEntry | Unreadable] = {}
        self._light: set[str] = set()
        self._via_index: set[str] = set()  # what memory holds came from an index row
        self._origins: dict[str, DecodedEntry] = {}  # ORIGIN projections (origins()), never index rows
        self._fx_sources: dict[str, dict[str, str]] | None = None
        self._loaders: dict[str, list[Entry]] | None = None
        self._hashes: dict[str, str] = {}
        self._pgo: bool | None = None

    @property
    def index(self) -> Index | None:
        """The index behind this catalog (None without one, or once it turned itself off)."""
        return self._index if self._index is not None and self._index.enabled else None

    def in_memory(self, entry: Entry) -> bool:
        """Whether :meth:`load` of ``entry`` (light) would read nothing: it was read in this run."""
        return entry.file.where in self._decoded

    def from_index(self, entry: Entry) -> bool:
        """Whether what :meth:`load` gives for ``entry`` came from an index row in
        this run (not from the file's bytes)."""
        return entry.file.where in self._via_index

    def load(self, entry: Entry, full: bool = False) -> DecodedEntry | Unreadable:
        """The decoded entry, or :class:`Unreadable` with the reason.

        ``full``: with its debug lines (decodes the file if only the index's
        light form is at hand).
        """
        k = entry.file.where
        got = self._decoded.get(k)
        if got is not None and full and k in self._light:
            got = None
        if got is not None:
            return got
        if self._on_read is not None:
            self._on_read()
        if not full and self._from_index(entry):
            return self._decoded[k]
        sha, got, ok = self._read(entry, full)
        return self._keep(entry, sha, got, full, proven=ok)

    def _read(self, entry: Entry, full: bool) -> tuple[str | None, DecodedEntry | tuple[str, str], int]:
        """Read and decode ``entry`` in a worker (:func:`~fxcache_core.catalog.pool.decode_one`),
        but not an entry :meth:`_not_to_read`; the last item is when the read ended if
        the bytes are proven to be the scanned file's (:func:`~fxcache_core.catalog.pool.proven`),
        else 0."""
        why = self._not_to_read(entry)
        if why is not None:
            return None, why, 0
        return decode_one(entry, self._hash_on_read, full)

    def _not_to_read(self, entry: Entry) -> tuple[str, str] | None:
        """(reason, ``too-large``) for an entry whose content was never fetched, or
        one over :data:`~fxcache_core.decode.unpickler.MAX_ENTRY_BYTES`; else None."""
        why = self._not_read.get(entry.file.where)
        if why is not None:
            return why, "too-large"
        if entry.size > MAX_ENTRY_BYTES:
            return f"{entry.size} bytes, over fxcache's {MAX_ENTRY_BYTES} byte decoding limit", "too-large"
        return None

    def _from_index(self, entry: Entry) -> bool:
        """Take the entry's light form from the index if it has the file unchanged."""
        if self._index is None:
            return False
        hit = self._index.get(entry, self._plan_only)
        if hit is None:
            return False
        self._take(entry, hit)
        return True

    def _take(self, entry: Entry, hit: tuple[str | None, DecodedEntry | str]) -> None:
        """Remember what the index holds for ``entry`` (``Index.get``'s answer)."""
        k = entry.file.where
        if hit[0] is not None:
            self._hashes[k] = hit[0]
        self._decoded[k] = Unreadable(entry, hit[1], "corrupt") if isinstance(hit[1], str) else hit[1]
        self._light.add(k)
        self._via_index.add(k)

    def _keep(self, entry: Entry, sha: str | None, got: DecodedEntry | tuple[str, str],
              full: bool, row: str | None = None, proven: int = 0) -> DecodedEntry | Unreadable:
        """Remember what reading ``entry`` gave: ``got`` is the decoded entry (or its
        light form, then ``row`` is its index JSON), or (reason, cause). The index
        remembers it only when ``proven``: the bytes were read through one fd whose
        identity was the scanned file's before and after, and not racily clean
        (:func:`~fxcache_core.catalog.pool.proven`); ``proven`` is when that read ended
        (epoch ns), which the row keeps (0: not proven)."""
        k = entry.file.where
        self._via_index.discard(k)
        if sha is not None:
            self._hashes[k] = sha
        if isinstance(got, tuple):
            got = Unreadable(entry, got[0], got[1])
            if self._index is not None and proven and got.cause == "corrupt":
                self._index.put(entry, sha, got.reason, read_ns=proven)
        else:
            lt = got if row is not None else light(got)
            if self._index is not None and proven:
                self._index.put(entry, sha, lt, row, read_ns=proven)
            got = got if full else lt  # the debug lines are most of an FX entry's memory
        if not full and isinstance(got, DecodedEntry):
            self._light.add(k)
        else:
            self._light.discard(k)
        self._decoded[k] = got
        return got

    def read_ahead(self, entries: Iterable[Entry], from_bytes: bool = False) -> None:
        """Decode every entry of ``entries`` not yet in memory or in the index, in
        worker processes, on all CPUs when there are many
        (:data:`~fxcache_core.catalog.pool.PARALLEL_MIN_ENTRIES`): they read and decode
        (the same stub unpickler: nothing is executed) and send back the light form
        as index JSON. Afterwards :meth:`load` of these entries costs nothing.

        ``from_bytes``: read them all from their files again, whatever memory or
        the index hold (gc re-reads what a deletion rests on). When the catalog
        hashes files, an index row without the file's hash counts as a miss.
        """
        if from_bytes:
            wanted = list(entries)
            for e in wanted:
                self._decoded.pop(e.file.where, None)
                self._hashes.pop(e.file.where, None)
        else:
            wanted = [e for e in entries if e.file.where not in self._decoded]
            if self._index is not None:
                for e, hit in self._index.get_many(wanted, self._plan_only):
                    if self._hash_on_read and hit[0] is None:
                        continue  # decoded below, hashed as it is read
                    self._take(e, hit)
                    if self._on_read is not None:
                        self._on_read()
        for e in wanted:
            if e.file.where not in self._decoded and (why := self._not_to_read(e)) is not None:
                self._keep(e, None, why, False)
        todo = [e for e in wanted if e.file.where not in self._decoded]
        if todo:
            decode_entries(todo, self._hash_on_read, False, worker_count(len(todo)), self._take_decoded)

    def _take_decoded(self, e: Entry, sha: str | None, got: DecodedEntry | tuple[str, str],
                      row: str | None, ok: int) -> None:
        """:meth:`read_ahead`'s part as each entry comes back from a worker."""
        if self._on_read is not None:
            self._on_read()
        self._keep(e, sha, got, False, row, proven=ok)

    def origins(self, entries: Iterable[Entry]) -> dict[str, DecodedEntry | Unreadable]:
        """Where the graph of each of ``entries`` came from: entry file (``FileInfo.where``)
        -> a :class:`DecodedEntry` of which only ``origin`` and ``forward`` are to be read
        (:data:`~fxcache_core.decode.entries.ORIGIN`; the light form where memory or the
        index has the entry), or :class:`Unreadable`, as :meth:`load` would say.

        Reads the entries neither holds in one batch of worker processes (on all CPUs
        when there are many), reading of each only those fields
        (:func:`~fxcache_core.catalog.pool.decode_origins`: the same validity). An
        unreadable one is kept as :meth:`load` keeps it (a corrupt one in the index
        too); a valid one's projection is kept for this run only, never as an index
        row (the index holds whole light entries).
        """
        out: dict[str, DecodedEntry | Unreadable] = {}
        wanted: list[Entry] = []
        for e in entries:
            got = self._decoded.get(e.file.where) or self._origins.get(e.file.where)
            if got is None:
                wanted.append(e)
            else:
                out[e.file.where] = got
        if self._index is not None and wanted:
            for e, hit in self._index.get_many(wanted):
                self._take(e, hit)
                if self._on_read is not None:
                    self._on_read()
        todo: list[Entry] = []
        for e in wanted:
            k = e.file.where
            if k in self._decoded:
                out[k] = self._decoded[k]
            elif (why := self._not_to_read(e)) is not None:
                out[k] = self._keep(e, None, why, False)
            else:
                todo.append(e)

        def took(e: Entry, sha: str | None, got: DecodedEntry | tuple[str, str], _row: str | None,
                 ok: bool) -> None:
            if self._on_read is not None:
                self._on_read()
            if isinstance(got, tuple):
                out[e.file.where] = self._keep(e, sha, got, False, proven=ok)
                return
            if sha is not None:
                self._hashes[e.file.where] = sha
            self._origins[e.file.where] = out[e.file.where] = got

        if todo:
            decode_origins(todo, self._hash_on_read, worker_count(len(todo)), took)
        return out

    def decode_now(self, entry: Entry) -> DecodedEntry | Unreadable:
        """Read and decode the file now, with its debug lines, whatever the
        index or memory hold, without keeping the debug lines.

        For decisions that must rest on the bytes as they are (gc deleting an
        entry as corrupt) or need what the light form drops (the debug lines,
        for ``gc --stale``, ``ls --dupes``) over many entries: memory stays one
        light entry each. Not counted by the progress hook (:meth:`load` was).
        """
        k = entry.file.where
        sha, got, ok = self._read(entry, True)
        # Not hashing: the hash known for this file (same size, mtime, inode) stays.
        kept = self._keep(entry, sha if sha is not None else self._hashes.get(k), got, False, proven=ok)
        return got if isinstance(got, DecodedEntry) else kept

    def decode_each_now(self, entries: Sequence[Entry],
                        take: Callable[[Entry, DecodedEntry | Unreadable], None]) -> None:
        """:meth:`decode_now` of every entry of ``entries``, in one batch for the decode
        workers (on all CPUs when there are many): ``take(entry, decoded)`` as each comes
        (not in order), with its debug lines, which are not kept."""
        todo: list[Entry] = []
        for e in entries:
            why = self._not_to_read(e)
            if why is None:
                todo.append(e)
            else:
                take(e, self._keep(e, None, why, False))

        def took(e: Entry, sha: str | None, got: DecodedEntry | tuple[str, str], _row: str | None,
                 ok: int) -> None:
            kept = self._keep(e, sha if sha is not None else self._hashes.get(e.file.where), got, False,
                              proven=ok)
            take(e, got if isinstance(got, DecodedEntry) else kept)

        if todo:
            decode_entries(todo, self._hash_on_read, True, worker_count(len(todo)), took)

    def _aot_pass(self) -> None:
        """One pass over every readable AOTAutograd entry, indexing by FX key both
        the sources of its symbols (:meth:`sources_for`) and the entries that load
        it (:meth:`loaders_of`)."""
        sources: dict[str, dict[str, str]] = {}
        loaders: dict[str, list[Entry]] = {}
        for key in self.scan.keys:
            if key.kind is not KeyKind.AOT_AUTOGRAD:
                continue
            for e in key.entries:
                d = self.load(e)
                if not isinstance(d, DecodedEntry):
                    continue
                by_sym = {i.expr: i.source for i in d.inputs if i.symbol and i.source is not None}
                for fx_key in {r.key for r in (d.forward, d.backward) if r is not None}:
                    sources.setdefault(fx_key, {}).update(by_sym)
                    loaders.setdefault(fx_key, []).append(e)
        self._fx_sources, self._loaders = sources, loaders

    def _aot_index(self) -> dict[str, dict[str, str]]:
        """FX key -> {symbol: source}, from every readable AOTAutograd entry."""
        if self._fx_sources is None:
            self._aot_pass()
        assert self._fx_sources is not None
        return self._fx_sources

    def sources_for(self, key: CacheKey) -> dict[str, str]:
        """symbol -> Dynamo source for an FX key, learnt from AOTAutograd entries."""
        if key.kind is KeyKind.FX_GRAPH:
            return dict(self._aot_index().get(key.key, {}))
        return {}

    def loaders_of(self, fx_key: str) -> list[Entry]:
        """The AOTAutograd entries whose forward or backward is ``fx_key``.

        The first call decodes every AOTAutograd entry and indexes them by FX key.
        """
        if self._loaders is None:
            self._aot_pass()
        assert self._loaders is not None
        return list(self._loaders.get(fx_key, ()))

    def first_readable(self, key: CacheKey, full: bool = False) -> tuple[Entry, DecodedEntry] | None:
        """The first entry of ``key`` that can be read and decoded, with what it decodes to;
        None when no entry can.

        Order is torch's: the key's entries sorted by name, dot-prefixed temp files
        skipped (:attr:`CacheKey.entries`, as ``iterate_over_candidates`` lists them).
        *Readable* means :meth:`load` gives a :class:`DecodedEntry`, not
        :class:`Unreadable` (torch's ``pickle.loads`` would fail, or fxcache could not
        read the file or refused it as too large): an entry torch skips too, so every
        entry of a key holds the same graph and the first readable one speaks for the
        key. ``full``: decoded with its debug lines (see :meth:`load`). Decodes
        entries in order until one reads.
        """
        for e in key.entries:
            d = self.load(e, full=full)
            if isinstance(d, DecodedEntry):
                return e, d
        return None

    def symbols(self, entry: Entry) -> tuple[SymbolInfo, ...]:
        """The ``tN`` table of an entry (empty when it is unreadable)."""
        d = self.load(entry)
        if isinstance(d, Unreadable):
            return ()
        key = self.scan.key(entry.key)
        sources = self.sources_for(key) if key is not None else {}
        hints = {}
        if entry.kind is KeyKind.AOT_AUTOGRAD and d.forward is not None:
            fx = self.fx_entry_for(d.forward.key, d.forward.guards_expr)
            if fx is not None:
                fd = self.load(fx)
                if isinstance(fd, DecodedEntry):
                    hints = dict(fd.hints)
        return symbol_table(d, sources, hints)

    def name_matches_content(self, entry: Entry, reread: bool = False) -> bool | None:
        """Whether the entry's file name is torch's sha256 hash of its bytes.

        Torch names every entry it writes that way; a mismatch means the file
        was altered or truncated after torch wrote it, or not written by torch.
        None when the file could not be read. ``reread``: hash the file now,
        whatever hash the index or an earlier read gave.
        """
        k = entry.file.where
        self.load(entry)
        if reread:
            self._hashes.pop(k, None)
        if k not in self._hashes:  # not hashed when read (hash_on_read=False), or from the index
            if entry.size > MAX_ENTRY_BYTES or k in self._not_read:
                return None  # never read whole, as load() does not
            try:
                self._hashes[k] = sha256_hash(read_entry_bytes(entry.path))
            except OSError:
                return None
        return self._hashes[k] == entry.name

    def has_pgo_state(self) -> bool:
        """Whether the cache dir holds Dynamo's local profile-guided automatic-dynamic
        state (``dynamo/code_state_*.pkl``, written when a job id is set:
        ``code_state_path`` in torch/_dynamo/pgo.py). fxcache_core.decode.pgo reads it."""
        if self._pgo is None:
            try:
                self._pgo = any(n.startswith("code_state_") for n in os.listdir(self.scan.root / "dynamo"))
            except OSError:
                self._pgo = False
        return self._pgo

    def unreadable(self) -> list[Unreadable]:
        """Every entry of the scan that cannot be read or decoded (decodes them all)."""
        self.read_ahead(self.scan.entries())
        return [d for e in self.scan.entries() if isinstance(d := self.load(e), Unreadable)]

    def fx_entry_state(self, fx_key: str, guards_expr: str | None) -> tuple[Entry | None, bool]:
        """(the FX entry an AOTAutograd hit loads, whether its absence is certain).

        The absence is certain only when successful listings from the cache dir
        down show no dir for the FX key (:meth:`CacheScan.fx_key_absent`), or its
        key dir was listed, every file in it stat'ed and every entry read: a dir
        that could not be listed, or an entry fxcache could not read, might hold
        the one. A failed look is never taken as proof of absence.
        """
        e = self.fx_entry_for(fx_key, guards_expr)
        if e is not None:
            return e, True
        key = self.scan.key(fx_key)
        if key is None:
            return None, self.scan.fx_key_absent(fx_key)
        if not key.readable:
            return None, False
        certain = all(not (isinstance(d := self.load(x), Unreadable) and d.cause != "corrupt")
                      for x in key.entries)
        return None, certain

    def fx_entry_for(self, fx_key: str, guards_expr: str | None) -> Entry | None:
        """The FX entry torch loads for an AOTAutograd hit.

        On an AOTAutograd hit torch looks the forward/backward FX graph up by
        key and takes the first entry (sorted order) whose stored guards
        string *equals* the one the AOTAutograd entry recorded
        (``FxGraphCacheLoadable`` in aot_autograd_result.py). None when the key
        or such an entry is gone.
        """
        key = self.scan.key(fx_key)
        if key is None:
            return None
        for e in key.entries:
            d = self.load(e)
            if isinstance(d, DecodedEntry) and (not d.guards_expr or d.guards_expr == guards_expr):
                return e
        return None
