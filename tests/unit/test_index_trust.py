"""The index is trusted only for bytes proven to be the file's: identity, racily clean, ownership.

Synthetic entries (tests/synth.py): the trust model is fxcache's, not torch's, and
rewriting an entry in place with its old size and mtime put back is an attack no
compile produces. The short sleeps let the kernel's timestamp clock tick (10 ms at
most) so that a change moves ctime; nothing here measures time.
"""

from __future__ import annotations

import os
import time

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import scan_cache
from fxcache_core.catalog.pool import proven
from fxcache_core.catalog.reader import Catalog
from fxcache_core.state.index import RACY_FINE_NS, Index, racily_clean
from tests.synth import fake_key, fx_entry_bytes, write_entry

TICK_S = 0.05  # past the kernel's timestamp tick and RACY_FINE_NS


def _load(root, idx):
    """(guards read, whether they came from the index row) of the one entry under ``root``."""
    cat = Catalog(scan_cache(root), Index(idx))
    (e,) = cat.scan.entries()
    got = cat.load(e)
    cat.index.close()
    return got.guards_expr, cat.from_index(e)


def test_an_entry_rewritten_with_its_old_size_and_mtime_put_back_is_read_again(tmp_path):
    root, idx = tmp_path / "c", tmp_path / "index.sqlite"
    k = fake_key(KeyKind.FX_GRAPH, "k")
    path = write_entry(root, KeyKind.FX_GRAPH, k, fx_entry_bytes("L['t0'] <= 8", k))
    time.sleep(TICK_S)  # not racily clean when read
    assert _load(root, idx) == ("L['t0'] <= 8", False)
    assert _load(root, idx) == ("L['t0'] <= 8", True)  # the row is there and trusted
    before = os.stat(path)
    time.sleep(TICK_S)
    with open(path, "r+b") as f:  # in place: same inode, same size
        f.write(fx_entry_bytes("L['t0'] <= 9", k))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)
    assert after.st_ctime_ns != before.st_ctime_ns  # what no user call can put back
    time.sleep(TICK_S)
    assert _load(root, idx) == ("L['t0'] <= 9", False)


def test_a_racily_clean_reading_never_becomes_a_row(tmp_path):
    root, idx = tmp_path / "c", tmp_path / "index.sqlite"
    k = fake_key(KeyKind.FX_GRAPH, "k")
    path = write_entry(root, KeyKind.FX_GRAPH, k, fx_entry_bytes("L['t0'] <= 8", k))
    future = time.time_ns() + 60 * 10**9  # changed "later" than it is read: as racy as it gets
    os.utime(path, ns=(future, future))
    assert _load(root, idx) == ("L['t0'] <= 8", False)
    assert _load(root, idx) == ("L['t0'] <= 8", False)  # read again: no row was written


def test_racily_clean_is_the_file_systems_timestamp_granularity():
    t = 1_700_000_000_123_456_789
    assert racily_clean((1, 2, 3, t, t), t + RACY_FINE_NS - 1)
    assert not racily_clean((1, 2, 3, t, t), t + RACY_FINE_NS)
    whole = 1_700_000_000 * 10**9  # whole-second timestamps: a coarse file system
    assert racily_clean((1, 2, 3, whole, whole), whole + 10**9)
    assert not racily_clean((1, 2, 3, whole, whole), whole + 3 * 10**9)
    assert racily_clean((1, 2, 3, t - 10**9, t), t + 1000)  # ctime counts, not only mtime


def test_only_a_reading_whose_identity_held_and_is_the_scanned_one_is_proven():
    t = 1_700_000_000_123_456_789
    ident = (1, 2, 3, t, t)
    assert proven(ident, ident, t + 10**9)
    assert not proven(ident, None, t + 10**9)  # changed while it was read
    assert not proven(ident, (1, 2, 3, t, t + 1), t + 10**9)  # not the file the scan saw
    assert not proven(ident, ident, t + 1)  # racily clean


def test_an_index_file_others_may_write_is_not_trusted(tmp_path):
    idx = tmp_path / "index.sqlite"
    Index(idx).close()
    assert Index(idx).enabled
    os.chmod(idx, 0o666)
    assert not Index(idx).enabled


class _Counting:
    """An index's connection, counting the statements run through it."""

    def __init__(self, db):
        self.db, self.n = db, 0

    def execute(self, *a):
        self.n += 1
        return self.db.execute(*a)

    def __getattr__(self, name):
        return getattr(self.db, name)


def test_proof_of_the_rows_one_pass_served_is_theirs_without_a_second_read(tmp_path, monkeypatch):
    import sqlite3

    from fxcache_core.state import index as index_mod

    monkeypatch.setattr(index_mod, "_BULK_MIN", 1)  # the one-pass read of many entries, on three
    root, idx = tmp_path / "c", tmp_path / "index.sqlite"
    paths = [write_entry(root, KeyKind.FX_GRAPH, k, fx_entry_bytes(f"L['t0'] <= {n}", k))
             for n, k in enumerate(fake_key(KeyKind.FX_GRAPH, s) for s in "abc")]
    time.sleep(TICK_S)  # not racily clean when read
    cat = Catalog(scan_cache(root), Index(idx))
    cat.read_ahead(cat.scan.entries())
    cat.index.close()
    racy = str(paths[2])  # its row's reading made racily clean: served, and proves nothing
    with sqlite3.connect(idx) as db:
        db.execute("UPDATE entries SET read_ns = ctime_ns WHERE path = ?", (racy,))
    db.close()
    entries = list(scan_cache(root).entries())
    from_table = Index(idx).proven(entries)  # nothing served: the table is read
    assert from_table == {str(p) for p in paths[:2]}
    index = Index(idx)  # not asked to remember (ls, match): nothing kept, the table is read
    assert len(list(index.get_many(entries))) == 3
    index._db = counting = _Counting(index._db)
    assert index.proven(entries) == from_table
    assert counting.n == 1
    index = Index(idx)
    index.remember_proof()
    assert len(list(index.get_many(entries))) == 3
    index._db = counting = _Counting(index._db)
    assert index.proven(entries) == from_table
    assert counting.n == 0  # answered from the pass that served the rows
    (again,) = [e for e in entries if e.file.where == racy]
    index.put(again, None, "corrupt: a new row", read_ns=time.time_ns())  # its row replaced
    assert index.proven(entries) == {str(p) for p in paths}  # the new row, read well after, proves
    assert counting.n == 1  # that one asked of the table again (where the new row is)
