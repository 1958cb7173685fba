"""A run's index rows are written in one transaction: another process reading the
index sees none of them while the run goes on, then all of them; a run stopped on
the way leaves the index as it was.

Rows for made-up files, 1,500 of them (past the 1,000 rows the index writes at a
time): how fxcache writes its own database is no torch behaviour.
"""

from __future__ import annotations

import sqlite3

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey, Entry, FileInfo
from fxcache_core.decode.origins import Origin
from fxcache_core.state.index import Index


def _rows(path) -> tuple[int, int] | None:
    """(entry rows, key origin rows) another process sees now; None: the writer holds
    the file locked (its transaction spilled to the file), so it sees none either."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0)
    try:
        return (db.execute("SELECT count(*) FROM entries").fetchone()[0],
                db.execute("SELECT count(*) FROM key_origins").fetchone()[0])
    except sqlite3.OperationalError as e:
        assert "locked" in str(e)
        return None
    finally:
        db.close()


def test_the_rows_of_a_run_are_one_transaction(tmp_path):
    idx_path = tmp_path / "index.sqlite"
    idx = Index(idx_path, tmp_path)
    origin = Origin("f", "/m.py", 3)
    for i in range(1500):
        where = f"{tmp_path}/fxgraph/aa/fk{i}/e{i}"
        e = Entry(KeyKind.FX_GRAPH, f"fk{i}", FileInfo(where, 10, 1.0, 1.0, 10**9, i + 1, 1, 10**9), 0)
        idx.put(e, None, "corrupt: not a pickle")
        idx.put_key_origin(CacheKey(KeyKind.FX_GRAPH, f"fk{i}", f"{tmp_path}/fxgraph/aa/fk{i}", (e,)), e, origin)
    assert _rows(idx_path) in (None, (0, 0))  # written, not committed: another reader sees none
    idx.close()
    assert _rows(idx_path) == (1500, 1500)
