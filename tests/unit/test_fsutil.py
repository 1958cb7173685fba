"""Link-safe file access lives in one module, and that module keeps its promises.

- No module of ``fxcache_core`` or ``fxcache_cli`` but :mod:`fxcache_core.fsutil`
  names ``O_NOFOLLOW``, ``O_DIRECTORY``, ``O_NOATIME`` or ``O_NONBLOCK`` (as an
  attribute, a name, an imported name or the string ``getattr`` is given), so no
  command builds open flags of its own; the check is shown to fail on planted modules.
- :mod:`fxcache_core.fsutil` itself, on synthetic dirs in ``tmp_path`` (links,
  FIFOs, swapped dirs and refused ``O_NOATIME`` are what a real cache cannot be
  made to show on demand): its walker refuses a symlinked level and a dir
  re-pointed mid-walk, a FIFO is refused without blocking, a file over the cap is
  not read, and a refused ``O_NOATIME`` falls back to a plain open.
"""

from __future__ import annotations

import ast
import os
import shutil
import signal
import stat
import threading
from pathlib import Path

import pytest

from fxcache_core import fsutil
from fxcache_core.fsutil import (
    DirRefused,
    DirWalker,
    NotRegularFile,
    WalkFailure,
    create_new,
    open_noatime,
    open_regular,
    open_subdir,
    read_capped,
)

REPO = Path(__file__).resolve().parents[1]
while not (REPO / "pyproject.toml").is_file():  # tests/<tier>/ or tests/
    REPO = REPO.parent
PACKAGES = ("fxcache_core", "fxcache_cli")
FLAGS = frozenset({"O_NOFOLLOW", "O_DIRECTORY", "O_NOATIME", "O_NONBLOCK"})
HOME = Path("fxcache_core") / "fsutil.py"


def _flag_uses(root: Path) -> list[str]:
    """``path:line: name`` for every mention of an open flag of :data:`FLAGS` in the
    packages under ``root``, outside :data:`HOME`: ``os.O_X``, a bare ``O_X``, ``from
    os import O_X`` or the string ``"O_X"`` (``getattr(os, "O_X", 0)``). Docstrings
    that name a flag in prose are not mentions (the string is not the flag alone)."""
    found = []
    for pkg in PACKAGES:
        for path in sorted((root / pkg).rglob("*.py")):
            rel = path.relative_to(root)
            if rel == HOME:
                continue
            for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
                if isinstance(node, ast.Attribute):
                    name = node.attr
                elif isinstance(node, ast.Name):
                    name = node.id
                elif isinstance(node, ast.alias):
                    name = node.name
                elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                    name = node.value
                else:
                    continue
                if name in FLAGS:
                    found.append(f"{rel}:{getattr(node, 'lineno', '?')}: {name}")
    return found


def test_no_module_but_fsutil_builds_its_own_open_flags():
    found = _flag_uses(REPO)
    assert not found, "open flags outside fxcache_core/fsutil.py (use its functions):\n" + "\n".join(found)


def test_the_flag_check_fails_on_a_flag_planted_in_a_copy_of_the_tree(tmp_path):
    for pkg in PACKAGES:
        shutil.copytree(REPO / pkg, tmp_path / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    keys = tmp_path / "fxcache_core" / "cache" / "keys.py"
    text = keys.read_text()
    keys.write_text(text + '\n_PLANTED = getattr(os, "O_NOFOLLOW", 0)\n')
    n = len(text.splitlines()) + 2
    assert _flag_uses(tmp_path) == [f"fxcache_core/cache/keys.py:{n}: O_NOFOLLOW"]


def test_the_flag_check_finds_every_way_to_name_a_flag(tmp_path):
    core = tmp_path / "fxcache_core"
    (core / "cache").mkdir(parents=True)
    (tmp_path / "fxcache_cli").mkdir()
    (core / "fsutil.py").write_text("import os\nFLAGS = os.O_NOFOLLOW | os.O_DIRECTORY\n")
    (core / "cache" / "clean.py").write_text('"""Opened with ``O_NOFOLLOW`` (prose, not a flag)."""\n')
    (core / "cache" / "attr.py").write_text("import os\nfd = os.open('x', os.O_RDONLY | os.O_NOFOLLOW)\n")
    (core / "cache" / "getattr_.py").write_text('import os\nF = getattr(os, "O_NOATIME", 0)\n')
    (core / "cache" / "from_.py").write_text("from os import O_NONBLOCK\n")
    (tmp_path / "fxcache_cli" / "name.py").write_text("def f(O_DIRECTORY):\n    return O_DIRECTORY\n")
    found = _flag_uses(tmp_path)
    assert sorted(found) == sorted([
        "fxcache_core/cache/attr.py:2: O_NOFOLLOW",
        "fxcache_core/cache/getattr_.py:2: O_NOATIME",
        "fxcache_core/cache/from_.py:1: O_NONBLOCK",
        "fxcache_cli/name.py:2: O_DIRECTORY",
    ]), found


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A dir outside the root holding a secret, the target of planted links."""
    out = tmp_path / "outside"
    (out / "b").mkdir(parents=True)
    (out / "b" / "secret").write_bytes(b"s")
    return out


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "root"
    (r / "a" / "b").mkdir(parents=True)
    (r / "a" / "b" / "f").write_bytes(b"data")
    return r


def _ids(*paths: Path) -> tuple[tuple[int, int], ...]:
    return tuple((s.st_dev, s.st_ino) for s in map(os.stat, paths))


def test_the_walker_opens_each_level_and_reports_their_ids(root):
    with DirWalker(root) as w:
        fd, chain = w.walk(("a", "b"))
        assert os.stat("f", dir_fd=fd).st_size == 4
        assert chain == _ids(root, root / "a", root / "a" / "b")
        assert w.walk(("a", "b"), chain)[0] == fd  # kept: one open per dir


def test_a_symlinked_component_is_refused_by_the_walker(root, outside):
    (root / "a" / "b" / "f").unlink()
    (root / "a" / "b").rmdir()
    (root / "a" / "b").symlink_to(outside / "b")
    with DirWalker(root) as w:
        for make in (False, True):
            with pytest.raises(DirRefused) as e:
                w.walk(("a", "b"), make=make)
            assert e.value.parts == ("a", "b") and e.value.why is WalkFailure.NOT_A_DIR
        assert w.made == []
    parent = os.open(root / "a", os.O_RDONLY)
    try:
        with pytest.raises(DirRefused) as e:
            open_subdir("b", parent)
    finally:
        os.close(parent)
    assert e.value.parts == ("b",) and e.value.why is WalkFailure.NOT_A_DIR


def test_a_symlinked_root_is_followed_as_the_user_named_it(root, tmp_path):
    (tmp_path / "link").symlink_to(root)
    with DirWalker(tmp_path / "link") as w:
        assert w.root_id == _ids(root)[0]
        w.walk(("a", "b"))


def test_a_missing_level_is_gone_unless_made(root):
    with DirWalker(root) as w:
        with pytest.raises(DirRefused) as e:
            w.walk(("a", "new", "deeper"))
        assert e.value.parts == ("a", "new") and e.value.why is WalkFailure.GONE
        w.walk(("a", "new", "deeper"), make=True)
        assert w.made == [("a", "new"), ("a", "new", "deeper")]
    assert (root / "a" / "new" / "deeper").is_dir()


def test_a_dir_re_pointed_mid_walk_is_refused(root, outside, tmp_path, monkeypatch):
    """The moment the walk comes to open ``b`` (its parent already open), ``b`` is
    swapped for a symlink to a dir outside: the open does not follow it."""
    real_open = os.open

    def open_(p, flags, mode=0o777, *, dir_fd=None):
        if dir_fd is not None and p == "b" and not (root / "a" / "b").is_symlink():
            os.rename(root / "a" / "b", tmp_path / "parked")
            os.symlink(outside / "b", root / "a" / "b")
        return real_open(p, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", open_)
    with DirWalker(root) as w:
        with pytest.raises(DirRefused) as e:
            w.walk(("a", "b"))
    assert e.value.parts == ("a", "b") and e.value.why is WalkFailure.NOT_A_DIR


def test_a_dir_replaced_by_another_dir_since_its_ids_were_taken_is_refused(root, tmp_path):
    with DirWalker(root) as w:
        _fd, chain = w.walk(("a", "b"))
    os.rename(root / "a", tmp_path / "old-a")
    (root / "a" / "b").mkdir(parents=True)
    with DirWalker(root) as w:
        with pytest.raises(DirRefused) as e:
            w.walk(("a", "b"), chain)
        assert e.value.parts == ("a",) and e.value.why is WalkFailure.REPLACED
        with pytest.raises(DirRefused) as e:  # the root itself is another dir
            w.walk(("a",), ((0, 0), chain[1]))
        assert e.value.parts == () and e.value.why is WalkFailure.REPLACED


def test_the_walker_keeps_a_bounded_number_of_dirs_open(root):
    for i in range(10):
        (root / f"d{i}").mkdir()
    with DirWalker(root, keep=3) as w:
        for i in range(10):
            w.walk((f"d{i}",))
        assert len(w._fds) == 3
    assert w.root_fd == -1


def _no_hang(seconds: int = 5):
    """Fail the test (SIGALRM) instead of blocking forever on a FIFO open."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("needs the main thread for SIGALRM")

    def boom(*_):
        raise AssertionError("blocked opening a FIFO")

    signal.signal(signal.SIGALRM, boom)
    signal.alarm(seconds)


def test_a_fifo_is_opened_without_blocking_and_refused_as_not_regular(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    _no_hang()
    try:
        with pytest.raises(NotRegularFile) as e:
            open_regular(fifo)
        assert stat.S_ISFIFO(e.value.mode) and isinstance(e.value, OSError)
        parent = os.open(tmp_path, os.O_RDONLY)
        try:
            with pytest.raises(NotRegularFile):
                open_regular(fifo.name, dir_fd=parent, follow_symlinks=False, noatime=True)
        finally:
            os.close(parent)
        assert read_capped(fifo, 100) is None
    finally:
        signal.alarm(0)


def test_a_regular_file_comes_back_blocking_and_a_symlink_is_refused_when_asked(tmp_path):
    f = tmp_path / "f"
    f.write_bytes(b"x")
    fd = open_regular(f)
    try:
        assert os.get_blocking(fd)
    finally:
        os.close(fd)
    (tmp_path / "link").symlink_to(f)
    with pytest.raises(OSError) as e:
        open_regular(tmp_path / "link", follow_symlinks=False)
    assert fsutil.is_link_refusal(e.value)
    assert read_capped(tmp_path / "link", 10, follow_symlinks=False) is None
    assert read_capped(tmp_path / "link", 10) == b"x"


def test_a_file_over_the_cap_is_not_read(tmp_path):
    f = tmp_path / "f"
    f.write_bytes(b"y" * 101)
    assert read_capped(f, 100) is None
    assert read_capped(f, 101) == b"y" * 101
    assert read_capped(tmp_path / "missing", 100) is None
    assert read_capped(tmp_path, 100) is None  # a dir


@pytest.mark.skipif(not fsutil.NOATIME_AVAILABLE, reason="no O_NOATIME on this OS")
def test_a_refused_noatime_open_falls_back_to_a_plain_open(tmp_path, monkeypatch):
    """``O_NOATIME`` is refused (EPERM) for a file of another user; the file is still read."""
    f = tmp_path / "f"
    f.write_bytes(b"z")
    real_open, tried = os.open, []

    def open_(p, flags, mode=0o777, *, dir_fd=None):
        tried.append(flags)
        if flags & os.O_NOATIME:
            raise PermissionError(1, "Operation not permitted", p)
        return real_open(p, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", open_)
    fd = open_noatime(f, follow_symlinks=False)
    with os.fdopen(fd, "rb") as fh:
        assert fh.read() == b"z"
    assert [bool(t & os.O_NOATIME) for t in tried] == [True, False]
    assert all(t & os.O_NOFOLLOW for t in tried)
    assert read_capped(f, 10) == b"z"


@pytest.mark.skipif(not fsutil.NOATIME_AVAILABLE, reason="no O_NOATIME on this OS")
def test_a_refused_plain_open_is_not_retried(tmp_path):
    with pytest.raises(FileNotFoundError):
        open_noatime(tmp_path / "missing")


def test_a_new_file_is_never_made_through_a_symlink(tmp_path, outside):
    (tmp_path / "planted").symlink_to(outside / "b" / "secret")
    with pytest.raises(FileExistsError):
        create_new(tmp_path / "planted", 0o600)
    (tmp_path / "dangling").symlink_to(outside / "nothing")
    parent = os.open(tmp_path, os.O_RDONLY)
    try:
        with pytest.raises(FileExistsError):
            create_new("dangling", 0o600, dir_fd=parent)
    finally:
        os.close(parent)
    assert not (outside / "nothing").exists() and (outside / "b" / "secret").read_bytes() == b"s"
    os.close(create_new(tmp_path / "new", 0o600))
    assert stat.S_IMODE(os.stat(tmp_path / "new").st_mode) == 0o600
