"""The state a traced compile was entered under, as a run's trace records it
(fxcache_core/trace/state_guards.py) and as match reads it for a module's attributes
(fxcache_core/lookup/module_state.py, lookup/recorded_state.py) and the global state
(lookup/global_state.py, lookup/ambient.py).

The guard lines are torch 2.13's own text (``dynamo_cpp_guards_str`` of a ``Gate`` module
compiled whole in eval mode, of a conv + batch norm block, and of a function under
``torch.no_grad()``); the records and keys around them are written by hand for the
cases a real run cannot make (a record cut short, hostile values, two compiles).
tests/torch/test_recorded_state.py checks the rules against torch on real caches.
"""

from __future__ import annotations

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey
from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.lookup.binding import DEFAULT_DTYPE, GRAD_MODE
from fxcache_core.lookup.global_state import recorded_account, state_accounts
from fxcache_core.lookup.module_state import module_state
from fxcache_core.lookup.param_account import ParamAccount
from fxcache_core.lookup.pyvalues import PyValue, TorchDtype
from fxcache_core.lookup.recorded_state import attr_evidence, self_path
from fxcache_core.reasons import Reason
from fxcache_core.trace.state_guards import MAX_STATE_CHARS, state_record

_STATE = ('___check_global_state() against {"allow_bf16_reduce":0,"allow_fp16_reduce":0,"allow_tf32":false,'
          '"autocast_state":{"cached_enabled":true,"dtype":[15,5,5,15,5,5,15,15,5,5],"enabled":[false,false,false,'
          'false,false,false,false,false,false,false]},"default_dtype":6,"deterministic_algorithms":false,'
          '"deterministic_algorithms_warn_only":false,"grad_mode":false,"num_threads":2,"torch_function":true,'
          '"torch_function_all_disabled":false}')
GATE = [
    "torch._functorch.aot_autograd.utils.top_saved_tensors_hooks ids == None",
    _STATE,
    "___check_torch_function_mode_stack()",
    "hasattr(L['x'], '_dynamo_dynamic_indices') == False",
    "L['residual'] == True",
    "___check_type_id(L['self'], 94868551930336), type=<class 'tests.harness.evaluation.fns_r14.Gate'>",
    "___check_type_id(L['self']._modules['lin'], 94868617788368), type=<class 'torch.nn.modules.linear.Linear'>",
    "not ___dict_contains('forward', L['self']._modules['lin'].__dict__)",
    "L['self'].training == False",
]
CONV_BN = [
    _STATE,
    "L['self']._modules['bn'].eps == 1e-05",
    "L['self']._modules['bn'].training == False",
    "L['self']._modules['conv'].stride == (1, 1)",
    "L['self']._modules['conv'].padding_mode == 'zeros'",
    "L['self'].config.use_cache == True",
]
_AOT = CacheKey(KeyKind.AOT_AUTOGRAD, "a" * 52, "/nowhere", ())
_FX = CacheKey(KeyKind.FX_GRAPH, "f" * 52, "/nowhere", ())
_MODULE = CompiledFrom(function="forward", file="/nowhere/m.py", line=3, whole_module=True)


def test_a_compiles_state_is_read_from_its_guards():
    got = state_record(GATE, complete=True)
    assert got["L['self'].training"] is False and "L['residual']" not in got
    assert {k: v for k, v in got.items() if k.startswith("#state:")} == {
        "#state:grad_mode": False, "#state:autocast": False, "#state:default_dtype": "float32",
        "#state:deterministic": False, "#state:num_threads": 2}
    assert {"training", "lin", "forward", "residual"} <= set(got["#self-names"]) and "use_act" not in got["#self-names"]
    conv = state_record(CONV_BN, complete=True)
    assert conv["L['self']._modules['bn'].training"] is False and conv["L['self'].config.use_cache"] is True
    assert conv["L['self']._modules['bn'].eps"] == 1e-05 and "L['self']._modules['conv'].stride" not in conv


def test_names_are_kept_only_from_a_compiles_every_guard_and_not_past_a_whole_dict():
    assert "#self-names" not in state_record(GATE, complete=False)  # cut short: a name may be in what is missing
    assert "#self-names" not in state_record([*GATE, "___check_obj_id(vars(L['self']), 1)"], complete=True)
    assert "#self-names" not in state_record([*GATE, "len(L['self'].__dict__) == 4"], complete=True)
    specialized = "___check_obj_id(L['self']._modules['lin'], 140706147596656)"  # its attributes may go unguarded
    assert "#self-names" not in state_record([*GATE, specialized], complete=True)
    typed = specialized + ", type=<class 'torch.nn.modules.linear.Linear'>"
    assert "#self-names" not in state_record([*GATE, typed], complete=True)
    act = ("___check_obj_id(L['self']._modules['act_fn'].act, 140516264406176), "
           "type=<class 'builtin_function_or_method'>")  # a function the module holds: no module pinned
    assert "act" in state_record([*GATE, act], complete=True)["#self-names"]
    kept = state_record([*GATE, "not ___dict_contains('attribute_map', L['self'].config.__dict__)",
                         "not ___dict_contains('use_act', dict(type(L['self']).__mro__[1].__dict__)['attribute_map'])"],
                        complete=True)  # one name of a dict each (torch's text for a transformers config)
    assert {"attribute_map", "use_act"} <= set(kept["#self-names"])
    assert "#self-names" not in state_record(["L['clip'] == True"], complete=True)  # no self at all: not a module's
    many = [f"L['self'].a{i} == {i}" for i in range(3000)]
    got = state_record(many, complete=True)
    assert "#self-names" not in got and not any(k.startswith("L['self']") for k in got)  # over the budget


def test_past_the_budget_a_records_submodule_attributes_go_first():
    codes = [f"L['self']._modules['m{i}'].eps == 1e-05" for i in range(800)] + [
        "L['self']._modules['m0'].training == False", "L['self'].use_act == True"]
    got = state_record(codes, complete=True)
    assert sum(len(k) for k in got) < 2 * MAX_STATE_CHARS
    assert got["L['self']._modules['m0'].training"] is False and got["L['self'].use_act"] is True
    assert "L['self']._modules['m1'].eps" not in got


def test_hostile_global_state_text_keeps_nothing_it_does_not_know():
    assert state_record(['___check_global_state() against {"grad_mode": 1, "default_dtype": 99, '
                         '"autocast_state": {"enabled": "yes"}}'], complete=True) == {}
    assert state_record(["___check_global_state() against [[[[", "___check_global_state() against " + "[" * 5000],
                        complete=True) == {}
    assert state_record(["L['self'].training == __import__('os').system('true')", "L['self'].x is True",
                         "L['self'].__class__.y != 1"], complete=True) == {
        "#self-names": ("__class__", "os", "self", "system", "training", "true", "x", "y")}


def test_the_call_attribute_against_the_records():
    rec = {**state_record(CONV_BN, complete=True), "#all-guards": True}
    assert self_path("L['self']._modules['bn'].training") == "L['self'].bn.training"
    assert attr_evidence([rec], "L['self'].training", False) == ("same", ())  # model.eval() sets bn's
    assert attr_evidence([rec], "L['self'].training", True) == ("differs", (False,))
    assert attr_evidence([rec], "L['self'].bn.eps", 1e-05) == ("same", ())
    assert attr_evidence([rec], "L['self'].config.use_cache", False) == ("differs", (True,))
    assert attr_evidence([rec], "L['self'].use_act", False) == ("unread", ())  # no guard names it
    assert attr_evidence([rec], "L['self'].eps", 1e-05) is None  # bn.eps is guarded: a name some guard reads
    # a submodule's own training given answers for it, not the module's
    assert attr_evidence([rec], "L['self'].training", True, ["L['self'].training", "L['self'].bn.training"]) is None
    # a config's attribute named training is no submodule's: model.train() does not set it
    cfg = {"L['self'].config.training": False, "#all-guards": True, "#self-names": ("config", "training")}
    assert attr_evidence([cfg], "L['self'].training", False) is None
    # a record cut short says nothing of an attribute it does not guard
    assert attr_evidence([{"L['self'].training": False}], "L['self'].use_act", True) is None
    # two compiles: one at the call's value is enough; others only where none is
    two = [{"L['self'].training": True}, {"L['self'].training": False}]
    assert attr_evidence(two, "L['self'].training", False) == ("same", ())


def test_module_state_with_a_record_accounts_or_falls_through():
    rec = {**state_record(GATE, complete=True), "#all-guards": True}
    inputs = {"L['self'].training": PyValue(False), "L['self'].use_act": PyValue(True)}
    got = {a.name: a for a in module_state(inputs, _MODULE, _AOT, None, [rec])}
    assert got["self.training"].status == "accounted" and got["self.training"].how.code == "module-state-recorded"
    assert got["self.use_act"].status == "accounted" and got["self.use_act"].how.code == "module-state-unread"
    asked = []

    def judge(src, name, v):
        asked.append((src, v))
        return None

    [one] = module_state({"L['self'].training": PyValue(True)}, _MODULE, _AOT, judge, [rec])
    assert asked == [("L['self'].training", True)]  # another value: the other rules are asked first
    assert one.status == "undecided" and one.how.code == "module-state-differs-from-record"
    ruled = ParamAccount("self.training", "True", True, "rules-out", Reason("the other side", "branch-not-taken"))
    [two] = module_state({"L['self'].training": PyValue(True)}, _MODULE, _AOT, lambda *a: ruled, [rec])
    assert two is ruled
    [three] = module_state({"L['self'].training": PyValue(True)}, _MODULE, _AOT, None, ())
    assert three.how.code == "module-state-unrecorded"


def test_the_global_state_against_the_records():
    rec = state_record([_STATE], complete=True)
    same = recorded_account(_AOT, GRAD_MODE, False, [rec])
    assert same is not None and same.status == "accounted" and same.how.code == "state-recorded"
    other = recorded_account(_AOT, GRAD_MODE, True, [rec])
    assert other is not None and other.status == "rules-out" and other.how.code == "state-differs-from-record"
    fx = recorded_account(_FX, GRAD_MODE, True, [rec])  # Inductor does not hash the grad mode
    assert fx is not None and fx.status == "undecided" and fx.how.code == "state-differs-unhashed"
    dtype = recorded_account(_FX, DEFAULT_DTYPE, TorchDtype("float64"), [rec])
    assert dtype is not None and dtype.status == "rules-out" and "torch.float32" in str(dtype.how)
    assert recorded_account(_AOT, DEFAULT_DTYPE, TorchDtype("float32"), [rec]).status == "accounted"
    auto = recorded_account(_AOT, "torch.is_autocast_enabled()", True, [rec])
    assert auto is not None and auto.status == "rules-out"
    threads = recorded_account(_AOT, "torch.get_num_threads()", 4, [rec])  # hashed only for C++ code
    assert threads is not None and threads.status == "undecided"
    assert recorded_account(_AOT, GRAD_MODE, False, []) is None
    on = {"#state:autocast": True}  # on there and on in the call: which dtype, the call does not say
    assert recorded_account(_AOT, "torch.is_autocast_enabled()", True, [on]) is None
    assert recorded_account(_AOT, GRAD_MODE, False, [{"#state:grad_mode": 0}]).status == "rules-out"  # not a bool
    [acc] = state_accounts(_AOT, {"torch.are_deterministic_algorithms_enabled()": PyValue(True)}, [rec])
    assert acc.status == "rules-out"
    [acc] = state_accounts(_AOT, {"torch.are_deterministic_algorithms_enabled()": PyValue(True)})
    assert acc.status == "undecided" and acc.how.code == "deterministic-unrecorded"
