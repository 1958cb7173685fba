"""``fxcache match`` against torch's own lookups, in fresh processes (the evaluation's torch
side, tests/harness/family_runs.py), on a cache this module builds in a temp dir with the
trace of its build explained: a one-layer OLMo2 causal LM compiled whole under dynamic=True
with ``logits_to_keep=2`` (tests/harness/evaluation/families_r15hf.py), whose traced guard on
the wrapper's ``**kwargs`` relates that int to the sequence length. The guard is evaluated
with the call's values: a call that passes it hits; none is left undecided for a guard
fxcache does not read. Built in the background (one fork server for the session's family
builds)."""

from __future__ import annotations

import pytest

from tests.harness.background import builder, prebuilt
from tests.harness.family_runs import rows_by_note, wrong_lines

pytestmark = pytest.mark.torch

_FAMILY = "r15_olmo2_keep_dyn"


@builder("kwargs_sizes", order=7)
def _built() -> dict[str, dict]:
    from tests.harness.background import build_dir
    from tests.harness.evaluation.families import FAMILIES
    from tests.harness.evaluation.run import evaluate_family
    from tests.harness.family_runs import shared_torch

    return {_FAMILY: evaluate_family(shared_torch(), FAMILIES[_FAMILY], build_dir("kwargs-sizes"), rebuild=True,
                                     build_traces=True, log=lambda _m: None)}


@pytest.fixture(scope="session")
def kwargs_sizes() -> dict[str, dict]:
    return prebuilt("kwargs_sizes")


def test_no_verdict_and_no_key_line_is_wrong(kwargs_sizes):
    assert kwargs_sizes[_FAMILY]["build_traces"] == 1
    assert not wrong_lines(kwargs_sizes[_FAMILY])


def test_an_int_keyword_that_passes_the_traced_size_guard_hits(kwargs_sizes):
    v = rows_by_note(kwargs_sizes, _FAMILY)["logits_to_keep=3"]["verdict"]
    assert (v["grade"], v["reason"]) == ("right", "hit"), v


def test_no_call_is_left_to_a_kwargs_guard_fxcache_does_not_read(kwargs_sizes):
    rows = rows_by_note(kwargs_sizes, _FAMILY)
    assert len(rows) == 3
    for note, row in rows.items():
        assert row["verdict"]["reason"] != "kwargs-guard-unread", (note, row["verdict"])
