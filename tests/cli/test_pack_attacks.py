"""``fxcache unpack`` (and ``pack``) under attack: the classes test_pack_hostile.py does not cover.

Synthetic on purpose (fast tier, no torch): every archive here is a pack fxcache wrote
from the synthetic cache of test_pack_hostile.py, then altered at the tar, gzip or
manifest level as an attacker would (a member hidden past the end-of-archive marker, an
appended archive, a manifest of the wrong shape or size, a FIFO given as the pack...),
or a target cache dir laid out as no real run lays it out (links and files where dirs
go, a dir planted mid-way, a link that fails). Each must give one line and exit 2 with
nothing written anywhere under the test's dir (the whole tree is compared, temp files
included), or, where the archive is sound and only the target is odd, write only what
the pack lists. Costs are bounded as the other hostile tests bound them (tests.cli_run.run_measured).
"""

from __future__ import annotations

import errno
import gzip
import hashlib
import io
import json
import os
import stat
import sys
import tarfile
from pathlib import Path

import pytest

from fxcache_core.pack import install
from fxcache_core.pack.manifest import MANIFEST_NAME, PackError
from tests.cli import test_pack_hostile
from tests.cli.test_pack_hostile import _manifest, _members, _with_manifest, make_cache
from tests.cli_run import run_measured
from tests.helpers import run_fxcache, run_module

RSS_LIMIT_KB = 300 * 1024
packed = test_pack_hostile.packed  # the fixture: that cache and a pack of all of it
UNLISTED = "ab/cabcdefghijklmnopqrstuvwxyz234567abcdefghijklmnopqrstu.so"


def _tar(members: list, fmt: int = tarfile.USTAR_FORMAT, **kw) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt, **kw) as t:
        for ti, data in members:
            if ti.isreg():
                ti.size = len(data)
            t.addfile(ti, io.BytesIO(data) if ti.isreg() else None)
    return buf.getvalue()


def _gz(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=1, mtime=0)


def _info(name: str, kind: bytes = tarfile.REGTYPE, **attrs) -> tarfile.TarInfo:
    ti = tarfile.TarInfo(name)
    ti.type = kind
    for k, v in attrs.items():
        setattr(ti, k, v)
    return ti


def _raw_manifest(ms: list, text: bytes) -> bytes:
    return _gz(_tar([(ms[0][0], text)] + ms[1:]))


def _doc(ms: list, change) -> bytes:
    doc = _manifest(ms)
    change(doc)
    return _gz(_tar(_with_manifest(ms, doc)))


def _tree(root: Path) -> dict[str, tuple[int, int, int]]:
    """Every path under ``root`` (links not followed) -> (mode, size, mtime): what a run wrote."""
    out = {}
    for dirpath, dirs, files in os.walk(root):
        for n in dirs + files:
            st = os.lstat(os.path.join(dirpath, n))
            out[os.path.join(dirpath, n)] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return out


def _set_header_size(raw: bytes, index: int, size: int) -> bytes:
    """The tar ``raw`` with the ``index``-th header's size field changed (checksum made good)."""
    b, off = bytearray(raw), 0
    for _ in range(index):
        hsize = int(bytes(b[off + 124:off + 136]).rstrip(b"\0 ") or b"0", 8)
        off += 512 + (hsize + 511) // 512 * 512
    b[off + 124:off + 136] = b"%011o\0" % size
    b[off + 148:off + 156] = b" " * 8
    b[off + 148:off + 156] = b"%06o\0 " % sum(b[off:off + 512])
    return bytes(b)


def _bad_checksum(raw: bytes, index: int) -> bytes:
    """The tar ``raw`` with the ``index``-th header's checksum off by one: tarfile reads
    a bad header past the first as the end of the archive."""
    b, off = bytearray(raw), 0
    for _ in range(index):
        off += 512 + (int(bytes(b[off + 124:off + 136]).rstrip(b"\0 ") or b"0", 8) + 511) // 512 * 512
    b[off + 148] ^= 1
    return bytes(b)


ATTACKS = {
    # gzip and tar framing
    "member past the end-of-archive marker": (
        lambda ms: _gz(_tar(ms) + _tar([(_info(UNLISTED), b"evil")])), "after its end-of-archive marker"),
    "a second gzip'ed tar appended": (
        lambda ms: _gz(_tar(ms)) + _gz(_tar([(_info(UNLISTED), b"evil")])), "after its end-of-archive marker"),
    "garbage after the gzip stream": (lambda ms: _gz(_tar(ms)) + b"GARBAGE" * 9, "Not a gzipped file"),
    "gzip cut short": (lambda ms: _gz(_tar(ms))[:300], "not a pack"),
    "tar cut inside a member": (lambda ms: _gz(_tar(ms)[:4000]), "damaged"),
    "an empty file": (lambda ms: b"", "not a pack"),
    "gzip of nothing": (lambda ms: _gz(b""), "not a pack"),
    "zeros only": (lambda ms: _gz(bytes(1 << 16)), "first member of the archive is not the manifest"),
    "a gzip inside a gzip": (lambda ms: _gz(_gz(_tar(ms))), "not a pack"),
    "the manifest's header size lies": (lambda ms: _gz(_set_header_size(_tar(ms), 0, 100)), "not a JSON object"),
    "a damaged header mid-way": (lambda ms: _gz(_bad_checksum(_tar(ms), 2)), "a damaged header read as the end"),
    # member headers
    "a global pax header": (lambda ms: _gz(_tar(ms, tarfile.PAX_FORMAT, pax_headers={"path": "../../evil"})),
                            "first member of the archive is not the manifest"),
    "a GNU long name that escapes": (
        lambda ms: _gz(_tar(ms + [(_info("../" * 40 + "etc/evil"), b"x")], tarfile.GNU_FORMAT)),
        "not listed in the manifest"),
    "a FIFO member": (lambda ms: _gz(_tar(ms[:-1] + [(_info(ms[-1][0].name, tarfile.FIFOTYPE), b"")])),
                      "a pack holds regular files only"),
    "a GNU sparse member": (
        lambda ms: _gz(_tar(ms[:-1] + [(_info(ms[-1][0].name, tarfile.GNUTYPE_SPARSE), ms[-1][1])],
                            tarfile.GNU_FORMAT)), "a pack holds regular files only"),
    "a member twice, the second different": (
        lambda ms: _gz(_tar(ms + [(_info(ms[-1][0].name), ms[-1][1][:-1] + b"X")])), "appears twice"),
    "a name differing only in case": (
        lambda ms: _doc(ms, lambda d: (d["members"].append(dict(d["members"][-1], path=d["members"][-1]["path"].upper())),
                                       d["members"].sort(key=lambda m: m["path"]))),
        "is not where torch keeps"),
    "a unicode look-alike of '.'": (
        lambda ms: _doc(ms, lambda d: d["members"][-1].update(path=d["members"][-1]["path"].replace(".", "\uff0e"))),
        "not a plain relative path"),
    "a backslash path": (
        lambda ms: _doc(ms, lambda d: d["members"][-1].update(path=d["members"][-1]["path"].replace("/", "\\"))),
        "not a plain relative path"),
    # the manifest's shape
    "the manifest lists a member twice": (
        lambda ms: _doc(ms, lambda d: d["members"].append(d["members"][-1])), "listed twice"),
    "a setting that is not a pair": (lambda ms: _doc(ms, lambda d: d.update(settings=[["a"]])), "not (name, value)"),
    "settings as a string": (lambda ms: _doc(ms, lambda d: d.update(settings="ab")), "expected an array"),
    "inputs as a string": (lambda ms: _doc(ms, lambda d: d["entries"][0].update(inputs="abc")), "expected an array"),
    "a member that is not an object": (lambda ms: _doc(ms, lambda d: d["members"].insert(0, "x")),
                                       "expected an object"),
    "version 1.0": (lambda ms: _doc(ms, lambda d: d.update(version=1.0)), "not an fxcache pack manifest"),
    "no entry": (lambda ms: _doc(ms, lambda d: d.update(entries=[])), "lists no cache entry"),
    "an entry kind fxcache never writes": (
        lambda ms: _doc(ms, lambda d: d["entries"][0].update(kind="code")), "entry kind"),
    "a torch version of a megabyte": (
        lambda ms: _doc(ms, lambda d: d["build"].update(torch_version="x" * (1 << 20))), "characters"),
    "not JSON": (lambda ms: _raw_manifest(ms, b"\xff\xfe{not json"), "not a JSON object"),
    "nested a million deep": (lambda ms: _raw_manifest(ms, b"[" * 1_000_000 + b"]" * 1_000_000),
                              "not a JSON object"),
    "a size of NaN": (lambda ms: _raw_manifest(ms, _manifest_text(ms).replace(b'"size": ', b'"size": NaN, "x": ', 1)),
                      "not a byte count"),
    "an integer of 5000 digits": (
        lambda ms: _raw_manifest(ms, _manifest_text(ms).replace(b'"size": ', b'"size": ' + b"9" * 5000 + b', "x": ', 1)),
        "not a JSON object"),
    "a size past any disk": (lambda ms: _doc(ms, lambda d: d["members"][-1].update(size=10**30)), "the manifest says"),
    "a million and one values": (
        lambda ms: _raw_manifest(ms, _manifest_text(ms)[:-2] + b', "x": [' + b",".join([b"0"] * 1_000_001) + b"]}"),
        "more than 1000000 values"),
}


def _manifest_text(ms: list) -> bytes:
    return json.dumps(_manifest(ms)).encode() + b"\n"


@pytest.mark.parametrize("name", list(ATTACKS))
def test_an_attack_is_one_line_exit_2_and_nothing_written(packed, tmp_path, name):
    make, why = ATTACKS[name]
    bad = tmp_path / "bad.tar.gz"
    bad.write_bytes(make(_members(packed[1])))
    before = _tree(tmp_path)
    for dry in ([], ["--dry-run"]):
        r = run_fxcache("--cache-dir", str(tmp_path / "dst"), "unpack", *dry, str(bad))
        assert r.returncode == 2, (r.stdout, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr
        assert why in r.stderr, r.stderr
        assert _tree(tmp_path) == before


def test_a_verified_pack_is_refused_before_torch_is_imported(packed, tmp_path):
    """--dry-run imports torch, but only once the pack is verified."""
    bad = tmp_path / "bad.tar.gz"
    bad.write_bytes(ATTACKS["member past the end-of-archive marker"][0](_members(packed[1])))
    r = run_fxcache("--cache-dir", str(tmp_path / "dst"), "unpack", "--dry-run", str(bad), block_torch=True)
    assert r.returncode == 2 and "end-of-archive" in r.stderr and "torch" not in r.stderr, r.stderr


@pytest.mark.parametrize("what", ["fifo", "dir", "/dev/zero"])
def test_a_pack_that_is_not_a_file_is_refused_never_waited_on(tmp_path, what):
    path = {"fifo": tmp_path / "p.fifo", "dir": tmp_path, "/dev/zero": Path("/dev/zero")}[what]
    if what == "fifo":
        os.mkfifo(path)
    before = _tree(tmp_path)
    # a process with a timeout: opening a FIFO for reading blocks until a writer comes
    r = run_module("fxcache_cli", "--cache-dir", str(tmp_path / "dst"), "unpack", str(path), timeout=60)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "is not a file" in r.stderr, r.stderr
    assert _tree(tmp_path) == before


def test_written_modes_are_the_cache_dirs_never_the_archives(packed, tmp_path):
    ms = [(_info(ti.name, mode=0o6777, uid=0, uname="root"), data) for ti, data in _members(packed[1])]
    evil = tmp_path / "suid.tar.gz"
    evil.write_bytes(_gz(_tar(ms)))
    dst = tmp_path / "dst"
    old = os.umask(0)
    try:
        r = run_fxcache("--cache-dir", str(dst), "unpack", str(evil))
    finally:
        os.umask(old)
    assert r.returncode == 0, r.stderr
    modes = {stat.S_IMODE(p.lstat().st_mode) for p in dst.rglob("*") if p.is_file()}
    dirs = {stat.S_IMODE(p.lstat().st_mode) for p in [dst, *dst.rglob("*")] if p.is_dir()}
    assert modes == {0o644} and dirs == {0o755}


def test_a_symlinked_cache_dir_is_written_through_a_dangling_one_is_refused(packed, tmp_path):
    real, link, dangling = tmp_path / "real", tmp_path / "link", tmp_path / "dangling"
    real.mkdir()
    link.symlink_to(real)
    assert run_fxcache("--cache-dir", str(link), "unpack", str(packed[1])).returncode == 0
    listed = _manifest(_members(packed[1]))["members"]
    assert all((real / m["path"]).is_file() for m in listed) and link.is_symlink()
    dangling.symlink_to(tmp_path / "nowhere")
    (tmp_path / "a-file").write_text("")
    before = _tree(tmp_path)
    for target in (dangling, tmp_path / "a-file"):
        r = run_fxcache("--cache-dir", str(target), "unpack", str(packed[1]))
        assert r.returncode == 2 and "cannot open the cache dir" in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert _tree(tmp_path) == before


def test_a_fifo_where_a_member_goes_is_kept_never_opened(packed, tmp_path):
    dst = tmp_path / "dst"
    fifo = dst / _manifest(_members(packed[1]))["members"][-1]["path"]
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    r = run_module("fxcache_cli", "--cache-dir", str(dst), "unpack", str(packed[1]), timeout=60)
    assert r.returncode == 1 and "not a regular file" in r.stdout + r.stderr, r.stderr
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def _verified(pack: Path, dst: Path):
    from fxcache_core.pack.contents import check_pack, plan_unpack

    return plan_unpack(dst, check_pack(pack))


def test_a_pack_swapped_between_verify_and_write_writes_nothing(packed, tmp_path):
    """The race the second pass exists for: the archive is read again, every member
    checked again, and the cache dir (and the missing dirs above it) undone."""
    _, pack = packed
    dst = tmp_path / "a" / "b" / "dst"
    plan = _verified(pack, dst)
    ms = _members(pack)
    ti, data = ms[-1]
    pack.write_bytes(_gz(_tar(ms[:-1] + [(ti, data[:-1] + bytes([data[-1] ^ 1]))])))
    before = _tree(tmp_path)
    with pytest.raises(PackError, match="sha256"):
        install.execute_unpack(plan)
    assert _tree(tmp_path) == before and not (tmp_path / "a").exists()


def test_a_dir_planted_mid_way_by_another_process_is_used(packed, tmp_path, monkeypatch):
    dst = tmp_path / "dst"
    plan = _verified(packed[1], dst)
    real_mkdir = os.mkdir

    def racing(name, mode=0o777, *, dir_fd=None):  # another process makes it first
        real_mkdir(name, mode, dir_fd=dir_fd)
        real_mkdir(name, mode, dir_fd=dir_fd)

    monkeypatch.setattr(install.os, "mkdir", racing)
    res = install.execute_unpack(plan)
    assert len(res.added) == len(plan.manifest.members) and not res.conflicts


def test_a_link_that_fails_mid_way_undoes_the_ones_made(packed, tmp_path, monkeypatch):
    dst = tmp_path / "dst"
    plan = _verified(packed[1], dst)
    real_link, calls = os.link, []

    def failing(*a, **k):
        calls.append(a)
        if len(calls) == 3:
            raise OSError(errno.EIO, "Input/output error")
        return real_link(*a, **k)

    monkeypatch.setattr(install.os, "link", failing)
    before = _tree(tmp_path)
    with pytest.raises(PackError, match="Input/output error"):
        install.execute_unpack(plan)
    assert len(calls) == 3 and _tree(tmp_path) == before


def test_a_manifest_near_its_bounds_costs_bounded_memory(packed, tmp_path):
    """A 31 MiB string and then 990,000 values (just under the caps): parsed, accepted
    (unknown fields are ignored), in bounded memory."""
    ms = _members(packed[1])
    text = _manifest_text(ms)[:-2]
    for junk in (b'"' + b"x" * (31 << 20) + b'"', b"[" + b",".join([b'"abcdefgh"'] * 990_000) + b"]"):
        bad = tmp_path / "big.tar.gz"
        bad.write_bytes(_raw_manifest(ms, text + b', "junk": ' + junk + b"}"))
        r = run_measured([sys.executable, "-m", "fxcache_cli", "--cache-dir", str(tmp_path / "dst"),
                        "unpack", str(bad)])
        assert r.returncode == 0, r.stderr
        assert r.maxrss_kb < RSS_LIMIT_KB, r.maxrss_kb


def test_pack_reaches_nothing_through_a_symlinked_dir(tmp_path):
    cache = tmp_path / "cache"
    paths = make_cache(cache)
    key_dir, outside = paths["fx"].parent, tmp_path / "outside"
    key_dir.rename(outside)
    key_dir.symlink_to(outside)
    r = run_fxcache("--cache-dir", str(cache), "pack", "--all", "--dry-run", "--json")
    assert r.returncode == 0, r.stderr
    plan = json.loads(r.stdout)
    assert {m["kind"] for m in plan["manifest"]["members"]} == {"aot"}
    assert "unreadable-file" in {x["code"] for x in plan["left_out"]}


def test_pack_never_replaces_a_fifo_or_device_given_as_out(packed, tmp_path):
    """Renaming the finished pack onto OUT would replace /dev/null itself (as root)."""
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    r = run_fxcache("--cache-dir", str(packed[0]), "pack", "--all", str(fifo))
    assert r.returncode == 2 and "not a regular file" in r.stderr, r.stderr
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_the_pack_is_deterministic_across_paths_times_and_umask(packed, tmp_path):
    cache, pack = packed
    copy = tmp_path / "elsewhere" / "cache"
    import shutil

    shutil.copytree(cache, copy)
    for p in copy.rglob("*"):
        os.utime(p, (1e9, 1e9))
    again = tmp_path / "again.tar.gz"
    old = os.umask(0o077)
    try:
        assert run_fxcache("--cache-dir", str(copy), "pack", "--all", str(again)).returncode == 0
    finally:
        os.umask(old)
    assert hashlib.sha256(again.read_bytes()).digest() == hashlib.sha256(pack.read_bytes()).digest()
    assert _members(again)[0][0].name == MANIFEST_NAME


def test_a_sparse_uncompressed_pack_is_refused_before_it_is_read(packed, tmp_path):
    """A raw tar whose member of 2 GiB is a hole: 20 kB on disk, but hashing it cost
    about 10 s of CPU before the sha256 could fail (32 s at 6 GiB)."""
    ms = _members(packed[1])
    doc = _manifest(ms)
    big = 2 << 30
    doc["members"][-1]["size"] = big
    head = _tar(_with_manifest(ms, doc)[:-1])[:-1024]  # no end-of-archive blocks
    head = head[:len(head) - len(head) % 512]
    while head.endswith(bytes(512)):
        head = head[:-512]
    sparse = tmp_path / "sparse.tar"
    with open(sparse, "wb") as f:
        f.write(head + _info(doc["members"][-1]["path"], size=big).tobuf(tarfile.USTAR_FORMAT))
        f.truncate(len(head) + 512 + big + 1024)
    with open(sparse, "rb") as f:
        if os.lseek(f.fileno(), 0, getattr(os, "SEEK_HOLE", 0)) >= big:
            pytest.skip("this file system keeps no holes")
    r = run_measured([sys.executable, "-m", "fxcache_cli", "--cache-dir", str(tmp_path / "dst"),
                    "unpack", str(sparse)])
    assert r.returncode == 2 and "sparse file" in r.stderr, r.stderr
    assert r.cpu < 3.0 and not (tmp_path / "dst").exists()


def test_a_pack_of_more_key_dirs_than_open_files_unpacks(tmp_path):
    """Each key dir's fd was held to the end: past the open-file limit (1,024 by default,
    100 here for 120 keys and their bucket dirs) unpack failed with 'Too many open files'."""
    import subprocess

    from fxcache_core.cache.keys import KeyKind
    from tests.synth import fake_key, fx_entry_bytes, write_entry

    cache, pack, dst = tmp_path / "cache", tmp_path / "p.tar.gz", tmp_path / "dst"
    for i in range(120):
        key = fake_key(KeyKind.FX_GRAPH, f"k{i}")
        write_entry(cache, KeyKind.FX_GRAPH, key, fx_entry_bytes(None, key=key))
    assert run_fxcache("--cache-dir", str(cache), "pack", "--all", str(pack)).returncode == 0
    r = subprocess.run(["bash", "-c", 'ulimit -n 100 && exec "$0" -m fxcache_cli --cache-dir "$1" unpack "$2"',
                        sys.executable, str(dst), str(pack)], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert r.returncode == 0, r.stderr
    assert len([p for p in dst.rglob("*") if p.is_file()]) == 120
