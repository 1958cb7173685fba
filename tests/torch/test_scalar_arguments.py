"""``fxcache match`` reads the floats and dtypes of a call (a Python scalar where it lands in the
graph, a float folded beside a symbolic int, a float left at its default, a dtype through the
convert its graph has or lacks), as torch's lookups show.

The cases of ``tests.harness.cases_args`` are in the session's real cache; torch's own lookups
(recorded by ``python -m tests.harness.recorded``) are the judge, as in test_arguments.py.
"""

from __future__ import annotations

import json

import pytest

from tests.harness.match_runs import BOTH, VERDICT, Call, ahead
from tests.helpers import (
    aot_hit,
    assert_match_agrees_with_answer,
    assert_verdict_as_torch,
    call_label,
    match_call,
    torch_status,
)

pytestmark = pytest.mark.torch

# fill_where (dynamic=False, built with its defaults fill=0.0, thresh=0, t=0.5): each scalar
# read off the graph where it lands (scalar_tensor's 0.0, gt.Scalar's 0, div's 0.5).
SCALAR_CALLS = [
    ("fill_where", [[4, 8]]),                                     # hit: every constant the call's
    ("fill_where", [[4, 8], {"fill": -2.0}]),                     # new graph: scalar_tensor(-2.0)
    ("fill_where", [[4, 8], {"thresh": 1}]),                      # new graph: gt.Scalar(x, 1)
    ("fill_where", [[4, 8], {"fill": 0}]),                        # new graph: an int, traced a float
    ("fill_where", [[4, 8], {"t": 1}]),                           # new graph: an int, traced a float
    ("fill_where", [[4, 8], {"thresh": 0.5}]),                    # new graph: gt.Scalar's 0, not 0.5
]
# decay_step / decay_neg (dynamic=None), built with step=1 then step=2: the second key takes
# step as a SymInt, and lr stays a constant folded beside it. Each call is the one after a
# recompile (a first call with step=1, then this one), asked with --after-recompile.
_WARM = {"warm_up": [[[4, 3], {"step": 1}]]}
SYMBOLIC_CALLS = [
    ("decay_step", [[4, 3], {"step": 3}], _WARM),                 # hit: -lr is the graph's -0.1
    ("decay_step", [[4, 3], {"step": 3, "lr": 0.2}], _WARM),      # new graph: -0.2, not -0.1
]
# torch: a hit; the graph tensorifies the scalar and records no compiled frame: not a HIT
# resting on checked parameters
SYMBOLIC_UNDECIDED = [("decay_neg", [[4, 3], {"step": 3}], _WARM)]
# cast_to (dynamic=True), built with its default dtype=torch.float16 (a convert_element_type
# in the graph) and with torch.float32, x's own dtype (.to returns x: no op in that graph);
# cast_through reaches its dtype through an expression, which no graph constant shows.
DTYPE_CALLS = [
    ("cast_to", [[6, 8]]),                                        # hit: the default's key
    ("cast_to", [[6, 8], {"dtype": {"dtype": "float16"}}]),       # hit: the default, given
    ("cast_to", [[6, 8], {"dtype": {"dtype": "bfloat16"}}]),      # new graph: another convert
    ("cast_to", [[6, 8], {"@static": [0]}]),                      # new graph: mark_static keeps dim 0 at 6
]
# Undecided, torch: a hit. float32 is x's own dtype, for which .to makes no op in the key built
# with it, and neither does .to(None), another graph; cast_through's dtype through an expression.
DTYPE_UNDECIDED = [
    ("cast_to", [[6, 8], {"dtype": {"dtype": "float32"}}]),
    ("cast_through", [[6, 8], {"dtype": {"dtype": "float16"}}]),
]
# scale_default (dynamic=None), built with scale left out, then scale=2.0 in the same process:
# the second key takes scale as a tensor. A fresh process's first call specializes the float.
FLOAT_DEFAULT_CALLS = [
    ("scale_default", [[4, 4]]),                                  # hit: the first key, not the tensor one
    ("scale_default", [[4, 4], {"scale": 1.0}]),                  # the same, given
]
# The call after a recompile (a first call with the default, then this one), asked with
# --after-recompile: automatic dynamic takes the changed float as an input, the tensor key.
FLOAT_AFTER_RECOMPILE = [("scale_default", [[4, 4], {"scale": 3.0}], {"warm_up": [[[4, 4]]]})]
# eps_sign / eps_shift (dynamic=True), built with eps=1e-5: the key takes eps as an input. eps_shift
# only adds it (hit, any value); eps_sign tests it in Python (torch: -0.5 traces the else side, a new
# graph; 0.5 the same side, a hit): Dynamo's guard on that test is not in the cache, undecided both.
FLOAT_INPUT_CALLS = [("eps_shift", [[4, 8], {"eps": 0.25}])]
FLOAT_INPUT_UNDECIDED = [("eps_sign", [[4, 8], {"eps": -0.5}]), ("eps_sign", [[4, 8], {"eps": 0.5}])]
# hooked_eps / hooked_size (dynamic=True, torch.compile of a module), built with eps=0.5 and x=[4, 8]:
# forward only adds eps / ignores x's size, and a forward pre-hook registered in the same file tests
# it (torch: -0.5 and 8 rows compile the hook's own graph, a new graph; 0.25 and 3 rows take the
# build's side, a hit). Undecided all: the hook's test is its own frame's guard, in no key.
HOOKED_UNDECIDED = [("hooked_eps", [[4, 8], {"eps": 0.25}]), ("hooked_eps", [[4, 8], {"eps": -0.5}]),
                    ("hooked_size", [[3, 8]]), ("hooked_size", [[8, 9]])]


@BOTH
@pytest.mark.parametrize("case,shapes", SCALAR_CALLS, ids=[call_label(*c) for c in SCALAR_CALLS])
def test_a_python_scalar_is_read_where_it_lands_in_the_graph_and_by_its_type(real_cache, arg_answers, case, shapes):
    """A float fill of torch.where is the constant of the scalar_tensor aten wraps it in; an
    int compared with a tensor is gt.Scalar's, and a float compared where the key was traced
    with an int is read off gt.Scalar by its place (fxcache_core/lookup/float_ops.py); an int
    given where the graph holds a float read from that parameter itself fails Dynamo's type
    guard: each verdict is torch's, and each key looked up as torch looked it up."""
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    given = shapes[1] if len(shapes) > 1 else {}
    looked = answer
    if given == {"fill": 0}:
        # The int fill's AOTAutograd graph is another, but Inductor's graph of it is the
        # float's (its post-grad graph converts the fill): torch, compiling the new key,
        # finds that FX entry. match judges an FX key through the AOTAutograd keys that
        # load it, none of which takes this call: compare the AOTAutograd lookups.
        looked = {**answer, "lookups": [lk for lk in answer["lookups"] if lk["kind"] == "aotautograd"]}
    assert_match_agrees_with_answer(real_cache.root, case, shapes, looked, {w["key"] for w in real_cache.writes(case)})
    v = assert_verdict_as_torch(real_cache.root, case, shapes, answer, case)
    code = {"fill": "float-constant-differs" if given.get("fill") != 0 else "scalar-type-differs",
            "thresh": "baked-value-differs" if given.get("thresh") != 0.5 else "float-op-differs",
            "t": "scalar-type-differs"}.get(next(iter(given), ""))
    assert v["status"] == ("hit" if code is None else "new-graph"), v
    assert code is None or v["why_code"] == code, v


@ahead(lambda case, shapes, **_: [Call(case, shapes, case, ("--after-recompile",))])
@pytest.mark.parametrize("case,shapes,options", SYMBOLIC_CALLS + SYMBOLIC_UNDECIDED,
                         ids=[call_label(*c) for c in SYMBOLIC_CALLS + SYMBOLIC_UNDECIDED])
def test_a_float_folded_beside_a_symbolic_int_is_read_off_the_symbolic_nodes(
        real_cache, arg_answers, case, shapes, options):
    """After a recompile that made step a SymInt, lr's value reaches the graph as the
    constant operand of a node on SymNodes (``-0.1 / sub``): the call after a recompile
    hits where the call's -lr is that constant, and is another graph where it is not, as
    torch did. decay_neg (a minus over the symbolic part) is traced otherwise: torch
    tensorifies the scalar and the key records no compiled frame, so its parameters go
    unchecked and its verdict must say so (the node forms not read: tests/unit/test_sym_floats.py)."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes, options)]
    rc, body = match_call(real_cache.root, case, shapes, "--after-recompile")
    (fv,) = body["verdicts"]["functions"]
    present = {k.key for k in scan_cache(real_cache.root).keys}
    torch_did = torch_status(answer["lookups"], present)
    # Which sizes and numbers changed before the call is not part of it: a key with symbols
    # (or one of static shapes) is looked up after a recompile only for some of those, so a
    # decided lookup is undecided; each key's ``hit`` is what its lookup would be.
    assert fv["status"] in (torch_did, "undecided"), (fv, answer["lookups"])
    if fv["status"] == "undecided":
        assert rc == 3 and fv["why_code"] in ("dynamic-after-recompile-unknown", "static-after-recompile-unknown"), fv
    by_key = {r["key"]: r for r in body["results"]}
    if (case, shapes, options) in SYMBOLIC_UNDECIDED:
        # Torch tensorifies decay_neg's symbolic scalar after the recompile, and that key's
        # entries record no compiled frame: nothing but its inputs is known. step=3 is one
        # of them (a symbol its guards check), so the key's lookup is torch's hit; lr, left
        # out, is never said to be accounted, and the parameters are said to be unchecked.
        assert torch_did == "hit", answer["lookups"]
        key, entry = aot_hit(answer)
        r = by_key[key]
        assert r["hit"] == entry and r["status"] in ("hit", "undecided"), r
        assert not any(p["name"] == "lr" for p in r["params"]) and r["params_unchecked_code"] == "params-unchecked", r
        return
    if torch_did == "hit":
        key, entry = aot_hit(answer)
        r = by_key[key]
        assert r["hit"] == entry, r
        lr = next((p for p in r["params"] if p["name"] == "lr"), None)
        assert lr is None or (lr["status"] == "accounted" and "-0.1 beside a symbol" in lr["detail"]), lr
    else:
        why = [w for r in body["results"] for w in r["reasons"]]
        assert any("-0.1 there, the call gives -0.2" in w for w in why), why


@BOTH
@pytest.mark.parametrize("case,shapes", DTYPE_CALLS, ids=[call_label(*c) for c in DTYPE_CALLS])
def test_a_dtype_is_read_off_the_convert_its_graph_has_or_lacks(real_cache, arg_answers, case, shapes):
    """Each key is looked up as torch looked it up, and the verdict is torch's: a hit
    accounts for dtype (given, or its default torch.float16 read from the source) by the
    dtype the key's graph converts to; another dtype rules each key out, the float32 key
    too (a .to() of another dtype than x's would have left a convert in its graph); a dim
    marked static rules out the keys that have it symbolic."""
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    own = {w["key"] for w in real_cache.writes(case)}
    assert_match_agrees_with_answer(real_cache.root, case, shapes, answer, own)
    v = assert_verdict_as_torch(real_cache.root, case, shapes, answer, case)
    if v["status"] == "hit":
        how = {p["name"]: (p["how"], p["given"]) for p in v["params"]}
        assert how == {"x": ("key-input", True), "dtype": ("baked-constant", len(shapes) > 1)}, v["params"]
    else:
        code = "marked-static-dim-symbolic" if "@static" in shapes[-1] else "dtype-constant-differs"
        assert v["status"] == "new-graph" and v["why_code"] == code, v


@VERDICT
@pytest.mark.parametrize("case,shapes", DTYPE_UNDECIDED, ids=[call_label(*c) for c in DTYPE_UNDECIDED])
def test_a_dtype_through_an_expression_or_no_convert_stays_undecided(real_cache, arg_answers, case, shapes):
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    rc, body = match_call(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "dtype-provenance-unknown", fv
    named = "dtype if x.dim() == 2 else torch.float32" if case == "cast_through" else "given None"
    assert named in fv["line"], fv["line"]
    present = {k.key for k in scan_cache(real_cache.root).keys}
    assert torch_status(arg_answers[call_id(case, shapes)]["lookups"], present) == "hit"


@BOTH
@pytest.mark.parametrize("case,shapes", FLOAT_DEFAULT_CALLS, ids=[call_label(*c) for c in FLOAT_DEFAULT_CALLS])
def test_a_float_left_at_its_default_is_not_taken_as_a_tensor_on_a_first_call(real_cache, arg_answers, case,
                                                                              shapes):
    """The key automatic dynamic compiled with the float as a tensor is never looked up by a
    fresh process's first call, whether the call gives the float or leaves it at its default:
    each key's lookup is torch's (that key is never a hit), and the verdict is torch's hit of
    the static key, or undecided, never another decided answer."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    own = {w["key"] for w in real_cache.writes(case)}
    assert_match_agrees_with_answer(real_cache.root, case, shapes, answer, own)
    rc, body = match_call(real_cache.root, case, shapes)
    present = {k.key for k in scan_cache(real_cache.root).keys}
    assert torch_status(answer["lookups"], present) == "hit"
    (fv,) = body["verdicts"]["functions"]
    assert fv["status"] in ("hit", "undecided"), fv
    tensor_key = [r for r in body["results"] if r["kind"] == "aotautograd" and r["status"] != "hit"]
    assert tensor_key and all(r["status"] in ("no-fit", "undecided") for r in tensor_key), tensor_key


@pytest.mark.parametrize("case,shapes", FLOAT_INPUT_CALLS + FLOAT_INPUT_UNDECIDED,
                         ids=[call_label(*c) for c in FLOAT_INPUT_CALLS + FLOAT_INPUT_UNDECIDED])
def test_a_float_input_is_accounted_only_where_the_source_shows_no_python_test_of_it(
        real_cache, arg_answers, case, shapes):
    """Under dynamic=True the key takes eps as an input (a 0-d float64 tensor), and no guard
    the cache keeps checks its value: where the code only adds it (eps_shift) every value
    takes the key, as torch did; where the code tests it in Python (eps_sign: if eps > 0),
    Dynamo's guard on that test is not in the cache, so the verdict is undecided, naming
    the test, whether torch hit (0.5, the same side) or traced the else side (-0.5)."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    present = {k.key for k in scan_cache(real_cache.root).keys}
    torch_did = torch_status(answer["lookups"], present)
    rc, body = match_call(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    if (case, shapes) in FLOAT_INPUT_CALLS:
        assert torch_did == "hit", answer["lookups"]
        if fv["status"] == "undecided":
            # Inductor's graph of a tensorified float keeps no stack trace of the ops on it:
            # where no op has one, the key records no compiled frame, and its source is not read.
            assert fv["why_code"] == "float-input-tested" and "record no compiled frame" in fv["line"], fv
            return
        assert fv["status"] == "hit" and (fv["key"], fv["entry"]) == aot_hit(answer), fv
        eps = next(p for p in fv["params"] if p["name"] == "eps")
        assert (eps["status"], eps["how"]) == ("accounted", "key-input"), eps
        return
    assert torch_did == ("new-graph" if shapes[-1]["eps"] < 0 else "hit"), answer["lookups"]
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "float-input-tested", fv
    assert "tests it in Python at line" in fv["line"], fv["line"]


@pytest.mark.parametrize("case,shapes,options", FLOAT_AFTER_RECOMPILE,
                         ids=[call_label(*c) for c in FLOAT_AFTER_RECOMPILE])
def test_after_a_recompile_the_key_that_takes_the_float_as_an_input_fits(real_cache, arg_answers, case, shapes,
                                                                        options):
    """After a first call with the default, a call with another scale recompiles with scale an
    input, and torch hits the key built so (its input named L['scale'], a 0-d float64
    tensor). --after-recompile fits that key instead of ruling it out as a specialized
    float: the verdict is torch's hit, or undecided where the key records no compiled frame
    (whether the code tests scale is then not read), never another graph."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes, options)]
    present = {k.key for k in scan_cache(real_cache.root).keys}
    assert torch_status(answer["lookups"], present) == "hit", answer["lookups"]
    rc, body = match_call(real_cache.root, case, shapes, "--after-recompile")
    (fv,) = body["verdicts"]["functions"]
    assert fv["phase"] == "after-recompile" and fv["status"] in ("hit", "undecided"), fv
    key, _ = aot_hit(answer)
    (hit,) = [r for r in body["results"] if r["key"] == key]
    assert hit["fits"] and hit["status"] in ("hit", "undecided"), hit
    if fv["status"] == "hit":
        assert (fv["key"], fv["entry"]) == aot_hit(answer), fv
    else:
        assert fv["why_code"] == "float-input-tested", fv


def _hooked_call(case: str, shapes: list):
    """``fxcache match --json --fn CLASS`` for a call of a hooked module (its forward's
    parameters by name: a module's own signature is ``(*args, **kwargs)``)."""
    from tests.harness.match_runs import Call

    inputs = f"x={json.dumps(shapes[0]).replace(' ', '')}"
    if len(shapes) > 1:
        inputs += "".join(f",{k}={v}" for k, v in shapes[1].items())
    cls = {"hooked_eps": "HookedEps", "hooked_size": "HookedSize"}[case]
    return Call.argv("match", "--json", "--fn", cls, "--dynamic", "true", "--inputs", inputs)


@pytest.mark.parametrize("case,shapes", HOOKED_UNDECIDED, ids=[call_label(*c) for c in HOOKED_UNDECIDED])
def test_a_modules_forward_with_a_hook_registered_beside_it_is_undecided(real_cache, arg_answers, case, shapes):
    """torch.compile of a module runs its forward pre-hook as a frame of its own: the hook's
    test (eps < 0, x.shape[0] > 5) is that frame's guard, and on the side the build took it
    made no graph, so no key shows it. Torch hits forward's key either way, and on the other
    side also compiles and writes the hook's graph. fxcache reads the hook's registration in
    forward's file (tests/harness/cases_hooks.py), so the verdict is undecided for both
    sides, naming that line, never the HIT forward's key alone would give."""
    from tests.harness.match_runs import match_call as served
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    other_side = (shapes[-1].get("eps", 0.5) < 0) if len(shapes) > 1 else shapes[0][0] > 5
    wrote = [w for ws in answer["writes"] for w in (ws if isinstance(ws, list) else [ws])]
    assert bool(wrote) == other_side, answer["writes"]  # the hook's own graph, on its other side
    assert aot_hit(answer) is not None, answer["lookups"]  # forward's own key hits, both sides
    proc = served(real_cache.root, _hooked_call(case, shapes))
    (fv,) = json.loads(proc.stdout)["verdicts"]["functions"]
    assert proc.returncode == 3 and fv["status"] == "undecided", fv
    assert fv["why_code"] == "module-hooks-registered" and "cases_hooks.py:" in fv["line"], fv
    assert "register_forward_pre_hook" in fv["line"], fv
