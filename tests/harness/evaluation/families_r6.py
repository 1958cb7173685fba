"""The sixth round of evaluation families: ints through ``narrow``, ``topk`` and
``kthvalue``, a Python exponent given as an int or a float, an ``einsum`` equation, a tuple
spread into ``permute(*dims)``, the two ints of ``transpose``, a float compared in Python,
an in-place op on an input, ``**kwargs`` of tensors, a tensor default, an optional int of a
module's ``forward``, a ``staticmethod``, ``fullgraph=True`` over a branch that would break,
and BLOOM, MPNet, Falcon and SegFormer. :mod:`tests.harness.evaluation.families` adds them to
``FAMILIES``; the comments say what each call exercises, not what torch answers. Nothing
here imports torch."""

from __future__ import annotations

from tests.harness.evaluation.family import Family
from tests.harness.evaluation.family import q as _q
from tests.harness.evaluation.family import t as _t

_F = "tests.harness.evaluation.fns_r6:"
_H = "tests.harness.evaluation.hf_r6:"


def _ids(*shape: int, **more) -> dict:
    return _t(list(shape), dtype="int64", **more)


_FULL = {"@compile": {"fullgraph": True}}

R6_FAMILIES: list[Family] = [
    Family(
        "narrow_window", _F + "narrow_cols", "narrow_cols", True,
        build=(({"x": [4, 10], "start": 2, "length": 3},),), positional=1,
        doc="ints through narrow(1, start, length) (dynamic=True)",
        queries=(
            _q("another start", x=[4, 10], start=5, length=3),
            _q("another length", x=[4, 10], start=2, length=6),
            _q("length 0", x=[4, 10], start=2, length=0),
            _q("length 1", x=[4, 10], start=2, length=1),
            _q("past the end: raises", x=[4, 10], start=8, length=3),
            _q("another size", x=[6, 12], start=2, length=3),
        )),
    Family(
        "pow_types", _F + "power", "power", None,
        build=(({"x": [4, 4]}, {"x": [4, 4], "p": 0.5}),), positional=1,
        doc="x ** p with p the int 2 (default) and the float 0.5 built in one process (dynamic=None)",
        queries=(
            _q("left out", x=[4, 4]),
            _q("p=2 given", x=[4, 4], p=2),
            _q("p=2.0: a float", x=[4, 4], p=2.0),
            _q("p=0.5", x=[4, 4], p=0.5),
            _q("p=3", x=[4, 4], p=3),
            _q("p=1.5", x=[4, 4], p=1.5),
            _q("p=1", x=[4, 4], p=1),
            _q("another size", x=[5, 4], p=0.5),
        )),
    Family(
        "topk_int", _F + "top_sum", "top_sum", True,
        build=(({"x": [4, 8], "k": 3},),), positional=1,
        doc="an int through topk(k) (dynamic=True)",
        queries=(
            _q("another k", x=[4, 8], k=5),
            _q("k = 1", x=[4, 8], k=1),
            _q("k the whole width", x=[4, 8], k=8),
            _q("k past the width: raises", x=[4, 8], k=9),
            _q("another size", x=[6, 10], k=3),
        )),
    Family(
        "kth_auto", _F + "kth", "kth", None,
        build=(({"x": [4, 8], "k": 2}, {"x": [4, 8], "k": 3}),), positional=1,
        doc="an int through kthvalue(k), two values in one process: automatic dynamic (dynamic=None)",
        queries=(
            _q("the first k", x=[4, 8], k=2),
            _q("the second k", x=[4, 8], k=3),
            _q("a third k", x=[4, 8], k=6),
            _q("k = 1", x=[4, 8], k=1),
            _q("another size", x=[4, 6], k=3),
        )),
    Family(
        "einsum_eq", _F + "contract", "contract", None,
        build=(({"a": [4, 3], "b": [3, 5]},),), positional=2,
        doc="a str equation of einsum, the default built (dynamic=None)",
        queries=(
            _q("left out", a=[4, 3], b=[3, 5]),
            _q("the default given", a=[4, 3], b=[3, 5], eq="ij,jk->ik"),
            _q("the same contraction spelt with spaces", a=[4, 3], b=[3, 5], eq="ij, jk -> ik"),
            _q("the same contraction, other letters", a=[4, 3], b=[3, 5], eq="ab,bc->ac"),
            _q("b transposed", a=[4, 3], b=[5, 3], eq="ij,kj->ik"),
            _q("another size", a=[6, 3], b=[3, 5]),
        )),
    Family(
        "permute_tuple", _F + "permute_dims", "permute_dims", None,
        build=(({"x": [2, 3, 4], "dims": {"tuple": [2, 0, 1]}},),), positional=1,
        doc="a tuple of dims spread into permute(*dims) (dynamic=None)",
        queries=(
            _q("as built", x=[2, 3, 4], dims={"tuple": [2, 0, 1]}),
            _q("another order", x=[2, 3, 4], dims={"tuple": [1, 2, 0]}),
            _q("the same order, negative", x=[2, 3, 4], dims={"tuple": [-1, 0, 1]}),
            _q("the identity", x=[2, 3, 4], dims={"tuple": [0, 1, 2]}),
            _q("another size", x=[5, 3, 4], dims={"tuple": [2, 0, 1]}),
        )),
    Family(
        "transpose_ints", _F + "swap", "swap", False,
        build=(({"x": [3, 5]},),), positional=1,
        doc="the two int dims of transpose, (0, 1) by default (dynamic=False)",
        queries=(
            _q("left out", x=[3, 5]),
            _q("(1, 0): the same swap", x=[3, 5], a=1, b=0),
            _q("(-2, -1): the same swap", x=[3, 5], a=-2, b=-1),
            _q("(0, 0): no swap", x=[3, 5], a=0, b=0),
            _q("another size", x=[4, 5]),
        )),
    Family(
        "eps_branch", _F + "eps_gate", "eps_gate", None,
        build=(({"x": [4, 8]},),), positional=1,
        doc="a float compared in Python: if eps > 0 (dynamic=None)",
        queries=(
            _q("left out", x=[4, 8]),
            _q("another positive eps", x=[4, 8], eps=1e-3),
            _q("eps = 0.0: the other side", x=[4, 8], eps=0.0),
            _q("a negative eps", x=[4, 8], eps=-1.0),
            _q("an int eps", x=[4, 8], eps=1),
            _q("another size", x=[6, 8]),
        )),
    Family(
        "inplace_input", _F + "bump_", "bump_", None,
        build=(({"x": [4, 8], "y": [4, 8]},),), positional=2,
        doc="an in-place op on an input, returned (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8], y=[4, 8]),
            _q("y broadcast", x=[4, 8], y=[8]),
            _q("another size", x=[6, 8], y=[6, 8]),
            _q("x transposed", x=_t([4, 8], stride=[1, 4]), y=[4, 8]),
        )),
    Family(
        "kwargs_tensors", _F + "kw_sum", "kw_sum", None,
        build=(({"x": [4, 8], "bias": [8]},),), positional=1,
        doc="**kwargs of tensors, and an int returned beside the tensor (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8], bias=[8]),
            _q("another name", x=[4, 8], shift=[8]),
            _q("two of them", x=[4, 8], bias=[8], shift=[8]),
            _q("none", x=[4, 8]),
            _q("another size", x=[4, 8], bias=[4, 8]),
        )),
    Family(
        "tensor_default", _F + "add_default", "add_default", None,
        build=(({"x": [4, 8]},),), positional=1,
        doc="a tensor default made at definition (dynamic=None)",
        queries=(
            _q("left out", x=[4, 8]),
            _q("w given, its size", x=[4, 8], w=[8]),
            _q("w given, one column", x=[4, 8], w=[1]),
            _q("another size", x=[6, 8]),
        )),
    Family(
        "optional_len", _F + "truncate", "Truncate", None, model=True,
        build=(({"x": [4, 8]}, {"x": [4, 8], "max_len": 4}),), positional=1,
        doc="a module's forward with max_len=None, built with None and 4 (dynamic=None)",
        queries=(
            _q("left out", x=[4, 8]),
            _q("None given", x=[4, 8], max_len=None),
            _q("4", x=[4, 8], max_len=4),
            _q("6", x=[4, 8], max_len=6),
            _q("past the width", x=[4, 8], max_len=100),
            _q("0", x=[4, 8], max_len=0),
        )),
    Family(
        "static_method", _F + "ops_scale", "Ops.scale", True,
        build=(({"x": [4, 8]},),), positional=1,
        doc="a staticmethod compiled, its default int k (dynamic=True)",
        queries=(
            _q("another size", x=[6, 8]),
            _q("k given as built", x=[4, 8], k=3),
            _q("another k", x=[4, 8], k=5),
            _q("a float k", x=[4, 8], k=0.5),
        )),
    Family(
        "fullgraph_break", _F + "maybe_print", "maybe_print", None,
        build=(({"x": [4, 8], **_FULL},),), positional=1,
        doc="fullgraph=True; loud=True would break the graph at a print() (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8], **_FULL),
            _q("loud: raises", x=[4, 8], loud=True, **_FULL),
            _q("another size", x=[6, 8], **_FULL),
            _q("without fullgraph", x=[4, 8]),
        )),
    Family(
        "min_len", _F + "min_len", "min_len", None,
        build=(({"x": [4, 8], "n": 100},),), positional=1,
        doc="min(n, x.shape[1]) slices: n past the width gives the same graph (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8], n=100),
            _q("another n past the width", x=[4, 8], n=50),
            _q("n the width", x=[4, 8], n=8),
            _q("n within the width", x=[4, 8], n=6),
            _q("another size", x=[4, 10], n=100),
        )),
    Family(
        "abs_shift", _F + "abs_shift", "abs_shift", None,
        build=(({"x": [4, 8], "k": 2},),), positional=1,
        doc="roll(abs(k)): k and -k give the same graph (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8], k=2),
            _q("-k", x=[4, 8], k=-2),
            _q("another k", x=[4, 8], k=3),
        )),
    Family(
        "half_cols", _F + "half_cols", "half_cols", None,
        build=(({"x": [4, 8], "n": 4},),), positional=1,
        doc="x[:, : n // 2]: n = 4 and 5 give the same graph (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8], n=4),
            _q("n + 1: the same half", x=[4, 8], n=5),
            _q("another half", x=[4, 8], n=6),
            _q("n = 1: an empty slice", x=[4, 8], n=1),
        )),
    Family(
        "wrap_cols", _F + "wrap_cols", "wrap_cols", None,
        build=(({"x": [4, 8], "n": -2},),), positional=1,
        doc="n or width + n as a slice end, built with n = -2 (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8], n=-2),
            _q("n = 6: the same end", x=[4, 8], n=6),
            _q("n = -3", x=[4, 8], n=-3),
            _q("n = 5", x=[4, 8], n=5),
        )),
    Family(
        "floor_scale", _F + "floor_scale", "floor_scale", None,
        build=(({"x": [4, 8], "s": 0.1},),), positional=1,
        doc="x * max(s, 0.5), built with s = 0.1 (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8], s=0.1),
            _q("another s below the floor", x=[4, 8], s=0.2),
            _q("s the floor", x=[4, 8], s=0.5),
            _q("s above the floor", x=[4, 8], s=0.7),
        )),
    Family(
        "bloom_alibi", _H + "bloom", "BloomForCausalLM", None, model=True,
        build=(({"input_ids": _ids(2, 8)},),),
        doc="BLOOM: ALiBi biases from the mask; mask, batch 1, one token (dynamic=None)",
        queries=(
            _q("as built", input_ids=_ids(2, 8)),
            _q("a mask given", input_ids=_ids(2, 8), attention_mask=_ids(2, 8)),
            _q("batch 1", input_ids=_ids(1, 8)),
            _q("one token", input_ids=_ids(2, 1)),
            _q("longer", input_ids=_ids(2, 12)),
            _q("use_cache=False given", input_ids=_ids(2, 8), use_cache=False),
        )),
    Family(
        "mpnet_rel", _H + "mpnet", "MPNetModel", True, model=True,
        build=(({"input_ids": _ids(2, 8), "attention_mask": _ids(2, 8)},),),
        doc="MPNet: relative position buckets, built with a mask (dynamic=True)",
        queries=(
            _q("longer, another batch", input_ids=_ids(3, 12), attention_mask=_ids(3, 12)),
            _q("without the mask", input_ids=_ids(2, 8)),
            _q("batch 1", input_ids=_ids(1, 8), attention_mask=_ids(1, 8)),
            _q("one token", input_ids=_ids(2, 1), attention_mask=_ids(2, 1)),
            _q("position ids given", input_ids=_ids(2, 8), attention_mask=_ids(2, 8), position_ids=_ids(2, 8)),
        )),
    Family(
        "falcon_mqa", _H + "falcon", "FalconForCausalLM", True, model=True,
        build=(({"input_ids": _ids(2, 8)},),),
        doc="Falcon: rotary, multi-query attention (dynamic=True)",
        queries=(
            _q("longer", input_ids=_ids(2, 12)),
            _q("batch 1", input_ids=_ids(1, 8)),
            _q("one token", input_ids=_ids(2, 1)),
            _q("a mask given", input_ids=_ids(2, 8), attention_mask=_ids(2, 8)),
            _q("position ids given", input_ids=_ids(2, 8), position_ids=_ids(2, 8)),
        )),
    Family(
        "segformer_images", _H + "segformer", "SegformerModel", None, model=True,
        build=(({"pixel_values": [1, 3, 32, 32]}, {"pixel_values": [2, 3, 32, 32]}),),
        doc="SegFormer: two batches in one process, automatic dynamic (dynamic=None)",
        queries=(
            _q("the first batch", pixel_values=[1, 3, 32, 32]),
            _q("the second batch", pixel_values=[2, 3, 32, 32]),
            _q("a third batch", pixel_values=[3, 3, 32, 32]),
            _q("larger images", pixel_values=[2, 3, 64, 64]),
            _q("non-square", pixel_values=[2, 3, 32, 48]),
        )),
]
