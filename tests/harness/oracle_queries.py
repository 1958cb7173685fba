"""Torch's answers to the oracle's own tests, asked once per session on a build thread.

test_torch_oracle.py (what torch looks up, hits and writes in a fresh process),
test_fork_server.py (the fork server answers as a fresh process does) and
test_recorded_answers.py (torch asked now answers as recorded) ask torch about calls of
the tests' corpus on copies of the real cache. Several ask the same call; each call is
asked here once, by a :class:`tests.harness.oracle.ForkServer` (a child forked
per query: the server the builds share, :func:`tests.harness.oracle.builds_server`), on a
build thread beside the fast tiers, and every test reads the answer and the copy the
query ran on. test_oracle_suite.py reads one more (``duck_on``).

:func:`build` is the background build ``oracle_queries``; conftest's ``oracle_queries``
fixture returns what it returns.
"""

from __future__ import annotations

import shutil
from typing import Any

from tests.harness.background import build_dir, builder, prebuilt

EQUIVALENCE_QUERIES = [("train_mlp", [[5, 4], [5, 1]]), ("branch_on_size", [[16, 3]]),
                       ("mark_dynamic_range", [[100, 3]])]
"""The calls test_fork_server.py compares with fresh processes (recorded:
``tests.harness.recorded``, group ``fresh``): a hit with its backward, a call that
compiles and writes, and a call torch refuses."""

QUERIES: dict[str, tuple[str, list[Any]]] = {
    "train_hit": EQUIVALENCE_QUERIES[0],
    "unbuilt_side": EQUIVALENCE_QUERIES[1],
    "refused": EQUIVALENCE_QUERIES[2],
    "build_shape_hit": ("branch_on_size", [[4, 3]]),
    "region_hit": ("same_graph_two_regions", [[40, 3]]),
    "auto_static_hit": ("automatic_dynamic", [[4, 3]]),
    "duck_on": ("duck_on_pair", [[6], [6]]),
}
"""name -> (case, shapes): each asked on a copy of the real cache of its own."""

AFTER = {"auto_new_static": ("auto_static_hit", "automatic_dynamic", [[10, 3]]),
         "unbuilt_side_again": ("unbuilt_side", "branch_on_size", [[16, 3]])}
"""name -> (the query whose copy it is asked on, after it; case, shapes)."""

ON_COPY = {"unbuilt_region": ("same_graph_two_regions", [[10, 3]])}
"""name -> (case, shapes): asked through ``torch_lookups(..., on_copy=True)`` on a copy
of the real cache, which must stay as it was."""


@builder("oracle_queries", needs=("real_cache",), order=4)
def build() -> dict[str, dict[str, Any]]:
    """name -> ``{"answer": what torch_lookups returns, "cache": the copy it ran on}`` for
    every query of :data:`QUERIES`, :data:`AFTER` and :data:`ON_COPY`."""
    from tests.harness.oracle import builds_server, torch_lookups

    real = prebuilt("real_cache")
    base = build_dir("oracle-queries")
    out: dict[str, dict[str, Any]] = {}
    with builds_server() as server:
        for name, (case, shapes) in QUERIES.items():
            copy = base / name
            shutil.copytree(real.root, copy, symlinks=True)
            out[name] = {"answer": server.lookups(copy, case, shapes), "cache": copy}
        for name, (on, case, shapes) in AFTER.items():
            copy = out[on]["cache"]
            out[name] = {"answer": server.lookups(copy, case, shapes), "cache": copy}
        for name, (case, shapes) in ON_COPY.items():
            copy = base / name
            shutil.copytree(real.root, copy, symlinks=True)
            out[name] = {"answer": torch_lookups(copy, case, shapes, on_copy=True, server=server), "cache": copy}
    return out
