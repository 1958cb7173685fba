"""A float the compiled code only branches on (``if t > 0.5:``) leaves no constant in the
graph: the int rule (fxcache_core/lookup/int_args.py) says nothing of it, and the
parameters' accounting reads which side the key's graph took; a float the code computes
with is still a note where no constant shows it. Synthetic on purpose: the rule's inputs
alone (the evidence against torch is the r14d evaluation round)."""

from __future__ import annotations

import textwrap

from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.lookup.branch_ints import branched_only
from fxcache_core.lookup.int_args import _not_an_int

SOURCE = textwrap.dedent('''\
    def gate(x, t=0.7, s=2.0, n=4):
        if t > 0.5:
            x = x.relu()
        if n // 2 % 2 == 0:
            x = x.sin()
        if s > 1.0:
            x = x * s
        return x
''')


def test_a_float_only_ordered_is_branched_only_and_one_also_computed_with_is_not(tmp_path):
    path = tmp_path / "g.py"
    path.write_text(SOURCE)
    frame = CompiledFrom(function="gate", file=str(path), line=1)
    assert branched_only(frame, "L['t']") and branched_only(frame, "L['n']")
    assert not branched_only(frame, "L['s']")  # x * s in the body


def test_a_branched_float_leaves_no_note_and_another_does():
    problems: list = []
    notes: list = []
    _not_an_int(None, None, "L['t']", 0.9, [], True, problems, notes, branched=True)  # type: ignore[arg-type]
    assert (problems, notes) == ([], [])

    class NoFloats:
        def floats(self, key, name):
            return None

    _not_an_int(NoFloats(), None, "L['t']", 0.9, [], True, problems, notes)  # type: ignore[arg-type]
    assert problems == [] and [n.code for n in notes] == ["scalar-not-input"]
