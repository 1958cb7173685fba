"""``fxcache match`` reads an int that slices a module's layers, and an int the code only
branches on, as torch's lookups show.

The cases of ``tests.harness.cases_slices`` (``layer_stack``: three ``Linear`` layers run
``self.layers[:depth]``, built with depth 2 and 3; ``gapped_stack``: a ``ReLU`` between two
of them) and ``flags`` of ``tests.harness.cases_args`` are in the session's real cache.
For each call torch's own lookups (a fresh process's first call on a copy of the cache,
recorded by ``python -m tests.harness.recorded``) are the judge: where the keys' inputs
show the call runs fewer layers than a key applied, match says what torch did; at or past
a key's count (a layer without parameters makes no input; the list may end there), the
verdict is UNDECIDED, naming the slice, whatever torch did.
"""

from __future__ import annotations

import json

import pytest

from tests.harness.match_runs import Call, ahead, match_call
from tests.harness.oracle import call_id
from tests.helpers import assert_verdict_as_torch, run_fxcache, torch_status

pytestmark = pytest.mark.torch

# (case, call description: the tensor, then a dict of keyword values).
SLICE_CALLS = [
    ("layer_stack", [[4, 8], {"depth": 1}]),         # new graph: one layer, where the keys have 2 and 3
    ("layer_stack", [[4, 8], {"depth": 0}]),         # new graph: no layer
]
# At or past a key's count nothing is exact: the depth-2 key applied at least two layers (a
# third without parameters would make no input; another instance of the class could make
# the depth-3 key), and nothing shows whether a fourth exists (torch: a hit for each, as
# the list has three); gapped_stack's keys take layers 0 and 0, 2 (the ReLU has no
# parameters), so its depth-2 key may have applied two (torch: depth=1 is another graph,
# the default a hit).
SLICE_UNDECIDED = [
    ("layer_stack", [[4, 8]]),
    ("layer_stack", [[4, 8], {"depth": 2}]),
    ("layer_stack", [[4, 8], {"depth": 3}]),
    ("layer_stack", [[4, 8], {"depth": 5}]),
    ("gapped_stack", [[4, 8], {"depth": 1}]),
    ("gapped_stack", [[4, 8]]),
]
# flags (dynamic=None): an int given for the bool clip, which the code only tests (`if clip:`):
# Python's truth of the int is the side of the if, read off the keys' graphs as for a bool.
BRANCH_INT_CALLS = [
    ("flags", [[8, 16], {"clip": 0}]),                          # hit: the defaults' key
    ("flags", [[8, 16], {"clip": 1, "act": "gelu"}]),           # hit: the key built with clip=True
    ("flags", [[8, 16], {"clip": 2}]),                          # new graph: the clamp, with act='relu'
]

_CLASSES = {"layer_stack": "LayerStack", "gapped_stack": "GappedStack"}


def _call(case: str, shapes: list) -> Call:
    """``fxcache match --json --fn CLASS`` for a call of a slice case: its tensor as forward
    names it (``x``; the module's own signature is ``*args``), ``--inputs depth=N``."""
    given = [a for n, v in (shapes[1] if len(shapes) > 1 else {}).items() for a in ("--inputs", f"{n}={v!r}")]
    return Call.argv("match", "--json", "--fn", _CLASSES[case], "--dynamic", "none",
                     "--shapes", "x=" + json.dumps(shapes[0]).replace(" ", ""), *given)


# The runs each test makes, run ahead on the build threads (tests.harness.match_runs).
_SLICE = ahead(lambda case, shapes: [_call(case, shapes)])


def _match(root, case: str, shapes: list) -> tuple[int, dict]:
    """:func:`_call`'s run: its exit code and the function's verdict."""
    proc = match_call(root, _call(case, shapes))
    body = json.loads(proc.stdout)
    assert proc.returncode == body["verdicts"]["exit_code"], proc.stderr
    (fv,) = body["verdicts"]["functions"]
    return proc.returncode, fv


def _torch(root, answer: dict) -> str:
    from fxcache_core.cache.scan import scan_cache

    assert answer["error"] is None, answer["error"]
    return torch_status(answer["lookups"], {k.key for k in scan_cache(root).keys})


@_SLICE
@pytest.mark.parametrize("case,shapes", SLICE_CALLS, ids=[call_id(*c[:2]) for c in SLICE_CALLS])
def test_the_layers_a_key_applied_decide_an_int_that_slices_them(real_cache, arg_answers, case, shapes):
    """A depth below the count of layers every key's inputs show is another graph."""
    _, fv = _match(real_cache.root, case, shapes)
    want = _torch(real_cache.root, arg_answers[call_id(case, shapes)])
    assert fv["status"] == want == "new-graph", (want, fv)
    assert fv["why_code"] == "slice-length-differs", fv


@_SLICE
@pytest.mark.parametrize("case,shapes", SLICE_UNDECIDED, ids=[call_id(*c[:2]) for c in SLICE_UNDECIDED])
def test_a_count_the_inputs_do_not_pin_leaves_the_verdict_undecided(real_cache, arg_answers, case, shapes):
    """Where the list may end at the key's count, or a layer makes no input, the verdict is
    undecided, naming the slice; torch answered either way (recorded, shown)."""
    rc, fv = _match(real_cache.root, case, shapes)
    assert rc == 3 and fv["status"] == "undecided" and "slices self.layers" in fv["line"], fv
    want = {"layer_stack": "hit", "gapped_stack": "new-graph" if len(shapes) > 1 else "hit"}[case]
    assert _torch(real_cache.root, arg_answers[call_id(case, shapes)]) == want


@ahead(lambda case, shapes: [Call(case, shapes, case)])
@pytest.mark.parametrize("case,shapes", BRANCH_INT_CALLS, ids=[call_id(*c[:2]) for c in BRANCH_INT_CALLS])
def test_an_int_the_code_only_branches_on_is_read_by_the_side_its_graph_took(real_cache, arg_answers, case,
                                                                          shapes):
    v = assert_verdict_as_torch(real_cache.root, case, shapes, arg_answers[call_id(case, shapes)], case)
    if v["status"] == "hit":
        assert {p["name"]: p["how"] for p in v["params"]}["clip"] == "branch", v
    else:
        assert v["why_code"] == "branch-not-taken", v


@pytest.mark.parametrize("x,depth", [([4, 8], 1), ([5, 8], 2)], ids=["ruled-out-by-depth", "ruled-out-by-size"])
def test_a_depth_the_function_takes_is_never_named_unused(real_cache, x, depth):
    """depth=1 rules every LayerStack key out by the layers it applied; x=[5,8] rules them out
    by a static size before depth is read. Either way depth is the function's parameter,
    judged or not needed: no "no key takes depth" warning, in the JSON's ``unused`` or in
    the text."""
    args = ("--fn", "LayerStack", "--dynamic", "none", "--shapes", "x=" + json.dumps(x).replace(" ", ""),
            "--inputs", f"depth={depth}")
    proc = run_fxcache("--cache-dir", str(real_cache.root), "match", "--json", *args)
    body = json.loads(proc.stdout)
    assert proc.returncode == 1 and body["unused"] == [], (proc.returncode, body["unused"])
    (fv,) = body["verdicts"]["functions"]
    assert fv["status"] == "new-graph", fv
    text = run_fxcache("--cache-dir", str(real_cache.root), "match", *args)
    assert text.returncode == 1 and "warning" not in text.stdout + text.stderr, text.stdout + text.stderr
