"""The oracle's fork server answers as a fresh process does.

The oracle suites ask a :class:`tests.harness.oracle.ForkServer` (one torch import, a
forked child per query). Here the answers of a server of its own, asked on a build
thread (``tests.harness.oracle_queries``, whose answers test_torch_oracle.py reads too),
to three queries on copies of the real cache: a hit with its backward, a call that
compiles and writes, and a call torch refuses. Each must give the same lookups,
counters, error and writes as ``python -m tests.harness.oracle`` started afresh
(recorded with this torch by ``tests.harness.recorded``, checked by
test_recorded_answers.py).
"""

from __future__ import annotations

import pytest

from tests.harness.oracle_queries import EQUIVALENCE_QUERIES

pytestmark = pytest.mark.torch


@pytest.fixture(scope="session")
def fresh_process_answers() -> dict[str, dict]:
    """Torch's answers to the equivalence queries, each from a fresh ``python -m
    tests.harness.oracle`` on its own copy of a real cache, as recorded
    (``tests.harness.recorded``, checked by test_recorded_answers.py), in stable names."""
    from tests.harness.recorded import recorded

    return recorded("fresh")


def test_the_fork_server_answers_as_a_fresh_process_does(real_cache, oracle_queries, fresh_process_answers):
    """Keys and entries compare by the build's write that made them, or by their order
    among the new ones. Entry names of writes (hashes of the pickled entry) differ
    between the two runs, which write into different copies, so writes compare by kind,
    key and phase."""
    from tests.harness.oracle import call_id
    from tests.harness.recorded import stable_form

    def without_entries(run: dict) -> dict:
        return {**run, "writes": [{**w, "entry": None} for w in run["writes"]]}

    served = [oracle_queries[name]["answer"] for name in ("train_hit", "unbuilt_side", "refused")]
    for (case, shapes), got in zip(EQUIVALENCE_QUERIES, served, strict=True):
        assert (got["case"], got["shapes"]) == (case, shapes)
        want = fresh_process_answers[call_id(case, shapes)]
        assert without_entries(stable_form(got, real_cache.summary)) == without_entries(want), case
    hit, compiled, refused = served
    assert len({r["pid"] for r in (hit, compiled, refused)}) == 3  # a child forked for each query
    assert hit["lookups"][0]["hit"] and not hit["writes"]
    assert compiled["writes"] and refused["error"] is not None and not refused["lookups"]
    # The child wrote into the cache dir it was given: asked again, torch hits there.
    again = oracle_queries["unbuilt_side_again"]
    assert again["cache"] == oracle_queries["unbuilt_side"]["cache"]
    assert again["answer"]["lookups"][0]["hit"] and not again["answer"]["writes"]
