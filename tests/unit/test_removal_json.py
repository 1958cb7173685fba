"""A removal's JSON text (what a gc or rm plan lists) is what ``json.dumps`` writes of its dict."""

from __future__ import annotations

import json

import pytest

from fxcache_core.cache.inventory import ContentKind
from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import FileInfo
from fxcache_core.prune.removal import Removal
from fxcache_core.reasons import Reason

_PATHS = (
    "/c/fxgraph/ab/fab/e1",
    "/c/ünïcode/é",
    "/c/\udcff\udc80name",
    '/c/"quoted"\\back\tslash\n',
    "/c/\u2028\x00",
)
_REASONS = (
    (),
    (Reason("least recently used, over the 5 byte budget", "over-budget"),),
    ("a plain str reason",),
    (Reason('ü "x"', "unused"), Reason("b", "dangling")),
)


@pytest.mark.parametrize("where", _PATHS)
@pytest.mark.parametrize("reasons", _REASONS)
@pytest.mark.parametrize("redis_key", (None, "fx:\udcff", "key"))
def test_json_text_is_json_dumps_of_the_dict(
    where: str, reasons: tuple, redis_key: str | None
) -> None:
    f = FileInfo(where, 12345678901, 1.5, 2.5, 7, 8, 9, 10)
    for r in (
        Removal(f, KeyKind.FX_GRAPH, "fab", "e1", reasons),
        Removal(f, KeyKind.AOT_AUTOGRAD, "a\u00e9", None, reasons),
        Removal(f, KeyKind.CODE, "c1", None, reasons, content=ContentKind.TRITON),
        Removal(f, KeyKind.CODE, "c1", None, reasons),
    ):
        assert r.json_text(redis_key) == json.dumps(
            {**r.to_json(), "redis_key": redis_key}, default=str
        )


def test_odd_values_are_left_to_json_dumps() -> None:
    f = FileInfo("/c/x", True, 1.0, 1.0)  # a size that is not an int: json.dumps says what it is
    r = Removal(f, KeyKind.FX_GRAPH, "k", "e", ("why",))
    assert r.json_text() == json.dumps({**r.to_json(), "redis_key": None}, default=str)
    assert '"size": true' in r.json_text()


def test_a_plans_removals_as_text_are_its_removals_dicts() -> None:
    from pathlib import Path

    from fxcache_core.prune.plan import GcPlan
    from fxcache_core.prune.policy import GcPolicy

    f = FileInfo("/c/fxgraph/ab/fab/e\u00e9", 5, 1.0, 1.0)
    removals = (
        Removal(f, KeyKind.FX_GRAPH, "fab", "e\u00e9", (Reason("r", "over-budget"),)),
        Removal(f, KeyKind.CODE, "c1", None, ("plain",), content=ContentKind.LIBRARY),
    )
    plan = GcPlan(
        root=Path("/c"), policy=GcPolicy(), removals=removals, total_bytes=10, total_entries=2
    )
    for redis_key in (None, str):
        head, lists = plan.run_json(dry_run=True, redis_key=redis_key)
        head_t, lists_t = plan.run_json(dry_run=True, redis_key=redis_key, as_text=True)
        assert head == head_t
        assert list(lists_t["removals"]) == [json.dumps(d, default=str) for d in lists["removals"]]
