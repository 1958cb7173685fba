"""``fxcache pack`` / ``unpack`` on a real run, with torch's own lookups as the judge.

One background build (``pack_roundtrip``: three torch processes forked from the session's
zygote, as fresh processes: nothing compiled before the fork, and four fxcache ones, about
35 s of CPU on 2 cores, the first compile most of it): ``tests.harness.pack_app`` compiles a module with a marked dynamic batch and a
training step with backward into an empty cache dir under TORCH_TRACE; ``fxcache pack
--from-trace`` packs what that run used (in a process that cannot import torch);
``fxcache unpack`` writes it into a second empty cache dir, where the app runs again in
a fresh process: torch's counters must show a hit for every lookup and no miss, and no
compiled library rebuilt. The same pack unpacked with one compiled library taken out
shows that member is needed: torch still hits the FX entry, but builds the library
again (a C++ compile), as ``_worker_compile_cpp`` in torch/_inductor/codecache.py
does when the file is missing. (Each fresh cache dir gets torch's CPU ISA check
programs copied in by the harness, as every test cache does: machine-level files
torch builds on first use, which a pack leaves out on purpose.) The ``--dry-run`` checks
run in this process (torch imported once).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.harness.background import builder, prebuilt
from tests.helpers import run_fxcache, run_module

pytestmark = pytest.mark.torch


def _app(cache: Path, trace: Path | None = None) -> dict[str, Any]:
    import sys

    from demo.build_cache import run_json_subprocess

    argv = ["-m", "tests.harness.pack_app", str(cache)] + (["--trace", str(trace)] if trace else [])
    return run_json_subprocess(argv, python=sys.executable, timeout=600)


def _cli(*args: str) -> Any:
    proc = run_fxcache(*args, block_torch=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def _du(root: Path) -> int:
    return sum(p.lstat().st_size for p in root.rglob("*") if p.is_file() and not p.is_symlink())


@builder("pack_roundtrip", order=5)
def _roundtrip() -> dict[str, Any]:
    from tests.harness.background import build_dir

    base = build_dir("pack")
    built, trace, pack = base / "built", base / "trace", base / "run.tar.gz"
    out: dict[str, Any] = {"built": _app(built, trace), "cache_bytes": _du(built), "pack": pack}
    out["packed"] = _cli("--cache-dir", str(built), "pack", "--from-trace", str(trace), str(pack), "--json")
    here = base / "here"
    out["unpacked"] = _cli("--cache-dir", str(here), "unpack", str(pack), "--json")
    out["before"] = {p: (here / p).stat().st_mtime_ns for p in out["built"]["libraries"]}
    out["rerun"] = _app(here)
    lacking = base / "lacking"
    _cli("--cache-dir", str(lacking), "unpack", str(pack), "--json")
    libs = sorted(m["path"] for m in out["packed"]["manifest"]["members"] if m["kind"] == "library")
    out["removed"] = libs[0]
    (lacking / libs[0]).unlink()
    out["lacking"] = _app(lacking)
    return out


@pytest.fixture(scope="session")
def pack_roundtrip() -> dict[str, Any]:
    return prebuilt("pack_roundtrip")


def test_the_run_compiled_what_the_test_needs(pack_roundtrip):
    b = pack_roundtrip["built"]
    assert b["inductor"].get("fxgraph_cache_miss") == 3 and b["aot_autograd"].get("autograd_cache_miss") == 2
    kinds = {m["kind"] for m in pack_roundtrip["packed"]["manifest"]["members"]}
    assert kinds == {"fx", "aot", "wrapper", "library", "source"}  # each library with the source that ties it


def test_a_fresh_process_on_the_unpacked_pack_hits_every_lookup(pack_roundtrip):
    r = pack_roundtrip["rerun"]
    assert r["inductor"].get("fxgraph_cache_hit") == 3 and not r["inductor"].get("fxgraph_cache_miss")
    assert r["aot_autograd"].get("autograd_cache_hit") == 2 and not r["aot_autograd"].get("autograd_cache_miss")
    assert not r["inductor"].get("fxgraph_cache_bypass") and not r["aot_autograd"].get("autograd_cache_bypass")
    assert r["libraries"] == pack_roundtrip["before"]  # no library rebuilt


def test_the_pack_is_smaller_than_the_cache_dir(pack_roundtrip):
    written = pack_roundtrip["packed"]["written"]
    assert written["bytes_out"] == Path(pack_roundtrip["pack"]).stat().st_size
    assert written["bytes_out"] < pack_roundtrip["cache_bytes"] / 2


def test_a_packed_library_is_needed_without_it_torch_compiles_it_again(pack_roundtrip):
    r, gone = pack_roundtrip["lacking"], pack_roundtrip["removed"]
    assert r["inductor"].get("fxgraph_cache_hit") == 3  # the entry is hit...
    assert gone in r["libraries"]  # ...and the library it names built again


def _done(proc: Any) -> dict[str, Any]:
    return {"returncode": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr}


@builder("pack_dry_runs", needs=("pack_roundtrip",), order=6)
def _dry_runs() -> dict[str, Any]:
    """``unpack --dry-run`` as users run it: each asks the installed torch (an fxcache
    process that imports torch, seconds each: two forked from the CLI server, two fresh
    with the variables torch reads at import), so they run on a build thread beside the torch
    tier's other tests. A pack of another torch is made from the first recorded version's
    cache (tests/fixtures/torch_versions)."""
    from tests.harness.background import build_dir

    base = build_dir("pack-dry-runs")
    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "torch_versions"
    version = sorted(p.name for p in fixtures.iterdir() if (p / "cache").is_dir())[0]
    other = base / "other.tar.gz"
    packed = run_fxcache("--cache-dir", str(fixtures / version / "cache"), "pack", "--all", str(other))
    ours = prebuilt("pack_roundtrip")["pack"]
    target, tmp = base / "target", base / "tmp"
    tmp.mkdir()
    return {
        "other_packed": _done(packed), "base": base, "target": target, "tmp": tmp,
        "same_torch": _done(run_fxcache("--cache-dir", str(base / "x"), "unpack", "--dry-run", "--json", str(ours),
                                        imports_torch=True)),
        "other_torch": _done(run_fxcache("--cache-dir", str(base / "y"), "unpack", "--dry-run", str(other),
                                         imports_torch=True)),
        "from_variable": _done(run_module("fxcache_cli", "unpack", "--dry-run", str(other),
                                          env={"TORCHINDUCTOR_CACHE_DIR": str(target), "TMPDIR": str(tmp)})),
        "setting": _done(run_module("fxcache_cli", "--cache-dir", str(base / "z"), "unpack", "--dry-run", "--json",
                                    str(ours), env={"TORCHINDUCTOR_MAX_AUTOTUNE": "1", "TORCHINDUCTOR_FREEZING": "0"})),
    }


@pytest.fixture(scope="session")
def pack_dry_runs() -> dict[str, Any]:
    runs = prebuilt("pack_dry_runs")
    assert runs["other_packed"]["returncode"] == 0, runs["other_packed"]["stderr"]
    return runs


def test_dry_run_says_the_pack_will_hit_under_the_torch_that_built_it(pack_dry_runs):
    proc = pack_dry_runs["same_torch"]
    assert proc["returncode"] == 0, proc["stderr"]
    report = json.loads(proc["stdout"])["will_hit"]
    assert report["all_hit"] and {f["function"].split(" ")[0] for f in report["functions"]} == {
        "Head.forward", "train_step"}
    assert not (pack_dry_runs["base"] / "x").exists()


def test_dry_run_on_a_pack_of_another_torch_says_nothing_will_hit(pack_dry_runs):
    proc = pack_dry_runs["other_torch"]
    assert proc["returncode"] == 0, proc["stderr"]
    lines = [ln for ln in proc["stdout"].splitlines() if ln.strip().startswith(("no hit", "will hit"))]
    assert lines and all(ln.strip().startswith("no hit") and "nothing will hit" in ln for ln in lines)
    assert not (pack_dry_runs["base"] / "y").exists()


def test_dry_run_writes_nothing_where_torch_would_make_its_cache_dir(pack_dry_runs):
    """Importing torch's codecache makes $TORCHINDUCTOR_CACHE_DIR (torch/_dynamo/package.py
    calls ``cache_dir()`` at import): a fresh process, as users run it, whose target comes
    from that variable, must still find it absent after --dry-run, and nothing left in
    its temp dir."""
    proc = pack_dry_runs["from_variable"]
    assert proc["returncode"] == 0 and "nothing will hit" in proc["stdout"], proc["stderr"][-2000:]
    assert not pack_dry_runs["target"].exists() and list(pack_dry_runs["tmp"].iterdir()) == []


def test_dry_run_under_a_torchinductor_variable_that_changes_the_keys_says_no_hit(pack_dry_runs):
    """The same torch, but ``TORCHINDUCTOR_MAX_AUTOTUNE=1`` in the environment: torch reads it
    into its config at import, every key a run computes hashes ``max_autotune=True``, and a
    fresh run on the unpacked pack misses every lookup (checked by hand with torch's counters:
    fxgraph_cache_miss, autograd_cache_miss). A variable at torch's default
    (``TORCHINDUCTOR_FREEZING=0``) changes nothing. A fresh process: torch reads the variables
    when its config is first imported."""
    proc = pack_dry_runs["setting"]
    assert proc["returncode"] == 0, proc["stderr"][-2000:]
    report = json.loads(proc["stdout"])["will_hit"]
    assert report["functions"] and not report["all_hit"] and not report["build_components_differ"]
    for f in report["functions"]:
        assert [r["code"] for r in f["reasons"]] == ["setting-differs-here"]
        assert "TORCHINDUCTOR_MAX_AUTOTUNE" in f["reasons"][0]["text"] and "FREEZING" not in f["reasons"][0]["text"]
