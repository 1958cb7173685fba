"""``fxcache match`` on what a call passes in numbers and by keyword: a ``*args`` tuple or a split
of another length, the keywords that reach ``**kwargs`` (recorded nowhere in the cache), and
keys that record no function (a list of tensors ``torch.cat`` takes), as torch's lookups show.

The cases of ``tests.harness.cases_args`` are in the session's real cache; torch's own lookups
(recorded by ``python -m tests.harness.recorded``) are the judge, as in test_arguments.py.
"""

from __future__ import annotations

import json

import pytest

from tests.harness.match_runs import VERDICT, Call, ahead, both_for
from tests.helpers import (
    aot_hit,
    assert_match_agrees_with_answer,
    assert_verdict_as_torch,
    call_label,
    match_args_for,
    match_call,
    run_fxcache,
    torch_status,
)

pytestmark = pytest.mark.torch

# star_sum / star_pair (dynamic=None, built with two [4, 4] tensors as *xs): fewer elements
# than a key takes, or more where the loop reads every one, trace another graph; more where
# the code reads by index only are undecided (torch hits: the graph is the same).
STAR_CALLS = [
    ("star_sum", [[[4, 4], [4, 4]]]),                             # hit
    ("star_sum", [[[4, 4], [4, 4], [4, 4]]]),                     # new graph: the loop reads xs[2]
    ("star_sum", [[[4, 4]]]),                                     # new graph: the key takes xs[1]
]
STAR_UNDECIDED = [("star_pair", [[[4, 4], [4, 4], [4, 4]]])]      # torch: a hit (xs[2] never read)
# split_sum (dynamic=True, built x=[6,12], n=4: 3 pieces, the loop reads each) and split_two
# (built x=[4,12], n=4, pieces 0 and 1 read): a call that splits into another number of pieces
# is another graph where every piece is read; with two read by index it stays undecided.
SPLIT_CALLS = [
    ("split_sum", [[4, 9], 3]),                                   # hit: 3 pieces
    ("split_sum", [[4, 16], 4]),                                  # new graph: 4 pieces
    ("split_sum", [[4, 12], 6]),                                  # new graph: 2 pieces (the last 0 wide)
]
SPLIT_UNDECIDED = [("split_two", [[4, 16], 4])]                   # 4 pieces, two read
# A flag through **kwargs (kw_built_with: built with flag=True; kw_built_without: built with
# no keyword): the cache never says which keywords a key was compiled with, so every verdict
# is undecided without a run's trace (tests/torch/test_explain.py gives it the replay's).
KWARGS_CALLS = [
    ("kw_built_with", [[6, 5]]),                                  # torch: a new graph
    ("kw_built_with", [[6, 5], {"flag": True}]),                  # torch: a hit
    ("kw_built_without", [[6, 5]]),                               # torch: a hit
    ("kw_built_without", [[6, 5], {"flag": True}]),               # torch: a new graph
]
# kw_tensor (dynamic=False, built with bias=[5]): a tensor through a **kw dict not named
# kwargs, the key's input L['kw']['bias'] (tests/torch/test_explain.py, with the replay's trace).
KW_DICT_CALLS = [
    ("kw_tensor", [[6, 5], {"bias": [5]}]),                       # torch: a hit
    ("kw_tensor", [[6, 5], {"bias": [6, 5]}]),                    # torch: a new graph (bias's sizes)
    ("kw_tensor", [[6, 5], {"shift": [5]}]),                      # torch: raises (KeyError: the code reads kw['bias'])
]
# cat_rows (dynamic=True, built xs=[[2,4],[3,4]], dim=0): no entry of its keys records the
# function (Inductor keeps no stack trace of these ops). A call none of the keys that record
# no function can take is a new graph whichever function they are; one that such a key would
# serve is undecided, as that key may be another function's.
UNATTRIBUTED_CALLS = [
    ("cat_rows", [[[5, 4], [1, 4]], 0]),                          # new graph: xs[1]'s rows are 1
    ("cat_rows", [[[2, 4], [2, 4]], 1]),                          # new graph: equal rows, one symbol
]
UNATTRIBUTED_UNDECIDED = [
    ("cat_rows", [[[2, 4], [3, 4]], 0]),                          # torch: a hit, if the key is cat_rows's
    ("cat_rows", [[[2, 4], [3, 4], [1, 4]], 0]),                  # torch: another graph (three tensors)
]


@both_for(STAR_CALLS)
@pytest.mark.parametrize("case,shapes", STAR_CALLS + STAR_UNDECIDED, ids=[call_label(*c) for c in STAR_CALLS + STAR_UNDECIDED])
def test_a_star_args_tuple_of_another_length_is_another_graph_where_the_keys_inputs_or_a_loop_show_it(
        real_cache, arg_answers, case, shapes):
    """``*xs``: a call with fewer tensors than the key takes, or more where the code loops
    over every element from the second on, is torch's new graph, naming the rule; as
    built, a hit. Read by index only, a longer call is undecided: torch hits (the third
    tensor is never read), which the cache alone does not show."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    if (case, shapes) in STAR_CALLS:
        assert_match_agrees_with_answer(real_cache.root, case, shapes, answer, {w["key"] for w in real_cache.writes(case)})
        v = assert_verdict_as_torch(real_cache.root, case, shapes, answer, case)
        n = len(shapes[0])
        assert v["status"] == "hit" if n == 2 else v["why_code"] == ("list-longer" if n == 3 else "list-shorter"), v
        return
    rc, body = match_call(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "list-element-not-input", fv
    assert torch_status(answer["lookups"], {k.key for k in scan_cache(real_cache.root).keys}) == "hit"


@both_for(SPLIT_CALLS)
@pytest.mark.parametrize("case,shapes", SPLIT_CALLS + SPLIT_UNDECIDED, ids=[call_label(*c) for c in SPLIT_CALLS + SPLIT_UNDECIDED])
def test_a_split_into_another_number_of_pieces_is_another_graph_where_the_code_reads_every_piece(
        real_cache, arg_answers, case, shapes):
    """``x.split(n, 1)`` under dynamic=True guards the number of pieces: a call that makes
    another number is torch's new graph where the loop reads every piece (naming the
    clause), a hit where it makes as many; where the code reads two pieces by index, the
    failed clause leaves the verdict undecided, whatever torch did."""
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    if (case, shapes) in SPLIT_CALLS:
        assert_match_agrees_with_answer(real_cache.root, case, shapes, answer, {w["key"] for w in real_cache.writes(case)})
        v = assert_verdict_as_torch(real_cache.root, case, shapes, answer, case)
        assert v["status"] == "hit" if shapes == [[4, 9], 3] else v["why_code"] == "split-pieces-differ", v
        return
    rc, body = match_call(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "equality-failed", fv


@VERDICT
@pytest.mark.parametrize("case,shapes", KWARGS_CALLS, ids=[call_label(*c) for c in KWARGS_CALLS])
def test_keywords_through_kwargs_are_undecided_without_a_trace_whatever_torch_does(real_cache, arg_answers,
                                                                                   case, shapes):
    """Given or not, the keywords that reach **kwargs are recorded nowhere in the cache
    (torch hits where the call's keywords are the build's, and traces another graph where
    they are not): undecided, naming **kwargs and the trace that would decide it, one code
    for both directions."""
    from tests.harness.oracle import call_id

    torch_hit = any(lk["hit"] for lk in arg_answers[call_id(case, shapes)]["lookups"])
    assert torch_hit == ((case == "kw_built_with") == ("flag" in json.dumps(shapes)))  # the keywords as built
    rc, body = match_call(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "kwargs-unrecorded", fv
    assert "**kwargs" in fv["line"] and "fxcache explain TRACE" in fv["line"], fv


@VERDICT
@pytest.mark.parametrize("case,shapes", UNATTRIBUTED_CALLS + UNATTRIBUTED_UNDECIDED,
                         ids=[call_label(*c) for c in UNATTRIBUTED_CALLS + UNATTRIBUTED_UNDECIDED])
def test_keys_that_record_no_function_decide_only_what_holds_whichever_function_they_are(
        real_cache, arg_answers, case, shapes):
    """``--fn cat_rows`` where no key records that function and its keys record none: not
    a usage error. A call none of those keys can take is torch's new graph, naming them; a
    call one of them would serve is undecided (torch hits only if the key is cat_rows's, and
    a key of another function would not be looked up), whatever torch did."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    rc, body = match_call(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    own = {w["key"] for w in real_cache.writes(case) if w["kind"] == "aotautograd"}
    assert own and set(body["unattributed"]) >= own, body["unattributed"]
    if (case, shapes) in UNATTRIBUTED_CALLS:
        v = assert_verdict_as_torch(real_cache.root, case, shapes, answer, case)
        assert v["status"] == "new-graph" and "no function (the entries keep no stack traces)" in v["why"], v
    else:
        assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "function-unattributed", fv
        present = {k.key for k in scan_cache(real_cache.root).keys}
        expected = "hit" if len(shapes[0]) == 2 else "new-graph"
        assert torch_status(answer["lookups"], present) == expected  # torch varies with it


@pytest.mark.parametrize("shapes,given_dim", [([[[2, 4], [3, 4], [1, 4]], 0], False),
                                              ([[[2, 4], [3, 4]], 0], False),
                                              ([[[2, 4], [3, 4]], 0], True)],
                         ids=["three", "two", "two-dim"])
def test_without_fn_a_key_that_records_no_function_hits_only_a_call_its_inputs_account_for(
        real_cache, arg_answers, shapes, given_dim):
    """No --fn: cat_rows's key (built with two tensors) records no function, so nothing but
    its inputs is known. Three tensors (a list of another length: torch traces another
    graph) are undecided, naming xs[2], not a HIT on the two it takes; two tensors, all the
    call gives bound to the key's inputs, hit as torch hit, with dim=0 given too: under
    dynamic=True the key has dim as a symbol its guards pin (torch.cat specializes it), so
    they decide it as they decide the sizes."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    args = match_args_for("cat_rows", shapes)
    assert args[-2:] == ["--shapes", "dim=0"], args
    args = args if given_dim else args[:-2]
    proc = run_fxcache("--cache-dir", str(real_cache.root), "match", "--json", *args)
    body = json.loads(proc.stdout)
    (fv,) = [v for v in body["verdicts"]["functions"] if v["function"] is None]
    writes = real_cache.writes("cat_rows")
    assert {w["key"] for w in writes if w["kind"] == "aotautograd"} <= set(fv["keys"]) <= {w["key"] for w in writes}
    present = {k.key for k in scan_cache(real_cache.root).keys}
    torch_did = torch_status(arg_answers[call_id("cat_rows", shapes)]["lookups"], present)
    assert torch_did == ("hit" if len(shapes[0]) == 2 else "new-graph"), torch_did
    if len(shapes[0]) == 2:
        assert fv["status"] == "hit", fv
        assert (fv["key"], fv["entry"]) == aot_hit(arg_answers[call_id("cat_rows", shapes)]), fv
        return
    assert proc.returncode == 3 and fv["status"] == "undecided" and fv["why_code"] == "argument-unaccounted", fv
    assert fv["line"].startswith("UNDECIDED: xs[2]=[1,4]: an element of xs"), fv["line"]


@ahead(lambda case, shapes, extra: [Call(case, shapes, case, ("--inputs", extra))])
@pytest.mark.parametrize("case,shapes,extra", [
    ("kw_built_with", [[6, 5], {"flag": True}], "cfgg['n']=4"),
    ("kw_built_with", [[6, 5], {"flag": True}], "cfgg.n=4"),
    ("kw_tensor", [[6, 5], {"bias": [5]}], "cfgg['n']=4"),
    ("kw_tensor", [[6, 5], {"bias": [5]}], "biass=[4]"),
], ids=["item", "attribute", "item-kw", "tensor-kw"])
def test_a_name_no_parameter_has_is_a_keyword_of_kwargs_and_judged_as_one(real_cache, case, shapes, extra):
    """Under ``**kwargs`` a name that is no parameter is the call's keyword, and an item of it
    (``cfgg['n']=4``) that keyword's item: Python puts ``cfgg`` in the dict. torch 2.13 on
    kw_built_with(x, flag=True, cfgg={'n': 4}) fails the guard ``len(kwargs) == 1`` and
    traces again (then hits the built graph); on kw_tensor with ``biass`` it guards no
    length and hits. The cache records neither the keywords nor the guards: undecided,
    each name accounted under the dict, none left unread."""
    rc, body = match_call(real_cache.root, case, shapes, "--inputs", extra)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "kwargs-unrecorded", fv
    name = extra.split("=")[0]
    star = "**kw=" if case == "kw_tensor" else "**kwargs="
    assert star in fv["why"] and f"{name}={extra.split('=', 1)[1]}" in fv["why"], fv["why"]
    if not extra.endswith("]"):  # a tensor no key takes is named unused besides (no key's input)
        assert body["unused"] == [], body["unused"]
