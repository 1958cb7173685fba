"""Per-entry guard evaluation: fxcache's compiled evaluator against torch's own.

    make bench        (pytest-benchmark; never part of `make test`)

For the shortest, a median and the longest guards expression of the shared
corpus, each measured at the expression's compile-time hints (where every
clause is evaluated, the worst case for short-circuit ``and``):

* ``fxcache``: ``parse_guards(s)`` once (cached), then ``GuardsExpr.holds``
  per evaluation: closures, no ``eval``.
* ``fxcache-verdict``: ``GuardsExpr.evaluate``, the per-clause verdict match uses.
* ``torch``: ``ShapeEnv.evaluate_guards_expression(s, hints)``, which is what
  ``find_guarded_entry`` calls for every candidate entry (an ``eval`` of the
  string each time).
* ``fxcache-parse``: parsing and compiling one expression from scratch.

pytest-benchmark groups the figures per expression so they print side by side.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

CORPUS = Path(os.environ.get("FXCACHE_GUARDS_CORPUS")
              or Path(__file__).resolve().parents[1] / "tests" / "data" / "guards-corpus.json")


def _cases() -> list[tuple[str, str, list[int]]]:
    if not CORPUS.is_file():
        return []
    import sympy

    rows = []
    seen = set()
    for e in json.loads(CORPUS.read_text()):
        s = e["guards_expr"]
        if not s or s in seen:
            continue
        seen.add(s)
        subs = {sympy.Symbol(k): v for k, v in e["hints"].items()}
        args = [int(sympy.sympify(p).subs(subs)) for p in e["placeholder_symbols"]]
        rows.append((s, args))
    rows.sort(key=lambda r: len(r[0]))
    picks = {"shortest": rows[0], "median": rows[len(rows) // 2], "longest": rows[-1]}
    return [(name, s, args) for name, (s, args) in picks.items()]


CASES = _cases()
pytestmark = pytest.mark.skipif(not CASES, reason="needs ../shared/corpus/guards-corpus.json")


@pytest.mark.parametrize("name,src,args", CASES, ids=[c[0] for c in CASES])
def test_fxcache_holds(benchmark, name, src, args):
    from fxcache_core.guards.expr import parse_guards

    g = parse_guards(src)
    env = {f"t{i}": v for i, v in enumerate(args)}
    benchmark.group = f"{name} ({len(parse_guards(src).clauses)} clauses)"
    assert benchmark(g.holds, env) is True


@pytest.mark.parametrize("name,src,args", CASES, ids=[c[0] for c in CASES])
def test_fxcache_verdict(benchmark, name, src, args):
    from fxcache_core.guards.expr import parse_guards

    g = parse_guards(src)
    env = {f"t{i}": v for i, v in enumerate(args)}
    benchmark.group = f"{name} ({len(g.clauses)} clauses)"
    assert benchmark(g.evaluate, env).status == "pass"


@pytest.mark.parametrize("name,src,args", CASES, ids=[c[0] for c in CASES])
def test_torch_evaluate_guards_expression(benchmark, name, src, args):
    torch_sym = pytest.importorskip("torch.fx.experimental.symbolic_shapes")
    from fxcache_core.guards.expr import parse_guards

    env = torch_sym.ShapeEnv()
    benchmark.group = f"{name} ({len(parse_guards(src).clauses)} clauses)"
    assert benchmark(env.evaluate_guards_expression, src, args) is True


@pytest.mark.parametrize("name,src,args", CASES, ids=[c[0] for c in CASES])
def test_fxcache_parse(benchmark, name, src, args):
    from fxcache_core.guards.expr import parse_guards

    benchmark.group = f"{name} ({len(parse_guards(src).clauses)} clauses)"
    benchmark(parse_guards.__wrapped__, src)
