"""Reading torch's mega-cache blobs and standalone_compile artifacts (fxcache_core.cache.blob,
fxcache_core.cache.standalone) on files written here.

Synthetic on purpose (fast tier, no torch): the writer below is torch 2.13's
``BytesWriter`` / ``_serialize_single_cache`` (torch/utils/_appending_byte_serializer.py,
torch/compiler/_cache.py) restated, so damaged and hostile blobs (truncated, a length
past the end, a huge declared length, an unknown type or version, a key that names a
path) can be made in a few bytes. A real blob saved by torch is read in
tests/torch/test_bundled.py.
"""

from __future__ import annotations

import base64
import zlib
from pathlib import Path

import pytest

from fxcache_core.cache.blob import BlobError, as_cache_dir, place_as_torch, read_blob
from fxcache_core.cache.keys import KeyKind, sha256_hash
from fxcache_core.cache.standalone import artifact_header, artifacts_below, read_artifact
from tests.synth import fake_key, fx_entry_bytes


def u64(n: int) -> bytes:
    return n.to_bytes(8, "big")


def text(s: str) -> bytes:
    b = base64.b64encode(s.encode())
    return u64(len(b)) + b


def record(kind: str, items: list[tuple[str, bytes]]) -> bytes:
    return text(kind) + u64(len(items)) + b"".join(text(k) + u64(len(c)) + c for k, c in items)


def blob_bytes(*records: bytes, version: int = 1, checksum: bool = True) -> bytes:
    body = u64(version) + b"".join(records)
    return (zlib.crc32(body) if checksum else 0).to_bytes(4, "big") + body


FX = fake_key(KeyKind.FX_GRAPH, "one")
AOT = fake_key(KeyKind.AOT_AUTOGRAD, "one")
ENTRY = fx_entry_bytes("L['t0'] >= 2", FX)


def write(tmp_path: Path, data: bytes) -> Path:
    p = tmp_path / "cache.bin"
    p.write_bytes(data)
    return p


def test_a_blob_lists_what_torch_loads_and_places_it_where_torch_writes_it(tmp_path):
    p = write(tmp_path, blob_bytes(record("inductor", [(FX, ENTRY)]), record("aot_autograd", [(AOT, b"a")]),
                                   record("pgo", [("code_state_x", b"p")])))
    b = read_blob(p)
    assert [(a.type, a.key, a.size) for a in b.artifacts] == [("inductor", FX, len(ENTRY)),
                                                             ("aot_autograd", AOT, 1), ("pgo", "code_state_x", 1)]
    assert place_as_torch(b, b.artifacts[0]) == ("fxgraph", FX[1:3], FX, sha256_hash(ENTRY))
    assert place_as_torch(b, b.artifacts[1]) == ("aotautograd", AOT, sha256_hash(b"a"))
    assert place_as_torch(b, b.artifacts[2]) == ("dynamo", "code_state_code_state_x.pkl")  # code_state_path
    root = as_cache_dir(b)
    assert (root / "fxgraph" / FX[1:3] / FX / sha256_hash(ENTRY)).read_bytes() == ENTRY
    assert sorted(str(x.relative_to(root)) for x in root.rglob("*") if x.is_file()) == sorted(
        [f"fxgraph/{FX[1:3]}/{FX}/{sha256_hash(ENTRY)}", f"aotautograd/{AOT}/{sha256_hash(b'a')}",
         "dynamo/code_state_code_state_x.pkl"])


def test_a_profile_is_placed_under_the_name_torch_gives_it_and_never_outside_its_dir(tmp_path):
    """torch's code_state_path makes each of <>:"/\\|?* of the name ``_``: a job id that
    names a path stays one file of ``dynamo/``."""
    b = read_blob(write(tmp_path, blob_bytes(record("pgo", [("../../job:None:", b"p")]))))
    root = as_cache_dir(b)
    assert [str(x.relative_to(root)) for x in root.rglob("*") if x.is_file()] == ["dynamo/code_state_.._.._job_None_.pkl"]


def test_an_autotune_key_is_read_as_torch_names_it_and_one_that_climbs_out_is_refused(tmp_path):
    """AutotuneCache names its artifact ``<dir>/<name>.best_config`` (torch joins it to its
    cache dir when it loads the blob): read, not placed; one that climbs out is damage."""
    ok = read_blob(write(tmp_path, blob_bytes(record("autotune", [("ab/c2k7x.best_config", b"{}")]))))
    assert [(a.type, a.key) for a in ok.artifacts] == [("autotune", "ab/c2k7x.best_config")]
    assert place_as_torch(ok, ok.artifacts[0]) is None
    for key in ("../../x.best_config", "/etc/x.best_config", "ab/../../x.best_config", "ab/c.py"):
        with pytest.raises(BlobError, match="an autotune key .* is not the name of a cache key"):
            read_blob(write(tmp_path, blob_bytes(record("autotune", [(key, b"{}")]))))


def test_of_two_records_of_one_type_only_the_last_is_loaded_as_torch_builds_a_dict(tmp_path):
    other = fake_key(KeyKind.FX_GRAPH, "two")
    b = read_blob(write(tmp_path, blob_bytes(record("inductor", [(FX, ENTRY)]),
                                             record("inductor", [(other, b"x")]))))
    assert [a.key for a in b.artifacts] == [other] and b.dropped == 1


@pytest.mark.parametrize(("data", "says"), [
    (blob_bytes(record("inductor", [(FX, ENTRY)]))[:-3], "checksum does not match"),
    (blob_bytes(record("inductor", [(FX, ENTRY)]), checksum=False), "checksum does not match"),
    (blob_bytes(text("inductor") + u64(1) + text(FX) + u64(100) + b"short"), "past the end"),
    (blob_bytes(text("inductor") + u64(1) + text(FX) + u64(1 << 62) + b"x" * 16), "over the"),
    (blob_bytes(text("inductor") + u64(1 << 60) + text(FX)), "more than the"),
    (blob_bytes(u64(1 << 40) + b"x" * 8), "over the"),
    (blob_bytes(text("inductor") + b"\0\0\0"), "runs past the end"),
    (blob_bytes(record("inductor", [("f../../../etc/passwd", b"x")])), "not the name of a cache key"),
    (blob_bytes(record("aot_autograd", [(FX, b"x")])), "not the name of a cache key"),
    (blob_bytes(u64(4) + b"!!!!"), "not base64"),
    (b"\0\0", "shorter than its header"),
], ids=["truncated", "checksum", "content-past-end", "huge-length", "huge-count", "huge-string",
        "count-past-end", "key-names-a-path", "aot-key-of-an-fx-key", "not-base64", "no-header"])
def test_a_damaged_blob_is_refused_naming_what_is_wrong(tmp_path, data, says):
    with pytest.raises(BlobError, match="damaged blob") as e:
        read_blob(write(tmp_path, data))
    assert says in str(e.value) and "\n" not in str(e.value)


def test_an_unknown_version_or_artifact_type_is_named_and_refused(tmp_path):
    with pytest.raises(BlobError, match="unknown blob encoding version 2"):
        read_blob(write(tmp_path, blob_bytes(record("inductor", [(FX, ENTRY)]), version=2)))
    with pytest.raises(BlobError, match="unknown artifact type triton_bundle"):
        read_blob(write(tmp_path, blob_bytes(record("triton_bundle", [("k", b"x")]))))


def standalone_bytes(header: bytes, blob: bytes, trailing: bytes = b"") -> bytes:
    """``CacheCompiledArtifact.save(format="binary")``'s record (torch/_inductor/standalone_compile.py)."""
    body = (u64(len(header)) + header + u64(32) + b"k" * 32 + text(AOT) + u64(len(blob)) + blob + trailing)
    return zlib.crc32(body).to_bytes(4, "big") + body


def test_a_standalone_artifact_is_read_as_the_blob_it_carries(tmp_path):
    inner = blob_bytes(record("inductor", [(FX, ENTRY)]))
    p = write(tmp_path, standalone_bytes(b"CacheCompiledArtifact", inner))
    assert artifact_header(p) == b"CacheCompiledArtifact"
    b = read_artifact(p)
    assert [(a.type, a.key) for a in b.artifacts] == [("inductor", FX)]
    assert p.read_bytes()[b.artifacts[0].offset:][:len(ENTRY)] == ENTRY
    assert artifacts_below(tmp_path) == [p]


@pytest.mark.parametrize(("data", "says"), [
    (standalone_bytes(b"AOTCompiledArtifact", b""), "holds a pickled callable"),
    (standalone_bytes(b"Mystery", b""), "unknown standalone artifact header 'Mystery'"),
    (standalone_bytes(b"CacheCompiledArtifact", blob_bytes(record("inductor", [(FX, ENTRY)])), b"x"),
     "1 bytes after the blob"),
    (standalone_bytes(b"CacheCompiledArtifact", blob_bytes(record("inductor", [(FX, ENTRY)])))[:-1],
     "checksum does not match"),
    (standalone_bytes(b"CacheCompiledArtifact", blob_bytes(record("inductor", [(FX, ENTRY)]))[:-1]),
     "damaged blob"),
], ids=["aot-artifact", "unknown-header", "trailing-bytes", "truncated", "damaged-inner-blob"])
def test_a_damaged_or_unknown_standalone_artifact_is_refused(tmp_path, data, says):
    with pytest.raises(BlobError, match=says):
        read_artifact(write(tmp_path, data))


def test_what_a_trace_explained_for_a_blob_is_found_on_its_next_read(tmp_path, monkeypatch):
    """Each read lays a blob out in a temp dir of its own; the usage store (the guards
    ``explain`` keeps for ``match``) is the blob path's, not the temp dir's."""
    from fxcache_core.state.usage import UsageStore, recorded_constants, usage_path

    monkeypatch.setenv("FXCACHE_INDEX_DIR", str(tmp_path / "index"))
    p = write(tmp_path, blob_bytes(record("inductor", [(FX, ENTRY)])))
    first, second = as_cache_dir(read_blob(p)), as_cache_dir(read_blob(p))
    assert first != second and usage_path(first) == usage_path(second) == usage_path(p)
    store = UsageStore(usage_path(first))
    assert store.record_constants({AOT: [{"#all-guards": True}]}) == 1
    store.close()
    assert recorded_constants(second) == {AOT: ({"#all-guards": True},)}
