"""The lines a key's graph was traced from, compared with its source file as it is now
(fxcache_core/lookup/source_lines.py), on printed text: graphs and stacks as torch
prints them (torch/fx/graph.py ``_parse_stack_trace``, ``traceback.format_list``)."""

from __future__ import annotations

import os

import pytest

from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.functions.params import frame_reads
from fxcache_core.functions.source_dirs import withhold
from fxcache_core.functions.sources import source_lines
from fxcache_core.functions.statements import statement_spans
from fxcache_core.lookup.source_lines import first_change, printed_lines, same_code, stack_lines
from fxcache_core.reasons import Reason

GRAPH = """class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "Sym(s0)", arg1_1: "f32[s0]"):
         # File: /src/m.py:6 in f, code: y = x * 2
        mul: "f32[s0]" = torch.ops.aten.mul.Tensor(arg1_1, 2);  arg1_1 = None

         # Annotation: {'a': 1} File: /src/m.py:8 in f, code: return y + 1  # done
        add: "f32[s0]" = torch.ops.aten.add.Tensor(mul, 1);  mul = None
        return (add,)
"""

STACK = """  File "/src/m.py", line 12, in f
    y = helper(x)
  File "/src/h.py", line 3, in helper
    return x.sin()
  File "<string>", line 1, in g
"""


def test_printed_lines_read_every_file_comment_with_its_code():
    assert list(printed_lines(GRAPH)) == [
        ("/src/m.py", 6, "y = x * 2"),
        ("/src/m.py", 8, "return y + 1  # done"),
    ]


def test_stack_lines_pair_each_frame_with_its_code_and_skip_one_without():
    assert list(stack_lines(STACK)) == [
        ("/src/m.py", 12, "y = helper(x)"),
        ("/src/h.py", 3, "return x.sin()"),
    ]


@pytest.mark.parametrize(
    "recorded,now",
    [
        ("y = x * 2", "        y = x * 2   "),  # indentation and trailing blanks: torch strips them
        ("y = x * 2", "y=x*2"),
        ("return f(a, b)[0]", "return f( a,b )[ 0 ]  # a comment"),
        ("s = 'a  b'", "s  =  'a  b'"),
        ('s = """x  # y"""', 's = """x  # y"""'),
    ],
)
def test_the_same_tokens_are_the_same_code(recorded, now):
    assert same_code(recorded, now)


@pytest.mark.parametrize(
    "recorded,now",
    [
        ("y = x * 2", "y = x * 3"),
        ("s = 'a  b'", "s = 'a b'"),  # inside a string, a space is the value
        ("return not x", "return notx"),  # between two words, a space is a separator
        ("y = x if a else b", "y = x if a  else b"),  # and kept as written
        ("s = '''a  b", "s = '''a b"),  # a string that goes on past the line: the exact text only
    ],
)
def test_another_token_or_string_is_another_code(recorded, now):
    assert not same_code(recorded, now)


def test_first_change_names_the_line_its_recorded_text_and_the_files(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("def f(x):\n    y = x * 3\n    return y + 1\n")
    p = str(src)
    assert first_change([(p, 2, "y = x * 3"), (p, 3, "return y+1")]) is None
    path, why = first_change([(p, 3, "return y + 1"), (p, 2, "y = x * 2")])
    assert path == p and why.code == "source-changed"
    assert (
        why
        == f"changed since the compile: line 2 of {p} reads `y = x * 3` where the compile traced `y = x * 2`"
    )
    _, why = first_change([(p, 9, "return y")])
    assert "has 3 lines, and the compile traced line 9 (`return y`)" in why
    assert first_change([(str(tmp_path / "gone.py"), 2, "y = x * 2"), ("<string>", 1, "x")]) is None


MULTI = """import torch


@torch.compile(
    dynamic=False)
def f_ml(x, t,
         u=1):
    \"\"\"Two lines
    of docstring.\"\"\"
    y = (x * t
         + 2.0)
    for i in range(
            2):
        y = y + i
    if t: z = (1,
               2)
    return y
"""


def test_statement_spans_give_each_line_of_a_statement_of_several_lines_its_first_and_last(
    tmp_path,
):
    """A compound statement counts its head only (decorators, arguments, the iterable up
    to the colon), never its body; a one-line body on the head's line joins its span."""
    src = tmp_path / "m.py"
    src.write_text(MULTI)
    mtime, spans = statement_spans(str(src))
    assert mtime == os.stat(src).st_mtime_ns
    assert spans == {
        4: (4, 7),
        5: (4, 7),
        6: (4, 7),
        7: (4, 7),
        8: (8, 9),
        9: (8, 9),
        10: (10, 11),
        11: (10, 11),
        12: (12, 13),
        13: (12, 13),
        15: (15, 16),
        16: (15, 16),
    }
    src.write_text("def f(x:\n    return x\n")
    assert statement_spans(str(src))[1] is None  # does not parse
    assert statement_spans(str(tmp_path / "gone.py")) is None


def test_a_line_of_a_statement_of_several_lines_is_undecided_where_the_file_is_not_older(tmp_path):
    """torch records a statement's first line only (``traceback.FrameSummary.line``): with
    ``y = (x * t`` recorded and ``+ 2.0)`` edited to ``+ 3.0)`` every recorded line still
    agrees, and torch misses. A file older than the key's oldest entry is compared as the
    lines say; one written since is not."""
    src = tmp_path / "m.py"
    src.write_text(MULTI.replace("+ 2.0)", "+ 3.0)"))
    p, mtime = str(src), os.stat(src).st_mtime_ns
    lines = [(p, 10, "y = (x * t"), (p, 17, "return y")]
    assert first_change(lines) is None
    assert first_change(lines, mtime + 1) is None  # the file is older than every entry
    path, why = first_change(lines, mtime)
    assert path == p and why.code == "source-changed"
    assert why == (
        f"may have changed since the compile: line 10 of {p} starts a statement of 2 "
        f"lines, and the compile recorded only its first: the file was written after the key's "
        f"oldest entry"
    )
    _, why = first_change([(p, 11, "+ 3.0)")], mtime)  # Python 3.11+ may record a continuation line
    assert (
        "line 11 of " in why
        and "is in a statement of lines 10-11, and the compile recorded only line 11" in why
    )
    assert (
        first_change([(p, 14, "y = y + i"), (p, 17, "return y")], mtime) is None
    )  # one-line statements
    _, why = first_change([(p, 14, "y = y + 2")], mtime)  # a line that differs is named first
    assert why.startswith("changed since the compile: line 14")
    src.write_text(MULTI + "def g(:\n")
    _, why = first_change([(p, 17, "return y")], os.stat(src).st_mtime_ns)
    assert "does not parse here" in why


def test_a_file_is_read_as_linecache_reads_it(tmp_path):
    """Split at \\n, \\r\\n and \\r only (a form feed inside a line is no line end), decoded by
    its coding cookie."""
    src = tmp_path / "m.py"
    src.write_bytes(b"# -*- coding: latin-1 -*-\r\nx = '\xe9'\ry = '\x0c'\n")
    assert source_lines(str(src)) == ("# -*- coding: latin-1 -*-", "x = '\u00e9'", "y = '\x0c'")


def test_a_withheld_file_is_read_as_not_there(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("def f(x, clip=True):\n    return x\n")
    frame = CompiledFrom("f", str(src), 1)
    assert not isinstance(frame_reads(frame), Reason)
    why = Reason("changed since the compile: line 2 ...", "source-changed")
    restore = withhold({str(src): why})
    try:
        assert frame_reads(frame) is why and source_lines(str(src)) is None
    finally:
        restore()
    assert not isinstance(frame_reads(frame), Reason) and source_lines(str(src)) is not None
