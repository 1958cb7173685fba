"""The recorded answers of torch (tests/data/oracle-answers.json) are this torch's.

test_real_cache.py and test_oracle_suite.py compare ``fxcache match`` with torch's
lookups recorded once (``python -m tests.harness.recorded``) instead of asking torch
again every session. These tests fail when the recording no longer stands for what
torch would answer here: another torch installed, calls added or changed, or a real
cache built otherwise than the recorded one (its writes are how the file names keys
and entries). Each failure says to record again. One recorded call is asked again
live, and must come back the same.
"""

from __future__ import annotations

import pytest

from tests.harness.oracle import call_id
from tests.harness.recorded import build_shape, load, recorded, recorded_calls, stable_form

pytestmark = pytest.mark.torch

_AGAIN = "record torch's answers again: python -m tests.harness.recorded"


def test_the_answers_were_recorded_by_the_installed_torch():
    import torch

    assert load()["torch_version"] == torch.__version__, _AGAIN


def test_every_call_the_tests_ask_is_recorded():
    want = {group: [call_id(*c) for c in calls] for group, calls in recorded_calls().items()}
    assert load()["calls"] == want, _AGAIN


def test_the_session_cache_was_built_as_the_recorded_one(real_cache):
    """Same cases, calls, and writes per call (kind, phase, which key): the stable names
    of the recorded keys and entries name the same files here."""
    assert build_shape(real_cache.summary) == load()["build"], _AGAIN


# A call that hits (no compile: a few seconds) and one that compiles a new graph, as the
# oracle's build asked them (tests.harness.oracle_queries), on copies of the real cache.
_ASKED_AGAIN = {"region_hit": ("same_graph_two_regions", [[40, 3]]), "unbuilt_side": ("branch_on_size", [[16, 3]])}


@pytest.mark.parametrize("name", _ASKED_AGAIN)
def test_torch_answers_a_recorded_call_again_as_recorded(real_cache, oracle_queries, name):
    """Torch asked now, on a copy of this session's real cache, answers what it answered
    when recorded: the same lookups, keys and entries (by the build's write that made
    them, or by order among the new ones), counters, error and writes."""
    case, shapes = _ASKED_AGAIN[name]
    now = oracle_queries[name]["answer"]  # a fork server's child, this session
    assert (now["case"], now["shapes"]) == (case, shapes)
    assert stable_form(now, real_cache.summary) == recorded("real")[call_id(case, shapes)]
