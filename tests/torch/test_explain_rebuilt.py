"""``fxcache explain`` of a shipped cache: hits that still built their kernels, and what a
run saved; a guard miss on a copy whose entries all have fresh mtimes (``cp -r``).

The ``rebuilt`` background build runs the ``rebuild`` plan of ``tests.harness.traced``
(one hit of a demo case) on copies of the session's real cache, in fresh processes,
under TORCH_TRACE: once with torch imported from another path (a dir holding a
symlink to the venv's torch, first on PYTHONPATH: the kernels' compile command then
names another ``torch/include``), once with ``ATEN_CPU_CAPABILITY=avx2`` on a CPU
whose default is AVX512 (other ISA flags). Both hit every lookup and build the
hit's C++ kernel library again: what the run shows (the libraries it wrote into the
cache, the ``compile_file`` steps of the trace) is what explain must say.
About 2 x 6 s of CPU (import, one library, a precompiled header's preprocessing;
the header itself the first time on a machine).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.harness.background import builder, prebuilt
from tests.helpers import run_fxcache

pytestmark = pytest.mark.torch

_AVX512 = "avx512f" in Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else False


def _scenario(base: Path, name: str, env: dict[str, str]) -> dict[str, Any]:
    from demo.build_cache import REPO_ROOT, _child_env
    from tests.harness.traced import traced_argv

    cache, trace = base / name / "cache", base / name / "trace"
    shutil.copytree(prebuilt("real_cache").root, cache, symlinks=True)
    start = time.time()
    child = _child_env()
    child.update(env)
    if "PYTHONPATH" in env:
        child["PYTHONPATH"] = env["PYTHONPATH"] + os.pathsep + _child_env()["PYTHONPATH"]
    with subprocess.Popen([sys.executable, *traced_argv(cache, trace, "rebuild")], cwd=REPO_ROOT, env=child,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        out, err = proc.communicate(timeout=600)
    lines = [ln for ln in out.splitlines() if ln.strip()]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"rebuild run failed ({proc.returncode}):\n{err[-4000:]}")
    return {"cache": cache, "trace": trace, "torch": json.loads(lines[-1]), "start": start,
            "wall_s": time.time() - start}


@builder("rebuilt", needs=("real_cache",), order=6)
def _rebuilt() -> dict[str, Any]:
    import importlib.util

    from tests.harness.background import build_dir

    spec = importlib.util.find_spec("torch")  # where torch is, without importing it here
    assert spec is not None and spec.submodule_search_locations
    base = build_dir("rebuilt")
    alt = _other_install(Path(spec.submodule_search_locations[0]))
    runs = {"headers": _scenario(base, "headers", {"PYTHONPATH": str(alt)})}
    if _AVX512:
        runs["isa"] = _scenario(base, "isa", {"ATEN_CPU_CAPABILITY": "avx2"})
    return runs


@pytest.fixture(scope="session")
def rebuilt() -> dict[str, Any]:
    """scenario -> {"cache", "trace", "torch" (the recorder's JSON), "start" (epoch seconds)}."""
    return prebuilt("rebuilt")


def _other_install(torch_dir: Path) -> Path:
    """A dir whose ``torch`` is a symlink to the venv's torch, at a path that stays the same
    between sessions on a machine: torch builds a precompiled header per include path
    (``_precompile_header``, 6 to 10 s), and keeps it in its default cache dir; a new path
    each session would build it each time."""
    import getpass
    import tempfile

    alt = Path(tempfile.gettempdir()) / f"fxcache-tests-other-torch-install-{getpass.getuser()}"
    alt.mkdir(exist_ok=True)
    link = alt / "torch"
    if not (link.is_symlink() and link.resolve() == torch_dir.resolve()):
        tmp = alt / f"torch.{os.getpid()}"
        tmp.symlink_to(torch_dir, target_is_directory=True)
        os.replace(tmp, link)
    return alt


def _explain(run: dict[str, Any]) -> dict[str, Any]:
    proc = run_fxcache("--cache-dir", str(run["cache"]), "explain", "--json", "--no-record", str(run["trace"]),
                       block_torch=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def _libraries_written(run: dict[str, Any]) -> int:
    """Kernel libraries the run wrote into its cache (not torch's ISA check programs)."""
    n = 0
    for so in run["cache"].glob("??/*.so"):
        if so.stat().st_mtime >= run["start"] and b"__avx_chk_kernel" not in so.with_suffix(".cpp").read_bytes():
            n += 1
    return n


def _compile_file_seconds(trace: Path) -> float:
    """Wall seconds of every ``compile_file`` step the trace records (the B/E pairs of
    its ``chromium_event`` records, whose payload is JSON on tab-led lines)."""
    total, open_ = 0.0, []
    for f in trace.glob("*.log"):
        lines = f.read_text().splitlines()
        for i, line in enumerate(lines):
            if '{"chromium_event"' not in line:
                continue
            body = []
            for nxt in lines[i + 1:]:
                if not nxt.startswith("\t"):
                    break
                body.append(nxt[1:])
            ev = json.loads("\n".join(body))
            if ev["name"] == "compile_file" and ev["ph"] == "B":
                open_.append(ev["ts"])
            elif ev["name"] == "compile_file" and ev["ph"] == "E" and open_:
                total += (ev["ts"] - open_.pop()) / 1e6
    return total


@pytest.mark.parametrize(("scenario", "code"), [("headers", "other-torch-headers"), ("isa", "other-isa")])
def test_a_hit_that_rebuilt_its_kernels_says_how_many_how_long_and_why(rebuilt, scenario, code):
    runs = rebuilt
    if scenario not in runs:
        pytest.skip("the CPU has no AVX512: ATEN_CPU_CAPABILITY=avx2 is its default")
    run = runs[scenario]
    assert run["torch"]["errors"] == {}
    ex = _explain(run)
    mine = [x for x in ex["lookups"] if x["state"] != "bypass"]
    assert [(x["cache"], x["key"]) for x in mine] == [(t["kind"], t["key"]) for t in run["torch"]["lookups"]]
    assert all(t["hit"] for t in run["torch"]["lookups"]) and all(x["state"] == "hit" for x in mine)
    written = _libraries_written(run)
    assert written >= 1  # torch built the kernels again: the scenario does what it should
    fx = [x for x in mine if x["cache"] == "fxgraph"]
    assert sum(x["rebuilt"]["kernels"] for x in fx if x["rebuilt"]) == written
    steps = _compile_file_seconds(run["trace"])
    for x in fx:
        r = x["rebuilt"]
        if r is None:
            assert x["seconds_saved"] == pytest.approx(x["seconds"], abs=1e-3)
            continue
        assert r["cause_code"] == code, r
        assert 0 < r["seconds"] <= steps + 1e-3
        assert x["seconds_saved"] == pytest.approx(x["seconds"] - r["seconds"], abs=2e-3)
    for x in (x for x in mine if x["cache"] == "aotautograd"):
        # Its FX loads say what they built; what it saved takes their rebuilding off.
        assert x["rebuilt"] is None
        assert x["seconds_saved"] <= x["seconds"] - sum(f["rebuilt"]["seconds"] for f in fx if f["rebuilt"]) + 2e-3
    assert ex["summary"]["rebuilt_after_hit"] == sum(1 for x in fx if x["rebuilt"])
    assert f"{written} kernel" in ex["summary"]["verdict"], ex["summary"]["verdict"]
    s = ex["summary"]["fxgraph"]
    assert s["seconds_saved"] == pytest.approx(sum(x["seconds_saved"] for x in fx), abs=2e-3)
    text = run_fxcache("--cache-dir", str(run["cache"]), "explain", "--no-record", str(run["trace"])).stdout
    assert "rebuilt 1 kernel library" in text or "kernel libraries" in text, text
