"""Automatic dynamic's two phases as ``fxcache match`` says them (synthetic cache, no torch).

A function with a key of static shapes (x f32[4, 3]) and a key with x.size(0)
symbolic, as ``dynamic=None`` leaves them. That the phases agree with torch is
tests/torch/test_oracle_suite.py's job (automatic_dynamic_cols, a saved profile) and
tests/torch/test_models_oracle.py's (llama_train); here: the lines, the exit status,
the JSON and the usage error.
"""

from __future__ import annotations

import json

import pytest

from fxcache_core.cache.keys import KeyKind
from tests.helpers import run_fxcache
from tests.synth import (
    aot_entry_with_sources,
    fake_key,
    fx_entry_bytes,
    local_source,
    size_source,
    write_entry,
)

FILE = "/src/model.py"


def _key(root, static: bool) -> str:
    fx = fake_key(KeyKind.FX_GRAPH, f"auto{static}")
    aot = fake_key(KeyKind.AOT_AUTOGRAD, f"auto{static}")
    guards = None if static else "2 <= L['t0']"
    write_entry(root, KeyKind.FX_GRAPH, fx, fx_entry_bytes(guards, fx, origin=("auto", FILE, 10)))
    inputs = ([("f32[4, 3][3, 1]cpu", local_source("x"))] if static else
              [("Sym(s0)", size_source("x", 0)), ("f32[s0, 3][3, 1]cpu", local_source("x"))])
    write_entry(root, KeyKind.AOT_AUTOGRAD, aot, aot_entry_with_sources(guards, (fx, guards), inputs,
                                                                         ("auto", FILE, 10)))
    return aot


@pytest.fixture
def cache(tmp_path):
    root = tmp_path / "cache"
    return root, _key(root, static=True), _key(root, static=False)


def _match(root, *args: str):
    return run_fxcache("--cache-dir", str(root), "match", "--fn", "auto", *args)


def test_both_phases_are_said_and_the_first_call_decides(cache):
    root, static, dynamic = cache
    p = _match(root, "--dynamic", "none", "--shapes", "x=[4,3]")
    first, after = p.stdout.splitlines()[:2]
    assert p.returncode == 0, p.stderr
    assert first.startswith("auto: first call in a fresh process: HIT entry ") and f"(aot {static[:12]})" in first
    # After a recompile: the dynamic key if the recompile changed x.size(0), the static one if a
    # Python value's guard forced it; which, the call does not say.
    assert after.startswith("  after a recompile (automatic dynamic): UNDECIDED: ")
    body = json.loads(_match(root, "--dynamic", "none", "--shapes", "x=[4,3]", "--after-recompile", "--json").stdout)
    later = body["verdicts"]["functions"][0]["phases"]["after-recompile"]
    assert later["why_code"] == "static-after-recompile-unknown" and "x.size(0)" in later["line"], later
    p = _match(root, "--dynamic", "none", "--shapes", "x=[9,3]")
    assert p.returncode == 1
    assert p.stdout.startswith("auto: first call in a fresh process: NEW GRAPH: static x=[9,3] was never compiled")
    # After a recompile: the dynamic key if exactly x.size(0) changed before the call; the
    # call does not say what changed.
    assert _match(root, "--dynamic", "none", "--shapes", "x=[9,3]", "--after-recompile").returncode == 3


def test_the_json_gives_each_phase_and_the_keys_of_the_phase_asked(cache):
    root, static, dynamic = cache
    p = _match(root, "--dynamic", "none", "--shapes", "x=[9,3]", "--after-recompile", "--json")
    body = json.loads(p.stdout)
    (fv,) = body["verdicts"]["functions"]
    assert p.returncode == body["verdicts"]["exit_code"] == 3
    assert fv["phase"] == "after-recompile" and (fv["status"], fv["key"]) == ("undecided", dynamic)
    assert fv["why_code"] == "dynamic-after-recompile-unknown" and "x.size(0)" in fv["line"], fv
    assert fv["phases"]["first"]["status"] == "new-graph"
    assert fv["phases"]["first"]["why_code"] == "static-never-compiled"
    assert fv["phases"]["after-recompile"]["heading"] == "after a recompile (automatic dynamic)"
    assert body["phase"] == "after-recompile"
    by_key = {r["key"]: r for r in body["results"]}  # the keys as the later call is traced
    assert by_key[dynamic]["status"] == "undecided" and by_key[dynamic]["auto_dynamic"] == ["x.size(0)"]
    assert by_key[dynamic]["uncertain_codes"] == ["dynamic-after-recompile-unknown"]
    assert by_key[static]["status"] == "no-fit"
    (first,) = body["passes"]  # the other phase's keys
    assert first["phase"] == "first" and {r["key"]: r["status"] for r in first["results"]}[dynamic] == "no-fit"


def test_without_the_mode_a_phase_is_decided_only_where_both_modes_agree(cache):
    root, _, _ = cache
    p = _match(root, "--shapes", "x=[9,3]", "--json")
    (fv,) = json.loads(p.stdout)["verdicts"]["functions"]
    assert p.returncode == 3 and fv["why_code"] == "mode-changes-verdict"
    assert "under dynamic=None NEW GRAPH" in fv["line"] and "under dynamic=True" in fv["line"]
    # A rank no key has: a new graph either way.
    p = _match(root, "--shapes", "x=[9,3,2]", "--json")
    (fv,) = json.loads(p.stdout)["verdicts"]["functions"]
    assert p.returncode == 1 and fv["status"] == "new-graph" and set(fv["phases"]) == {"first", "after-recompile"}


def test_after_recompile_where_there_is_one_phase_is_a_usage_error(cache):
    root, _, _ = cache
    for mode in ("true", "false"):
        p = _match(root, "--dynamic", mode, "--shapes", "x=[4,3]", "--after-recompile")
        assert p.returncode == 2 and p.stdout == "" and len(p.stderr.splitlines()) == 1, p.stderr
        assert f"--after-recompile asks about automatic dynamic's calls after a recompile: under --dynamic {mode}" \
            in p.stderr


@pytest.fixture
def static_only(tmp_path):
    """A function with one key of static shapes and none with a symbol, as a process that
    recompiled only for a Python value (a flag) leaves it."""
    root = tmp_path / "cache"
    return root, _key(root, static=True)


def test_after_a_recompile_no_key_with_a_symbol_leaves_the_static_key_undecided(static_only):
    """Whether the recompile changed a size is not in the call: a changed size is traced as a
    symbol (no key has one: another graph), a recompile a flag forced leaves the sizes static
    and torch looks this key up (tests/torch/test_phases_oracle.py asks torch both ways)."""
    root, static = static_only
    p = _match(root, "--dynamic", "none", "--shapes", "x=[4,3]", "--after-recompile", "--json")
    (fv,) = json.loads(p.stdout)["verdicts"]["functions"]
    assert p.returncode == 3 and fv["status"] == "undecided", fv
    assert fv["why_code"] == "static-after-recompile-unknown", fv
    assert fv["phases"]["first"]["status"] == "hit" and fv["phases"]["first"]["key"] == static


@pytest.mark.parametrize("setting", ["torch._dynamo.config.assume_static_by_default=False",
                                     "torch._dynamo.config.automatic_dynamic_shapes=False"])
@pytest.mark.parametrize("shape", ["x=[9,3]", "x=[4,3]"])
def test_a_stated_dynamo_setting_leaves_every_phase_undecided(cache, setting, shape):
    """The phases' rules (static first calls, automatic dynamic) are Dynamo's config: stated,
    no key is ruled out by them, and no phase is decided."""
    root, _, _ = cache
    for extra in ((), ("--after-recompile",)):
        p = _match(root, "--dynamic", "none", "--shapes", shape, "--inputs", setting, *extra, "--json")
        (fv,) = json.loads(p.stdout)["verdicts"]["functions"]
        assert p.returncode == 3 and fv["status"] == "undecided", fv
        assert {ph["status"] for ph in fv["phases"].values()} == {"undecided"}, fv
        assert setting in fv["line"], fv
        body = json.loads(p.stdout)
        for results in (body["results"], *(q["results"] for q in body["passes"])):
            # No key is ruled out by what Dynamo traces static under its default config.
            assert not any(r["status"] == "no-fit" and "dim-traced-static" in r["reason_codes"] for r in results)
