"""What the quick commands import, the progress hook, and the runs with torch blocked
that the torch tier's "never needs torch" checks stand on (no torch needed)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import scan_cache
from fxcache_core.catalog.reader import Catalog
from tests.helpers import REPO_ROOT, TESTS_DIR, run_fxcache, run_module
from tests.synth import fake_key, fx_entry_bytes, write_entry


def _imported(tmp_path, *args: str) -> set[str]:
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "fxcache_cli", *args],
                          cwd=REPO_ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if "|" in line}


@pytest.mark.parametrize("args", [["--help"], ["ls"], ["ls", "--json"], ["df"], ["df", "--json"]])
def test_help_ls_and_df_import_neither_torch_nor_sympy(tmp_path, args):
    k = fake_key(KeyKind.FX_GRAPH, "k")
    write_entry(tmp_path, KeyKind.FX_GRAPH, k, fx_entry_bytes("L['t0'] <= 8", k))
    mods = _imported(tmp_path, "--cache-dir", str(tmp_path), *args)
    assert "fxcache_cli.fxcache" in mods
    assert not {m for m in mods if m.split(".")[0] in ("torch", "sympy")}


def test_a_forked_run_with_torch_blocked_fails_on_import_torch_as_a_fresh_one_does():
    """``run_fxcache(..., block_torch=True)`` forks from the CLI server: a command that
    imports torch (``gc --stale`` asks the installed torch what it hashes) must fail there
    exactly as in a fresh process whose ``import torch`` is blocked."""
    cache = TESTS_DIR / "fixtures" / "torch_versions" / "2.14.1" / "cache"
    args = ("--cache-dir", str(cache), "gc", "--stale", "--dry-run")
    forked = run_fxcache(*args, block_torch=True)
    fresh = run_module("fxcache_cli", *args, block_torch=True)
    assert (forked.returncode, forked.stdout, forked.stderr) == (fresh.returncode, fresh.stdout, fresh.stderr)
    assert forked.returncode == 2 and "import of 'torch' blocked" in forked.stderr, forked.stderr


def test_match_evaluates_guards_without_sympy(tmp_path):
    k = fake_key(KeyKind.FX_GRAPH, "k")
    write_entry(tmp_path, KeyKind.FX_GRAPH, k, fx_entry_bytes("L['t0'] <= 8 and L['t0'] % 2 == 0", k))
    mods = _imported(tmp_path, "--cache-dir", str(tmp_path), "match", "--key", k[:8], "--sym", "t0=6")
    assert "fxcache_core.guards.expr" in mods
    assert not {m for m in mods if m.split(".")[0] in ("torch", "sympy")}


def test_the_progress_hook_counts_each_entry_read_once(tmp_path):
    k = fake_key(KeyKind.FX_GRAPH, "k")
    for g in ("L['t0'] <= 8", "L['t0'] > 8", "L['t0'] > 100"):
        write_entry(tmp_path, KeyKind.FX_GRAPH, k, fx_entry_bytes(g, k))
    reads = []
    cat = Catalog(scan_cache(tmp_path), on_read=lambda: reads.append(1))
    for _ in range(2):
        for e in cat.scan.entries():
            cat.load(e)
    assert len(reads) == 3


@pytest.mark.parametrize("args", [["--help"], ["--version"], []])
def test_help_and_version_import_no_core_module_but_errors(args):
    """The command table keeps `fxcache --help` cheap: no command module, no core
    module but fxcache_core (its __init__) and fxcache_core.errors, no rich, no torch."""
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    proc = subprocess.run([sys.executable, "-m", "fxcache_cli", *args], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    mods = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if "|" in line}
    assert "fxcache_cli.fxcache" in mods and "fxcache_core.errors" in mods  # the profile was read
    assert {m for m in mods if m.startswith("fxcache_core")} == {"fxcache_core", "fxcache_core.errors"}
    assert not {m for m in mods if m.split(".")[0] in ("torch", "sympy", "rich")}
    from fxcache_cli._commands import commands_dict

    assert not {m for m in mods if m in {c.module for c in commands_dict.values()}}
