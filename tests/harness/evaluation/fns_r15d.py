"""Functions and modules of the evaluation families in
:mod:`tests.harness.evaluation.families_r15d` (imports torch): a parameter or a module's
attribute tested by a conditional expression or an ``if``, whose sides the key's graph tells
apart (one side a bare name), or cannot (both sides make ops, or another side makes the
same op)."""

import torch
import torch.nn.functional as F


def resid(x, residual=True):
    # A residual add chosen by a conditional expression; the else side is a bare name.
    y = x.sin()
    return y + x if residual else y


def two_sides(x, a=True, b=False):
    # a's relu, b's side makes too, by the same code: a=False, b=True traces the graph of a=True.
    y = x.sin()
    y = y.relu() if a else y
    y = y.relu() if b else y
    return y


def act_alias(x, act="relu"):
    # Both sides make ops (the same op, by another name): which one ran, the graph cannot say.
    return F.relu(x) if act == "relu" else torch.relu(x)


class Flagged(torch.nn.Module):
    """A bool attribute choosing an activation by a conditional expression, another an
    ``if`` statement's scale, both set by the user between calls."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)
        self.use_act = True
        self.double = True

    def forward(self, x):
        y = self.lin(x)
        if self.double:
            y = y * 2
        return F.gelu(y) if self.use_act else y


def flagged() -> torch.nn.Module:
    torch.manual_seed(0)
    return Flagged().eval()


class SelfMadeUp(torch.nn.Module):
    """A method of the module that makes the op the tested attribute's side makes, the other
    way round: the ops are the same whatever ``use_act`` is."""

    def __init__(self) -> None:
        super().__init__()
        self.use_act = True

    def pre(self, x):
        return x if self.use_act else x.relu()

    def forward(self, x):
        y = self.pre(x)
        return y.relu() if self.use_act else y


def self_made_up() -> torch.nn.Module:
    return SelfMadeUp().eval()


def gated(x, flag=False):
    # An operand of `and`: the body's relu shows that flag held; the size decides the rest.
    y = x.sin()
    if flag and x.dim() > 1:
        y = y.relu()
    return y


class TrainScale(torch.nn.Module):
    """A scale applied only in training mode, after a stock layer: the key built in eval mode
    has no op from the body, which makes one whenever it runs."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)
        self.keep = 0.5

    def forward(self, x):
        y = self.lin(x)
        if self.training:
            y = y * self.keep
        return y + x


def train_scale() -> torch.nn.Module:
    torch.manual_seed(0)
    return TrainScale().eval()
