"""Source files named by cache entries, against an attacker with write access to the cache.

An FX entry's line map (``cache_linemap``) names the user's ``.py`` file of the
compiled frame; fxcache parses it with ``ast`` (never runs it) to find the class
around ``forward``. Issue 23, item 15: an entry naming a 1 MB file of one-letter
lines cost ``ls --fn`` 930 MB and 4.3 s (a 4 MB one: 3.8 GB, 23 s). Each run here
is a fresh process measured from a wrapper of its own (peak RSS, CPU).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fxcache_core.cache.keys import KeyKind
from tests.cli_run import run_measured
from tests.synth import fake_key, graph_str, stub_pickle, write_entry

RSS_LIMIT_KB = 300 * 1024


def _stack(fn: str, file: str, line: int) -> str:
    return f'  File "{file}", line {line}, in {fn}\n    return self.lin(x)\n    ^^^^^^^^^^^\n'


def _cache(root: Path, source: Path) -> Path:
    """One FX entry compiled from ``forward`` at line 2 of ``source`` (its line map says so)."""
    key = fake_key(KeyKind.FX_GRAPH, "src" + source.name)
    state = {
        "guards_expr": "L['t0'] > 1",
        "_fx_graph_cache_key": key,
        "_fx_graph_cache_debug_lines": ["[abc] example_inputs[0]: ('s0',)"],
        "fx_kwargs": {"is_backward": False},
        "runnable_graph_str": "s0 = 8\n\nimport torch\n",
        "inductor_post_grad_graph_str": graph_str(("forward", str(source), 2)),
        "cache_linemap": [(7, _stack("forward", str(source), 2))],
    }
    write_entry(
        root,
        KeyKind.FX_GRAPH,
        key,
        stub_pickle("torch._inductor.output_code", "CompiledFxGraph", state),
    )
    return root


def _ls_fn(root: Path, tmp_path: Path, fn: str) -> dict:
    r = run_measured(
        [sys.executable, "-m", "fxcache_cli", "--cache-dir", str(root), "ls", "--fn", fn],
        env={"FXCACHE_INDEX_DIR": str(tmp_path / "index"), "FXCACHE_JOBS": "1", "COLUMNS": "200"},
    )
    assert r.returncode == 0 and "Traceback" not in r.stderr, r
    return r


@pytest.mark.parametrize("size", [1_000_000, 4_000_000])
def test_a_huge_source_file_is_not_parsed_and_ls_fn_says_why(tmp_path, size):
    good = tmp_path / "net.py"
    good.write_text("class TinyNet:\n    def forward(self, x):\n        return self.lin(x)\n")
    hostile = tmp_path / "a.py"
    hostile.write_bytes(
        b"class Huge:\n    def forward(self, x):\n        pass\n" + b"a\n" * (size // 2)
    )
    base = _ls_fn(_cache(tmp_path / "normal", good), tmp_path, "TinyNet")
    assert "1 key compiled from TinyNet" in base.stdout  # the class is read from the file
    hit = _ls_fn(_cache(tmp_path / "hostile", hostile), tmp_path, "forward")
    assert hit.maxrss_kb < RSS_LIMIT_KB, hit
    assert hit.cpu - base.cpu < 2.0, (hit.cpu, base.cpu)
    assert "1 key compiled from forward" in hit.stdout, hit.stdout  # by its frame's name
    assert "class unknown for the functions of" in hit.stdout and "not parsed" in hit.stdout


def test_bounded_parse_keeps_real_modules_and_refuses_floods(tmp_path):
    from fxcache_core.functions import frames, sources

    real = Path(frames.__file__)  # a real module: parsed
    assert frames.unparsed_why(str(real)) is None
    flood = tmp_path / "flood.py"
    flood.write_text("x = " + " + ".join(["1"] * 100_000) + "\n")
    why = frames.unparsed_why(str(flood))
    assert why is not None and why.code == "source-too-many-nodes"
    deep = tmp_path / "deep.py"
    deep.write_text("def forward(x):\n    return " + "(" * 5000 + "x" + ")" * 5000 + "\n")
    assert frames.unparsed_why(str(deep)).code == "source-unparsable"
    assert frames._enclosing(str(deep), 2) is None
    assert str(flood) in sources.refused_sources() and str(deep) in sources.refused_sources()
