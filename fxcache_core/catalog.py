"""Lazy, cached decoding of the entries of one scan.

A :class:`Catalog` reads and decodes an entry the first time it is asked for
and remembers the result (or the :class:`~fxcache_core.errors.EntryDecodeError`),
so ``guards``, ``match`` and ``gc`` decode each file at most once per run. It
also joins entries across keys: which AOTAutograd entries load which FX
graphs, and so the source of each FX symbol.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .decode import MAX_ENTRY_BYTES, DecodedEntry, decode_entry
from .errors import EntryDecodeError
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

    Not thread-safe. Memory: one :class:`DecodedEntry` per decoded entry
    (debug lines included, a few hundred KB for a large FX entry).
    """

    def __init__(self, scan: CacheScan) -> None:
        self.scan = scan
        self._decoded: dict[tuple[str, str], DecodedEntry | Unreadable] = {}
        self._fx_sources: dict[str, dict[str, str]] | None = None
        self._hashes: dict[tuple[str, str], str] = {}

    def load(self, entry: Entry) -> DecodedEntry | Unreadable:
        """The decoded entry, or :class:`Unreadable` with the reason."""
        k = (entry.key, entry.name)
        got = self._decoded.get(k)
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
                    self._hashes[k] = sha256_hash(data)
                    try:
                        got = decode_entry(data, entry.kind)
                    except EntryDecodeError as e:
                        got = Unreadable(entry, str(e), "corrupt")
            self._decoded[k] = got
        return got

    def _aot_index(self) -> dict[str, dict[str, str]]:
        """FX key -> {symbol: source}, from every readable AOTAutograd entry."""
        if self._fx_sources is None:
            index: dict[str, dict[str, str]] = {}
            for key in self.scan.keys:
                if key.kind is not KeyKind.AOT_AUTOGRAD:
                    continue
                for e in key.entries:
                    d = self.load(e)
                    if isinstance(d, Unreadable):
                        continue
                    by_sym = {i.expr: i.source for i in d.inputs
                              if i.symbol and i.source is not None}
                    for ref in (d.forward, d.backward):
                        if ref is not None:
                            index.setdefault(ref.key, {}).update(by_sym)
            self._fx_sources = index
        return self._fx_sources

    def sources_for(self, key: CacheKey) -> dict[str, str]:
        """symbol -> Dynamo source for an FX key, learnt from AOTAutograd entries."""
        if key.kind is KeyKind.FX_GRAPH:
            return dict(self._aot_index().get(key.key, {}))
        return {}

    def loaders_of(self, fx_key: str) -> list[Entry]:
        """The AOTAutograd entries whose forward or backward is ``fx_key``."""
        out = []
        for key in self.scan.keys:
            if key.kind is not KeyKind.AOT_AUTOGRAD:
                continue
            for e in key.entries:
                d = self.load(e)
                if isinstance(d, DecodedEntry) and any(
                    r is not None and r.key == fx_key for r in (d.forward, d.backward)
                ):
                    out.append(e)
        return out

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

    def name_matches_content(self, entry: Entry) -> bool | None:
        """Whether the entry's file name is torch's sha256 hash of its bytes.

        Torch names every entry it writes that way; a mismatch means the file
        was altered or truncated after torch wrote it, or not written by torch.
        None when the file could not be read.
        """
        self.load(entry)
        h = self._hashes.get((entry.key, entry.name))
        return None if h is None else h == entry.name

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
