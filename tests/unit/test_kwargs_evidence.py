"""A call's keywords through ``**kwargs`` judged against Dynamo's guards on the dict, as a
run's trace recorded them (fxcache_core/trace/dict_guards.py reads them,
fxcache_core/lookup/kwargs_evidence.py judges them).

The guard lines are torch 2.13's own text (``dynamo_cpp_guards_str`` of a run of
``f(x, **kwargs)`` that reads ``kwargs.get('output_attentions', False)``, passes
``**kwargs`` on, or iterates it); the trace around them is synthetic
(tests/synth_trace.py). tests/torch/test_explain.py judges real runs against torch.
"""

from __future__ import annotations

import pytest

from fxcache_core.lookup.binding import TensorArg
from fxcache_core.lookup.kwargs_evidence import ItemsGiven, judge_record, kwargs_account
from fxcache_core.lookup.pyvalues import PyValue
from fxcache_core.trace.constants import key_constants
from fxcache_core.trace.dict_guards import dict_evidence, guard_managers
from tests import synth_trace as st

K = "L['kwargs']"
TYPE = "___check_type_id(L['kwargs'], 140584029621920), type=<class 'dict'>"
# (the guards torch 2.13 printed on the dict, the keywords of the call that compiled it)
RUNS = {
    "get, given True": ([TYPE, "L['kwargs']['output_attentions'] == True"], {"output_attentions": True}),
    "get, not given": ([TYPE, "not ___dict_contains('output_attentions', L['kwargs'])"], {}),
    "passed on, none": ([TYPE, "not L['kwargs']"], {}),
    "passed on, one": ([TYPE, "len(L['kwargs']) == 1", "L['kwargs']['flag'] == True"], {"flag": True}),
}


def _record(codes: list[str], managers: tuple = ()) -> dict:
    from pathlib import Path

    from fxcache_core.trace.run_facts import CompileRef, TraceCompile

    c = TraceCompile(0, None, CompileRef("0/0", 0), "f", "f.py", 1, None, None, (), (), (), tuple(codes), None, None,
                     None, None, Path("t"), (), managers)
    return dict_evidence(c)


@pytest.mark.parametrize("name", list(RUNS))
def test_the_call_that_compiled_it_passes_its_guards(name):
    codes, kw = RUNS[name]
    assert judge_record(_record(codes), K, {k: PyValue(v) for k, v in kw.items()}) == ("pass", "")


@pytest.mark.parametrize("name,call,failed", [
    ("get, given True", {}, "L['kwargs']['output_attentions'] == True"),
    ("get, given True", {"output_attentions": False}, "L['kwargs']['output_attentions'] == True"),
    ("get, not given", {"output_attentions": False}, "not ___dict_contains('output_attentions', L['kwargs'])"),
    ("passed on, none", {"flag": True}, "not L['kwargs']"),
    ("passed on, one", {}, "L['kwargs']['flag'] == True"),
    ("passed on, one", {"flag": True, "other": 1}, "len(L['kwargs']) == 1"),
])
def test_a_call_with_other_keywords_fails_one(name, call, failed):
    codes, _ = RUNS[name]
    assert judge_record(_record(codes), K, {k: PyValue(v) if not isinstance(v, int) or isinstance(v, bool) else v
                                            for k, v in call.items()}) == ("fail", failed)


def test_keywords_the_code_never_read_pass_where_dynamo_guarded_nothing_on_the_dict():
    rec = _record(["___check_type_id(L['x'], 9)"])
    assert rec == {"#all-guards": True}
    assert judge_record(rec, K, {"anything": PyValue("x")}) == ("pass", "")


def test_a_dict_the_code_iterates_is_not_read_and_a_record_without_every_guard_is_no_evidence():
    rec = _record([TYPE, "list(dict.keys(L['kwargs']))[0] == 'z'"], (("DictGuardManager", K),))
    assert judge_record(rec, K, {"z": 1})[0] == "unknown"
    assert judge_record(_record([TYPE], (("DictGuardManager", K),)), K, {}) == ("unknown", "DictGuardManager")
    assert judge_record({"L['kwargs']['flag']": True}, K, {"flag": PyValue(True)}) == ("none", "")
    hostile = {"#all-guards": True, "guards:L['kwargs']": ("(" * 5000 + ")" * 5000, "L['kwargs']['a'] == " + "1" * 3000,
                                                           "L['kwargs']['a'] == __import__('os').system('x')")}
    assert judge_record(hostile, K, {"a": 1})[0] == "unknown"  # bounded, parsed, never run


def test_a_keyword_given_by_its_items_is_judged_by_the_dicts_keys_and_its_own_guards_are_not_read():
    """``cfg['n']=4`` under ``**kwargs``: the keyword ``cfg``, a container fxcache never
    builds. Dynamo's guards on the dict's keys judge it as any keyword (torch 2.13 recompiles
    ``f(x, flag=True)``'s frame for ``f(x, flag=True, cfg={'n': 4})`` on ``len(kwargs) == 1``);
    a guard on the container or inside it is unread, never passed."""
    cfg = ItemsGiven((("['n']", 4),))
    codes, _ = RUNS["passed on, one"]
    assert judge_record(_record(codes), K, {"flag": PyValue(True), "cfg": cfg}) == ("fail", "len(L['kwargs']) == 1")
    inside = ["___check_type_id(L['kwargs']['cfg'], 9), type=<class 'dict'>", "L['kwargs']['cfg']['n'] == 4",
              "len(L['kwargs']['cfg']) == 1", "L['kwargs']['cfg'] is not None"]
    for code in inside:
        assert judge_record(_record([TYPE, code]), K, {"cfg": cfg})[0] == ("pass" if "is not None" in code
                                                                           else "unknown"), code
    acc = kwargs_account("k" * 52, "f", K, {"flag": PyValue(True), "cfg": cfg}, [], read=True)
    assert acc.status == "undecided" and acc.how.code == "kwargs-unrecorded", acc
    assert "**kwargs={flag=True, cfg['n']=4}" in acc.how, acc.how


def test_a_tensor_keyword_is_left_to_the_keys_own_guards():
    rec = _record([TYPE, "___check_type_id(L['kwargs']['mask'], 94125683062432), type=<class 'torch.Tensor'>",
                   "check_tensor(L['kwargs']['mask'], Tensor, DispatchKeySet(CPU), torch.float32, "
                   "device=None, requires_grad=False, size=[4, 3], stride=[3, 1])",
                   "hasattr(L['kwargs']['mask'], '_dynamo_dynamic_indices') == False",
                   "check_no_aliasing(L['kwargs']['mask'], L['x'])", "not hasattr(L['kwargs']['mask'], 'jax')", "2 <= L['kwargs']['mask'].size()[0]",
                   "((getattr(L['kwargs']['mask'], '_dynamo_dynamic_indices', set()).issubset({0})) "
                   "if hasattr(L['kwargs']['mask'], '_dynamo_dynamic_indices') else True)"])
    t = TensorArg((4, 3))
    assert judge_record(rec, K, {"mask": t}) == ("pass", "")
    assert judge_record(rec, K, {})[0] == "fail"
    assert judge_record(rec, K, {"mask": PyValue(None)})[0] == "fail"  # its type is not the tensor's


def test_the_manager_lines_and_the_markers_come_from_torchs_printout(tmp_path):
    payload = ("TREE_GUARD_MANAGER:\n+- RootGuardManager\n"
               "| +- DictGuardManager: source=L['kwargs'], accessed_by=FrameLocalsGuardAccessor(key='kwargs', "
               "framelocals_idx=1), type=<class 'dict'>, tag_safe=(False, False)\n"
               "| | | +- KeyManager: GuardManager: source=list(dict.keys(L['kwargs']))[0], type=<class 'str'>\n"
               "| +- GuardManager: source=L['x'], accessed_by=FrameLocalsGuardAccessor(key='x', framelocals_idx=0)\n")
    assert guard_managers(payload) == (("DictGuardManager", K),)
    text = (st.clock() + st.start() + st.tensor("L['x']", [5, 4], [4, 1]) + st.final_guards(RUNS["passed on, one"][0])
            + st.fx_miss("fK1"))
    from fxcache_core.trace.run import read_run

    (rec,) = key_constants(read_run(st.write_trace(tmp_path / "t", text)))["fK1"]
    assert rec["#all-guards"] is True and rec["L['kwargs']['flag']"] is True
    assert rec["guards:L['kwargs']"] == ("L['kwargs']['flag'] == True",
                                         "___check_type_id(L['kwargs'], ...), type=<class 'dict'>",
                                         "len(L['kwargs']) == 1")  # the process's address left out


def test_without_evidence_both_directions_are_undecided_with_one_code():
    none = kwargs_account("aK", "f", K, {}, (), True)
    given = kwargs_account("aK", "f", K, {"flag": PyValue(True)}, (), True)
    assert (none.status, none.how.code) == (given.status, given.how.code) == ("undecided", "kwargs-unrecorded")
    assert "**kwargs" in none.how and "fxcache explain TRACE" in none.how
    unread = kwargs_account("aK", "f", K, {"flag": PyValue(True)}, (), False)
    assert (unread.status, unread.how.code) == ("accounted", "unread")
    rec = _record(RUNS["get, not given"][0])
    assert kwargs_account("aK", "f", K, {}, (rec,), True).how.code == "trace-guard"
    differs = kwargs_account("aK", "f", K, {"output_attentions": PyValue(True)}, (rec,), True)
    assert (differs.status, differs.how.code) == ("undecided", "kwargs-differs-from-record")


def test_a_dict_of_another_name_is_named_as_the_function_names_it():
    kw = kwargs_account("aK", "f_kw", "L['kw']", {"flag": PyValue(True)}, (), True)
    assert "**kw={flag=True}" in kw.how and "f_kw takes **kw and" in kw.how and "**kwargs" not in kw.how


# The guards torch 2.13 printed on a transformers model compiled whole (OPTForCausalLM called
# with input_ids alone: its decorators' frame `wrapper(self, *args, **kwargs)` pops return_dict).
OPT = [TYPE, "not ___dict_contains('return_dict', L['kwargs'])", "len(L['kwargs']) == 1",
       "___check_type_id(L['kwargs']['input_ids'], 94655029342864), type=<class 'torch.Tensor'>",
       "check_tensor(L['kwargs']['input_ids'], Tensor, DispatchKeySet(CPU, BackendSelect, ADInplaceOrView, "
       "AutogradCPU), torch.int64, device=None, requires_grad=False, size=[None, None], stride=[None, 1])",
       "hasattr(L['kwargs']['input_ids'], '_dynamo_dynamic_indices') == False",
       "2 <= L['kwargs']['input_ids'].size()[0]"]


def _with_args(codes: list[str], args: tuple[str, ...]) -> dict:
    rec = _record(codes)
    return {**rec, "guards:L['args']": args} if args else rec


@pytest.mark.parametrize("codes,name,said", [
    (RUNS["get, given True"][0], "output_attentions", ("value", True)),
    (RUNS["get, not given"][0], "output_attentions", ("absent", None)),
    (RUNS["get, not given"][0], "use_cache", ("unknown", None)),  # no length: other keys may be there
    (RUNS["passed on, none"][0], "use_cache", ("absent", None)),
    (RUNS["passed on, one"][0], "flag", ("value", True)),
    (RUNS["passed on, one"][0], "use_cache", ("absent", None)),  # one key, and the guards show which
    (OPT, "input_ids", ("given", None)),
    (OPT, "return_dict", ("absent", None)),
    (OPT, "logits_to_keep", ("absent", None)),
    (["___check_type_id(L['x'], 9)"], "use_cache", ("unknown", None)),  # no guard on the dict
])
def test_a_records_guards_say_what_each_keyword_was(codes, name, said):
    from fxcache_core.lookup.kwargs_evidence import recorded_item

    assert recorded_item(_record(codes), K, name) == said


def test_an_iterated_dict_or_a_record_without_every_guard_says_nothing_of_a_keyword():
    from fxcache_core.lookup.kwargs_evidence import recorded_item

    assert recorded_item(_record(OPT, (("DictGuardManager", K),)), K, "use_cache") == ("unknown", None)
    partial = {k: v for k, v in _record(OPT).items() if k != "#all-guards"}
    assert recorded_item(partial, K, "use_cache") == ("unknown", None)
    # a length whose keys the guards do not all show leaves the others open
    assert recorded_item(_record([TYPE, "len(L['kwargs']) == 2", "L['kwargs']['flag'] == True"]), K,
                         "use_cache") == ("unknown", None)


def test_a_parameter_left_out_of_a_module_compiled_whole_is_its_default_where_no_positional_reaches_it():
    from fxcache_core.lookup.kwargs_evidence import args_reach, left_out_in

    none = _with_args(OPT, ("___check_type_id(L['args'], ...), type=<class 'tuple'>", "not L['args']"))
    one = _with_args(OPT, ("len(L['args']) == 1",))
    params = ("input_ids", "attention_mask", "use_cache")
    assert (args_reach(none, 0), args_reach(one, 0), args_reach(one, 1), args_reach(_record(OPT), 0)) == (
        False, True, False, None)
    assert left_out_in([none], params, "use_cache", None) == [None]
    assert left_out_in([one], params, "use_cache", None) == [None]  # args[0] is input_ids
    assert left_out_in([_record(OPT)], params, "use_cache", None) == []  # L['args'] unguarded: unknown
    assert left_out_in([_record(OPT)], params, "logits_to_keep", 0) == [0]  # keyword-only: never positional
    assert left_out_in([none], params, "input_ids", None) == []  # given there


def test_a_call_that_fails_the_dicts_guards_names_the_keywords_that_differ():
    opt = _record(OPT)
    acc = kwargs_account("aK", "f", K, {"input_ids": TensorArg((2, 8)), "use_cache": PyValue(None)}, (opt,), True)
    assert (acc.status, acc.how.code) == ("undecided", "kwargs-differs-from-record")
    assert "differs in use_cache (not given there)" in acc.how and "`len(L['kwargs']) == 1` fails" in acc.how
    acc = kwargs_account("aK", "f", K, {}, (_record(RUNS["passed on, one"][0]),), True)
    assert "differs in flag (given there)" in acc.how
    acc = kwargs_account("aK", "f", K, {"flag": PyValue(False)}, (_record(RUNS["passed on, one"][0]),), True)
    assert "differs in flag=False (True there)" in acc.how


def test_each_keyword_of_a_dict_that_fails_is_accounted_by_its_own_guards_or_named():
    from fxcache_core.lookup.kwargs_evidence import _item_account

    rec = _record([TYPE, "len(L['kwargs']) == 2", "L['kwargs']['flag'] == True",
                   "L['kwargs']['mode'] == 'fast'"])
    given = {"flag": PyValue(True), "mode": PyValue("slow")}
    acc = kwargs_account("aK", "f", K, given, (rec,), True)
    flag = _item_account(acc, "aK", K, "flag", "L['kwargs']['flag']", given["flag"], (rec,))
    mode = _item_account(acc, "aK", K, "mode", "L['kwargs']['mode']", given["mode"], (rec,))
    assert (flag.status, flag.how.code) == ("accounted", "trace-guard")
    assert (mode.status, mode.how.code) == ("undecided", "kwargs-differs-from-record")
    assert mode.how.startswith("mode='slow': 'fast' in a traced compile") and "return" in mode.how
    new = _item_account(acc, "aK", K, "extra", "L['kwargs']['extra']", PyValue(1), (rec,))
    assert new.how.startswith("extra=1: not given in a traced compile"), new.how  # two keys, both shown
    nothing = _item_account(acc, "aK", K, "extra", "L['kwargs']['extra']", PyValue(1), ())
    assert nothing.how == acc.how and nothing.name == "extra"


def test_a_wrappers_positional_arguments_are_kept_by_their_length_alone():
    # qwen2's deprecation wrapper `wrapped_func(*args, **kwargs)`: args is (self,), whose
    # hundreds of attribute guards are not kept (past MAX_DICT_GUARDS), only how many there are
    from fxcache_core.lookup.kwargs_evidence import args_reach

    many = [f"___check_obj_id(L['args'][0].layer{i}, 1234)" for i in range(300)]
    rec = _record(OPT + ["len(L['args']) == 1", *many])
    assert rec["guards:L['args']"] == ("len(L['args']) == 1",)
    assert (args_reach(rec, 0), args_reach(rec, 1)) == (True, False)  # args[0] may be self: reached, unknown
    assert _record(OPT + ["not L['args']"])["guards:L['args']"] == ("not L['args']",)
    assert "guards:L['args']" not in _record(OPT)
