"""An entry's input sources are named once per source object, exactly as one by one.

The sources of a module's parameters share their bases as one unpickled object;
:func:`~fxcache_core.decode.sources.source_names` names each object once. Its names must
be those of naming every input's chain whole, the depth limit included: a shared base
met deeper than where it was first named can pass :data:`MAX_SOURCE_DEPTH`.
"""

from __future__ import annotations

import random

from fxcache_core.decode import sources
from fxcache_core.decode.sources import MAX_SOURCE_DEPTH, source_name, source_names
from fxcache_core.decode.unpickler import Stub

_CLASSES: dict[str, type] = {}


def _src(name, *args):
    """A stubbed Dynamo source, as the unpickler builds it (REDUCE with positional fields)."""
    cls = _CLASSES.setdefault(
        name, type(name, (Stub,), {"stub_module": "torch._dynamo.source", "stub_name": name})
    )
    return cls(*args)


def _whole(src, depth=0):
    """Every chain named whole, no memo: how an entry's sources were named one by one."""
    if depth > MAX_SOURCE_DEPTH or not isinstance(src, Stub):
        return None
    root = sources.ROOT_SOURCES.get(src.stub_name)
    if root is not None:
        return root(src)
    chained = sources.CHAINED_SOURCES.get(src.stub_name)
    if chained is None:
        return None
    base = _whole(sources._sfield(src, "base"), depth + 1)
    return None if base is None else chained(src, base, depth, _whole)


def _chain(base, n, member="m"):
    for i in range(n):
        base = _src("AttrSource", base, f"{member}{i}")
    return base


def test_a_models_parameters_share_their_bases_and_keep_their_names():
    layer = _src(
        "GetItemSource", _src("AttrSource", _src("LocalSource", "self", True), "layers"), 3
    )
    srcs = [
        _src("AttrSource", _src("AttrSource", layer, "attn"), "weight"),
        _src("AttrSource", _src("AttrSource", layer, "attn"), "bias"),
        _src("AttrSource", layer, "norm"),
        layer,
    ]
    assert source_names(srcs) == (
        "L['self'].layers[3].attn.weight",
        "L['self'].layers[3].attn.bias",
        "L['self'].layers[3].norm",
        "L['self'].layers[3]",
    )


def test_a_shared_base_met_deeper_passes_the_depth_limit_as_named_whole():
    shared = _chain(_src("LocalSource", "x"), MAX_SOURCE_DEPTH - 2)
    deep = _chain(shared, 3, "d")  # past the limit: None, though its base was named
    shallow = _chain(shared, 1, "s")
    for order in ([shared, deep, shallow], [deep, shallow, shared], [shallow, deep, shared]):
        got = source_names(order)
        assert got == tuple(_whole(s) for s in order) == tuple(source_name(s) for s in order)
    assert (
        source_names([shared, deep])[1] is None and source_names([shared, shallow])[1] is not None
    )


def test_a_dict_key_source_inside_an_index_counts_its_own_depth():
    d = _chain(_src("LocalSource", "d"), MAX_SOURCE_DEPTH - 3)
    key = _src("ConstDictKeySource", _chain(d, 2, "k"), 0)
    item = _src("DictGetItemSource", d, key)
    srcs = [item, _chain(d, 2, "k"), _src("AttrSource", item, "a")]
    assert source_names(srcs) == tuple(_whole(s) for s in srcs)


def test_random_shared_sources_name_as_whole_chains():
    rng = random.Random(7)
    for _ in range(300):
        pool = [
            _src("LocalSource", "x"),
            _src("GlobalSource", "g"),
            _src("LocalSource", 3),
            _src("Unknown"),
        ]
        for _ in range(rng.randrange(1, 60)):
            base = rng.choice(pool)
            kind = rng.random()
            if kind < 0.5:
                made = _src("AttrSource", base, rng.choice(["a", "b", "not an id", 5]))
            elif kind < 0.7:
                made = _chain(base, rng.randrange(1, 60))
            elif kind < 0.8:
                made = _src(
                    "DictGetItemSource", base, _src("ConstDictKeySource", rng.choice(pool), 1)
                )
            elif kind < 0.9:
                made = _src("NegateSource", base)
            else:
                made = _src("GetItemSource", base, rng.choice([0, "k", (1, 2), [1]]), False)
            pool.append(made)
        srcs = [rng.choice(pool) for _ in range(rng.randrange(1, 40))]
        assert source_names(srcs) == tuple(_whole(s) for s in srcs)


def test_a_source_whose_base_is_itself_is_unnamed():
    s = _src("AttrSource", None, "a")
    s._args = (s, "a")
    assert source_names([s, s]) == (None, None)


def test_long_names_are_not_kept_and_still_name_alike():
    member = "m" * 400
    long = _chain(_src("LocalSource", "x"), 3, member)
    srcs = [_src("AttrSource", long, "a"), _src("AttrSource", long, "b"), long]
    assert source_names(srcs) == tuple(_whole(s) for s in srcs)
