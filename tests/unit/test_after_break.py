"""Which parameters a first frame's source reads only after the graph break its graph
ends at (fxcache_core/lookup/after_break.py, :func:`late_reads`: the part the source
decides; the cache's part, a resume frame at that line and the key's last ops there, is
checked against torch in tests/torch/test_int_arguments.py, ``gated`` and ``gated_early``).

The sources are written here; each names the break line it is asked about (the line of
the ``if`` whose test Dynamo cannot trace).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.lookup.after_break import late_reads

GATED = """\
def f(x, n, k):
    y = x.sin()
    if y.sum() > 0:
        y = y * n
    return y.cos() + n
"""


def _late(tmp_path: Path, src: str, at: int, tensors: frozenset[str] = frozenset({"x"})) -> dict:
    path = tmp_path / "fns.py"
    path.write_text(src)
    frame = CompiledFrom("f", str(path), 1, params=("x", "n", "k"))
    return late_reads(frame, at, tensors)


def test_a_parameter_read_only_after_a_tensor_test_is_the_resume_frames(tmp_path: Path) -> None:
    got = _late(tmp_path, GATED, 3)
    assert set(got) == {"n"}, got  # k is never read: the accounting's "unread" says so
    assert got["n"].code == "after-break" and "after the graph break at line 3" in got["n"]


@pytest.mark.parametrize("src,at", [
    (GATED.replace("    y = x.sin()\n", "    y = x.sin() * n\n"), 3),            # read before the break
    (GATED.replace("if y.sum() > 0:", "if y.sum() > n:"), 3),                    # read in the test itself
    (GATED.replace("if y.sum() > 0:", "if n > 0:"), 3),                          # no tensor's truth: no break
    (GATED.replace("if y.sum() > 0:", "if k:"), 3),
    (GATED.replace("    y = x.sin()\n", "    y = x.sin()\n    g = lambda t: t * n\n"), 4),  # a closure made before
    (GATED.replace("        y = y * n\n", "        n = n + 1\n"), 3),             # assigned
    (GATED.replace("    y = x.sin()\n", "    y = x.sin()\n    locals()\n"), 4),    # frames read dynamically
    ("def f(x, n, k):\n    y = x.sin()\n    if y.sum() > 0: y = y * n\n    return y\n", 3),  # the body on the line
    ("def f(x, n, k):\n    y = x.sin()\n    for _ in range(2):\n        if y.sum() > 0:\n"
     "            y = y * 2\n    return y.cos() + n\n", 4),                        # the break inside a loop
    ("def f(x, n, k):\n    y = x.sin()\n    with open('a'):\n        if y.sum() > 0:\n"
     "            y = y * 2\n    return y.cos() + n\n", 4),                        # nested in a block
    (GATED, 2),                                                                 # not the if's line
], ids=["read-before", "in-the-test", "int-test", "bool-test", "closure-before", "assigned", "locals",
        "one-line", "in-a-loop", "in-a-with", "other-line"])
def test_anything_but_a_read_after_a_tensor_test_of_the_body_says_nothing(tmp_path: Path, src: str,
                                                                           at: int) -> None:
    assert "n" not in _late(tmp_path, src, at)


def test_a_test_on_a_local_of_unknown_kind_says_nothing(tmp_path: Path) -> None:
    # x not known to be a tensor (the call gives none): y's truth may be a Python value's.
    src = GATED.replace("x.sin()", "x * 2").replace("y.sum() > 0", "y > 0")
    assert _late(tmp_path, src, 3) == {"n": _late(tmp_path, src, 3)["n"]}
    assert _late(tmp_path, src, 3, tensors=frozenset()) == {}
