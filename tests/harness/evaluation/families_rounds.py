"""The later rounds' families, in the groups their modules define, for
:mod:`tests.harness.evaluation.families` to register (kept here so that module stays one
screenful of imports and registrations). Nothing here imports torch."""

from __future__ import annotations

from tests.harness.evaluation import families_r12 as _r12
from tests.harness.evaluation import families_r13 as _r13
from tests.harness.evaluation import families_r14 as _r14
from tests.harness.evaluation import families_r14d as _r14d
from tests.harness.evaluation import families_r14fg as _r14fg
from tests.harness.evaluation import families_r14h as _r14h
from tests.harness.evaluation import families_r15 as _r15
from tests.harness.evaluation import families_r15d as _r15d
from tests.harness.evaluation import families_r15hf as _r15hf
from tests.harness.evaluation.family import Family

LATE_GROUPS: tuple[list[Family], ...] = (
    _r12.R12_FAMILIES, _r12.R12B_FAMILIES, _r12.R12C_FAMILIES, _r12.R12D_FAMILIES,
    _r13.R13_FAMILIES, _r13.R13B_FAMILIES, _r13.R13C_FAMILIES, _r13.R13D_FAMILIES,
    _r14.R14_FAMILIES, _r14.R14B_FAMILIES, _r14.R14C_FAMILIES, _r14.R14D_FAMILIES, _r14.R14E_FAMILIES,
    _r14h.R14H_FAMILIES, _r14fg.R14FG_FAMILIES, _r14d.R14D_FAMILIES, _r15d.R15D_FAMILIES,
    _r15hf.R15HF_FAMILIES, _r15hf.R15HF_B_FAMILIES,
    _r15.R15_FAMILIES, _r15.R15B_FAMILIES, _r15.R15C_FAMILIES,
)
"""Each round's lists of families, in registration order."""
