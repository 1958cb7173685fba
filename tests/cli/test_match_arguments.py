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
    assert a[0] == b[0] == c[0] == 1 and a[1] == b[1] == c[1]


def test_a_verdict_whose_source_cannot_be_read_rests_on_the_keys_inputs_alone():
    """The fixture's frames name a cases.py of the machine that recorded it: the parameters
    cannot be checked here. A call of the key's inputs alone gets what the guards give, with
    that caveat; a Python value given besides (``flag=True``), which no key takes and no
    code can be read for, leaves the verdict undecided (closed world), naming it."""
    rc, body, _ = _match("--json", *CALL[:-1], "--inputs", CALL[-1])
    (fv,) = body["verdicts"]["functions"]
    assert rc == 1 and fv["status"] == "miss", fv
    assert fv["params"] == [] and fv["params_unchecked_code"] == "params-unchecked", fv
    assert "cannot be read here" in fv["params_unchecked"] and "cases.py" in fv["params_unchecked"]
    rc, _, text = _match(*CALL[:-1], "--inputs", CALL[-1])
    assert "parameters not checked: the source of same_graph_two_regions (cases.py) cannot be read here" in text
    rc, body, _ = _match("--json", *CALL[:-1], "--inputs", CALL[-1], "--inputs", "flag=True")
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "argument-unaccounted", fv
    assert "flag=True" in fv["why"] and "cases.py) cannot be read here" in fv["why"], fv["why"]


def test_a_value_of_no_kind_match_reads_is_one_line_naming_the_option():
    rc, _, text = _match("--inputs", "x=[10,4]", "--inputs", "act=gelu(1)")
    assert rc == 2 and text.count("\n") == 1 and "--inputs act" in text and "True/False/None" in text, text
