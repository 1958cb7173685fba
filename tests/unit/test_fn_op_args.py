"""A bool or float passed to ``F.scaled_dot_product_attention``, read off the flash-attention
op that keeps it by its place (fxcache_core/lookup/fn_op_args.py).

The op lines are as torch 2.13 printed them (``aot_forward_graph_str``) on CPU for
``attend(q, k, v, is_causal=False, mask=None)`` and ``drop_attend(q, k, v, dropout_p=0.0,
scale=None)``, q, k and v [1, 2, 6, 8], dynamic=None, built with the defaults, with
``is_causal=True``, with a [6, 6] float mask, with ``scale=0.5`` and with
``dropout_p=0.25`` (the math path: no such op); only the file path is changed. What torch
answers for such calls is the recorded corpus's (tests/torch/test_fn_op_args.py); here the
reading of the graph is checked in-process.
"""

from __future__ import annotations

import pytest

from fxcache_core.lookup.float_restart import float_ops
from fxcache_core.lookup.fn_op_args import fn_op_provenance, fn_tensor_absent
from tests.synth import one_def, op_graph, torch_importing_module

FILE = torch_importing_module()
_T = "f32[1, 2, 6, 8][96, 48, 8, 1]cpu"
_OP = "_scaled_dot_product_flash_attention_for_cpu = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default"
_GETITEM = f'getitem: "{_T}" = _scaled_dot_product_flash_attention_for_cpu[0]'


def _graph(code: str, args: str, line: int = 2) -> str:
    return op_graph(
        FILE,
        line,
        code,
        [f"{_OP}({args});  arg0_1 = arg1_1 = arg2_1 = None", _GETITEM],
        tensor=_T,
        returns="getitem",
    )


ATTEND_CODE = "return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=is_causal)"
ATTEND = one_def(f"def attend(q, k, v, is_causal=False, mask=None):\n    {ATTEND_CODE}\n")
ATTEND_DEFAULTS = _graph(ATTEND_CODE, "arg0_1, arg1_1, arg2_1")
ATTEND_CAUSAL = _graph(ATTEND_CODE, "arg0_1, arg1_1, arg2_1, 0.0, True")
ATTEND_MASKED = _graph(ATTEND_CODE, "arg0_1, arg1_1, arg2_1, attn_mask = arg3_1")

DROP_CODE = "return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, scale=scale)"
DROP = one_def(f"def drop_attend(q, k, v, dropout_p=0.0, scale=None):\n    {DROP_CODE}\n")
DROP_DEFAULTS = _graph(DROP_CODE, "arg0_1, arg1_1, arg2_1")
DROP_SCALED = _graph(DROP_CODE, "arg0_1, arg1_1, arg2_1, scale = 0.5")
DROP_MATH = op_graph(
    FILE,
    2,
    DROP_CODE,
    [
        'mul: "f32[1, 2, 6, 8][96, 48, 8, 1]cpu" = torch.ops.aten.mul.Scalar(arg0_1, 0.5946035575013605);  arg0_1 = None',
        'rand: "f32[1, 2, 6, 6][72, 36, 6, 1]cpu" = torch.ops.aten.rand.default([1, 2, 6, 6], dtype = torch.float32, '
        "device = device(type='cpu'), pin_memory = False)",
        'gt: "b8[1, 2, 6, 6][72, 36, 6, 1]cpu" = torch.ops.aten.gt.Scalar(rand, 0.25);  rand = None',
    ],
    tensor=_T,
    returns="gt",
)


@pytest.mark.parametrize(
    "graph,values,status",
    [
        (ATTEND_DEFAULTS, {"is_causal": False}, "same"),
        (ATTEND_DEFAULTS, {}, "same"),  # left out: its default, False
        (ATTEND_DEFAULTS, {"is_causal": True}, "differs"),
        (ATTEND_CAUSAL, {"is_causal": True}, "same"),
        (ATTEND_CAUSAL, {}, "differs"),
    ],
)
def test_is_causal_is_the_ops_fifth_argument_false_where_it_prints_none(graph, values, status):
    got = fn_op_provenance(ATTEND, FILE, graph, "is_causal", values)
    assert got is not None and got.status == status, got
    assert got.why is not None and got.why.code == f"fn-arg-{status}"
    assert got.uses == ()  # a bool: no float for the restart rule to look for


@pytest.mark.parametrize(
    "graph,param,values,status",
    [
        (DROP_DEFAULTS, "dropout_p", {}, "same"),
        (DROP_DEFAULTS, "dropout_p", {"dropout_p": 0.0}, "same"),
        (DROP_DEFAULTS, "dropout_p", {"dropout_p": 0.25}, "differs"),
        (DROP_DEFAULTS, "scale", {"scale": None}, "same"),
        (DROP_DEFAULTS, "scale", {"scale": 0.5}, "differs"),
        (DROP_SCALED, "scale", {"scale": 0.5}, "same"),
        (DROP_SCALED, "scale", {}, "differs"),  # left out: None, where the op has 0.5
        (DROP_SCALED, "scale", {"scale": 0.25}, "differs"),
    ],
)
def test_dropout_p_and_scale_are_the_ops_floats(graph, param, values, status):
    got = fn_op_provenance(DROP, FILE, graph, param, values)
    assert got is not None and got.status == status, got


def test_a_value_of_another_kind_or_the_math_path_is_unknown():
    got = fn_op_provenance(DROP, FILE, DROP_DEFAULTS, "dropout_p", {"dropout_p": 0})  # an int
    assert (
        got is not None
        and got.status == "unknown"
        and got.why is not None
        and got.why.code == "fn-arg-unknown"
    )
    got = fn_op_provenance(DROP, FILE, DROP_MATH, "dropout_p", {"dropout_p": 0.25})
    assert (
        got is not None
        and got.status == "unknown"
        and "0 _scaled_dot_product_flash_attention_for_cpu" in got.why
    )


def test_a_float_the_op_holds_is_specialized_by_a_restart_under_dynamic_true():
    got = fn_op_provenance(DROP, FILE, DROP_SCALED, "scale", {"scale": 0.5})
    assert got is not None and got.status == "same"
    assert float_ops(DROP_SCALED, "scale", got, {"scale": 0.5}).outcome == "specialized"
    got = fn_op_provenance(DROP, FILE, DROP_DEFAULTS, "dropout_p", {})  # 0.0: printed nowhere
    assert (
        got is not None
        and float_ops(DROP_DEFAULTS, "dropout_p", got, {"dropout_p": 0.0}).outcome == "specialized"
    )


def test_a_mask_the_op_holds_none_of_was_none_when_the_key_was_traced():
    assert fn_tensor_absent(ATTEND, FILE, ATTEND_DEFAULTS, "mask") == 2
    assert fn_tensor_absent(ATTEND, FILE, ATTEND_MASKED, "mask") is None
    got = fn_op_provenance(ATTEND, FILE, ATTEND_MASKED, "mask", {"mask": None})
    assert got is not None and got.status == "differs" and "attn_mask=a tensor" in got.why
    got = fn_op_provenance(ATTEND, FILE, ATTEND_DEFAULTS, "mask", {})
    assert got is not None and got.status == "same"


@pytest.mark.parametrize(
    "src",
    [
        # an expression of it, not the name: another rule's (None)
        "def attend(q, k, v, is_causal=False):\n    return F.scaled_dot_product_attention(q, k, v, is_causal=not is_causal)\n",
        # assigned before the call: not the call's value
        "def attend(q, k, v, is_causal=False):\n    is_causal = True\n"
        "    return F.scaled_dot_product_attention(q, k, v, is_causal=is_causal)\n",
        # read elsewhere too
        "def attend(q, k, v, is_causal=False):\n    return F.scaled_dot_product_attention(q, k, v, is_causal=is_causal), is_causal\n",
        # a keyword the table does not place
        "def attend(q, k, v, is_causal=False):\n"
        "    return F.scaled_dot_product_attention(q, k, v, is_causal=is_causal, enable_gqa=True)\n",
    ],
)
def test_a_read_that_is_not_the_bare_argument_is_not_read_here(src):
    assert (
        fn_op_provenance(one_def(src), FILE, ATTEND_CAUSAL, "is_causal", {"is_causal": True})
        is None
    )


@pytest.mark.parametrize(
    "src,line",
    [
        (
            "def attend(q, k, v, is_causal=False):\n    for _ in range(2):\n"
            "        q = F.scaled_dot_product_attention(q, k, v, is_causal=is_causal)\n    return q\n",
            3,
        ),
        (
            "def attend(q, k, v, is_causal=False):\n"
            "    return F.scaled_dot_product_attention(q, k, v, is_causal=is_causal) + "
            "F.scaled_dot_product_attention(k, q, v)\n",
            2,
        ),
        (
            "def attend(q, k, v, is_causal=False, m=None):\n"
            "    return F.scaled_dot_product_attention(q, k, v, is_causal=is_causal) if m is None else q\n",
            2,
        ),
    ],
)
def test_a_statement_whose_ops_may_not_pair_with_the_call_is_unknown(src, line):
    code = src.splitlines()[line - 1].strip()
    graph = _graph(code, "arg0_1, arg1_1, arg2_1, 0.0, True", line=line)
    got = fn_op_provenance(one_def(src), FILE, graph, "is_causal", {"is_causal": True})
    assert got is not None and got.status == "unknown", got


@pytest.mark.parametrize(
    "body",
    [
        # its own name: the op may be the second run's (is_causal=True there)
        "if bias is not None:\n        return attend(q + bias, k, v, True)\n    ",
        # a submodule may be of its own class, and run this same forward again
        "if bias is not None:\n        return self.inner(q, k, v, True)\n    ",
        # a helper may call it back
        "if bias is not None:\n        q = helper(q, bias)\n    ",
    ],
)
def test_a_function_that_may_run_again_leaves_its_op_unknown(body):
    src = (
        f"def attend(self, q, k, v, is_causal=False, bias=None):\n    {body}"
        f"return F.scaled_dot_product_attention(q, k, v, is_causal=is_causal)\n"
    )
    code = "return F.scaled_dot_product_attention(q, k, v, is_causal=is_causal)"
    line = src.count("\n")
    got = fn_op_provenance(
        one_def(src),
        FILE,
        _graph(code, "arg0_1, arg1_1, arg2_1, 0.0, True", line),
        "is_causal",
        {"is_causal": False},
    )
    assert (
        got is not None and got.status == "unknown" and "run this function again" in got.why.text
    ), got


def test_torch_functions_builtins_and_methods_of_its_locals_do_not_run_it_again():
    code = "return F.scaled_dot_product_attention(q, k, v, is_causal=is_causal)"
    src = (
        "def attend(q, k, v, is_causal=False):\n"
        "    q = torch.relu(q.transpose(1, 2)).transpose(1, 2) * math.sqrt(len(q.shape))\n"
        f"    {code}\n"
    )
    got = fn_op_provenance(
        one_def(src),
        FILE,
        _graph(code, "arg0_1, arg1_1, arg2_1", 3),
        "is_causal",
        {"is_causal": True},
    )
    assert got is not None and got.status == "differs", got
