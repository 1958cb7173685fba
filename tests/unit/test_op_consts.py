"""A tuple of ints or a str passed to ``F.pad`` or ``F.gelu``, read off the ops that show it
(fxcache_core/lookup/op_consts.py).

The graphs are as torch 2.13 printed them (``aot_forward_graph_str``) on CPU for
``pad_act(x, pad=(1, 1), mode="constant", approximate="none")`` (x [2, 3, 8]) built with the
defaults, with ``mode="reflect"`` and with ``approximate="tanh"``, and under ``dynamic=True``
with ``pad=(2, 3)`` (the pads are inputs); only the file paths are changed. What torch answers
for such calls is the recorded corpus's (tests/torch/test_op_consts.py); here the reading of
the graph is checked in-process.
"""

from __future__ import annotations

import pytest

from fxcache_core.lookup.op_consts import op_const_provenance
from tests.synth import one_def, torch_importing_module

FILE = torch_importing_module()
TORCH = "/venv/lib/python3.11/site-packages/torch/nn/functional.py"
_PAD_LINE = "y = F.pad(x, pad, mode=mode)"
_ACT_LINE = "return F.gelu(y, approximate=approximate).softmax(-1)"
PAD_ACT = one_def(
    'def pad_act(x, pad=(1, 1), mode="constant", approximate="none"):\n'
    f"    {_PAD_LINE}\n    {_ACT_LINE}\n"
)
_PAD_COMMENT = (
    f"        # File: {TORCH}:5823 in pad, code: return torch._C._nn.pad(input, pad, mode, value)"
)
_HEAD = (
    'class <lambda>(torch.nn.Module):\n    def forward(self, arg0_1: "f32[2, 3, 8][24, 8, 1]cpu"):'
)
_T = "f32[2, 3, 10][30, 10, 1]cpu"
_CONSTANT = f'        constant_pad_nd: "{_T}" = torch.ops.aten.constant_pad_nd.default(arg0_1, [1, 1], 0.0);  arg0_1 = None'
_REFLECT = "\n".join(
    f"        {op}"
    for op in [
        'iota: "i64[10][1]cpu" = torch.ops.prims.iota.default(10, start = -1, step = 1, dtype = torch.int64, '
        "device = device(type='cpu'), requires_grad = False)",
        'abs_1: "i64[10][1]cpu" = torch.ops.aten.abs.default(iota);  iota = None',
        'sub: "i64[10][1]cpu" = torch.ops.aten.sub.Tensor(7, abs_1);  abs_1 = None',
        'abs_2: "i64[10][1]cpu" = torch.ops.aten.abs.default(sub);  sub = None',
        'sub_1: "i64[10][1]cpu" = torch.ops.aten.sub.Tensor(7, abs_2);  abs_2 = None',
        f'constant_pad_nd: "{_T}" = torch.ops.aten._unsafe_index.Tensor(arg0_1, [None, None, sub_1]);  arg0_1 = None',
    ]
)
_ERF = [
    f'mul: "{_T}" = torch.ops.aten.mul.Tensor(constant_pad_nd, 0.5)',
    f'mul_1: "{_T}" = torch.ops.aten.mul.Tensor(constant_pad_nd, 0.7071067811865476);  constant_pad_nd = None',
    f'erf: "{_T}" = torch.ops.aten.erf.default(mul_1);  mul_1 = None',
    f'add: "{_T}" = torch.ops.aten.add.Tensor(erf, 1);  erf = None',
    f'mul_2: "{_T}" = torch.ops.aten.mul.Tensor(mul, add);  mul = add = None',
]
_TANH = [
    f'mul: "{_T}" = torch.ops.aten.mul.Tensor(constant_pad_nd, constant_pad_nd)',
    f'mul_1: "{_T}" = torch.ops.aten.mul.Tensor(mul, constant_pad_nd);  mul = None',
    f'mul_2: "{_T}" = torch.ops.aten.mul.Tensor(mul_1, 0.044715);  mul_1 = None',
    f'add: "{_T}" = torch.ops.aten.add.Tensor(constant_pad_nd, mul_2);  mul_2 = None',
    f'mul_3: "{_T}" = torch.ops.aten.mul.Tensor(add, 0.7978845608028654);  add = None',
    f'mul_4: "{_T}" = torch.ops.aten.mul.Tensor(constant_pad_nd, 0.5);  constant_pad_nd = None',
    f'tanh: "{_T}" = torch.ops.aten.tanh.default(mul_3);  mul_3 = None',
    f'add_1: "{_T}" = torch.ops.aten.add.Tensor(tanh, 1);  tanh = None',
    f'mul_2: "{_T}" = torch.ops.aten.mul.Tensor(mul_4, add_1);  mul_4 = add_1 = None',
]
_SOFTMAX = [
    'amax: "f32[2, 3, 1][3, 1, 1]cpu" = torch.ops.aten.amax.default(mul_2, [-1], True)',
    f'sub_2: "{_T}" = torch.ops.aten.sub.Tensor(mul_2, amax);  mul_2 = amax = None',
    f'exp: "{_T}" = torch.ops.aten.exp.default(sub_2);  sub_2 = None',
    'sum_1: "f32[2, 3, 1][3, 1, 1]cpu" = torch.ops.aten.sum.dim_IntList(exp, [-1], True)',
    f'div: "{_T}" = torch.ops.aten.div.Tensor(exp, sum_1);  exp = sum_1 = None',
]


def _graph(pad: str, act: list[str]) -> str:
    body = [
        f"        # File: {FILE}:3 in pad_act, code: {_ACT_LINE}",
        *(f"        {o}" for o in [*act, *_SOFTMAX]),
    ]
    return "\n".join([_HEAD, _PAD_COMMENT, pad, *body, "        return (div,)"])


DEFAULTS = _graph(_CONSTANT, _ERF)
REFLECT = _graph(_REFLECT, _ERF)
TANH = _graph(_CONSTANT, _TANH)
SYMBOLIC = DEFAULTS.replace("[1, 1], 0.0", "[arg1_1, arg2_1], 0.0")  # dynamic=True, pad=(2, 3)


@pytest.mark.parametrize(
    "graph,param,values,status",
    [
        (DEFAULTS, "pad", {}, "same"),  # left out: its default (1, 1)
        (DEFAULTS, "pad", {"pad": (1, 1)}, "same"),
        (
            DEFAULTS,
            "pad",
            {"pad": [1, 1]},
            "same",
        ),  # a list: the op cannot tell (the account says so)
        (DEFAULTS, "pad", {"pad": (2, 0)}, "differs"),
        (DEFAULTS, "pad", {"pad": (1, 1, 0, 0)}, "differs"),
        (DEFAULTS, "mode", {}, "same"),
        (DEFAULTS, "mode", {"mode": "reflect"}, "differs"),
        (DEFAULTS, "approximate", {}, "same"),
        (DEFAULTS, "approximate", {"approximate": "tanh"}, "differs"),
        (TANH, "approximate", {"approximate": "tanh"}, "same"),
        (TANH, "approximate", {}, "differs"),
    ],
)
def test_the_ops_show_the_value_the_key_was_traced_with(graph, param, values, status):
    got = op_const_provenance(PAD_ACT, FILE, graph, param, values)
    assert got is not None and got.status == status, got
    assert got.why is not None and got.why.code == f"op-const-{status}"


@pytest.mark.parametrize(
    "graph,param,values",
    [
        (REFLECT, "mode", {}),  # no constant_pad_nd: which mode is a pattern of ops
        (REFLECT, "pad", {}),
        (SYMBOLIC, "pad", {"pad": (2, 3)}),  # the pads are the graph's inputs
        (DEFAULTS, "mode", {"mode": "bogus"}),  # torch raises: no graph to name
        (DEFAULTS, "pad", {"pad": (1,)}),
        (DEFAULTS, "approximate", {"approximate": "exact"}),
    ],
)
def test_what_the_ops_do_not_show_exactly_is_unknown(graph, param, values):
    got = op_const_provenance(PAD_ACT, FILE, graph, param, values)
    assert got is not None and got.status == "unknown", got
    assert got.why is not None and got.why.code == "op-const-unknown"


@pytest.mark.parametrize(
    "source,param",
    [
        # A second pad: its ops carry the same comment.
        ("def f(x, pad=(1, 1)):\n    y = F.pad(F.pad(x, pad), (0, 1))\n    return y", "pad"),
        # A tanh beside the gelu: which made the op is not known.
        (
            "def f(x, approximate='none'):\n    return F.gelu(x, approximate=approximate) * x.tanh()",
            "approximate",
        ),
        # A helper may call the function again, with another value.
        ("def f(x, pad=(1, 1)):\n    y = F.pad(x, pad)\n    return helper(y)", "pad"),
        # In a loop: more than one run of the call.
        (
            "def f(x, pad=(1, 1)):\n    for _ in range(2):\n        x = F.pad(x, pad)\n    return x",
            "pad",
        ),
        # The call in a branch of a conditional expression.
        ("def f(x, pad=(1, 1), on=True):\n    return F.pad(x, pad) if on else x", "pad"),
    ],
)
def test_a_read_the_ops_may_not_show_alone_is_unknown(source, param):
    fn = one_def(source)
    got = op_const_provenance(fn, FILE, DEFAULTS.replace("pad_act", "f"), param, {})
    assert got is not None and got.status == "unknown", got


def test_a_str_also_tested_in_the_code_is_pinned_by_its_op():
    fn = one_def(
        "def f(x, mode='constant'):\n    return F.pad(x, (1, 1), mode=mode) * (2 if mode == 'constant' else 3)"
    )
    got = op_const_provenance(fn, FILE, DEFAULTS, "mode", {"mode": "replicate"})
    assert got is not None and got.status == "differs", got


def test_a_parameter_no_such_call_reads_is_another_rules():
    fn = one_def("def f(x, mode='sum'):\n    return x.sum(0) if mode == 'sum' else x.mean(0)")
    assert op_const_provenance(fn, FILE, DEFAULTS, "mode", {}) is None
    assigned = one_def("def f(x, pad=(1, 1)):\n    pad = (2, 2)\n    return F.pad(x, pad)")
    assert op_const_provenance(assigned, FILE, DEFAULTS, "pad", {}) is None


@pytest.mark.parametrize(
    "imports",
    [
        "import torchvision.transforms.functional as F\n",  # another pad: (left, top, right, bottom)
        "import torch.nn.functional as F\nF = None\n",  # rebound
        "",  # F bound nowhere the module shows
    ],
)
def test_a_name_the_module_does_not_import_from_torch_is_not_read_as_torch_s(tmp_path, imports):
    module = tmp_path / "fns.py"
    module.write_text("import torch\n" + imports)
    got = op_const_provenance(PAD_ACT, str(module), DEFAULTS, "pad", {})
    assert got is not None and got.status == "unknown", got
    assert "not known to be torch.nn.functional.pad" in str(got.why)
