"""Scanning: torch's layout, order and skip rules, on hand-made layouts."""

from __future__ import annotations

import os

import pytest

from fxcache_core.cache.keys import KeyKind, is_entry_name, is_key, sha256_hash
from fxcache_core.cache.location import default_cache_dir, resolve_cache_dir
from fxcache_core.cache.scan import scan_cache
from fxcache_core.errors import CacheDirError, KeyLookupError
from tests.synth import fake_key, write_entry


def test_sha256_hash_matches_torch_encoding():
    # base32 of sha256, 51 chars, lower case: torch/_inductor/codecache.py sha256_hash
    h = sha256_hash(b"abc")
    assert h == "xj4bnp4pahh6uqkbidpf3lrceoyagyndsylxvhfucd7wd4qacww"  # torch 2.13 sha256_hash(b"abc")
    assert is_entry_name(h) and len(h) == 51
    assert is_key("f" + h) and not is_key("x" + h) and not is_key("f" + h[:-1])


def test_scan_orders_entries_like_torch_and_sets_dotfiles_apart(tmp_path):
    key = fake_key(KeyKind.FX_GRAPH, "k")
    for name in ("zzz", "aaa", "mmm"):
        write_entry(tmp_path, KeyKind.FX_GRAPH, key, b"x" * 3, name=name)
    write_entry(tmp_path, KeyKind.FX_GRAPH, key, b"partial", name=".tmp123")
    scan = scan_cache(tmp_path)
    (k,) = scan.keys
    assert [e.name for e in k.entries] == ["aaa", "mmm", "zzz"]  # sorted(os.listdir)
    assert [e.order for e in k.entries] == [0, 1, 2]
    assert [t.name for t in k.temp_files] == [".tmp123"]
    assert k.size == 9 and scan.size == 9 and scan.entry_count == 3
    assert k.path == tmp_path / "fxgraph" / key[1:3] / key


def test_scan_follows_symlinks_like_torch_and_marks_them(tmp_path):
    good = fake_key(KeyKind.AOT_AUTOGRAD, "a")
    write_entry(tmp_path, KeyKind.AOT_AUTOGRAD, good, b"data")
    outside = tmp_path.parent / (tmp_path.name + "-outside")
    outside.mkdir()
    (outside / "victim").write_bytes(b"vv")
    kdir = KeyKind.AOT_AUTOGRAD.key_dir(tmp_path, good)
    os.symlink(outside / "victim", kdir / "link")
    os.symlink(outside / "missing", kdir / "broken")
    (tmp_path / "aotautograd" / "not-a-key").mkdir()
    fx = fake_key(KeyKind.FX_GRAPH, "f")
    misfiled = tmp_path / "fxgraph" / "zz" / fx  # wrong bucket: torch never looks here
    misfiled.mkdir(parents=True)
    scan = scan_cache(tmp_path)
    assert [k.key for k in scan.keys] == [good]
    entries = {e.name: e for e in scan.keys[0].entries}
    # torch's sorted(os.listdir) + open() reads the symlinked entry too
    assert sorted(entries) == sorted([sha256_hash(b"data"), "link"])
    assert entries["link"].via_symlink and entries["link"].size == 2
    assert not entries[sha256_hash(b"data")].via_symlink
    reasons = {p.name: r for p, r in ((s.path, s.reason) for s in scan.skipped)}
    assert reasons["broken"].startswith("broken symlink")
    assert "not-a-key" in reasons and fx in reasons


def test_symlinked_cache_subdirs_are_followed_and_marked(tmp_path):
    real = tmp_path / "elsewhere"
    key = fake_key(KeyKind.FX_GRAPH, "k")
    write_entry(real, KeyKind.FX_GRAPH, key, b"x")
    root = tmp_path / "cache"
    root.mkdir()
    os.symlink(real / "fxgraph", root / "fxgraph")
    (k,) = scan_cache(root).keys
    assert k.via_symlink and all(e.via_symlink for e in k.entries)


def test_find_resolves_unique_prefix_and_rejects_unknown_and_ambiguous(tmp_path):
    keys = [fake_key(KeyKind.FX_GRAPH, str(i)) for i in range(40)]
    for k in keys:
        write_entry(tmp_path, KeyKind.FX_GRAPH, k, k.encode())
    scan = scan_cache(tmp_path)
    target = keys[0]
    assert scan.find(target).key == target
    unique = next(target[:n] for n in range(2, 52) if sum(k.startswith(target[:n]) for k in keys) == 1)
    assert scan.find(unique).key == target
    with pytest.raises(KeyLookupError, match="ambiguous"):
        scan.find("f")
    with pytest.raises(KeyLookupError, match="no key starts with"):
        scan.find("a")
    with pytest.raises(KeyLookupError, match="not a key prefix"):
        scan.find("F00!")


def test_resolve_cache_dir_order_and_errors(tmp_path, monkeypatch):
    env = {"TORCHINDUCTOR_CACHE_DIR": str(tmp_path)}
    assert resolve_cache_dir(None, env) == tmp_path
    assert resolve_cache_dir(str(tmp_path), {}) == tmp_path
    with pytest.raises(CacheDirError, match="does not exist"):
        resolve_cache_dir(str(tmp_path / "nope"), {})
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(CacheDirError, match="not a directory"):
        resolve_cache_dir(str(f), {})
    monkeypatch.setattr("getpass.getuser", lambda: "dom\\us:er")
    assert default_cache_dir().name == "torchinductor_dom_us_er"


def test_default_cache_dir_falls_back_to_uid(monkeypatch):
    def boom():
        raise KeyError("no passwd entry")

    monkeypatch.setattr("getpass.getuser", boom)
    assert default_cache_dir().name == f"torchinductor_uid_{os.getuid()}"


def test_reading_an_entry_does_not_count_as_a_use(tmp_path):
    """gc ranks by atime; fxcache's own reads (O_NOATIME) must not refresh it."""
    from fxcache_core.cache.scan import read_entry_bytes

    p = write_entry(tmp_path, KeyKind.FX_GRAPH, fake_key(KeyKind.FX_GRAPH, "k"), b"payload")
    old = 1_000_000_000
    os.utime(p, (old, old + 10))  # atime before mtime: relatime would update it on a read
    assert read_entry_bytes(p) == b"payload"
    if not hasattr(os, "O_NOATIME"):
        pytest.skip("no O_NOATIME on this OS")
    assert os.stat(p).st_atime == old


def test_read_entry_bytes_follows_symlinks_like_torch(tmp_path):
    from fxcache_core.cache.scan import read_entry_bytes

    target = tmp_path / "target"
    target.write_bytes(b"x")
    link = tmp_path / "link"
    os.symlink(target, link)
    assert read_entry_bytes(link) == b"x"


def test_a_dir_that_is_not_a_cache_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / "ab").mkdir()
    with pytest.raises(CacheDirError, match="does not look like an Inductor cache dir"):
        resolve_cache_dir(str(tmp_path), {})
    (tmp_path / "ab" / ("c" + "a" * 51 + ".py")).write_text("# kernel")
    assert resolve_cache_dir(str(tmp_path), {}) == tmp_path  # a cache with only kernels
    empty = tmp_path / "empty"
    empty.mkdir()
    assert resolve_cache_dir(str(empty), {}) == empty  # nothing compiled yet
    fx = tmp_path / "c2" / "fxgraph"
    fx.mkdir(parents=True)
    with pytest.raises(CacheDirError, match="give its parent"):
        resolve_cache_dir(str(fx), {})
