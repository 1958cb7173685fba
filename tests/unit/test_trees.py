"""Source files parsed whole, once per file identity (fxcache_core.functions.trees), and the
names a function's module binds, read once per parsed module (fxcache_core.lookup.py_names)."""

from __future__ import annotations

import os

from fxcache_core.functions import sources
from fxcache_core.functions.trees import function_node, inside_function, module_node
from fxcache_core.lookup.py_names import shadowed


def test_a_file_is_parsed_once_while_it_is_unchanged_and_again_when_it_changes(tmp_path):
    p = tmp_path / "m.py"
    p.write_text("def f(x):\n    return x\n")
    first = module_node(str(p))
    assert first is not None and module_node(str(p)) is first
    assert function_node(str(p), 1, "f") is first.body[0]
    p.write_text("def f(yy):\n    return yy\n")  # another size
    assert function_node(str(p), 1, "f").args.args[0].arg == "yy"
    q = tmp_path / "q.py"
    q.write_text("def f(z):\n    return z\n")
    os.utime(
        q, ns=(os.stat(p).st_atime_ns, os.stat(p).st_mtime_ns)
    )  # another file, same size and mtime
    assert function_node(str(q), 1, "f").args.args[0].arg == "z"


def test_function_node_takes_the_first_def_in_walk_order_and_its_decorators_first_line(tmp_path):
    p = tmp_path / "m.py"
    p.write_text("@dec\ndef f():\n    pass\n\nclass C:\n    def f(self):\n        pass\n")
    assert function_node(str(p), 1, "f").lineno == 2
    assert function_node(str(p), 2, "f") is None
    assert function_node(str(p), 6, "f").args.args[0].arg == "self"
    assert function_node(str(p), 6, "g") is None


def test_inside_function_sees_enclosing_defs_and_lambdas_not_the_def_itself(tmp_path):
    p = tmp_path / "m.py"
    p.write_text(
        "def outer(a):\n    def inner(b):\n        return b\n    return inner\n\ndef top():\n    pass\n"
    )
    assert inside_function(str(p), function_node(str(p), 2, "inner"))
    assert not inside_function(str(p), function_node(str(p), 6, "top"))
    assert not inside_function(str(p), function_node(str(p), 1, "outer"))
    assert inside_function(str(tmp_path / "absent.py"), function_node(str(p), 6, "top"))


def test_the_trees_kept_stay_within_their_bound(tmp_path, monkeypatch):
    monkeypatch.setattr(sources, "TREES_KEPT", 1)
    paths = []
    for i in range(5):
        p = tmp_path / f"m{i}.py"
        p.write_text(f"def f{i}(x):\n    return x + {i}\n")
        paths.append(str(p))
        assert module_node(str(p)) is not None
    assert [k[0] for k in sources._TREES] == [
        paths[-1]
    ]  # the last one parsed is kept whatever its size
    assert sum(c for _, c in sources._TREES.values()) == sources._kept


def test_shadowed_reads_module_closure_and_own_bindings_each_time_alike(tmp_path):
    p = tmp_path / "m.py"
    p.write_text(
        "min = 3\n\ndef outer(len):\n    def inner(abs):\n        global max\n        return abs\n"
        "    return inner\n\ndef other(round):\n    pass\n"
    )
    inner = function_node(str(p), 4, "inner")
    other = function_node(str(p), 9, "other")
    for _ in range(2):  # the second time from what the first remembered
        assert shadowed(str(p), inner) == {"min", "len", "abs", "max"}
        assert shadowed(str(p), other) == {"min", "round", "max"}


def test_naming_reading_parameters_and_reading_whole_functions_share_one_parse(
    tmp_path, monkeypatch
):
    from fxcache_core.functions.frames import CompiledFrom, unparsed_why
    from fxcache_core.functions.params import frame_reads

    parses = []
    real = sources._parse_counted
    monkeypatch.setattr(
        sources, "_parse_counted", lambda path, data: parses.append(path) or real(path, data)
    )
    p = tmp_path / "shared.py"
    p.write_text("def f(x, clip=False):\n    if clip:\n        return x\n    return -x\n")
    assert unparsed_why(str(p)) is None  # the frames' def index
    assert frame_reads(CompiledFrom(function="f", file=str(p), line=1)).params[1].name == "clip"
    assert function_node(str(p), 1, "f") is module_node(str(p)).body[0]
    assert parses == [str(p)]
