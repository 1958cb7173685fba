"""``fxcache pack`` / ``unpack`` on synthetic caches and tampered archives (no torch).

Synthetic on purpose: each archive here is a pack fxcache wrote, then altered the
way an attacker or a damaged copy would alter it (a changed byte, an extra member,
a path that escapes, a link, a device, a size bomb, a manifest that lies), which no
real run produces. Each must be refused with one line and exit 2, and nothing may be
written under the target cache dir (it must not even be created). The closure rules
are checked against a synthetic FX entry whose pickled wrapper source names a C++
kernel, laid out as torch 2.13 lays out its generated code (the real-cache proof with
torch's own lookup is tests/torch/test_pack.py).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import tarfile
from pathlib import Path

import pytest

from fxcache_core.cache.keys import KeyKind, sha256_hash
from fxcache_core.pack.manifest import MANIFEST_NAME
from tests.helpers import run_fxcache
from tests.synth import aot_entry_bytes, fake_key, stub_pickle, write_entry

KERNEL = "#include <cpp_prefix.h>\nextern \"C\" void kernel(float* out) {\n    out[0] = 1.0f;  // a real kernel is longer\n}\n"
WRAPPER_KEY = "c" + sha256_hash(b"wrapper")
LIB_KEY = "c" + sha256_hash(b"lib")
OTHER_KEY = "c" + sha256_hash(b"other")


def _code_path(root: Path, key: str, ext: str) -> Path:
    p = root / key[1:3] / f"{key}{ext}"
    p.parent.mkdir(parents=True, exist_ok=True)
    return p


def _wrapper_source() -> str:
    return ("from torch._inductor.async_compile import AsyncCompile\nasync_compile = AsyncCompile()\n"
            f"cpp_fused_0 = async_compile.cpp_pybinding(['float*'], r'''{KERNEL}''')\n"
            "async_compile.wait(globals())\n")


def make_cache(root: Path) -> dict[str, Path]:
    """An FX entry (forward of an AOTAutograd entry) whose wrapper names one C++ kernel;
    its library, wrapper module and C++ source; an unrelated library and a lock."""
    fx_key = fake_key(KeyKind.FX_GRAPH, "fw")
    fx = stub_pickle("torch._inductor.output_code", "CompiledFxGraph", {
        "guards_expr": "L['x'].size()[0] >= 2" and None, "_fx_graph_cache_key": fx_key,
        "_fx_graph_cache_debug_lines": ["[aaaa] example_inputs[0]: ('s0',)", "[tvh] torch_version: b'x'",
                                        "[sysh] system_info[hash]: 44136fa3"],
        "fx_kwargs": {"is_backward": False}, "cache_key": WRAPPER_KEY, "source_code": _wrapper_source()})
    paths = {"fx": write_entry(root, KeyKind.FX_GRAPH, fx_key, fx)}
    aot_key = fake_key(KeyKind.AOT_AUTOGRAD, "aot")
    paths["aot"] = write_entry(root, KeyKind.AOT_AUTOGRAD, aot_key, aot_entry_bytes(None, (fx_key, None)))
    paths["wrapper"] = _code_path(root, WRAPPER_KEY, ".py")
    paths["wrapper"].write_text(_wrapper_source())
    paths["cpp"] = _code_path(root, LIB_KEY, ".main.cpp")
    paths["cpp"].write_text(KERNEL + "\n// the binding suffix torch appends\n")
    paths["lib"] = _code_path(root, LIB_KEY, ".main.so")
    paths["lib"].write_bytes(b"\x7fELF" + bytes(range(256)) * 40)
    paths["other"] = _code_path(root, OTHER_KEY, ".so")
    paths["other"].write_bytes(b"\x7fELF not needed")
    (root / "locks").mkdir()
    (root / "locks" / f"{LIB_KEY}.lock").write_text("")
    return paths


@pytest.fixture
def packed(tmp_path: Path) -> tuple[Path, Path]:
    cache = tmp_path / "cache"
    make_cache(cache)
    pack = tmp_path / "p.tar.gz"
    r = run_fxcache("--cache-dir", str(cache), "pack", "--all", str(pack))
    assert r.returncode == 0, r.stderr
    return cache, pack


def _members(pack: Path) -> list[tuple[tarfile.TarInfo, bytes]]:
    with tarfile.open(pack, "r:gz") as t:
        return [(ti, t.extractfile(ti).read() if ti.isreg() else b"") for ti in t.getmembers()]


def _write(path: Path, members: list[tuple[tarfile.TarInfo, bytes]], fmt: int = tarfile.USTAR_FORMAT) -> Path:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as t:
        for ti, data in members:
            ti.size = len(data) if ti.isreg() else 0
            t.addfile(ti, io.BytesIO(data) if ti.isreg() else None)
    path.write_bytes(gzip.compress(buf.getvalue(), compresslevel=1, mtime=0))
    return path


def _manifest(members: list[tuple[tarfile.TarInfo, bytes]]) -> dict:
    assert members[0][0].name == MANIFEST_NAME
    return json.loads(members[0][1])


def _with_manifest(members, doc) -> list:
    data = json.dumps(doc).encode()
    return [(members[0][0], data)] + members[1:]


def test_pack_takes_the_entries_and_what_they_need_nothing_else(packed):
    cache, pack = packed
    names = [ti.name for ti, _ in _members(pack)]
    assert names[0] == MANIFEST_NAME
    kinds = {m["path"].rsplit("/", 1)[-1]: m["kind"] for m in _manifest(_members(pack))["members"]}
    assert kinds[f"{LIB_KEY}.main.so"] == "library"
    assert kinds[f"{WRAPPER_KEY}.py"] == "wrapper"
    assert kinds[f"{LIB_KEY}.main.cpp"] == "source"  # what ties the library to its entry
    assert sorted(kinds.values()) == ["aot", "fx", "library", "source", "wrapper"]  # no lock, other library
    assert names[1:] == sorted(names[1:])


def test_an_aot_entry_brings_its_fx_entry_and_the_fx_entry_its_kernel(tmp_path):
    cache = tmp_path / "cache"
    paths = make_cache(cache)
    aot_key = paths["aot"].parent.name
    r = run_fxcache("--cache-dir", str(cache), "pack", "--key", aot_key, "--dry-run", "--json")
    assert r.returncode == 0, r.stderr
    got = {m["path"] for m in json.loads(r.stdout)["manifest"]["members"]}
    want = {str(paths[k].relative_to(cache)) for k in ("aot", "fx", "wrapper", "lib", "cpp")}
    assert got == want


def test_the_same_selection_gives_the_same_bytes(packed, tmp_path):
    cache, pack = packed
    again = tmp_path / "again.tar.gz"
    assert run_fxcache("--cache-dir", str(cache), "pack", "--all", str(again)).returncode == 0
    assert again.read_bytes() == pack.read_bytes()
    for ti, _ in _members(pack):
        assert (ti.mtime, ti.uid, ti.gid, ti.uname, ti.gname, ti.mode) == (0, 0, 0, "", "", 0o644)


def test_unpack_writes_every_member_then_skips_identical_and_keeps_different(packed, tmp_path):
    cache, pack = packed
    dst = tmp_path / "dst"
    r = run_fxcache("--cache-dir", str(dst), "unpack", str(pack), "--json")
    assert r.returncode == 0, r.stderr
    listed = _manifest(_members(pack))["members"]
    for m in listed:
        assert hashlib.sha256((dst / m["path"]).read_bytes()).hexdigest() == m["sha256"]
    assert not [p for p in dst.rglob(".*")]  # no temp file left
    r = run_fxcache("--cache-dir", str(dst), "unpack", str(pack), "--json")
    assert json.loads(r.stdout)["identical"] == len(listed) and json.loads(r.stdout)["added"] == []
    lib = dst / LIB_KEY[1:3] / f"{LIB_KEY}.main.so"
    lib.write_bytes(b"built here")
    r = run_fxcache("--cache-dir", str(dst), "unpack", str(pack))
    assert r.returncode == 1 and "not overwritten" in r.stdout + r.stderr
    assert lib.read_bytes() == b"built here"


def test_a_link_on_the_way_in_the_target_is_not_followed(packed, tmp_path):
    cache, pack = packed
    dst, victim = tmp_path / "dst", tmp_path / "victim"
    dst.mkdir()
    victim.mkdir()
    (dst / "fxgraph").symlink_to(victim)
    r = run_fxcache("--cache-dir", str(dst), "unpack", str(pack))
    assert r.returncode == 1, r.stderr  # the entry under the link is a conflict: reported, not written
    assert "not a directory on the way" in r.stdout + r.stderr
    assert list(victim.iterdir()) == []
    assert (dst / LIB_KEY[1:3] / f"{LIB_KEY}.main.so").is_file()  # the rest went in


def _changed_byte(members):
    ti, data = members[2]
    return members[:2] + [(ti, data[:10] + bytes([data[10] ^ 1]) + data[11:])] + members[3:]


def _extra_member(members):
    return members + [(tarfile.TarInfo("ab/cabcdefghijklmnopqrstuvwxyz234567abcdefghijklmnopqrstu.so"), b"x")]


def _escaping_path(members):
    doc = _manifest(members)
    doc["members"].insert(0, {"path": "../escape", "size": 1, "sha256": hashlib.sha256(b"x").hexdigest(),
                              "kind": "library"})
    return _with_manifest(members, doc) + [(tarfile.TarInfo("../escape"), b"x")]


def _absolute_path(members):
    return members + [(tarfile.TarInfo("/tmp/fxcache-abs"), b"x")]


def _symlink_member(members):
    ti, _ = members[-1]
    link = tarfile.TarInfo(ti.name)
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    return members[:-1] + [(link, b"")]


def _hardlink_member(members):
    ti, _ = members[-1]
    link = tarfile.TarInfo(ti.name)
    link.type, link.linkname = tarfile.LNKTYPE, members[0][0].name
    return members[:-1] + [(link, b"")]


def _device_member(members):
    ti, _ = members[-1]
    dev = tarfile.TarInfo(ti.name)
    dev.type, dev.devmajor, dev.devminor = tarfile.CHRTYPE, 1, 3
    return members[:-1] + [(dev, b"")]


def _size_bomb(members):
    ti, data = members[-1]
    return members[:-1] + [(ti, data + bytes(50 << 20))]  # 50 MB of zeros: 50 kB compressed


def _honest_bomb(members):
    """Manifest, header and sha256 all agree on 80 MiB of zeros (a few hundred kB compressed)."""
    data = bytes(80 << 20)
    doc = _manifest(members)
    m = doc["members"][-1]
    m["size"], m["sha256"] = len(data), hashlib.sha256(data).hexdigest()
    out = _with_manifest(members, doc)
    return out[:-1] + [(out[-1][0], data)]


def _manifest_size_lies(members):
    doc = _manifest(members)
    doc["members"][-1]["size"] += 1
    return _with_manifest(members, doc)


def _manifest_kind_lies(members):
    doc = _manifest(members)
    fx = next(m for m in doc["members"] if m["kind"] == "fx")
    fx["kind"] = "library"
    return _with_manifest(members, doc)


def _manifest_sha_matches_altered_entry(members):
    """The entry's bytes changed and the manifest's sha256 made to agree: the entry's
    name is no longer torch's hash of its content."""
    doc = _manifest(members)
    i = next(i for i, (ti, _) in enumerate(members) if ti.name.startswith("fxgraph/"))
    ti, data = members[i]
    data = data + b"."
    listed = next(m for m in doc["members"] if m["path"] == ti.name)
    listed["sha256"], listed["size"] = hashlib.sha256(data).hexdigest(), len(data)
    out = _with_manifest(members, doc)
    out[i] = (ti, data)
    return out


def _member_missing(members):
    return members[:-1]


def _member_twice(members):
    return members + [members[-1]]


def _manifest_not_first(members):
    return members[1:] + members[:1]


def _pax_bomb(members):
    ti = tarfile.TarInfo("ab/cabcdefghijklmnopqrstuvwxyz234567abcdefghijklmnopqrstu.so")
    ti.pax_headers = {"comment": "x" * (8 << 20)}  # past what the manifest allows for headers
    return members[:1] + [(ti, b"x")] + members[1:]  # read (capped) before any other member


TAMPERS = [_changed_byte, _extra_member, _escaping_path, _absolute_path, _symlink_member, _hardlink_member,
           _device_member, _manifest_size_lies, _manifest_kind_lies,
           _manifest_sha_matches_altered_entry, _member_missing, _member_twice, _manifest_not_first]
BOMBS = [_size_bomb, _honest_bomb, _pax_bomb]
WHY = {_changed_byte: "sha256 (altered)", _extra_member: "not listed in the manifest",
       _escaping_path: "not a plain relative path", _absolute_path: "not listed in the manifest",
       _symlink_member: "is a symlink", _hardlink_member: "is a hard link", _device_member: "is a device",
       _manifest_size_lies: "the manifest says", _manifest_kind_lies: "is not where torch keeps",
       _manifest_sha_matches_altered_entry: "not named by the hash of its content",
       _member_missing: "the archive lacks", _member_twice: "appears twice",
       _manifest_not_first: "first member of the archive is not the manifest",
       _size_bomb: "the manifest says", _honest_bomb: "compression bomb",
       _pax_bomb: "more data than its manifest lists"}
"""The check each tamper must be caught by (so none passes for another reason)."""
"""Slower to build (tens of MB): unpack only (--dry-run reads the archive the same way)."""


@pytest.mark.parametrize(("tamper", "dry_run"), [(t, d) for t in TAMPERS for d in (False, True)]
                         + [(b, False) for b in BOMBS],
                         ids=lambda v: ("dry-run" if v else "unpack") if isinstance(v, bool) else v.__name__.strip("_"))
def test_a_tampered_pack_is_refused_in_one_line_and_nothing_is_written(packed, tmp_path, tamper, dry_run):
    _, pack = packed
    bad = _write(tmp_path / "bad.tar.gz", tamper(_members(pack)),
                 tarfile.PAX_FORMAT if tamper is _pax_bomb else tarfile.USTAR_FORMAT)
    dst = tmp_path / "dst"
    r = run_fxcache("--cache-dir", str(dst), "unpack", *(["--dry-run"] if dry_run else []), str(bad))
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr
    assert WHY[tamper] in r.stderr
    assert not dst.exists()
    assert not (tmp_path / "fxcache-abs").exists() and not (tmp_path / "escape").exists()


def test_a_file_that_is_not_an_archive_is_one_line(tmp_path):
    bad = tmp_path / "x.tar.gz"
    bad.write_bytes(os.urandom(2000))
    r = run_fxcache("--cache-dir", str(tmp_path / "dst"), "unpack", str(bad))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "dst").exists()


def test_pack_and_unpack_never_need_torch(packed, tmp_path):
    cache, _ = packed
    pack = tmp_path / "blocked.tar.gz"
    r = run_fxcache("--cache-dir", str(cache), "pack", "--all", str(pack), block_torch=True)
    assert r.returncode == 0, r.stderr
    r = run_fxcache("--cache-dir", str(tmp_path / "dst"), "unpack", str(pack), block_torch=True)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "dst" / LIB_KEY[1:3] / f"{LIB_KEY}.main.so").is_file()


def test_a_pack_that_cannot_be_written_is_one_line(packed, tmp_path):
    cache, _ = packed
    for out in (tmp_path, tmp_path / "no-such-dir" / "p.tar.gz"):
        r = run_fxcache("--cache-dir", str(cache), "pack", "--all", str(out))
        assert r.returncode == 2 and r.stderr.startswith("fxcache: error: cannot write the pack"), r.stderr
        assert len(r.stderr.strip().splitlines()) == 1
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_a_symlinked_file_in_the_cache_is_left_out_with_a_reason_never_followed(tmp_path):
    cache = tmp_path / "cache"
    paths = make_cache(cache)
    secret = tmp_path / "secret"
    secret.write_bytes(b"not for the pack")
    paths["lib"].unlink()
    paths["lib"].symlink_to(secret)
    r = run_fxcache("--cache-dir", str(cache), "pack", "--all", "--dry-run", "--json")
    assert r.returncode == 0, r.stderr
    plan = json.loads(r.stdout)
    assert [x["code"] for x in plan["left_out"]] == ["kernel-library-missing"]
    assert {m["kind"] for m in plan["manifest"]["members"]} == {"fx", "aot", "wrapper"}


def test_a_file_that_cannot_be_read_is_left_out_with_a_reason(tmp_path, monkeypatch):
    """The read fails between the scan and the hash (a file removed, or unreadable: as
    root nothing is, so the failure is made by hand)."""
    from fxcache_core.cache.scan import scan_cache
    from fxcache_core.catalog.reader import Catalog
    from fxcache_core.pack import select
    from fxcache_core.pack.manifest import PackError

    cache = tmp_path / "cache"
    paths = make_cache(cache)
    real = select._hash

    def failing(where: str, *rest):
        if where == str(paths["wrapper"]):
            raise PackError(f"cannot read {where}: Permission denied")
        return real(where, *rest)

    monkeypatch.setattr(select, "_hash", failing)
    plan = select.plan_pack(Catalog(scan_cache(cache)), everything=True)
    assert [r.code for r in plan.left_out] == ["unreadable-file"]
    assert {m.kind for m in plan.manifest.members} == {"fx", "aot", "library", "source"}
