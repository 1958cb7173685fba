"""``fxcache match`` against torch's own lookups, in fresh processes (the evaluation's torch
side, as tests/torch/test_left_out_defaults.py), given the TORCH_TRACE of the run that built
the cache (``fxcache explain TRACE``, as the evaluation's ``--build-traces`` does): the state
a key was traced under, which the cache alone does not record. A module's attribute the
call states at the value Dynamo guarded (``self.training=False`` for a module built in eval
mode, ``self.use_act=True``), or that no guard read, accounts for it; another value stays
undecided where nothing else decides (a batch norm in training mode); the grad mode and the
default dtype the trace recorded decide, another value being another key (torch hashes them
into it; autocast, hashed the same way, is checked by the evaluation's r14 families).
Families of tests/harness/evaluation/families_r14.py, built in a temp dir in the
background, graded with the build's traces and without (the cache alone, where the same
calls stay undecided). No verdict nor key line may be wrong."""

from __future__ import annotations

import pytest

from tests.harness.background import builder, prebuilt
from tests.harness.family_runs import rows_by_note, wrong_lines

pytestmark = pytest.mark.torch

_FAMILIES = ("r14_gate_grad", "r14_flags_attr", "r14_conv_cl", "r14_ones_auto")


@builder("recorded_state", order=7)
def _built() -> dict[str, dict[str, dict]]:
    from tests.harness.background import build_dir
    from tests.harness.evaluation.families import FAMILIES
    from tests.harness.evaluation.run import evaluate_family
    from tests.harness.family_runs import shared_torch

    workdir = build_dir("recorded-state")
    out: dict[str, dict[str, dict]] = {"traced": {}, "alone": {}}
    for f in _FAMILIES:  # built once, traced; then fxcache alone is asked again on the same answers
        out["traced"][f] = evaluate_family(shared_torch(), FAMILIES[f], workdir, rebuild=True, log=lambda _m: None,
                                           build_traces=True)
        out["alone"][f] = evaluate_family(shared_torch(), FAMILIES[f], workdir, rebuild=False, log=lambda _m: None)
    return out


@pytest.fixture(scope="session")
def recorded_state() -> dict[str, dict[str, dict]]:
    return prebuilt("recorded_state")


def _verdict(results: dict[str, dict], family: str, note: str) -> dict:
    return rows_by_note(results, family)[note]["verdict"]


@pytest.mark.parametrize("how", ["traced", "alone"])
@pytest.mark.parametrize("family", _FAMILIES)
def test_no_verdict_and_no_key_line_is_wrong(recorded_state, family, how):
    assert recorded_state[how][family]["build_traces"] == (1 if how == "traced" else 0)
    assert not wrong_lines(recorded_state[how][family])


def test_a_module_attribute_at_the_value_dynamo_guarded_is_accounted(recorded_state):
    traced, alone = recorded_state["traced"], recorded_state["alone"]
    v = _verdict(traced, "r14_flags_attr", "reps=1 stated")  # self.reps=1, self.use_act=True: both guarded so
    assert (v["grade"], v["reason"]) == ("right", "hit"), v
    v = _verdict(traced, "r14_gate_grad", "no_grad as built")
    assert (v["grade"], v["reason"]) == ("right", "hit"), v  # the grad mode as the trace recorded it
    assert _verdict(alone, "r14_gate_grad", "no_grad as built")["grade"] == "undecided"  # residual, the grad mode
    # The cache alone decides it too, by another rule: use_act is only tested, and the graph's
    # ops show the side taken (the branch rule); both agree with torch.
    v = _verdict(alone, "r14_flags_attr", "reps=1 stated")
    assert (v["grade"], v["reason"]) == ("right", "hit"), v


def test_another_attribute_value_falls_through_and_stays_undecided_where_nothing_decides(recorded_state):
    v = _verdict(recorded_state["traced"], "r14_conv_cl", "training mode")  # the batch norm's training: False there
    assert (v["grade"], v["reason"]) == ("undecided", "module-state-differs-from-record"), v
    assert "self.training=False" in v["fxcache"], v
    v = _verdict(recorded_state["traced"], "r14_flags_attr", "use_act=False")  # guarded True: torch traces again
    assert v["grade"] == "right" or v["reason"] == "module-state-differs-from-record", v


def test_the_global_state_the_trace_recorded_decides(recorded_state):
    traced, alone = recorded_state["traced"], recorded_state["alone"]
    for family, note in (("r14_gate_grad", "grad enabled"), ("r14_ones_auto", "default dtype float64, float32 input")):
        v = _verdict(traced, family, note)  # hashed into the AOTAutograd key: another key, not in the cache
        assert (v["grade"], v["reason"]) == ("right", "state-differs-from-record"), (family, v)
        assert _verdict(alone, family, note)["grade"] == "undecided", (family, note)
    v = _verdict(traced, "r14_ones_auto", "default dtype float32 stated")
    assert (v["grade"], v["reason"]) == ("right", "hit"), v
    assert _verdict(alone, "r14_ones_auto", "default dtype float32 stated")["reason"] == "default-dtype-unrecorded"
