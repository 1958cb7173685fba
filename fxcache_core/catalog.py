"""Lazy, cached decoding of the entries of one scan.

A :class:`Catalog` reads and decodes an entry the first time it is asked for
and remembers the result (or the :class:`~fxcache_core.errors.EntryDecodeError`),
so ``guards``, ``match`` and ``gc`` decode each file at most once per run. It
also joins entries across keys: which AOTAutograd entries load which FX
graphs, and so the source of each FX symbol.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from .decode import MAX_ENTRY_BYTES, DecodedEntry, decode_entry
from .errors import EntryDecodeError
from .index import Index, light
from .keys import KeyKind, sha256_hash
from .store import CacheKey, CacheScan, Entry, read_entry_bytes
from .symbols import SymbolInfo, symbol_table


@dataclass(frozen=True)
class Unreadable:
    """An entry that could not be read or decoded, and why (one line).

    ``cause`` tells what kind of failure it was, which decides what gc may do:
    ``corrupt`` (the bytes are not a valid entry: torch's ``pickle.loads``
    would fail too, so gc ``--unreadable`` may remove it), ``io`` (fxcache
    could not read it, e.g. no permission: torch may still load it), or
    ``too-large`` (over :data:`~fxcache_core.decode.MAX_ENTRY_BYTES`, not read).
    """

    entry: Entry
    reason: str
    cause: str = "corrupt"


class Catalog:
    """Decoded view of a :class:`CacheScan`; decodes on demand, never executes.

    With an :class:`~fxcache_core.index.Index`, an entry the index has
    unchanged is not decoded again: :meth:`load` returns its light form (no
    debug lines) unless ``full=True`` is asked for.

    Not thread-safe. Memory: one light :class:`DecodedEntry` (no debug
    lines: a few KB) per entry loaded; an entry loaded with ``full=True``
    keeps its debug lines (tens to hundreds of KB for an FX entry).
    """

    def __init__(self, scan: CacheScan, index: Index | None = None,
                 on_read: Callable[[], None] | None = None, hash_on_read: bool = True) -> None:
        """``on_read`` is called once per entry read from disk or from the index
        (not for entries already in memory): a progress hook for the CLI.
        ``hash_on_read``: hash each file as it is read (for
        :meth:`name_matches_content`); without it that method reads the file again."""
        self.scan = scan
        self._hash_on_read = hash_on_read
        self._on_read = on_read
        self._index = index if index is not None and index.enabled else None
        # Keyed by the entry file's path string (already in memory: no new key objects).
        self._decoded: dict[str, DecodedEntry | Unreadable] = {}
        self._light: set[str] = set()
        self._fx_sources: dict[str, dict[str, str]] | None = None
        self._loaders: dict[str, list[Entry]] | None = None
        self._hashes: dict[str, str] = {}
        self._pgo: bool | None = None

    def load(self, entry: Entry, full: bool = False) -> DecodedEntry | Unreadable:
        """The decoded entry, or :class:`Unreadable` with the reason.

        ``full``: with its debug lines (decodes the file if only the index's
        light form is at hand).
        """
        k = entry.file.where
        got = self._decoded.get(k)
        if got is not None and full and k in self._light:
            got = None
        if got is None and self._on_read is not None:
            self._on_read()
        if got is None and not full and self._index is not None:
            hit = self._index.get(entry)
            if hit is not None:
                if hit[0] is not None:
                    self._hashes[k] = hit[0]
                got = Unreadable(entry, hit[1], "corrupt") if isinstance(hit[1], str) else hit[1]
                self._decoded[k] = got
                self._light.add(k)
                return got
        if got is None:
            if entry.size > MAX_ENTRY_BYTES:
                got = Unreadable(entry, f"{entry.size} bytes, over fxcache's "
                                 f"{MAX_ENTRY_BYTES} byte decoding limit", "too-large")
            else:
                try:
                    data = read_entry_bytes(entry.path)
                except OSError as e:
                    got = Unreadable(entry, f"cannot read: {e.strerror or e}", "io")
                else:
                    sha = sha256_hash(data) if self._hash_on_read else None
                    if sha is not None:
                        self._hashes[k] = sha
                    try:
                        got = decode_entry(data, entry.kind)
                    except EntryDecodeError as e:
                        got = Unreadable(entry, str(e), "corrupt")
                    if isinstance(got, DecodedEntry):
                        lt = light(got)
                        got = got if full else lt  # the debug lines are most of an FX entry's memory
                    if self._index is not None:
                        self._index.put(entry, sha, got.reason if isinstance(got, Unreadable) else lt)
            if not full and isinstance(got, DecodedEntry):
                self._light.add(k)
            else:
                self._light.discard(k)
            self._decoded[k] = got
        return got

    def decode_now(self, entry: Entry) -> DecodedEntry | Unreadable:
        """Read and decode the file now, with its debug lines, whatever the
        index or memory hold, without keeping the debug lines.

        For decisions that must rest on the bytes as they are (gc deleting an
        entry as corrupt) or need what the light form drops (the debug lines,
        for ``gc --stale``) over many entries: memory stays one light entry each.
        """
        k = entry.file.where
        self._decoded.pop(k, None)
        got = self.load(entry, full=True)
        if isinstance(got, DecodedEntry):
            self._decoded[k] = light(got)
            self._light.add(k)
        return got

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
            if entry.size > MAX_ENTRY_BYTES:
                return None  # never read whole, as load() does not
            try:
                self._hashes[k] = sha256_hash(read_entry_bytes(entry.path))
            except OSError:
                return None
        return self._hashes[k] == entry.name

    def verify(self) -> tuple[list[tuple[Entry, list[str]]], list[tuple[Entry, str]]]:
        """Check every entry of the scan, reading each file (``fxcache verify``).

        Returns (bad, unchecked): each bad entry with what is wrong (its content
        is not a valid entry; its name is not the sha256 of its content, so it was
        altered or truncated after torch wrote it; an FX entry names another key
        than the dir it is filed under), and each entry that could not be read at
        all (permissions, size limit) with why: not evidence either way.
        """
        bad: list[tuple[Entry, list[str]]] = []
        unchecked: list[tuple[Entry, str]] = []
        for e in self.scan.entries():
            d = self.load(e)
            if isinstance(d, Unreadable) and d.cause != "corrupt":
                unchecked.append((e, d.reason))
                continue
            why = [f"unreadable: {d.reason}"] if isinstance(d, Unreadable) else []
            if self.name_matches_content(e) is False:
                why.append("its name is not the sha256 of its content: altered or truncated after "
                           "torch wrote it")
            if isinstance(d, DecodedEntry) and d.fx_key and d.fx_key != e.key:
                why.append(f"it says it is an entry of key {d.fx_key[:12]}, filed under {e.key[:12]}")
            if why:
                bad.append((e, why))
        return bad, unchecked

    def has_pgo_state(self) -> bool:
        """Whether the cache dir holds Dynamo's local profile-guided automatic-dynamic
        state (``dynamo/code_state_*.pkl``, written when a job id is set:
        ``code_state_path`` in torch/_dynamo/pgo.py). fxcache does not read it."""
        if self._pgo is None:
            try:
                self._pgo = any(n.startswith("code_state_") for n in os.listdir(self.scan.root / "dynamo"))
            except OSError:
                self._pgo = False
        return self._pgo

    def unreadable(self) -> list[Unreadable]:
        """Every entry of the scan that cannot be read or decoded (decodes them all)."""
        return [d for e in self.scan.entries() if isinstance(d := self.load(e), Unreadable)]

    def fx_entry_state(self, fx_key: str, guards_expr: str | None) -> tuple[Entry | None, bool]:
        """(the FX entry an AOTAutograd hit loads, whether its absence is certain).

        The absence is certain only when the FX key dir does not exist at all,
        or was listed and every entry in it was read: a key dir that could not
        be listed, or an entry fxcache could not read, might be the one.
        """
        e = self.fx_entry_for(fx_key, guards_expr)
        if e is not None:
            return e, True
        key = self.scan.key(fx_key)
        if key is None:
            return None, not os.path.lexists(KeyKind.FX_GRAPH.key_dir(self.scan.root, fx_key))
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
