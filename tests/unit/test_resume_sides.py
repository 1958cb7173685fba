"""A frame resumed after a jump on the data (fxcache_core/lookup/resume_sides.py): a key of
it that fits the call is undecided (``resume-side-unknown``), as Dynamo makes one resume
frame of that name per side and the data decide which one runs; the frame compiled first,
and resume frames after other graph breaks, are not concerned. Checked against torch in
tests/torch/test_resume_sides.py (``data_branch``: a call whose sum is negative takes the
side the cache does not hold).

The sources are written here; the keys are :class:`KeyMatch` values made here (synthetic:
the rule reads only the key's compiled frame and whether it fits).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey
from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.lookup.match_report import KeyMatch
from fxcache_core.lookup.resume_sides import break_lines, side_unknown, with_side_unknown
from fxcache_core.reasons import Reason

DATA_BRANCH = """\
def data_branch(x):
    y = x.sin()
    if y.sum() > 0:
        z = y.cos()
    else:
        z = y.exp()
    torch._dynamo.graph_break()
    return z * 2
"""


def _frame(tmp_path: Path, src: str, function: str) -> CompiledFrom:
    path = tmp_path / "fns.py"
    path.write_text(src)
    return CompiledFrom(function, str(path), 1, parent="data_branch" if "resume" in function else None)


def _key(frame: CompiledFrom, fits: bool = True, **more) -> KeyMatch:
    k = CacheKey(KeyKind.AOT_AUTOGRAD, "a" * 52, "/nowhere", ())
    return KeyMatch(key=k, fits=fits, compiled=frame, **more)


def test_break_lines_reads_every_resume_of_a_chain() -> None:
    assert break_lines("f") == ()
    assert break_lines("torch_dynamo_resume_in_f_at_3") == (3,)
    assert break_lines("torch_dynamo_resume_in_torch_dynamo_resume_in_f_at_3_at_7") == (3, 7)
    assert break_lines("torch_dynamo_resume_in_my_at_fn_at_12") == (12,)


def test_a_hit_of_the_frame_resumed_at_a_tensor_if_is_undecided_naming_the_line(tmp_path: Path) -> None:
    m = with_side_unknown(_key(_frame(tmp_path, DATA_BRANCH, "torch_dynamo_resume_in_data_branch_at_3")))
    assert m.status == "undecided", m
    (why,) = m.uncertain
    assert why.code == "resume-side-unknown" and "line 3 of data_branch" in why, why


def test_an_aborted_lookup_of_such_a_frame_is_undecided_too(tmp_path: Path) -> None:
    frame = _frame(tmp_path, DATA_BRANCH, "torch_dynamo_resume_in_data_branch_at_3")
    m = with_side_unknown(_key(frame, aborted=Reason("a guard raised", "guard-raised")))
    assert m.status == "undecided" and [code for code in map(lambda r: r.code, m.uncertain)] == [
        "resume-side-unknown", "guard-raised"], m


def test_a_key_that_does_not_fit_stays_ruled_out(tmp_path: Path) -> None:
    frame = _frame(tmp_path, DATA_BRANCH, "torch_dynamo_resume_in_data_branch_at_3")
    m = _key(frame, fits=False, reasons=(Reason("y is 3-d", "rank-differs"),))
    assert with_side_unknown(m) is m and m.status == "no-fit"


@pytest.mark.parametrize("function", [
    "data_branch",                                                          # the first frame
    "torch_dynamo_resume_in_data_branch_at_7",                              # after graph_break(): one frame
])
def test_the_first_frame_and_a_resume_after_a_plain_break_stay_decided(tmp_path: Path, function: str) -> None:
    m = _key(_frame(tmp_path, DATA_BRANCH, function))
    assert side_unknown(m.compiled) is None and with_side_unknown(m) is m


def test_a_resume_of_a_resume_after_a_data_jump_is_undecided(tmp_path: Path) -> None:
    # The frame resumed after graph_break() on line 7 runs only where the side taken at line 3 reaches it.
    frame = _frame(tmp_path, DATA_BRANCH, "torch_dynamo_resume_in_torch_dynamo_resume_in_data_branch_at_3_at_7")
    why = side_unknown(frame)
    assert why is not None and why.code == "resume-side-unknown" and "line 3" in why


@pytest.mark.parametrize("line,src", [
    (3, "def data_branch(x):\n    y = x.sin()\n    while y.sum() > 0:\n        y = y - 1\n    return y\n"),
    (3, "def data_branch(x):\n    y = x.sin()\n    z = y.cos() if y.max() > 0 else y.exp()\n    return z\n"),
    (3, "def data_branch(x):\n    y = x.sin()\n    assert y.sum() > 0\n    return y\n"),
    (3, "def data_branch(x):\n    y = x.sin()\n    z = (y.sum() > 0) and y\n    return z\n"),
    (4, "def data_branch(x):\n    y = x.sin()\n    if (x.numel() > 3 and\n            y.sum() > 0):\n"
        "        y = y.cos()\n    return y\n"),                                  # a test over two lines
], ids=["while", "conditional-expression", "assert", "and", "two-line-test"])
def test_every_kind_of_jump_counts(tmp_path: Path, line: int, src: str) -> None:
    why = side_unknown(_frame(tmp_path, src, f"torch_dynamo_resume_in_data_branch_at_{line}"))
    assert why is not None and why.code == "resume-side-unknown", src


def test_a_jump_in_a_nested_function_on_the_line_does_not_count(tmp_path: Path) -> None:
    src = "def data_branch(x):\n    y = x.sin()\n    g = print(lambda t: t if t else 0)\n    return y\n"
    assert side_unknown(_frame(tmp_path, src, "torch_dynamo_resume_in_data_branch_at_3")) is None


def test_a_source_that_cannot_be_read_leaves_the_side_unknown(tmp_path: Path) -> None:
    frame = CompiledFrom("torch_dynamo_resume_in_data_branch_at_3", str(tmp_path / "gone.py"), 1,
                         parent="data_branch")
    m = with_side_unknown(_key(frame))
    assert m.status == "undecided" and m.uncertain[0].code == "resume-side-unknown"
    assert "cannot be read" in m.uncertain[0]
