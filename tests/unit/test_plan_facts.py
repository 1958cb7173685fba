"""A gc or rm plan reads an index row as the fields it uses (PlanFacts), not as a whole light entry.

Synthetic entries (tests/synth.py): what is checked is that the facts are what the whole
row says of those fields, that a row fxcache did not write is refused as before, and
that a plan made from the facts is the plan made from whole rows.
"""

from __future__ import annotations

import json
import time

import pytest

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import scan_cache
from fxcache_core.catalog.reader import Catalog
from fxcache_core.decode.entries import DecodedEntry
from fxcache_core.prune.plan import plan_gc, plan_rm
from fxcache_core.prune.policy import GcPolicy
from fxcache_core.state.index import Index
from fxcache_core.state.rows import (
    PLAN_FIELDS,
    PlanFacts,
    from_json,
    plan_facts,
    plan_facts_from_json,
    to_json,
)
from tests.synth import aot_entry_bytes, fake_key, fx_entry_bytes, write_entry

TICK_S = 0.05  # past the kernel's timestamp tick: the rows prove their files


def _cache(root):
    fx = [fake_key(KeyKind.FX_GRAPH, s) for s in "ab"]
    for n, k in enumerate(fx):
        write_entry(
            root,
            KeyKind.FX_GRAPH,
            k,
            fx_entry_bytes(f"L['t0'] <= {n}", k, origin=("fn", "m.py", 3)),
        )
        write_entry(root, KeyKind.FX_GRAPH, k, fx_entry_bytes(None, k), name="z" * 52)
    write_entry(
        root,
        KeyKind.AOT_AUTOGRAD,
        fake_key(KeyKind.AOT_AUTOGRAD, "A"),
        aot_entry_bytes("L['t0'] == 2", (fx[0], "L['t0'] <= 0"), (fx[1], None)),
    )
    write_entry(
        root,
        KeyKind.AOT_AUTOGRAD,
        fake_key(KeyKind.AOT_AUTOGRAD, "B"),
        aot_entry_bytes(None, (fx[1], "L['t0'] <= 1")),
    )
    write_entry(root, KeyKind.FX_GRAPH, fake_key(KeyKind.FX_GRAPH, "c"), b"not a pickle")
    return fx


def _rows(tmp_path):
    root, idx = tmp_path / "c", tmp_path / "index.sqlite"
    _cache(root)
    time.sleep(TICK_S)
    cat = Catalog(scan_cache(root), Index(idx))
    cat.read_ahead(cat.scan.entries())
    cat.index.close()
    return root, idx, cat


def test_the_facts_of_a_row_are_what_the_whole_row_says_of_those_fields(tmp_path):
    _, _, cat = _rows(tmp_path)
    decoded = [d for e in cat.scan.entries() if isinstance(d := cat.load(e), DecodedEntry)]
    assert {d.kind for d in decoded} == {KeyKind.FX_GRAPH, KeyKind.AOT_AUTOGRAD}
    assert any(d.backward for d in decoded) and any(d.compile_time_ns is None for d in decoded)
    for d in decoded:
        row = to_json(d)
        facts = plan_facts_from_json(row)
        assert isinstance(facts, PlanFacts) and isinstance(facts, DecodedEntry)
        assert plan_facts(facts) == plan_facts(from_json(row)) == plan_facts(d)
        assert [getattr(facts, f) for f in PLAN_FIELDS][1:] == [
            getattr(from_json(row), f) for f in PLAN_FIELDS
        ][1:]
        assert facts.inputs == ()
        for unread in ("origin", "hints", "foreign", "arg_sources", "debug_lines"):
            with pytest.raises(AttributeError, match="not among the fields a plan reads"):
                getattr(facts, unread)
        assert facts == plan_facts_from_json(row) and hash(facts) == hash(plan_facts_from_json(row))
        assert (
            facts.guards_expr is None or facts.guards_expr is from_json(row).guards_expr
        )  # interned alike


@pytest.mark.parametrize(
    "change",
    [
        lambda r: r[:15],  # too short
        lambda r: [7, *r[1:]],  # not a kind
        lambda r: [*r[:2], 3, *r[3:]],  # guards not a string
        lambda r: [*r[:7], "fabc", *r[8:]],  # a forward ref that is not a pair
        lambda r: [*r[:7], [5, None], *r[8:]],  # a forward ref whose key is not a string
        lambda r: [*r[:10], "12", *r[11:]],  # a compile time that is not an int
        lambda r: [*r[:5], "yes", *r[6:]],  # is_backward not a flag
        lambda r: {"0": r},  # not a list
    ],
)
def test_a_row_fxcache_did_not_write_is_refused_as_facts(tmp_path, change):
    _, _, cat = _rows(tmp_path)
    aot = next(
        d for e in cat.scan.entries() if isinstance(d := cat.load(e), DecodedEntry) and d.forward
    )
    row = json.loads(to_json(aot))
    plan_facts_from_json(json.dumps(row))
    with pytest.raises((ValueError, KeyError, TypeError, IndexError)):
        plan_facts_from_json(json.dumps(change(row)))


def test_a_plan_from_the_facts_is_the_plan_from_whole_rows(tmp_path):
    root, idx, _ = _rows(tmp_path)
    fx = scan_cache(root).key(fake_key(KeyKind.FX_GRAPH, "a"))
    for policy in (
        GcPolicy(max_size_bytes=0),
        GcPolicy(max_size_bytes=2000, keep_costly_s=1.0),
        GcPolicy.default(),
        GcPolicy(keep_last=1),
    ):
        plans = []
        for plan_only in (False, True):
            cat = Catalog(scan_cache(root), Index(idx), plan_only=plan_only)
            plans.append((plan_gc(cat, policy), plan_rm(cat, cat.scan.key(fx.key))))
            served = [cat.load(e) for e in cat.scan.entries() if cat.from_index(e)]
            assert served and all(
                isinstance(d, PlanFacts) == plan_only for d in served if isinstance(d, DecodedEntry)
            )
            cat.index.close()
        (gc_whole, rm_whole), (gc_facts, rm_facts) = plans
        assert gc_whole.removals and gc_facts == gc_whole and rm_facts == rm_whole


def test_an_entry_served_as_facts_is_read_whole_when_asked(tmp_path):
    root, idx, _ = _rows(tmp_path)
    cat = Catalog(scan_cache(root), Index(idx), plan_only=True)
    e = cat.scan.key(fake_key(KeyKind.FX_GRAPH, "a")).entries[0]
    assert isinstance(cat.load(e), PlanFacts)
    whole = cat.load(e, full=True)
    assert (
        type(whole) is DecodedEntry
        and whole.debug_lines
        and plan_facts(whole) == plan_facts(plan_facts_from_json(to_json(whole)))
    )
    cat.index.close()
