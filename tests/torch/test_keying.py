"""Key anatomy, ``fxcache diff`` and staleness on real caches.

One cache (module scope, ~15 s) holds the same function compiled five times
with one thing changed each time (``tests.harness.variants``): ``diff`` must name
exactly that component. A torch build change is simulated by editing the
``torch_version`` component hash in a copy of an entry.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fxcache_core.cache.keys import sha256_hash
from fxcache_core.keying.anatomy import (
    Component,
    diff_components,
    parse_debug_lines,
    stale_components,
)
from tests.harness.background import builder, prebuilt
from tests.helpers import cli_json as _json
from tests.helpers import run_fxcache

pytestmark = pytest.mark.torch


@builder("variants", order=4)
def _build_variants():
    from tests.harness.background import build_dir
    from tests.harness.variants import build_variants_subprocess

    root = build_dir("variants") / "inductor"
    return root, build_variants_subprocess(root)


@pytest.fixture(scope="session")
def variants():
    root, keys = prebuilt("variants")
    assert all(len(v) == 1 for v in keys.values()), keys  # one FX key per variant
    return root, {name: v[0] for name, v in keys.items()}


@pytest.mark.parametrize("variant,names,needle", [
    ("config", ["inductor_config[size_asserts]"], "False"),
    ("dtype", ["example_inputs[0]"], "float64[8, 4]"),
    ("stride", ["example_inputs[0]"], "stride (1, 8)"),
    # dynamic=True: the graph gains two SymInt inputs (s77, s27) before the tensor.
    ("dynamic", ["gm", "example_inputs[0]", "example_inputs[1]", "example_inputs[2]"], "('s77',)"),
])
def test_diff_names_exactly_the_component_that_changed(variants, variant, names, needle):
    root, keys = variants
    rep = _json(run_fxcache("--cache-dir", str(root), "diff", keys["base"][:10], keys[variant][:10],
                            "--json", block_torch=True))
    (cmp,) = rep["compared"]
    assert [d["name"] for d in cmp["differ"]] == names
    assert any(d["b"] and needle in d["b"]["value"] for d in cmp["differ"])


def _edit_torch_version(root: Path, key: str) -> str:
    """Replace the torch_version component hash in the key's entry (as another
    torch build would have written it); rename the entry to its new content hash."""
    (entry,) = [p for p in (root / "fxgraph" / key[1:3] / key).iterdir()]
    data = entry.read_bytes()
    (line,) = [ln for ln in parse_debug_lines(_debug_lines(data)) if ln.name == "torch_version"]
    other = sha256_hash(b"another torch build")
    assert data.count(f"[{line.hash}] torch_version".encode()) == 1
    data = data.replace(f"[{line.hash}] torch_version".encode(), f"[{other}] torch_version".encode())
    entry.unlink()
    (entry.parent / sha256_hash(data)).write_bytes(data)
    return other


def _debug_lines(data: bytes) -> tuple[str, ...]:
    from fxcache_core.cache.keys import KeyKind
    from fxcache_core.decode.entries import decode_entry

    return decode_entry(data, KeyKind.FX_GRAPH).debug_lines


def _proc(proc) -> dict:
    return {"returncode": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr}


@builder("another_torch_build", needs=("variants",), order=7)
def _another_torch_build() -> dict:
    """A copy of the variants' cache whose base entry names another torch version, then
    ``diff``, ``key --current`` and ``gc --stale`` on it and on the original. ``--current``
    and ``--stale`` ask the installed torch (an fxcache that imports it, seconds each):
    a build thread runs them beside the torch tier's other tests, each forked from the
    server that has imported torch (``imports_torch``), and ``key --current`` once more as
    a fresh process too, to compare."""
    from tests.harness.background import build_dir

    root, built = prebuilt("variants")
    base = built["base"][0]
    copy = build_dir("another-torch-build") / "other"
    shutil.copytree(root, copy)
    _edit_torch_version(copy, base)

    def cli(*args: str) -> dict:
        return _proc(run_fxcache(*args, imports_torch="--current" in args or "--stale" in args))

    return {
        "diff": cli("--cache-dir", str(root), "diff", base[:10], base[:10], "--other-cache-dir", str(copy), "--json"),
        "current_here": cli("--cache-dir", str(root), "key", base[:10], "--current", "--json"),
        "current_other": cli("--cache-dir", str(copy), "key", base[:10], "--current", "--json"),
        "stale_other": cli("--cache-dir", str(copy), "gc", "--stale", "--dry-run", "--json"),
        "stale_here": cli("--cache-dir", str(root), "gc", "--stale", "--dry-run", "--json"),
        "build_forked": cli("key", "--current", "--json"),
        "build_fresh": _proc(run_fxcache("key", "--current", "--json", process=True)),
    }


@pytest.fixture(scope="session")
def another_torch_build() -> dict:
    return prebuilt("another_torch_build")


def test_another_torch_build_is_named_by_diff_and_is_stale(variants, another_torch_build):
    _, keys = variants

    def out(name: str):
        r = another_torch_build[name]
        assert r["returncode"] == 0, (name, r["stderr"])
        return json.loads(r["stdout"])

    rep = out("diff")
    assert [d["name"] for d in rep["compared"][0]["differ"]] == ["torch_version"]
    # The installed torch built the original, not the edited copy.
    assert out("current_here")["stale"] == []
    assert out("current_other")["stale"] == ["torch_version"]
    plan = out("stale_other")
    fx = [r for r in plan["removals"] if r["kind"] == "fxgraph"]
    assert [r["key"] for r in fx] == [keys["base"]] and "torch_version" in fx[0]["reasons"][0]
    # ... with the AOTAutograd entry that loads it, and nothing else.
    assert {r["kind"] for r in plan["removals"]} <= {"fxgraph", "aotautograd", "code"}
    assert len([r for r in plan["removals"] if r["kind"] == "aotautograd"]) == 1
    assert out("stale_here")["removals"] == []


def test_a_run_forked_from_the_torch_server_computes_what_a_fresh_process_does(another_torch_build):
    """``imports_torch`` runs fork from a server that imported torch (tests/cli_run.py):
    the installed build's every component hash, computed there, is a fresh process's."""
    forked, fresh = another_torch_build["build_forked"], another_torch_build["build_fresh"]
    assert forked["returncode"] == fresh["returncode"] == 0, (forked["stderr"], fresh["stderr"])
    assert forked["stdout"] == fresh["stdout"]
    names = [c["name"] for c in json.loads(forked["stdout"])["components"]]
    assert names[0] == "torch_version" and "system_info[hash]" in names, names


def test_key_shows_components_and_what_aot_keys_load(variants):
    root, keys = variants
    d = ["--cache-dir", str(root)]
    text = run_fxcache(*d, "key", keys["config"][:10], "--group", "inductor_config", block_torch=True)
    assert text.returncode == 0 and "inductor_config[size_asserts]: False" in text.stdout
    assert "example_inputs" not in text.stdout
    rep = _json(run_fxcache(*d, "key", keys["stride"][:10], "--json", block_torch=True))
    names = [c["name"] for c in rep["components"]]
    assert names[0] == "gm" and "torch_version" in names and "system_info[hash]" in names
    (ex,) = [c for c in rep["components"] if c["name"] == "example_inputs[0]"]
    assert ex["value"] == "float32[8, 4] stride (1, 8) cpu, memory_format=None"
    aot = _json(run_fxcache(*d, "ls", "--json"))
    aot_keys = [k["key"] for k in aot if k["kind"] == "aotautograd"]
    loads = {ld["key"] for a in aot_keys for ld in _json(run_fxcache(*d, "key", a[:12], "--json"))["loads"]}
    assert loads == set(keys.values())
    bad = run_fxcache(*d, "diff", keys["base"][:10], aot_keys[0][:10])
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "one kind" in bad.stderr


def test_parse_debug_lines_keeps_multiline_values_and_skips_foreign_lines():
    lines = ["[abc2] gm: GraphModule()\n\ndef forward(self, x):\n    return (x,)",
             "[def3] example_inputs[0]: ('s77',)", "no hash here", "[zz9] system_info[hash]: 4413"]
    comps = parse_debug_lines(lines)
    assert [(c.name, c.hash, c.group) for c in comps] == [
        ("gm", "abc2", "gm"), ("example_inputs[0]", "def3", "example_inputs"),
        ("system_info[hash]", "zz9", "system_info")]
    assert comps[0].value.endswith("return (x,)")
    assert stale_components(comps, {"system_info[hash]": "zz9"}) == ()
    assert stale_components(comps, {"system_info[hash]": "other", "gm": "x"}) == ("system_info[hash]",)
    b = (Component("gm", "abc2", ""), Component("inductor_config[x]", "1", "True"))
    assert [d.name for d in diff_components(comps, b)] == [
        "example_inputs[0]", "system_info[hash]", "inductor_config[x]"]


def test_the_triton_build_in_system_info_version_reads_as_its_version():
    # torch 2.15 hashes system_info[version] into CPU keys too: {'triton': triton_key()},
    # the version followed by sha256 digests of triton's sources (triton/runtime/cache.py).
    key = "3.9.0" + "58b2" * 16 + "-" + "7fb8" * 16
    (c,) = parse_debug_lines([f"[rpftd2ktcv] system_info[version]: {{'triton': '{key}'}}"])
    assert c.group == "system_info" and c.readable == "triton 3.9.0 (sources 58b258b258b2…)"
    (c,) = parse_debug_lines(["[a] system_info[version]: {'triton': None, 'cuda': '13.0'}"])
    assert c.readable == "triton: none, cuda 13.0"
    (c,) = parse_debug_lines(["[a] system_info[version]: something else"])
    assert c.readable == "something else"


def test_verify_finds_truncated_altered_and_misfiled_entries(variants, tmp_path):
    root, keys = variants
    ok = run_fxcache("--cache-dir", str(root), "verify", block_torch=True)
    assert ok.returncode == 0 and "all match" in ok.stdout
    copy = tmp_path / "c"
    shutil.copytree(root, copy)

    def entry(key):
        (p,) = (copy / "fxgraph" / key[1:3] / key).iterdir()
        return p

    truncated, altered = entry(keys["base"]), entry(keys["dtype"])
    truncated.write_bytes(truncated.read_bytes()[:300])
    altered.write_bytes(altered.read_bytes() + b"\0")
    misfiled_src = entry(keys["config"])
    misfiled = entry(keys["stride"]).parent / misfiled_src.name
    shutil.copy(misfiled_src, misfiled)
    proc = run_fxcache("--cache-dir", str(copy), "verify", "--json", block_torch=True)
    assert proc.returncode == 1
    bad = {Path(p["path"]): " ".join(p["problems"]) for p in json.loads(proc.stdout)["problems"]}
    assert set(bad) == {truncated, altered, misfiled}
    assert "truncated" in bad[truncated] and "not the sha256" in bad[altered]
    assert f"filed under {keys['stride'][:12]}" in bad[misfiled]


def test_ls_dupes_groups_keys_that_differ_only_in_symbol_names(variants):
    root, keys = variants
    groups = _json(run_fxcache("--cache-dir", str(root), "ls", "--dupes", "--json", block_torch=True))
    (group,) = [g for g in groups if keys["dynamic"] in g["keys"]]
    (cosmetic,) = [g for g in groups if keys["base"] in g["keys"]]
    assert len(groups) == 2
    assert sorted(cosmetic["keys"]) == sorted([keys["base"], keys["progress"]])
    assert cosmetic["differ"] == ["inductor_config[disable_progress]"]
    assert "never change the compiled code" in cosmetic["reason"]
    assert sorted(group["keys"]) == sorted([keys["dynamic"], keys["renamed"]])
    assert group["differ"] == ["example_inputs[0]", "example_inputs[1]", "example_inputs[2]"]
    assert "symbol names" in group["reason"]
    rep = _json(run_fxcache("--cache-dir", str(root), "diff", keys["dynamic"][:10], keys["renamed"][:10], "--json"))
    differ = rep["compared"][0]["differ"]
    assert [d["name"] for d in differ] == group["differ"] and differ[0]["a"]["value"] != differ[0]["b"]["value"]


def test_torch_defaults_are_read_from_the_data_file_once():
    """The table ships as JSON (package data), read lazily and cached, and is written
    back byte for byte by what tools/record_defaults.py uses."""
    from fxcache_core.keying import defaults as D

    table = D.default_settings()
    assert D.default_settings() is table and len(table) > 100
    assert all(type(v) is tuple and len(v) == 2 and len(v[0]) == 16 for v in table.values())
    assert D.torch_version() == "2.13.0"
    assert D.dumps(D.torch_version(), table) == \
        (Path(D.__file__).parent / D.DATA_FILE).read_text(encoding="utf-8")
