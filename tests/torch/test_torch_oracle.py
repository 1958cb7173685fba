"""Tests of the torch-side infrastructure: demo.cases, demo.build_cache, tests.harness.oracle.

They build one real cache per session (``real_cache``) and ask torch itself, in
fresh processes, what it looks up (``tests.harness.oracle``): each call once, on a build
thread, on a copy of the real cache of its own (``tests.harness.oracle_queries``).
"""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from tests.helpers import run_module

torch_mark = pytest.mark.torch


def _entries(d: Path) -> list[str]:
    """Entry files of a key dir, as torch iterates them (sorted, no dotfiles)."""
    if not d.is_dir():
        return []
    return sorted(p.name for p in d.iterdir() if not p.name.startswith("."))


def _on_disk(root: Path) -> set[tuple[str, str, str]]:
    """All (kind, key, entry) triples under fxgraph/ and aotautograd/."""
    out = set()
    for p in (root / "fxgraph").glob("*/*/*"):
        out.add(("fxgraph", p.parent.name, p.name))
    for p in (root / "aotautograd").glob("*/*"):
        out.add(("aotautograd", p.parent.name, p.name))
    return out


def _load(path: Path):
    return pickle.loads(path.read_bytes())  # trusted: written by our own build


def _key_dir(root: Path, kind: str, key: str) -> Path:
    return root / "fxgraph" / key[1:3] / key if kind == "fxgraph" else root / "aotautograd" / key


def _keys(writes, kind):
    return sorted({w["key"] for w in writes if w["kind"] == kind})


# --------------------------------------------------------------------------- #
# The build
# --------------------------------------------------------------------------- #


@torch_mark
def test_build_summary_covers_every_case(real_cache):
    from tests.harness.cases import CASES

    s = real_cache.summary
    assert set(s["cases"]) == set(CASES)
    assert len(CASES) >= 9
    for name, case in CASES.items():
        got = s["cases"][name]
        assert got["calls"] == case.build_calls
        assert got["train"] == case.train
        assert len(got["lookups"]) == len(got["writes"]) == len(case.build_calls)
        # Every case put at least one entry of each kind into the cache, but the one
        # whose graph the AOTAutograd cache refuses (torch.tensor([SymInt])): FX only;
        # the same graph after a recompile (unet_timestep_auto's second call) adds an
        # FX key only; a training graph whose backward never ran (grad_forward) saves its
        # forward's FX entry only; a case with no build call (torch's answers only) adds nothing.
        kinds = {w["kind"] for call in got["writes"] for w in call}
        if not case.build_calls:
            assert kinds == set(), name
            continue
        bypassed = name in ("unet_timestep", "unet_timestep_auto")
        assert kinds == ({"fxgraph"} if name in ("unet_timestep", "grad_forward") else {"fxgraph", "aotautograd"}), name
        assert (got["counters"]["autograd_cache_bypass"] >= 1) == bypassed, (name, got["counters"])
        assert got["counters"]["fxgraph_cache_miss"] >= 1


@torch_mark
def test_layout_is_exactly_what_torch_wrote(real_cache):
    root = real_cache.root
    assert (root / "fxgraph").is_dir() and (root / "aotautograd").is_dir()
    written = {
        (w["kind"], w["key"], w["entry"])
        for case in real_cache.summary["cases"].values()
        for call in case["writes"]
        for w in call
    }
    assert _on_disk(root) == written
    for kind, key, _entry in written:
        # fxgraph/<key[1:3]>/<key>/<entry>, aotautograd/<key>/<entry>
        assert key[0] == ("f" if kind == "fxgraph" else "a"), key
        assert _key_dir(root, kind, key).is_dir()
    # No stray files at other depths (temp files would be dotfiles).
    assert not [p for p in (root / "fxgraph").glob("*/*") if p.is_file()]


@torch_mark
def test_entry_file_name_is_sha256_hash_of_its_bytes(real_cache):
    from torch._inductor.codecache import sha256_hash

    triples = _on_disk(real_cache.root)
    assert len(triples) >= 20
    for kind, key, entry in triples:
        path = _key_dir(real_cache.root, kind, key) / entry
        data = path.read_bytes()
        assert sha256_hash(data) == entry
        assert hasattr(pickle.loads(data), "guards_expr")


@torch_mark
def test_same_graph_two_regions_gives_one_key_with_two_guarded_entries(real_cache):
    writes = real_cache.writes("same_graph_two_regions")
    for kind in ("fxgraph", "aotautograd"):
        (key,) = _keys(writes, kind)  # both calls wrote under the SAME key
        entries = _entries(_key_dir(real_cache.root, kind, key))
        assert len(entries) == 2
        guards = sorted(
            _load(_key_dir(real_cache.root, kind, key) / e).guards_expr for e in entries
        )
        assert guards[0] != guards[1]
        assert "16 <= L['t0']" in guards[0]  # the [32, 3] call
        assert "L['t0'] <= 7" in guards[1]  # the [4, 3] call (x.shape[0] < 8)
    # ... and across the whole cache some fxgraph key has >= 2 entries.
    per_key: dict[str, int] = {}
    for kind, key, _ in _on_disk(real_cache.root):
        if kind == "fxgraph":
            per_key[key] = per_key.get(key, 0) + 1
    assert max(per_key.values()) >= 2


@torch_mark
def test_train_mlp_aot_entry_points_at_existing_forward_and_backward(real_cache):
    root = real_cache.root
    case = real_cache.summary["cases"]["train_mlp"]
    (aot_key,) = _keys(real_cache.writes("train_mlp"), "aotautograd")
    (entry,) = _entries(root / "aotautograd" / aot_key)
    aot = _load(root / "aotautograd" / aot_key / entry)
    assert aot.compiled_bw is not None
    built = {
        lk["graph"]: lk["key"] for call in case["lookups"] for lk in call if lk["kind"] == "fxgraph"
    }
    for part, graph in (("compiled_fw", "forward"), ("compiled_bw", "backward")):
        loadable = getattr(aot, part)
        fx_key = loadable.fx_graph_cache_info[0]
        assert fx_key == built[graph]
        fx_dir = root / "fxgraph" / fx_key[1:3] / fx_key
        fx_guards = [_load(fx_dir / e).guards_expr for e in _entries(fx_dir)]
        # AOTAutograd will ask for the FX entry with exactly this guard string.
        assert loadable.fx_graph_guard_expr in fx_guards
    assert built["forward"] != built["backward"]


# --------------------------------------------------------------------------- #
# The oracle: what torch does in a fresh process
# --------------------------------------------------------------------------- #


def test_the_fork_server_restarts_once_the_environment_changed(monkeypatch, tmp_path):
    """A test that points TMPDIR elsewhere (where torch puts its precompiled headers)
    gets a server started with it, as a fresh process would be, not the one before."""
    from tests.harness.oracle import ForkServer

    server = ForkServer()
    assert not server.stale()
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "another test (call)")  # set by pytest per test
    assert not server.stale()
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    assert server.stale()
    server.close()


def _asked(oracle_queries, name: str) -> tuple[dict, Path]:
    """Torch's answer to the query ``name`` of ``tests.harness.oracle_queries`` and the copy
    of the real cache it ran on."""
    q = oracle_queries[name]
    return q["answer"], q["cache"]


@torch_mark
def test_oracle_build_shape_hits_entries_that_exist_on_disk(real_cache, oracle_queries):
    r, copy = _asked(oracle_queries, "build_shape_hit")
    assert r["error"] is None
    aot, fx = r["lookups"]
    assert aot["kind"] == "aotautograd" and fx["kind"] == "fxgraph"
    # The AOT lookup evaluates guards with the input's hints and hits the built entry.
    assert aot["key"] == _keys(real_cache.writes("branch_on_size"), "aotautograd")[0]
    assert (aot["status"], aot["mode"], aot["hints"]) == ("hit", "guards", [4, 3])
    assert aot["hit"] in _entries(copy / "aotautograd" / aot["key"])
    # The FX lookup on an AOT hit matches the guard STRING recorded in the AOT entry.
    ref = aot["fx_refs"]["compiled_fw"]
    assert (fx["key"], fx["mode"], fx["status"], fx["graph"]) == (
        ref["key"],
        "exact",
        "hit",
        "forward",
    )
    assert fx["guards_expr"] == ref["guards_expr"] == aot["guards_expr"]
    assert fx["hit"] in _entries(_key_dir(copy, "fxgraph", fx["key"]))
    assert fx["hints"] == [4, 3]
    assert r["writes"] == [] and _on_disk(copy) == _on_disk(real_cache.root)
    c = r["counters"]
    assert (c["autograd_cache_hit"], c["fxgraph_cache_hit"]) == (1, 1)
    assert (c["autograd_cache_miss"], c["fxgraph_cache_miss"]) == (0, 0)


@torch_mark
def test_oracle_branch_on_size_unbuilt_side_is_a_new_key(real_cache, oracle_queries):
    """x.shape[0] = 16 takes the branch never built: a different graph, so new
    keys (full_miss, no candidates) and torch writes fresh entries."""
    r, copy = _asked(oracle_queries, "unbuilt_side")
    before = _on_disk(real_cache.root)
    old_keys = {(kind, key) for kind, key, _ in before}
    assert r["error"] is None
    assert [(lk["kind"], lk["status"], lk["candidates"]) for lk in r["lookups"]] == [
        ("aotautograd", "full_miss", []),
        ("fxgraph", "full_miss", []),
    ]
    for lk in r["lookups"]:
        assert (lk["kind"], lk["key"]) not in old_keys
        assert lk["hit"] is None and lk["mode"] == "guards" and lk["hints"] == [16, 3]
    # (The same call asked again on that copy afterwards hits and writes nothing: test_fork_server.py.)
    new = _on_disk(copy) - before
    assert new == {(w["kind"], w["key"], w["entry"]) for w in r["writes"]}
    assert sorted(kind for kind, _, _ in new) == ["aotautograd", "fxgraph"]
    c = r["counters"]
    assert (c["autograd_cache_miss"], c["fxgraph_cache_miss"], c["autograd_cache_hit"]) == (1, 1, 0)


@torch_mark
def test_oracle_same_key_unbuilt_region_is_a_guard_miss(real_cache, oracle_queries):
    """8 <= x.shape[0] < 16: same graph, same keys, but every entry's guards fail."""
    r, copy = _asked(oracle_queries, "unbuilt_region")
    assert _on_disk(copy) == _on_disk(real_cache.root)  # on_copy=True left the copy it was given alone
    writes = real_cache.writes("same_graph_two_regions")
    aot, fx = r["lookups"]
    for lk in (aot, fx):
        (built_key,) = _keys(writes, lk["kind"])
        assert lk["key"] == built_key
        assert lk["status"] == "guard_miss" and lk["hit"] is None and lk["mode"] == "guards"
        assert lk["candidates"] == _entries(_key_dir(copy, lk["kind"], built_key))
        assert len(lk["candidates"]) == 2
    # torch adds a third entry under each existing key.
    assert sorted((w["kind"], w["key"]) for w in r["writes"]) == sorted(
        [("aotautograd", aot["key"]), ("fxgraph", fx["key"])]
    )
    assert r["counters"]["autograd_cache_guard_miss"] == 1


@torch_mark
def test_oracle_train_hit_fetches_forward_and_backward_by_exact_guard(oracle_queries):
    r, copy = _asked(oracle_queries, "train_hit")
    assert r["error"] is None and r["writes"] == []
    aot, fw, bw = r["lookups"]
    assert aot["kind"] == "aotautograd" and aot["status"] == "hit"
    assert (fw["graph"], bw["graph"]) == ("forward", "backward")
    for lk, part in ((fw, "compiled_fw"), (bw, "compiled_bw")):
        assert lk["mode"] == "exact" and lk["status"] == "hit"
        assert lk["key"] == aot["fx_refs"][part]["key"]
        assert lk["guards_expr"] == aot["fx_refs"][part]["guards_expr"]
        assert lk["hit"] in _entries(_key_dir(copy, "fxgraph", lk["key"]))
    # Same hints everywhere (the batch size); the backward is loaded eagerly, in
    # the forward call, not during loss.backward().
    assert [lk["hints"] for lk in r["lookups"]] == [[5], [5], [5]]
    assert {lk["phase"] for lk in r["lookups"]} == {"forward"}
    assert (r["counters"]["autograd_cache_hit"], r["counters"]["fxgraph_cache_hit"]) == (1, 2)


@torch_mark
def test_oracle_automatic_dynamic_first_call_of_a_fresh_process_is_static(real_cache, oracle_queries):
    """dynamic=None: a fresh process compiles the first call statically, so only
    the exact static shape built first ([4, 3]) hits; [10, 3] -- built, but served by
    the dynamic recompile in the build process -- misses with a new static key (asked
    after the [4, 3] call, on the same copy)."""
    built_keys = set(_keys(real_cache.writes("automatic_dynamic"), "aotautograd"))
    assert len(built_keys) == 2  # static [4, 3] + dynamic recompile

    hit, copy = _asked(oracle_queries, "auto_static_hit")
    aot = hit["lookups"][0]
    assert aot["key"] in built_keys and aot["status"] == "hit"
    assert aot["hints"] == [] and aot["guards_expr"] is None

    miss, again = _asked(oracle_queries, "auto_new_static")
    assert again == copy
    aot, fx = miss["lookups"]
    assert aot["key"] not in built_keys and aot["status"] == "full_miss"
    assert aot["hints"] == fx["hints"] == []
    (fx_write,) = [w for w in miss["writes"] if w["kind"] == "fxgraph"]
    assert (
        _load(_key_dir(copy, "fxgraph", fx_write["key"]) / fx_write["entry"]).guards_expr
        is None
    )
    assert not (copy / "dynamo").exists()  # no local PGO state without a job_id


@torch_mark
def test_oracle_reports_torch_errors_instead_of_raising(oracle_queries):
    r, _ = _asked(oracle_queries, "refused")  # mark_dynamic_range outside [2, 64]
    assert r["error"]["type"] == "ConstraintViolationError"
    assert "100" in r["error"]["message"]
    assert r["lookups"] == [] and r["writes"] == []


# --------------------------------------------------------------------------- #
# Helpers that need no torch
# --------------------------------------------------------------------------- #


def test_block_torch_blocks_torch_but_not_the_demo_entry_points():
    blocked = run_module("demo.cases", block_torch=True)
    assert blocked.returncode != 0
    assert "ModuleNotFoundError" in blocked.stderr and "'torch'" in blocked.stderr
    for module in ("demo.build_cache", "tests.harness.oracle"):
        ok = run_module(module, "--help", block_torch=True)
        assert ok.returncode == 0, ok.stderr
        assert "cache_dir" in ok.stdout
