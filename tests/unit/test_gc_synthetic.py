"""gc planning and execution on hand-made caches: policies, consistency, safety."""

from __future__ import annotations

import os
import time

import pytest

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import scan_cache
from fxcache_core.catalog.reader import Catalog
from fxcache_core.prune.execute import execute_plan
from fxcache_core.prune.plan import plan_gc
from fxcache_core.prune.policy import TEMP_FILE_GRACE_S, GcPolicy
from fxcache_core.quantities import parse_duration, parse_size
from tests.helpers import age
from tests.helpers import plan_gc_on as _plan
from tests.synth import aot_entry_bytes, fake_key, fx_entry_bytes, write_entry

DAY = 86400.0


def _age(path, days: float, now: float) -> None:
    age(path, days * DAY, now)


@pytest.fixture
def cache(tmp_path):
    """fx key A with 3 entries aged 1, 5, 10 days; an AOT key loading A's newest entry."""
    now = time.time()
    fx = fake_key(KeyKind.FX_GRAPH, "A")
    paths = {}
    for days, g in ((1, "L['t0'] <= 8"), (5, "L['t0'] > 8"), (10, "L['t0'] > 100")):
        p = write_entry(tmp_path, KeyKind.FX_GRAPH, fx, fx_entry_bytes(g, fx))
        _age(p, days, now)
        paths[days] = p
    aot = fake_key(KeyKind.AOT_AUTOGRAD, "B")
    ap = write_entry(tmp_path, KeyKind.AOT_AUTOGRAD, aot, aot_entry_bytes("L['t0'] <= 8", (fx, "L['t0'] <= 8")))
    _age(ap, 1, now)
    return tmp_path, now, fx, aot, paths, ap


def test_older_than_selects_by_last_use(cache):
    root, now, fx, aot, paths, ap = cache
    plan = _plan(root, older_than_s=3 * DAY, now=now)
    assert {r.file.path for r in plan.removals} == {paths[5], paths[10]}
    assert plan.bytes_freed == paths[5].stat().st_size + paths[10].stat().st_size
    assert all("unused for" in r.reasons[0] for r in plan.removals)


def test_plan_touches_nothing(cache):
    root, now, *_ = cache
    before = sorted(p for p in root.rglob("*"))
    _plan(root, older_than_s=0, now=now)
    assert sorted(p for p in root.rglob("*")) == before


def test_removing_an_fx_entry_takes_the_aot_entry_that_loads_it(cache):
    root, now, fx, aot, paths, ap = cache
    os.utime(paths[1], (now - 20 * DAY, now - 20 * DAY))  # the one the AOT entry loads is old now
    plan = _plan(root, older_than_s=15 * DAY, now=now)
    by_path = {r.file.path: r for r in plan.removals}
    assert set(by_path) == {paths[1], ap}
    assert "loads FX entry" in by_path[ap].reasons[0]


def test_each_reason_and_refusal_carries_a_stable_code_beside_its_text(cache):
    root, now, fx, aot, paths, ap = cache
    os.utime(paths[1], (now - 20 * DAY, now - 20 * DAY))
    plan = _plan(root, older_than_s=15 * DAY, now=now)
    codes = {r.file.path: r.to_json()["reason_codes"] for r in plan.removals}
    assert codes == {paths[1]: ["unused"], ap: ["loads-removed-fx-entry"]}
    assert [r.to_json()["reasons"] for r in plan.removals] == [list(r.reasons) for r in plan.removals]
    paths[1].write_bytes(b"rewritten by a compile")
    res = execute_plan(plan).to_json()
    assert [(s["why"], s["why_code"]) for s in res["skipped"]] == [("changed since the plan", "changed-since-plan")]


def test_max_size_removes_least_recently_used_first(cache):
    root, now, fx, aot, paths, ap = cache
    total = scan_cache(root).size
    budget = total - paths[10].stat().st_size
    plan = _plan(root, max_size_bytes=budget, now=now)
    assert [r.file.path for r in plan.removals] == [paths[10]]
    assert total - plan.bytes_freed <= budget


def test_keep_last_keeps_newest_per_key(cache):
    root, now, fx, aot, paths, ap = cache
    plan = _plan(root, keep_last=1, now=now)
    assert {r.file.path for r in plan.removals} == {paths[5], paths[10]}


def test_unreadable_entries_and_only_old_temp_files(cache):
    root, now, fx, *_ = cache
    bad = write_entry(root, KeyKind.FX_GRAPH, fx, b"\x80\x04truncated")
    old_tmp = write_entry(root, KeyKind.FX_GRAPH, fx, b"x", name=".tmpold")
    _age(old_tmp, 1, now)
    young_tmp = write_entry(root, KeyKind.FX_GRAPH, fx, b"x", name=".tmpnew")
    plan = _plan(root, unreadable=True, now=now)
    got = {r.file.path for r in plan.removals}
    assert got == {bad, old_tmp}
    assert young_tmp not in got


def test_dangling_aot_entry_whose_fx_entry_is_gone(cache):
    root, now, fx, aot, paths, ap = cache
    paths[1].unlink()
    plan = _plan(root, dangling=True, now=now)
    assert [r.file.path for r in plan.removals] == [ap]
    assert "forward FX entry" in plan.removals[0].reasons[0]


def test_execute_deletes_planned_files_and_rmdirs_empty_key_dirs(cache):
    root, now, fx, aot, paths, ap = cache
    plan = _plan(root, older_than_s=0, now=now + 1)
    res = execute_plan(plan)
    assert not res.failed and not res.skipped
    assert res.bytes_freed == plan.bytes_freed
    assert not (root / "aotautograd" / aot).exists()
    assert not (root / "fxgraph" / fx[1:3]).exists()
    assert (root / "fxgraph").is_dir() and (root / "aotautograd").is_dir()


def test_execute_skips_files_changed_since_the_plan(cache):
    root, now, fx, aot, paths, ap = cache
    plan = _plan(root, older_than_s=3 * DAY, now=now)
    paths[5].write_bytes(b"rewritten by a compile")
    res = execute_plan(plan)
    assert paths[5].exists() and not paths[10].exists()
    assert [(p, why) for p, why in res.skipped] == [(paths[5], "changed since the plan")]


def test_execute_never_follows_symlinks_or_leaves_the_cache(cache, tmp_path_factory):
    root, now, fx, aot, paths, ap = cache
    outside = tmp_path_factory.mktemp("outside") / "precious"
    outside.write_bytes(b"keep me")
    plan = _plan(root, older_than_s=3 * DAY, now=now)
    # Swap a planned entry for a symlink to a file outside the cache.
    paths[10].unlink()
    os.symlink(outside, paths[10])
    res = execute_plan(plan)
    assert outside.read_bytes() == b"keep me"
    assert paths[10].is_symlink()
    assert (paths[10], "not a regular file") in res.skipped


def test_execute_reports_permission_errors_and_goes_on(cache, monkeypatch):
    root, now, fx, aot, paths, ap = cache
    plan = _plan(root, older_than_s=0, now=now + 1)
    real_unlink = os.unlink

    fx_names = {p.name for p in paths.values()}

    def unlink(p, *a, **kw):  # as for a read-only dir owned by someone else (root ignores chmod)
        # gc unlinks by name in the opened key dir (unlinkat with dir_fd).
        if os.path.basename(os.fspath(p)) in fx_names:
            raise PermissionError(13, "Permission denied", str(p))
        return real_unlink(p, *a, **kw)

    monkeypatch.setattr(os, "unlink", unlink)
    res = execute_plan(plan)
    assert sorted(p for p, _ in res.failed) == sorted(paths.values())
    assert all(why == "Permission denied" for _, why in res.failed)
    assert [r.file.path for r in res.removed] == [ap] and not ap.exists()


def test_young_temp_file_is_never_touched_even_if_planned(cache):
    root, now, fx, *_ = cache
    tmp = write_entry(root, KeyKind.FX_GRAPH, fx, b"x", name=".tmpwriting")  # a compile writing now
    plan = _plan(root, unreadable=True, now=time.time() + 2 * TEMP_FILE_GRACE_S)  # a plan from a skewed clock
    assert tmp in {r.file.path for r in plan.removals}
    res = execute_plan(plan)
    assert tmp.exists()
    assert (tmp, "temp file in use") in res.skipped


def test_an_entry_used_after_the_plan_is_kept(cache):
    root, now, fx, aot, paths, ap = cache
    plan = _plan(root, older_than_s=3 * DAY, now=now)
    t = time.time()
    os.utime(paths[10], (t, paths[10].stat().st_mtime))  # torch read it meanwhile (atime moves)
    res = execute_plan(plan)
    assert paths[10].exists() and not paths[5].exists()
    assert (paths[10], "used since the plan") in res.skipped


def test_entries_behind_symlinks_are_never_planned(cache, tmp_path_factory):
    root, now, fx, aot, paths, ap = cache
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    os.rename(root / "aotautograd", elsewhere / "aotautograd")
    os.symlink(elsewhere / "aotautograd", root / "aotautograd")
    plan = _plan(root, older_than_s=0, now=now + 1)
    assert ap not in {r.file.path for r in plan.removals}
    assert not any("aotautograd" in str(r.file.path) for r in plan.removals)


def test_symlinked_fxgraph_does_not_make_aot_entries_dangling(cache, tmp_path_factory):
    root, now, fx, aot, paths, ap = cache
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    os.rename(root / "fxgraph", elsewhere / "fxgraph")
    os.symlink(elsewhere / "fxgraph", root / "fxgraph")
    assert _plan(root, dangling=True, unreadable=True, now=now).removals == ()


def test_entries_fxcache_cannot_read_are_not_unreadable_for_gc(cache, monkeypatch, fresh_decoders):
    root, now, fx, aot, paths, ap = cache
    import fxcache_core.catalog.pool as pool_mod
    from fxcache_core.catalog.reader import Catalog, Unreadable

    real = pool_mod.read_entry_proven

    def denied(p):  # what root cannot be refused (chmod 000 does not stop it)
        if os.fspath(p) == os.fspath(paths[1]):  # a str or a Path
            raise PermissionError(13, "Permission denied", str(p))
        return real(p)

    monkeypatch.setattr(pool_mod, "read_entry_proven", denied)  # in the workers forked from here on
    scan = scan_cache(root)
    got = Catalog(scan).load(next(e for e in scan.entries() if e.path == paths[1]))
    assert isinstance(got, Unreadable) and got.cause == "io", got
    plan = _plan(root, unreadable=True, dangling=True, now=now)
    assert plan.removals == ()  # neither the entry nor the AOT entry that loads it


def test_max_size_counts_the_aot_entries_it_takes_along(cache):
    root, now, fx, aot, paths, ap = cache
    os.utime(paths[1], (now - 30 * DAY, now - 30 * DAY))  # the FX entry the AOT entry loads is LRU
    total = scan_cache(root).size
    # Removing paths[1] alone does not fit; with the AOT entry it must take along, it does.
    budget = total - paths[1].stat().st_size - ap.stat().st_size
    plan = _plan(root, max_size_bytes=budget, now=now)
    got = [r.file.path for r in plan.removals]
    assert got == [ap, paths[1]]  # counted against the budget: nothing more goes
    assert total - plan.bytes_freed <= budget


@pytest.mark.parametrize("text,seconds", [("90s", 90), ("30m", 1800), ("12h", 43200), ("7d", 604800), ("2w", 1209600)])
def test_parse_duration(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text,n", [("1000B", 1000), ("2GB", 2 * 10**9), ("500mb", 5 * 10**8), ("1GiB", 2**30), ("1.5KiB", 1536)])
def test_parse_size(text, n):
    assert parse_size(text) == n


@pytest.mark.parametrize("bad", ["7", "7y", "-1d", "d", ""])
def test_bad_duration(bad):
    with pytest.raises(ValueError):
        parse_duration(bad)


@pytest.mark.parametrize("bad", ["1.5", "2", "-1GB", "GB", "2 parsecs"])
def test_sizes_need_a_unit(bad):
    with pytest.raises(ValueError, match="with a unit"):
        parse_size(bad)


def test_unreadable_includes_entries_whose_name_is_not_their_hash(cache):
    root, now, fx, aot, paths, ap = cache
    altered = paths[5]
    altered.write_bytes(fx_entry_bytes("L['t0'] > 9", fx))  # valid, but not what torch hashed
    os.utime(altered, (now - 5 * DAY, now - 5 * DAY))
    plan = _plan(root, unreadable=True, now=now)
    assert [(r.file.path, r.reasons) for r in plan.removals] == [
        (altered, ("its name is not the sha256 of its content (altered after torch wrote it)",))]


def test_rm_by_key_and_entry_prefix_takes_the_loaders_along(cache):
    from fxcache_core.errors import KeyLookupError
    from fxcache_core.prune.plan import plan_rm

    root, now, fx, aot, paths, ap = cache
    scan = scan_cache(root)
    cat = Catalog(scan)
    whole = plan_rm(cat, scan.find(fx))
    assert [r.file.path for r in whole.removals][0] == ap  # AOT first: it loads paths[1]
    assert {r.file.path for r in whole.removals} == {ap, *paths.values()}
    one = plan_rm(cat, scan.find(fx), [paths[10].name[:8]])
    assert [r.file.path for r in one.removals] == [paths[10]]  # nothing loads it
    with pytest.raises(KeyLookupError, match="matches 0 entries"):
        plan_rm(cat, scan.find(fx), ["zzzz"])
    res = execute_plan(plan_rm(cat, scan.find(aot)))
    assert [r.file.path for r in res.removed] == [ap] and all(p.exists() for p in paths.values())


# --- generated code (kernels, wrapper modules) --------------------------------------


def _code(root, seed: str, ext: str, days: float, now: float):
    from fxcache_core.cache.keys import sha256_hash

    key = "c" + sha256_hash(seed.encode())
    d = root / key[1:3]
    d.mkdir(exist_ok=True)
    p = d / f"{key}.{ext}"
    p.write_text(f"# {seed}\n")
    _age(p, days, now)
    return p


def test_artifacts_need_an_age_and_only_old_generated_code_goes(cache, tmp_path_factory):
    root, now, *_ = cache
    with pytest.raises(ValueError, match="give older_than_s too") as e:  # the CLI names it --older-than
        GcPolicy(artifacts=True)
    assert e.value.param == "artifacts" and "--" not in str(e.value)
    old_so = _code(root, "k1", "so", 10, now)
    old_cpp = _code(root, "k1", "main.cpp", 10, now)
    young = _code(root, "k2", "cpp", 0.5 / 24, now)           # 30 min: may be a compile in flight
    foreign = root / old_so.parent.name / "notes.txt"
    foreign.write_text("not torch's")
    _age(foreign, 10, now)
    (root / "locks").mkdir()
    lock = root / "locks" / (old_so.name.split(".")[0] + ".lock")
    lock.write_text("")
    _age(lock, 10, now)
    outside = _code(tmp_path_factory.mktemp("elsewhere"), "k3", "so", 10, now)
    os.symlink(outside.parent, root / outside.parent.name)   # a symlinked code dir: never entered
    plan = plan_gc(Catalog(scan_cache(root)), GcPolicy(older_than_s=60.0, artifacts=True, now=now))
    code = {r.file.path for r in plan.removals if r.what == "code"}
    assert code == {old_so, old_cpp}
    assert all(r.kind is KeyKind.CODE and r.entry is None for r in plan.removals if r.what == "code")
    # A policy of seconds still never reaches code younger than the grace period.
    assert young not in code and TEMP_FILE_GRACE_S > 60
    res = execute_plan(plan)
    assert not old_so.exists() and not old_cpp.exists()
    assert young.exists() and foreign.exists() and lock.exists() and outside.exists()
    # Code dirs are never rmdir'd: torch's write_atomic may have just made one to write into.
    assert old_so.parent.exists()
    assert res.failed == ()


def test_planned_generated_code_used_since_is_kept(cache):
    root, now, *_ = cache
    so = _code(root, "k1", "so", 10, now)
    plan = plan_gc(Catalog(scan_cache(root)), GcPolicy(older_than_s=DAY, artifacts=True, now=now))
    assert so in {r.file.path for r in plan.removals}
    os.utime(so, (time.time(), so.stat().st_mtime))  # torch loaded it after the plan
    res = execute_plan(plan)
    assert so.exists() and any(p == so for p, _ in res.skipped)


def test_generated_code_is_only_deleted_outside_torchs_compile_lock(cache):
    """Torch compiles C++ under FileLock(<root>/locks/<key>.lock); gc takes the same lock."""
    import subprocess
    import sys

    root, now, *_ = cache
    so = _code(root, "k1", "so", 10, now)
    key = so.name.split(".")[0]
    (root / "locks").mkdir()
    lock = root / "locks" / f"{key}.lock"
    lock.write_text("")
    plan = plan_gc(Catalog(scan_cache(root)), GcPolicy(older_than_s=DAY, artifacts=True, now=now))
    assert so in {r.file.path for r in plan.removals}
    # Another process (a compile) holds the lock: gc leaves the file.
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from filelock import FileLock\n"
        f"with FileLock({str(lock)!r}):\n    print('held', flush=True); time.sleep(30)")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        res = execute_plan(plan)
        assert so.exists() and res.skipped == ((so, "a compile holds its lock"),)
    finally:
        holder.kill()
        holder.wait()
    res = execute_plan(plan)  # released: now it goes
    assert not so.exists() and [r.file.path for r in res.removed] == [so] and lock.exists()


# torch 2.14+ writes <key>.so.load_ok beside the CPU ISA check's library once a child
# process could dlopen it (VecISA.check_build, torch/_inductor/cpu_vec_isa.py). CI runs
# torch 2.13, which never writes it: the layout is made by hand here.


def test_a_load_ok_marker_goes_first_with_its_library_and_keeps_it_alive(cache):
    root, now, *_ = cache
    so = _code(root, "isa", "so", 10, now)
    marker = so.with_name(so.name + ".load_ok")
    marker.write_text("")
    _age(marker, 10, now)
    recent = _code(root, "isa2", "so", 10, now)          # its marker was written 2 days ago
    recent_marker = recent.with_name(recent.name + ".load_ok")
    recent_marker.write_text("")
    _age(recent_marker, 2, now)
    plan = plan_gc(Catalog(scan_cache(root)), GcPolicy(older_than_s=5 * DAY, artifacts=True, now=now))
    order = [r.file.path for r in plan.removals if r.what == "code"]
    assert order == [marker, so]                          # the unit is as young as its newest file
    assert "removed with it" in plan.removals[[r.file.path for r in plan.removals].index(marker)].reasons[0]
    res = execute_plan(plan)
    assert not so.exists() and not marker.exists() and recent.exists() and recent_marker.exists()
    assert res.failed == () and res.skipped == ()


def test_a_library_whose_marker_stays_is_kept(cache):
    root, now, *_ = cache
    so = _code(root, "isa", "so", 10, now)
    marker = so.with_name(so.name + ".load_ok")
    marker.write_text("")
    _age(marker, 10, now)
    plan = plan_gc(Catalog(scan_cache(root)), GcPolicy(older_than_s=DAY, artifacts=True, now=now))
    os.utime(marker, (time.time(), marker.stat().st_mtime))  # torch read it after the plan
    res = execute_plan(plan)
    assert so.exists() and marker.exists() and {p for p, _ in res.skipped} == {so, marker}
    assert any("load_ok marker is still there" in why for p, why in res.skipped if p == so)


def test_a_marker_whose_library_is_gone_is_removed(cache):
    root, now, *_ = cache
    so = _code(root, "isa", "so", 10, now)
    marker = so.with_name(so.name + ".load_ok")
    marker.write_text("")
    _age(marker, 0.5, now)                                # 12 h: newer than --older-than, past the grace
    so.unlink()
    plan = plan_gc(Catalog(scan_cache(root)), GcPolicy(older_than_s=5 * DAY, artifacts=True, now=now))
    (r,) = [r for r in plan.removals if r.what == "code"]
    assert r.file.path == marker and "library that is gone" in r.reasons[0]
    without = plan_gc(Catalog(scan_cache(root)), GcPolicy(older_than_s=5 * DAY, now=now))
    assert not [r for r in without.removals if r.what == "code"]  # only --artifacts touches code


@pytest.mark.parametrize("bad", ["9" * 400 + "B", "9" * 5000 + "GB", "10000000000EB", ""])
def test_sizes_past_int64_or_empty_are_refused_in_one_line(bad):
    with pytest.raises(ValueError) as e:
        parse_size(bad)
    assert "\n" not in str(e.value) and len(str(e.value)) < 120


@pytest.mark.parametrize("bad", ["9" * 400 + "d", "", "1000000w"])
def test_durations_past_a_thousand_years_or_empty_are_refused(bad):
    with pytest.raises(ValueError) as e:
        parse_duration(bad)
    assert "\n" not in str(e.value) and len(str(e.value)) < 120


def test_every_policy_rule_is_one_select_function_run_by_plan_gc():
    """Each rule field of GcPolicy has its `_select_<rule>` in prune.rules.RULES,
    max_size last (it measures what the other rules left)."""
    from dataclasses import fields

    from fxcache_core.prune.rules import RULES

    settings = {"stale_include_dir", "now", "trace_use", "keep_costly_s"}  # tune a rule, select nothing
    rules = {f.name.removesuffix("_s").removesuffix("_bytes").removesuffix("_against")
             for f in fields(GcPolicy) if f.name not in settings}
    assert {r.__name__.removeprefix("_select_") for r in RULES} == rules
    assert RULES[-1].__name__ == "_select_max_size"
