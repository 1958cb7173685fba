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
from tests.unit.test_blob import blob_bytes, record, standalone_bytes, text, u64

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


def _one_line_exit_2(proc, says: str) -> None:
    assert proc.returncode == 2 and says in proc.stderr, (proc.returncode, proc.stderr)
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr


@pytest.mark.parametrize(("data", "says"), [
    (blob_bytes(text("inductor") + u64(1 << 62) + text(FX) + u64(3) + b"abc"), "4,611,686,018,427,387,904 inductor"),
    (standalone_bytes(b"CacheCompiledArtifact", standalone_bytes(b"CacheCompiledArtifact", blob_bytes(
        record("inductor", [(FX, fx_entry_bytes(None, FX))])))), "unknown blob encoding version 21"),
    (blob_bytes(record("autotune", [("../../../home/x/.bashrc.best_config", b"{}")])), "an autotune key"),
], ids=["header-claims-a-huge-count", "artifact-inside-an-artifact", "autotune-key-climbs-out"])
def test_a_hostile_header_or_key_is_refused_as_it_is_parsed(tmp_path, data, says):
    """Refused while the records are read, before any content is looked at (the bounds of
    that path: test_a_damaged_blob_is_one_line_and_exit_2_within_bounds). An autotune key
    is joined to the cache dir by torch's loader: one that climbs out is never read as a key."""
    blob = tmp_path / "cache.bin"
    blob.write_bytes(data)
    _one_line_exit_2(run_fxcache("--cache-dir", str(blob), "ls", env={"FXCACHE_NO_INDEX": "1"}), says)


def _deep_pickle(depth: int) -> bytes:
    """A pickle of ``depth`` lists, each inside the one before (protocol 4: EMPTY_LIST
    ``depth`` times, then APPEND as many): a few bytes a level, no global."""
    return b"\x80\x04" + b"]" * depth + b"a" * depth + b"."


@pytest.mark.parametrize(("content", "says"), [
    (_deep_pickle(300_000), "cannot be read"),
    (None, "a saved profile of the blob"),
], ids=["entry-nested-300k-deep", "profile-names-os-system"])
def test_a_blob_whose_records_hold_hostile_pickles_is_one_line_and_exit_2_within_bounds(tmp_path, content, says):
    """An FX entry of lists nested 300,000 deep; a saved profile (a ``pgo`` record, which
    ``unpack`` does not install but torch's ``load_cache_artifacts`` writes where Dynamo
    unpickles it) naming ``os.system``. ``unpack`` refuses either: one line, exit 2,
    nothing written, nothing run; ``verify`` names the profile's global."""
    marker = tmp_path / "ran"
    good = record("inductor", [(FX, fx_entry_bytes(None, FX))])
    if content is None:
        data = blob_bytes(good, record("pgo", [("job:None:", stub_pickle("os", "system", {"cmd": f"touch {marker}"}))]))
    else:
        data = blob_bytes(record("inductor", [(FX, content)]))
    blob, target = tmp_path / "cache.bin", tmp_path / "target"
    blob.write_bytes(data)
    r = run_measured([sys.executable, "-m", "fxcache_cli", "--cache-dir", str(target), "unpack", str(blob)],
                     env={"FXCACHE_NO_INDEX": "1", "NO_COLOR": "1"}, timeout=120)
    _one_line_exit_2(r, says)
    assert r.cpu < CPU_LIMIT_S and r.maxrss_kb < RSS_LIMIT_KB, r
    assert not target.exists() and not marker.exists()
    if content is None:
        checked = run_fxcache("--cache-dir", str(blob), "verify", env={"FXCACHE_NO_INDEX": "1"})
        assert checked.returncode == 1 and "os.system" in checked.stdout, checked
        assert f"bad profile dynamo/code_state_job_None_.pkl in {blob} (torch blob)" in checked.stdout, checked.stdout
        assert not marker.exists()


def test_a_vllm_dir_reads_no_artifact_through_a_link_and_survives_a_cycle(tmp_path):
    """vLLM's layout is searched without following links: an artifact linked in from
    outside, a dir linked in from outside and a link back up (a cycle) are not read; a
    dir whose only artifacts are links is not a cache (one line, exit 2)."""
    outside = tmp_path / "outside"
    (outside / "more").mkdir(parents=True)
    other = fake_key(KeyKind.FX_GRAPH, "outside")
    art = standalone_bytes(b"CacheCompiledArtifact", blob_bytes(record("inductor", [(other, fx_entry_bytes(None, other))])))
    (outside / "artifact").write_bytes(art)
    (outside / "more" / "artifact").write_bytes(art)
    rank = tmp_path / "cache" / "torch_compile_cache" / "h0" / "rank_0_0" / "backbone"
    rank.mkdir(parents=True)
    (rank / "artifact_0").write_bytes(standalone_bytes(b"CacheCompiledArtifact", blob_bytes(
        record("inductor", [(FX, fx_entry_bytes(None, FX))]))))
    (rank / "artifact_1").symlink_to(outside / "artifact")
    (rank / "linked").symlink_to(outside / "more", target_is_directory=True)
    (rank / "loop").symlink_to(tmp_path / "cache", target_is_directory=True)
    listed = run_fxcache("--cache-dir", str(tmp_path / "cache"), "ls", env={"FXCACHE_NO_INDEX": "1"})
    assert listed.returncode == 0 and FX in listed.stdout and other not in listed.stdout, listed
    (rank / "artifact_0").unlink()
    _one_line_exit_2(run_fxcache("--cache-dir", str(tmp_path / "cache"), "ls", env={"FXCACHE_NO_INDEX": "1"}),
                     "does not look like an Inductor cache dir")
