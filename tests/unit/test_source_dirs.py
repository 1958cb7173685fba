"""Where a recorded source path is read from (fxcache_core.functions.source_dirs), and the
record that decides a key whose source cannot be read (fxcache_core.lookup.unread_source).
Pure functions on hand-written values: what torch does with them is tested on the recorded
caches (tests/cli/test_source_dirs.py)."""

from __future__ import annotations

import os

import pytest

from fxcache_core.errors import FxcacheError
from fxcache_core.functions.source_dirs import in_force, located, source_dirs, use_source_dirs
from fxcache_core.functions.trees import function_node
from fxcache_core.lookup.binding import parse_shapes
from fxcache_core.lookup.pyvalues import PyValue
from fxcache_core.lookup.unread_source import covering_record
from fxcache_core.trace.constants import GUARDED_LOCALS, guarded_locals


def test_the_longest_old_dir_wins_and_only_at_a_component_boundary():
    dirs = source_dirs({"/a": "/x", "/a/b/": "/y"})
    assert located("/a/b/m.py", dirs) == "/y/m.py"
    assert located("/a/bc/m.py", dirs) == "/x/bc/m.py"  # /a/b is no prefix of /a/bc
    assert located("/a/m.py", dirs) == "/x/m.py"
    assert located("/ab/m.py", dirs) == "/ab/m.py"
    assert located("/elsewhere/m.py", dirs) == "/elsewhere/m.py"
    assert located("/q/m.py", source_dirs({"/": "/r"})) == "/r/q/m.py"


def test_a_mapping_is_in_force_until_put_back():
    assert in_force() == ()
    restore = use_source_dirs({"/a": "/x"})
    try:
        assert located("/a/m.py") == "/x/m.py"
    finally:
        restore()
    assert located("/a/m.py") == "/a/m.py"


@pytest.mark.parametrize("mapping", [{"a": "/x"}, {"/a": "x"}, {"/a": ""}, {"": "/x"}])
def test_a_relative_or_empty_dir_is_refused(mapping):
    with pytest.raises(FxcacheError) as e:
        source_dirs(mapping)
    assert e.value.param == "source_dirs"


def test_one_old_dir_given_twice_is_refused():
    with pytest.raises(FxcacheError, match="mapped twice"):
        source_dirs({"/a": "/x", "/a/": "/y"})


def test_pairs_as_given_are_checked_for_repeats_and_named_by_what_gave_them():
    """The same OLD twice as written (which a dict could not hold) is refused in core, the
    message naming what gave the pairs; the same pair twice is one mapping."""
    with pytest.raises(FxcacheError, match=r"^FXCACHE_SOURCE_DIR: /a is mapped twice \(/x and /y\)$"):
        source_dirs([("/a", "/x"), ("/a", "/y")], "FXCACHE_SOURCE_DIR")
    assert source_dirs([("/a", "/x"), ("/a/", "/x/")]) == (("/a", "/x"),)


def test_guarded_locals_name_every_argument_a_guard_names():
    codes = ["check_tensor(L['x'], Tensor, size=[2])", "L['act'] == 'relu'",
             "___check_obj_id(L['fn'], 1234)", "L['kwargs']['mask'] is None", "len(L['args']) == 1",
             "___check_obj_id(G['F'], 1)"]
    assert guarded_locals(codes) == ("L['act']", "L['args']", "L['fn']", "L['kwargs']['mask']", "L['x']")


def _inputs(*specs: str):
    return parse_shapes(list(specs))


RECORD = {"L['act']": "relu", "#all-guards": True, GUARDED_LOCALS: ("L['act']", "L['x']")}


def test_a_record_with_every_guarded_argument_given_at_its_value_covers_the_call():
    inputs = {**_inputs("x=[8,16]"), "L['act']": PyValue("relu")}
    assert covering_record([RECORD], inputs, frozenset({"L['x']"}), ()) is RECORD


def test_a_record_does_not_cover_a_call_that_leaves_out_an_argument_it_guards():
    """``act`` left out: its default is in the source, which cannot be read."""
    assert covering_record([RECORD], _inputs("x=[8,16]"), frozenset({"L['x']"}), ()) is None


def test_a_record_does_not_cover_another_value_nor_one_it_guards_by_identity():
    inputs = {**_inputs("x=[8,16]"), "L['act']": PyValue("gelu")}
    assert covering_record([RECORD], inputs, frozenset({"L['x']"}), ()) is None
    by_id = {**RECORD, GUARDED_LOCALS: ("L['act']", "L['fn']", "L['x']")}  # fn: an object, not read
    inputs = {**_inputs("x=[8,16]"), "L['act']": PyValue("relu")}
    assert covering_record([by_id], inputs, frozenset({"L['x']"}), ()) is None


def test_a_record_without_all_its_guards_covers_nothing():
    inputs = {**_inputs("x=[8,16]"), "L['act']": PyValue("relu")}
    assert covering_record([{**RECORD, "#all-guards": False}], inputs, frozenset({"L['x']"}), ()) is None
    assert covering_record([{k: v for k, v in RECORD.items() if k != GUARDED_LOCALS}], inputs,
                           frozenset({"L['x']"}), ()) is None


def test_two_files_of_one_size_and_mtime_under_two_mappings_are_parsed_each(tmp_path):
    """A library caller that installs one mapping, then another, in one process: the
    parse caches key the file read (its inode), not the recorded path with its size and
    mtime, which `cp -p` or tar keep equal."""
    for d, n in (("a", 2), ("b", 3)):
        (tmp_path / d).mkdir()
        f = tmp_path / d / "m.py"
        f.write_text(f"def f(x, n={n}):\n    return x * n\n")
        os.utime(f, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    defaults = []
    for d in ("a", "b"):
        restore = use_source_dirs({"/build/src": str(tmp_path / d)})
        try:
            fn = function_node("/build/src/m.py", 1, "f")
            assert fn is not None
            defaults.append(fn.args.defaults[0].value)
        finally:
            restore()
    assert defaults == [2, 3]
