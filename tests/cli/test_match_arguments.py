"""``fxcache match --inputs``: the Python values of a call, and what a verdict says when the
function's source cannot be read (a cache recorded on another machine: tests/fixtures).
How the values decide against real caches is tests/torch/test_arguments.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import run_fxcache

V215 = Path(__file__).resolve().parents[1] / "fixtures" / "torch_versions" / "2.15.0" / "cache"
CALL = ["--fn", "same_graph_two_regions", "--dynamic", "true", "x=[5,4]"]  # a HIT with its source read


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
    the call leaves out cannot be checked here, so the guards' HIT is undecided
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


SRC = ("--source-dir", f"/work/wt-15={V215.parents[1] / 'src'}")  # where the fixture's cases.py is kept here
INT_CALL = ["--fn", "int_arg_auto", "--dynamic", "none", "--inputs", "x=[5]", "--inputs", "n=2"]  # a HIT (truth.json)


@pytest.mark.parametrize("extra,says", [
    ("cfg['n']=4", "--inputs cfg: no parameter of that name (int_arg_auto takes x, n)"),  # no cfg parameter
    ("nn['k']=4", "--inputs nn: no parameter of that name"),                               # a typo's item
    ("cfg.n=4", "--inputs cfg: no parameter of that name"),
    ("n['k']['m']=4", "an item of an item"),                                               # nested
    ("n.k.m=4", "an item of an item"),
    ("n['']=4", "an item by an empty key"),
    ("n['k']=4", "n is given whole and by its item n['k']"),                               # n=2 and an item of it
    ('x["k"]=4', "x is given whole and by its item x[\"k\"]"),                             # double quotes: the same item
])
def test_an_item_of_no_parameter_or_one_match_cannot_read_is_a_usage_error(extra, says):
    """An item is checked as a plain name is: its base must be a parameter of the function
    (the call would raise TypeError otherwise), read one level deep by a key, and not given
    whole besides; each is one line and exit 2, never a verdict that leaves it unread (the
    call without it is a HIT: test_the_call_without_the_item_is_a_hit)."""
    proc = run_fxcache("--cache-dir", str(V215), *SRC, "match", *INT_CALL, "--inputs", extra)
    assert proc.returncode == 2 and proc.stdout == "", proc.stdout
    (line,) = proc.stderr.splitlines()
    assert says in line, line


def test_the_call_without_the_item_is_a_hit():
    base = run_fxcache("--cache-dir", str(V215), *SRC, "match", *INT_CALL)
    assert base.returncode == 0 and base.stdout.startswith("int_arg_auto: first call in a fresh process: HIT"), \
        base.stdout + base.stderr


@pytest.mark.parametrize("fn", ["Case", "Case.run", "nosuch"])
@pytest.mark.parametrize("as_json", [False, True], ids=["human", "json"])
def test_a_function_no_key_was_compiled_from_is_one_line_in_json_too(fn, as_json):
    """The fixture's source is not here, so no key has a class: ``--fn Class`` and
    ``--fn Class.method`` find no key, as a name no function has. A usage error: one line
    on stderr naming the functions the cache holds, nothing on stdout, exit 2, --json or
    not (as every other usage error); for a class, where a class is read from."""
    proc = run_fxcache("--cache-dir", str(V215), "match", *(("--json",) if as_json else ()), "--fn", fn,
                       "--inputs", "x=[10,4]")
    assert proc.returncode == 2 and proc.stdout == "", proc.stdout
    (line,) = proc.stderr.splitlines()
    assert f"no key was compiled from a function named {fn!r}" in line and "int_arg_auto (cases.py:446)" in line
    assert ("--source-dir OLD=NEW" in line) == (fn != "nosuch"), line
