"""`fxcache rm` and `gc` plan again when a file the plan read changes before execution.

Synthetic entries (tests/synth.py): a rewrite landing between the plan and its
execution is a race a compile here does not produce on cue. The rewrite is made from
inside execution's entry point (fxcache's own code patched, so run in this process).
"""

from __future__ import annotations

import json
import os

from fxcache_core.cache.keys import KeyKind
from fxcache_core.prune import execute as execute_mod
from tests.cli_run import fxcache_in_process
from tests.synth import aot_entry_bytes, fake_key, fx_entry_bytes, write_entry

F, G = fake_key(KeyKind.FX_GRAPH, "F"), fake_key(KeyKind.FX_GRAPH, "G")
GUARDS = "L['t0'] == 2"


def test_rm_plans_again_when_an_entry_it_read_is_replaced_before_it_deletes(tmp_path, monkeypatch):
    root = tmp_path / "c"
    fp = write_entry(root, KeyKind.FX_GRAPH, F, fx_entry_bytes(GUARDS, F))
    write_entry(root, KeyKind.FX_GRAPH, G, fx_entry_bytes(GUARDS, G))
    ap = write_entry(root, KeyKind.AOT_AUTOGRAD, fake_key(KeyKind.AOT_AUTOGRAD, "A"),
                     aot_entry_bytes(None, (G, GUARDS)))
    monkeypatch.setenv("FXCACHE_INDEX_DIR", str(tmp_path / "idx"))
    real = execute_mod.execute_plan

    def rewrite_then_execute(plan, replan=None):
        assert {r.file.where for r in plan.removals} == {str(fp)}  # `a` loads G: kept
        tmp = ap.with_name(".tmp")
        tmp.write_bytes(aot_entry_bytes(None, (F, GUARDS)))  # now it loads F
        os.replace(tmp, ap)
        return real(plan, replan)

    monkeypatch.setattr(execute_mod, "execute_plan", rewrite_then_execute)
    r = fxcache_in_process("--cache-dir", str(root), "rm", F, "--yes", "--json")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["replanned"] == 1
    assert {x["path"] for x in got["removals"]} == set(got["removed"]) == {str(fp), str(ap)}
    assert not fp.exists() and not ap.exists()
