"""fxcache's index dir does not grow without bound: the files of cache dirs that are
gone are dropped, and nothing else is ever touched (synthetic index files, no torch)."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from fxcache_core.state.index import Index, default_index_path, indexed_root, prune_index_dir


def _old(p, seconds=7200.0):
    t = time.time() - seconds
    os.utime(p, (t, t))


def test_making_an_index_drops_those_of_gone_cache_dirs_only(tmp_path, monkeypatch):
    idx = tmp_path / "idx"
    monkeypatch.setenv("FXCACHE_INDEX_DIR", str(idx))
    kept, gone, fresh_gone = (tmp_path / n for n in ("kept", "gone", "fresh-gone"))
    for d in (kept, gone, fresh_gone):
        d.mkdir()
        Index(default_index_path(d), d).close()
    for d in (kept, gone):
        _old(default_index_path(d))
    usage = default_index_path(gone).with_name(default_index_path(gone).name.replace("index-", "usage-"))
    usage.write_bytes(b"")  # fxcache explain's trace facts of the same cache dir
    gone.rmdir()
    fresh_gone.rmdir()  # its index was used within the hour: a run may be filling it
    (idx / "notes.txt").write_text("not fxcache's")
    foreign = idx / ("index-" + "0" * 32 + ".sqlite")  # fxcache's name, but not its cache dir's hash
    db = sqlite3.connect(foreign)
    db.execute("CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT)")
    db.execute("INSERT INTO meta VALUES ('root', ?)", (str(tmp_path / "nowhere"),))
    db.commit()
    db.close()
    _old(foreign)
    assert indexed_root(default_index_path(gone)) == str(gone)

    new = tmp_path / "new"
    new.mkdir()
    Index(default_index_path(new), new).close()  # a new index file: the others are pruned
    left = set(os.listdir(idx))
    assert default_index_path(gone).name not in left and usage.name not in left
    assert {default_index_path(d).name for d in (kept, fresh_gone, new)} <= left
    assert {"notes.txt", foreign.name} <= left


def test_an_index_made_before_it_recorded_its_cache_dir_is_told_by_its_entry_paths(tmp_path):
    import hashlib

    gone = tmp_path / "cache"  # never made: gone
    digest = hashlib.sha256(os.path.realpath(gone).encode()).hexdigest()[:32]
    path = tmp_path / f"index-{digest}.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE entries (path TEXT PRIMARY KEY, size INT, mtime_ns INT, ino INT, "
               "schema INT, sha TEXT, corrupt TEXT, body TEXT)")
    db.execute("INSERT INTO entries (path) VALUES (?)", (f"{os.path.realpath(gone)}/aotautograd/a{'q' * 51}/e",))
    db.commit()
    db.close()
    _old(path)
    assert indexed_root(path) == os.path.realpath(gone)
    assert prune_index_dir(tmp_path) == [path] and not path.exists()


def test_the_row_format_version_hashes_the_decoder_as_it_is_laid_out_now(tmp_path):
    """The index's version stamp must change with the code that decodes entries: it once
    hashed ``catalog/decode.py``, a file moved away, so a changed decoder kept old rows."""
    from fxcache_core.decode import entries, unpickler
    from fxcache_core.state import index, rows

    sources = index.fingerprint_sources()
    assert all(p.is_file() for p in sources)
    names = {p.resolve() for p in sources}
    assert {Path(entries.__file__).resolve(), Path(unpickler.__file__).resolve(),
            Path(index.__file__).resolve(), Path(rows.__file__).resolve()} <= names  # rows: the row's layout
    # A change in any of them changes the stamp.
    real = sources[0].read_bytes()
    fake = tmp_path / sources[0].name
    fake.write_bytes(real + b"\n# changed\n")
    import unittest.mock as mock

    with mock.patch.object(index, "fingerprint_sources", lambda: [fake, *sources[1:]]):
        assert index._fingerprint() != index.SCHEMA


def test_opening_the_index_again_writes_nothing_and_keeps_its_root(tmp_path, monkeypatch):
    monkeypatch.setenv("FXCACHE_INDEX_DIR", str(tmp_path / "idx"))
    cache = tmp_path / "cache"
    cache.mkdir()
    path = default_index_path(cache)
    Index(path, cache).close()
    _old(path)
    before = os.stat(path)
    Index(path, cache).close()  # a warm run's open: the root is recorded already
    after = os.stat(path)
    assert (after.st_mtime_ns, after.st_size) == (before.st_mtime_ns, before.st_size)
    assert indexed_root(path) == os.path.realpath(cache)
