"""Evaluation families for the branch rule on conditional expressions, ``and`` and a module's
attributes: a parameter tested by ``a if flag else b`` whose else side is a bare name, built
with either side; two such tests whose sides make the same op (the key undecided); both sides
making ops (undecided); a flag in ``if flag and x.dim() > 1:``, built with either value; a
module's bool attributes tested by a conditional expression and by an ``if``, stated with
the call; ``if self.training:`` scaling a stock layer's output, built in eval mode; a method
that makes the tested side's op the other way round (undecided). :mod:`tests.harness.evaluation.families` adds them; nothing here imports
torch."""

from __future__ import annotations

from tests.harness.evaluation.family import Family
from tests.harness.evaluation.family import q as _q

_F = "tests.harness.evaluation.fns_r15d:"

R15D_FAMILIES: list[Family] = [
    Family("r15d_resid_auto", _F + "resid", "resid", None,
           build=(({"x": [4, 8]},),), positional=1,
           doc="y + x if residual else y, built with residual left out (True) (dynamic=None)",
           queries=(
               _q("residual=False", x=[4, 8], residual=False),
               _q("residual=True given", x=[4, 8], residual=True),
           )),
    Family("r15d_resid_off_auto", _F + "resid", "resid", None,
           build=(({"x": [4, 8], "residual": False},),), positional=1,
           doc="built with residual=False: the graph has no op from the line, which says nothing (dynamic=None)",
           queries=(
               _q("residual=True", x=[4, 8], residual=True),
           )),
    Family("r15d_two_sides_auto", _F + "two_sides", "two_sides", None,
           build=(({"x": [4, 8]},),), positional=1,
           doc="a's relu, which b's side makes too, built a=True, b=False (dynamic=None)",
           queries=(
               _q("a=False, b=True: the same ops", x=[4, 8], a=False, b=True),
           )),
    Family("r15d_act_alias_auto", _F + "act_alias", "act_alias", None,
           build=(({"x": [4, 8]},),), positional=1,
           doc="F.relu or torch.relu by a str: both sides make ops (dynamic=None)",
           queries=(
               _q("act='other'", x=[4, 8], act="other"),
           )),
    Family("r15d_flagged_attr", _F + "flagged", "Flagged", None, model=True,
           build=(({"x": [4, 8]},),),
           doc="a module's bool attributes tested by a conditional expression and an if (dynamic=None)",
           queries=(
               _q("use_act=False", x=[4, 8], **{"@set": {"use_act": False, "double": True}}),
               _q("double=False", x=[4, 8], **{"@set": {"double": False, "use_act": True}}),
               _q("both stated as built", x=[4, 8], **{"@set": {"use_act": True, "double": True}}),
           )),
    Family("r15d_self_made_up", _F + "self_made_up", "SelfMadeUp", None, model=True,
           build=(({"x": [4, 8]},),),
           doc="a method makes the tested side's relu the other way round (dynamic=None)",
           queries=(
               _q("use_act=False", x=[4, 8], **{"@set": {"use_act": False}}),
           )),
    Family("r15d_gated_auto", _F + "gated", "gated", None,
           build=(({"x": [4, 8], "flag": True},),), positional=1,
           doc="if flag and x.dim() > 1:, built with flag=True (dynamic=None)",
           queries=(
               _q("flag=False", x=[4, 8], flag=False),
               _q("flag=True as built", x=[4, 8], flag=True),
           )),
    Family("r15d_gated_off_auto", _F + "gated", "gated", None,
           build=(({"x": [4, 8]},),), positional=1,
           doc="built with flag left out (False): no relu, which the size could explain too (dynamic=None)",
           queries=(
               _q("flag=True", x=[4, 8], flag=True),
           )),
    Family("r15d_train_scale", _F + "train_scale", "TrainScale", None, model=True,
           build=(({"x": [4, 8]},),),
           doc="if self.training: y = y * self.keep after a Linear, built in eval mode (dynamic=None)",
           queries=(
               _q("training mode", x=[4, 8], **{"@train": True}),
               _q("eval stated", x=[4, 8], **{"@train": False}),
           )),
]
