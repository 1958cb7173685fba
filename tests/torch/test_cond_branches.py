"""``fxcache match`` against torch's own lookups, in fresh processes (the evaluation's torch
side, as tests/torch/test_made_up_and_params.py), for the branch rule on a conditional
expression (``return y + x if residual else y``) and on a module's attribute the call states
(``self.use_act=False`` against ``F.gelu(y) if self.use_act else y``, ``if self.double:``),
on an operand of ``and`` (``if flag and x.dim() > 1:``), and on ``if self.training: y = y *
self.keep`` after a stock layer, whose body makes an op whenever it runs.
Families of tests/harness/evaluation/families_r15d.py, built in a temp dir in the background.
No verdict nor key line may be wrong; the rule decides where an op from the expression's line
shows its side, and leaves the rest UNDECIDED with its codes: a key built with the bare side
(no op says nothing), and another expression whose side makes the same op."""

from __future__ import annotations

import pytest

from tests.harness.background import builder, prebuilt
from tests.harness.family_runs import rows_by_note, wrong_lines

pytestmark = pytest.mark.torch

_FAMILIES = ("r15d_resid_auto", "r15d_resid_off_auto", "r15d_two_sides_auto", "r15d_flagged_attr",
             "r15d_gated_auto", "r15d_train_scale")


@builder("cond_branches", order=7)
def _built() -> dict[str, dict]:
    from tests.harness.family_runs import evaluated

    return evaluated("cond-branches", _FAMILIES)


@pytest.fixture(scope="session")
def cond_branches() -> dict[str, dict]:
    return prebuilt("cond_branches")


@pytest.mark.parametrize("family", _FAMILIES)
def test_no_verdict_and_no_key_line_is_wrong(cond_branches, family):
    assert not wrong_lines(cond_branches[family])


def _verdict(results: dict, family: str, note: str) -> tuple[str, str, str]:
    v = rows_by_note(results, family)[note]["verdict"]
    return v["grade"], v["reason"], v["torch"].split(" ")[0]


def test_an_op_from_the_expression_s_line_decides_the_parameter(cond_branches):
    assert _verdict(cond_branches, "r15d_resid_auto", "residual=False") == ("right", "branch-not-taken", "NEW")
    assert _verdict(cond_branches, "r15d_resid_auto", "residual=True given") == ("right", "hit", "HIT")


def test_a_key_built_with_the_bare_side_stays_undecided(cond_branches):
    assert _verdict(cond_branches, "r15d_resid_off_auto", "residual=True") == ("undecided", "branch-unknown", "NEW")


def test_a_stated_attribute_the_code_only_tests_is_decided_by_the_side_the_graph_shows(cond_branches):
    for note in ("use_act=False", "double=False"):  # a conditional expression, an if statement
        assert _verdict(cond_branches, "r15d_flagged_attr", note) == ("right", "branch-not-taken", "NEW")
    assert _verdict(cond_branches, "r15d_flagged_attr", "both stated as built") == ("right", "hit", "HIT")


def test_another_expression_whose_side_makes_the_same_op_leaves_the_key_undecided(cond_branches):
    """Torch looks the key built with a=True up for a=False, b=True: one graph."""
    assert _verdict(cond_branches, "r15d_two_sides_auto", "a=False, b=True: the same ops") == \
        ("undecided", "branch-may-be-made-up", "HIT")


def test_an_operand_of_and_is_decided_where_the_body_ran(cond_branches):
    assert _verdict(cond_branches, "r15d_gated_auto", "flag=False") == ("right", "branch-not-taken", "NEW")
    assert _verdict(cond_branches, "r15d_gated_auto", "flag=True as built") == ("right", "hit", "HIT")


def test_a_body_that_makes_an_op_whenever_it_runs_shows_the_eval_mode_the_key_was_built_in(cond_branches):
    assert _verdict(cond_branches, "r15d_train_scale", "training mode") == ("right", "branch-not-taken", "NEW")
    assert _verdict(cond_branches, "r15d_train_scale", "eval stated") == ("right", "hit", "HIT")
