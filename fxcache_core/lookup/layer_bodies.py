"""Whether the body of an ``if`` on a module's attribute makes an op whenever it runs, on a
tensor a stock layer made (``y = self.lin(x)``, then ``if self.training: y = y * self.keep``).

:func:`body_makes_op_on_layer` reads that, for a key's graph with no op from the body, as
the trace having skipped it: the body is one statement ``y = y <op> E`` (``*``, ``+``,
``-``, ``/``; ``E`` a constant, a name or ``self.X``, nothing that calls), the ``if`` has no
``else`` and sits in no other test, and ``y`` is bound once before it, at the top level, to
what a stock ``torch.nn`` layer of the module (:func:`~fxcache_core.functions.cond_tests.nn_layers`:
``nn.Linear``, a convolution, a norm, an activation; each returns a tensor for a tensor)
returns for a tensor the call gives; and ``y`` flows as data into what the ``return`` gives
(an operand of arithmetic, either side of a conditional expression), so no op of it is
dropped as dead. The key's graph must show ops from the ``return`` line (no graph break
before it) and be an AOTAutograd inference graph as traced (no pass has removed an op):
the caller checks that. :data:`LAYER_TRAINING_FREE` are the layers whose ops do not
depend on ``training``. Reads the source with ``ast`` only; never imports torch.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from fxcache_core.functions.cond_tests import nn_layers
from fxcache_core.functions.params import BranchTest
from fxcache_core.functions.trees import function_node, module_node

__all__ = ["LAYER_TRAINING_FREE", "body_makes_op_on_layer"]

LAYER_TRAINING_FREE = frozenset({
    "Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "LayerNorm", "GroupNorm", "RMSNorm", "Embedding", "Identity", "ReLU", "GELU", "SiLU", "Tanh", "Sigmoid",
    "Softmax", "LogSoftmax", "LeakyReLU", "ELU", "Mish", "Hardswish", "Flatten",
})
"""Stock layers that return a tensor for a tensor and trace the same ops in training and
eval mode (no dropout, no batch statistics)."""

_OPS = {ast.Mult: "mul", ast.Add: "add", ast.Sub: "sub", ast.Div: "div"}


def _flows(e: ast.expr, name: str) -> bool:
    """Whether the value of ``name`` is always data of ``e``'s value."""
    if isinstance(e, ast.Name):
        return e.id == name
    if isinstance(e, ast.BinOp) and type(e.op) in _OPS:
        return _flows(e.left, name) or _flows(e.right, name)
    if isinstance(e, ast.IfExp):
        return _flows(e.body, name) and _flows(e.orelse, name)
    return False


def body_makes_op_on_layer(file: str, line: int, function: str, t: BranchTest,
                           tensors: Mapping[str, object]) -> tuple[str, int] | None:
    """(the op the body of ``t`` makes, the ``return``'s line) where it makes one whenever it
    runs (see the module docstring), for the ``def`` ``function`` at ``line`` of ``file``
    and the names of the call's tensor parameters ``tensors``; None otherwise."""
    if t.form != "if" or t.orelse is not None or t.within or t.body[0] != t.body[1]:
        return None
    fn = function_node(file, line, function)
    if fn is None:
        return None
    layers = nn_layers(module_node(file))
    top = fn.body
    at = next((i for i, s in enumerate(top) if isinstance(s, ast.If) and s.lineno == t.line), None)
    if at is None or len(top[at].body) != 1 or top[at].orelse:
        return None
    body = top[at].body[0]
    if not (isinstance(body, ast.Assign) and len(body.targets) == 1 and isinstance(body.targets[0], ast.Name)
            and isinstance(body.value, ast.BinOp) and type(body.value.op) in _OPS
            and isinstance(body.value.left, ast.Name) and body.value.left.id == body.targets[0].id):
        return None
    name, other = body.targets[0].id, body.value.right
    if not (isinstance(other, (ast.Constant, ast.Name)) or isinstance(other, ast.Attribute)
            and isinstance(other.value, ast.Name) and other.value.id == "self"):
        return None
    binds = [s for s in top[:at] for n in ast.walk(s) if isinstance(n, ast.Name) and n.id == name
             and isinstance(n.ctx, (ast.Store, ast.Del))]
    if len(binds) != 1 or not isinstance(s := binds[0], ast.Assign) or len(s.targets) != 1:
        return None
    v = s.value
    if not (isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and isinstance(v.func.value, ast.Name)
            and v.func.value.id == "self" and layers.get(v.func.attr) in LAYER_TRAINING_FREE
            and len(v.args) == 1 and not v.keywords and isinstance(v.args[0], ast.Name)
            and v.args[0].id in tensors):
        return None
    rest = top[at + 1:]
    if len(rest) != 1 or not isinstance(ret := rest[0], ast.Return) or ret.value is None \
            or not _flows(ret.value, name):
        return None
    return _OPS[type(body.value.op)], ret.lineno
