"""Will a pack hit? Packs of the caches other torch versions wrote (tests/fixtures/torch_versions,
recorded by that version: see build.py there), against what each version's own torch computes
(``current_build`` in truth.json, recorded there in a fresh process). No torch here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fxcache_core.cache.scan import scan_cache
from fxcache_core.catalog.catalog import Catalog
from fxcache_core.pack.select import plan_pack
from fxcache_core.pack.will_hit import will_hit

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "torch_versions"
VERSIONS = sorted(p.name for p in FIXTURES.iterdir() if (p / "truth.json").is_file())


def _truth(version: str) -> dict:
    return json.loads((FIXTURES / version / "truth.json").read_text())


@pytest.mark.parametrize("built", VERSIONS)
@pytest.mark.parametrize("here", VERSIONS)
def test_a_pack_hits_only_under_the_torch_that_built_it(built, here):
    manifest = plan_pack(Catalog(scan_cache(FIXTURES / built / "cache")), everything=True).manifest
    t = _truth(here)
    report = will_hit(manifest, t["torch_version"], t["current_build"])
    assert report.functions and len(report.functions) == len(manifest.functions())
    if built == here:
        assert report.all_hit and not report.differ
    else:
        assert not any(f.will_hit for f in report.functions)
        assert "torch_version" in report.differ
        for f in report.functions:
            assert [r.code for r in f.reasons] == ["other-torch-build"]
            assert "nothing will hit" in f.reasons[0] and t["torch_version"] in f.reasons[0]


def test_another_cpp_thread_count_is_a_miss_the_manifest_says_how_to_avoid():
    manifest = plan_pack(Catalog(scan_cache(FIXTURES / VERSIONS[0] / "cache")), everything=True).manifest
    assert manifest.build.cpp_threads is not None  # the fixtures' CPU keys hash it
    t = _truth(VERSIONS[0])
    report = will_hit(manifest, t["torch_version"], t["current_build"], manifest.build.cpp_threads + 6)
    assert not report.all_hit
    assert {r.code for f in report.functions for r in f.reasons} == {"other-cpp-thread-count"}
    assert all(f.reasons and f"compiled for {manifest.build.cpp_threads} threads" in f.reasons[0] for f in report.functions)
    assert all(will_hit(manifest, t["torch_version"], t["current_build"], manifest.build.cpp_threads).functions[i].will_hit
               for i in range(len(report.functions)))


def test_a_pack_that_knows_its_torch_version_names_it():
    built, here = VERSIONS[0], VERSIONS[-1]
    manifest = plan_pack(Catalog(scan_cache(FIXTURES / built / "cache")), everything=True,
                         torch_version=_truth(built)["torch_version"]).manifest
    t = _truth(here)
    report = will_hit(manifest, t["torch_version"], t["current_build"])
    want = f"built by torch {_truth(built)['torch_version']}, this is torch {t['torch_version']}: nothing will hit ("
    assert built != here and report.functions
    for f in report.functions:
        assert len(f.reasons) == 1 and f.reasons[0].startswith(want) and "torch_version" in f.reasons[0]
