"""The reader of a split's number of pieces (fxcache_core/lookup/split_counts.py): its guard
clause, its printed op and the code that reads every piece. The graph below is the one
torch 2.13 printed for ``split_sum`` of tests/harness/cases_args.py (x=[6,12], n=4 under
dynamic=True; tests/torch/test_star_arguments.py checks the verdicts against torch)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from fxcache_core.decode.symbols import SymbolInfo
from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.lookup.split_counts import (
    _reads_every_piece,
    _split_in_graph,
    piece_count_clause,
    split_count_differs,
)

_GRAPH = '''class <lambda>(torch.nn.Module):
    def forward(
        self,
        arg0_1: "Sym(s77)",  # PlainAOTInput(idx=0)
        arg1_1: "Sym(s27)",  # PlainAOTInput(idx=1)
        arg2_1: "f32[s77, s27][s27, 1]cpu",  # PlainAOTInput(idx=2)
        arg3_1: "Sym(s86)",  # PlainAOTInput(idx=3)
    ):
        # File: {file}:4 in split_sum, code: parts = x.split(n, dim=1)
        split = torch.ops.aten.split.Tensor(arg2_1, arg3_1, 1);  arg2_1 = arg3_1 = None
        getitem: "f32[s77, s86][s27, 1]cpu" = split[0]
        getitem_1: "f32[s77, s86][s27, 1]cpu" = split[1]
        getitem_2: "f32[s77, s27 - 2*s86][s27, 1]cpu" = split[2];  split = None

        # File: {file}:5 in <genexpr>, code: return sum(p.sum(1) * (i + 3) for i, p in enumerate(parts))
        sum_1: "f32[s77][1]cpu" = torch.ops.aten.sum.dim_IntList(getitem, [1]);  getitem = None
        sum_2: "f32[s77][1]cpu" = torch.ops.aten.sum.dim_IntList(getitem_1, [1]);  getitem_1 = None
        sum_3: "f32[s77][1]cpu" = torch.ops.aten.sum.dim_IntList(getitem_2, [1]);  getitem_2 = None
        return (sum_3,)
'''
_CLAUSE = "((-1 + L['t2'] + L['t1']) // L['t2']) == 3"
_SYMBOLS = (SymbolInfo("t0", "s77", "L['x'].size()[0]", 6), SymbolInfo("t1", "s27", "L['x'].size()[1]", 12),
            SymbolInfo("t2", "s86", "L['n']", 4))


@pytest.mark.parametrize("text,want", [
    (_CLAUSE, ("t2", "t1", 3)),
    ("((L['t1'] + L['t2'] + -1) // L['t2']) == 2", ("t2", "t1", 2)),
    ("3 == ((-1 + L['t2'] + L['t1']) // L['t2'])", ("t2", "t1", 3)),
    ("((-1 + L['t2'] + L['t1']) // L['t1']) == 3", ("t1", "t2", 3)),  # t2 in pieces of t1: the graph says which
    # Not a piece count: a second constant, a remainder, an inequality, a third term.
    ("((-1 + L['t2'] + L['t1'] + L['t0']) // L['t2']) == 3", None),
    ("((-2 + L['t2'] + L['t1']) // L['t2']) == 3", None),
    ("((-1 + L['t2'] + L['t1']) % L['t2']) == 0", None),
    ("((-1 + L['t2'] + L['t1']) // L['t2']) >= 3", None),
    ("not a clause (", None),
])
def test_a_split_count_clause_is_read_and_nothing_else_is(text, want):
    assert piece_count_clause(text) == want


def test_the_split_op_its_pieces_and_its_line_are_read_off_the_printed_graph():
    graph = _GRAPH.format(file="/src/f.py")
    assert _split_in_graph(graph, "s86", "s27") == ("/src/f.py", 4, 3)
    assert _split_in_graph(graph, "s27", "s86") is None  # another size: not this split
    # A piece the graph never reads (split[1] left out): the count is not shown.
    assert _split_in_graph(graph.replace("= split[1]", "= other[1]"), "s86", "s27") is None


def _fn(src: str) -> ast.FunctionDef:
    return ast.parse(textwrap.dedent(src)).body[0]  # type: ignore[return-value]


@pytest.mark.parametrize("src,line", [
    ("def f(x, n):\n    parts = x.split(n, dim=1)\n    return sum(p.sum(1) for i, p in enumerate(parts))\n", 3),
    ("def f(x, n):\n    out = 0\n    for p in x.split(n, 1):\n        out = out + p\n    return out\n", 3),
    ("def f(x, n):\n    return torch.cat([p * 2 for p in x.split(n, 1)])\n", 2),
    # By index, a loop that may stop, a name assigned twice: not every piece.
    ("def f(x, n):\n    parts = x.split(n, 1)\n    return parts[0] + parts[1]\n", None),
    ("def f(x, n):\n    parts = x.split(n, 1)\n    for p in parts:\n        if n > 2:\n            break\n", None),
    ("def f(x, n):\n    parts = x.split(n, 1)\n    parts = parts[:1]\n    for p in parts:\n        x = p\n", None),
])
def test_code_that_reads_every_piece_of_the_split_is_found(src, line):
    assert _reads_every_piece(_fn(src), 2 if "parts" in src or "cat" in src else 3) == line


def test_a_call_with_another_number_of_pieces_is_another_graph_only_where_every_piece_is_read(tmp_path):
    src = tmp_path / "f.py"
    src.write_text("import torch\n\ndef split_sum(x, n):\n    parts = x.split(n, dim=1)\n"
                   "    return sum(p.sum(1) * (i + 3) for i, p in enumerate(parts))\n")
    graph = _GRAPH.format(file=str(src))
    frame = CompiledFrom("split_sum", str(src), 3, params=("x", "n"))

    def ask(values, g=graph, f=frame):
        return split_count_differs(_CLAUSE, _SYMBOLS, values, lambda: g, lambda: f)

    why = ask({"t0": 4, "t1": 16, "t2": 4})
    assert why is not None and why.code == "split-pieces-differ" and "makes 4 pieces of n" in why, why
    assert ask({"t0": 4, "t1": 12, "t2": 6}).code == "split-pieces-differ"  # 2 pieces
    assert ask({"t0": 4, "t1": 9, "t2": 3}) is None  # 3 pieces: as the key's
    # The source read by index only; another file than the graph's; no frame: nothing said.
    src2 = tmp_path / "g.py"
    src2.write_text("import torch\n\ndef split_sum(x, n):\n    parts = x.split(n, dim=1)\n"
                    "    return parts[0] + parts[1] + parts[2]\n")
    assert ask({"t0": 4, "t1": 16, "t2": 4}, g=_GRAPH.format(file=str(src2)),
               f=CompiledFrom("split_sum", str(src2), 3)) is None
    assert ask({"t0": 4, "t1": 16, "t2": 4}, f=CompiledFrom("split_sum", str(src2), 3)) is None
    assert ask({"t0": 4, "t1": 16, "t2": 4}, f=None) is None


@pytest.mark.parametrize("src,line", [
    # zip stops at its shorter sequence (another number of pieces may keep the graph);
    # pieces sliced after their ops; a loop whose body keeps nothing.
    ("def f(x, n):\n    out = []\n    for p, w in zip(x.split(n, 1), (1.0, 2.0)):\n"
     "        out.append(p.sum(1) * w)\n    return torch.stack(out)\n", 3),
    ("def f(x, n):\n    return torch.stack([p.relu() for p in x.split(n, 1)][:2])\n", 2),
    ("def f(x, n):\n    for p in x.split(n, 1):\n        y = p + 1\n    return x\n", 2),
])
def test_a_split_whose_pieces_may_not_all_reach_the_graph_is_not_read_as_every_piece(src, line):
    assert _reads_every_piece(_fn(src), line) is None
