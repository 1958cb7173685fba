"""The CLI reads like its peers: --version, sizes as du/ccache users type them,
case-insensitive choices, usage errors that name the option, plural grammar,
and ``fxcache key``'s summary against torch's defaults (synthetic caches, no torch).

Forked from the CLI server (:func:`tests.cli_run.fxcache_forked`): these tests check what the
command parses and prints; ``--version`` runs the real module in a subprocess."""

from __future__ import annotations

import json

import pytest

from fxcache_core import __version__
from fxcache_core.cache.keys import KeyKind
from fxcache_core.keying.anatomy import parse_debug_lines, settings_not_at_default
from fxcache_core.keying.defaults import default_settings
from fxcache_core.quantities import parse_size
from tests.cli_run import fxcache_forked
from tests.helpers import run_fxcache
from tests.synth import (
    aot_entry_with_sources,
    fake_key,
    fx_entry_bytes,
    local_source,
    size_source,
    write_entry,
)


@pytest.fixture
def cache(tmp_path):
    root = tmp_path / "cache"
    fx = fake_key(KeyKind.FX_GRAPH, "f")
    aot = fake_key(KeyKind.AOT_AUTOGRAD, "f")
    write_entry(root, KeyKind.FX_GRAPH, fx, fx_entry_bytes("2 <= L['t0']", fx, origin=("f", "/m.py", 3)))
    write_entry(root, KeyKind.AOT_AUTOGRAD, aot, aot_entry_with_sources(
        "2 <= L['t0']", (fx, "2 <= L['t0']"),
        [("Sym(s0)", size_source("x", 0)), ("f32[s0, 3][3, 1]cpu", local_source("x"))], ("f", "/m.py", 3)))
    return root


def test_version():
    p = run_fxcache("--version")
    assert p.returncode == 0 and p.stdout == f"fxcache {__version__}\n"


@pytest.mark.parametrize("text,n", [("5G", 5 * 10**9), ("500M", 500 * 10**6), ("64k", 64000),
                                    ("2Gi", 2 * 1024**3), ("1.5GiB", 3 * 1024**3 // 2), ("500MB", 500 * 10**6)])
def test_sizes_as_ccache_and_du_users_type_them(text, n):
    assert parse_size(text) == n


def test_gc_takes_a_bare_letter_size(cache):
    p = fxcache_forked("--cache-dir", str(cache), "gc", "--max-size", "5G", "--dry-run", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["removals"] == []


@pytest.mark.parametrize("mode", ["True", "FALSE", "None", "none"])
def test_dynamic_is_case_insensitive(cache, mode):
    p = fxcache_forked("--cache-dir", str(cache), "match", "--fn", "f", "--shapes", "x=[5,3]", "--dynamic", mode)
    assert p.returncode in (0, 1), p.stderr


@pytest.mark.parametrize("args,needle", [
    (["match", "--key", "a", "--sym", "t0=-5"], "--sym t0=-5: t0 is x.size(0), which is never negative"),
    (["coverage", "a", "--range", "s0=-5:10"], "--range s0=-5:10: s0 is x.size(0)"),
    (["match", "--inputs", "x=-5"], "--inputs x=-5: x is a tensor"),
    (["match", "--shapes", "m=[2,8]:dtype=boolean"], "--inputs m: dtype: 'boolean' is not a torch dtype "
     "(known: bfloat16"),
    (["match", "--inputs", "t=10:dtype=int64"], "--inputs 't=10:dtype=int64': t=10 is an int, a Python "
     "scalar, which has no dtype (a 0-d tensor of a dtype is t=[]:dtype=NAME)"),
    (["match", "--shapes", "t=10.0:dtype=float32"], "t=10.0 is a float, a Python scalar, which has no dtype"),
    (["match", "--arg", "x"], "--arg 'x': expected a tensor shape"),
    (["diff", "f", "f", "--other-cache-dir", "/nonexistent-dir"], "(--other-cache-dir) does not exist"),
    (["key", "f", "--group", "nosuch"], "--group 'nosuch': key "),
    (["ls", "--fn", "nosuch"], "no key was compiled from a function named 'nosuch'; the cache has keys of: f"),
])
def test_usage_errors_are_one_line_naming_the_option(cache, args, needle):
    p = fxcache_forked("--cache-dir", str(cache), *args)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert len(p.stderr.strip().splitlines()) == 1 and needle in p.stderr, p.stderr


def test_key_group_nosuch_lists_the_groups(cache):
    p = fxcache_forked("--cache-dir", str(cache), "key", "f", "--group", "nosuch")
    assert "its groups: example_inputs" in p.stderr


def _fx_with(root, seed: str, lines: tuple[str, ...]) -> str:
    k = fake_key(KeyKind.FX_GRAPH, seed)
    write_entry(root, KeyKind.FX_GRAPH, k, fx_entry_bytes(None, k, extra_lines=lines))
    return k


def test_key_summarises_groups_against_torchs_defaults(tmp_path):
    h_default, v_default = default_settings()["inductor_config[size_asserts]"]
    at_default = f"[{h_default}zzzz] inductor_config[size_asserts]: {v_default}"
    off = "[notthedefaulthash] inductor_config[max_autotune]: True"
    k = _fx_with(tmp_path, "k", (at_default, off, "[aaaa] inductor_config[brand_new_option]: 1"))
    (g,) = [g for g in settings_not_at_default(parse_debug_lines((at_default, off))) if g.group == "inductor_config"]
    assert [c.name for c, _ in g.not_default] == ["inductor_config[max_autotune]"]
    text = fxcache_forked("--cache-dir", str(tmp_path), "key", k[:10]).stdout
    assert "inductor_config[max_autotune]: True  (default: False)" in text
    assert "inductor_config[size_asserts]" not in text  # at its default: only under --all
    assert "1, 1 with no recorded default" in text  # the summary row of inductor_config
    assert "Default: what a plain torch.compile(f) hashes on torch" in text
    full = fxcache_forked("--cache-dir", str(tmp_path), "key", k[:10], "--all").stdout
    assert "inductor_config[size_asserts]" in full
    body = json.loads(fxcache_forked("--cache-dir", str(tmp_path), "key", k[:10], "--json").stdout)
    (ic,) = [g for g in body["groups"] if g["group"] == "inductor_config"]
    assert [c["name"] for c in ic["not_default"]] == ["inductor_config[max_autotune]"]
    assert ic["no_recorded_default"] == ["inductor_config[brand_new_option]"]
    assert {"kind", "key", "entry", "components", "loads", "stale"} <= set(body)


def test_diff_says_1_component_differs(tmp_path):
    a = _fx_with(tmp_path, "a", ("[h1] inductor_config[max_autotune]: True",))
    b = _fx_with(tmp_path, "b", ("[h2] inductor_config[max_autotune]: False",))
    text = fxcache_forked("--cache-dir", str(tmp_path), "diff", a[:10], b[:10]).stdout
    assert "1 component differs:" in text and "inductor_config[max_autotune]" in text


def test_diff_and_gc_json_are_the_core_values_json(tmp_path):
    from fxcache_core.cache.scan import scan_cache
    from fxcache_core.catalog.reader import Catalog
    from fxcache_core.keying.anatomy import compare_keys
    from fxcache_core.prune.plan import plan_gc
    from fxcache_core.prune.policy import GcPolicy

    a = _fx_with(tmp_path, "a", ("[h1] inductor_config[max_autotune]: True",))
    b = _fx_with(tmp_path, "b", ("[h2] inductor_config[max_autotune]: False",))
    write_entry(tmp_path, KeyKind.FX_GRAPH, a, b"not a pickle")  # unreadable: gc's default plan takes it
    scan = scan_cache(tmp_path)
    cat = Catalog(scan)
    got = json.loads(fxcache_forked("--cache-dir", str(tmp_path), "diff", a[:10], b[:10], "--json").stdout)
    assert got == compare_keys(cat, scan.find(a), cat, scan.find(b)).to_json()
    assert got["compared"][0]["differ"][0]["a"] == {"name": "inductor_config[max_autotune]", "hash": "h1",
                                                    "value": "True", "raw": "True"}
    plan = json.loads(fxcache_forked("--cache-dir", str(tmp_path), "gc", "--dry-run", "--json").stdout)
    core = plan_gc(Catalog(scan), GcPolicy.default()).to_json()
    assert [{k: v for k, v in r.items() if k != "redis_key"} for r in plan["removals"]] == core["removals"]
    assert {k: plan[k] for k in core if k != "removals"} == {k: v for k, v in core.items() if k != "removals"}
    assert plan["dry_run"] is True and plan["executed"] is False
