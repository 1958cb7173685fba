"""Torch's other cache forms on real runs: mega-cache blobs, standalone artifacts, bundled entries.

One background build, ``blob_forms``: five torch processes of ``tests.harness.blob_app``
forked from the session's zygote (as fresh processes: nothing compiled before the fork;
the traced rerun starts its ``TORCH_TRACE`` after the fork as torch's import would have),
and fxcache forked from the CLI server (a blob and a vLLM dir read once in a
process that cannot import torch):

- ``bundled``: the app compiled with ``bundled_autograd_cache`` on (no FX graph cache
  entry at all), its blob saved; ``pack --all`` of that cache unpacked into an empty
  dir, where the app runs again (batch 7) under ``TORCH_TRACE``, for ``explain``;
- ``regular``: the app compiled as usual (FX and AOTAutograd entries), its blob saved,
  then, in the same process with a cache dir of their own, two ``standalone_compile``
  artifacts saved (``tests.harness.standalone_app``: binary, in vLLM's layout, and one
  unpacked); ``unpack`` of the blob into an empty dir, where the app runs again; ``pack
  --all --format torch`` of the cache dir loaded with ``torch.compiler.load_cache_artifacts``
  in a process with an empty cache dir, which runs the app again; ``unpack --dry-run``
  of the blob, and of a blob packed from another torch's recorded cache (each asks the
  installed torch).

Torch's own counters in each rerun are the judge: every lookup a hit, none a miss.
``fxcache match`` for the reruns' calls must say HIT on the same caches, ``explain`` of
the traced rerun name each lookup as torch did. The standalone artifacts and vLLM's dir
of them must read as the cache dir their compile wrote, command by command. The blob of
transformers models and a training step: tests/torch/test_models_oracle.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.harness.background import builder, prebuilt
from tests.helpers import run_fxcache, without_keys

pytestmark = pytest.mark.torch

CALLS = {"Head.forward": ["--shapes", "x=[7,8]"], "train_step": ["--shapes", "x=[5,8],y=[5,4]"]}
"""The reruns' calls (blob_app with --batch 7), as ``match`` takes them."""


def _app(cache: Path, *args: str) -> dict[str, Any]:
    from demo.build_cache import run_json_subprocess

    return run_json_subprocess(["-m", "tests.harness.blob_app", str(cache), *args], python=sys.executable,
                               timeout=600)


def _cli(*args: str, block_torch: bool = False) -> Any:
    """``fxcache ARGS`` (forked from the CLI server; ``block_torch``: a fresh process that
    cannot import torch), its JSON; it must exit 0."""
    proc = run_fxcache(*args, block_torch=block_torch, env={"FXCACHE_NO_INDEX": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def _proc(proc: Any) -> dict[str, Any]:
    return {"returncode": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr}


def _listing(cache: Path, block_torch: bool = False) -> list[tuple[str, str, tuple[str, ...], str | None]]:
    return sorted((k["kind"], k["key"], tuple(sorted(e["entry"] for e in k["entries"])), k.get("function"))
                  for k in _cli("--cache-dir", str(cache), "ls", "--entries", "--json", block_torch=block_torch))


def _matches(cache: Path) -> dict[str, list[tuple[str, str, str | None]]]:
    out = {}
    for fn, shapes in CALLS.items():
        r = _cli("--cache-dir", str(cache), "match", "--fn", fn, *shapes, "--json")
        out[fn] = sorted((x["kind"], x["status"], x.get("hit")) for x in r["results"])
    return out


@builder("blob_forms", order=6)
def _blob_forms() -> dict[str, Any]:
    from tests.harness.background import build_dir

    base = build_dir("blobs")
    out: dict[str, Any] = {}
    b, bblob = base / "bundled", base / "bundled.blob"
    out["bundled"] = _app(b, "--bundled", "--save-blob", str(bblob))
    out["bundled_ls"], out["bundled_blob_ls"] = _listing(b), _listing(bblob, block_torch=True)
    out["bundled_match"] = _matches(b)
    out["bundled_gc"] = _cli("--cache-dir", str(b), "gc", "--dry-run", "--json")
    pack = base / "bundled.tar.gz"
    out["bundled_pack"] = _cli("--cache-dir", str(b), "pack", "--all", str(pack), "--json")
    out["bundled_here"], out["bundled_trace"] = base / "bundled-here", base / "bundled-trace"
    _cli("--cache-dir", str(out["bundled_here"]), "unpack", str(pack), "--json")
    out["bundled_rerun"] = _app(out["bundled_here"], "--bundled", "--batch", "7", "--trace", str(out["bundled_trace"]))

    r, rblob = base / "regular", base / "regular.blob"
    out["regular"] = _app(r, "--save-blob", str(rblob), "--standalone", str(base / "standalone"))
    out["regular_ls"], out["regular_blob_ls"] = _listing(r), _listing(rblob)
    out["regular_match"], out["regular_blob_match"] = _matches(r), _matches(rblob)
    out["regular_blob"] = rblob
    out["blob_unpacked"] = _cli("--cache-dir", str(base / "blob-here"), "unpack", str(rblob), "--json")
    out["blob_rerun"] = _app(base / "blob-here", "--batch", "7")
    ours = base / "ours.blob"
    out["torch_pack"] = _cli("--cache-dir", str(r), "pack", "--all", "--format", "torch", str(ours), "--json")
    out["torch_pack_rerun"] = _app(base / "loaded-here", "--load-blob", str(ours), "--batch", "7")

    # unpack --dry-run asks the installed torch (each a forked fxcache importing it): here,
    # on the build thread, of this blob and of a blob another torch's cache makes.
    out["dry_target"] = base / "dry-x"
    out["dry_run"] = _proc(run_fxcache("--cache-dir", str(out["dry_target"]), "unpack", "--dry-run", "--json",
                                       str(rblob), imports_torch=True))
    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "torch_versions"
    version = sorted(p.name for p in fixtures.iterdir() if (p / "cache").is_dir())[0]
    other = base / "other.blob"
    out["other_packed"] = _proc(run_fxcache("--cache-dir", str(fixtures / version / "cache"), "pack", "--all",
                                            "--format", "torch", str(other)))
    out["other_target"] = base / "other-x"
    out["other_dry_run"] = _proc(run_fxcache("--cache-dir", str(out["other_target"]), "unpack", "--dry-run",
                                             str(other), imports_torch=True))

    built = out["standalone"] = out["regular"]["standalone"]
    built["ls"] = {"cache": _listing(Path(built["cache"])), "unpacked": _listing(Path(built["unpacked"])),
                   "layout": _listing(Path(built["layout"]), block_torch=True)}
    built["ls"]["binaries"] = [_listing(Path(p)) for p in built["binaries"]]
    out["cpu_s"] = sum(v["cpu_s"] for k, v in out.items() if k in {"bundled", "bundled_rerun", "regular",
                                                                   "blob_rerun", "torch_pack_rerun"})
    return out


@pytest.fixture(scope="session")
def blob_forms() -> dict[str, Any]:
    return prebuilt("blob_forms")


@pytest.fixture(scope="session")
def standalone(blob_forms) -> dict[str, Any]:
    """The standalone artifacts ``blob_forms``'s regular app saved: ``cache`` (the cache dir
    their compile wrote), ``unpacked``, ``binaries`` (vLLM's layout), ``layout`` (its root),
    ``ls`` (each one's listing)."""
    return blob_forms["standalone"]


def _all_hit(r: dict[str, Any], fx: int) -> None:
    assert r["aot_autograd"].get("autograd_cache_hit") == 2 and not r["aot_autograd"].get("autograd_cache_miss"), r
    assert r["inductor"].get("fxgraph_cache_hit", 0) == fx and not r["inductor"].get("fxgraph_cache_miss"), r
    assert not r["aot_autograd"].get("autograd_cache_bypass") and not r["inductor"].get("fxgraph_cache_bypass"), r


def test_a_bundled_cache_has_aotautograd_entries_only_and_its_blob_lists_the_same(blob_forms):
    b = blob_forms["bundled"]
    assert b["aot_autograd"].get("autograd_cache_saved") == 2 and not b["inductor"].get("fxgraph_cache_miss")
    assert set(b["saved"]) == {"aot_autograd"}
    ls = blob_forms["bundled_ls"]
    assert [k[0] for k in ls] == ["aotautograd", "aotautograd"]
    assert {k[3] for k in ls} == {"Head.forward", "train_step"}
    assert ls == blob_forms["bundled_blob_ls"]


def test_match_on_bundled_entries_says_hit_as_torch_does(blob_forms):
    assert all(rs and all(s == "hit" for _, s, _ in rs) for rs in blob_forms["bundled_match"].values())
    _all_hit(blob_forms["bundled_rerun"], fx=0)


def test_a_pack_of_bundled_entries_carries_their_kernels_and_every_lookup_hits(blob_forms):
    kinds = {m["kind"] for m in blob_forms["bundled_pack"]["manifest"]["members"]}
    # no FX entry: there is none to follow; each library travels with the kernel source it is built from
    assert kinds == {"aot", "wrapper", "library", "source"}
    _all_hit(blob_forms["bundled_rerun"], fx=0)


def test_gc_keeps_bundled_entries_that_have_no_fx_entries(blob_forms):
    plan = blob_forms["bundled_gc"]
    assert plan["total_entries"] == 2 and not plan["removals"] and plan["bytes_freed"] == 0


def test_a_blob_lists_and_matches_exactly_as_the_cache_dir_the_same_compile_wrote(blob_forms):
    assert blob_forms["regular_ls"] == blob_forms["regular_blob_ls"]
    assert {k[0] for k in blob_forms["regular_ls"]} == {"fxgraph", "aotautograd"}
    assert blob_forms["regular_match"] == blob_forms["regular_blob_match"]
    assert all(any(s == "hit" for _, s, _ in rs) for rs in blob_forms["regular_match"].values())


def test_unpack_of_a_blob_into_an_empty_dir_then_a_fresh_run_hits_every_lookup(blob_forms):
    written = blob_forms["blob_unpacked"]
    assert written["added"] and not written["conflicts"]
    _all_hit(blob_forms["blob_rerun"], fx=3)


def test_dry_run_of_a_blob_says_it_will_hit_and_counts_the_kernels_built_on_first_load(blob_forms):
    proc = blob_forms["dry_run"]  # of regular_blob, into dry_target (built in blob_forms)
    assert proc["returncode"] == 0, proc["stderr"]
    d = json.loads(proc["stdout"])
    assert not blob_forms["dry_target"].exists()
    assert d["will_hit"]["all_hit"]
    assert {f.split(" (")[0] for f in d["blob"]["kernels_rebuilt"]} == {"Head.forward", "train_step"}
    assert all(n >= 1 for n in d["blob"]["kernels_rebuilt"].values())


def test_pack_format_torch_is_loaded_by_torch_and_every_lookup_hits(blob_forms):
    assert blob_forms["torch_pack"]["blob"]["entries"] == {"inductor": 3, "aot_autograd": 2}
    r = blob_forms["torch_pack_rerun"]
    assert sorted(r["loaded"]) == ["aot_autograd", "inductor"]
    _all_hit(r, fx=3)


def test_standalone_artifacts_list_the_same_keys_as_the_cache_dir_their_compile_wrote(standalone):
    ls = standalone["ls"]
    first, second = ls["binaries"]
    assert first and second and {k[0] for k in first} == {"fxgraph", "aotautograd"}
    assert first == ls["unpacked"]  # binary and unpacked: the same entries
    assert sorted(first + second) == ls["layout"] == ls["cache"]  # vLLM's dir of them: one cache


def test_dry_run_on_a_blob_of_another_torch_says_nothing_will_hit_and_why(blob_forms):
    """The first recorded torch version's cache packed as a blob (``--format torch``), then
    ``unpack --dry-run`` of it (both in blob_forms)."""
    assert blob_forms["other_packed"]["returncode"] == 0, blob_forms["other_packed"]["stderr"]
    proc = blob_forms["other_dry_run"]
    assert proc["returncode"] == 0, proc["stderr"]
    lines = [ln for ln in proc["stdout"].splitlines() if ln.strip().startswith(("no hit", "will hit", "unknown"))]
    assert lines and all(ln.strip().startswith("no hit") and "nothing will hit" in ln for ln in lines)
    assert not blob_forms["other_target"].exists()


def test_explain_names_each_lookup_on_bundled_entries_as_torch_did(blob_forms):
    """The bundled rerun, traced: torch made two AOTAutograd lookups, both hits, and no FX
    graph lookup (a bundled entry loads its graphs from itself). ``explain`` of its
    trace against the cache it ran on names each lookup as torch did: a hit, of the
    entry that cache holds for the key, from the function compiled; nothing about FX."""
    r = blob_forms["bundled_rerun"]
    here = blob_forms["bundled_here"]
    _all_hit(r, fx=0)
    rep = _cli("--cache-dir", str(here), "explain", str(blob_forms["bundled_trace"]), "--json")
    lookups = rep["lookups"]
    assert [(x["cache"], x["state"], x["cause"]) for x in lookups] == [("aotautograd", "hit", "hit")] * 2, lookups
    entries = {k: e for _, k, e, _ in _listing(here)}
    assert all(x["entry"] in entries[x["key"]] for x in lookups), (lookups, entries)
    assert {x["function"] for x in lookups} == {"Head.forward", "train_step"}
    assert all(not x["notes"] for x in lookups), [x["notes"] for x in lookups]
    assert rep["summary"]["verdict"] == "all 2 hit" and "fxgraph" not in rep["summary"], rep["summary"]


_PER_RUN = frozenset({"path", "mtime", "last_used", "oldest_use", "newest_use", "root"})
"""What of a command's JSON depends on where and when the files were written, not on the cache."""


def _as_cache(got: Any) -> Any:
    """A command's JSON without :data:`_PER_RUN`: a form laid out and its cache dir compare equal."""
    return without_keys(got, _PER_RUN)


def _run(cache: str | Path, *args: str) -> tuple[int, Any]:
    proc = run_fxcache("--cache-dir", str(cache), *args, "--json")
    assert proc.returncode in (0, 1, 3), proc.stderr  # 1, 3: match's miss and undecided
    return proc.returncode, _as_cache(json.loads(proc.stdout))


def test_standalone_artifacts_read_as_the_cache_dir_their_compile_wrote_command_by_command(standalone):
    """vLLM's dir of binary artifacts, and one artifact alone, given as ``--cache-dir``:
    ``guards``, ``match``, ``key``, ``diff``, ``verify`` (with the code scan) and ``df``'s
    entries say what they say of the cache dir the same compiles wrote (``ls``: the test
    above). The first artifact's graph has a dynamic batch: its entry's guards hold for 8,
    not for 1."""
    cache, layout, (first, second) = standalone["cache"], standalone["layout"], standalone["binaries"]
    keys = {(kind, fn.split(" (")[0]): key for kind, key, _, fn in standalone["ls"]["cache"]}
    aot, fx, other_fx = keys["aotautograd", "scale"], keys["fxgraph", "scale"], keys["fxgraph", "act"]
    on_dir = {}
    for args in (("guards", aot), ("match", "--key", aot, "--sym", "t0=8"), ("match", "--key", aot, "--sym", "t0=1"),
                 ("key", fx), ("diff", fx, other_fx), ("verify",)):
        on_dir[args[0], args[-1]] = want = _run(cache, *args)
        assert _run(layout, *args) == want, args
        if args[0] in ("guards", "match", "key"):  # the first artifact alone: scale's keys
            assert _run(first, *args) == want, args
    # a key of another artifact, given as the other cache dir
    assert _run(cache, "diff", fx, other_fx, "--other-cache-dir", second) == on_dir["diff", other_fx]
    (hit,), (miss,) = (on_dir["match", f"t0={n}"][1]["results"] for n in (8, 1))
    assert [e["outcome"] for e in hit["entries"]] == ["pass"] and [e["outcome"] for e in miss["entries"]] == ["fail"]
    checked = on_dir["verify", "verify"][1]
    assert checked["checked"] == checked["entries"] == 4 and checked["problems"] == [], checked
    kinds = {"fx", "aot"}
    df_dir, df_layout = ([k for k in _run(where, "df")[1]["kinds"] if k["kind"] in kinds] for where in (cache, layout))
    assert df_layout == df_dir and {k["kind"] for k in df_dir} == kinds
