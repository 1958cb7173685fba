"""Numbers in cache and trace text are ASCII digits: torch prints no other.

``\\d`` in a ``str`` regex also takes Arabic-Indic, Devanagari or mathematical
digits, which ``int()`` then reads as numbers: ``example_inputs[١]`` would be input
1. fxcache's regexes take ``[0-9]`` only, so a crafted line with other digits
reads as a line fxcache does not know, never as a number. Synthetic text: torch
never writes these.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fxcache_core.decode.origins import parse_origin
from fxcache_core.decode.printed import (
    parse_example_run,
    parse_get_args,
    parse_graph_signature,
    parse_hints,
)
from fxcache_core.functions.frames import resume_parent
from fxcache_core.lookup.fit_binding import INT_RE

ARABIC_INDIC = "١٣"  # 13 in Arabic-Indic digits
DEVANAGARI = "१"
MATH_BOLD = "𝟏"
WIDE = "１"


@pytest.mark.parametrize("digits", [ARABIC_INDIC, DEVANAGARI, MATH_BOLD, WIDE])
def test_printed_text_with_non_ascii_digits_reads_as_no_number(digits):
    assert int(digits) > 0  # what \d would have let through
    assert parse_example_run((f"[abc] example_inputs[{digits}]: ('s1',)",)) == ()
    graph = (
        "class GraphModule(torch.nn.Module):\n    def forward(\n        self,\n"
        f'        arg0_1: "Sym(s0)",  # PlainAOTInput(idx={digits})\n    ):\n'
    )
    (inp,) = parse_graph_signature(graph)
    assert inp.aot_index is None
    assert parse_hints(f"s0 = {digits}\n") == ()
    assert (
        parse_get_args(f"def get_args():\n    arg0_1 = {digits}\n    return [arg0_1]\n").ints == {}
    )
    assert (
        parse_origin(
            f"        # File: /m.py:{digits} in f, code: return x + 1\n        add = x + 1\n"
        )
        is None
    )
    assert INT_RE.fullmatch(digits) is None
    assert resume_parent(f"torch_dynamo_resume_in_f_at_{digits}") is None


def test_ascii_digits_still_read():
    (inp,) = parse_example_run(("[abc] example_inputs[13]: ('s1',)",))
    assert inp.position == 13 and inp.expr == "s1"
    assert parse_hints("s0 = 13\n") == (("s0", 13),)


def test_no_regex_of_fxcache_core_takes_unicode_digits():
    # Every pattern spells its digits [0-9]; \d stays out of fxcache_core's regexes.
    core = Path(__file__).resolve().parents[2] / "fxcache_core"
    found = [
        f"{p.relative_to(core)}:{n}"
        for p in sorted(core.rglob("*.py"))
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if re.search(r"\\d", line)
    ]
    assert found == []
