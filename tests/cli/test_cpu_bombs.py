"""Entries and profiles that cost more CPU to decode than any budget: every command bounds them.

Synthetic on purpose (hostility): torch never writes these, an attacker writes them
in seconds. :func:`tests.synth.hash_bomb` is 500 bytes whose dict key hashes 2**60
tuples inside C, where no Python bound or signal handler runs (torch's own
``pickle.loads`` never comes back); :func:`tests.synth.hash_flood` is a frozenset of
100,000 ints that all hash alike, n**2/2 comparisons inside C: another shape of the
family. Each is put in an FX key and an AOTAutograd key, named by its content's
sha256 as torch names entries, and sorted before the key's valid entry (torch would
try it first), and as a saved profile. Every command that decodes must finish with
the entry reported as over the CPU budget, never hang (a forked run is killed at its
timeout; in-process reads run under :func:`tests.helpers.alarm`), and never take it
for a decided answer: gc keeps it, verify does not count it as checked, match is
undecided where torch would try it before a hit.

The runs set ``FXCACHE_DECODE_CPU_S=0.1`` (the default is 2 s) so that each bomb
costs the suite a tenth of a second. That the suite's real caches, and the caches of
torch 2.14.1 and 2.15.0, decode whole under the default budget is
tests/cli/test_torch_versions.py's ``test_every_entry_decodes_and_matches_its_name``
(``verify`` says "all match their names and decode", which an entry over the budget
would make "not checked").
"""

from __future__ import annotations

import itertools
import json
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from fxcache_core.cache.keys import KeyKind, sha256_hash
from fxcache_core.cache.scan import scan_cache
from fxcache_core.catalog.reader import Catalog, Unreadable
from fxcache_core.decode import workers
from fxcache_core.decode.pgo import read_pgo_states
from tests.cli_run import run_measured
from tests.helpers import alarm, run_fxcache
from tests.synth import (
    aot_entry_with_sources,
    fake_key,
    fx_entry_bytes,
    hash_bomb,
    hash_flood,
    local_source,
    size_source,
    write_entry,
)

BUDGET_S = "0.1"
ENV = {"FXCACHE_DECODE_CPU_S": BUDGET_S, "FXCACHE_JOBS": "1", "FXCACHE_NO_INDEX": "1",
       "COLUMNS": "200", "NO_COLOR": "1"}
FILE = "/src/model.py"
GUARDS = "2 <= L['t0']"


def _first(valid: Path, bomb: Callable[[int], bytes]) -> bytes:
    """``bomb(nonce)`` for the first nonce whose sha256 name sorts before ``valid``'s:
    torch tries it first."""
    return next(b for b in map(bomb, itertools.count(1)) if sha256_hash(b) < valid.name)


def _cache(root: Path, bomb: Callable[[int], bytes]) -> dict[str, Path]:
    """A function ``auto`` of ``FILE`` compiled once (an FX and an AOTAutograd key, each
    entry serving ``s0 >= 2``), a bomb first in each key, and a bomb as its saved profile."""
    fx, aot = fake_key(KeyKind.FX_GRAPH, "bomb"), fake_key(KeyKind.AOT_AUTOGRAD, "bomb")
    good_fx = write_entry(root, KeyKind.FX_GRAPH, fx, fx_entry_bytes(GUARDS, fx, origin=("auto", FILE, 10)))
    good_aot = write_entry(root, KeyKind.AOT_AUTOGRAD, aot, aot_entry_with_sources(
        GUARDS, (fx, GUARDS), [("Sym(s0)", size_source("x", 0)), ("f32[s0, 3][3, 1]cpu", local_source("x"))],
        ("auto", FILE, 10)))
    out = {"fx": fx, "aot": aot, "good_fx": good_fx, "good_aot": good_aot,
           "bomb_fx": write_entry(root, KeyKind.FX_GRAPH, fx, _first(good_fx, bomb)),
           "bomb_aot": write_entry(root, KeyKind.AOT_AUTOGRAD, aot, _first(good_aot, bomb))}
    (root / "dynamo").mkdir()
    out["profile"] = root / "dynamo" / "code_state_job_None_.pkl"
    out["profile"].write_bytes(bomb(0))
    return out


@pytest.fixture(scope="module")
def bombed(tmp_path_factory) -> tuple[Path, dict]:
    root = tmp_path_factory.mktemp("bombed")
    return root, _cache(root, lambda nonce: hash_bomb(nonce=nonce))


def _run(root: Path, *args: str):
    p = run_fxcache("--cache-dir", str(root), *args, env=ENV, timeout=60)
    assert "Traceback" not in p.stderr, (args, p.stdout, p.stderr)
    return p


def test_match_is_undecided_where_torch_would_try_a_bomb_before_the_hit(bombed):
    root, c = bombed
    p = _run(root, "match", "--fn", "auto", "--shapes", "x=[5,3]", "--json")
    assert p.returncode == 3, (p.stdout, p.stderr)  # undecided, never a hit past the bomb
    aot = next(k for k in json.loads(p.stdout)["results"] if k["key"] == c["aot"])
    assert aot["hit"] is None and aot["status"] == "undecided", aot
    first, second = aot["entries"]
    assert (first["entry"], first["outcome"], first["reason_code"]) == (c["bomb_aot"].name, "unknown",
                                                                       "over-cpu-budget"), first
    assert second["outcome"] == "pass"  # the valid entry passes: only the bomb leaves it undecided


def test_the_profile_bomb_is_reported_not_waited_on(bombed, monkeypatch):
    root, c = bombed
    monkeypatch.setenv("FXCACHE_DECODE_CPU_S", BUDGET_S)
    with alarm(30):
        (st,) = read_pgo_states(root)
    assert st.codes == () and st.problem is not None and st.problem.code == "over-cpu-budget", st.problem
    p = _run(root, "match", "--fn", "auto", "--shapes", "x=[5,3]", "--dynamic", "none")
    first_call, after_recompile = p.stdout.splitlines()[:2]
    assert p.returncode == 3 and "could not read that state" in first_call, p.stdout
    assert "UNDECIDED: fxcache could not decode entry" in after_recompile and "over-cpu-budget" in after_recompile


def test_verify_reports_each_bomb_not_checked(bombed):
    root, c = bombed
    p = _run(root, "verify", "--json")
    assert p.returncode == 1, (p.stdout, p.stderr)  # not a pass: two entries not checked
    doc = json.loads(p.stdout)
    assert doc["checked"] == 2 and doc["problems"] == []
    assert {(Path(u["path"]), u["why_code"]) for u in doc["unchecked"]} == {
        (c["bomb_fx"], "over-cpu-budget"), (c["bomb_aot"], "over-cpu-budget")}


def test_gc_keeps_each_bomb_and_says_why(bombed, tmp_path):
    root, c = bombed
    plan = json.loads(_run(root, "gc", "--unreadable", "--dry-run", "--json").stdout)
    assert plan["removals"] == []
    assert {(Path(k["path"]), k["why_code"]) for k in plan["kept"]} == {
        (c["bomb_fx"], "over-cpu-budget"), (c["bomb_aot"], "over-cpu-budget")}
    p = _run(root, "gc", "--unreadable", "--yes")
    assert p.returncode == 0 and c["bomb_fx"].exists() and c["bomb_aot"].exists(), (p.stdout, p.stderr)


def test_listing_dupes_guards_and_pack_finish_and_name_the_bombs(bombed, tmp_path):
    root, c = bombed
    ls = _run(root, "ls", "--entries", "--check")
    assert ls.returncode == 0 and ls.stdout.count("over fxcache's CPU budget") == 2, ls.stdout
    assert _run(root, "dupes").returncode == 0
    g = _run(root, "guards", c["fx"])
    assert g.returncode == 0 and "CPU budget" in g.stdout and "(torch tries it)" in g.stdout, g.stdout
    out = tmp_path / "p.tar.gz"
    p = _run(root, "pack", "--all", str(out))
    assert p.returncode == 0 and p.stdout.count("(too-costly): not packed") == 2, (p.stdout, p.stderr)
    with tarfile.open(out) as tar:
        names = " ".join(tar.getnames())
    assert c["good_fx"].name in names and c["bomb_fx"].name not in names and c["bomb_aot"].name not in names


def test_a_command_over_bombs_costs_little_cpu_and_memory(bombed):
    root, _ = bombed
    r = run_measured([sys.executable, "-m", "fxcache_cli", "--cache-dir", str(root), "verify"], env=ENV,
                     timeout=60)
    assert r.returncode == 1 and "not checked" in r.stdout and "Traceback" not in r.stderr, r
    assert r.cpu < 2 and r.maxrss_kb < 300 * 1024, r


def test_a_hash_flood_is_over_the_budget_too(tmp_path, monkeypatch):
    monkeypatch.setenv("FXCACHE_DECODE_CPU_S", BUDGET_S)
    c = _cache(tmp_path, lambda nonce: hash_flood(nonce=nonce))
    scan = scan_cache(tmp_path)
    with alarm(30):
        got = Catalog(scan).load(next(e for e in scan.entries() if e.path == c["bomb_fx"]))
        (st,) = read_pgo_states(tmp_path)
    assert isinstance(got, Unreadable) and got.cause == "too-costly" and got.reason.code == "over-cpu-budget", got
    assert st.problem is not None and st.problem.code == "over-cpu-budget", st.problem
    p = _run(tmp_path, "match", "--fn", "auto", "--shapes", "x=[5,3]")
    assert p.returncode == 3 and "over-cpu-budget" in p.stdout, (p.stdout, p.stderr)


def test_the_budget_is_two_seconds_and_a_second_per_16_mib_unless_set(monkeypatch):
    monkeypatch.delenv(workers.ENV_CPU_S, raising=False)
    assert workers.cpu_budget_for(734) == pytest.approx(2.0, abs=1e-3)
    assert workers.cpu_budget_for(32 << 20) == pytest.approx(4.0)
    for junk in ("", "abc", "-1", "0", "nan", "inf"):
        monkeypatch.setenv(workers.ENV_CPU_S, junk)
        assert workers.cpu_budget_for(0) == 2.0, junk
    monkeypatch.setenv(workers.ENV_CPU_S, "0.5")
    assert workers.cpu_budget_for(0) == 0.5
