"""C++ compile steps, kernel libraries a hit rebuilt, restarts, backward order and bypass
reasons, on synthetic traces and tiny synthetic cache dirs (no torch).

Synthetic because a real run cannot be made to hold these on demand: a restart of
analysis after a lookup, a backward compiled after the next frame's compile, damaged
chromium payloads, libraries whose debug strings name other include dirs (the
real scenarios are in tests/torch/test_explain_rebuilt.py).
"""

from __future__ import annotations

import json
import os
import time

import pytest

from fxcache_core.trace.explain import explain
from fxcache_core.trace.rebuilt import Libraries, rebuild_of
from fxcache_core.trace.record_values import one_line
from fxcache_core.trace.run import read_run
from tests.synth_trace import C00, artifact, clock, fx_hit, rec, start, write_trace


def chrome(name: str, ph: str, ts_s: float, **ctx: object) -> str:
    return rec("chromium_event", {}, json.dumps({"name": name, "ts": ts_s * 1e6, "ph": ph}, indent=1),
               **{**C00, **ctx})


def test_compile_steps_are_read_per_compile_with_their_times_and_nesting(tmp_path):
    text = (clock() + start()
            + chrome("compile_file", "B", 100.0) + chrome("compile_file", "E", 100.25)
            + chrome("async_compile.wait", "B", 101.0) + chrome("compile_file", "B", 101.5)
            + chrome("compile_file", "E", 103.0) + chrome("async_compile.wait", "E", 103.5)
            + chrome("compile_file", "E", 104.0)  # an end without a start: ignored
            + rec("chromium_event", {}, '{"name": "compile_file", "ts": "soon", "ph": "B"}', **C00)
            + fx_hit())
    run = read_run(write_trace(tmp_path / "t", text))
    (c,) = run.compiles
    steps = [(s.name, round(s.seconds, 3), s.in_wait) for s in c.cxx_steps]
    assert steps == [("compile_file", 0.25, False), ("async_compile.wait", 2.5, False),
                     ("compile_file", 1.5, True)]
    x = explain(run, None).lookups[0]
    # No cache dir to look at: the build inside the wait is a kernel; the cause unknown.
    assert x.rebuilt is not None and x.rebuilt.kernels == 1 and x.rebuilt.cause is None
    assert x.rebuilt.seconds == pytest.approx(0.25 + 2.5)
    assert x.seconds_saved == pytest.approx(2.0 - 2.75)
    assert "rebuilt-cause-unknown" in [n.code for n in x.notes]


def test_a_hit_with_only_header_steps_rebuilt_nothing(tmp_path):
    text = clock() + start() + chrome("compile_file", "B", 100.0) + chrome("compile_file", "E", 100.3) + fx_hit()
    run = read_run(write_trace(tmp_path / "t", text))
    x = explain(run, None).lookups[0]
    assert x.rebuilt is None and x.seconds_saved == pytest.approx(2.0)


def _lib(root, name, mtime, includes, vec, source=b"extern \"C\" void kernel() {}"):
    d = root / name[1:3]
    d.mkdir(parents=True, exist_ok=True)
    (d / f"{name}.main.cpp").write_bytes(source)
    so = d / f"{name}.main.so"
    so.write_bytes(b"\x7fELF\x00" + b"\x00".join(f"{i}/torch/include/c10/util".encode() for i in includes)
                   + f"\x00ATen/cpu/vec/vec{vec}/x.h\x00".encode())
    os.utime(so, (mtime, mtime))
    return so


@pytest.mark.parametrize(("new_inc", "new_vec", "code"), [
    ("/opt/other/site-packages", 512, "other-torch-headers"),
    ("/venv/site-packages", 256, "other-isa"),
    ("/venv/site-packages", 512, "other-build-command"),
])
def test_the_cause_compares_a_rebuilt_library_with_the_caches_for_the_same_source(tmp_path, new_inc, new_vec, code):
    now = time.time()
    _lib(tmp_path, "cold0000", now - 3600, ["/venv/site-packages"], 512)
    _lib(tmp_path, "cnew1111", now, [new_inc], new_vec)
    libs = Libraries([tmp_path])
    text = (clock() + start() + chrome("compile_file", "B", now - 1) + chrome("compile_file", "E", now)
            + fx_hit())
    run = read_run(write_trace(tmp_path / "t", text))
    r, _ = rebuild_of(run.lookups[0], run.compiles[0], libs, now - 60)
    assert r is not None and r.kernels == 1 and r.code == code
    if code == "other-torch-headers":
        assert "/opt/other/site-packages/torch/include" in (r.cause or "")
    if code == "other-isa":
        assert "AVX512; this run: AVX2" in (r.cause or "")


def test_no_library_for_the_source_in_the_cache_is_a_missing_library_and_isa_checks_are_no_kernels(tmp_path):
    now = time.time()
    _lib(tmp_path, "cnew1111", now, ["/venv"], 512)
    _lib(tmp_path, "cisa2222", now, ["/venv"], 512, source=b"extern \"C\" void __avx_chk_kernel() {}")
    text = clock() + start() + chrome("compile_file", "B", now - 1) + chrome("compile_file", "E", now) + fx_hit()
    run = read_run(write_trace(tmp_path / "t", text))
    r, _ = rebuild_of(run.lookups[0], run.compiles[0], Libraries([tmp_path]), now - 60)
    assert r is not None and r.kernels == 1 and r.code == "library-missing"


def test_a_symlinked_library_is_not_followed(tmp_path):
    now = time.time()
    outside = tmp_path / "outside.so"
    outside.write_bytes(b"x")
    (tmp_path / "c" / "ab").mkdir(parents=True)
    (tmp_path / "c" / "ab" / "cabc.main.so").symlink_to(outside)
    assert Libraries([tmp_path / "c"]).libs() == []
    del now


def test_a_restarted_attempts_lookup_is_in_no_total(tmp_path):
    miss0 = {"key": "aK", "cache_state": "miss", "cache_status_detailed": "full_miss", "cache_event_time": 1.7e18}
    text = (clock() + start()
            + artifact("aotautograd_cache_miss", miss0)
            + artifact("aotautograd_cache_miss", {**miss0, "key": "aK2"}, attempt=1)
            + rec("compilation_metrics", {"co_name": "f"}, **{**C00, "attempt": 1}))
    rep = explain(read_run(write_trace(tmp_path / "t", text)), None)
    s = rep.summary()["aotautograd"]
    assert s.restarted == 1 and s.misses == {"new-key": 1} and s.lookups == 1
    assert [x.restarted for x in rep.lookups] == [True, False]


def test_backward_lookups_stay_with_their_compile_in_trace_order(tmp_path):
    miss = {"key": "aK", "cache_state": "miss", "cache_status_detailed": "full_miss", "cache_event_time": 1.7e18}
    g = {"frame_id": 1, "frame_compile_id": 0, "attempt": 0}
    text = (clock() + start()
            + artifact("aotautograd_cache_miss", miss)
            + rec("compilation_metrics", {"co_name": "f"}, **C00)
            # the training step's backward, compiled lazily after the forward's compile ended
            + fx_hit(key="fBackward", components=["[abc] fx_kwargs[is_backward]: True"])
            + rec("dynamo_start", {"stack": [{"line": 9, "name": "g", "filename": 7}]}, **g)
            + artifact("aotautograd_cache_miss", {**miss, "key": "aG"}, **g)
            + rec("compilation_metrics", {"co_name": "g"}, **g))
    run = read_run(write_trace(tmp_path / "t", text))
    assert [(lk.key, run.compile_of(lk).function) for lk in run.lookups] == [
        ("aK", "f"), ("fBackward", "f"), ("aG", "g")]


def test_a_bypass_reason_is_one_line_without_an_address():
    assert one_line("Can't pickle\n  <function tensor at 0x7f3a2b1c>:\n   it's not the same object") == \
        "Can't pickle <function tensor>: it's not the same object"
    assert one_line("x" * 900) is not None and len(one_line("x" * 900) or "") == 500


def test_a_peeked_chromium_payload_is_verified_and_bounded(tmp_path):
    """The reader skips chromium events unparsed, but looks into their payloads for the
    compile steps: one whose md5 does not match, or past MAX_PEEK_BYTES, is not a step."""
    from fxcache_core.trace.reader import MAX_PEEK_BYTES

    forged = chrome("compile_file", "B", 100.0).replace('"has_payload": "', '"has_payload": "0')
    huge = rec("chromium_event", {}, json.dumps({"name": "compile_file", "ts": 1e8, "ph": "B",
                                                 "pad": "x" * MAX_PEEK_BYTES}, indent=1), **C00)
    import calendar

    # A clock record whose epoch ts is the glog prefix's time: the reader calibrates, then skips.
    calibrated = clock(calendar.timegm((2025, 12, 1, 11, 57, 15, 0, 0, 0)) * 1e6 + 562000)
    text = (calibrated + start() + forged + chrome("compile_file", "E", 100.5) + huge
            + chrome("compile_file", "E", 101.0)
            + chrome("compile_file", "B", 102.0) + chrome("compile_file", "E", 102.5) + fx_hit())
    run = read_run(write_trace(tmp_path / "t", text))
    assert [(s.start, s.end) for s in run.compiles[0].cxx_steps] == [(102.0, 102.5)]
    assert run.files[0].clock == "trace" and run.files[0].skipped >= 1  # the forged md5


# The ISA check programs of torch/_inductor/cpu_vec_isa.py (2.13 and 2.14), as written
# into the cache dir (``<hash>.cpp``/``<hash>.so``, not ``.main``): a cache shipped without
# its libraries builds them again within the first hit, beside the kernels.
_ISA_CHECKS = [
    b'extern "C" void __avx_chk_kernel() {\n    auto tmp0 = at::vec::Vectorized<float>(1);\n}\n',
    b'#include <immintrin.h>\n\nextern "C" __m512bh __avx512_bf16_chk_kernel(__m512 a, __m512 b) {\n'
    b'    return _mm512_cvtne2ps_pbh(a, b);\n}\n',
    b'extern "C" __m256i __avx512_vnni_chk_kernel_1(__m256i src, __m256i a, __m256i b) {\n'
    b'    return _mm256_dpbusd_epi32(src, a, b);\n}\n',
    b'struct amx_tilecfg {\n  uint8_t palette_id;\n};\n\nextern "C" void __amx_chk_kernel() {\n'
    b'  amx_tilecfg cfg = {0};\n  _tile_zero(0);\n}\n',
]


def test_every_isa_check_program_is_no_kernel(tmp_path):
    now = time.time()
    _lib(tmp_path, "cnew1111", now, ["/venv"], 512)
    for i, src in enumerate(_ISA_CHECKS):
        d = tmp_path / f"i{i}"
        d.mkdir()
        (d / f"ci{i}check.cpp").write_bytes(src)
        so = d / f"ci{i}check.so"
        so.write_bytes(b"\x7fELF\x00")
        os.utime(so, (now, now))
    text = clock() + start() + chrome("compile_file", "B", now - 1) + chrome("compile_file", "E", now) + fx_hit()
    run = read_run(write_trace(tmp_path / "t", text))
    r, _ = rebuild_of(run.lookups[0], run.compiles[0], Libraries([tmp_path]), now - 60)
    assert r is not None and r.kernels == 1 and r.code == "library-missing"
