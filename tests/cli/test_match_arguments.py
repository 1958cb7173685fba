"""``fxcache match --inputs``: the Python values of a call, and what a verdict says when the
function's source cannot be read (a cache recorded on another machine: tests/fixtures).
How the values decide against real caches is tests/torch/test_arguments.py."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import run_fxcache

V215 = Path(__file__).resolve().parents[1] / "fixtures" / "torch_versions" / "2.15.0" / "cache"
CALL = ["--fn", "same_graph_two_regions", "--dynamic", "true", "x=[10,4]"]


def _match(*args: str) -> tuple[int, dict, str]:
    proc = run_fxcache("--cache-dir", str(V215), "match", *args)
    return proc.returncode, (json.loads(proc.stdout) if "--json" in args else {}), proc.stdout + proc.stderr


def test_inputs_and_shapes_are_one_option():
    a = _match("--json", *CALL[:-1], "--inputs", CALL[-1])
    b = _match("--json", *CALL[:-1], "--shapes", CALL[-1])
    c = _match("--json", *CALL[:-1], "-s", CALL[-1])
    assert a[0] == b[0] == c[0] == 3 and a[1] == b[1] == c[1]  # undecided: the source is not here


def test_a_verdict_whose_source_cannot_be_read_is_undecided():
    """The fixture's frames name a cases.py of the machine that recorded it: the parameters
    the call leaves out cannot be checked here, so the guards' MISS is undecided
    (``source-unread``), naming --source-dir; a Python value given besides (``flag=True``),
    which no key takes and no code can be read for, is named first (closed world)."""
    rc, body, _ = _match("--json", *CALL[:-1], "--inputs", CALL[-1])
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "source-unread", fv
    assert [p["how"] for p in fv["params"]] == ["source-unread"], fv
    assert "cases.py) cannot be read here" in fv["why"] and "--source-dir OLD=NEW" in fv["why"], fv["why"]
    rc, body, _ = _match("--json", *CALL[:-1], "--inputs", CALL[-1], "--inputs", "flag=True")
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "argument-unaccounted", fv
    assert "flag=True" in fv["why"] and "cases.py) cannot be read here" in fv["why"], fv["why"]


def test_a_value_of_no_kind_match_reads_is_one_line_naming_the_option():
    rc, _, text = _match("--inputs", "x=[10,4]", "--inputs", "act=gelu(1)")
    assert rc == 2 and text.count("\n") == 1 and "--inputs act" in text and "True/False/None" in text, text
