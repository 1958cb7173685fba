"""Dynamo's saved profile (``dynamo/code_state_*.pkl``), read with the restricted unpickler.

The profiles here are pickled from stand-in classes whose globals are renamed to
``torch._dynamo.pgo`` (protocol 2 names a class with the text opcode ``GLOBAL``), so
their bytes have the layout torch's own ``pickle.dumps(_CODE_STATE)`` gives
(torch/_dynamo/pgo.py, ``put_local_code_state``); tests/torch/test_oracle_suite.py reads
the one torch wrote while building the session's cache.
"""

from __future__ import annotations

import collections
import os
import pickle
import sys
import types
import zlib
from pathlib import Path

import pytest

from fxcache_core.decode import pgo
from fxcache_core.decode.pgo import file_hash, job_of, read_pgo_state, read_pgo_states
from fxcache_core.errors import EntryDecodeError
from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.lookup.phases import Profiles

_FAKE = "fxcache_pgo_fake"


class AutoDynamic:
    def __reduce__(self):
        return (AutoDynamic, (0,))


class InferStride:
    def __init__(self, dim=0):
        self.dim = dim


class CodeId:
    pass


class CodeState:
    pass


class FrameStateSizeEntry:
    pass


AD = AutoDynamic()


def _code_id(filename: str, line: int, name: str, file_hash: str, closure: int | None = None) -> CodeId:
    c = CodeId()
    c.__dict__.update(filename=filename, firstlineno=line, name=name, file_hash=file_hash, closure_hash=closure)
    return c


def _entry(scalar, size, stride=()) -> FrameStateSizeEntry:
    e = FrameStateSizeEntry()
    e.__dict__.update(scalar=scalar, size=size, stride=stride, excluded_sizes=None, excluded_scalar=None)
    return e


def _state(**sources) -> CodeState:
    st = CodeState()
    st.automatic_dynamic = collections.defaultdict(FrameStateSizeEntry, sources)
    return st


def dumps(root) -> bytes:
    """``pickle.dumps(root)`` with the stand-in classes named as torch names them."""
    mod = types.ModuleType(_FAKE)
    for cls in (AutoDynamic, InferStride, CodeId, CodeState, FrameStateSizeEntry):
        cls.__module__ = _FAKE
        setattr(mod, cls.__name__, cls)
    sys.modules[_FAKE] = mod
    try:
        data = pickle.dumps(root, protocol=2)
    finally:
        del sys.modules[_FAKE]
    assert f"c{_FAKE}\n".encode() in data
    return data.replace(f"c{_FAKE}\n".encode(), b"ctorch._dynamo.pgo\n")


def _profile(tmp_path: Path, root, name: str = "code_state_job1_None_.pkl") -> Path:
    d = tmp_path / "dynamo"
    d.mkdir(exist_ok=True)
    (d / name).write_bytes(dumps(root) if not isinstance(root, bytes) else root)
    return d / name


def _profiles_root(src: Path) -> collections.defaultdict:
    data = src.read_bytes()
    return collections.defaultdict(CodeState, {
        _code_id(str(src), 3, "f", format(zlib.crc32(data) & 0xFFFFFFFF, "08x")): _state(**{
            "L['x']": _entry(AD, (4, AD), (InferStride(1), 1)),
            "L['y']": _entry(AD, (5, 6), (6, 1)),
            "L['n']": _entry(AD, AD, AD),
            "L['k']": _entry(3, AD, AD)}),
        _code_id(str(src), 10, "f", "0"): _state(),
    })


def test_a_profile_says_which_dims_and_ints_changed(tmp_path):
    src = tmp_path / "model.py"
    src.write_text("def f(x, y, n, k):\n    return x\n")
    st = read_pgo_state(_profile(tmp_path, _profiles_root(src)))
    assert st.problem is None and st.job == "job1" and st.cache_key == "job1_None_"
    code = st.codes[0]
    assert (code.filename, code.firstlineno, code.name, code.closure_hash) == (str(src), 3, "f", None)
    x, y, n, k = code.sources
    assert (x.source, x.dims, x.rank, x.every_dim) == ("L['x']", (1,), 2, False)
    assert (y.dims, y.rank) == ((), 2)
    assert n.every_dim and n.scalar and n.rank is None  # an int that changed: a SymInt
    assert not k.scalar  # an int seen with one value: a constant
    assert [s.source for s in code.dynamic()] == ["L['x']", "L['n']"]
    assert read_pgo_states(tmp_path) == (st,)


def test_only_profile_files_are_read(tmp_path):
    _profile(tmp_path, collections.defaultdict(CodeState), "code_state_a_None_.pkl")
    for other in ("code_state_a_None_.pkl.tmp", "code_state_a_None_.pkl.lock", "other.pkl"):
        (tmp_path / "dynamo" / other).write_bytes(b"garbage")
    assert [s.path.name for s in read_pgo_states(tmp_path)] == ["code_state_a_None_.pkl"]
    assert read_pgo_states(tmp_path / "nowhere") == ()
    assert job_of("code_state_my_job_0_tag.pkl") == "my_job"


@pytest.mark.parametrize("data,code", [
    (b"", "truncated-pickle"),
    (b"not a pickle at all", "corrupt-pickle"),
    (pickle.dumps([1, 2, 3]), "not-a-profile"),
    (pickle.dumps({"a": 1}), "not-a-profile"),
    (b"\x80\x02}q\x00(X\x01\x00\x00\x00a", "truncated-pickle"),
])
def test_a_hostile_or_broken_profile_is_reported_not_raised(tmp_path, data, code):
    st = read_pgo_state(_profile(tmp_path, data))
    assert st.codes == () and st.problem is not None and st.problem.code == code, st.problem


def test_a_profile_runs_nothing_it_names(tmp_path):
    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {tmp_path / 'ran'}",))

    st = read_pgo_state(_profile(tmp_path, pickle.dumps({Evil(): 1})))
    assert st.problem is not None and not (tmp_path / "ran").exists()
    # the code scan names the call torch's get_code_state would make (posix.system on Linux)
    assert [f.name for f in st.foreign] == [f"{os.system.__module__}.system"], st.foreign
    assert st.problem.code == "foreign-global" and f"system('touch {tmp_path}" in st.problem


def test_limits_bound_the_work(tmp_path, monkeypatch):
    src = tmp_path / "m.py"
    src.write_text("x = 1\n")
    path = _profile(tmp_path, _profiles_root(src))
    # Decoded here (a worker forked before the patch would not see it).
    monkeypatch.setattr(pgo, "MAX_PGO_NODES", 3)
    with pytest.raises(EntryDecodeError) as err:
        pgo.decode_pgo_state(path.read_bytes())
    assert err.value.message.code == "too-many-objects"
    with open(path, "r+b") as f:  # sparse: one byte over the limit, never read
        f.truncate(pgo.MAX_PGO_BYTES + 1)
    assert read_pgo_state(path).problem.code == "over-size-limit"


def test_a_symlinked_profile_is_not_followed(tmp_path):
    target = tmp_path / "elsewhere.pkl"
    target.write_bytes(dumps(collections.defaultdict(CodeState)))
    (tmp_path / "dynamo").mkdir()
    (tmp_path / "dynamo" / "code_state_j_None_.pkl").symlink_to(target)
    (st,) = read_pgo_states(tmp_path)
    assert st.problem is not None and st.problem.code == "unreadable"


def test_file_hash_is_torchs(tmp_path):
    f = tmp_path / "a.py"
    f.write_bytes(b"print(1)\n")
    assert file_hash(str(f)) == format(zlib.crc32(b"print(1)\n") & 0xFFFFFFFF, "08x")
    assert file_hash(str(tmp_path / "gone.py")) == str(tmp_path / "gone.py")


class _Catalog:
    """What :class:`Profiles` reads of a catalog: the cache dir."""

    def __init__(self, root: Path) -> None:
        self.scan = types.SimpleNamespace(root=root)

    def has_pgo_state(self) -> bool:
        return (self.scan.root / "dynamo").is_dir()


def test_a_frame_finds_its_code_object_by_file_name_and_nearest_line(tmp_path):
    src = tmp_path / "model.py"
    src.write_text("def f(x):\n    return x\n")
    _profile(tmp_path, _profiles_root(src))
    profiles = Profiles(_Catalog(tmp_path))  # type: ignore[arg-type]
    auto = profiles.for_frame(CompiledFrom("f", str(src), 5))
    assert auto.dims == {("L['x']", 1)} and auto.scalars == {"L['n']"} and auto.uncertain is None
    assert auto.profile and auto.profile.endswith("code_state_job1_None_.pkl")
    assert not profiles.for_frame(CompiledFrom("f", str(src), 12))  # the code at line 10 marks nothing
    assert not profiles.for_frame(CompiledFrom("f", str(src), 2))  # before the code object's first line
    assert not profiles.for_frame(CompiledFrom("g", str(src), 5))
    # The file changed since: torch hashes it anew, finds no such CodeId, and the profile does not apply.
    src.write_text("def f(x):\n    return x + 1\n")
    assert not Profiles(_Catalog(tmp_path)).for_frame(CompiledFrom("f", str(src), 5))  # type: ignore[arg-type]


def test_a_closure_or_two_profiles_that_disagree_leave_it_uncertain(tmp_path):
    src = tmp_path / "model.py"
    src.write_text("def f(x):\n    return x\n")
    h = format(zlib.crc32(src.read_bytes()) & 0xFFFFFFFF, "08x")
    _profile(tmp_path, collections.defaultdict(CodeState, {
        _code_id(str(src), 1, "f", h, closure=1234): _state(**{"L['x']": _entry(AD, (AD,))})}))
    auto = Profiles(_Catalog(tmp_path)).for_frame(CompiledFrom("f", str(src), 2))  # type: ignore[arg-type]
    assert auto.uncertain is not None and auto.uncertain.code == "profile-closure"
    _profile(tmp_path, collections.defaultdict(CodeState, {
        _code_id(str(src), 1, "f", h): _state(**{"L['x']": _entry(AD, (AD,))})}), "code_state_a_None_.pkl")
    _profile(tmp_path, collections.defaultdict(CodeState, {
        _code_id(str(src), 1, "f", h): _state(**{"L['x']": _entry(AD, (3,))})}), "code_state_job1_None_.pkl")
    auto = Profiles(_Catalog(tmp_path)).for_frame(CompiledFrom("f", str(src), 2))  # type: ignore[arg-type]
    assert auto.uncertain is not None and auto.uncertain.code == "profiles-differ"


def test_a_decorated_function_is_the_wrappers_code_object(tmp_path):
    """Dynamo compiles the outermost decorator wrapper's code; fxcache names the key after
    the function it wraps (CompiledFrom.wrappers keeps the wrapper's frame)."""
    src = tmp_path / "model.py"
    src.write_text("def deco(f):\n    def wrapper(*a, **k):\n        return f(*a, **k)\n    return wrapper\n")
    h = format(zlib.crc32(src.read_bytes()) & 0xFFFFFFFF, "08x")
    _profile(tmp_path, collections.defaultdict(CodeState, {
        _code_id(str(src), 2, "wrapper", h): _state(**{"L['a'][0]": _entry(AD, (AD, 3))})}))
    profiles = Profiles(_Catalog(tmp_path))  # type: ignore[arg-type]
    assert not profiles.for_frame(CompiledFrom("f", str(src), 9))
    auto = profiles.for_frame(CompiledFrom("f", str(src), 9, wrappers=(("wrapper", str(src), 3),)))
    assert auto.dims == {("L['a'][0]", 0)}
