"""fxcache df: every file under a cache dir classified, totals exactly what find and du say.

Real caches come from torch (conftest's ``real_cache``, with Dynamo PGO state
and locks; ``default_dir``, where torch put its precompiled headers). The
Triton layout is Triton's own cache manager's (tools/make_triton_layout.py:
no GPU here); hard links, symlinks, autotune results and unreadable dirs are
synthetic, since torch does not make them on this machine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from fxcache_core.cache.inventory import (
    INDUCTOR_LAYOUT,
    TRITON_LAYOUT,
    ContentKind,
    classify,
    take_inventory,
)
from tests.helpers import run_fxcache
from tests.synth import best_config_bytes, install_triton_layout


def _find(root: Path, *args: str) -> int:
    return len(subprocess.run(["find", str(root), *args], capture_output=True, check=True,
                              text=True).stdout.splitlines())


def _du(root: Path, apparent: bool) -> int:
    argv = ["du", "-s", "--block-size=1"] + (["--apparent-size"] if apparent else []) + [str(root)]
    return int(subprocess.run(argv, capture_output=True, check=True, text=True).stdout.split()[0])


def _find_bytes(root: Path) -> int:
    """Bytes of the regular files, each inode once (as du counts a hard link)."""
    out = subprocess.run(["find", str(root), "-type", "f", "-printf", "%i %s\n"], capture_output=True,
                         check=True, text=True).stdout.splitlines()
    return sum({int(i): int(s) for i, s in (line.split() for line in out)}.values())


def assert_matches_find_and_du(report: dict, root: Path) -> None:
    """The df JSON of ``root`` against find/du on it, and its kinds against its total."""
    t = report["total"]
    assert t["files"] == _find(root, "-type", "f")
    assert t["bytes"] == _find_bytes(root)
    assert t["dirs"] == _find(root, "-type", "d")
    assert t["symlinks"] == _find(root, "-type", "l")
    assert t["paths"] == _find(root)
    assert t["apparent_bytes"] == _du(root, apparent=True)
    assert t["disk_bytes"] == _du(root, apparent=False)
    assert sum(k["files"] for k in report["kinds"]) == t["files"]
    assert sum(k["bytes"] for k in report["kinds"]) == t["bytes"]


def _df(root: Path, *args: str, env: dict | None = None) -> dict:
    p = run_fxcache("--cache-dir", str(root), "df", "--json", *args, env=env)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def _kinds(report: dict) -> dict[str, dict]:
    return {k["kind"]: k for k in report["kinds"]}


@pytest.mark.torch
def test_df_totals_equal_find_and_du_on_a_real_cache(real_cache, cache_copy):
    real_cache.with_pgo(cache_copy)  # the PGO state torch wrote under a job id
    rep = _df(cache_copy)
    assert_matches_find_and_du(rep, cache_copy)
    kinds = _kinds(rep)
    # What the demo compiles leaves: entries, generated C++/Python, .so, PGO state, locks.
    assert {"fx", "aot", "code", "library", "pgo", "lock"} <= set(kinds), sorted(kinds)
    assert "unknown" not in kinds
    assert {e["name"] for e in kinds["code"]["by_extension"]} >= {".py", ".cpp"}
    assert {e["name"] for e in kinds["library"]["by_extension"]} >= {".so"}
    # The entry rows are exactly what ls counts.
    ls = json.loads(run_fxcache("--cache-dir", str(cache_copy), "ls", "--json").stdout)
    for kind, name in (("fx", "fxgraph"), ("aot", "aotautograd")):
        entries = [e for k in ls if k["kind"] == name for e in k["entries"]]
        assert kinds[kind]["files"] == len(entries)
        assert kinds[kind]["bytes"] == sum(e["size"] for e in entries)
    assert rep["index"]["path"].startswith(os.environ["FXCACHE_INDEX_DIR"])


@pytest.mark.torch
def test_a_dir_of_only_precompiled_headers_is_a_cache_dir_and_df_counts_them(default_dir):
    rep = _df(default_dir)
    assert_matches_find_and_du(rep, default_dir)
    kinds = _kinds(rep)
    assert set(kinds) == {"precompiled-header", "lock"}
    gch = [p for p in (default_dir / "precompiled_headers").iterdir() if p.name.endswith(".gch")]
    assert gch and kinds["precompiled-header"]["bytes"] >= sum(p.stat().st_size for p in gch) > 10**6
    p = run_fxcache("--cache-dir", str(default_dir), "ls")
    assert p.returncode == 0, p.stderr
    assert "fxcache df" in p.stdout


def test_triton_kernels_under_the_inductor_dir_and_in_their_own_dir(tmp_path):
    root = tmp_path / "inductor"
    install_triton_layout(root / "triton" / "0")
    (root / "triton" / "0" / "tmp.0d9a4b").mkdir()  # a TritonBundler dir being filled
    (root / "triton" / "0" / "tmp.0d9a4b" / "k.cubin").write_bytes(b"\0" * 10)
    key = "c" + "ab" + "x" * 49
    (root / "ab").mkdir()
    (root / "ab" / f"{key}.py").write_text("# triton kernel source\n")
    (root / "ab" / f"{key}.best_config").write_bytes(best_config_bytes())
    rep = _df(root)
    assert_matches_find_and_du(rep, root)
    kinds = _kinds(rep)
    assert kinds["triton"]["files"] == 3 * 8 and kinds["triton"]["by_device"] == [
        {"name": "0", "files": 24, "bytes": kinds["triton"]["bytes"]}]
    assert kinds["autotune"]["files"] == 1 and kinds["temp"]["files"] == 1 and kinds["code"]["files"] == 1

    # $TRITON_CACHE_DIR elsewhere: measured too, as a Triton cache dir of its own.
    own = tmp_path / "triton-cache"
    install_triton_layout(own)
    rep = _df(root, env={"TRITON_CACHE_DIR": str(own)})
    other = rep["triton_cache_dir"]
    assert other["root"] == str(own) and other["layout"] == TRITON_LAYOUT
    assert_matches_find_and_du(other, own)
    assert set(_kinds(other)) == {"triton"}
    # And given as the cache dir itself, it is one too (ls works on it).
    assert _df(own)["layout"] == TRITON_LAYOUT
    assert run_fxcache("--cache-dir", str(own), "ls").returncode == 0


def test_hard_links_symlinks_and_special_files_count_as_find_and_du_count_them(tmp_path):
    root = tmp_path / "c"
    (root / "fxgraph").mkdir(parents=True)
    (root / "locks").mkdir()
    big = root / "locks" / "x.bin"
    big.write_bytes(b"x" * 5000)
    os.link(big, root / "locks" / "y.bin")  # one inode, two names
    (root / "link").symlink_to("/nonexistent/target/of/some/length")
    (root / "dirlink").symlink_to(root / "locks")  # never followed
    os.mkfifo(root / "fifo")
    rep = _df(root)
    assert_matches_find_and_du(rep, root)
    assert rep["total"]["files"] == 2 and rep["total"]["bytes"] == 5000
    assert rep["total"]["symlinks"] == 2 and rep["total"]["other"] == 1


def test_a_dir_df_cannot_list_is_reported_not_guessed(tmp_path, monkeypatch):
    root = tmp_path / "c"
    (root / "fxgraph" / "ab").mkdir(parents=True)
    (root / "fxgraph" / "ab" / "x").write_bytes(b"1")
    # Permission bits do not stop root, so the refusal is the OS call's: the walk
    # opens each dir relative to its parent (a mode-000 dir refuses that open).
    real = os.open
    denied = str(root / "fxgraph" / "ab")

    def open_(p, flags, mode=0o777, *, dir_fd=None):
        if dir_fd is not None and p == "ab":
            raise PermissionError(13, "Permission denied")
        return real(p, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", open_)
    inv = take_inventory(root)
    assert not inv.complete and inv.unreadable[0].path == Path(denied)
    assert inv.totals.files == 0  # what is behind it is not counted, and that is said


def test_every_kind_torch_writes_is_classified_by_its_path():
    k = "c" + "ab" + "q" * 49
    cases = {
        ("fxgraph", "ab", "fab" + "q" * 49, "e" * 51): ContentKind.FX,
        ("fxgraph", "ab", "fab" + "q" * 49, ".1234.5678.tmp"): ContentKind.TEMP,
        ("aotautograd", "a" + "q" * 51, "e" * 51): ContentKind.AOT,
        ("ab", f"{k}.py"): ContentKind.CODE,
        ("ab", f"{k}.main.cpp"): ContentKind.CODE,
        ("ab", f"{k}.so"): ContentKind.LIBRARY,
        ("ab", f"{k}.main.so"): ContentKind.LIBRARY,
        ("ab", f"{k}.best_config"): ContentKind.AUTOTUNE,
        ("ab", ".123.456.tmp"): ContentKind.TEMP,
        ("ab", k, f"{k}.wrapper.so"): ContentKind.PRECOMPILE,
        ("precompiled_headers", f"{k}.h.gch"): ContentKind.PCH,
        ("precompiled_headers", f"{k}.h"): ContentKind.PCH,
        ("precompiled_headers", "locks", f"{k}.lock"): ContentKind.LOCK,
        ("triton", "0", "HASH", "k.cubin"): ContentKind.TRITON,
        ("triton", "0", "HASH", "__grp__k.json"): ContentKind.TRITON,
        ("triton", "0", "HASH", "tmp.pid_1_uuid", "k.ptx"): ContentKind.TEMP,
        ("triton", "0", "tmp.uuid", "k.ptx"): ContentKind.TEMP,
        ("dynamo", "code_state_job_None_.pkl"): ContentKind.PGO,
        ("dynamo", "code_state_job_None_.pkl.lock"): ContentKind.LOCK,
        ("dynamo", "code_state_job_None_.pkl.tmp"): ContentKind.TEMP,
        ("dynamo", "package_fn", "entry"): ContentKind.PRECOMPILE,
        ("locks", f"{k}.lock"): ContentKind.LOCK,
        ("cache", "abc123"): ContentKind.TORCH_OTHER,
        ("memoizer_cache.json",): ContentKind.TORCH_OTHER,
        ("aoti_eager", "aten", "cpu", "x.json"): ContentKind.PRECOMPILE,
        (".fxcache-demo",): ContentKind.UNKNOWN,
        ("notes.txt",): ContentKind.UNKNOWN,
        ("fxgraph", "stray"): ContentKind.UNKNOWN,
    }
    for parts, kind in cases.items():
        assert classify(parts, INDUCTOR_LAYOUT)[0] is kind, parts
    assert classify(("HASH", "k.cubin"), TRITON_LAYOUT)[0] is ContentKind.TRITON
    assert classify(("HASH", "tmp.pid_1_x", "k.ptx"), TRITON_LAYOUT)[0] is ContentKind.TEMP


def test_the_walk_opens_no_file_and_follows_no_symlink(tmp_path, monkeypatch):
    root = tmp_path / "c"
    install_triton_layout(root / "triton" / "0")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "big").write_bytes(b"y" * 100_000)
    (root / "elsewhere").symlink_to(outside)
    opened: list[tuple[str, int, bool]] = []
    real_open = os.open

    def open_(p, flags, *a, dir_fd=None, **k):
        opened.append((str(p), flags, dir_fd is not None))
        return real_open(p, flags, *a, dir_fd=dir_fd, **k)

    monkeypatch.setattr(os, "open", open_)
    inv = take_inventory(root)
    # Only dirs are opened (O_DIRECTORY), each below the root relative to its parent's
    # fd without following a symlink.
    assert opened and all(f & os.O_DIRECTORY for _, f, _ in opened)
    assert all(f & os.O_NOFOLLOW for _, f, rel in opened if rel)
    assert len([p for p, _, rel in opened if not rel]) == 1
    assert inv.totals.symlinks == 1 and all("outside" not in i.file.where for i in inv.items)
    shutil.rmtree(root)
