"""``unpack --dry-run``'s verdict on a pack that records no torch build.

A pack of bundled AOTAutograd entries only (``bundled_autograd_cache``: no FX entry, so
no key components, tests/torch/test_blobs.py builds one) names no build to compare: the
verdict is unknown (None), never "will hit". Manifests written here (no torch).
"""

from __future__ import annotations

from fxcache_core.pack.manifest import BuildInfo, Manifest, PackedEntry
from fxcache_core.pack.will_hit import will_hit


def _manifest(build: BuildInfo) -> Manifest:
    entry = PackedEntry("aotautograd", "a" + "b" * 51, "c" * 51, "step (train.py:3)", (), None, None)
    return Manifest(members=(), build=build, settings=(), entries=(entry,))


def test_a_pack_that_records_no_build_is_unknown_not_a_hit():
    report = will_hit(_manifest(BuildInfo(None, {})), "2.13.0+cpu", {"torch_version": "x" * 8})
    (f,) = report.functions
    assert f.will_hit is None and [r.code for r in f.reasons] == ["build-unknown"]
    assert not report.all_hit and report.to_json()["functions"][0]["will_hit"] is None


def test_a_pack_of_this_build_still_will_hit():
    report = will_hit(_manifest(BuildInfo("2.13.0+cpu", {"torch_version": "x" * 8})), "2.13.0+cpu",
                      {"torch_version": "x" * 8})
    assert report.functions[0].will_hit is True and report.all_hit
