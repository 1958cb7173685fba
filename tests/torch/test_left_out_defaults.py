"""``fxcache match`` against torch's own lookups, in fresh processes (the evaluation's torch
side, as tests/torch/test_made_up_and_params.py), for parameters a call leaves out: an int
left at its literal default that a dynamic=True key takes as a SymInt (``h=2``, ``k=2``: its
guards decide with the default), and a tensor default that is a module-level tensor
(``bias=_ZERO``: not None, and unseen by the cache, so undecided saying so). Families of
tests/harness/evaluation/families_r14.py, built in a temp dir in the background. No verdict
nor key line may be wrong."""

from __future__ import annotations

import pytest

from tests.harness.background import builder, prebuilt
from tests.harness.family_runs import rows_by_note, wrong_lines

pytestmark = pytest.mark.torch

_FAMILIES = ("r14_heads_dyn", "r14_topk_dyn", "r14_tbias_auto")


@builder("left_out_defaults", order=7)
def _built() -> dict[str, dict]:
    from tests.harness.family_runs import evaluated

    return evaluated("left-out-defaults", _FAMILIES)


@pytest.fixture(scope="session")
def left_out_defaults() -> dict[str, dict]:
    return prebuilt("left_out_defaults")


@pytest.mark.parametrize("family", _FAMILIES)
def test_no_verdict_and_no_key_line_is_wrong(left_out_defaults, family):
    assert not wrong_lines(left_out_defaults[family])


def test_an_int_left_at_its_literal_default_decides_the_guards_that_read_it(left_out_defaults):
    heads = rows_by_note(left_out_defaults, "r14_heads_dyn")
    for note in ("longer", "wider"):  # h left at 2: the key's guards on h and on x's sizes hold
        v = heads[note]["verdict"]
        assert (v["grade"], v["reason"]) == ("right", "hit"), v
    v = rows_by_note(left_out_defaults, "r14_topk_dyn")["k left at 2"]["verdict"]  # built with k=3 given
    assert (v["grade"], v["reason"]) == ("right", "hit"), v


def test_a_tensor_default_of_the_module_is_undecided_as_unseen_not_none(left_out_defaults):
    v = rows_by_note(left_out_defaults, "r14_tbias_auto")["left out"]["verdict"]
    assert (v["grade"], v["reason"]) == ("undecided", "tensor-default-unseen"), v
    assert "None (" not in v["fxcache"], v
