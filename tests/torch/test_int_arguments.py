"""``fxcache match`` reads the ints of a call (slice bounds, a reduction's dim, a tuple's length,
an int Dynamo specialized or kept as a symbol, an int in a size list or an op's argument, one
read only after a graph break), as torch's lookups show.

The cases of ``tests.harness.cases_args`` are in the session's real cache; torch's own lookups
(each a fresh process's first call on a copy of the cache, recorded by ``python -m
tests.harness.recorded``) are the judge. Where the cache holds the evidence, match's verdict is
torch's; where it holds none, the verdict is UNDECIDED, naming the parameter, whatever torch did.
"""

from __future__ import annotations

import re

import pytest

from tests.harness.match_runs import BOTH, VERDICT, both_for
from tests.helpers import (
    assert_match_agrees_with_answer,
    assert_verdict_as_torch,
    call_label,
    match_call,
    torch_status,
)

pytestmark = pytest.mark.torch

# window_mean: ints, a tuple and a bool that its graphs keep as constants (slice bounds,
# an arithmetic scalar, a reduction's dim and keepdim); its n=16 key sliced all of dim 1,
# which the graph leaves out, so nothing there says which n it was traced with.
CONSTANT_CALLS = [
    ("window_mean", [[4, 32], 4]),                               # hit: every constant read, the call's
    ("window_mean", [[4, 32], 5, {"dims": {"tuple": [0, 1]}}]),              # new graph: 10 and 6, not 8 and 5
    ("window_mean", [[4, 32], 4, {"dims": {"tuple": [1, 0]}}]),              # new graph: Dynamo's graph keeps the order
    ("window_mean", [[4, 32], 4, {"keepdim": True}]),             # new graph: mean.dim's keepdim
]
CONSTANT_UNDECIDED = [("window_mean", [[4, 32], 16])]             # torch: a hit on the n=16 key (its slice an alias)
# sum_dim (dynamic=True): dim and dims[0] are SymInts Dynamo specialized (guards dim == 1,
# dims[0] == 0); a second key was traced with dim=0.
PINNED_CALLS = [
    ("sum_dim", [[5, 6]]),                                        # hit: dim left out is 1, not the dim=0 key's
    ("sum_dim", [[4, 6], {"dim": 0}]),                            # hit: the dim=0 key, not a miss of the first
    ("sum_dim", [[4, 6], {"dims": {"tuple": [1]}}]),              # new graph, not a miss of dims[0] == 0
    ("sum_dim", [[4, 6], {"dim": -1}]),                           # new graph, not a miss of dim == 1 and dim == 0
]
# sum_dim's dims as a tuple of another length than the keys were traced with ((0,)): Dynamo
# guards a tuple's length. Shorter than an item a key takes an input from (dims[0]): no trace
# of the call has that input, another graph. Longer: another graph unless the code never
# reads the items past dims[0], which the key's inputs do not say (x.sum(dims) reads them).
TUPLE_CALLS = [("sum_dim", [[4, 6], {"dims": {"tuple": []}}])]     # new graph: no dims[0]
TUPLE_UNDECIDED = [("sum_dim", [[4, 6], {"dims": {"tuple": [0, 1]}}])]  # torch: another graph
# regroup (dynamic=True): groups a SymInt whose guards hold the trace's checks on it.
RETRACE_CALLS = [
    ("regroup", [[4, 12], 4]),                                    # hit: another value, every clause holds
    ("unflat_heads", [[4, 12], 2]),                               # hit: the or's divisibility holds
]
RETRACE_UNDECIDED = [
    ("regroup", [[4, 12], 5]),                                    # torch: raises (12 columns into 5 groups)
    ("unflat_heads", [[4, 8], 3]),                                # torch: raises; fails x.size(1) % heads == 0 in an or
]
# A call given the value a clause ``n != c`` excludes: Dynamo specializes n to c, and the
# cache does not show whether that changes the graph it records.
SPECIALIZED_UNDECIDED = [
    ("regroup", [[4, 12], 1]),                                    # torch: another graph (view's sizes hold 1)
    ("neg_tail", [[4, 10], 1]),                                   # torch: a new entry of the same key
]
# ramp (dynamic=True), built with n=8 of 16 columns: guards n <= x.size(1), x.size(1) != n, n >= 2.
RAMP_CALLS = [("ramp", [[6, 16], 6])]                              # hit: every clause holds
RAMP_UNDECIDED = [
    ("ramp", [[4, 16], 20]),                                      # torch: raises (the slice clamped at 16)
    ("ramp", [[4, 16], 0]),                                       # torch: another graph, n kept an input
]
# size_gate (dynamic=True), built with 6 rows: its entry guards x.size(0) >= 5, the code's own
# `if x.shape[0] > 4:`.
SIZE_BRANCH_CALLS = [("size_gate", [[9, 8]])]                      # hit: the same side
SIZE_BRANCH_UNDECIDED = [("size_gate", [[4, 8]])]                  # torch: another graph (the other side)
# regroup_baked (dynamic=False, built with groups=3): groups is an item of view's and
# repeat's size lists, [4, 3, -1] and [3] in the key's graph.
SIZES_CALLS = [
    ("regroup_baked", [[4, 12], 3]),                              # hit: the lists hold 3 where the code has groups
    ("regroup_baked", [[4, 12], 4]),                              # new graph: 4, where the graph has 3
]
# spread_ops (dynamic=False, built with dim=1): aten.var.correction(x, [1], correction = 1.0)
# then aten.unsqueeze.default(var, -1); keepdim=False and d=-1 as left out.
OPS_CALLS = [
    ("spread_ops", [[4, 6], {"dim": 1}]),                         # hit: [1], no keepdim, -1
    ("spread_ops", [[4, 6], {"dim": -1}]),                        # new graph: [-1], where the graph has [1]
    ("spread_ops", [[4, 6], {"dim": 1, "keepdim": True}]),        # new graph: keepdim = True, not printed here
    ("spread_ops", [[4, 6], {"dim": 1, "d": 1}]),                 # new graph: unsqueeze's 1 (the same place as -1)
    ("spread_ops", [[4, 6]]),                                     # new graph: dim=None, no dim in the op
]
# dim_sized (dynamic=False, built with d=1): d is also torch.ones's d + 5 (aten.full's list),
# where the float rule finds no float constant: undecided, though torch hits.
OPS_UNDECIDED = [("dim_sized", [[4, 6], 1])]
# gated (dynamic=None, built with n=3): a data-dependent if breaks the graph, and n is read
# only after it: the first frame's key serves every n, the resume frame's (its local y
# named, as the docs say) baked n in. gated_early reads n before the break too, where no
# op takes its value: the first frame's verdict stays undecided though torch hits.
BREAK_CALLS = [
    ("gated", [[4, 8], 3]),                                       # hit in both frames (the resume frame undecided)
    ("gated", [[4, 8], 4]),                                       # the first frame hits; the resume frame: new graph
]
BREAK_UNDECIDED = [("gated_early", [[4, 8], 4])]                   # torch: the first frame hits
# shift_kw (dynamic=None, built with shift left out): a keyword-only int that meets x in
# arithmetic only, the scalar of aten.add.Tensor(mul, 0). sized_kw's n is also arange's
# length, which no constant of the graph shows: undecided.
INT_KW_CALLS = [
    ("shift_kw", [[4, 4]]),                                       # hit: shift left out is add's 0
    ("shift_kw", [[4, 4], {"shift": 0}]),                         # hit: the default, given
    ("shift_kw", [[4, 4], {"shift": 1}]),                         # new graph: add's 1, not 0
]
INT_KW_UNDECIDED = [("sized_kw", [[4, 2]])]                        # torch: a hit


@BOTH
@pytest.mark.parametrize("case,shapes", CONSTANT_CALLS, ids=[call_label(*c) for c in CONSTANT_CALLS])
def test_ints_a_tuple_and_a_bool_are_read_off_the_graphs_constants(real_cache, arg_answers, case, shapes):
    """Each key is looked up as torch looked it up, and the verdict is torch's: a hit
    accounts for n, dims and keepdim by the constants of the key's graph (a tuple's
    said to assume a tuple); another value rules each key out by a constant that differs."""
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    own = {w["key"] for w in real_cache.writes(case)}
    assert_match_agrees_with_answer(real_cache.root, case, shapes, answer, own)
    v = assert_verdict_as_torch(real_cache.root, case, shapes, answer, case)
    if v["status"] == "hit":
        how = {p["name"]: p["how"] for p in v["params"]}
        assert how == {"x": "key-input", "n": "baked-constant", "dims": "tuple-assumed",
                       "keepdim": "baked-constant"}, v["params"]
    else:
        assert v["status"] == "new-graph" and v["why_code"] == "baked-value-differs", v


@BOTH
@pytest.mark.parametrize("case,shapes", CONSTANT_UNDECIDED, ids=[call_label(*c) for c in CONSTANT_UNDECIDED])
def test_a_slice_over_a_whole_fixed_dim_is_read_as_the_alias_the_graph_keeps(real_cache, arg_answers, case, shapes):
    """window_mean's n=16 slices all 32 columns: AOTAutograd leaves the slice out (an
    alias), which is what a slice whose end the call's n puts at or past the fixed width
    gives, and mul's scalar holds n + 1 = 17: the n=16 key, as torch hit it."""
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    assert_match_agrees_with_answer(real_cache.root, case, shapes, answer, {w["key"] for w in real_cache.writes(case)})
    assert assert_verdict_as_torch(real_cache.root, case, shapes, answer, case)["status"] == "hit"


@BOTH
@pytest.mark.parametrize("case,shapes", PINNED_CALLS, ids=[call_label(*c) for c in PINNED_CALLS])
def test_an_int_dynamo_specialized_given_another_value_is_another_graph(real_cache, arg_answers, case, shapes):
    """A SymInt input Dynamo specialized while tracing (``Sym(1)``) pins the int with a
    guard; another value fails it, and torch traces a graph with that value in it: another
    key (a new graph), not a new entry of this one."""
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    own = {w["key"] for w in real_cache.writes(case)}
    assert_match_agrees_with_answer(real_cache.root, case, shapes, answer, own)
    v = assert_verdict_as_torch(real_cache.root, case, shapes, answer, case)
    assert v["status"] == "hit" or v["why_code"] == "specialized-int-differs", v


@both_for(TUPLE_CALLS)
@pytest.mark.parametrize("case,shapes", TUPLE_CALLS + TUPLE_UNDECIDED, ids=[call_label(*c) for c in TUPLE_CALLS + TUPLE_UNDECIDED])
def test_a_tuple_of_another_length_is_another_graph_where_the_keys_inputs_show_it(real_cache, arg_answers, case, shapes):
    """A tuple shorter than an item the keys take an input from is a new graph, as torch
    did; a longer one is undecided (whether the code reads the items past those the key
    takes, the cache does not show), though torch traced another graph, never a HIT."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    if (case, shapes) in TUPLE_CALLS:
        assert_match_agrees_with_answer(real_cache.root, case, shapes, answer, {w["key"] for w in real_cache.writes(case)})
        v = assert_verdict_as_torch(real_cache.root, case, shapes, answer, case)
        assert v["status"] == "new-graph" and v["why_code"] == "sequence-shorter", v
        assert "dims is a tuple of 0 items here, and this key takes an input from dims[0]" in v["why"], v
        return
    rc, body = match_call(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "sequence-longer-unknown", fv
    assert fv["line"].startswith("UNDECIDED: dims=(0, 1): 2 items"), fv["line"]
    assert torch_status(answer["lookups"], {k.key for k in scan_cache(real_cache.root).keys}) == "new-graph"


@BOTH
@pytest.mark.parametrize("case,shapes", RETRACE_CALLS, ids=[call_label(*c) for c in RETRACE_CALLS])
def test_an_int_symbol_hits_where_every_clause_holds(real_cache, arg_answers, case, shapes):
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    own = {w["key"] for w in real_cache.writes(case)}
    assert_match_agrees_with_answer(real_cache.root, case, shapes, answer, own)
    assert assert_verdict_as_torch(real_cache.root, case, shapes, answer, case)["status"] == "hit"


@VERDICT
@pytest.mark.parametrize("case,shapes", SPECIALIZED_UNDECIDED, ids=[call_label(*c) for c in SPECIALIZED_UNDECIDED])
def test_an_int_given_the_value_its_guard_excludes_is_undecided(real_cache, arg_answers, case, shapes):
    """An int argument is a SymInt whatever its value; where the trace checked whether it is
    1 (``groups != 1``, ``k != 1``), a call with 1 makes Dynamo specialize it. regroup's view
    then records another graph (torch: another key); neg_tail's slice the same graph (torch:
    a new entry of the key). The cache does not tell them apart: undecided, both."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    rc, body = match_call(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "value-specialized", fv
    answer = arg_answers[call_id(case, shapes)]
    present = {k.key for k in scan_cache(real_cache.root).keys}
    want = {"regroup": "new-graph", "neg_tail": "miss"}[case]
    assert answer["error"] is None and torch_status(answer["lookups"], present) == want, answer


@VERDICT
@pytest.mark.parametrize("case,shapes", RETRACE_UNDECIDED, ids=[call_label(*c) for c in RETRACE_UNDECIDED])
def test_a_failed_equality_of_the_trace_leaves_the_verdict_undecided(real_cache, arg_answers, case, shapes):
    """A call that fails an equality the trace relied on (the view's dim dividing) is traced
    again: another graph, or (here) an error; never a new entry of this key by the cache
    alone."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    rc, body = match_call(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "equality-failed", fv
    answer = arg_answers[call_id(case, shapes)]
    present = {k.key for k in scan_cache(real_cache.root).keys}
    assert answer["error"] is not None or torch_status(answer["lookups"], present) != "miss", answer


@BOTH
@pytest.mark.parametrize("case,shapes", RAMP_CALLS, ids=[call_label(*c) for c in RAMP_CALLS])
def test_an_int_that_slices_and_sizes_hits_where_every_clause_holds(real_cache, arg_answers, case, shapes):
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    own = {w["key"] for w in real_cache.writes(case)}
    assert_match_agrees_with_answer(real_cache.root, case, shapes, answer, own)
    assert assert_verdict_as_torch(real_cache.root, case, shapes, answer, case)["status"] == "hit"


@VERDICT
@pytest.mark.parametrize("case,shapes,code", [(*RAMP_UNDECIDED[0], "relation-failed"), (*RAMP_UNDECIDED[1], "size-boundary")],
                         ids=[call_label(*c) for c in RAMP_UNDECIDED])
def test_a_failed_relation_or_an_int_size_at_0_leaves_the_verdict_undecided(real_cache, arg_answers, case, shapes,
                                                                          code):
    """``x[:, :n] + torch.arange(n)`` with n past x.size(1) fails ``n <= x.size(1)``: the slice
    is clamped and torch raises on the add; with n=0 it fails ``n >= 2`` (n sizes the arange)
    and torch traces another graph. Neither is a new entry of the key by the cache alone."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    rc, body = match_call(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == code, fv
    answer = arg_answers[call_id(case, shapes)]
    present = {k.key for k in scan_cache(real_cache.root).keys}
    assert answer["error"] is not None or torch_status(answer["lookups"], present) != "miss", answer


@BOTH
@pytest.mark.parametrize("case,shapes", SIZE_BRANCH_CALLS, ids=[call_label(*c) for c in SIZE_BRANCH_CALLS])
def test_a_size_on_the_built_side_of_a_branch_hits(real_cache, arg_answers, case, shapes):
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    own = {w["key"] for w in real_cache.writes(case)}
    assert_match_agrees_with_answer(real_cache.root, case, shapes, answer, own)
    assert assert_verdict_as_torch(real_cache.root, case, shapes, answer, case)["status"] == "hit"


@VERDICT
@pytest.mark.parametrize("case,shapes", SIZE_BRANCH_UNDECIDED, ids=[call_label(*c) for c in SIZE_BRANCH_UNDECIDED])
def test_a_bound_the_codes_branch_may_have_made_fails_undecided(real_cache, arg_answers, case, shapes):
    """``if x.shape[0] > 4:`` built with 6 rows: its entry guards ``x.size(0) >= 5``. A call
    with 4 rows fails it, and torch traces the other side's ops, another graph: not a new
    entry of the key (a MISS) where the code orders a size in Python (``size-branch``)."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    rc, body = match_call(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "size-branch", fv
    assert "x.size(0) >= 5" in fv["line"] and "x.shape[0] > 4" in fv["line"], fv["line"]
    answer = arg_answers[call_id(case, shapes)]
    present = {k.key for k in scan_cache(real_cache.root).keys}
    assert torch_status(answer["lookups"], present) == "new-graph", answer


@BOTH
@pytest.mark.parametrize("case,shapes", SIZES_CALLS, ids=[call_label(*c) for c in SIZES_CALLS])
def test_an_int_in_a_size_list_is_read_off_the_items_of_the_graphs_lists(real_cache, arg_answers, case, shapes):
    """x.view(x.shape[0], groups, -1) and y.repeat(groups), traced with groups=3, hold 3 in
    their ops' lists: the call's groups is that item or another graph, as torch did."""
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    assert_match_agrees_with_answer(real_cache.root, case, shapes, answer, {w["key"] for w in real_cache.writes(case)})
    v = assert_verdict_as_torch(real_cache.root, case, shapes, answer, case)
    if v["status"] == "hit":
        groups = next(p for p in v["params"] if p["name"] == "groups")
        assert groups["how"] == "baked-constant" and "the size lists at line" in groups["detail"], groups
    else:
        assert v["status"] == "new-graph" and v["why_code"] == "baked-value-differs", v


@BOTH
@pytest.mark.parametrize("case,shapes", OPS_CALLS, ids=[call_label(*c) for c in OPS_CALLS])
def test_an_int_bool_or_none_an_op_keeps_is_read_off_that_ops_argument(real_cache, arg_answers, case, shapes):
    """std's dim and keepdim and unsqueeze's dim, traced with dim=1, keepdim=False, d=-1:
    the call's values are the op's, or torch traces another graph, as it did (d=1 is the
    same place as -1 in a rank-2 tensor, and still another graph)."""
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    assert_match_agrees_with_answer(real_cache.root, case, shapes, answer, {w["key"] for w in real_cache.writes(case)})
    v = assert_verdict_as_torch(real_cache.root, case, shapes, answer, case)
    if v["status"] == "hit":
        for name in ("dim", "keepdim", "d"):
            p = next(p for p in v["params"] if p["name"] == name)
            assert p["how"] == "baked-constant" and "the arguments of its ops at line" in p["detail"], p
    else:
        assert v["status"] == "new-graph" and v["why_code"] == "baked-value-differs", v


@VERDICT
@pytest.mark.parametrize("case,shapes", OPS_UNDECIDED, ids=[call_label(*c) for c in OPS_UNDECIDED])
def test_an_int_that_is_a_dim_and_sizes_a_tensor_stays_undecided(real_cache, arg_answers, case, shapes):
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    rc, body = match_call(real_cache.root, case, shapes)
    v = body["verdicts"]["functions"][0]
    assert rc == 3 and v["status"] == "undecided", v
    assert v["why_code"] in ("baked-value-unknown", "float-provenance-unknown"), v
    assert v["line"].startswith("UNDECIDED: d reaches this key's graph"), v["line"]
    present = {k.key for k in scan_cache(real_cache.root).keys}
    assert torch_status(arg_answers[call_id(case, shapes)]["lookups"], present) == "hit"


@BOTH
@pytest.mark.parametrize("case,shapes", BREAK_CALLS, ids=[call_label(*c) for c in BREAK_CALLS])
def test_an_int_read_only_after_the_graph_break_is_the_resume_frames_alone(real_cache, arg_answers, case, shapes):
    """The first frame's graph ends at the data-dependent if, before any read of n: its
    verdict is torch's hit for every n, n accounted as read after the break; the resume
    frame's key baked n in: another n is another graph on either side of the if, and the
    n it baked is undecided (which side the call's data take, the cache does not show),
    its guards passing as torch's did."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    assert_match_agrees_with_answer(real_cache.root, case, shapes, answer, {w["key"] for w in real_cache.writes(case)})
    rc, body = match_call(real_cache.root, case, shapes)
    present = {k.key for k in scan_cache(real_cache.root).keys}
    aot = [lk for lk in answer["lookups"] if lk["kind"] == "aotautograd"]
    assert len(aot) == 2 and aot[0]["hit"] and aot[0]["key"] in present, aot
    resumed = (aot[1]["hit"] is not None) == (shapes[1] == 3) and (aot[1]["key"] in present) == (shapes[1] == 3)
    assert resumed, aot  # torch: the resume frame's key is the built one for n=3 only
    by = {"resume" if (f["function"] or "").startswith("torch_dynamo_resume_in_") else "first": f
          for f in body["verdicts"]["functions"]}
    assert by["first"]["status"] == "hit", by
    n = next(p for p in by["first"]["params"] if p["name"] == "n")
    assert n["status"] == "accounted" and n["how"] == "after-break", n
    assert by["resume"]["status"] == ("undecided" if shapes[1] == 3 else "new-graph"), by
    if shapes[1] == 3:
        assert by["resume"]["why_code"] == "resume-side-unknown", by
    assert rc == (3 if shapes[1] == 3 else 1), rc


@VERDICT
@pytest.mark.parametrize("case,shapes", BREAK_UNDECIDED, ids=[call_label(*c) for c in BREAK_UNDECIDED])
def test_an_int_read_before_the_graph_break_too_leaves_the_first_frame_undecided(real_cache, arg_answers,
                                                                                 case, shapes):
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    rc, body = match_call(real_cache.root, case, shapes)
    first = next(f for f in body["verdicts"]["functions"] if f["function"] == case)
    assert first["status"] == "undecided" and first["why_code"] == "baked-value-unknown", first
    assert first["line"].startswith("UNDECIDED: n reaches this key's graph at line"), first["line"]
    aot = [lk for lk in arg_answers[call_id(case, shapes)]["lookups"] if lk["kind"] == "aotautograd"]
    assert aot[0]["hit"] and aot[0]["key"] in {k.key for k in scan_cache(real_cache.root).keys}, aot
    # The frame after the break takes m = n + 1 as its input: 5 where the key's graph adds 4,
    # another graph, as torch traced one (its second lookups are of keys it wrote anew).
    rest = [f for f in body["verdicts"]["functions"] if f["function"] != case]
    assert rc == 1 and [f["status"] for f in rest] == ["new-graph"], body["verdicts"]
    assert [lk["hit"] for lk in aot[1:]] == [None], aot


@BOTH
@pytest.mark.parametrize("case,shapes", INT_KW_CALLS, ids=[call_label(*c) for c in INT_KW_CALLS])
def test_a_keyword_only_int_in_arithmetic_is_read_off_its_op(real_cache, arg_answers, case, shapes):
    """A keyword-only int given or left at its default is the scalar of the op it meets a
    tensor in: the same value accounts for it (a hit), another rules the key out (torch
    traces another graph), as torch looked the keys up."""
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    assert_match_agrees_with_answer(real_cache.root, case, shapes, answer, {w["key"] for w in real_cache.writes(case)})
    v = assert_verdict_as_torch(real_cache.root, case, shapes, answer, case)
    if v["status"] == "hit":
        assert {p["name"]: p["how"] for p in v["params"]} == {"x": "key-input", "shift": "baked-constant"}, v
    else:
        assert v["why_code"] == "baked-value-differs", v


@VERDICT
@pytest.mark.parametrize("case,shapes", INT_KW_UNDECIDED, ids=[call_label(*c) for c in INT_KW_UNDECIDED])
def test_an_int_that_is_also_a_size_stays_undecided(real_cache, arg_answers, case, shapes):
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    rc, body = match_call(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    # The keyword-only n is read as the function's parameter (as a positional one is): the int
    # rule reaches its reads and names it, or, where no rule reaches it, its value left unrecorded.
    assert rc == 3 and fv["status"] == "undecided", fv
    assert fv["why_code"] in ("baked-value-unknown", "constant-unrecorded"), fv
    assert re.search(r"\bn( reaches|=2)", fv["line"]), fv
    present = {k.key for k in scan_cache(real_cache.root).keys}
    assert torch_status(arg_answers[call_id(case, shapes)]["lookups"], present) == "hit"
