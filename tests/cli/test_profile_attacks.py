"""Hostile saved profiles (``dynamo/code_state_*.pkl``) and entries replaced by FIFOs.

Synthetic caches and profiles, built by hand: torch never writes a FIFO, a profile of
63 MB of opcodes or 256 profiles naming one 64 MiB source, and those are what these
tests are about (hostility). Each input must be reported, never waited on, and cost
under 2 s of CPU and 300 MB: a hang fails the test within its timeout instead of
stalling the suite.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fxcache_core.cache.keys import KeyKind
from fxcache_core.decode import pgo
from fxcache_core.decode.pgo import read_pgo_states
from tests.cli_run import run_measured
from tests.helpers import alarm, run_fxcache
from tests.synth import (
    Fake,
    aot_entry_with_sources,
    dumps,
    fake_key,
    graph_str,
    local_source,
    size_source,
    stub_pickle,
    write_entry,
)

_PGO = "torch._dynamo.pgo"
_FAST = {"FXCACHE_JOBS": "1"}


def _fx_entry(guards: str | None, key: str, file: str) -> bytes:
    """An FX entry compiled from ``auto`` at line 10 of ``file`` (its line map says so)."""
    stack = f'  File "{file}", line 10, in auto\n    return x + 1\n'
    return stub_pickle("torch._inductor.output_code", "CompiledFxGraph", {
        "guards_expr": guards, "_fx_graph_cache_key": key,
        "_fx_graph_cache_debug_lines": ["[abc] example_inputs[0]: ('s0',)"],
        "fx_kwargs": {"is_backward": False}, "runnable_graph_str": "s0 = 8\n\nimport torch\n",
        "inductor_post_grad_graph_str": graph_str(("auto", file, 10)), "cache_linemap": [(7, stack)]})


def _cache(root: Path, file: str) -> Path:
    """A function ``auto`` of ``file`` with a static key and one with ``x.size(0)`` symbolic."""
    for static in (True, False):
        fx = fake_key(KeyKind.FX_GRAPH, f"auto{static}")
        aot = fake_key(KeyKind.AOT_AUTOGRAD, f"auto{static}")
        guards = None if static else "2 <= L['t0']"
        write_entry(root, KeyKind.FX_GRAPH, fx, _fx_entry(guards, fx, file))
        inputs = ([("f32[4, 3][3, 1]cpu", local_source("x"))] if static else
                  [("Sym(s0)", size_source("x", 0)), ("f32[s0, 3][3, 1]cpu", local_source("x"))])
        write_entry(root, KeyKind.AOT_AUTOGRAD, aot,
                    aot_entry_with_sources(guards, (fx, guards), inputs, ("auto", file, 10)))
    (root / "dynamo").mkdir(exist_ok=True)
    return root


def _profile(file: str) -> bytes:
    """A profile that records the code object ``auto`` of ``file`` (its hash not the file's)."""
    code = Fake(_PGO, "CodeId")
    code.state = {"filename": file, "firstlineno": 1, "name": "auto", "file_hash": "00000000",
                  "closure_hash": None}
    return dumps({code: Fake(_PGO, "CodeState", automatic_dynamic={})})


_MATCHES = (("--shapes", "x=[4,3]"),
            ("--dynamic", "none", "--shapes", "x=[9,3]", "--after-recompile"),
            ("--dynamic", "true", "--shapes", "x=[9,3]"))


def _match(root: Path, *args: str, measured: bool = False):
    argv = ("--cache-dir", str(root), "match", "--fn", "auto", *args)
    if measured:
        import sys

        return run_measured([sys.executable, "-m", "fxcache_cli", *argv], env=_FAST, timeout=20)
    return run_fxcache(*argv, env=_FAST, timeout=20)


def test_a_fifo_profile_is_reported_unreadable_never_waited_on(tmp_path):
    root = _cache(tmp_path / "cache", "/src/model.py")
    os.mkfifo(root / "dynamo" / "code_state_job_None_.pkl")
    for args in _MATCHES:
        p = _match(root, *args)
        assert p.returncode in (0, 1, 3) and "Traceback" not in p.stderr, (args, p.stdout, p.stderr)
    (st,) = read_pgo_states(root)
    assert st.problem is not None and st.problem.code == "unreadable" and "regular" in st.problem


def test_a_source_named_by_many_profiles_is_read_once(tmp_path):
    src = tmp_path / "model.py"
    with open(src, "wb") as f:  # 64 MiB, sparse: reading it costs CPU, not disk
        f.truncate(pgo.MAX_SOURCE_BYTES)
    root = _cache(tmp_path / "cache", str(src))
    data = _profile(str(src))
    for i in range(pgo.MAX_PGO_FILES):
        (root / "dynamo" / f"code_state_job{i:03d}_None_.pkl").write_bytes(data)
    r = _match(root, *_MATCHES[0], measured=True)
    assert r.returncode in (0, 1, 3) and "Traceback" not in r.stderr, r
    assert r.cpu < 2 and r.maxrss_kb < 300 * 1024, r


def test_source_hashes_stop_at_their_total(tmp_path):
    from fxcache_core.decode.pgo import SourceHashes

    files = []
    for i in range(3):
        files.append(tmp_path / f"m{i}.py")
        files[-1].write_bytes(b"x = %d\n" % i)
    hashes = SourceHashes(total=14)
    assert [hashes(str(f)) is not None for f in files] == [True, True, False]
    assert hashes(str(files[0])) is not None  # read before: remembered, not read again
    os.mkfifo(tmp_path / "fifo.py")
    assert SourceHashes()(str(tmp_path / "fifo.py")) is None


def _object_opcodes(n_bytes: int) -> bytes:
    """A profile whose body builds one stub per 5 bytes (``BINGET 0; EMPTY_TUPLE; REDUCE``,
    each appended to a list), ``n_bytes`` long."""
    head = b"\x80\x02]q\x00c" + _PGO.encode() + b"\nCodeId\nq\x010"
    body = b"h\x01)Ra"
    return head + body * ((n_bytes - len(head)) // len(body)) + b"."


def test_a_profile_of_object_opcodes_stops_at_the_object_bound(tmp_path):
    root = _cache(tmp_path / "cache", "/src/model.py")
    (root / "dynamo" / "code_state_job_None_.pkl").write_bytes(_object_opcodes(63_000_000))
    r = _match(root, *_MATCHES[0], measured=True)
    assert r.returncode in (0, 1, 3) and "Traceback" not in r.stderr, r
    assert r.cpu < 2 and r.maxrss_kb < 300 * 1024, r
    # Under the byte cap, the unpickler itself stops at the object bound.
    (root / "dynamo" / "code_state_job_None_.pkl").write_bytes(_object_opcodes(pgo.MAX_PGO_BYTES - 1))
    (st,) = read_pgo_states(root)
    assert st.problem is not None and st.problem.code == "too-many-objects", st.problem


def test_object_bound_counts_as_the_unpickler_builds(tmp_path):
    from fxcache_core.decode.unpickler import load_stubs
    from fxcache_core.errors import EntryDecodeError

    data = _object_opcodes(4_000)
    root, _ = load_stubs(data)
    assert len(root) > 700
    with pytest.raises(EntryDecodeError) as e:
        load_stubs(data, max_objects=100)
    assert e.value.message.code == "too-many-objects"
    assert len(load_stubs(data)[0]) == len(root)  # the bound was for that read only
    assert root[0].qualname == f"{_PGO}.CodeId"  # a stub: nothing named was imported


# --- an entry replaced by a FIFO after the scan listed it ------------------------------------




def _fifo_after_scan(monkeypatch, victims: list[Path]) -> None:
    """Swap each of ``victims`` for a FIFO right after the scan lists its key dir (each
    file is listed as a regular entry, then is a FIFO when read): the
    race of a file replaced between the scan and the read, made deterministic."""
    from fxcache_core.cache import scan

    real = scan._scan_key_dir

    def listed(kind, key, path, *a, **k):
        out = real(kind, key, path, *a, **k)
        for v in victims:
            if v.parent == Path(path) and v.is_file() and not v.is_symlink():
                v.unlink()
                os.mkfifo(v)
        return out

    monkeypatch.setattr(scan, "_scan_key_dir", listed)


@pytest.mark.parametrize("args", [
    ("pack", "--all", "--dry-run", "--json"),
    ("pack", "--all", "{out}"),
    ("verify", "--json"),
    ("ls", "--fn", "auto", "--json"),
    ("match", "--fn", "auto", "--shapes", "x=[4,3]", "--json"),
    ("gc", "--unreadable", "--dry-run", "--json"),
    ("dupes", "--json"),
])
def test_an_entry_replaced_by_a_fifo_is_reported_never_waited_on(tmp_path, monkeypatch, args):
    """In this process (the race needs a hook between scan and read): every entry of the
    cache becomes a FIFO once listed, and no command waits on one."""
    from tests.cli_run import fxcache_in_process

    root = _cache(tmp_path / "cache", "/src/model.py")
    monkeypatch.setenv("FXCACHE_JOBS", "1")
    monkeypatch.setenv("FXCACHE_INDEX_DIR", str(tmp_path / "index"))
    victims = [p for p in root.rglob("*") if p.is_file()]
    _fifo_after_scan(monkeypatch, victims)
    with alarm(20):
        r = fxcache_in_process("--cache-dir", str(root),
                               *(a.replace("{out}", str(tmp_path / "out.tar.gz")) for a in args))
    assert "Traceback" not in r.stderr and r.returncode in (0, 1, 2, 3), r
    if args[0] == "gc":  # could not look is not proven: nothing goes on that ground
        assert json.loads(r.stdout)["removals"] == [], r
    if args[0] == "verify":
        body = json.loads(r.stdout)
        assert body["not_checked"] == 4 and "not a regular file" in json.dumps(body["unchecked"]), r
    assert all(v.exists() for v in victims)
