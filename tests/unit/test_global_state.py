"""Global state and settings given with a call (fxcache_core/lookup/global_state.py): how
they are written and parsed, and the account each gets on a key that otherwise fits. The
rules read nothing of the key but its name (the cache records none of these states);
tests/torch/test_state_arguments.py checks them against torch's lookups on a real cache, and the
evaluation's state families (tests/harness/evaluation/families_state.py) on more calls."""

from __future__ import annotations

import pytest

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey
from fxcache_core.errors import ShapeSpecError
from fxcache_core.lookup.binding import GRAD_MODE, INFERENCE_MODE, parse_shapes
from fxcache_core.lookup.global_state import state_accounts
from fxcache_core.lookup.pyvalues import PyValue, TorchDtype
from fxcache_core.lookup.query import CallQuery

_KEY = CacheKey(KeyKind.AOT_AUTOGRAD, "a" * 52, "/nowhere", ())


def _query(*items: str) -> CallQuery:
    return CallQuery(parse_shapes(["x=[4,8]", *items])).with_grad_mode()


def test_state_items_are_no_inputs_and_keep_their_values():
    q = _query("torch.is_autocast_enabled()=True", "torch.get_default_dtype()=torch.double",
               "torch._dynamo.config.cache_size_limit=16", "torch._inductor.config.freezing=True",
               "torch.compile.mode='max-autotune'")
    assert set(q.inputs) == {"L['x']"}
    assert q.state == {"torch.is_autocast_enabled()": PyValue(True),
                       "torch.get_default_dtype()": PyValue(TorchDtype("float64")),
                       "torch._dynamo.config.cache_size_limit": PyValue(16),
                       "torch._inductor.config.freezing": PyValue(True),
                       "torch.compile.mode": PyValue("max-autotune")}


def test_inference_mode_turns_the_grad_mode_off():
    q = _query(f"{INFERENCE_MODE}=True")
    assert q.grad_enabled is False and INFERENCE_MODE in q.state
    assert _query(f"{INFERENCE_MODE}=False").grad_enabled is None  # not said: as when compiled
    with pytest.raises(ShapeSpecError, match="turns grad off"):
        _query(f"{INFERENCE_MODE}=True", f"{GRAD_MODE}=True")


@pytest.mark.parametrize("bad,says", [
    ("torch.is_autocast_enabled()=bf16", "is not True or False"),
    ("torch.get_default_dtype()=float65", "is not a torch dtype"),
    ("torch.compile.dynamic=True", "not a torch.compile keyword"),
    ("torch._dynamo.config.=1", "not a config name"),
    ("torch._inductor.config.freezing=[1", "is not a Python value"),
    ("torch.get_num_threads()=two", "torch.get_num_threads()"),
    ("torch.get_num_threads()=0", "a thread count is at least 1"),
    ("torch.compile.mode=3", "is not a str"),
    ("torch.use_deterministic_algorithms=True", "not global state match knows"),
])
def test_a_bad_state_item_is_one_line(bad, says):
    with pytest.raises(ShapeSpecError, match=says):
        parse_shapes([bad])


def test_each_state_the_cache_does_not_record_is_undecided_naming_it():
    q = _query("torch.is_autocast_enabled()=False", "torch.are_deterministic_algorithms_enabled()=True",
               "torch.get_default_dtype()=torch.float32", "torch.compile.mode='default'",
               "torch.compile.fullgraph=True", "torch._dynamo.config.specialize_float=True",
               "torch._inductor.config.freezing=False", "torch._functorch.config.donated_buffer=False",
               "torch.get_num_threads()=4")
    got = {a.name: (a.status, a.how.code) for a in state_accounts(_KEY, q.state)}
    assert got == {
        "torch.is_autocast_enabled()": ("undecided", "autocast-unrecorded"),
        "torch.are_deterministic_algorithms_enabled()": ("undecided", "deterministic-unrecorded"),
        "torch.get_default_dtype()": ("undecided", "default-dtype-unrecorded"),
        "torch.compile.mode": ("undecided", "compile-mode-unrecorded"),
        "torch.compile.fullgraph": ("undecided", "fullgraph-unrecorded"),
        "torch._dynamo.config.specialize_float": ("undecided", "dynamo-config-unrecorded"),
        "torch._inductor.config.freezing": ("undecided", "inductor-config-unrecorded"),
        "torch._functorch.config.donated_buffer": ("undecided", "functorch-config-unrecorded"),
        "torch.get_num_threads()": ("undecided", "num-threads-unrecorded"),
    }
    assert all("leave it out" in str(a.how) for a in state_accounts(_KEY, q.state))


def test_what_no_key_depends_on_is_accounted():
    q = _query(f"{INFERENCE_MODE}=True", "torch.compile.fullgraph=False", "torch.compile.backend='inductor'")
    got = {a.name: (a.status, a.how.code) for a in state_accounts(_KEY, q.state)}
    assert got == {INFERENCE_MODE: ("accounted", "inference-mode"),
                   "torch.compile.fullgraph": ("accounted", "compile-keyword"),
                   "torch.compile.backend": ("accounted", "compile-keyword")}
    assert state_accounts(_KEY, {}) == []
