"""``fxcache match`` on the global state of a call: the grad mode and each input's
``requires_grad`` read off a training entry, inference mode, and the state the cache records
nowhere (autocast, the default dtype), as torch's lookups show.

The cases of ``tests.harness.cases_args`` are in the session's real cache; torch's own lookups
(recorded by ``python -m tests.harness.recorded``) are the judge, as in test_arguments.py.
"""

from __future__ import annotations

import json

import pytest

from tests.harness.match_runs import VERDICT
from tests.helpers import (
    assert_verdict_as_torch,
    call_label,
    match_call,
    run_fxcache,
    torch_status,
)

pytestmark = pytest.mark.torch

# grad_mix (dynamic=True), built with grad enabled and w requiring grad: a training graph.
# The grad mode and each input's requires_grad are hashed into the AOTAutograd key; the
# entry records its backward (so grad was enabled) and which input required grad. Each call
# says both, as a user who knows how the cache was built would not need to.
_GRAD = "torch.is_grad_enabled()"
GRAD_CALLS = [
    ("grad_mix", [[6, 8], [8, 8], {_GRAD: True, "w.requires_grad": True}]),   # hit: as built, another size
    ("grad_mix", [[6, 8], [8, 8], {_GRAD: True, "w.requires_grad": False}]),  # new graph: requires_grad hashed
    ("grad_mix", [[6, 8], [8, 8], {_GRAD: False, "w.requires_grad": True}]),  # new graph: grad mode hashed
]
# regroup's key (no input requires grad) has no backward: compiled with grad enabled (as it
# was: torch hits) or under no_grad, the cache does not record which.
GRAD_UNDECIDED = [("regroup", [[4, 12], 3, {_GRAD: True}])]
# grad_off_mlp's first key has no backward, though w required grad and mm -> relu -> mul
# compute the output from it: compiled under no_grad (fxcache_core/lookup/grad_paths.py). Its
# second key (grad on, w not requiring grad) is ruled out by requires_grad.
GRAD_OFF_CALLS = [
    ("grad_off_mlp", [[4, 8], [8, 4], {_GRAD: False, "w.requires_grad": True}]),  # hit: as built
    ("grad_off_mlp", [[4, 8], [8, 4], {_GRAD: True, "w.requires_grad": True}]),  # new graph: a training graph
]
# gate_mlp's key has no backward with grad on and w requiring grad (a comparison cuts the
# output from w): the graph shows no path that carries grad, and the grad mode stays undecided.
GRAD_OFF_UNDECIDED = [("gate_mlp", [[4, 8], [8, 4], {_GRAD: True, "w.requires_grad": True}])]
# Global state beside the grad mode (fxcache_core/lookup/global_state.py): inference mode
# turns grad off, which the training entry shows it was not compiled with; autocast and the
# default dtype are hashed into the keys and recorded nowhere in the cache: undecided, whether
# torch hits (as built) or not.
STATE_CALLS = [
    ("grad_mix", [[6, 8], [8, 8], {"torch.is_inference_mode_enabled()": True, "w.requires_grad": True}]),  # new graph
]
STATE_UNDECIDED = [
    ("grad_mix", [[6, 8], [8, 8], {_GRAD: True, "w.requires_grad": True, "torch.is_autocast_enabled()": False}]),
    ("grad_mix", [[6, 8], [8, 8], {_GRAD: True, "w.requires_grad": True, "torch.is_autocast_enabled()": True}]),
    ("grad_mix", [[6, 8], [8, 8], {_GRAD: True, "w.requires_grad": True,
                                   "torch.get_default_dtype()": {"dtype": "float64"}}]),
]


@VERDICT
@pytest.mark.parametrize("case,shapes", GRAD_CALLS, ids=[call_label(*c) for c in GRAD_CALLS])
def test_grad_mode_and_requires_grad_are_read_off_the_training_entry(real_cache, arg_answers, case, shapes):
    """A call that says its grad mode and whether the weight requires grad: the verdict is
    torch's, from what the AOTAutograd entry records (its backward: compiled with grad
    enabled; which input required grad), never a hit that ignored either."""
    from tests.harness.oracle import call_id

    v = assert_verdict_as_torch(real_cache.root, case, shapes, arg_answers[call_id(case, shapes)], case)
    said = shapes[-1]
    if v["status"] == "hit":
        how = {p["name"]: p["how"] for p in v["params"]}
        assert how.get(_GRAD) == "grad-mode" and how.get("w.requires_grad") == "requires-grad", v["params"]
    else:
        assert v["status"] == "new-graph", v
        want = "requires-grad-differs" if not said["w.requires_grad"] else "grad-mode-differs"
        assert want in v["line"] or v["why_code"] == want, v


@VERDICT
@pytest.mark.parametrize("case,shapes", GRAD_UNDECIDED, ids=[call_label(*c) for c in GRAD_UNDECIDED])
def test_grad_mode_given_for_an_entry_without_backward_is_undecided(real_cache, arg_answers, case, shapes):
    """An inference entry was compiled under no_grad, or with grad enabled and nothing that
    needed a backward: the grad mode given is undecided, naming it, though torch hits."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    rc, body = match_call(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "grad-mode-unrecorded", fv
    present = {k.key for k in scan_cache(real_cache.root).keys}
    assert torch_status(arg_answers[call_id(case, shapes)]["lookups"], present) == "hit"


@VERDICT
@pytest.mark.parametrize("case,shapes", GRAD_OFF_CALLS, ids=[call_label(*c) for c in GRAD_OFF_CALLS])
def test_an_entry_without_backward_whose_graph_carries_grad_was_compiled_with_grad_off(real_cache, arg_answers,
                                                                                     case, shapes):
    """An inference entry whose graph computes its output from an input that required grad,
    by ops that carry grad: grad was off when it was compiled, and the verdict is torch's."""
    from tests.harness.oracle import call_id

    v = assert_verdict_as_torch(real_cache.root, case, shapes, arg_answers[call_id(case, shapes)], case)
    if shapes[-1][_GRAD]:
        assert v["status"] == "new-graph", v
    else:
        assert v["status"] == "hit" and {p["name"]: p["how"] for p in v["params"]}.get(_GRAD) == "grad-mode-off", v


@VERDICT
@pytest.mark.parametrize("case,shapes", GRAD_OFF_UNDECIDED, ids=[call_label(*c) for c in GRAD_OFF_UNDECIDED])
def test_an_entry_without_backward_whose_graph_cuts_grad_stays_undecided(real_cache, arg_answers, case, shapes):
    """No backward, an input that required grad, and grad on: the output is cut from the input,
    which the graph shows no path that carries grad for: undecided, though torch hits."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    rc, body = match_call(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "grad-mode-unrecorded", fv
    present = {k.key for k in scan_cache(real_cache.root).keys}
    assert torch_status(arg_answers[call_id(case, shapes)]["lookups"], present) == "hit"


@VERDICT
@pytest.mark.parametrize("case,shapes", STATE_CALLS, ids=[call_label(*c) for c in STATE_CALLS])
def test_inference_mode_turns_grad_off_and_a_training_entry_is_another_key(real_cache, arg_answers, case, shapes):
    """A call under torch.inference_mode() runs with grad off, which AOTAutograd hashes: the
    training entry (it has a backward) is not torch's, and the verdict is torch's new graph,
    naming the grad mode."""
    from tests.harness.oracle import call_id

    v = assert_verdict_as_torch(real_cache.root, case, shapes, arg_answers[call_id(case, shapes)], case)
    assert v["status"] == "new-graph", v
    assert "grad-mode-differs" in v["line"] or v["why_code"] == "grad-mode-differs", v


@VERDICT
@pytest.mark.parametrize("case,shapes", STATE_UNDECIDED, ids=[call_label(*c) for c in STATE_UNDECIDED])
def test_autocast_or_the_default_dtype_given_is_undecided_whatever_torch_does(real_cache, arg_answers, case,
                                                                              shapes):
    """Autocast and the default dtype are hashed into the keys and recorded nowhere in the
    cache: given, the verdict is undecided, naming the state, whether torch hit (the value
    the key was compiled with) or looked up another key."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    rc, body = match_call(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided", fv
    assert fv["why_code"] in ("autocast-unrecorded", "default-dtype-unrecorded"), fv
    as_built = shapes[-1].get("torch.is_autocast_enabled()") is False  # the build's state, said
    present = {k.key for k in scan_cache(real_cache.root).keys}
    assert torch_status(arg_answers[call_id(case, shapes)]["lookups"], present) == ("hit" if as_built else "new-graph")


def test_a_new_graph_a_python_argument_causes_names_it_not_the_static_sizes(real_cache):
    """shift_kw (dynamic=None) was compiled once, x=[4,4] not requiring grad: a first call
    with those sizes and x requiring grad is a new graph because of requires_grad (hashed
    into the key), which the headline names with its value, not as static sizes never
    compiled."""
    proc = run_fxcache("--cache-dir", str(real_cache.root), "match", "--json", "--fn", "shift_kw", "--dynamic", "none",
                       "--shapes", "x=[4,4]:requires_grad=True")
    (fv,) = json.loads(proc.stdout)["verdicts"]["functions"]
    assert proc.returncode == 1 and fv["status"] == "new-graph", fv
    assert fv["line"].startswith("NEW GRAPH: x.requires_grad=True was never compiled: key "), fv["line"]
    assert fv["why_code"] == "requires-grad-differs" and "static" not in fv["line"], fv
