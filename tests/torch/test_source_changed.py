"""A function's source edited since its keys were compiled: ``fxcache match`` does not
read the edited file as the compiled code (fxcache_core/lookup/source_lines.py).

The session's real cache holds ``flags`` (tests/harness/cases_args.py) compiled with
clip=True and act='gelu', a call torch hits (tests/torch/test_arguments.py checks that
against torch's recorded lookup). Here match reads a copy of that file through
``--source-dir``, as it is, and edited: an edit of a line the key's graph has ops from, or
a line put in above the function, makes the HIT undecided (``source-changed``); an edit
of spaces and a comment only does not. No compile: the real cache's own build.
"""

from __future__ import annotations

import json

import pytest

from tests.helpers import REPO_ROOT, match_args_for, run_fxcache

pytestmark = pytest.mark.torch

CALL = [[8, 16], {"clip": True, "act": "gelu"}]
OP_LINE = "    y = x * 2\n    if clip:\n"


@pytest.mark.parametrize("old,new,status,says", [
    (None, None, "hit", None),
    (OP_LINE, "    y = x*2    # doubled\n    if clip:\n", "hit", None),
    (OP_LINE, "    y = x * 3\n    if clip:\n", "undecided", "reads `y = x * 3` where the compile traced `y = x * 2`"),
    ("def flags(", "# one line more\ndef flags(", "undecided", "where the compile traced `y = x * 2`"),
], ids=["as-compiled", "spaces-and-a-comment", "op-line-edited", "line-put-above"])
def test_an_edited_source_makes_the_hit_undecided_naming_the_line(real_cache, tmp_path, old, new, status, says):
    here = REPO_ROOT / "tests" / "harness"
    text = (here / "cases_args.py").read_text()
    if old is not None:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    (tmp_path / "cases_args.py").write_text(text)
    proc = run_fxcache("--cache-dir", str(real_cache.root), "--source-dir", f"{here}={tmp_path}", "match", "--json",
                       "--fn", "flags", *match_args_for("flags", CALL))
    body = json.loads(proc.stdout)
    (fv,) = body["verdicts"]["functions"]
    assert (proc.returncode, fv["status"]) == ({"hit": 0, "undecided": 3}[status], status), fv
    notes = [(c, t) for r in body["results"] for c, t in zip(r["uncertain_codes"], r["uncertain"], strict=True)]
    if says is None:
        assert all(c != "source-changed" for c, _ in notes), notes
        return
    # clip and act, given, are unaccounted with the source (argument-unaccounted, naming it);
    # the parameters left out are source-changed, naming the line.
    where = f"of {here}/cases_args.py (read from {tmp_path}/cases_args.py) reads"
    assert any(c == "source-changed" and says in t and where in t for c, t in notes), notes
