"""A module's forward whose source files register forward hooks has no decided verdict.

torch.compile of a module runs each forward (pre-)hook as a Dynamo frame of its own; a
hook's test of the call is that frame's guard, in no key where the hook made no graph
(fxcache_core/lookup/module_hooks.py). Keys and frames built by hand over source files
written here; no torch. The recorded torch cases are in tests/torch/test_scalar_arguments.py.
"""

from __future__ import annotations

import pytest

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey, Entry, FileInfo
from fxcache_core.decode.entries import Origin
from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.functions.hook_sites import hook_sites
from fxcache_core.lookup.match_report import KeyMatch, MatchReport
from fxcache_core.lookup.module_hooks import hooked_frame, hooks_registered
from fxcache_core.lookup.prediction import verdicts
from fxcache_core.reasons import Reason

MODEL = """\
import torch


class Net(torch.nn.Module):
    def forward(self, x):
        return x.sin() + 1


def flip(mod, args):
    if args[0].shape[0] > 5:
        return (-args[0],)


NET = Net()
"""

REGISTRATIONS = {
    "method": "NET.register_forward_pre_hook(flip)\n",
    "global": "torch.nn.modules.module.register_module_forward_hook(lambda m, a, o: o)\n",
    "imported": "from torch.nn.modules.module import register_module_forward_pre_hook as r\n"
    "register_module_forward_pre_hook(flip)\n",
    "dict-store": "NET._forward_pre_hooks[0] = flip\n",
    "dict-call": "NET._forward_hooks.update({0: flip})\n",
}


def _key(name: str, path: str, compiled: CompiledFrom | None, hit: bool = True) -> KeyMatch:
    k = CacheKey(KeyKind.AOT_AUTOGRAD, name, f"/nowhere/{name}", ())
    e = Entry(KeyKind.AOT_AUTOGRAD, name, FileInfo(f"/nowhere/{name}/e0", 10, 0.0, 0.0), 0)
    o = Origin("forward", path, 6, ("forward",), (("forward", path, 6),))
    if hit:
        return KeyMatch(k, True, hit=e, origin=o, compiled=compiled)
    return KeyMatch(
        k,
        False,
        reasons=(Reason("x is float64, the key takes float32", "dtype-differs"),),
        origin=o,
        compiled=compiled,
    )


def _forward(path: str) -> CompiledFrom:
    return CompiledFrom("forward", path, 5, module_class="Net")


@pytest.mark.parametrize("how", list(REGISTRATIONS))
def test_a_registration_in_a_file_of_the_keys_frames_makes_the_hit_undecided(tmp_path, how):
    path = tmp_path / "model.py"
    path.write_text(MODEL + REGISTRATIONS[how])
    line = MODEL.count("\n") + REGISTRATIONS[how].count("\n")
    (site,) = hook_sites([str(path)])
    assert site.line == line
    report = MatchReport(
        inputs=(("L['x']", "[8,9]"),),
        results=(_key("a0", str(path), _forward(str(path))),),
        keys_considered=1,
    )
    (v,) = verdicts(report, count_all=True).functions
    assert v.status == "undecided" and v.why.code == "module-hooks-registered", v
    assert f"{path}:{line}" in v.why and "TORCH_TRACE" in v.why and v.entry is None, v.why


def test_a_new_graph_of_a_hooked_forward_is_undecided_too(tmp_path):
    # a pre-hook may change what forward is called with (a cast, a reshape)
    path = tmp_path / "model.py"
    path.write_text(MODEL + REGISTRATIONS["method"])
    report = MatchReport(
        inputs=(("L['x']", "[8,9]"),),
        results=(_key("a0", str(path), _forward(str(path)), hit=False),),
        keys_considered=1,
    )
    (v,) = verdicts(report, count_all=True).functions
    assert v.status == "undecided" and v.why.code == "module-hooks-registered", v


def test_without_a_registration_or_a_modules_forward_the_verdict_stands(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(MODEL + "def register(m):\n    return m  # names no hook\n")
    plain = MatchReport(
        inputs=(("L['x']", "[8,9]"),),
        results=(_key("a0", str(path), _forward(str(path))),),
        keys_considered=1,
    )
    assert verdicts(plain, count_all=True).functions[0].status == "hit"
    hooked = tmp_path / "hooked.py"
    hooked.write_text(MODEL + REGISTRATIONS["method"])
    for frame in (
        CompiledFrom("forward", str(hooked), 5),  # a function called forward, no class
        CompiledFrom("step", str(hooked), 5, module_class="Net"),
        None,
    ):
        report = MatchReport(
            inputs=(("L['x']", "[8,9]"),),
            results=(_key("a0", str(hooked), frame),),
            keys_considered=1,
        )
        assert verdicts(report, count_all=True).functions[0].status == "hit", frame


def test_sources_not_at_hand_say_nothing(tmp_path):
    gone = str(tmp_path / "gone.py")
    assert hook_sites([gone]) == ()
    assert hooks_registered([_key("a0", gone, _forward(gone))]) is None


def test_a_whole_modules_call_and_a_resume_of_forward_run_hooks():
    assert hooked_frame(CompiledFrom("forward", "/m.py", 3, module_class="Net", whole_module=True))
    assert hooked_frame(
        CompiledFrom("torch_dynamo_resume_in_forward_at_7", "/m.py", 3, module_class="Net")
    )
    assert not hooked_frame(CompiledFrom("forward", "/m.py", 3))


def test_a_registration_in_a_decorator_wrappers_file_alone_is_not_read(tmp_path):
    # transformers' capture_outputs wraps forward from a file that hooks a model's layers
    # inside the compiled call, when outputs are asked for: traced with the call
    model, wrapper = tmp_path / "model.py", tmp_path / "capture.py"
    model.write_text(MODEL)
    wrapper.write_text("def install(m, hook):\n    m.register_forward_hook(hook)\n")
    frame = CompiledFrom(
        "forward", str(model), 5, module_class="Net", wrappers=(("wrapper", str(wrapper), 9),)
    )
    report = MatchReport(
        inputs=(("L['x']", "[8,9]"),), results=(_key("a0", str(model), frame),), keys_considered=1
    )
    assert verdicts(report, count_all=True).functions[0].status == "hit"


def test_a_registration_in_the_file_of_a_helper_the_first_op_sits_in_is_not_read(tmp_path):
    # transformers' modeling_utils.py hooks an embedding (enable_input_require_grads), and a
    # model's first op may sit in a helper of it (get_extended_attention_mask): not a frame
    model, helper = tmp_path / "model.py", tmp_path / "modeling_utils.py"
    model.write_text(MODEL)
    helper.write_text("def enable(m, hook):\n    m.register_forward_hook(hook)\n")
    k = CacheKey(KeyKind.AOT_AUTOGRAD, "a0", "/nowhere/a0", ())
    e = Entry(KeyKind.AOT_AUTOGRAD, "a0", FileInfo("/nowhere/a0/e0", 10, 0.0, 0.0), 0)
    o = Origin("mask", str(helper), 2, ("forward", "mask"), (("forward", str(model), 6),))
    m = KeyMatch(k, True, hit=e, origin=o, compiled=_forward(str(model)))
    assert (
        verdicts(
            MatchReport(inputs=(("L['x']", "[8,9]"),), results=(m,), keys_considered=1),
            count_all=True,
        )
        .functions[0]
        .status
        == "hit"
    )


def test_a_hooked_forwards_new_graph_is_undecided_without_count_all(tmp_path):
    """Plain `match` (not --all) sets a NEW GRAPH apart from the counted verdicts; a hooked
    forward's NEW GRAPH is undecided there too, and counted, beside another function's HIT."""
    import dataclasses

    p = tmp_path / "model.py"
    p.write_text(MODEL + REGISTRATIONS["method"])
    q = tmp_path / "other.py"
    q.write_text("def helper(x):\n    return x\n")
    hooked = _key("a0", str(p), _forward(str(p)), hit=False)
    other = _key("b0", str(q), CompiledFrom("helper", str(q), 1), hit=True)
    other = dataclasses.replace(other, origin=dataclasses.replace(
        other.origin, function="helper", file=str(q), functions=("helper",), outer=(("helper", str(q), 1),)))
    report = MatchReport(inputs=(("L['x']", "[8,9]"),), results=(hooked, other), keys_considered=2)
    cv = verdicts(report, count_all=False)
    assert {v.function: v.status for v in cv.functions} == {"Net.forward": "undecided", "helper": "hit"}, cv
    assert [v.why.code for v in cv.functions if v.status == "undecided"] == ["module-hooks-registered"]
    assert cv.others == ()
