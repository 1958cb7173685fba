"""``fxcache match`` against torch's own lookup, over many small functions.

One cache (module scope) is compiled from the cases appended to
``demo/cases.py`` for this suite (``ORACLE_CASES``: branches on products and
moduli, divisibility, list and keyword-only arguments, int arguments, duck
sizing, broadcasting against a size-1 dim, matmul, conv, a training step,
``mark_dynamic`` with only a lower bound, automatic dynamic, an unused argument,
a graph break in a helper, a slice). Then, for each call in ``ORACLE_CALLS``
(new shapes: inside a compiled region, between or outside the regions, and
shapes that make Dynamo trace another graph), ``fxcache match --json`` on a
snapshot of the cache is compared with what torch's own lookup chose when the
function is called on those shapes in a fresh process (``demo.oracle``, run on
a copy of the snapshot, so every call sees the cache as it was built).

The comparison is the one of test_real_cache.py's
``test_match_agrees_with_torch_lookup``, plus one check: where torch evaluated
the guards of a key the cache had, match's ``status`` must say the same
(``hit`` or ``miss``; ``undecided`` or ``no-fit`` is a disagreement).

A call on which fxcache and torch disagree stays in the list as a strict xfail
that says what torch did and what fxcache predicts: the suite turns red when
fxcache is fixed, and the xfail can then go.

Cost on a 2-core CPU box: ~36 s for the cache, then 6-10 s per call (one fresh
torch process each); about 5 minutes for the module.
"""

from __future__ import annotations

import inspect
import json

import pytest
from conftest import RealCache
from helpers import assert_match_agrees_with_torch

pytestmark = pytest.mark.torch

# The cases compiled into this suite's cache: every case appended to demo/cases.py
# for it (the original nine are exercised by test_real_cache.py).
ORACLE_CASES = [
    "branch_on_product",
    "reshape_rows_of_8",
    "mod_three_regions",
    "cat_list",
    "kw_only_weight",
    "int_branch",
    "two_tensors",
    "broadcast_size_one",
    "matmul_shared",
    "conv1d_small",
    "train_mlp_pairs",
    "mark_dynamic_min",
    "automatic_dynamic_cols",
    "unused_arg",
    "calls_helper",
    "half_slice",
]


@pytest.fixture(scope="module")
def oracle_cache(tmp_path_factory: pytest.TempPathFactory) -> RealCache:
    pytest.importorskip("torch")
    from demo.build_cache import build_cache_subprocess

    root = tmp_path_factory.mktemp("oracle-suite-cache") / "inductor"
    summary = build_cache_subprocess(root, cases=ORACLE_CASES)
    return RealCache(root=root, summary=summary)


def _names(case: str) -> list[str]:
    from demo.cases import CASES

    return list(inspect.signature(CASES[case].fn).parameters)


def _is_shape(desc) -> bool:
    return isinstance(desc, list) and all(isinstance(d, int) for d in desc)


def _shapes_args(case: str, shapes: list) -> list[str]:
    """``--shapes`` per parameter: ``x=[4,3]``, ``n=7``, and ``xs[0]=[3,4]`` for a list."""
    out = []
    for name, desc in zip(_names(case), shapes, strict=True):
        if isinstance(desc, list) and desc and all(_is_shape(d) for d in desc):
            for i, d in enumerate(desc):
                out += ["--shapes", f"{name}[{i}]={json.dumps(d).replace(' ', '')}"]
        else:
            out += ["--shapes", f"{name}={json.dumps(desc).replace(' ', '')}"]
    return out


def _id(case: str, shapes: list) -> str:
    return f"{case}-{json.dumps(shapes).replace(' ', '')}"


def _xfail(case: str, shapes: list, reason: str):
    """A call on which fxcache disagrees with torch today; ``reason`` says how."""
    return pytest.param(case, shapes, id=_id(case, shapes),
                        marks=pytest.mark.xfail(strict=True, reason=reason))


# (case, call shapes), one element per parameter of the function (see demo/cases.py).
# "hit": inside a region that was compiled; "miss": same key, every entry's guards
# fail; "key": Dynamo traces another graph (0/1, duck sizing, rank, static dim).
ORACLE_CALLS = [
    # s0*s1 <= 64 / 64 < s0*s1, built at [4, 5] and [10, 9]: two keys.
    ("branch_on_product", [[16, 4]]),            # hit, small side, on the boundary 64
    ("branch_on_product", [[12, 7]]),            # hit, large side
    ("branch_on_product", [[8, 8]]),             # key: duck sizing
    # (s0*s1) % 8 == 0 plus view guards such as s0 % (s0*s1 // 8) != 0 and s1 != 8.
    ("reshape_rows_of_8", [[2, 12]]),            # hit
    ("reshape_rows_of_8", [[6, 4]]),             # miss: 6 % (24 // 8) == 0
    # One key, entries for s0 % 3 == 0 and s0 % 3 != 0.
    ("mod_three_regions", [[12, 5]]),            # hit, == 0 entry
    ("mod_three_regions", [[10, 4]]),            # hit, != 0 entry
    # One key, entries for rows of xs[0] >= rows of xs[1], and <.
    ("cat_list", [[[7, 4], [3, 4]]]),            # hit, >= entry
    ("cat_list", [[[3, 5], [8, 5]]]),            # hit, < entry
    ("cat_list", [[[5, 3], [5, 3]]]),            # key: equal rows, one symbol
    # Keyword-only w; inductor adds s1 <= 4096 (the reduction).
    ("kw_only_weight", [[7, 9], [9]]),           # hit
    ("kw_only_weight", [[3, 5000], [5000]]),     # miss: 5000 > 4096
    # n <= 4 / 4 < n. An int argument is a symbol of its own: torch neither
    # specializes an int 1 nor duck-sizes an int with a tensor size.
    ("int_branch", [[6], 1]),                    # hit, n <= 4
    ("int_branch", [[5], 5]),                    # hit, n > 4 (n == x's size: still two symbols)
    # Built a[4], b[4] (one symbol) then a[3], b[5] (two symbols): two keys.
    ("two_tensors", [[7], [7]]),                 # hit, duck key
    ("two_tensors", [[6], [9]]),                 # hit, two-symbol key
    ("two_tensors", [[1], [5]]),                 # key: size 1
    # y[n, 1] broadcast against x[n, m].
    ("broadcast_size_one", [[7, 4], [7, 1]]),    # hit
    ("broadcast_size_one", [[7, 4], [7, 4]]),    # key: y's 1 is now 4
    # x[m, k] @ w[k, n].
    ("matmul_shared", [[6, 4], [4, 3]]),         # hit
    ("matmul_shared", [[5, 5], [5, 2]]),         # key: m == k
    # Conv1d(3 -> 2, 3): batch in [2, 15], length >= 4; channels static 3.
    ("conv1d_small", [[5, 3, 12]]),              # hit (forward + backward FX by exact guards)
    ("conv1d_small", [[16, 3, 8]]),              # miss: batch 16 > 15 (AOT, forward and backward FX)
    ("conv1d_small", [[3, 3, 12]]),              # key: batch == channels (3)
    # Training step, loss needs an even batch; 4 <= B <= 4096 (forward FX: B <= 8193).
    ("train_mlp_pairs", [[8, 3], [8, 2]]),       # hit, forward + backward FX by exact guards
    ("train_mlp_pairs", [[5000, 3], [5000, 2]]),  # AOT miss, forward FX hit, backward FX miss
    # mark_dynamic(x, 0, min=4) and mark_dynamic(x, 1): 4 <= s0, 2 <= s1.
    ("mark_dynamic_min", [[5, 3]]),              # hit
    ("mark_dynamic_min", [[300, 7]]),            # hit, no upper bound
    _xfail("mark_dynamic_min", [[6, 6]], (
        "both dims of x are marked dynamic (mark_dynamic(x, 0, min=4), mark_dynamic(x, 1)) and "
        "torch never duck-sizes marked dims: its AOTAutograd lookup on the key built from [8, 3] "
        "gets hints [6, 6] (t0, t1: two symbols), the guards 4 <= L['t0'] and 2 <= L['t1'] hold, "
        "it hits the entry and loads its forward FX entry by exact guards. fxcache says no-fit "
        "(\"L['x'].size()[0] and L['x'].size()[1] are both 6: torch's duck sizing gives equal "
        "sizes one symbol\"): no hit, no FX load.")),
    # dynamic=None, built [4, 6] (static key) then [4, 9] (dim 1 dynamic).
    ("automatic_dynamic_cols", [[4, 6]]),        # hit, the static entry
    ("automatic_dynamic_cols", [[4, 12]]),       # a fresh process compiles it static: new key
    # An argument the function never reads: no symbol, no guard.
    ("unused_arg", [[6, 4], [2, 2]]),            # hit, whatever `unused` is
    # A graph break in the helper: two graphs, the second in the helper's frame (L['t']).
    _xfail("calls_helper", [[9, 5]], (
        "the graph break in _helper_tail splits the call in two graphs: torch looks up "
        "calls_helper's AOTAutograd key (L['x'], hints [9, 5]: hit, and match agrees), then the "
        "key of the frame torch_dynamo_resume_in__helper_tail_at_N, whose inputs are "
        "L['t'].size()[0], L['t'].size()[1] (hints [9, 5]): a guards-mode lookup that hits its "
        "only entry, then an exact-mode hit of its forward FX entry. fxcache match "
        "--shapes x=[9,5] does not bind that key at all (L['t'] is a local of the helper's frame, "
        "which no parameter of calls_helper names): no prediction for the lookup, no FX load "
        "(given t=[9,5] it predicts the hit).")),
    _xfail("calls_helper", [[4, 4]], (
        "x=[4,4] is duck-sized, so calls_helper's graph is another key (torch: full miss on a new "
        "key; match: no-fit; they agree). t = x * 0.5 - 1 comes out of a compiled graph with its "
        "dims marked dynamic (_dynamo_propagated_dynamic_indices), so the helper's frame is NOT "
        "duck-sized: torch looks up the helper-frame key (L['t'], built from t=[6,3]) with hints "
        "[4, 4], two symbols, hits its entry and loads its forward FX entry by exact guards. "
        "fxcache does not bind that key from x; even given t=[4,4] it says no-fit (duck sizing "
        "would give the equal sizes one symbol).")),
    # x[: s0 // 2] with s0 // 2 != 1.
    ("half_slice", [[11, 3]]),                   # hit
    ("half_slice", [[3, 5]]),                    # miss: 3 // 2 == 1
]


PARAMS = [c if hasattr(c, "marks") else pytest.param(*c, id=_id(*c)) for c in ORACLE_CALLS]


def test_oracle_cases_are_at_least_twenty_functions():
    from demo.cases import CASES

    assert set(ORACLE_CASES) <= set(CASES)
    assert len({c.fn for c in CASES.values()}) >= 20
    assert {p.values[0] for p in PARAMS} == set(ORACLE_CASES)
    assert len(PARAMS) >= 30


@pytest.mark.parametrize("case,shapes", PARAMS)
def test_match_agrees_with_torch_lookup(oracle_cache, tmp_path, case, shapes):
    own = {w["key"] for w in oracle_cache.writes(case)}
    assert_match_agrees_with_torch(oracle_cache.root, case, shapes, _shapes_args(case, shapes), own, tmp_path)
