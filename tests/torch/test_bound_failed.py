"""``fxcache match`` leaves a call that fails a size bound of every entry undecided
(``bound-failed``), never a MISS, as torch's lookups show.

The cases of ``tests.harness.cases_bounds`` are in the session's real cache, each built once
under ``dynamic=True`` with one entry that guards a bound on a size. Whose check the bound
was the cache does not show: a helper's ``if`` or an ``in`` test (torch traces another graph)
or an op's check (``torch._check``, a reflect pad: torch raises). Torch's own lookups (a
fresh process's first call on a copy of the cache, recorded by ``python -m
tests.harness.recorded``) are the judge of what torch did; none of them is a new entry of
the key, which a MISS would have promised.
"""

from __future__ import annotations

import pytest

from tests.helpers import call_label, match_call, torch_status

pytestmark = pytest.mark.torch

# (case, call, the clause the call fails as match names it); what torch did in the comment.
BOUND_UNDECIDED = [
    ("helper_gate", [[4, 32]], "x.size(1) <= 16"),  # new graph: too_long(x) holds
    ("in_pair", [[3, 4]], "not (x.size(0) == 2 or x.size(0) == 3)"),  # new graph: the in test holds
    ("checked_rows", [[2, 4]], "x.size(0) >= 4"),  # raises: torch._check
    ("pad_reflect", [[4, 3]], "x.size(1) >= 4"),  # raises: the pad reaches past 3 columns
]
_NEW_GRAPH = {"helper_gate", "in_pair"}


@pytest.mark.parametrize(
    "case,shapes,clause", BOUND_UNDECIDED, ids=[call_label(c, s) for c, s, _ in BOUND_UNDECIDED]
)
def test_a_failed_bound_is_undecided_naming_the_clause_not_a_new_entry(
    real_cache, arg_answers, case, shapes, clause
):
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    rc, body = match_call(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "bound-failed", fv
    assert clause in fv["line"] and "another graph" in fv["line"] and "an error" in fv["line"], fv[
        "line"
    ]
    answer = arg_answers[call_id(case, shapes)]
    if case in _NEW_GRAPH:
        assert answer["error"] is None, answer["error"]
        present = {k.key for k in scan_cache(real_cache.root).keys}
        assert torch_status(answer["lookups"], present) == "new-graph", answer
    else:
        assert answer["error"] is not None, answer
