"""A tensor parameter computed into what a function returns
(fxcache_core/lookup/tensor_flow.py), on sources written by hand; the real calls, with
torch as the judge, are tests/torch/test_tensor_flow.py's."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from fxcache_core.lookup.tensor_flow import body_op_into_output, computed_into_output

_IMPORTS = "import torch\nimport torch.nn.functional as F\n"


def _flow(
    tmp_path: Path, body: str, *, imports: str = _IMPORTS, tensors=("q", "k", "v", "x")
) -> int | None:
    src = imports + body
    path = tmp_path / "m.py"
    path.write_text(src)
    fn = next(n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef))
    return computed_into_output(fn, str(path), "mask", set(tensors))


@pytest.mark.parametrize(
    "body,line",
    [
        (
            "def f(q, k, v, mask=None):\n    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)\n",
            4,
        ),
        (
            "def f(q, k, v, mask=None):\n    return torch.nn.functional.scaled_dot_product_attention(q, k, v, mask)\n",
            4,
        ),
        ("def f(x, mask=None):\n    return x + mask\n", 4),
        ("def f(x, mask=None):\n    return 2 * -mask\n", 4),
        ("def f(x, mask=None):\n    y = x * 2\n    return y + mask\n", 5),
        (
            "def f(x, mask=None):\n    s = torch.matmul(x, x.t())\n    if mask is not None:\n        s = s + mask\n"
            "    return s.softmax(-1)\n",
            7,
        ),
        # `if mask is None:` without else never runs for a tensor, even where it returns.
        ("def f(x, mask=None):\n    if mask is None:\n        return x\n    return x + mask\n", 6),
        ("def f(x, mask=None):\n    y = torch.where(mask, x, 0.0)\n    return x, y\n", 5),
        ("def f(x, mask=None):\n    return {'out': x.masked_fill(mask[:, None], 0.0)}\n", 4),
        ("def f(x, mask=None):\n    y = x\n    y += mask\n    return y\n", 6),
        # A conditional expression both of whose sides read it.
        (
            "def f(x, mask=None, mode='sum'):\n    s = x * mask\n    return s.sum(0) if mode == 'sum' else s.mean(0)\n",
            5,
        ),
        ("def f(x, mask=None):\n    y = x.repeat(2, 1) + mask\n    return y.cos()\n", 5),
        # The side a tensor takes: the else of `is None`, the body of `is not None` (with an else).
        ("def f(x, mask=None):\n    return x if mask is None else x + mask\n", 4),
        (
            "def f(x, mask=None):\n    if mask is None:\n        return x.relu()\n    else:\n"
            "        x = x * mask\n    return x.exp()\n",
            8,
        ),
        (
            "def f(x, mask=None):\n    if mask is not None:\n        x = x * mask\n    else:\n"
            "        return x\n    return x.exp()\n",
            8,
        ),
        # A tensor parameter the body rebinds, through another parameter's None test that
        # leaves it a tensor either way.
        (
            "def f(x, w=None, mask=None):\n    if w is not None:\n        x = x.cos()\n"
            "    if mask is not None:\n        x = x + mask\n    return x.sigmoid()\n",
            8,
        ),
        (
            "def f(x, w=None, mask=None):\n    if mask is not None:\n        x = x + mask\n"
            "    if w is None:\n        x = x * 2\n    else:\n        x = x.exp()\n    return x.sigmoid()\n",
            10,
        ),
    ],
)
def test_a_mask_torch_ops_compute_into_the_return_is_found(tmp_path, body, line):
    assert _flow(tmp_path, body) == line


@pytest.mark.parametrize(
    "body",
    [
        # A helper or a module may drop it; a dropped value is no graph input.
        "def f(x, mask=None):\n    return helper(x + mask)\n",
        "def f(self, x, mask=None):\n    return self.proj(x + mask)\n",
        # Only its size reaches the return, or nothing does, or the tensor itself (no op).
        "def f(x, mask=None):\n    y = x + mask\n    return y.shape\n",
        "def f(x, mask=None):\n    y = x + mask\n    return x.relu()\n",
        "def f(x, mask=None):\n    return mask\n",
        "def f(x, mask=None):\n    if mask is not None:\n        y = x * mask\n    return x.relu()\n",
        # A branch, an early exit or a reassignment may route around it.
        "def f(x, mask=None, use=True):\n    if use:\n        return x\n    return x + mask\n",
        "def f(x, mask=None):\n    mask = mask.float()\n    return x + mask\n",
        "def f(x, mask=None):\n    y = x + mask\n    for _ in range(2):\n        y = x\n    return y\n",
        "def f(x, mask=None):\n    if mask is not None and x.shape[0] > 1:\n        x = x + mask\n    return x\n",
        # Another name's None test whose sides leave the name differently; a rebinding the
        # reading does not follow (an except, a nested def).
        "def f(x, w=None, mask=None):\n    x = x + mask\n    if w is not None:\n        x = w\n    return x\n",
        "def f(x, w=None, mask=None):\n    y = x + mask\n    if w is None:\n        y = x\n    return y\n",
        "def f(x, mask=None):\n    try:\n        x = x + mask\n    except ValueError as x:\n        pass\n    return x\n",
        "def f(x, mask=None):\n    x = x + mask\n    def x():\n        pass\n    return x\n",
        "def f(x, mask=None):\n    x = x + mask\n    import x\n    return x\n",
        # `w` unknown: not a number the call gives.
        "def f(x, w=None, mask=None):\n    x = x + mask\n    return x * w\n",
        # An operand that is not known to be a tensor or a number.
        "def f(self, x, mask=None):\n    return self.bias + mask\n",
        "def f(x, z, mask=None):\n    return z + mask\n",
        # A torch function outside the table, or a method outside it.
        "def f(x, mask=None):\n    return torch.zeros_like(mask) + x\n",
        "def f(x, mask=None):\n    return (x + mask).to(x.dtype)\n",
        # At an argument that is no tensor operand of the op (a dim, a probability).
        "def f(x, mask=None):\n    return x.sum(mask)\n",
        "def f(x, mask=None):\n    return torch.sum(x, mask)\n",
        "def f(x, mask=None):\n    return F.softmax(x, dim=mask)\n",
        "def f(q, k, v, mask=None):\n    return F.scaled_dot_product_attention(q, k, v, None, mask)\n",
        "def f(x, mask=None):\n    return x.masked_fill(x > 0, mask)\n",
        # A generator, a walrus.
        "def f(x, mask=None):\n    yield x + mask\n",
        "def f(x, mask=None):\n    return (y := x + mask)\n",
    ],
)
def test_a_mask_the_source_does_not_show_in_the_return_is_not(tmp_path, body):
    assert _flow(tmp_path, body) is None


@pytest.mark.parametrize(
    "imports",
    [
        "import torch\n",  # F is not bound
        "import torch\nimport torch.nn.functional as F\nF = None\n",  # F rebound
        "import torch\nfrom mylib import functional as F\n",  # F is another module
        "import torch\nfrom torch.nn.functional import *\n",  # a star import may bind anything
    ],
)
def test_F_is_torch_only_where_the_module_binds_it_only_by_importing_torch(tmp_path, imports):
    body = "def f(q, k, v, mask=None):\n    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)\n"
    assert _flow(tmp_path, body, imports=imports) is None
    assert (
        _flow(tmp_path, body, imports="import torch\nfrom torch.nn import functional as F\n") == 4
    )


def test_an_unreadable_module_reads_no_torch_function(tmp_path):
    src = (
        _IMPORTS
        + "def f(q, k, v, mask=None):\n    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)\n"
    )
    fn = next(n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef))
    assert computed_into_output(fn, str(tmp_path / "gone.py"), "mask", {"q", "k", "v"}) is None
    # arithmetic needs no module: the other operand is a tensor the call gives
    fn = ast.parse("def f(x, mask=None):\n    return x + mask\n").body[0]
    assert isinstance(fn, ast.FunctionDef)
    assert computed_into_output(fn, str(tmp_path / "gone.py"), "mask", {"x"}) == 2


def test_a_tensor_that_may_be_another_parameters_is_not_decided():
    """``attend(x, x, x)``: Dynamo takes one input for the tensor passed three times, so a
    key traced that way takes none from k, and a call's equal shapes cannot say otherwise."""
    from fxcache_core.lookup.binding import TensorArg
    from fxcache_core.lookup.optional_tensors import _may_alias

    qkv = {f"L['{n}']": TensorArg((1, 2, 6, 8)) for n in "qkv"}
    assert _may_alias(qkv, "L['k']")
    assert _may_alias({**qkv, "L['k']": TensorArg((1, 2, 6, 8), dtype="float32")}, "L['k']")
    assert not _may_alias(
        {
            **qkv,
            "L['k']": TensorArg((1, 2, 6, 8), dtype="float16"),
            "L['q']": TensorArg((1, 2, 6, 8), dtype="float32"),
            "L['v']": TensorArg((1, 2, 6, 8), dtype="float32"),
        },
        "L['k']",
    )
    assert not _may_alias(
        {"L['q']": TensorArg((1, 2, 6, 8)), "L['mask']": TensorArg((6, 6))}, "L['mask']"
    )
    assert not _may_alias({"L['q']": TensorArg((1, 2, 6, 8)), "L['n']": 3}, "L['n']")


def test_a_frame_under_a_decorators_wrapper_is_not_decided(tmp_path):
    """A wrapper may pass the function another value than the call's (``fn(x, None)``)."""
    from fxcache_core.functions.frames import CompiledFrom
    from fxcache_core.lookup.binding import TensorArg
    from fxcache_core.lookup.optional_tensors import tensor_given

    src = tmp_path / "m.py"
    src.write_text("import torch\n\n\ndef addm(x, mask=None):\n    return x.softmax(-1) + mask\n")
    inputs = {"L['x']": TensorArg((4, 8)), "L['mask']": TensorArg((3, 8))}
    bare = CompiledFrom("addm", str(src), 4)
    assert tensor_given("L['mask']", bare, "addm", lambda s, t: None, inputs) is not None
    wrapped = CompiledFrom("addm", str(src), 4, wrappers=(("wrapper", str(src), 1),))
    assert tensor_given("L['mask']", wrapped, "addm", lambda s, t: None, inputs) is None


def _body(tmp_path: Path, body: str, tensors=("x",)) -> tuple[int, int] | None:
    src = _IMPORTS + body
    path = tmp_path / "m.py"
    path.write_text(src)
    fn = next(n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef))
    test = next(n for n in ast.walk(fn) if isinstance(n, ast.If))
    return body_op_into_output(fn, str(path), "p", test.lineno, set(tensors))


@pytest.mark.parametrize(
    "body,lines",
    [
        (
            "def f(x, reps, *, p=None):\n    y = x.repeat(reps, 1)\n    if p is not None:\n"
            "        y = y.unsqueeze(0).expand(p, -1, -1)\n    return y.cos()\n",
            (6, 7),
        ),
        (
            "def f(x, p=None):\n    y = x\n    if p is not None:\n        y = x.exp() * 2\n    return y + 1\n",
            (6, 7),
        ),
        (
            "def f(x, p=None):\n    y = x * 2\n    if p is not None:\n        y = y.relu()\n    return x, y\n",
            (6, 7),
        ),
    ],
)
def test_a_body_that_makes_an_op_whatever_it_is_given_is_found(tmp_path, body, lines):
    assert _body(tmp_path, body) == lines


@pytest.mark.parametrize(
    "body",
    [
        # An op on the parameter only: what it makes depends on what it is (a number has no .view).
        "def f(x, p=None):\n    s = x * 2\n    if p is not None:\n        s = s * p.view(-1, 1)\n    return s\n",
        # Arithmetic with the parameter itself: its own __rmul__ may drop the op's result.
        "def f(x, p=None):\n    y = x\n    if p is not None:\n        y = x.exp() * p\n    return y + 1\n",
        # Ops that may be no node at all (an expand to the same size, a cast to the same dtype).
        "def f(x, p=None):\n    y = x\n    if p is not None:\n        y = x.expand(p, -1)\n    return y.cos()\n",
        "def f(x, p=None):\n    y = x\n    if p is not None:\n        y = x.float()\n    return y.cos()\n",
        # The op's result does not reach the return, or is dropped by a helper.
        "def f(x, p=None):\n    y = x\n    if p is not None:\n        z = x.cos()\n    return y.sin()\n",
        "def f(x, p=None):\n    y = x\n    if p is not None:\n        y = x.cos()\n    return helper(y)\n",
        "def f(x, p=None):\n    y = x\n    if p is not None:\n        y = x.cos()\n        y = x\n    return y.sin()\n",
        # On a tensor not computed from the call's tensors, or a name reassigned in the body before.
        "def f(x, z, p=None):\n    y = x\n    if p is not None:\n        y = z.cos()\n    return y.sin()\n",
        "def f(x, p=None):\n    y = x\n    if p is not None:\n        x = p\n        y = x.cos()\n    return y.sin()\n",
        # An else, an exit, a nested test, another test, an assigned parameter.
        "def f(x, p=None):\n    y = x\n    if p is not None:\n        y = x.cos()\n    else:\n        y = x.sin()\n"
        "    return y\n",
        "def f(x, p=None):\n    y = x\n    if p is not None:\n        y = x.cos()\n        return y\n    return y.sin()\n",
        "def f(x, p=None):\n    if x.shape[0] > 1:\n        return x\n    y = x\n    if p is not None:\n"
        "        y = x.cos()\n    return y.sin()\n",
        "def f(x, p=None):\n    y = x\n    if p:\n        y = x.cos()\n    return y.sin()\n",
        "def f(x, p=None):\n    p = p or 1\n    y = x\n    if p is not None:\n        y = x.cos()\n    return y.sin()\n",
        # A tensor written in place after the body (through any name: an alias, a view, out=) may
        # leave the body's op dead code, which the graph drops.
        "def f(x, p=None):\n    y = x * 2\n    if p is not None:\n        y = y.relu()\n    y.zero_()\n    return y + 1\n",
        "def f(x, p=None):\n    y = x * 2\n    if p is not None:\n        y = y.relu()\n    z = y\n    z.fill_(1.0)\n"
        "    return y + 1\n",
        "def f(x, p=None):\n    y = x * 2\n    if p is not None:\n        y = y.relu()\n    torch.mul(x, 2, out=y)\n"
        "    return y + 1\n",
    ],
)
def test_a_body_whose_op_the_source_does_not_show_is_not(tmp_path, body):
    assert _body(tmp_path, body) is None


def test_body_makes_op_reads_no_frame_under_a_decorators_wrapper_or_a_module_compiled_whole(tmp_path):
    # The wrapper (or a module's call) may pass the function another value of p than the call's.
    from fxcache_core.functions.frames import CompiledFrom
    from fxcache_core.functions.params import BranchTest
    from fxcache_core.lookup.binding import TensorArg
    from fxcache_core.lookup.branches import TracedCode, body_makes_op

    body = "def f(x, p=None):\n    y = x * 2\n    if p is not None:\n        y = y.relu()\n    return y + 1\n"
    path = tmp_path / "m.py"
    path.write_text(body)
    test = BranchTest(3, "p is not None", "is-not", None, (4, 4), None)
    traced = TracedCode(frozenset({2, 5}), {2: ("mul",), 5: ("add",)})
    inputs = {"L['x']": TensorArg((4, 3))}
    taken = frozenset({"L['x']"})
    bare = CompiledFrom("f", str(path), 1, params=("x", "p"))
    assert body_makes_op(bare, test, inputs, taken, traced) == (4, 5)
    wrapped = CompiledFrom("f", str(path), 1, params=("x", "p"), wrappers=(("wrapper", str(path), 1),))
    assert body_makes_op(wrapped, test, inputs, taken, traced) is None
    whole = CompiledFrom("f", str(path), 1, params=("x", "p"), whole_module=True)
    assert body_makes_op(whole, test, inputs, taken, traced) is None


def test_a_number_the_call_gives_is_an_operand_of_the_ops(tmp_path):
    src = _IMPORTS + (
        "def f(x, *, mask=None, n=2):\n    if mask is not None:\n        x = x + mask\n    return x * n\n"
    )
    path = tmp_path / "m.py"
    path.write_text(src)
    fn = next(n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef))
    assert computed_into_output(fn, str(path), "mask", {"x"}, {"n"}) == 6
    assert computed_into_output(fn, str(path), "mask", {"x"}) is None
