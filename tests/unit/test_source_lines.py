"""The lines a key's graph was traced from, compared with its source file as it is now
(fxcache_core/lookup/source_lines.py), on printed text: graphs and stacks as torch
prints them (torch/fx/graph.py ``_parse_stack_trace``, ``traceback.format_list``)."""

from __future__ import annotations

import pytest

from fxcache_core.functions.frames import CompiledFrom, source_lines
from fxcache_core.functions.params import frame_reads
from fxcache_core.functions.source_dirs import withhold
from fxcache_core.lookup.source_lines import first_change, printed_lines, same_code, stack_lines
from fxcache_core.reasons import Reason

GRAPH = '''class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "Sym(s0)", arg1_1: "f32[s0]"):
         # File: /src/m.py:6 in f, code: y = x * 2
        mul: "f32[s0]" = torch.ops.aten.mul.Tensor(arg1_1, 2);  arg1_1 = None

         # Annotation: {'a': 1} File: /src/m.py:8 in f, code: return y + 1  # done
        add: "f32[s0]" = torch.ops.aten.add.Tensor(mul, 1);  mul = None
        return (add,)
'''

STACK = '''  File "/src/m.py", line 12, in f
    y = helper(x)
  File "/src/h.py", line 3, in helper
    return x.sin()
  File "<string>", line 1, in g
'''


def test_printed_lines_read_every_file_comment_with_its_code():
    assert list(printed_lines(GRAPH)) == [("/src/m.py", 6, "y = x * 2"), ("/src/m.py", 8, "return y + 1  # done")]


def test_stack_lines_pair_each_frame_with_its_code_and_skip_one_without():
    assert list(stack_lines(STACK)) == [("/src/m.py", 12, "y = helper(x)"), ("/src/h.py", 3, "return x.sin()")]


@pytest.mark.parametrize("recorded,now", [
    ("y = x * 2", "        y = x * 2   "),  # indentation and trailing blanks: torch strips them
    ("y = x * 2", "y=x*2"),
    ("return f(a, b)[0]", "return f( a,b )[ 0 ]  # a comment"),
    ("s = 'a  b'", "s  =  'a  b'"),
    ('s = """x  # y"""', 's = """x  # y"""'),
])
def test_the_same_tokens_are_the_same_code(recorded, now):
    assert same_code(recorded, now)


@pytest.mark.parametrize("recorded,now", [
    ("y = x * 2", "y = x * 3"),
    ("s = 'a  b'", "s = 'a b'"),  # inside a string, a space is the value
    ("return not x", "return notx"),  # between two words, a space is a separator
    ("y = x if a else b", "y = x if a  else b"),  # and kept as written
    ("s = '''a  b", "s = '''a b"),  # a string that goes on past the line: the exact text only
])
def test_another_token_or_string_is_another_code(recorded, now):
    assert not same_code(recorded, now)


def test_first_change_names_the_line_its_recorded_text_and_the_files(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("def f(x):\n    y = x * 3\n    return y + 1\n")
    p = str(src)
    assert first_change([(p, 2, "y = x * 3"), (p, 3, "return y+1")]) is None
    path, why = first_change([(p, 3, "return y + 1"), (p, 2, "y = x * 2")])
    assert path == p and why.code == "source-changed"
    assert why == f"changed since the compile: line 2 of {p} reads `y = x * 3` where the compile traced `y = x * 2`"
    _, why = first_change([(p, 9, "return y")])
    assert "has 3 lines, and the compile traced line 9 (`return y`)" in why
    assert first_change([(str(tmp_path / "gone.py"), 2, "y = x * 2"), ("<string>", 1, "x")]) is None


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
