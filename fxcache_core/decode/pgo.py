"""Dynamo's saved profile (its profile-guided automatic-dynamic state), read without running it.

With a job id set (``TORCH_COMPILE_JOB_ID``, ``torch.compiler.config.job_id``),
Dynamo saves what automatic dynamic learnt to
``<cache dir>/dynamo/code_state_<job>:<rank>:<tag>.pkl`` (``:`` and other
characters a file name cannot hold written ``_``; ``code_state_path`` and
``put_local_code_state`` in torch/_dynamo/pgo.py), after every compile. A later
process with the same job id reads it back before it traces anything
(``get_code_state``), so its *first* call already traces the dims the profile
marks dynamic as symbols (``_automatic_dynamic`` in
torch/_dynamo/variables/builder.py).

The file is a pickle of ``defaultdict[CodeId, CodeState]``: per code object
(``CodeId``: ``filename``, ``firstlineno``, ``name``, ``file_hash``, the crc32 of
the file's content that torch compares instead of the file name, and
``closure_hash``) a ``CodeState`` whose ``automatic_dynamic`` maps each source
(``L['x']``) to a ``FrameStateSizeEntry``: ``size`` a tuple of ints and
``auto_dynamic`` (the dims that changed), or ``auto_dynamic`` as a whole (the
rank changed), ``scalar`` an int or ``auto_dynamic`` (for an int or float
argument; a tensor's is always ``auto_dynamic``), ``stride`` likewise.

:func:`read_pgo_state` decodes one such file with the restricted unpickler
(:mod:`fxcache_core.decode.unpickler`: every class an inert stub, never
``pickle.loads``) in a worker process, under the decoding memory and CPU budgets
(:mod:`fxcache_core.decode.workers`), building and visiting at most
:data:`MAX_PGO_NODES` objects (the unpickler stops at the first one past it); a
truncated, hostile or unexpected file, or one over a budget, is reported in
:attr:`PgoState.problem`, never raised. Strides are not read (torch
only makes a stride dynamic when every size is static, a case fxcache does not
judge). Never imports torch.
"""

from __future__ import annotations

import os
import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fxcache_core.decode.code_scan import ForeignGlobal, foreign_globals, with_foreign
from fxcache_core.decode.memlimit import budget_for, decoding_budget
from fxcache_core.decode.unpickler import GlobalUse, Stub, load_stubs, opt_int, opt_str
from fxcache_core.decode.workers import Unfinished, run_all, task
from fxcache_core.errors import EntryDecodeError
from fxcache_core.fsutil import NotRegularFile, open_regular
from fxcache_core.reasons import Reason

__all__ = ["CodeProfile", "PgoState", "SourceHashes", "SourceProfile", "file_hash", "job_of",
           "profile_names", "read_pgo_state", "read_pgo_states"]

MAX_PGO_BYTES = 8 * 1024 * 1024
"""Profiles larger than this (bytes) are not read (a real one holds a few hundred
bytes per compiled function); the size is checked on the open file, before a byte is read."""
MAX_PGO_NODES = 200_000
"""How many objects reading one profile builds (stubs, as the unpickler makes them) and
then visits (code ids, sources, dims) at most."""
MAX_PGO_FILES = 256
"""How many ``code_state_*.pkl`` files of one cache dir are read at most."""
MAX_SOURCE_BYTES = 64 * 1024 * 1024
"""Source files larger than this are not hashed (:func:`file_hash`)."""
MAX_SOURCE_TOTAL_BYTES = 256 * 1024 * 1024
"""How many bytes of source files one :class:`SourceHashes` reads at most, all files
together; a file past it is not hashed."""
_CHUNK = 1024 * 1024

_MODULE = "torch._dynamo.pgo"
_FILE_RE = re.compile(r"^code_state_(?P<key>.+)\.pkl$")


@dataclass(frozen=True)
class SourceProfile:
    """What a profile says about one source of a code object.

    Attributes:
        source: the source (``L['x']``, ``L['n']``), as Dynamo names it.
        dims: the dims whose size is ``auto_dynamic`` (changed between calls).
        every_dim: the size as a whole is ``auto_dynamic`` (the rank changed, or
            the entry is an int's or a float's).
        scalar: ``scalar`` is ``auto_dynamic``: an int or float argument is traced
            as a symbol (always so for a tensor's entry, where it means nothing).
        rank: the number of dims recorded, None when the size is not a tuple.
    """

    source: str
    dims: tuple[int, ...] = ()
    every_dim: bool = False
    scalar: bool = False
    rank: int | None = None

    def dim_dynamic(self, dim: int) -> bool:
        """Whether dim ``dim`` of a tensor source is dynamic (``is_size_dynamic``)."""
        return self.every_dim or dim in self.dims


@dataclass(frozen=True)
class CodeProfile:
    """One code object's automatic-dynamic state (``CodeId`` and ``CodeState``).

    Attributes:
        filename, firstlineno, name: the code object (``co_filename``,
            ``co_firstlineno``, ``co_name``).
        file_hash: the crc32 of the file's bytes as 8 hex digits, or the file name
            when the file did not exist (``_hash_containing_file``); torch matches a
            code object by it, not by ``filename``.
        closure_hash: Python's ``hash`` of the closure's code objects, None without
            a closure.
        sources: every source recorded, in the file's order.
    """

    filename: str
    firstlineno: int
    name: str
    file_hash: str | None
    closure_hash: int | None
    sources: tuple[SourceProfile, ...]

    def source(self, name: str) -> SourceProfile | None:
        return next((s for s in self.sources if s.source == name), None)

    def dynamic(self) -> tuple[SourceProfile, ...]:
        """The sources with a dim (or the value) marked dynamic: a dim of a tensor's
        size tuple, or an int's or float's entry (its size ``auto_dynamic`` as a whole)
        whose ``scalar`` is ``auto_dynamic`` (a tensor's always is: it does not count)."""
        return tuple(s for s in self.sources if s.dims or (s.rank is None and s.every_dim and s.scalar))


@dataclass(frozen=True)
class PgoState:
    """One saved profile file.

    Attributes:
        path: the file.
        cache_key: what torch named it by, as the file name holds it (``job_None_``
            for job id ``job``, no rank, no tag: ``<job>:<rank>:<tag>`` with ``:``
            written ``_``).
        codes: the code objects it records.
        problem: why it could not be read (truncated, not a profile, over a limit):
            then ``codes`` is empty.
        foreign: the globals it names that torch does not write in a profile
            (:mod:`fxcache_core.decode.code_scan`): torch's ``get_code_state`` would
            run them, with every compile of the job.
    """

    path: Path
    cache_key: str
    codes: tuple[CodeProfile, ...] = ()
    problem: Reason | None = None
    foreign: tuple[ForeignGlobal, ...] = ()

    @property
    def job(self) -> str:
        """The job id as far as the file name tells it (:func:`job_of`)."""
        return job_of(self.path.name)


def job_of(name: str) -> str:
    """The job id of a profile's file name as far as it tells it: ``job`` of
    ``code_state_job_None_.pkl`` (``<job>:<rank>:<tag>``, ``:`` written ``_``)."""
    m = _FILE_RE.match(os.path.basename(name))
    key = m.group("key") if m else name
    return re.sub(r"_(None|[0-9]+)_[^_]*$", "", key) or key


def _is_auto_dynamic(v: Any) -> bool:
    return isinstance(v, Stub) and v.stub_name == "AutoDynamic" and v.stub_module == _MODULE


class _Budget:
    def __init__(self) -> None:
        self.left = MAX_PGO_NODES

    def take(self, n: int = 1) -> None:
        self.left -= n
        if self.left < 0:
            raise EntryDecodeError(Reason(f"the profile has more than {MAX_PGO_NODES} objects",
                                          "too-many-objects"))


def _items(v: Any) -> list[tuple[Any, Any]]:
    """The items of a (stubbed) ``defaultdict``/``dict``."""
    if isinstance(v, dict):
        return list(v.items())
    if isinstance(v, Stub) and v.stub_name in ("defaultdict", "OrderedDict", "dict"):
        return list(v._dict.items())
    raise EntryDecodeError(Reason(f"expected a dict, found {type(v).__name__}", "not-a-profile"))


def _source(name: str, entry: Any, budget: _Budget) -> SourceProfile:
    if not (isinstance(entry, Stub) and entry.stub_name == "FrameStateSizeEntry"):
        raise EntryDecodeError(Reason(f"{name}: not a FrameStateSizeEntry", "not-a-profile"))
    size = entry.field("size")
    dims: list[int] = []
    every, rank = False, None
    if _is_auto_dynamic(size):
        every = True
    elif isinstance(size, tuple):
        budget.take(len(size))
        rank = len(size)
        dims = [i for i, s in enumerate(size) if _is_auto_dynamic(s)]
    return SourceProfile(name, tuple(dims), every, _is_auto_dynamic(entry.field("scalar")), rank)


def _code(code_id: Any, state: Any, budget: _Budget) -> CodeProfile:
    if not (isinstance(code_id, Stub) and code_id.stub_name == "CodeId"):
        raise EntryDecodeError(Reason("a key of the profile is not a CodeId", "not-a-profile"))
    filename, name = opt_str(code_id.field("filename")), opt_str(code_id.field("name"))
    line = opt_int(code_id.field("firstlineno"))
    if filename is None or name is None or line is None:
        raise EntryDecodeError(Reason("a CodeId lacks its file, line or name", "not-a-profile"))
    closure = code_id.field("closure_hash")
    auto = state.field("automatic_dynamic") if isinstance(state, Stub) else None
    sources = []
    for src, entry in _items(auto) if auto is not None else ():
        budget.take()
        if isinstance(src, str):
            sources.append(_source(src, entry, budget))
    return CodeProfile(filename, line, name, opt_str(code_id.field("file_hash")),
                       opt_int(closure), tuple(sources))


def decode_pgo_state(data: bytes, uses: dict[str, GlobalUse] | None = None) -> tuple[CodeProfile, ...]:
    """The code objects a profile's bytes record; ``uses``, when given, is filled
    with the globals the pickle names (:func:`~fxcache_core.decode.unpickler.load_stubs`).

    Raises:
        EntryDecodeError: the bytes are truncated, corrupt, not a profile, or
            hold more than :data:`MAX_PGO_NODES` objects (``EntryTooLarge``:
            decoding needs more than the memory budget).
    """
    if len(data) > MAX_PGO_BYTES:
        raise EntryDecodeError(Reason(f"the profile is {len(data)} bytes, over the {MAX_PGO_BYTES} limit",
                                      "over-size-limit"))
    try:
        with decoding_budget(len(data)):
            root, _ = load_stubs(data, max_objects=MAX_PGO_NODES, uses=uses)
            budget = _Budget()
            codes = []
            for code_id, state in _items(root):
                budget.take()
                codes.append(_code(code_id, state, budget))
            return tuple(codes)
    except EntryDecodeError:
        raise
    except MemoryError:
        raise EntryDecodeError(Reason(f"decoding it needs more than fxcache's memory budget "
                                      f"({budget_for(len(data)) >> 20} MiB)", "over-memory-budget")) from None
    except RecursionError:
        raise EntryDecodeError(Reason("the profile nests too deeply", "nests-too-deeply")) from None
    except Exception as e:  # a field of an unexpected shape
        raise EntryDecodeError(Reason(f"unexpected profile content: {type(e).__name__}: {e}"[:300],
                                      "unexpected-content")) from None


def read_pgo_state(path: Path) -> PgoState:
    """One saved profile file (see the module docstring); never raises: a file that
    cannot be read or decoded has :attr:`PgoState.problem` set. Opened without
    following a symlink and non-blocking (a FIFO or device put there is reported
    unreadable, never waited on); one over :data:`MAX_PGO_BYTES` is not read.
    Read and decoded in a worker process, under the CPU budget (``over-cpu-budget``)."""
    return _read_in_workers([path])[0]


def read_pgo_states(cache_dir: Path) -> tuple[PgoState, ...]:
    """Every saved profile of a cache dir (``dynamo/code_state_*.pkl``, in name order,
    at most :data:`MAX_PGO_FILES`; torch's ``.tmp`` and ``.lock`` files beside them
    are not profiles), as :func:`read_pgo_state` reads each. Empty when the dir has none."""
    names = profile_names(cache_dir)
    return tuple(_read_in_workers([cache_dir / "dynamo" / n for n in names[:MAX_PGO_FILES]]))


def _read_in_workers(paths: list[Path]) -> list[PgoState]:
    out: list[PgoState] = [PgoState(p, "") for p in paths]

    def took(i: int, value: Any) -> None:
        if isinstance(value, Unfinished):
            out[i] = PgoState(paths[i], _key_of(paths[i]), problem=value.reason)
        else:
            out[i] = _state_from_json(paths[i], value)

    run_all("pgo-profile", [os.fsdecode(p) for p in paths], [_size(p) for p in paths], 1, took)
    return out


def _size(path: Path) -> int:
    """The profile's size as ``lstat`` gives it now, for its CPU budget (at most
    :data:`MAX_PGO_BYTES`: a larger one is not read)."""
    try:
        return min(os.lstat(path).st_size, MAX_PGO_BYTES)
    except OSError:
        return 0


def _key_of(path: Path) -> str:
    m = _FILE_RE.match(path.name)
    return m.group("key") if m else path.name


@task("pgo-profile")
def _profile_task(where: str) -> list:
    """Worker side: a profile's path -> ``[key, codes, problem, foreign]`` (:func:`_state_from_json`)."""
    st = _read_here(Path(where))
    codes = [[c.filename, c.firstlineno, c.name, c.file_hash, c.closure_hash,
              [[s.source, list(s.dims), s.every_dim, s.scalar, s.rank] for s in c.sources]] for c in st.codes]
    return [st.cache_key, codes, None if st.problem is None else [st.problem.text, st.problem.code],
            [[f.name, list(f.uses), f.call] for f in st.foreign]]


def _state_from_json(path: Path, value: list) -> PgoState:
    key, codes, problem, foreign = value
    return PgoState(path, key, tuple(
        CodeProfile(f, line, name, fh, ch, tuple(SourceProfile(src, tuple(dims), every, scalar, rank)
                                                 for src, dims, every, scalar, rank in sources))
        for f, line, name, fh, ch, sources in codes), None if problem is None else Reason(*problem),
        foreign=tuple(ForeignGlobal(str(n), tuple(map(str, u)), str(c)) for n, u, c in foreign))


def _read_here(path: Path) -> PgoState:
    """:func:`read_pgo_state` in this process (a worker's part: unbounded in CPU)."""
    key = _key_of(path)
    try:
        fd = open_regular(path, follow_symlinks=False, noatime=True)
        with os.fdopen(fd, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > MAX_PGO_BYTES:
                return PgoState(path, key, problem=Reason(
                    f"the profile is {size} bytes, over the {MAX_PGO_BYTES} limit", "over-size-limit"))
            data = f.read(MAX_PGO_BYTES + 1)
    except NotRegularFile:
        return PgoState(path, key, problem=Reason("cannot read it: not a regular file", "unreadable"))
    except OSError as e:
        return PgoState(path, key, problem=Reason(f"cannot read it: {e.strerror or e}", "unreadable"))
    uses: dict[str, GlobalUse] = {}
    try:
        codes = decode_pgo_state(data, uses)
    except EntryDecodeError as e:
        found = foreign_globals("pgo", uses)
        why = with_foreign(e, found).message
        return PgoState(path, key, problem=why if isinstance(why, Reason) else Reason(why, "corrupt-pickle"),
                        foreign=found)
    return PgoState(path, key, codes, foreign=foreign_globals("pgo", uses))


def profile_names(cache_dir: Path) -> list[str]:
    """The names of a cache dir's saved profiles (``dynamo/code_state_*.pkl``), sorted;
    torch's ``.tmp`` and ``.lock`` files beside them are not profiles. Empty when the
    dir has none or cannot be listed."""
    try:
        return sorted(n for n in os.listdir(cache_dir / "dynamo") if _FILE_RE.match(n))
    except OSError:
        return []


class SourceHashes:
    """torch's ``_hash_containing_file`` (torch/_dynamo/pgo.py) for the source files of
    one run: each file is read and checksummed once, however many profiles name it
    (remembered by ``(st_dev, st_ino, st_size, st_mtime_ns)`` of the open file), in
    1 MiB chunks, and at most :data:`MAX_SOURCE_TOTAL_BYTES` are read in all.

    Calling it with a path gives what :func:`file_hash` gives; a file past the total
    is not hashed (None: nothing is known).
    """

    def __init__(self, total: int = MAX_SOURCE_TOTAL_BYTES) -> None:
        self._known: dict[tuple[int, int, int, int], str | None] = {}
        self.left = total

    def __call__(self, path: str) -> str | None:
        if not os.path.exists(path):
            return path
        try:
            fd = open_regular(path, noatime=True)  # followed, as torch's open follows it
        except OSError:
            return None
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            k = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
            if k not in self._known:
                self._known[k] = self._crc(f, st.st_size)
            return self._known[k]

    def _crc(self, f: Any, size: int) -> str | None:
        if size > MAX_SOURCE_BYTES or size > self.left:
            return None
        crc, n = 0, 0
        try:
            while chunk := f.read(_CHUNK):
                n += len(chunk)
                if n > MAX_SOURCE_BYTES or n > self.left:  # grew while read
                    self.left -= n
                    return None
                crc = zlib.crc32(chunk, crc)
        except OSError:
            return None
        self.left -= n
        return format(crc & 0xFFFFFFFF, "08x")


def file_hash(path: str) -> str | None:
    """What torch's ``_hash_containing_file`` (torch/_dynamo/pgo.py) gives for
    ``path`` here: the crc32 of its bytes as 8 hex digits, or ``path`` itself when
    it does not exist. None when it exists but cannot be read, is not a regular
    file, or is larger than :data:`MAX_SOURCE_BYTES`: then nothing is known. For
    many paths in one run, :class:`SourceHashes` reads each file once."""
    return SourceHashes()(path)
