"""Will a pack hit? Packs of the caches other torch versions wrote (tests/fixtures/torch_versions,
recorded by that version: see build.py there), against what each version's own torch computes
(``current_build`` in truth.json, recorded there in a fresh process). No torch here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fxcache_core.cache.scan import scan_cache
from fxcache_core.catalog.reader import Catalog
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


def _setting(name: str, hash_: str, value: str):
    from fxcache_core.keying.anatomy import Component

    return Component(name, hash_, value)


def test_a_torchinductor_variable_set_here_that_changes_a_hashed_setting_is_a_miss():
    """A ``TORCHINDUCTOR_*`` variable is read into torch's config by every run here: a
    setting it moves off the value the packed keys hashed changes every key (synthetic
    components: what :func:`~fxcache_core.keying.current.env_settings` returns; it is
    checked against torch in tests/torch/test_pack.py)."""
    from fxcache_core.keying.defaults import default_settings

    manifest = plan_pack(Catalog(scan_cache(FIXTURES / VERSIONS[0] / "cache")), everything=True).manifest
    t = _truth(VERSIONS[0])
    name = "inductor_config[max_autotune]"
    assert name not in dict(manifest.settings)  # the keys hashed torch's default
    default_hash, default_value = default_settings()[name]
    off = will_hit(manifest, t["torch_version"], t["current_build"], None, [_setting(name, "zz" + default_hash, "True")])
    assert not off.all_hit and off.functions
    for f in off.functions:
        assert [r.code for r in f.reasons] == ["setting-differs-here"]
        assert "TORCHINDUCTOR_MAX_AUTOTUNE is set here" in f.reasons[0] and f"made with {default_value}" in f.reasons[0]
    # the same variable at torch's default value (TORCHINDUCTOR_MAX_AUTOTUNE=0) changes nothing
    at_default = [_setting(name, default_hash + "x" * 36, default_value)]
    assert will_hit(manifest, t["torch_version"], t["current_build"], None, at_default).all_hit
    # a setting the keys hashed off its default is compared with the manifest's value
    listed, value = manifest.settings[0]
    assert will_hit(manifest, t["torch_version"], t["current_build"], None, [_setting(listed, "h", value)]).all_hit
    other = will_hit(manifest, t["torch_version"], t["current_build"], None, [_setting(listed, "h", value + "0")])
    assert {r.code for f in other.functions for r in f.reasons} == {"setting-differs-here"}
    # under another torch build nothing hits anyway: that is the one reason given
    t2 = _truth(VERSIONS[-1])
    assert VERSIONS[0] != VERSIONS[-1]
    rep = will_hit(manifest, t2["torch_version"], t2["current_build"], None, [_setting(name, "zz", "True")])
    assert {r.code for f in rep.functions for r in f.reasons} == {"other-torch-build"}


def test_the_variables_set_in_an_environment_are_those_of_torchs_config():
    from fxcache_core.keying.config_env import set_in

    assert set_in({"TORCHINDUCTOR_MAX_AUTOTUNE": "1", "PATH": "/bin"}) == {
        "inductor_config[max_autotune]": "TORCHINDUCTOR_MAX_AUTOTUNE"}
    assert set_in({"TORCHINDUCTOR_CACHE_DIR": "/tmp/x"}) == {}


def test_a_pack_names_the_torch_that_built_it_and_lists_only_settings_off_that_torchs_defaults():
    """Without a trace the keys name their torch only as a hash: the recorded builds name it
    (keying/torch_builds.json), and its own defaults table (torch_defaults-<version>.json)
    says which settings a user set; the installed torch's table would list every default
    that changed between the versions as a setting the run must set. A torch whose defaults
    are not recorded gets no list, and the plan says so."""
    from fxcache_core.keying.defaults import default_settings_for

    for version in VERSIONS:
        plan = plan_pack(Catalog(scan_cache(FIXTURES / version / "cache")), everything=True)
        m = plan.manifest
        assert m.build.torch_version == _truth(version)["torch_version"]
        table = default_settings_for(version)
        if table is None:
            assert m.settings == () and plan.defaults_unknown == (_truth(version)["torch_version"],)
            continue
        assert m.settings, "the fixtures' keys hash one setting off the defaults"
        for name, value in m.settings:
            assert name in table and table[name][1] != value, (name, value)
