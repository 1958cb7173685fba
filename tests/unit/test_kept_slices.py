"""An int that only says how many positions a slice keeps (fxcache_core/lookup/kept_slices.py).

The op lines are as torch 2.13 printed them (``aot_forward_graph_str``, CPU) for these
very functions, compiled under ``dynamic=None`` on a ``[2, 8, 4]`` input: ``keep=0`` (an
alias), ``keep=1`` and ``keep=8`` (a slice from ``-keep``: ``keep=8``, all of a length 8,
is another key than ``keep=0``), and automatic dynamic's second key for ``keep=0`` (the
length a symbol: a slice from 0). Only the file path is changed. What torch answers for
such calls is the recorded cases' (tests/torch/test_kept_slices.py); here the reading of
the graph is checked in-process.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from fxcache_core.lookup.int_exprs import value_provenance
from fxcache_core.lookup.kept_slices import kept_slice, kept_slice_provenance

SOURCE = """import torch


def _keep(h, keep):
    if isinstance(keep, torch.Tensor) and keep.ndim == 2:
        return h[keep]
    if isinstance(keep, int):
        keep = slice(-keep, None)
    return h[:, keep, :]


def keep_last(x, w, keep=0):
    s = slice(-keep, None) if isinstance(keep, int) else keep
    return x[:, s, :] @ w


def keep_helper(x, w, keep=0):
    return _keep(x, keep) @ w


def keep_read_twice(x, w, keep=0):
    s = slice(-keep, None) if isinstance(keep, int) else keep
    return x[:, s, :] @ w * keep
"""

HEAD = """class <lambda>(torch.nn.Module):
    def forward(
        self,
        arg0_1: "f32[2, 8, 4][32, 4, 1]cpu",  # PlainAOTInput(idx=0)
        arg1_1: "f32[4, 5][5, 1]cpu",  # PlainAOTInput(idx=1)
    ):
"""
LAST = "        # File: FILE:14 in keep_last, code: return x[:, s, :] @ w\n"
ALIAS = '        alias: "f32[2, 8, 4][32, 4, 1]cpu" = torch.ops.aten.alias.default(arg0_1);  arg0_1 = None\n'
TAIL = """        view: "f32[16, 4][4, 1]cpu" = torch.ops.aten.view.default(alias, [16, 4]);  alias = None
        mm: "f32[16, 5][5, 1]cpu" = torch.ops.aten.mm.default(view, arg1_1);  view = arg1_1 = None
        view_1: "f32[2, 8, 5][40, 5, 1]cpu" = torch.ops.aten.view.default(mm, [2, 8, 5]);  mm = None
        return (
            view_1,  # PlainAOTOutput(idx=0)
        )
"""


def _slice(start: int) -> str:
    return (
        f'        slice_1: "f32[2, 8, 4][32, 4, 1]cpu" = torch.ops.aten.slice.Tensor(arg0_1, 1, {start}, '
        "9223372036854775807);  arg0_1 = None\n"
    )


KEEP_0 = HEAD + LAST + ALIAS + TAIL
KEEP_1 = HEAD + LAST + _slice(-1) + TAIL.replace("(alias,", "(slice_1,")
KEEP_8 = HEAD + LAST + _slice(-8) + TAIL.replace("(alias,", "(slice_1,")
HELPER_0 = (
    HEAD
    + "        # File: FILE:9 in _keep, code: return h[:, keep, :]\n"
    + ALIAS
    + "        # File: FILE:18 in keep_helper, code: return _keep(x, keep) @ w\n"
    + TAIL
)
AUTO_0 = """class <lambda>(torch.nn.Module):
    def forward(
        self,
        arg0_1: "Sym(s27)",  # PlainAOTInput(idx=0)
        arg1_1: "f32[2, s27, 4][4*s27, 4, 1]cpu",  # PlainAOTInput(idx=1)
        arg2_1: "f32[4, 5][5, 1]cpu",  # PlainAOTInput(idx=2)
    ):
        # File: FILE:14 in keep_last, code: return x[:, s, :] @ w
        slice_1: "f32[2, s27, 4][4*s27, 4, 1]cpu" = torch.ops.aten.slice.Tensor(arg1_1, 1, 0, 9223372036854775807);  arg1_1 = None
        mul_5: "Sym(2 * s27)" = 2 * arg0_1
        view: "f32[2*s27, 4][4, 1]cpu" = torch.ops.aten.view.default(slice_1, [mul_5, 4]);  slice_1 = mul_5 = None
        mm: "f32[2*s27, 5][5, 1]cpu" = torch.ops.aten.mm.default(view, arg2_1);  view = arg2_1 = None
        view_1: "f32[2, s27, 5][5*s27, 5, 1]cpu" = torch.ops.aten.view.default(mm, [2, arg0_1, 5]);  mm = arg0_1 = None
        return (
            view_1,  # PlainAOTOutput(idx=0)
        )
"""
SYMBOLIC_START = """        # File: FILE:14 in keep_last, code: return x[:, s, :] @ w
        slice_2: "f32[2, 8, 4][32, 4, 1]cpu" = torch.ops.aten.slice.Tensor(arg0_1, 1, neg, 9223372036854775807);  arg0_1 = neg = None
"""


@pytest.fixture
def src(tmp_path: Path) -> tuple[str, dict[str, ast.FunctionDef]]:
    path = tmp_path / "kmod.py"
    path.write_text(SOURCE)
    fns = {n.name: n for n in ast.parse(SOURCE).body if isinstance(n, ast.FunctionDef)}
    return str(path), fns


def _prov(src: tuple[str, dict[str, ast.FunctionDef]], fn: str, graph: str, keep: int):
    # As fit_floats asks for an undecorated frame: the kept-slice rule, then the int rules.
    file, fns = src
    graph = graph.replace("FILE", file)
    return kept_slice_provenance(fns[fn], file, graph, "keep", {"keep": keep}) or value_provenance(
        fns[fn], file, graph, "keep", {"keep": keep}, frozenset({"x", "w"})
    )


@pytest.mark.parametrize(
    ("graph", "keep", "status"),
    [
        (KEEP_0, 0, "same"),  # the alias: traced whole
        (KEEP_0, 1, "differs"),  # keep=1 slices from -1: another key
        (
            KEEP_0,
            8,
            "differs",
        ),  # all of a length 8, still a slice from -8: another key (checked with torch)
        (KEEP_1, 1, "same"),
        (KEEP_1, 0, "differs"),
        (KEEP_1, 2, "differs"),
        (KEEP_8, 8, "same"),
        (KEEP_8, 0, "differs"),
        (
            AUTO_0,
            0,
            "same",
        ),  # automatic dynamic's second key: a slice from 0 over a symbolic length
        (AUTO_0, 1, "differs"),
    ],
)
def test_the_inline_pattern_reads_the_start_the_graph_holds(
    src, graph: str, keep: int, status: str
) -> None:
    got = _prov(src, "keep_last", graph, keep)
    assert got is not None and got.status == status and got.why is not None
    assert got.why.code == f"baked-value-{status}"


@pytest.mark.parametrize(("keep", "status"), [(0, "same"), (1, "differs"), (3, "differs")])
def test_the_helper_of_another_function_is_followed_to_its_return(
    src, keep: int, status: str
) -> None:
    got = _prov(src, "keep_helper", HELPER_0, keep)
    assert got is not None and got.status == status


def test_a_negative_keep_a_symbolic_start_or_another_count_stays_unknown(src) -> None:
    # keep=-2 starts the slice at 2: not read here
    assert _prov(src, "keep_last", KEEP_1, -2).status == "unknown"  # type: ignore[union-attr]
    # the int a SymInt: the start is a name
    sym = HEAD + SYMBOLIC_START + TAIL.replace("(alias,", "(slice_2,")
    assert _prov(src, "keep_last", sym, 0).status == "unknown"  # type: ignore[union-attr]
    # an alias and a slice of that statement: which is the subscript's is not known
    both = HEAD + LAST + ALIAS + _slice(-1) + TAIL
    assert _prov(src, "keep_last", both, 0).status == "unknown"  # type: ignore[union-attr]
    # no op from that statement (the key was traced otherwise, a tensor keep)
    assert _prov(src, "keep_last", HEAD + TAIL, 0).status == "unknown"  # type: ignore[union-attr]


def test_the_rule_speaks_only_where_every_read_is_the_pattern(src) -> None:
    file, fns = src
    # keep is also a factor: not this rule's (the other rules read it)
    assert (
        kept_slice(fns["keep_read_twice"], file, KEEP_0.replace("FILE", file), "keep", {"keep": 0})
        is None
    )
    # a bool is not an int here
    assert (
        kept_slice(fns["keep_last"], file, KEEP_0.replace("FILE", file), "keep", {"keep": False})
        is None
    )
    # the source's module unreadable: the builtins it reads cannot be checked
    assert kept_slice(fns["keep_last"], file + ".gone", KEEP_0, "keep", {"keep": 0}) is None


def test_a_rebound_builtin_or_torch_leaves_it_to_the_other_rules(tmp_path: Path) -> None:
    for extra in (
        "slice = list\n",
        "import numpy as torch\n",
        "def isinstance(a, b):\n    return True\n",
    ):
        path = tmp_path / "m.py"
        path.write_text(SOURCE + extra)
        fns = {n.name: n for n in ast.parse(SOURCE).body if isinstance(n, ast.FunctionDef)}
        for fn, graph in (("keep_last", KEEP_0), ("keep_helper", HELPER_0)):
            assert (
                kept_slice(
                    fns[fn], str(path), graph.replace("FILE", str(path)), "keep", {"keep": 0}
                )
                is None
            ), extra


def test_a_helper_imported_from_a_sibling_module_is_read_there(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg" / "models"
    pkg.mkdir(parents=True)
    (tmp_path / "pkg" / "utils.py").write_text(SOURCE)
    caller = (
        "from ..utils import _keep\n\n\ndef fwd(x, w, keep=0):\n    return _keep(x, keep) @ w\n"
    )
    (pkg / "m.py").write_text(caller)
    fn = ast.parse(caller).body[1]
    assert isinstance(fn, ast.FunctionDef)
    graph = HELPER_0.replace("FILE", str(tmp_path / "pkg" / "utils.py"))
    got = kept_slice(fn, str(pkg / "m.py"), graph, "keep", {"keep": 0})
    assert got is not None and got.status == "same"
    got = kept_slice(fn, str(pkg / "m.py"), graph, "keep", {"keep": 1})
    assert got is not None and got.status == "differs"


def test_a_helper_name_the_function_binds_itself_is_not_the_module_s_def(tmp_path: Path) -> None:
    # `_keep = other` inside the function: the call may reach another helper than the def read.
    extra = (
        "\n\ndef _keep_one_more(h, keep):\n    return h[:, slice(-keep - 1, None), :]\n\n\n"
        "def keep_rebound(x, w, keep=0):\n    _keep = _keep_one_more\n    return _keep(x, keep) @ w\n"
    )
    path = tmp_path / "kmod.py"
    path.write_text(SOURCE + extra)
    fns = {n.name: n for n in ast.parse(SOURCE + extra).body if isinstance(n, ast.FunctionDef)}
    graph = HELPER_0.replace("FILE", str(path)).replace("keep_helper", "keep_rebound")
    assert kept_slice(fns["keep_rebound"], str(path), graph, "keep", {"keep": 0}) is None


def test_another_subscript_on_the_statement_leaves_the_start_unknown(tmp_path: Path) -> None:
    # x[...] traces an alias of its own on the line; .shape[1] reads a size (no op).
    extra = (
        "\n\ndef keep_sized(x, w, keep=0):\n    s = slice(-keep, None) if isinstance(keep, int) else keep\n"
        "    return x[...] @ w * x[:, s, :].shape[1]\n"
    )
    path = tmp_path / "kmod.py"
    path.write_text(SOURCE + extra)
    fns = {n.name: n for n in ast.parse(SOURCE + extra).body if isinstance(n, ast.FunctionDef)}
    line = fns["keep_sized"].body[-1].lineno
    graph = (HEAD + LAST + ALIAS + TAIL).replace("FILE:14 in keep_last", f"FILE:{line} in keep_sized")
    got = kept_slice(fns["keep_sized"], str(path), graph.replace("FILE", str(path)), "keep", {"keep": 0})
    assert got is not None and got.status == "unknown", got
    assert "slices something else too" in str(got.why)
