"""The seventh round of evaluation families: a tuple of ints as ``F.pad``'s padding, a float
``scale_factor`` and a size tuple of ``F.interpolate``, the int dims of ``log_softmax`` and
``cumsum``, ``group_norm``'s and ``layer_norm``'s arguments, ``repeat_interleave``,
``chunk`` and ``F.unfold`` ints, ``masked_fill`` with a float, a str mode read by a callee
module, a bool flag and an optional tensor of a module's ``forward``, a float through
``math.sqrt``/``int()``/``round()``, a size-1 dim under ``dynamic=True`` and automatic
dynamic, a dtype changed between calls, two dims marked with one range, sizes the guards
relate (a branch on a size in the compiled function and in a callee, duck-sized pairs,
``view(-1, 4)``, a matmul's inner size, an int slice end under ``dynamic=True``), and Llama
(with ``logits_to_keep``), GPT-J and Swin. :mod:`tests.harness.evaluation.families` adds them to
``FAMILIES``; the comments say what each call exercises, not what torch answers. Nothing
here imports torch."""

from __future__ import annotations

from tests.harness.evaluation.family import Family
from tests.harness.evaluation.family import q as _q
from tests.harness.evaluation.family import t as _t

_F = "tests.harness.evaluation.fns_r7:"
_H = "tests.harness.evaluation.hf_r7:"


def _ids(*shape: int, **more) -> dict:
    return _t(list(shape), dtype="int64", **more)


def _tup(*v) -> dict:
    return {"tuple": list(v)}


R7_FAMILIES: list[Family] = [
    Family(
        "pad_tuple", _F + "pad_fill", "pad_fill", None,
        build=(({"x": [4, 8], "pad": _tup(1, 2)},),), positional=1,
        doc="a tuple of ints as F.pad's padding, the float fill left out (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8], pad=_tup(1, 2)),
            _q("the fill given as its default", x=[4, 8], pad=_tup(1, 2), value=0.0),
            _q("another fill", x=[4, 8], pad=_tup(1, 2), value=1.5),
            _q("another padding", x=[4, 8], pad=_tup(2, 1)),
            _q("no padding", x=[4, 8], pad=_tup(0, 0)),
            _q("a negative padding: a crop", x=[4, 8], pad=_tup(-1, -1)),
            _q("four ints: two dims", x=[4, 8], pad=_tup(1, 2, 0, 0)),
            _q("another size", x=[6, 8], pad=_tup(1, 2)),
        )),
    Family(
        "interp_float", _F + "resize_scale", "resize_scale", None,
        build=(({"x": [1, 2, 8, 8]},),), positional=1,
        doc="a float scale_factor and an align_corners bool of bilinear interpolate (dynamic=None)",
        queries=(
            _q("left out", x=[1, 2, 8, 8]),
            _q("s = 2: an int", x=[1, 2, 8, 8], s=2),
            _q("s = 1.5", x=[1, 2, 8, 8], s=1.5),
            _q("align_corners given as built", x=[1, 2, 8, 8], align=False),
            _q("align_corners True", x=[1, 2, 8, 8], align=True),
            _q("another size", x=[1, 2, 12, 8]),
        )),
    Family(
        "interp_size", _F + "resize_to", "resize_to", True,
        build=(({"x": [1, 2, 8, 8], "size": _tup(16, 16)},),), positional=1,
        doc="a tuple of ints as interpolate's size (dynamic=True)",
        queries=(
            _q("as built", x=[1, 2, 8, 8], size=_tup(16, 16)),
            _q("another size tuple", x=[1, 2, 8, 8], size=_tup(12, 20)),
            _q("another input size", x=[2, 2, 10, 6], size=_tup(16, 16)),
            _q("a smaller size", x=[1, 2, 8, 8], size=_tup(4, 4)),
            _q("the same as the input", x=[1, 2, 8, 8], size=_tup(8, 8)),
        )),
    Family(
        "softmax_dims", _F + "soft_cum", "soft_cum", False,
        build=(({"x": [4, 6]},),), positional=1,
        doc="the int dims of log_softmax and cumsum, -1 and 0 by default (dynamic=False)",
        queries=(
            _q("left out", x=[4, 6]),
            _q("dim = 1: the same dim", x=[4, 6], dim=1),
            _q("dim = 0", x=[4, 6], dim=0),
            _q("cdim = -2: the same dim", x=[4, 6], cdim=-2),
            _q("cdim = 1", x=[4, 6], cdim=1),
            _q("another size", x=[5, 6]),
            _q("three dims", x=[2, 4, 6]),
        )),
    Family(
        "group_norm_args", _F + "group_norm", "group_norm", None,
        build=(({"x": [2, 8, 4]},),), positional=1,
        doc="group_norm's group count and eps as arguments, left out when built (dynamic=None)",
        queries=(
            _q("left out", x=[2, 8, 4]),
            _q("groups = 2 given", x=[2, 8, 4], groups=2),
            _q("groups = 4", x=[2, 8, 4], groups=4),
            _q("another eps", x=[2, 8, 4], eps=1e-3),
            _q("groups = 3: raises", x=[2, 8, 4], groups=3),
            _q("another length", x=[2, 8, 6]),
        )),
    Family(
        "layer_norm_eps", _F + "layer_norm", "layer_norm", True,
        build=(({"x": [4, 8], "eps": 1e-5},),), positional=1,
        doc="layer_norm's eps as an argument (dynamic=True)",
        queries=(
            _q("as built", x=[4, 8], eps=1e-5),
            _q("left out: the same value", x=[4, 8]),
            _q("another eps", x=[4, 8], eps=1e-6),
            _q("another size", x=[6, 12], eps=1e-5),
            _q("an int eps", x=[4, 8], eps=1),
        )),
    Family(
        "repeat_interleave_n", _F + "repeat_rows", "repeat_rows", True,
        build=(({"x": [3, 4], "n": 2},),), positional=1,
        doc="an int count of repeat_interleave (dynamic=True)",
        queries=(
            _q("as built", x=[3, 4], n=2),
            _q("another n", x=[3, 4], n=3),
            _q("n = 1", x=[3, 4], n=1),
            _q("another size", x=[5, 6], n=2),
            _q("n = 0", x=[3, 4], n=0),
        )),
    Family(
        "chunk_auto", _F + "chunk_sum", "chunk_sum", None,
        build=(({"x": [4, 12], "n": 2}, {"x": [4, 12], "n": 3}),), positional=1,
        doc="an int count of chunk, two values in one process (dynamic=None)",
        queries=(
            _q("the first n", x=[4, 12], n=2),
            _q("the second n", x=[4, 12], n=3),
            _q("n = 4", x=[4, 12], n=4),
            _q("n = 5: pieces of 3, four of them", x=[4, 12], n=5),
            _q("another size", x=[4, 16], n=2),
        )),
    Family(
        "unfold_ints", _F + "patches", "patches", None,
        build=(({"x": [1, 2, 8, 8]},),), positional=1,
        doc="F.unfold's kernel size and stride as ints (dynamic=None)",
        queries=(
            _q("left out", x=[1, 2, 8, 8]),
            _q("k = 2 given", x=[1, 2, 8, 8], k=2),
            _q("k = 3", x=[1, 2, 8, 8], k=3),
            _q("stride 1", x=[1, 2, 8, 8], stride=1),
            _q("k as a tuple", x=[1, 2, 8, 8], k=_tup(2, 2)),
            _q("another size", x=[1, 2, 10, 10]),
        )),
    Family(
        "masked_fill_float", _F + "fill_above", "fill_above", True,
        build=(({"x": [4, 8]},),), positional=1,
        doc="masked_fill with a float value, a float threshold (dynamic=True)",
        queries=(
            _q("left out", x=[4, 8]),
            _q("another value", x=[4, 8], value=-2.0),
            _q("an int value", x=[4, 8], value=-1),
            _q("another threshold", x=[4, 8], t=0.0),
            _q("another size", x=[6, 10]),
        )),
    Family(
        "mode_callee", _F + "head", "Head", None, model=True,
        build=(({"x": [4, 8]},),), positional=1,
        doc="a str mode passed to a submodule that branches on it (dynamic=None)",
        queries=(
            _q("left out", x=[4, 8]),
            _q("'mean' given", x=[4, 8], mode="mean"),
            _q("'sum'", x=[4, 8], mode="sum"),
            _q("'max'", x=[4, 8], mode="max"),
            _q("an unknown mode: the max branch", x=[4, 8], mode="min"),
            _q("another size", x=[6, 8]),
        )),
    Family(
        "flag_optional", _F + "masked", "Masked", None, model=True,
        build=(({"x": [4, 8]}, {"x": [4, 8], "mask": [4, 8]}),), positional=1,
        doc="a module's forward with mask=None and normalize=False, built without and with a mask (dynamic=None)",
        queries=(
            _q("left out", x=[4, 8]),
            _q("a mask", x=[4, 8], mask=[4, 8]),
            _q("a broadcast mask", x=[4, 8], mask=[8]),
            _q("normalize=True", x=[4, 8], normalize=True),
            _q("mask=None given, normalize=False given", x=[4, 8], mask=None, normalize=False),
            _q("another size", x=[6, 8]),
        )),
    Family(
        "sqrt_float", _F + "root_scale", "root_scale", None,
        build=(({"x": [4, 8]},),), positional=1,
        doc="a float through math.sqrt, int() and round() (dynamic=None)",
        queries=(
            _q("left out", x=[4, 8]),
            _q("d = 4: an int", x=[4, 8], d=4),
            _q("d = 4.2: the same int()", x=[4, 8], d=4.2),
            _q("d = 9.0", x=[4, 8], d=9.0),
            _q("another size", x=[6, 8]),
        )),
    Family(
        "size_one_dynamic", _F + "row_mean", "row_mean", True,
        build=(({"x": [4, 8]},),), positional=0,
        doc="a dim of size 1 against a graph made for any size (dynamic=True)",
        queries=(
            _q("another size", x=[6, 10]),
            _q("rows 1", x=[1, 8]),
            _q("columns 1", x=[4, 1]),
            _q("rows 2", x=[2, 8]),
            _q("rows 0", x=[0, 8]),
        )),
    Family(
        "size_one_auto", _F + "row_mean", "row_mean", None,
        build=(({"x": [4, 8]}, {"x": [5, 8]}),), positional=0,
        doc="rows 4 then 5 in one process: automatic dynamic; size 1 after (dynamic=None)",
        queries=(
            _q("the first size", x=[4, 8]),
            _q("a third row count", x=[7, 8]),
            _q("rows 1", x=[1, 8]),
            _q("rows 2", x=[2, 8]),
            _q("another width", x=[4, 10]),
        )),
    Family(
        "dtype_switch", _F + "cast_mix", "cast_mix", None,
        build=(({"x": [4, 8]}, {"x": _t([4, 8], dtype="bfloat16")}),), positional=0,
        doc="float32 then bfloat16 in one process (dynamic=None)",
        queries=(
            _q("float32", x=[4, 8]),
            _q("bfloat16", x=_t([4, 8], dtype="bfloat16")),
            _q("float16", x=_t([4, 8], dtype="float16")),
            _q("float64", x=_t([4, 8], dtype="float64")),
            _q("bfloat16, another size", x=_t([6, 8], dtype="bfloat16")),
        )),
    Family(
        "mark_two_ranged", _F + "gelu_rows", "gelu_rows", None,
        build=(({"x": _t([4, 8], mark=[0, 1], min=2, max=32)},),), positional=0,
        doc="both dims marked dynamic with one range (dynamic=None)",
        queries=(
            _q("other sizes, marked the same", x=_t([9, 12], mark=[0, 1], min=2, max=32)),
            _q("other sizes, not marked", x=_t([9, 12])),
            _q("as built, not marked", x=_t([4, 8])),
            _q("only dim 0 marked", x=_t([6, 8], mark=[0])),
            _q("a square, marked", x=_t([8, 8], mark=[0, 1], min=2, max=32)),
            _q("past the range, marked", x=_t([4, 40], mark=[0, 1], min=2, max=32)),
        )),
    Family(
        "llama_keep", _H + "llama", "LlamaForCausalLM", None, model=True,
        build=(({"input_ids": _ids(2, 8)},),),
        doc="Llama: rotary, grouped-query attention; logits_to_keep and output flags (dynamic=None)",
        queries=(
            _q("as built", input_ids=_ids(2, 8)),
            _q("logits_to_keep=1", input_ids=_ids(2, 8), logits_to_keep=1),
            _q("logits_to_keep=0 given: the default", input_ids=_ids(2, 8), logits_to_keep=0),
            _q("output_hidden_states=True", input_ids=_ids(2, 8), output_hidden_states=True),
            _q("a mask given", input_ids=_ids(2, 8), attention_mask=_ids(2, 8)),
            _q("longer", input_ids=_ids(2, 12)),
        )),
    Family(
        "gptj_rotary", _H + "gptj", "GPTJForCausalLM", True, model=True,
        build=(({"input_ids": _ids(2, 8)},),),
        doc="GPT-J: partial rotary positions, a parallel block (dynamic=True)",
        queries=(
            _q("longer, another batch", input_ids=_ids(3, 12)),
            _q("batch 1", input_ids=_ids(1, 8)),
            _q("one token", input_ids=_ids(2, 1)),
            _q("return_dict=False", input_ids=_ids(2, 8), return_dict=False),
            _q("position ids given", input_ids=_ids(2, 8), position_ids=_ids(2, 8)),
        )),
    Family(
        "swin_windows", _H + "swin", "SwinModel", None, model=True,
        build=(({"pixel_values": [2, 3, 32, 32]},),),
        doc="Swin: shifted windows, images padded to whole windows (dynamic=None)",
        queries=(
            _q("as built", pixel_values=[2, 3, 32, 32]),
            _q("another batch", pixel_values=[3, 3, 32, 32]),
            _q("non-square", pixel_values=[2, 3, 48, 32]),
            _q("output_attentions=True", pixel_values=[2, 3, 32, 32], output_attentions=True),
            _q("interpolate_pos_encoding=True given", pixel_values=[2, 3, 32, 32], interpolate_pos_encoding=True),
        )),
    Family(
        "size_branch_dyn", _F + "size_branch", "size_branch", True,
        build=(({"x": [6, 8]},),), positional=0,
        doc="a branch on x.shape[0] > 4 (dynamic=True)",
        queries=(
            _q("another size, the same side", x=[9, 8]),
            _q("rows 5: the edge, the same side", x=[5, 8]),
            _q("rows 4: the other side", x=[4, 8]),
            _q("rows 2", x=[2, 8]),
            _q("another width", x=[6, 3]),
        )),
    Family(
        "duck_pair", _F + "pair_add", "pair_add", True,
        build=(({"x": [4, 4], "y": [4, 4]},),), positional=2,
        doc="two square inputs of one size: one symbol for all four dims (dynamic=True)",
        queries=(
            _q("another square size", x=[6, 6], y=[6, 6]),
            _q("not square", x=[4, 6], y=[4, 6]),
            _q("y broadcast rows", x=[4, 4], y=[1, 4]),
            _q("y one dim", x=[4, 4], y=[4]),
            _q("mismatched: raises", x=[4, 4], y=[3, 3]),
        )),
    Family(
        "pair_auto", _F + "pair_add", "pair_add", None,
        build=(({"x": [4, 8], "y": [4, 8]}, {"x": [5, 8], "y": [5, 8]}),), positional=2,
        doc="two inputs, rows 4 then 5 in one process: automatic dynamic (dynamic=None)",
        queries=(
            _q("a third row count", x=[7, 8], y=[7, 8]),
            _q("rows differ: y broadcast", x=[7, 8], y=[1, 8]),
            _q("rows 1 both", x=[1, 8], y=[1, 8]),
            _q("the first size", x=[4, 8], y=[4, 8]),
            _q("another width", x=[4, 6], y=[4, 6]),
        )),
    Family(
        "view_four", _F + "rows_of_four", "rows_of_four", True,
        build=(({"x": [3, 8]},),), positional=0,
        doc="view(-1, 4) of a dynamic input (dynamic=True)",
        queries=(
            _q("another size", x=[5, 12]),
            _q("width 4", x=[3, 4]),
            _q("width 6: 18 elements, raises", x=[3, 6]),
            _q("width 6, rows 2: 12 elements", x=[2, 6]),
            _q("three dims", x=[2, 2, 4]),
        )),
    Family(
        "matmul_dyn", _F + "mat", "mat", True,
        build=(({"x": [4, 8], "w": [8, 3]},),), positional=2,
        doc="x @ w under dynamic=True: the inner sizes one symbol",
        queries=(
            _q("other sizes", x=[5, 6], w=[6, 2]),
            _q("inner mismatch: raises", x=[4, 8], w=[6, 3]),
            _q("w one column", x=[4, 8], w=[8, 1]),
            _q("x one row", x=[1, 8], w=[8, 3]),
            _q("a batch of x", x=[2, 4, 8], w=[8, 3]),
        )),
    Family(
        "window_int_dyn", _F + "window_sum", "window_sum", True,
        build=(({"x": [4, 8], "k": 3},),), positional=1,
        doc="an int slice end under dynamic=True, compared with the width",
        queries=(
            _q("another k", x=[4, 8], k=5),
            _q("k past the width", x=[4, 8], k=10),
            _q("k the width", x=[4, 8], k=8),
            _q("k = 0", x=[4, 8], k=0),
            _q("another size", x=[6, 12], k=3),
            _q("a negative k", x=[4, 8], k=-2),
        )),
    Family(
        "callee_size_branch", _F + "callee_branch", "callee_branch", True,
        build=(({"x": [4, 8]},),), positional=0,
        doc="a branch on x.shape[-1] >= 6 in a callee Dynamo inlines (dynamic=True)",
        queries=(
            _q("another size, the same side", x=[5, 12]),
            _q("width 6: the edge", x=[4, 6]),
            _q("width 5: the other side", x=[4, 5]),
            _q("width 3", x=[2, 3]),
        )),
]
