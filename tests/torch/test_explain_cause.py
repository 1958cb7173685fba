"""``fxcache explain``'s root causes and verdict on real traced runs (issue 24).

The runs are test_explain.py's session fixture (``tests.harness.traced``'s plans, in
processes of their own, on copies of the session's real cache): ``replay`` (an Inductor config
patched in code, an input's dtype changed, a batch beyond a ``mark_dynamic`` range...)
and ``env`` (the ``hit`` step's call with an Inductor config set by an environment
variable, :data:`tests.harness.traced.PLAN_ENV`). The components each root cause names,
and their values, are torch's own (the debug lines of its keys, the trace).
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from fxcache_core.trace.user_terms import user_source
from tests.harness.traced import PLAN_ENV
from tests.helpers import run_fxcache
from tests.torch import test_explain
from tests.torch.test_explain import _agree, _by_step

pytestmark = pytest.mark.torch
traced = test_explain.traced  # the session's traced runs (a fixture)


def _detail(x, name):
    return next(d for d in x["nearest"]["details"] if d["name"] == name)


def test_an_inductor_config_set_by_a_variable_is_the_root_cause_named_by_that_variable(traced):
    run = traced["env"]
    ex = run["explain"]
    _agree(ex["lookups"], run["torch"]["lookups"], run["torch"]["writes"])
    ((var, _),) = PLAN_ENV["env"].items()
    misses = [x for x in ex["lookups"] if x["state"] == "miss"]
    assert misses and len(misses) == len(ex["lookups"])
    for x in misses:
        rc = x["root_cause"]
        # The only component torch hashed differently is the one the variable sets.
        assert x["nearest"]["differs"] == [rc["component"]] and rc["also"] == rc["consequences"] == []
        assert rc["env"] == var and rc["code"] == "inductor-config"
        d = _detail(x, rc["component"])
        assert (rc["this"], rc["cache"]) == (d["this"], d["nearest"]) and rc["this"] != rc["cache"]
    s = ex["summary"]
    (row,) = s["causes"]
    assert row["lookups"] == len(misses) and row["env"] == var
    assert s["verdict"].startswith(f"{len(misses)} of {len(ex['lookups'])} lookups missed: ")
    assert var in s["verdict"]


def test_the_human_output_names_the_variable_and_raw_keeps_torchs_name(traced):
    run = traced["env"]
    ((var, _),) = PLAN_ENV["env"].items()
    component = run["explain"]["lookups"][0]["root_cause"]["component"]
    human = run_fxcache("--cache-dir", str(run["cache"]), "explain", "--no-record", str(run["trace"]))
    raw = run_fxcache("--cache-dir", str(run["cache"]), "explain", "--no-record", "--raw", str(run["trace"]))
    assert human.returncode == raw.returncode == 0, human.stderr + raw.stderr
    assert human.stdout.splitlines()[0] == run["explain"]["summary"]["verdict"]
    assert var in human.stdout and component not in human.stdout
    assert component in raw.stdout and var not in raw.stdout


def test_a_config_patched_in_code_names_its_variable_where_torch_has_one(traced):
    import torch._inductor.config

    from tools.record_config_env import env_vars

    # What torch's config module reads each key from, its own source read again.
    truth = env_vars(Path(torch._inductor.config.__file__).read_text())
    for x in _by_step(traced["replay"])["config"]:
        rc = x["root_cause"]
        key = rc["component"].removeprefix("inductor_config[").removesuffix("]")
        assert rc["env"] == truth[key][0]
        d = _detail(x, rc["component"])
        assert (rc["this"], rc["cache"]) == (d["this"], d["nearest"])


def test_a_dtype_change_names_the_argument_and_both_dtypes(traced):
    from tests.harness.cases import branch_on_size

    arg = next(iter(inspect.signature(branch_on_size).parameters))
    for x in _by_step(traced["replay"])["dtype"]:
        rc = x["root_cause"]
        assert rc["code"] == "input-dtype" and rc["input"] == arg
        d = _detail(x, rc["component"])
        assert d["this"].startswith(rc["this"] + "[") and d["nearest"].startswith(rc["cache"] + "[")
        assert rc["this"] != rc["cache"]


def test_a_batch_beyond_the_marked_range_is_a_guard_cause_in_the_users_terms(traced):
    ex = traced["replay"]["explain"]
    rows = [r for r in ex["summary"]["causes"] if r["code"] == "guard"]
    for x in _by_step(traced["replay"])["guard_miss"]:
        (f,) = x["failed"]
        v = f["values"]["t0"]
        user = user_source(v["source"])
        row = next(r for r in rows if r["cache"] == f["clause"].replace("L['t0']", user))
        assert row["this"] == f"{user} = {v['value']}" and user in row["words"]
    s = ex["summary"]
    missed = sum(x["state"] == "miss" for x in ex["lookups"])
    assert sum(r["lookups"] for r in s["causes"]) == missed
    assert s["verdict"].startswith(f"{missed} of {len(ex['lookups'])} lookups missed: {s['causes'][0]['words']}")
