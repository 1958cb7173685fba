"""``fxcache explain`` of a newer torch run against a cache an older torch built.

Recorded once by tools/build_torch_upgrade.py (CI has one torch): the cache
torch 2.13 wrote for a small program, and the TORCH_TRACE of torch 2.14.1 running
the same program on a copy of it, with what each torch recorded (its version, its
``torch_version`` component hash, its lookups, its config defaults) in truth.json.
No compile here: the trace and the cache are read as they are.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import run_fxcache

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "torch_upgrade"
TRUTH = json.loads((FIXTURE / "truth.json").read_text())


@pytest.fixture(scope="module")
def upgrade(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The trace unpacked, explained by the command (JSON, human, --raw)."""
    trace = tmp_path_factory.mktemp("upgrade") / "trace"
    trace.mkdir()
    for f in (FIXTURE / "trace").iterdir():
        with gzip.open(f, "rb") as src, (trace / f.name.removesuffix(".gz")).open("wb") as dst:
            shutil.copyfileobj(src, dst)
    # Copied as `cp -r` copies (fresh mtimes, as a git checkout has them too): no entry
    # looks older than the run, and every entry counts as there when torch looked.
    cache = trace.parent / "cache"
    shutil.copytree(FIXTURE / "cache", cache, copy_function=shutil.copy)
    args = ("--cache-dir", str(cache), "explain", "--no-record", str(trace))
    # --json in a process where torch cannot be imported: the explain path never needs it.
    runs = {name: run_fxcache(*args[:3], *extra, *args[3:], block_torch=name == "json")
            for name, extra in (("json", ("--json",)), ("human", ()), ("raw", ("--raw",)))}
    for proc in runs.values():
        assert proc.returncode == 0, proc.stderr[-3000:]
    return {"json": json.loads(runs["json"].stdout), "human": runs["human"].stdout, "raw": runs["raw"].stdout}


def test_every_lookup_is_torchs_and_missed_on_the_torch_version_with_both_versions(upgrade):
    ex, new, old = upgrade["json"], TRUTH["new"], TRUTH["old"]
    # The same lookups (the backward one is logged after the next compile's: order aside).
    assert sorted((x["cache"], x["key"]) for x in ex["lookups"]) == sorted((t["kind"], t["key"])
                                                                           for t in new["lookups"])
    assert {t["status"] for t in new["lookups"]} == {"full_miss"}
    assert ex["trace"]["torch_version"] == new["torch_version"]
    for x in ex["lookups"]:
        assert (x["state"], x["cause"]) == ("miss", "new-key")
        rc = x["root_cause"]
        assert (rc["component"], rc["code"]) == ("torch_version", "torch-version")
        assert (rc["this"], rc["cache"]) == (new["torch_version"], old["torch_version"])
        assert rc["also"] == []
        # The nearest key is one the old torch wrote: its torch_version is the old torch's own hash.
        assert x["nearest"]["key"] in {t["key"] for t in old["lookups"]}
    assert old["build"]["torch_version"] != new["build"]["torch_version"]


def test_config_keys_whose_defaults_changed_are_consequences_not_causes(upgrade):
    d_old, d_new = TRUTH["old"]["config_defaults"], TRUTH["new"]["config_defaults"]
    checked = 0
    for x in upgrade["json"]["lookups"]:
        rc = x["root_cause"]
        details = {d["name"]: d for d in x["nearest"]["details"]}
        assert sorted(rc["consequences"]) == sorted(n for n in x["nearest"]["differs"] if n != "torch_version")
        for name in rc["consequences"]:
            key = name.removeprefix("inductor_config[").removesuffix("]")
            if name.startswith("inductor_config[") and (key in d_old or key in d_new):
                # What each torch's own config module holds before anything is set.
                assert d_old.get(key) != d_new.get(key), name
                checked += 1
            else:  # a setting one torch hashes and the other does not
                assert details[name]["this"] is None or details[name]["nearest"] is None, details[name]
    assert checked >= 10


def test_the_summary_is_one_line_and_one_cause(upgrade):
    s, new, old = upgrade["json"]["summary"], TRUTH["new"], TRUTH["old"]
    n = len(new["lookups"])
    assert s["verdict"] == (f"{n} of {n} lookups missed: the cache was built by torch {old['torch_version']}, "
                            f"this run is torch {new['torch_version']}")
    (row,) = s["causes"]
    assert (row["component"], row["lookups"], row["this"], row["cache"]) == (
        "torch_version", n, new["torch_version"], old["torch_version"])
    assert s["rebuilt_after_hit"] == 0
    assert s["fxgraph"]["lookups"] + s["aotautograd"]["lookups"] == n


def test_the_human_output_leads_with_the_verdict_and_raw_lists_every_component(upgrade):
    human, raw, s = upgrade["human"], upgrade["raw"], upgrade["json"]["summary"]
    assert human.splitlines()[0] == s["verdict"]
    assert "inductor_config[" not in human, "consequences are counted, not listed"
    assert human.count("and with it: ") == len(upgrade["json"]["lookups"])
    consequences = upgrade["json"]["lookups"][0]["root_cause"]["consequences"]
    assert all(name in raw for name in consequences)
    assert len(raw.splitlines()) > len(human.splitlines()) + len(consequences)
