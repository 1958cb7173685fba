"""A graph break at a test on the data: which frame resumed after it a call runs is the
data's choice (fxcache_core/lookup/resume_sides.py), as torch's lookups show.

``branch_on_input`` (tests/harness/evaluation/fns_r14fg.py, ``if x.sum() > 0:``) compiled
with ``dynamic=True`` on an x whose sum is positive: its first frame (the sum) and the frame
resumed on the positive side, which takes x itself. Torch is asked in fresh processes
(tests/harness/family_runs.py) for an x whose sum is positive (the same side: the resume
key hits) and one whose sum is negative (the other side: another resume frame of the same
name, whose key the cache does not hold). The first frame's verdict is decided and torch's;
the resumed frame's is undecided (``resume-side-unknown``) for both, where it was a HIT.
"""

from __future__ import annotations

import json

import pytest

from tests.harness.background import builder, prebuilt
from tests.helpers import run_fxcache

pytestmark = pytest.mark.torch

FAMILY = "branch_on_input_dyn"
CALLS = [{"x": [6, 8]}, {"x": [5, 8]}]  # with the harness's seeded data: the sum positive, then negative


@builder("resume_sides", order=7)
def _built() -> dict:
    from tests.harness.background import build_dir
    from tests.harness.family_runs import family_answers

    return family_answers(FAMILY, build_dir("resume-sides"), CALLS)


@pytest.fixture(scope="session")
def resume_sides() -> dict:
    return prebuilt("resume_sides")


def _frames(answer: dict, present: set[str]) -> list[tuple[str, bool, str | None]]:
    """(key, in the cache, entry hit) of each AOTAutograd lookup by guards, in torch's order:
    the first frame's, then the resumed frame's."""
    return [(lk["key"], lk["key"] in present, lk["hit"]) for lk in answer["lookups"][0]
            if lk["kind"] == "aotautograd" and lk["mode"] == "guards"]


@pytest.mark.parametrize("i", range(len(CALLS)), ids=["same-side", "other-side"])
def test_the_resumed_frame_is_undecided_on_either_side_and_the_first_frame_is_torchs(resume_sides, i):
    from fxcache_core.cache.scan import scan_cache

    cache = resume_sides["cache"]
    present = {k.key for k in scan_cache(cache).keys}
    first, resumed = _frames(resume_sides["answers"][i], present)
    # The premise: the first frame hits; the resumed frame is the build's side for the first
    # call and another key (the other side) for the second.
    assert first[1] and first[2], first
    assert (resumed[1] and resumed[2] is not None) if i == 0 else not resumed[1], resumed
    x = CALLS[i]["x"]
    proc = run_fxcache("--cache-dir", str(cache), "match", "--json", "--fn", "branch_on_input", "--dynamic", "true",
                       "--shapes", f"x=[{x[0]},{x[1]}]")
    body = json.loads(proc.stdout)
    by_name = {fv["function"]: fv for fv in body["verdicts"]["functions"]}
    fv = by_name["branch_on_input"]
    assert (fv["status"], fv["key"], fv["entry"]) == ("hit", first[0], first[2]), fv
    (resumed_fv,) = [v for name, v in by_name.items() if name != "branch_on_input"]
    assert resumed_fv["function"].startswith("torch_dynamo_resume_in_branch_on_input_at_"), resumed_fv
    assert resumed_fv["status"] == "undecided" and resumed_fv["why_code"] == "resume-side-unknown", resumed_fv
    assert proc.returncode == 3
