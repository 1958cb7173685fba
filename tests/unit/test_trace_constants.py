"""The Python values a traced compile was made for, read from Dynamo's guards
(fxcache_core/trace/constants.py), kept per key in the usage store
(fxcache_core/state/usage.py), and given to match by ``--from-trace`` (trace/call.py).

The guard lines are torch's own text (``dynamo_cpp_guards_str``, torch 2.13: what a run
of ``clip_flag(x, clip=True)`` and a function with a str, None and a tuple printed);
the traces are synthetic (tests/synth_trace.py) for the bounds and hostile input a
real run cannot make. tests/torch/test_arguments.py reads a real run's trace.
"""

from __future__ import annotations

from fxcache_core.trace.constants import MAX_GUARD_CODE_CHARS, guard_constants, key_constants
from tests import synth_trace as st

# As torch 2.13 prints them (code only: the "  # source line" comment is cut when read).
GUARDS = [
    "hasattr(L['x'], '_dynamo_dynamic_indices') == False",
    "L['clip'] == True",
    "L['act'] == 'gelu'",
    "___check_type_id(L['dims'], 140581185905536), type=<class 'tuple'>",
    "len(L['dims']) == 2",
    "L['dims'][0] == 0",
    "L['dims'][1] == -1",
    "L['mask'] is None",
    "L['kwargs']['use_cache'] == False",
    "L['scale'] == 2.5",
    "___check_obj_id(L['flag'], 94300000)",
    "L['self'].training == False",
    "L['self']._modules['lin'].bias is None",
    "___check_obj_id(G['torch'], 140581174924112), type=<class 'module'>",
]


def test_the_constants_a_compiles_guards_pin():
    assert guard_constants(GUARDS) == {
        "L['clip']": True, "L['act']": "gelu", "L['dims']": (0, -1), "L['mask']": None,
        "L['kwargs']['use_cache']": False, "L['scale']": 2.5,
    }


def test_a_list_or_a_tuple_short_of_items_keeps_what_is_known():
    got = guard_constants(["___check_type_id(L['d'], 1), type=<class 'list'>", "len(L['d']) == 2",
                           "L['d'][0] == 3", "L['d'][1] == 4",
                           "___check_type_id(L['t'], 2), type=<class 'tuple'>", "len(L['t']) == 3",
                           "L['t'][0] == 1"])
    assert got == {"L['d'][0]": 3, "L['d'][1]": 4, "L['t'][0]": 1}


def test_hostile_guard_text_is_bounded_and_never_run():
    long = "L['x'] == '" + "a" * MAX_GUARD_CODE_CHARS + "'"
    assert guard_constants([long, "L['x'] == __import__('os').system('true')", "L['y'] ==", "((((",
                            "L[0] == 1", "L['a'] == 1 == 1", "L['b'] != 1", "L['c'] is True"]) == {}
    assert guard_constants(["(" * 500 + ")" * 500]) == {}


def _run(tmp_path, text: str):
    from fxcache_core.trace.run import read_run

    return read_run(st.write_trace(tmp_path / "t", text))


def test_each_key_a_compile_looked_up_gets_its_constants(tmp_path):
    text = (st.clock() + st.start() + st.tensor("L['x']", [5, 4], [4, 1])
            + st.final_guards(["L['clip'] == True", "L['mode'] == 'fast'"]) + st.fx_miss("fK1"))
    assert key_constants(_run(tmp_path, text)) == {
        "fK1": ({"L['clip']": True, "L['mode']": "fast", "#all-guards": True,
                 "#locals": ("L['clip']", "L['mode']")},)}


def test_from_trace_gives_the_calls_python_values(tmp_path):
    from fxcache_core.lookup.pyvalues import PyValue
    from fxcache_core.trace.call import call_inputs

    text = (st.clock() + st.start() + st.tensor("L['x']", [5, 4], [4, 1])
            + st.final_guards(["L['clip'] == True", "L['n'] == 3", "L['s'] == 0.5", "L['x'] is None"])
            + st.fx_miss("fK1"))
    got = call_inputs(_run(tmp_path, text), "0/0").inputs
    assert got["L['clip']"] == PyValue(True) and got["L['n']"] == 3 and got["L['s']"] == 0.5
    assert str(got["L['x']"]).startswith("[5,4]")  # the tensor it is, not a guard's None


def test_the_usage_store_keeps_them_per_key_and_reads_back_only_what_it_writes(tmp_path):
    import sqlite3

    from fxcache_core.state.usage import UsageStore, recorded_constants, usage_path

    root = tmp_path / "cache"
    root.mkdir()
    assert recorded_constants(root) == {} and not usage_path(root).exists()  # reading makes no store
    store = UsageStore(usage_path(root))
    assert store.record_constants({"aK": [{"L['clip']": True, "L['dims']": (1, (2, None))}],
                                   "aB": [{"L['x']": object()}]}) == 1
    assert store.record_constants({"aK": [{"L['clip']": True, "L['dims']": (1, (2, None))}]}) == 0
    store.close()
    db = sqlite3.connect(usage_path(root))
    db.executemany("INSERT INTO key_constants(key, constants) VALUES (?, ?)",
                   [("aH", '[["L[\'x\']", {"a": 1}]]'), ("aH", "not json"), ("aH", '{"k": 1}'),
                    (b'aK', '[["L[\'x\']", 1]]'), ("aH", '[[1, 2]]'), ("aH", "[" * 5000)])
    db.commit()
    db.close()
    assert recorded_constants(root) == {"aK": ({"L['clip']": True, "L['dims']": (1, (2, None))},)}
