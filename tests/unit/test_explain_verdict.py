"""The verdict of a run and the root cause's helpers, on explained lookups built by hand.

Synthetic: hits whose compile still built kernels (``Rebuilt``, filled by the
explainer from the trace's C++ compile steps) and a backward graph that differs only
in node names are made here as values; the real runs are in
tests/torch/test_explain_cause.py and tests/cli/test_explain_torch_upgrade.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fxcache_core.keying.anatomy import Component, ComponentDiff
from fxcache_core.trace.explain_report import LookupExplanation, Rebuilt, RootCause
from fxcache_core.trace.nearest import Nearest
from fxcache_core.trace.root_cause import root_cause, same_but_names
from fxcache_core.trace.run import TraceLookup
from fxcache_core.trace.run_summary import run_verdict
from fxcache_core.trace.user_terms import user_source


def _lookup(seq: int, state: str = "hit", cache: str = "fxgraph") -> TraceLookup:
    return TraceLookup(seq=seq, compile=None, rank=None, cache=cache, key=f"f{seq:051d}", state=state,  # type: ignore[arg-type]
                       detailed="hit" if state == "hit" else "full_miss", guards_expr=None, components=(),
                       seconds_saved=2.0 if state == "hit" else None, seconds_taken=None, bypass_reason=None,
                       bypass_type=None, time=1.0e9 + seq, for_aot=False, line=seq, since_line=seq,
                       file=Path("trace.log"))


HEADERS = "the cache's libraries were built against another torch install's headers"


def test_all_hits_that_rebuilt_kernels_say_so_with_the_seconds_and_the_cause():
    lookups = [LookupExplanation(_lookup(i), None, "hit",
                                 rebuilt=Rebuilt(1, 1.24, HEADERS) if i < 5 else None) for i in range(7)]
    v = run_verdict(lookups)
    assert v.line == f"all 7 hit, but 5 kernels were rebuilt (6.2 s): {HEADERS}"
    assert v.rebuilt_after_hit == 5 and v.causes == ()
    assert v.to_json()["rebuilt_after_hit"] == 5


def test_all_clean_hits_is_all_hit():
    v = run_verdict([LookupExplanation(_lookup(i), None, "hit") for i in range(3)])
    assert (v.line, v.rebuilt_after_hit) == ("all 3 hit", 0)


def test_misses_lead_with_the_most_common_root_cause_and_count_the_others():
    tv = RootCause("torch_version", "2.14.1+cu130", "2.13.0+cpu", "torch-version")
    cfg = RootCause("inductor_config[max_autotune]", "True", "False", "inductor-config",
                    env="TORCHINDUCTOR_MAX_AUTOTUNE")
    lookups = ([LookupExplanation(_lookup(i, "miss"), None, "new-key", root_cause=tv) for i in range(3)]
               + [LookupExplanation(_lookup(3, "miss"), None, "new-key", root_cause=cfg),
                  LookupExplanation(_lookup(4), None, "hit", rebuilt=Rebuilt(2, 0.5, None))])
    v = run_verdict(lookups)
    assert v.line.startswith("4 of 5 lookups missed: the cache was built by torch 2.13.0+cpu, "
                             "this run is torch 2.14.1+cu130 (3 of them); 1 other cause")
    assert "1 of the hits still compiled: 2 kernels were rebuilt (0.5 s)" in v.line
    assert [(r.component, r.lookups) for r in v.causes] == [("torch_version", 3),
                                                           ("inductor_config[max_autotune]", 1)]
    assert "TORCHINDUCTOR_MAX_AUTOTUNE" in v.causes[1].words
    assert "TORCHINDUCTOR_MAX_AUTOTUNE" not in run_verdict(lookups, raw=True).causes[1].words


def test_no_lookup_says_nothing_was_compiled():
    assert run_verdict([]).line.startswith("no cache lookup")


_BWD_213 = """GraphModule()



def forward(self, primals_3, primals_4, relu, tangents_1):
    permute_1 = torch.ops.aten.permute.default(primals_4, [1, 0]);  primals_4 = None
    mm = torch.ops.aten.mm.default(tangents_1, relu);  tangents_1 = None
    le = torch.ops.aten.le.Scalar(relu, 0);  relu = None
    mm_1 = torch.ops.aten.mm.default(le, primals_3);  le = primals_3 = None
    return (mm_1, permute_1, None, mm)

# To see more debug info, please use `graph_module.print_readable()`"""
# torch's printed backward graph (the gm component) as 2.13 wrote it; the same graph with
# its nodes renamed, as another torch's partitioner names them:
_BWD_214 = (_BWD_213.replace("mm_1", "mm_2").replace("mm =", "mm_1 =").replace(", mm)", ", mm_1)")
            .replace("relu", "relu_1").replace("permute_1", "permute"))


def test_a_graph_that_differs_only_in_node_names_is_a_consequence_of_the_torch_version():
    assert same_but_names(_BWD_213, _BWD_214)
    assert not same_but_names(_BWD_213, _BWD_214.replace("aten.le.Scalar", "aten.lt.Scalar"))
    diffs = (ComponentDiff("gm", Component("gm", "h1", _BWD_214), Component("gm", "h2", _BWD_213)),
             ComponentDiff("torch_version", Component("torch_version", "aaaa", "x"),
                           Component("torch_version", "sjldm5hyfytkdkxlfj3fhwi432gtpoqk3r6uo4z3lfs7aiipms3", "y")),
             ComponentDiff("example_inputs[0]", Component("example_inputs[0]", "e1", "a"),
                           Component("example_inputs[0]", "e2", "b")))
    rc = root_cause(Nearest("fK", tuple(d.name for d in diffs), (), diffs=diffs), None, "2.14.1+cu130")
    assert rc is not None and (rc.component, rc.this, rc.cache) == ("torch_version", "2.14.1+cu130", "2.13.0+cpu")
    assert rc.consequences == ("gm",) and rc.also == ("example_inputs[0]",)


def test_an_unrecorded_torch_is_said_by_its_hash():
    diffs = (ComponentDiff("torch_version", Component("torch_version", "aaaa", "x"),
                           Component("torch_version", "zzzzzzzzzzzzzzzz", "y")),)
    rc = root_cause(Nearest("fK", ("torch_version",), (), diffs=diffs), None, None)
    assert rc is not None and "zzzzzzzzzzzz" in (rc.cache or "") and "aaaa" in (rc.this or "")


@pytest.mark.parametrize(("source", "user"), [
    ("L['x']", "x"), ("L['x'].size()[0]", "x.size(0)"), ("L['x'].stride()[1]", "x.stride(1)"),
    ("L['self']._modules['lin']._parameters['weight']", "self.lin.weight"), ("G['cv'].get()", "cv.get()")])
def test_sources_read_as_the_user_wrote_them(source, user):
    assert user_source(source) == user


def test_the_config_variable_table_is_torchs_config_source_read_again():
    import importlib.util
    import json

    from fxcache_core.keying import config_env
    from tools.record_config_env import record

    spec = importlib.util.find_spec("torch")  # its source is read, never imported
    if spec is None or spec.origin is None:
        pytest.skip("torch is not installed")
    committed = json.loads(Path(config_env.__file__).with_name(config_env.DATA_FILE).read_text())
    fresh = record(Path(spec.origin).parent)
    assert fresh["env"] == committed["env"] and fresh["torch_version"] == committed["torch_version"]
    assert config_env.env_var("inductor_config[max_autotune]") == "TORCHINDUCTOR_MAX_AUTOTUNE"


def test_a_setting_off_its_own_torchs_default_is_a_second_cause_not_a_consequence():
    from fxcache_core.keying.defaults import default_settings_for

    new, old = default_settings_for("2.14.1+cu130"), default_settings_for("2.13.0+cpu")
    assert new is not None and old is not None
    name = "inductor_config[max_autotune]"
    changed = next(n for n in new if n in old and new[n][0] != old[n][0])  # a default that changed

    def diff(n: str, a: str, b: str) -> ComponentDiff:
        return ComponentDiff(n, Component(n, a, "x"), Component(n, b, "y"))

    versions = diff("torch_version", "4d5hw3qo6n7ndqx6zagncfknodloto366xf5lafqoh3wkwthu3t",
                    "sjldm5hyfytkdkxlfj3fhwi432gtpoqk3r6uo4z3lfs7aiipms3")
    diffs = (versions, diff(changed, new[changed][0] + "aaaa", old[changed][0] + "bbbb"),
             diff(name, "zzzzzzzzzzzzzzzzzzzz", old[name][0] + "cccc"))  # set by the user on the new torch
    rc = root_cause(Nearest("fK", tuple(d.name for d in diffs), (), diffs=diffs), None, "2.14.1+cu130")
    assert rc is not None and rc.component == "torch_version"
    assert rc.consequences == (changed,) and rc.also == (name,)
