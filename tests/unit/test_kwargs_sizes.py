"""A recorded guard on ``**kwargs`` that is arithmetic of the sizes and ints the call gives,
evaluated with the call's values (fxcache_core/lookup/kwargs_sizes.py, through
fxcache_core/lookup/kwargs_evidence.py's ``judge_record``).

The guard lines are torch 2.13's own text, from the TORCH_TRACE of a causal LM compiled
whole under dynamic=True with ``logits_to_keep=2`` and of a ConvNeXt V2 over 32x32 images;
the record around them is synthetic (as tests/unit/test_kwargs_evidence.py's).
tests/torch/test_kwargs_sizes.py judges a real run against torch."""

from __future__ import annotations

import ast

import pytest

from fxcache_core.lookup.binding import TensorArg
from fxcache_core.lookup.kwargs_evidence import judge_record
from fxcache_core.lookup.kwargs_sizes import size_guard
from fxcache_core.lookup.pyvalues import PyValue
from tests.unit.test_kwargs_evidence import TYPE, _record

K = "L['kwargs']"
KEEP = "((-32)*L['kwargs']['logits_to_keep']) + 32*L['kwargs']['input_ids'].size()[1] >= 0"
POOL = ("(128*max(1, ((L['kwargs']['pixel_values'].size()[2] // 8)*(L['kwargs']['pixel_values'].size()[2] // 8)) "
        "// (L['kwargs']['pixel_values'].size()[2] // 8))) == (128*(((L['kwargs']['pixel_values'].size()[2] // 8)"
        "*(L['kwargs']['pixel_values'].size()[2] // 8)) // (L['kwargs']['pixel_values'].size()[2] // 8)))")


def _judge(code: str, given: dict) -> str:
    from fxcache_core.lookup.kwargs_evidence import _resolve

    return size_guard(ast.parse(code, mode="eval").body, lambda n: _resolve(n, K, given))


@pytest.mark.parametrize("keep,length,want", [(3, 8, "pass"), (8, 8, "pass"), (9, 8, "fail"), (5, 12, "pass")])
def test_an_int_and_a_size_are_put_in_and_the_guard_evaluated_as_torch_does(keep, length, want):
    given = {"input_ids": TensorArg((2, length), dtype="int64"), "logits_to_keep": keep}
    assert _judge(KEEP, given) == want
    assert _judge(KEEP, {**given, "logits_to_keep": PyValue(keep)}) == want  # an int as the call parser gives it


def test_a_size_by_call_and_a_negative_dim_read_the_same_size():
    given = {"x": TensorArg((2, 8)), "n": 3}
    assert _judge("L['kwargs']['x'].size(1) - L['kwargs']['n'] >= 0", given) == "pass"
    assert _judge("L['kwargs']['x'].size()[-1] - L['kwargs']['n'] >= 6", given) == "fail"


@pytest.mark.parametrize("side", [32, 64, 96])
def test_max_and_floor_division_of_an_image_size(side):
    assert _judge(POOL, {"pixel_values": TensorArg((2, 3, side, side))}) == "pass"


@pytest.mark.parametrize("code,given", [
    (KEEP, {"input_ids": TensorArg((2, 8)), "logits_to_keep": True}),  # a bool is no int here
    (KEEP, {"input_ids": TensorArg((2, 8)), "logits_to_keep": 2.0}),  # a float
    (KEEP, {"input_ids": TensorArg((2, 8))}),  # not given: the dict's own guards decide that
    (KEEP, {"input_ids": TensorArg((2, 8)), "logits_to_keep": TensorArg(())}),
    ("L['kwargs']['x'].size()[2] >= 2", {"x": TensorArg((2, 8))}),  # a dim the tensor lacks
    ("L['kwargs']['x'].stride()[0] == 8", {"x": TensorArg((2, 8))}),  # a stride: not read
    ("L['kwargs']['x'].size()[0] == L['y'].size()[0]", {"x": TensorArg((2, 8))}),  # another source
    ("L['kwargs']['x'].size()[0] // 0 == 1", {"x": TensorArg((2, 8))}),  # raises: not a truth value
    ("__import__('os').system('true') or L['kwargs']['n'] == 1", {"n": 1}),  # never run
    ("2 <= 3", {}),  # nothing of the call
])
def test_anything_else_is_unknown(code, given):
    assert _judge(code, given) == "unknown"


def test_a_record_whose_size_guards_hold_is_passed_and_one_that_fails_is_failed():
    rec = _record([TYPE, "len(L['kwargs']) == 3", "L['kwargs']['use_cache'] == False", KEEP])
    call = {"input_ids": TensorArg((2, 8), dtype="int64"), "logits_to_keep": 3, "use_cache": PyValue(False)}
    assert judge_record(rec, K, call) == ("pass", "")
    assert judge_record(rec, K, {**call, "logits_to_keep": 9}) == ("fail", KEEP)
    assert judge_record(_record([TYPE, POOL]), K, {"pixel_values": TensorArg((1, 3, 64, 64))}) == ("pass", "")
