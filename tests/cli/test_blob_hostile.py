"""Damaged and hostile torch blobs given to the CLI: one line, exit 2, nothing written.

Synthetic on purpose (fast tier, no torch): torch writes only well-formed blobs; an
attacker or a cut download writes these (the writer is tests/unit/test_blob.py's,
torch 2.13's format restated). The costly cases run in a fresh process, measured:
under 2 s of CPU and 300 MB.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fxcache_core.cache.keys import KeyKind
from tests.cli_run import run_measured
from tests.helpers import run_fxcache
from tests.synth import fake_key, fx_entry_bytes, stub_pickle
from tests.unit.test_blob import blob_bytes, record, text, u64

CPU_LIMIT_S = 2.0
RSS_LIMIT_KB = 300 * 1024
FX = fake_key(KeyKind.FX_GRAPH, "hostile")


@pytest.mark.parametrize(("data", "says"), [
    (blob_bytes(record("inductor", [(FX, fx_entry_bytes(None, FX))]))[:-40], "damaged blob"),
    (blob_bytes(text("inductor") + u64(1) + text(FX) + u64((1 << 64) - 1) + b"x" * 64), "over the"),
    (blob_bytes(text("inductor") + u64(1) + text(FX) + u64(1 << 20) + b"x" * 64), "past the end"),
    (blob_bytes(record("mystery", [("k", b"x")])), "unknown artifact type mystery"),
    (blob_bytes(record("inductor", [(FX, b"x")]), version=7), "unknown blob encoding version 7"),
], ids=["truncated", "huge-length", "length-past-end", "unknown-type", "unknown-version"])
def test_a_damaged_blob_is_one_line_and_exit_2_within_bounds(tmp_path, data, says):
    blob = tmp_path / "cache.bin"
    blob.write_bytes(data)
    r = run_measured([sys.executable, "-m", "fxcache_cli", "--cache-dir", str(blob), "ls"],
                     env={"FXCACHE_NO_INDEX": "1", "NO_COLOR": "1"}, timeout=120)
    assert r.returncode == 2 and says in r.stderr and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r
    assert r.cpu < CPU_LIMIT_S and r.maxrss_kb < RSS_LIMIT_KB, r


def test_unpack_of_a_damaged_blob_writes_nothing(tmp_path):
    blob = tmp_path / "cache.bin"
    blob.write_bytes(blob_bytes(record("inductor", [(FX, fx_entry_bytes(None, FX))]))[:-1])
    proc = run_fxcache("--cache-dir", str(tmp_path / "target"), "unpack", str(blob))
    assert proc.returncode == 2 and "damaged blob" in proc.stderr and proc.stderr.count("\n") == 1
    assert not (tmp_path / "target").exists()


def test_a_blob_entry_naming_a_foreign_global_is_never_run_and_never_installed(tmp_path):
    marker = tmp_path / "ran"
    evil = stub_pickle("os", "system", {"cmd": f"touch {marker}"})
    blob = tmp_path / "cache.bin"
    blob.write_bytes(blob_bytes(record("inductor", [(FX, evil)])))
    listed = run_fxcache("--cache-dir", str(blob), "verify")
    assert listed.returncode == 1 and "bad fx" in listed.stdout
    proc = run_fxcache("--cache-dir", str(tmp_path / "target"), "unpack", str(blob))
    assert proc.returncode == 2 and "cannot be read" in proc.stderr and proc.stderr.count("\n") == 1
    assert not (tmp_path / "target").exists() and not marker.exists()


def test_gc_refuses_a_blob(tmp_path):
    blob = tmp_path / "cache.bin"
    blob.write_bytes(blob_bytes(record("inductor", [(FX, fx_entry_bytes(None, FX))])))
    proc = run_fxcache("--cache-dir", str(blob), "gc", "--yes")
    assert proc.returncode == 2 and "is a torch blob" in proc.stderr
    assert Path(blob).read_bytes()[:4]  # the blob is left as it was


def test_reading_a_blob_leaves_no_index_behind(tmp_path):
    """A blob is laid out in a new temp dir each run: an index of it would be a new file
    each run, never read again."""
    blob, index = tmp_path / "cache.bin", tmp_path / "index"
    blob.write_bytes(blob_bytes(record("inductor", [(FX, fx_entry_bytes(None, FX))])))
    index.mkdir()
    for args in (("ls",), ("df",), ("audit",)):
        proc = run_fxcache("--cache-dir", str(blob), *args, env={"FXCACHE_INDEX_DIR": str(index)})
        assert proc.returncode == 0, proc.stderr
    assert FX in run_fxcache("--cache-dir", str(blob), "ls").stdout
    assert list(index.iterdir()) == []
