"""Recorded torch answers name keys and entries by the build write that made them, and
are read back in this session's names (tests/harness/recorded_models.py). Synthetic
summaries: the mapping itself, without building anything."""

from __future__ import annotations

from tests.harness import recorded_models


def _summary(suffix: str) -> dict:
    """A model build's summary as model_runs.build gives it, every name ending in ``suffix``
    (another machine's hashes)."""
    def w(kind, key, entry, phase="forward"):
        return {"kind": kind, "key": key + suffix, "entry": entry + suffix, "phase": phase}

    return {"workloads": {
        "gpt2": {"sequences": [{"writes": [[w("fxgraph", "fk1", "e1"), w("aotautograd", "ak1", "e2")]]}]},
        "llama": {"sequences": [{"writes": [[w("fxgraph", "fk2", "e3")], [w("fxgraph", "fk2", "e4")]]}]},
    }}


def test_an_answer_recorded_on_one_build_reads_back_in_another_builds_names():
    here, there = _summary("-here"), _summary("-there")
    answer = {"results": [{"workload": "llama", "error": None, "lookups": [[
        {"kind": "fxgraph", "key": "fk2-there", "hit": "e4-there", "status": "hit",
         "candidates": ["e4-there", "e3-there"]},
        {"kind": "fxgraph", "key": "fresh-key", "hit": None, "status": "full_miss", "candidates": []}]],
        "writes": [[{"kind": "fxgraph", "key": "fresh-key", "entry": "fresh-entry"}]]}], "pid": 7}
    stable = recorded_models.stable_names(answer, recorded_models._names(there))
    assert "pid" not in stable
    lk = stable["results"][0]["lookups"][0]
    assert lk[0]["key"] == "@key:llama:0.0:0" and lk[0]["hit"] == "@entry:llama:0.1:0"
    assert lk[0]["candidates"] == ["@entry:llama:0.0:0", "@entry:llama:0.1:0"]
    assert lk[1]["key"] == "@new:0" and stable["results"][0]["writes"][0][0]["entry"] == "@new:1"

    local = recorded_models._local(stable, here)
    lk = local["results"][0]["lookups"][0]
    assert (lk[0]["key"], lk[0]["hit"]) == ("fk2-here", "e4-here")
    assert lk[0]["candidates"] == ["e3-here", "e4-here"]
    assert lk[1]["key"] == "new-0"  # a key the query made: no cache of the session has it


def test_the_build_shape_ignores_names_and_sees_which_writes_share_a_key():
    assert recorded_models.build_shape(_summary("-a")) == recorded_models.build_shape(_summary("-b"))
    other = _summary("-a")
    other["workloads"]["llama"]["sequences"][0]["writes"][1][0]["key"] = "another-key"
    assert recorded_models.build_shape(other) != recorded_models.build_shape(_summary("-a"))
