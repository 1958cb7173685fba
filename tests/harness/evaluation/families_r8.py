"""The eighth round of evaluation families: a list of tensors of varying length summed in
a loop, a dict of tensors, a tuple output a flag selects (the flag given as a bool and as an
int), an int loop count, ``torch.where`` with a Python scalar under ``dynamic=True``,
``x.shape[-1] // 2`` slices, non-contiguous inputs, a ``functools.partial`` binding a tensor
(and the tensor given over it), a method of a dataclass config, a global tensor and a
global int, requires_grad flips under grad mode and ``no_grad``, two inputs marked with a
range each, two build processes under automatic dynamic with sizes 0, 1 and 2, and GPT-Neo
(labels, ``use_cache``), Marian (labels shifted into decoder inputs), a MobileBERT
classifier (token types, labels whose dtype picks the loss) and HuBERT (a conv front end
under automatic dynamic). :mod:`tests.harness.evaluation.families` adds them to
``FAMILIES``; the comments say what each call exercises, not what torch answers. Nothing
here imports torch."""

from __future__ import annotations

from tests.harness.evaluation.family import Family
from tests.harness.evaluation.family import q as _q
from tests.harness.evaluation.family import t as _t

_F = "tests.harness.evaluation.fns_r8:"
_H = "tests.harness.evaluation.hf_r8:"
_G = {"@grad": True}


def _ids(*shape: int, **more) -> dict:
    return _t(list(shape), dtype="int64", **more)


def _l(*shapes) -> dict:
    return {"list": [list(s) for s in shapes]}


R8_FAMILIES: list[Family] = [
    Family(
        "list_varlen",
        _F + "list_total",
        "list_total",
        None,
        build=(({"xs": _l([4], [4])}, {"xs": _l([4], [4], [4])}),),
        positional=1,
        doc="a list of tensors summed in a loop, two then three in one process (dynamic=None)",
        queries=(
            _q("two, as first built", xs=_l([4], [4])),
            _q("three, as second built", xs=_l([4], [4], [4])),
            _q("four", xs=_l([4], [4], [4], [4])),
            _q("one", xs=_l([4])),
            _q("two of another size", xs=_l([6], [6])),
            _q("two, the second broadcast", xs=_l([4], [1])),
        ),
    ),
    Family(
        "dict_input",
        _F + "dict_mix",
        "dict_mix",
        True,
        build=(({"d": {"dict": {"a": [4, 8], "b": [4, 8]}}},),),
        positional=1,
        doc="a dict of tensors read by key (dynamic=True)",
        queries=(
            _q("another size", d={"dict": {"a": [6, 8], "b": [6, 8]}}),
            _q("b broadcast", d={"dict": {"a": [4, 8], "b": [8]}}),
            _q("the keys in another order", d={"dict": {"b": [4, 8], "a": [4, 8]}}),
            _q("an extra key", d={"dict": {"a": [4, 8], "b": [4, 8], "c": [4, 8]}}),
            _q("a float64", d={"dict": {"a": _t([4, 8], dtype="float64"), "b": [4, 8]}}),
        ),
    ),
    Family(
        "tuple_flag",
        _F + "split_out",
        "split_out",
        None,
        build=(({"x": [4, 8]}, {"x": [4, 8], "both": True}),),
        positional=1,
        doc="a bool flag that selects a tuple output, left out and True in one process (dynamic=None)",
        queries=(
            _q("left out", x=[4, 8]),
            _q("both=True", x=[4, 8], both=True),
            _q("both=False given", x=[4, 8], both=False),
            _q("both=1: an int, truthy", x=[4, 8], both=1),
            _q("both=0: an int, falsy", x=[4, 8], both=0),
            _q("both=True, another size", x=[6, 8], both=True),
        ),
    ),
    Family(
        "loop_count",
        _F + "loop_n",
        "loop_n",
        True,
        build=(({"x": [4, 8], "n": 3},),),
        positional=1,
        doc="an int as a loop count (dynamic=True)",
        queries=(
            _q("another size", x=[6, 10], n=3),
            _q("n=4", x=[4, 8], n=4),
            _q("n=0", x=[4, 8], n=0),
            _q("n=1", x=[4, 8], n=1),
            _q("rows 1", x=[1, 8], n=3),
        ),
    ),
    Family(
        "where_scalar_dyn",
        _F + "where_scalar",
        "where_scalar",
        True,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="torch.where with a Python float, left out when built (dynamic=True)",
        queries=(
            _q("another size", x=[6, 8]),
            _q("s given, its default", x=[4, 8], s=0.5),
            _q("another s", x=[4, 8], s=1.5),
            _q("an int s", x=[4, 8], s=0),
            _q("a negative s", x=[4, 8], s=-1.0),
        ),
    ),
    Family(
        "half_slice",
        _F + "half_split",
        "half_split",
        True,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="slices at x.shape[-1] // 2 (dynamic=True)",
        queries=(
            _q("width 10", x=[4, 10]),
            _q("width 9: odd", x=[4, 9]),
            _q("width 2", x=[4, 2]),
            _q("width 1: an empty half", x=[4, 1]),
            _q("width 0", x=[4, 0]),
            _q("three dims", x=[2, 4, 8]),
        ),
    ),
    Family(
        "strided_inputs",
        _F + "strided_add",
        "strided_add",
        None,
        build=(({"x": [6, 4], "y": [6, 4]}, {"x": [6, 4], "y": _t([6, 4], stride=[1, 6])}),),
        positional=2,
        doc="an elementwise op, y contiguous then transposed in one process (dynamic=None)",
        queries=(
            _q("both contiguous", x=[6, 4], y=[6, 4]),
            _q("y transposed", x=[6, 4], y=_t([6, 4], stride=[1, 6])),
            _q("x transposed", x=_t([6, 4], stride=[1, 6]), y=[6, 4]),
            _q("y a row slice of a wider tensor", x=[6, 4], y=_t([6, 4], stride=[8, 1])),
            _q("both contiguous, another size", x=[5, 4], y=[5, 4]),
            _q("y transposed, another size", x=[5, 4], y=_t([5, 4], stride=[1, 5])),
        ),
    ),
    Family(
        "partial_tensor",
        _F + "project",
        "_project",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="functools.partial(fn, w=TENSOR) compiled; the bound tensor given over it, or not (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8]),
            _q("shift given", x=[4, 8], shift=1.0),
            _q("another size", x=[6, 8]),
            _q("w given: the partial's shape", x=[4, 8], w=[8, 4]),
            _q("w given: another shape", x=[4, 8], w=[8, 6]),
        ),
    ),
    Family(
        "dataclass_method",
        _F + "cfg_apply",
        "apply",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="a bound method of a dataclass config compiled; its fields read off self (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8]),
            _q("another size", x=[6, 8]),
            _q("rows 1", x=[1, 8]),
            _q("float64", x=_t([4, 8], dtype="float64")),
        ),
    ),
    Family(
        "global_tensor",
        _F + "global_read",
        "global_read",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="a global tensor and a global int read as a loop count (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8]),
            _q("the global int given as built", x=[4, 8], **{"@global": {"REPEATS": 2}}),
            _q("the global int changed", x=[4, 8], **{"@global": {"REPEATS": 3}}),
            _q("the global int 0", x=[4, 8], **{"@global": {"REPEATS": 0}}),
            _q("another size", x=[6, 8]),
        ),
    ),
    Family(
        "grad_flip",
        _F + "grad_mlp",
        "grad_mlp",
        True,
        states_grad=True,
        build=(({"x": [4, 8], "w": _t([8, 4], rg=True), "b": [4], **_G},),),
        positional=3,
        doc="w requiring grad under grad mode when built; requires_grad and the grad mode flipped (dynamic=True)",
        queries=(
            _q("as built, another size", x=[6, 8], w=_t([8, 4], rg=True), b=[4], **_G),
            _q("under no_grad", x=[4, 8], w=_t([8, 4], rg=True), b=[4]),
            _q("b requires grad too", x=[4, 8], w=_t([8, 4], rg=True), b=_t([4], rg=True), **_G),
            _q("x requires grad instead of w", x=_t([4, 8], rg=True), w=[8, 4], b=[4], **_G),
            _q("nothing requires grad, grad on", x=[4, 8], w=[8, 4], b=[4], **_G),
        ),
    ),
    Family(
        "two_ranges",
        _F + "two_ranges",
        "two_ranges",
        None,
        build=(
            ({"x": _t([4, 8], mark=[0], min=2, max=16), "y": _t([6, 8], mark=[0], min=4, max=64)},),
        ),
        positional=2,
        doc="two inputs, dim 0 of each marked with a range of its own (dynamic=None)",
        queries=(
            _q(
                "other sizes in both ranges",
                x=_t([9, 8], mark=[0], min=2, max=16),
                y=_t([20, 8], mark=[0], min=4, max=64),
            ),
            _q(
                "x past its range",
                x=_t([20, 8], mark=[0], min=2, max=16),
                y=_t([6, 8], mark=[0], min=4, max=64),
            ),
            _q(
                "y below its range",
                x=_t([4, 8], mark=[0], min=2, max=16),
                y=_t([3, 8], mark=[0], min=4, max=64),
            ),
            _q(
                "equal row counts",
                x=_t([6, 8], mark=[0], min=2, max=16),
                y=_t([6, 8], mark=[0], min=4, max=64),
            ),
            _q(
                "the ranges swapped",
                x=_t([4, 8], mark=[0], min=4, max=64),
                y=_t([6, 8], mark=[0], min=2, max=16),
            ),
            _q("neither marked", x=[4, 8], y=[6, 8]),
        ),
    ),
    Family(
        "auto_two_builds",
        _F + "tiny_stack",
        "tiny_stack",
        None,
        build=(({"x": [4, 8]},), ({"x": [6, 8]},)),
        positional=1,
        doc="two build processes of one size each (dynamic=None); then sizes 0, 1, 2",
        queries=(
            _q("the first size", x=[4, 8]),
            _q("the second size", x=[6, 8]),
            _q("a third size", x=[5, 8]),
            _q("rows 2", x=[2, 8]),
            _q("rows 1", x=[1, 8]),
            _q("rows 0", x=[0, 8]),
            _q("rows 5 after a recompile", x=[5, 8], warm_up=({"x": [4, 8]},)),
        ),
    ),
    # --- transformers models, compiled whole ------------------------------------------
    Family(
        "gptneo_labels",
        _H + "gpt_neo",
        "GPTNeoForCausalLM",
        None,
        model=True,
        build=(({"input_ids": _ids(2, 8)},),),
        doc="GPT-Neo: global and local attention; labels and use_cache given or not (dynamic=None)",
        queries=(
            _q("as built", input_ids=_ids(2, 8)),
            _q("labels given", input_ids=_ids(2, 8), labels=_ids(2, 8)),
            _q("use_cache=True", input_ids=_ids(2, 8), use_cache=True),
            _q("use_cache=False given: the config's", input_ids=_ids(2, 8), use_cache=False),
            _q("a mask given", input_ids=_ids(2, 8), attention_mask=_ids(2, 8)),
            _q("longer", input_ids=_ids(2, 12)),
        ),
    ),
    Family(
        "marian_labels",
        _H + "marian",
        "MarianMTModel",
        True,
        model=True,
        build=(({"input_ids": _ids(2, 8), "labels": _ids(2, 5)},),),
        doc="Marian: labels shifted right into decoder inputs, built with labels (dynamic=True)",
        queries=(
            _q("other lengths", input_ids=_ids(3, 10), labels=_ids(3, 6)),
            _q(
                "decoder_input_ids instead of labels",
                input_ids=_ids(2, 8),
                decoder_input_ids=_ids(2, 5),
            ),
            _q("both given", input_ids=_ids(2, 8), decoder_input_ids=_ids(2, 5), labels=_ids(2, 5)),
            _q("batch 1", input_ids=_ids(1, 8), labels=_ids(1, 5)),
            _q("one label token", input_ids=_ids(2, 8), labels=_ids(2, 1)),
        ),
    ),
    Family(
        "mobilebert_labels",
        _H + "mobilebert_cls",
        "MobileBertForSequenceClassification",
        None,
        model=True,
        build=(({"input_ids": _ids(2, 8), "token_type_ids": _ids(2, 8), "labels": _ids(2)},),),
        doc="a MobileBERT classifier built with token types and int labels (dynamic=None)",
        queries=(
            _q("as built", input_ids=_ids(2, 8), token_type_ids=_ids(2, 8), labels=_ids(2)),
            _q("labels left out", input_ids=_ids(2, 8), token_type_ids=_ids(2, 8)),
            _q("token types left out", input_ids=_ids(2, 8), labels=_ids(2)),
            _q(
                "float labels: another loss",
                input_ids=_ids(2, 8),
                token_type_ids=_ids(2, 8),
                labels=[2, 60],
            ),
            _q("longer", input_ids=_ids(2, 12), token_type_ids=_ids(2, 12), labels=_ids(2)),
        ),
    ),
    Family(
        "hubert_auto",
        _H + "hubert",
        "HubertModel",
        None,
        model=True,
        build=(({"input_values": [2, 400]}, {"input_values": [2, 600]}),),
        doc="HuBERT: a conv front end; two lengths in one process (dynamic=None)",
        queries=(
            _q("the first length", input_values=[2, 400]),
            _q("a third length", input_values=[2, 800]),
            _q("batch 1", input_values=[1, 400]),
            _q("one frame left", input_values=[2, 20]),
            _q(
                "a third length after a recompile",
                input_values=[2, 800],
                warm_up=({"input_values": [2, 400]},),
            ),
        ),
    ),
]


_NO_SPEC = {"@dynamo": {"specialize_float": False}}
_NO_AUTO = {"@dynamo": {"automatic_dynamic_shapes": False}}

R8B_FAMILIES: list[Family] = [
    Family(
        "flag_int_dyn",
        _F + "split_out",
        "split_out",
        True,
        build=(({"x": [4, 8], "both": 1},),),
        positional=1,
        doc="an int given where a bool flag is read by `if` (dynamic=True)",
        queries=(
            _q("another int, truthy", x=[4, 8], both=2),
            _q("0: falsy", x=[4, 8], both=0),
            _q("True", x=[4, 8], both=True),
            _q("as built, another size", x=[6, 8], both=1),
            _q("left out", x=[4, 8]),
        ),
    ),
    Family(
        "strided_dyn",
        _F + "strided_add",
        "strided_add",
        True,
        build=(({"x": [6, 4], "y": [6, 4]},),),
        positional=2,
        doc="an elementwise op built on contiguous inputs, called with others (dynamic=True)",
        queries=(
            _q("y transposed", x=[6, 4], y=_t([6, 4], stride=[1, 6])),
            _q("both square, y transposed", x=[4, 4], y=_t([4, 4], stride=[1, 4])),
            _q("y a row slice of a wider tensor", x=[6, 4], y=_t([6, 4], stride=[8, 1])),
            _q("contiguous, another size", x=[5, 3], y=[5, 3]),
            _q("a single row, odd strides", x=[1, 4], y=_t([1, 4], stride=[9, 1])),
        ),
    ),
    Family(
        "dict_int",
        _F + "dict_scale",
        "dict_scale",
        None,
        build=(({"d": {"dict": {"x": [4, 8], "n": 2}}},),),
        positional=1,
        doc="a dict holding a tensor and an int (dynamic=None)",
        queries=(
            _q("as built", d={"dict": {"x": [4, 8], "n": 2}}),
            _q("another int", d={"dict": {"x": [4, 8], "n": 3}}),
            _q("a float for the int", d={"dict": {"x": [4, 8], "n": 2.0}}),
            _q("another size", d={"dict": {"x": [6, 8], "n": 2}}),
        ),
    ),
    Family(
        "float_unspecialized",
        _F + "where_scalar",
        "where_scalar",
        True,
        build=(({"x": [4, 8], "s": 0.5, **_NO_SPEC},),),
        positional=1,
        doc="torch.where with a Python float, built with specialize_float=False (dynamic=True)",
        queries=(
            _q("another float", x=[4, 8], s=1.5, **_NO_SPEC),
            _q("as built, another size", x=[6, 8], s=0.5, **_NO_SPEC),
            _q("an int", x=[4, 8], s=0, **_NO_SPEC),
            _q("left out", x=[4, 8], **_NO_SPEC),
            _q("another float, the config at its default", x=[4, 8], s=1.5),
        ),
    ),
    Family(
        "marked_small",
        _F + "tiny_stack",
        "tiny_stack",
        None,
        build=(({"x": _t([4, 8], mark=[0])},),),
        positional=1,
        doc="dim 0 marked dynamic, then called marked with sizes 0, 1 and 2 (dynamic=None)",
        queries=(
            _q("marked, rows 2", x=_t([2, 8], mark=[0])),
            _q("marked, rows 1", x=_t([1, 8], mark=[0])),
            _q("marked, rows 0", x=_t([0, 8], mark=[0])),
            _q("not marked, rows 1", x=[1, 8]),
            _q("not marked, rows 6", x=[6, 8]),
        ),
    ),
    Family(
        "no_auto_dynamic",
        _F + "tiny_stack",
        "tiny_stack",
        None,
        build=(({"x": [4, 8], **_NO_AUTO}, {"x": [6, 8], **_NO_AUTO}),),
        positional=1,
        doc="two sizes in one process with automatic_dynamic_shapes=False (dynamic=None)",
        queries=(
            _q("the second size", x=[6, 8], **_NO_AUTO),
            _q("a third size", x=[5, 8], **_NO_AUTO),
            _q(
                "a third size after a recompile",
                x=[5, 8],
                warm_up=({"x": [4, 8], **_NO_AUTO},),
                **_NO_AUTO,
            ),
            _q("a third size, the config at its default", x=[5, 8]),
        ),
    ),
]

R8C_FAMILIES: list[Family] = [
    Family(
        "leaky_dyn",
        _F + "leaky",
        "leaky",
        True,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="leaky_relu's float slope, left out when built (dynamic=True)",
        queries=(
            _q("another size", x=[6, 8]),
            _q("the slope given, its default", x=[4, 8], slope=0.1),
            _q("another slope", x=[4, 8], slope=0.2),
        ),
    ),
    Family(
        "clamp_dyn",
        _F + "clamp_low",
        "clamp_low",
        True,
        build=(({"x": [4, 8], "lo": 0.25},),),
        positional=1,
        doc="clamp's float lower bound, given when built (dynamic=True)",
        queries=(
            _q("as built, another size", x=[6, 8], lo=0.25),
            _q("another bound", x=[4, 8], lo=0.5),
            _q("left out: the default", x=[4, 8]),
        ),
    ),
]
