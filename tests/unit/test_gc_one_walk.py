"""gc's plan reads each thing once: the generated code off the inventory's walk, rows'
proof off the pass that served them, removals located without a copy per field.

Synthetic trees and entries (tests/synth.py): what is checked is that each shortcut
gives what the longer way gives, on names a compile does not write too (symlinks,
keys in the wrong dir, temp files).
"""

from __future__ import annotations

import os
from dataclasses import fields, replace

from fxcache_core.cache.inventory import ContentKind, take_inventory
from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import FileInfo, scan_artifacts
from fxcache_core.prune.deletion import Located
from fxcache_core.prune.removal import Removal
from fxcache_core.prune.rules import artifacts_in

KEY = "c" + "ab" + "c" * 49  # a code key whose dir is "ab"


def test_the_code_read_off_the_inventory_is_what_scan_artifacts_lists(tmp_path):
    root = tmp_path / "c"
    ab = root / "ab"
    ab.mkdir(parents=True)
    for name in (
        KEY + ".py",
        KEY + ".main.cpp",
        KEY + ".so.load_ok",
        ".tmp" + KEY + ".py",
        "c" + "zz" + "c" * 49 + ".py",
        "notes.txt",
        KEY,
    ):  # the wrong dir's key; no extension
        (ab / name).write_text("x = 1\n")
    (ab / "sub").mkdir()
    (ab / "sub" / (KEY + ".py")).write_text("deeper\n")
    (ab / ("c" + "ab" + "d" * 49 + ".py")).symlink_to(ab / (KEY + ".py"))  # a symlinked file
    other = tmp_path / "elsewhere" / "cd"
    other.mkdir(parents=True)
    (other / ("c" + "cd" + "c" * 49 + ".py")).write_text("outside\n")
    (root / "cd").symlink_to(other, target_is_directory=True)  # a symlinked 2-letter dir
    (root / "abc").mkdir()
    (root / "abc" / (KEY + ".py")).write_text("not a 2-letter dir\n")
    (root / "fxgraph").mkdir()
    os.link(ab / (KEY + ".py"), root / "ab" / ("c" + "ab" + "e" * 49 + ".py"))  # a second name
    inv = take_inventory(root, entries=False)
    want = scan_artifacts(root)
    got = artifacts_in(inv)
    assert [(a.key, a.file.where) for a in got] == [(a.key, a.file.where) for a in want]
    assert [a.file for a in got] == [a.file for a in want]
    assert len(got) == 4  # .py, .main.cpp, .so.load_ok and the second name; nothing else


def test_a_removal_located_is_the_same_removal_with_where_it_was_found():
    f = FileInfo("/c/ab/x.py", 3, 1.0, 2.0, 10**9, 7, 9, 11)
    r = Removal(f, KeyKind.CODE, "k", "e", ("why",), None, ContentKind.CODE, ("locks", "k.lock"))
    at = Located(("ab", "x.py"), ((1, 2), (1, 3)))
    assert r.located(at) == replace(r, at=at)
    assert r.located(None) == r
    # Every field but ``at`` is carried over: a field added to Removal must be added there too.
    assert [f.name for f in fields(Removal)] == [
        "file",
        "kind",
        "key",
        "entry",
        "reasons",
        "at",
        "content",
        "lock",
    ]


def test_the_files_of_one_dir_are_located_where_the_first_of_them_was(tmp_path):
    from fxcache_core.prune.deletion import DirWalk, locate, relative_parts

    root = tmp_path / "c"
    for d in ("aotautograd/a1", "aotautograd/a2", "fxgraph/ab/fab"):
        (root / d).mkdir(parents=True)
        for n in ("x", "y", ".tmp"):
            (root / d / n).write_text(n)
    (root / "aotautograd" / "link").symlink_to(root / "aotautograd" / "a1")
    paths = [
        str(root / d) + os.sep + n
        for d in ("aotautograd/a1", "fxgraph/ab/fab", "aotautograd/a2", "aotautograd/a1")
        for n in ("x", "y", ".tmp", "")
    ]
    paths += [
        str(root / "aotautograd" / "link" / "x"),
        str(root / "aotautograd" / "a1") + "/..",
        "/elsewhere/x",
        str(root / "aotautograd" / "a1" / "gone"),
    ]
    with DirWalk(root) as walk:
        one_by_one = []
        for p in paths:
            parts = relative_parts(root, p)
            try:
                one_by_one.append("refused" if parts is None else walk.locate(parts))
            except Exception as e:  # noqa: BLE001 - refused either way
                one_by_one.append(type(e).__name__)
    got = locate(root, paths)
    assert [g if isinstance(g, Located) else "refused" for g in got] == [
        w if isinstance(w, Located) else "refused" for w in one_by_one
    ]
    # 4 x 3 names and the one gone; not a trailing "/", "..", a symlinked dir, outside
    assert sum(isinstance(g, Located) for g in got) == 13
