"""The ``functools.partial`` of a compiled function that its own source file binds
(fxcache_core/functions/partials.py): read with ``ast``, never run. What a partial does to
a call is Python's (the frame gets the bound values), so these are source files written
here; the evaluation's ``partial_baked`` family shows torch's lookups for one
(tests/harness/evaluation/families_r4.py)."""

from __future__ import annotations

from fxcache_core.functions.partials import PartialBinding, partial_bindings

SOURCE = '''
import functools
from functools import partial


def scaled(x, scale=1.0, bias=0.0):
    return x * scale + bias


def other(x, scale=1.0):
    return x


a = functools.partial(scaled, scale=3.0)
b = partial(scaled, 2.0, bias=1.0)
c = partial(other, scale=5.0)
d = functools.partial(print, scaled)
'''


def test_every_partial_of_the_function_is_read_with_what_it_binds(tmp_path):
    f = tmp_path / "m.py"
    f.write_text(SOURCE)
    assert partial_bindings(str(f), "scaled") == (
        PartialBinding(14, 0, (("scale", "3.0"),)),
        PartialBinding(15, 1, (("bias", "1.0"),)),
    )
    assert partial_bindings(str(f), "other") == (PartialBinding(16, 0, (("scale", "5.0"),)),)


def test_a_function_no_partial_binds_or_an_unreadable_file_has_none(tmp_path):
    f = tmp_path / "m.py"
    f.write_text(SOURCE)
    assert partial_bindings(str(f), "unbound") == ()
    assert partial_bindings(str(tmp_path / "missing.py"), "scaled") == ()
    bad = tmp_path / "bad.py"
    bad.write_text("def scaled(:\n")
    assert partial_bindings(str(bad), "scaled") == ()
