"""The fourth round of evaluation families: a split whose piece count depends on a size,
ints through ``F.pad``, ``torch.roll`` and ``torch.arange``, a float through
``torch.full``, ``dim=None`` or an int, a str ``reduction`` with an int64 target, ``*args``
of tensors, a ``functools.partial`` with a baked keyword, a bool mask and an int64 index,
a branch on ``x.size(0) == 1``, a submodule called twice in one frame, a bound method
compiled, a compiled function called by another, and Whisper's encoder, ResNet, GPT-NeoX
and RoBERTa. :mod:`tests.harness.evaluation.families` adds them to ``FAMILIES``; the
comments say what each call exercises, not what torch answers. Nothing here imports torch."""

from __future__ import annotations

from tests.harness.evaluation.family import Family
from tests.harness.evaluation.family import q as _q
from tests.harness.evaluation.family import t as _t

_F = "tests.harness.evaluation.fns_r4:"
_H = "tests.harness.evaluation.hf_r4:"


def _ids(*shape: int, **more) -> dict:
    return _t(list(shape), dtype="int64", **more)


R4_FAMILIES: list[Family] = [
    Family(
        "split_pieces", _F + "split_sum", "split_sum", True,
        build=(({"x": [4, 12], "n": 4},),), positional=1,
        doc="x.split(n, 1): the number of pieces depends on x.size(1) and n (dynamic=True)",
        queries=(
            _q("another batch", x=[6, 12], n=4),
            _q("one piece more", x=[4, 16], n=4),
            _q("an uneven last piece", x=[4, 13], n=4),
            _q("another n, as many pieces", x=[4, 9], n=3),
            _q("another n, two pieces", x=[4, 12], n=6),
        )),
    Family(
        "pad_roll_auto", _F + "pad_roll", "pad_roll", None,
        build=(({"x": [4, 8], "p": 1}, {"x": [4, 8], "p": 2}),), positional=1,
        doc="ints through F.pad and torch.roll, two paddings built in one process (dynamic=None)",
        queries=(
            _q("the first padding", x=[4, 8], p=1),
            _q("the second padding", x=[4, 8], p=2),
            _q("a third padding", x=[4, 8], p=3),
            _q("another shift", x=[4, 8], p=1, k=2),
            _q("another size", x=[5, 8], p=2),
            _q("a third padding after a recompile", x=[4, 8], p=3, warm_up=({"x": [4, 8], "p": 1},)),
        )),
    Family(
        "ramp_made", _F + "ramp", "ramp", True,
        build=(({"x": [4, 16], "n": 8, "v": 0.5},),), positional=1,
        doc="torch.arange(n) and torch.full((n,), v) from an int and a float parameter (dynamic=True)",
        queries=(
            _q("another n", x=[4, 16], n=6),
            _q("another v", x=[4, 16], n=8, v=0.25),
            _q("another batch", x=[6, 16], n=8, v=0.5),
            _q("v left out: its default", x=[4, 16], n=8),
            _q("n past the columns: raises", x=[4, 16], n=20, v=0.5),
            _q("n = 0", x=[4, 16], n=0, v=0.5),
        )),
    Family(
        "spread_dim", _F + "spread", "spread", None,
        build=(({"x": [4, 6]}, {"x": [4, 6], "dim": 1}),), positional=1,
        doc="dim=None or an int passed to std, and keepdim (dynamic=None)",
        queries=(
            _q("dim left out, as built", x=[4, 6]),
            _q("dim=None given", x=[4, 6], dim=None),
            _q("dim=1, as the second build call", x=[4, 6], dim=1),
            _q("dim=0", x=[4, 6], dim=0),
            _q("dim=-1", x=[4, 6], dim=-1),
            _q("dim=None, keepdim=True", x=[4, 6], dim=None, keepdim=True),
            _q("another size, dim left out", x=[5, 6]),
        )),
    Family(
        "ce_reduction", _F + "ce_loss", "ce_loss", True,
        build=(({"logits": [4, 64], "target": _ids(4)},),), positional=2,
        doc="cross_entropy's str reduction with an int64 target, and a float target (dynamic=True)",
        queries=(
            _q("another batch", logits=[6, 64], target=_ids(6)),
            _q("reduction='sum'", logits=[4, 64], target=_ids(4), reduction="sum"),
            _q("reduction='none'", logits=[4, 64], target=_ids(4), reduction="none"),
            _q("reduction='mean' given", logits=[4, 64], target=_ids(4), reduction="mean"),
            _q("an int32 target", logits=[4, 64], target=_t([4], dtype="int32")),
            _q("a float target (probabilities)", logits=[4, 64], target=[4, 64]),
        )),
    Family(
        "star_tensors", _F + "star_sum", "star_sum", None,
        build=(({"xs": {"star": [[4, 4], [4, 4]]}},),), positional=1,
        doc="*args of tensors: two built, called with two, three and one (dynamic=None)",
        queries=(
            _q("as built", xs={"star": [[4, 4], [4, 4]]}),
            _q("three tensors", xs={"star": [[4, 4], [4, 4], [4, 4]]}),
            _q("one tensor", xs={"star": [[4, 4]]}),
            _q("another size", xs={"star": [[5, 4], [5, 4]]}),
            _q("the second broadcast from one row", xs={"star": [[4, 4], [1, 4]]}),
        )),
    Family(
        "partial_baked", _F + "scaled_sin", "_scaled_sin", None,
        build=(({"x": [4, 4]},),), positional=1,
        doc="functools.partial(fn, scale=3.0) compiled; calls give scale or bias, or not (dynamic=None)",
        queries=(
            _q("as built: scale from the partial", x=[4, 4]),
            _q("scale=3.0 given, as baked", x=[4, 4], scale=3.0),
            _q("scale=2.0 overrides the partial", x=[4, 4], scale=2.0),
            _q("scale=1.0: the function's own default", x=[4, 4], scale=1.0),
            _q("bias given", x=[4, 4], bias=1.0),
            _q("another size", x=[6, 4]),
        )),
    Family(
        "mask_index", _F + "masked_gather", "masked_gather", True,
        build=(({"x": [60, 4], "mask": _t([60, 4], dtype="bool"), "idx": _ids(5)},),), positional=3,
        doc="a bool mask and an int64 index tensor as inputs (dynamic=True)",
        queries=(
            _q("more indices", x=[60, 4], mask=_t([60, 4], dtype="bool"), idx=_ids(7)),
            _q("more rows", x=[70, 4], mask=_t([70, 4], dtype="bool"), idx=_ids(5)),
            _q("the mask broadcast from one row", x=[60, 4], mask=_t([1, 4], dtype="bool"), idx=_ids(5)),
            _q("int32 indices", x=[60, 4], mask=_t([60, 4], dtype="bool"), idx=_t([5], dtype="int32")),
            _q("one index", x=[60, 4], mask=_t([60, 4], dtype="bool"), idx=_ids(1)),
        )),
    Family(
        "squeeze_branch", _F + "squeeze_branch", "squeeze_branch", True,
        build=(({"x": [3, 4]},),), positional=1,
        doc="a Python branch on x.size(0) == 1 (dynamic=True)",
        queries=(
            _q("another size", x=[5, 4]),
            _q("one row: the branch taken", x=[1, 4]),
            _q("no rows", x=[0, 4]),
            _q("two rows", x=[2, 4]),
            _q("one column", x=[3, 1]),
        )),
    Family(
        "squeeze_branch_one", _F + "squeeze_branch", "squeeze_branch", None,
        build=(({"x": [1, 4]}, {"x": [1, 6]}),), positional=1,
        doc="a Python branch on x.size(0) == 1, built only with one row, two widths (dynamic=None)",
        queries=(
            _q("one row, the first width", x=[1, 4]),
            _q("one row, a third width", x=[1, 8]),
            _q("three rows", x=[3, 4]),
        )),
    Family(
        "twice_sub", _F + "twice", "Twice", None, model=True,
        build=(({"x": [4, 8], "y": [6, 8]}, {"x": [5, 8], "y": [6, 8]}),),
        doc="one Linear called on two inputs in one frame; x's batch made dynamic by a second call (dynamic=None)",
        queries=(
            _q("as first built", x=[4, 8], y=[6, 8]),
            _q("x's batch as the second call", x=[5, 8], y=[6, 8]),
            _q("y's batch changed", x=[4, 8], y=[7, 8]),
            _q("equal batches", x=[6, 8], y=[6, 8]),
            _q("y's batch changed after a recompile", x=[4, 8], y=[7, 8], warm_up=({"x": [4, 8], "y": [6, 8]},)),
        )),
    Family(
        "method_encode", _F + "encode", "encode", True,
        build=(({"x": [4, 6]},),), positional=1,
        doc="a bound method compiled (torch.compile(model.encode)), a bool it branches on (dynamic=True)",
        queries=(
            _q("another batch", x=[5, 6]),
            _q("normalize=False", x=[4, 6], normalize=False),
            _q("normalize=True given", x=[4, 6], normalize=True),
            _q("a 3-d input", x=[2, 3, 6]),
            _q("one row", x=[1, 6]),
        )),
    Family(
        "nested_compile", _F + "outer_gate", "outer_gate", None,
        build=(({"x": [4, 8], "w": [8, 8]},),), positional=2,
        doc="a function that calls another torch.compile'd one (dynamic=True inside, None outside)",
        queries=(
            _q("as built", x=[4, 8], w=[8, 8]),
            _q("another batch: a first call", x=[5, 8], w=[8, 8]),
            _q("another width of w", x=[4, 8], w=[8, 3]),
            _q("another batch after a recompile", x=[5, 8], w=[8, 8], warm_up=({"x": [4, 8], "w": [8, 8]},)),
        )),
    Family(
        "whisper_encoder", _H + "whisper_encoder", "WhisperEncoder", None, model=True,
        build=(({"input_features": [2, 8, 32]},),),
        doc="Whisper's audio encoder: mel features of a fixed length (dynamic=None)",
        queries=(
            _q("as built", input_features=[2, 8, 32]),
            _q("another batch", input_features=[3, 8, 32]),
            _q("another length: raises", input_features=[2, 8, 30]),
            _q("float64 features", input_features=_t([2, 8, 32], dtype="float64")),
            _q("the batch marked dynamic", input_features=_t([2, 8, 32], mark=[0])),
        )),
    Family(
        "resnet_images", _H + "resnet", "ResNetModel", True, model=True,
        build=(({"pixel_values": [2, 3, 32, 32]},),),
        doc="a ResNet of basic blocks: strided convolutions and a pooled output (dynamic=True)",
        queries=(
            _q("another batch", pixel_values=[3, 3, 32, 32]),
            _q("a larger image", pixel_values=[2, 3, 48, 48]),
            _q("odd sides", pixel_values=[2, 3, 33, 33]),
            _q("batch 1", pixel_values=[1, 3, 32, 32]),
            _q("a non-square image", pixel_values=[2, 3, 32, 40]),
            _q("output_hidden_states=True", pixel_values=[2, 3, 32, 32], output_hidden_states=True),
        )),
    Family(
        "neox_positions", _H + "gpt_neox", "GPTNeoXForCausalLM", None, model=True,
        build=(({"input_ids": _ids(2, 8), "position_ids": _ids(2, 8)},),),
        doc="GPT-NeoX built with position_ids, called with them, without, longer (dynamic=None)",
        queries=(
            _q("as built", input_ids=_ids(2, 8), position_ids=_ids(2, 8)),
            _q("position ids left out", input_ids=_ids(2, 8)),
            _q("longer", input_ids=_ids(2, 12), position_ids=_ids(2, 12)),
            _q("a mask given", input_ids=_ids(2, 8), position_ids=_ids(2, 8), attention_mask=_ids(2, 8)),
        )),
    Family(
        "roberta_pad", _H + "roberta", "RobertaModel", True, model=True,
        build=(({"input_ids": _ids(2, 8)},),),
        doc="RoBERTa: positions from the ids that are not padding (dynamic=True)",
        queries=(
            _q("longer, another batch", input_ids=_ids(3, 10)),
            _q("token types given", input_ids=_ids(2, 8), token_type_ids=_ids(2, 8)),
            _q("a mask given", input_ids=_ids(2, 8), attention_mask=_ids(2, 8)),
            _q("one token", input_ids=_ids(2, 1)),
        )),
]
