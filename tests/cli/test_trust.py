"""Saying what a cache or a pack would run: the code scan in ``verify`` and ``unpack``, packs
whose manifest lies or that carry what no entry needs, linked files in ``pack``, and cache
dirs others can write.

Synthetic on purpose (no torch): a pickle that calls ``posix.system``, a pack altered after
``fxcache pack`` wrote it, a file hard-linked in from outside the cache, a group-writable
cache dir: none of it comes out of a real run. The caches are test_pack_hostile.py's (an
FX entry whose wrapper names one C++ kernel, its AOTAutograd entry, library and source).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from fxcache_core.cache.keys import KeyKind, sha256_hash
from tests.cli.test_pack_attacks import _tree
from tests.cli.test_pack_hostile import (
    LIB_KEY,
    _manifest,
    _members,
    _with_manifest,
    _write,
    make_cache,
)
from tests.helpers import run_fxcache
from tests.synth import Call, fake_key, fx_entry_bytes, stub_pickle, write_entry


def _plant(root: Path, marker: Path) -> Path:
    """An FX entry of a key of its own whose pickle calls ``posix.system`` on load."""
    data = stub_pickle("torch._inductor.output_code", "CompiledFxGraph", {
        "guards_expr": None, "_fx_graph_cache_key": "", "_fx_graph_cache_debug_lines": [],
        "fx_kwargs": {"is_backward": False}, "_reduce_me": Call("posix", "system", f"touch {marker}")})
    return write_entry(root, KeyKind.FX_GRAPH, fake_key(KeyKind.FX_GRAPH, "planted"), data)


def test_verify_reports_an_entry_that_calls_posix_system_with_the_call(tmp_path, marker_dir):
    cache, marker = tmp_path / "cache", marker_dir / "ran"
    make_cache(cache)
    planted = _plant(cache, marker)
    r = run_fxcache("--cache-dir", str(cache), "verify")
    assert r.returncode == 1, r.stdout + r.stderr
    (line,) = [ln for ln in r.stdout.splitlines() if ln.startswith("bad ")]
    assert f"names posix.system('touch {marker}'), a global torch does not write here" in line, line
    doc = json.loads(run_fxcache("--cache-dir", str(cache), "verify", "--json").stdout)
    (bad,) = doc["problems"]
    assert bad["path"] == str(planted) and bad["problem_codes"] == ["foreign-global"]
    assert bad["foreign_globals"] == [{"global": "posix.system", "uses": ["call"], "code": "foreign-global",
                                       "call": f"posix.system('touch {marker}')"}]
    assert not marker.exists()


def test_verify_reports_a_profile_that_names_a_foreign_global(tmp_path):
    cache = tmp_path / "cache"
    make_cache(cache)
    (cache / "dynamo").mkdir()
    (cache / "dynamo" / "code_state_job_None_.pkl").write_bytes(
        stub_pickle("torch._dynamo.pgo", "CodeState", {"automatic_dynamic": Call("builtins", "eval", "1")}))
    r = run_fxcache("--cache-dir", str(cache), "verify", "--json")
    assert r.returncode == 1
    (p,) = json.loads(r.stdout)["profiles"]["problems"]
    assert [f["call"] for f in p["foreign_globals"]] == ["builtins.eval('1')"]
    (cache / "dynamo" / "code_state_job_None_.pkl").unlink()
    with open(cache / "dynamo" / "code_state_big_None_.pkl", "wb") as f:  # sparse: 9 MiB that cost nothing
        f.truncate(9 << 20)
    r = run_fxcache("--cache-dir", str(cache), "verify")
    assert r.returncode == 1 and "not checked profile" in r.stdout and "over the" in r.stdout, r.stdout


def test_verify_warns_of_a_cache_dir_others_can_write_but_passes_it(tmp_path):
    cache = tmp_path / "cache"
    make_cache(cache)
    (cache / "fxgraph").chmod(0o775)
    cache.chmod(0o777)
    link = tmp_path / "link"
    link.symlink_to(cache)
    (cache / "fxgraph" / "zz").symlink_to(tmp_path)  # torch would follow it
    r = run_fxcache("--cache-dir", str(link), "verify")
    assert r.returncode == 0, r.stdout  # a warning, not a verdict on what the cache holds
    warnings = [ln for ln in r.stdout.splitlines() if ln.startswith("warning:")]
    assert any("is a symlink" in w for w in warnings), warnings
    assert any(f"the cache dir {cache} is writable by its group and others (mode 0777)" in w for w in warnings)
    assert any("1 dir in the cache dir is writable by their group or others (first: fxgraph)" in w
               for w in warnings), warnings
    assert any("1 symlink in the cache dir (first: fxgraph/zz): torch follows them" in w for w in warnings)
    codes = {x["code"] for x in json.loads(run_fxcache("--cache-dir", str(link), "verify", "--json").stdout)["exposure"]}
    assert codes == {"dir-is-symlink", "dir-writable-by-others"}
    cache.chmod(0o755)
    (cache / "fxgraph").chmod(0o755)
    (cache / "fxgraph" / "zz").unlink()
    assert json.loads(run_fxcache("--cache-dir", str(cache), "verify", "--json").stdout)["exposure"] == []


@pytest.fixture
def foreign_pack(tmp_path: Path, marker_dir: Path) -> tuple[Path, Path]:
    """A pack fxcache wrote of a cache one of whose entries calls ``posix.system``."""
    cache, marker = tmp_path / "cache", marker_dir / "ran"
    make_cache(cache)
    _plant(cache, marker)
    pack = tmp_path / "p.tar.gz"
    r = run_fxcache("--cache-dir", str(cache), "pack", "--all", str(pack))
    assert r.returncode == 0, r.stderr
    assert "names globals torch does not write (posix.system(" in r.stdout, r.stdout  # pack says so too
    return pack, marker


def test_unpack_refuses_an_entry_that_calls_posix_system_and_allows_it_when_told(foreign_pack, tmp_path):
    pack, marker = foreign_pack
    dst = tmp_path / "dst"
    r = run_fxcache("--cache-dir", str(dst), "unpack", str(pack))
    assert r.returncode == 2 and not dst.exists(), r.stdout + r.stderr
    assert f"posix.system('touch {marker}')" in r.stdout  # the finding, listed
    assert r.stderr.count("\n") == 1 and "--allow-foreign-globals unpacks it anyway" in r.stderr, r.stderr
    assert run_fxcache("verify", str(pack)).returncode == 1
    ok = run_fxcache("--cache-dir", str(dst), "unpack", "--allow-foreign-globals", str(pack))
    assert ok.returncode == 0, ok.stderr
    assert f"posix.system('touch {marker}')" in ok.stdout and "unpacked as asked" in ok.stdout
    assert len(list((dst / "fxgraph").rglob("*"))) > 0 and not marker.exists()


def _repack(pack: Path, out: Path, edit=None, extra: list | None = None, kind: str | None = None,
            data: bytes = b"") -> Path:
    """``pack`` rewritten: its manifest changed by ``edit``, ``extra`` (path, kind, bytes)
    members added, the content of its member of ``kind`` replaced by ``data``, each
    listed with its true size and sha256."""
    import tarfile

    members = _members(pack)
    doc = _manifest(members)
    if kind is not None:
        row = next(m for m in doc["members"] if m["kind"] == kind)
        row.update(size=len(data), sha256=hashlib.sha256(data).hexdigest())
        members = [(ti, data if ti.name == row["path"] else d) for ti, d in members]
    for path, kind, data in extra or ():
        doc["members"].append({"path": path, "kind": kind, "size": len(data),
                               "sha256": hashlib.sha256(data).hexdigest()})
        members.append((tarfile.TarInfo(path), data))
    doc["members"].sort(key=lambda m: m["path"])
    if edit is not None:
        edit(doc)
    members = _with_manifest(members, doc)
    return _write(out, [members[0]] + sorted(members[1:], key=lambda m: m[0].name))


def _refused(tmp_path: Path, bad: Path, why: str) -> None:
    before = _tree(tmp_path)
    dst = tmp_path / "dst"
    r = run_fxcache("--cache-dir", str(dst), "unpack", str(bad))
    assert r.returncode == 2 and why in r.stderr and r.stderr.count("\n") == 1, r.stdout + r.stderr
    assert not dst.exists() and _tree(tmp_path) == before
    v = run_fxcache("verify", str(bad))  # verify PACK refuses it the same way, writing nothing
    assert v.returncode == 2 and why in v.stderr, v.stderr


@pytest.fixture
def good_pack(tmp_path: Path) -> Path:
    cache = tmp_path / "cache"
    make_cache(cache)
    pack = tmp_path / "good.tar.gz"
    assert run_fxcache("--cache-dir", str(cache), "pack", "--all", str(pack)).returncode == 0
    return pack


STRAY = "c" + sha256_hash(b"stray")
STRAY_SO = f"{STRAY[1:3]}/{STRAY}.so"


@pytest.mark.parametrize("extra,why", [
    ([(STRAY_SO, "library", b"\x7fELF planted")], "is not needed by any entry of the pack"),
    ([(f"{STRAY[1:3]}/{STRAY}.main.cpp", "source", b"int main() { return 0; }" * 4),
      (f"{STRAY[1:3]}/{STRAY}.main.so", "library", b"\x7fELF")], "is not needed by any entry"),
    ([("fxgraph/zz/fzz" + "a" * 49 + "/" + sha256_hash(fx_entry_bytes(None)), "fx", fx_entry_bytes(None))],
     "is an entry the manifest does not list"),
], ids=["a stray library", "a kernel no wrapper names", "an entry not listed"])
def test_a_member_no_packed_entry_needs_is_refused_and_nothing_written(good_pack, tmp_path, extra, why):
    _refused(tmp_path, _repack(good_pack, tmp_path / "bad.tar.gz", extra=extra), why)


def test_a_wrapper_module_that_is_not_its_entrys_source_is_refused(good_pack, tmp_path):
    """Torch imports the wrapper file that is there, not the entry's source: one with a
    line added would run it."""
    wrapper = next(d for ti, d in _members(good_pack)
                   if ti.name.endswith(".py") and b"async_compile" in d)
    bad = _repack(good_pack, tmp_path / "bad.tar.gz", kind="wrapper",
                  data=wrapper + b"import os; os.system('touch /tmp/x')\n")
    _refused(tmp_path, bad, "is not the source its entry holds, and torch would import it instead")


def _first(kind: str):
    def edit(doc):
        next(e for e in doc["entries"] if e["kind"] == kind).update(_EDIT[kind])
    return edit


_EDIT = {"fxgraph": {"inputs": ["float32[8, 8] stride (8, 1) cpu"]}, "aotautograd": {"guards": "True"}}


@pytest.mark.parametrize("edit,why", [
    (_first("fxgraph"), "the inputs of fxgraph entry"),
    (_first("aotautograd"), "the guards of aotautograd entry"),
    (lambda d: d["build"]["components"].update(torch_version="0" * 52), "its build components are not the entries'"),
    (lambda d: d["build"].update(cpp_threads=64), "C++ threads"),
    (lambda d: d["settings"].append(["inductor_config[max_autotune]", "True"]), "which the entries do not hash"),
], ids=["inputs", "guards", "build", "threads", "a setting"])
def test_a_manifest_its_entries_contradict_is_refused_and_nothing_written(good_pack, tmp_path, edit, why):
    _refused(tmp_path, _repack(good_pack, tmp_path / "bad.tar.gz", edit=edit), why)


def test_a_file_hard_linked_in_from_outside_is_left_out_unless_asked_and_said(tmp_path):
    cache = tmp_path / "cache"
    make_cache(cache)
    secret = tmp_path / "outside" / "secret"
    secret.parent.mkdir()
    secret.write_text('{"token": "not for the pack"}')
    secret.chmod(0o600)
    rel = f"{LIB_KEY[1:3]}/{LIB_KEY}.best_config"  # where torch keeps the kernel's autotune result
    os.link(secret, cache / rel)
    r = run_fxcache("--cache-dir", str(cache), "pack", "--all", "--dry-run", "--json")
    plan = json.loads(r.stdout)
    assert rel not in {m["path"] for m in plan["manifest"]["members"]}
    assert [x for x in plan["left_out"] if x["code"] == "linked-file"] == [
        {"code": "linked-file", "text": f"{rel}: it has 2 hard links: it may be a file from outside the cache "
                                        "dir, so it is not packed (--include-linked packs it)"}]
    assert plan["archive_mode"] == "0644"
    text = run_fxcache("--cache-dir", str(cache), "pack", "--all", "--dry-run").stdout
    assert "warning: left out: " + rel + ": it has 2 hard links" in text and "archived as mode 0644" in text
    asked = json.loads(run_fxcache("--cache-dir", str(cache), "pack", "--all", "--include-linked", "--dry-run",
                                   "--json").stdout)
    assert rel in {m["path"] for m in asked["manifest"]["members"]}
    notes = {n["code"]: n["text"] for n in asked["notes"]}
    assert notes["linked-file-packed"].startswith(rel) and "mode 0600 here" in notes["mode-widened"]
