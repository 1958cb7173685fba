"""The oracle's fork server answers as a fresh process does.

The oracle suites ask a :class:`tests.harness.oracle.ForkServer` (one torch import, a
forked child per query). Here a server of its own, started on a build thread (a
background build beside the torch tier's other tests), answers three queries on copies
of the real cache: a hit with its backward, a call that compiles and writes, and a call
torch refuses. Each must give the same lookups, counters, error and writes as ``python
-m tests.harness.oracle`` started afresh (recorded with this torch by
``tests.harness.recorded``, checked by test_recorded_answers.py).
"""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from tests.harness.background import builder, prebuilt

pytestmark = pytest.mark.torch

EQUIVALENCE_QUERIES = [("train_mlp", [[5, 4], [5, 1]]), ("branch_on_size", [[16, 3]]),
                       ("mark_dynamic_range", [[100, 3]])]


@builder("fork_server_answers", needs=("real_cache",), order=7)
def _fork_server_answers() -> dict[str, Any]:
    """A fork server's answers to :data:`EQUIVALENCE_QUERIES`, each on its own copy of the
    real cache, then the second query asked again on the copy it wrote into."""
    from tests.harness.background import build_dir
    from tests.harness.oracle import ForkServer
    from tests.harness.recorded import stable_form

    real = prebuilt("real_cache")
    base = build_dir("fork-server")
    server = ForkServer()
    try:
        runs = []
        for n, (case, shapes) in enumerate(EQUIVALENCE_QUERIES):
            served = base / f"served{n}"
            shutil.copytree(real.root, served, symlinks=True)
            got = server.lookups(served, case, shapes)
            runs.append({"raw": got, "stable": stable_form(got, real.summary)})
        again = server.lookups(base / "served1", "branch_on_size", [[16, 3]])
    finally:
        server.close()
    return {"runs": runs, "again": again}


@pytest.fixture(scope="session")
def fork_server_answers() -> dict[str, Any]:
    return prebuilt("fork_server_answers")


@pytest.fixture(scope="session")
def fresh_process_answers() -> dict[str, dict]:
    """Torch's answers to the equivalence queries, each from a fresh ``python -m
    tests.harness.oracle`` on its own copy of a real cache, as recorded
    (``tests.harness.recorded``, checked by test_recorded_answers.py), in stable names."""
    from tests.harness.recorded import recorded

    return recorded("fresh")


def test_the_fork_server_answers_as_a_fresh_process_does(fork_server_answers, fresh_process_answers):
    """Keys and entries compare by the build's write that made them, or by their order
    among the new ones. Entry names of writes (hashes of the pickled entry) differ
    between the two runs, which write into different copies, so writes compare by kind,
    key and phase."""
    from tests.harness.oracle import call_id

    def without_entries(run: dict) -> dict:
        return {**run, "writes": [{**w, "entry": None} for w in run["writes"]]}

    built = fork_server_answers
    for (case, shapes), run in zip(EQUIVALENCE_QUERIES, built["runs"], strict=True):
        want = fresh_process_answers[call_id(case, shapes)]
        assert without_entries(run["stable"]) == without_entries(want), case
    hit, compiled, refused = (r["raw"] for r in built["runs"])
    assert len({r["pid"] for r in (hit, compiled, refused)}) == 3  # a child forked for each query
    assert hit["lookups"][0]["hit"] and not hit["writes"]
    assert compiled["writes"] and refused["error"] is not None and not refused["lookups"]
    # The child wrote into the cache dir it was given: asked again, torch hits there.
    again = built["again"]
    assert again["lookups"][0]["hit"] and not again["writes"]
