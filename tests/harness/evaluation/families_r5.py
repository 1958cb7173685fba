"""The fifth round of evaluation families: optional float bounds of ``clamp``, ints that
index (negative too), float defaults of 1.0 and 0.0, a bool between two ops of one count,
ints through ``expand`` and factories, a dict of Python values as a config, a ``print()``
graph break, a ``ModuleList`` sliced by an int, ``torch.no_grad()`` inside the function,
``torch.cond``, an int through ``unflatten``, negative slice bounds, Dynamo's ``recompile_limit``, and Phi,
DeBERTa-v2, Gemma and ELECTRA. :mod:`tests.harness.evaluation.families` adds them to
``FAMILIES``; the comments say what each call exercises, not what torch answers. Nothing
here imports torch."""

from __future__ import annotations

from tests.harness.evaluation.family import Family
from tests.harness.evaluation.family import q as _q
from tests.harness.evaluation.family import t as _t

_F = "tests.harness.evaluation.fns_r5:"
_H = "tests.harness.evaluation.hf_r5:"


def _ids(*shape: int, **more) -> dict:
    return _t(list(shape), dtype="int64", **more)


_CFG = {"n": 4, "scale": 0.5, "act": "relu", "norm": True}
_LIMIT = {"@dynamo": {"recompile_limit": 2}}

R5_FAMILIES: list[Family] = [
    Family(
        "clamp_bounds", _F + "clamp_range", "clamp_range", None,
        build=(({"x": [4, 8], "lo": -1.0},),), positional=1,
        doc="torch.clamp with float bounds, one of them None by default (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8], lo=-1.0),
            _q("another lo", x=[4, 8], lo=-0.5),
            _q("lo left out: None", x=[4, 8]),
            _q("hi=None given", x=[4, 8], lo=-1.0, hi=None),
            _q("another hi", x=[4, 8], lo=-1.0, hi=2.0),
            _q("another size", x=[6, 8], lo=-1.0),
        )),
    Family(
        "int_index", _F + "pick", "pick", True,
        build=(({"x": [6, 5], "i": 2},),), positional=1,
        doc="ints that index a row and a column, the column -1 by default (dynamic=True)",
        queries=(
            _q("another row", x=[6, 5], i=3),
            _q("a negative row", x=[6, 5], i=-1),
            _q("column 0", x=[6, 5], i=2, j=0),
            _q("column -2", x=[6, 5], i=2, j=-2),
            _q("the last row", x=[6, 5], i=5),
            _q("a row past the end: raises", x=[6, 5], i=6),
            _q("another size", x=[8, 7], i=2),
        )),
    Family(
        "unit_defaults", _F + "blend", "blend", None,
        build=(({"x": [4, 4]},),), positional=1,
        doc="float defaults 1.0 and 0.0: x * a + b (dynamic=None)",
        queries=(
            _q("as built", x=[4, 4]),
            _q("a=1.0 given", x=[4, 4], a=1.0),
            _q("another a", x=[4, 4], a=2.0),
            _q("another b", x=[4, 4], b=0.5),
            _q("an int a", x=[4, 4], a=1),
            _q("an int b", x=[4, 4], b=0),
            _q("another size", x=[5, 4]),
        )),
    Family(
        "bool_same_ops", _F + "flip_op", "flip_op", False,
        build=(({"x": [4, 4]}, {"x": [4, 4], "use_sin": False}),), positional=1,
        doc="a bool choosing sin or cos, both built in one process (dynamic=False)",
        queries=(
            _q("left out", x=[4, 4]),
            _q("False", x=[4, 4], use_sin=False),
            _q("True given", x=[4, 4], use_sin=True),
            _q("an int 0 for the bool", x=[4, 4], use_sin=0),
            _q("None for the bool", x=[4, 4], use_sin=None),
            _q("another size", x=[5, 4], use_sin=False),
        )),
    Family(
        "expand_ints", _F + "expand_rows", "expand_rows", None,
        build=(({"x": [1, 8], "n": 4}, {"x": [1, 8], "n": 5}),), positional=1,
        doc="ints through expand and torch.zeros/ones, two values in one process (dynamic=None)",
        queries=(
            _q("the first n", x=[1, 8], n=4),
            _q("the second n", x=[1, 8], n=5),
            _q("a third n", x=[1, 8], n=7),
            _q("n = 1", x=[1, 8], n=1),
            _q("another m", x=[1, 8], n=4, m=4),
            _q("x of two rows: raises", x=[2, 8], n=4),
            _q("a third n after a recompile", x=[1, 8], n=7, warm_up=({"x": [1, 8], "n": 4},)),
        )),
    Family(
        "dict_config", _F + "cfg_block", "cfg_block", None,
        build=(({"x": [4, 8], "cfg": {"dict": _CFG}},),), positional=2,
        doc="a dict of Python values (int, float, str, bool) read as a config (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8], cfg={"dict": _CFG}),
            _q("another n", x=[4, 8], cfg={"dict": {**_CFG, "n": 6}}),
            _q("another scale", x=[4, 8], cfg={"dict": {**_CFG, "scale": 0.25}}),
            _q("another act", x=[4, 8], cfg={"dict": {**_CFG, "act": "gelu"}}),
            _q("norm off", x=[4, 8], cfg={"dict": {**_CFG, "norm": False}}),
            _q("another batch", x=[6, 8], cfg={"dict": _CFG}),
        )),
    Family(
        "print_break", _F + "print_break", "print_break", None,
        build=(({"x": [4, 8], "n": 3},),), positional=1,
        doc="a print() breaks the graph; an int read on both sides of it (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8], n=3),
            _q("another n", x=[4, 8], n=2),
            _q("another size", x=[5, 8], n=3),
            _q("another n after a recompile", x=[4, 8], n=2, warm_up=({"x": [4, 8], "n": 3},)),
        )),
    Family(
        "layer_slice", _F + "stack", "Stack", None, model=True,
        build=(({"x": [4, 8]}, {"x": [4, 8], "depth": 3}),), positional=1,
        doc="a ModuleList sliced by an int: depth 2 (default) and 3 built (dynamic=None)",
        queries=(
            _q("left out", x=[4, 8]),
            _q("depth=2 given", x=[4, 8], depth=2),
            _q("depth=3", x=[4, 8], depth=3),
            _q("depth=1", x=[4, 8], depth=1),
            _q("depth=5: the slice stops at 3", x=[4, 8], depth=5),
            _q("depth=0", x=[4, 8], depth=0),
            _q("another batch", x=[6, 8], depth=3),
        )),
    Family(
        "inner_no_grad", _F + "inner_no_grad", "inner_no_grad", None,
        build=(({"x": _t([4, 8], rg=True), "w": [8, 8], "@grad": True},),), positional=2,
        doc="torch.no_grad() inside the function, built with grad and x requiring it (dynamic=None)",
        queries=(
            _q("as built", x=_t([4, 8], rg=True), w=[8, 8], **{"@grad": True}),
            _q("under no_grad", x=[4, 8], w=[8, 8]),
            _q("grad on, nothing requires it", x=[4, 8], w=[8, 8], **{"@grad": True}),
            _q("another size", x=_t([6, 8], rg=True), w=[8, 8], **{"@grad": True}),
        ), states_grad=True),
    Family(
        "cond_data", _F + "cond_branch", "cond_branch", True,
        build=(({"x": [4, 4]},),), positional=1,
        doc="torch.cond on x.sum() > 0 (dynamic=True)",
        queries=(
            _q("another size", x=[6, 3]),
            _q("one row", x=[1, 4]),
            _q("float64", x=_t([4, 4], dtype="float64")),
            _q("a 3-d input", x=[2, 4, 4]),
        )),
    Family(
        "unflatten_heads", _F + "unflat_heads", "unflat_heads", True,
        build=(({"x": [4, 8], "heads": 2},),), positional=1,
        doc="an int through unflatten(-1, (heads, -1)) (dynamic=True)",
        queries=(
            _q("another heads", x=[4, 8], heads=4),
            _q("heads not dividing: raises", x=[4, 8], heads=3),
            _q("one head", x=[4, 8], heads=1),
            _q("wider", x=[4, 12], heads=2),
            _q("odd width: raises", x=[4, 9], heads=2),
        )),
    Family(
        "neg_slice", _F + "neg_slice", "neg_slice", True,
        build=(({"x": [4, 10], "k": 3},),), positional=1,
        doc="an int through negative slice bounds, x[:, :-k] and x[:, -k:] (dynamic=True)",
        queries=(
            _q("another k", x=[4, 10], k=2),
            _q("k = 0: the first slice empty", x=[4, 10], k=0),
            _q("k = 1", x=[4, 10], k=1),
            _q("k the whole width", x=[4, 10], k=10),
            _q("k past the width", x=[4, 10], k=12),
            _q("another size", x=[6, 12], k=3),
        )),
    Family(
        "recompile_limit", _F + "scale_rows", "scale_rows", False,
        build=(({"x": [4, 4], "k": 1, **_LIMIT}, {"x": [4, 4], "k": 2, **_LIMIT}),), positional=1,
        doc="an int factor under recompile_limit=2, two values built in one process (dynamic=False)",
        queries=(
            _q("the first k", x=[4, 4], k=1, **_LIMIT),
            _q("the second k", x=[4, 4], k=2, **_LIMIT),
            _q("a third k: a fresh process", x=[4, 4], k=3, **_LIMIT),
            _q("a third k past the limit", x=[4, 4], k=3, **_LIMIT,
               warm_up=({"x": [4, 4], "k": 1, **_LIMIT}, {"x": [4, 4], "k": 2, **_LIMIT})),
        )),
    Family(
        "phi_decoder", _H + "phi", "PhiForCausalLM", None, model=True,
        build=(({"input_ids": _ids(2, 8)},),),
        doc="Phi: partial rotary, parallel block; mask, position ids, batch 1, one token (dynamic=None)",
        queries=(
            _q("as built", input_ids=_ids(2, 8)),
            _q("a mask given", input_ids=_ids(2, 8), attention_mask=_ids(2, 8)),
            _q("position ids given", input_ids=_ids(2, 8), position_ids=_ids(2, 8)),
            _q("batch 1", input_ids=_ids(1, 8)),
            _q("one token", input_ids=_ids(2, 1)),
            _q("use_cache=False given", input_ids=_ids(2, 8), use_cache=False),
        )),
    Family(
        "deberta_rel", _H + "deberta_v2", "DebertaV2Model", True, model=True,
        build=(({"input_ids": _ids(2, 8), "attention_mask": _ids(2, 8)},),),
        doc="DeBERTa-v2: log-bucketed relative positions, built with a mask (dynamic=True)",
        queries=(
            _q("longer, another batch", input_ids=_ids(3, 12), attention_mask=_ids(3, 12)),
            _q("without the mask", input_ids=_ids(2, 8)),
            _q("batch 1", input_ids=_ids(1, 8), attention_mask=_ids(1, 8)),
            _q("one token", input_ids=_ids(2, 1), attention_mask=_ids(2, 1)),
            _q("past the bucket span", input_ids=_ids(2, 40), attention_mask=_ids(2, 40)),
        )),
    Family(
        "gemma_decoder", _H + "gemma", "GemmaForCausalLM", True, model=True,
        build=(({"input_ids": _ids(2, 8)},),),
        doc="Gemma: scaled embeddings, grouped-query attention (dynamic=True)",
        queries=(
            _q("longer", input_ids=_ids(2, 12)),
            _q("batch 1", input_ids=_ids(1, 8)),
            _q("one token", input_ids=_ids(2, 1)),
            _q("position ids given", input_ids=_ids(2, 8), position_ids=_ids(2, 8)),
            _q("a mask given", input_ids=_ids(2, 8), attention_mask=_ids(2, 8)),
        )),
    Family(
        "electra_disc", _H + "electra", "ElectraForPreTraining", None, model=True,
        build=(({"input_ids": _ids(2, 8)}, {"input_ids": _ids(2, 10)}),),
        doc="ELECTRA: two lengths in one process, automatic dynamic (dynamic=None)",
        queries=(
            _q("the first length", input_ids=_ids(2, 8)),
            _q("the second length", input_ids=_ids(2, 10)),
            _q("a third length", input_ids=_ids(2, 12)),
            _q("batch 1", input_ids=_ids(1, 10)),
            _q("one token", input_ids=_ids(2, 1)),
            _q("token types given", input_ids=_ids(2, 8), token_type_ids=_ids(2, 8)),
        )),
]
