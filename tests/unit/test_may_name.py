"""``may_name``: a byte test that proves an entry cannot name a cache key without
decoding it (gc and rm skip decoding the AOTAutograd entries it clears)."""

from __future__ import annotations

import pickle
import random
import time

import pytest

from fxcache_core.decode.unpickler import Stub, load_stubs, may_name

KEY = "f" + "k2m" * 17  # 52 characters, as a cache key's alphabet spells them


def _strs(o, seen=None) -> set[str]:
    """Every str reachable from what load_stubs gave."""
    seen = set() if seen is None else seen
    if id(o) in seen:
        return set()
    seen.add(id(o))
    if isinstance(o, str):
        return {o}
    out: set[str] = set()
    if isinstance(o, Stub):
        for part in (o._args, o._kwargs, o._state, o._items, o._dict):
            out |= _strs(part, seen)
    elif isinstance(o, dict):
        for k, v in o.items():
            out |= _strs(k, seen) | _strs(v, seen)
    elif isinstance(o, (list, tuple, set, frozenset)):
        for v in o:
            out |= _strs(v, seen)
    return out


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_a_key_in_a_pickle_of_any_protocol_is_seen(protocol):
    data = pickle.dumps({"compiled_fw": [KEY, ["debug"]], "other": "x"}, protocol=protocol)
    assert KEY in _strs(load_stubs(data)[0])
    assert may_name(data, {KEY.encode()})
    assert not may_name(data, {("f" + "a" * 51).encode()})


ESCAPED = [
    # STRING (protocol 0, escape_decode): hex and octal escapes spell letters.
    b"S'\\x" + KEY[:1].encode().hex().encode() + KEY[1:].encode() + b"'\n.",
    b"S'\\146" + KEY[1:].encode() + b"'\n.",
    # UNICODE (protocol 0, raw-unicode-escape).
    b"V\\u0066" + KEY[1:].encode() + b"\n.",
    b"V\\U00000066" + KEY[1:].encode() + b"\n.",
]


@pytest.mark.parametrize("data", ESCAPED)
def test_a_key_spelled_with_escapes_is_not_cleared(data):
    """A hostile entry may spell the key so that its bytes do not hold it: the test
    must then say "maybe", never "cannot"."""
    assert load_stubs(data)[0] == KEY
    assert KEY.encode() not in data
    assert may_name(data, {KEY.encode()})


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # invalid escapes in damaged STRINGs
def test_never_says_cannot_when_the_pickle_holds_the_key():
    """Random damage to pickles holding the key (escapes, split strings, memo
    references): whenever what loads holds the key, may_name says so."""
    rng = random.Random(7)
    bases = [pickle.dumps([KEY, {"a": KEY}], protocol=p) for p in range(pickle.HIGHEST_PROTOCOL + 1)]
    bases += ESCAPED
    checked = 0
    for _ in range(3000):
        data = bytearray(rng.choice(bases))
        for _ in range(rng.randint(1, 2)):
            i = rng.randrange(len(data))
            data[i] = rng.choice([rng.randrange(256), ord("\\"), ord("x"), ord("u")])
        try:
            root = load_stubs(bytes(data))[0]
        except Exception:  # noqa: BLE001 - damaged beyond reading: nothing to check
            continue
        if KEY in _strs(root):
            checked += 1
            assert may_name(bytes(data), {KEY.encode()}), bytes(data)
    assert checked > 30


def test_rm_of_an_fx_key_decodes_again_only_the_aot_entries_that_may_load_it(tmp_path, monkeypatch):
    """Planned from a warm index whose rows prove nothing (a network file system), `rm
    FXKEY` reads which AOTAutograd entries load it from their files: the one that names it is decoded again (and removed with it), the
    others, whose bytes cannot spell the key, are not decoded."""
    from fxcache_core.cache.keys import KeyKind
    from fxcache_core.cache.scan import scan_cache
    from fxcache_core.catalog import reader as catalog_mod
    from fxcache_core.catalog.reader import Catalog
    from fxcache_core.prune.plan import plan_rm
    from fxcache_core.state.index import Index
    from tests.synth import aot_entry_bytes, fake_key, fx_entry_bytes, write_entry

    fx = [fake_key(KeyKind.FX_GRAPH, f"f{i}") for i in range(5)]
    for i, k in enumerate(fx):
        write_entry(tmp_path, KeyKind.FX_GRAPH, k, fx_entry_bytes(f"L['t0'] == {i + 2}", k))
    loaders = [write_entry(tmp_path, KeyKind.AOT_AUTOGRAD, fake_key(KeyKind.AOT_AUTOGRAD, f"a{i}"),
                           aot_entry_bytes(None, (k, f"L['t0'] == {i + 2}"))) for i, k in enumerate(fx)]
    idx = tmp_path / "index.sqlite"
    time.sleep(0.05)  # past the racily clean window (RACY_FINE_NS): files read at once are never indexed
    warm = Catalog(scan_cache(tmp_path), Index(idx))
    warm.read_ahead(warm.scan.entries())
    warm.index.close()

    # As on a network file system, where no index row proves a file's bytes and gc reads
    # again what a removal rests on (on a local one the proven rows are not read again).
    monkeypatch.setattr("fxcache_core.prune.plan.identity_is_proof", lambda devs: dict.fromkeys(devs, False))
    decoded = []  # the kinds of the entries sent to a decode worker
    one, many = catalog_mod.decode_one, catalog_mod.decode_entries
    monkeypatch.setattr(catalog_mod, "decode_one",
                        lambda e, *a: decoded.append(e.kind) or one(e, *a))
    monkeypatch.setattr(catalog_mod, "decode_entries",
                        lambda es, *a: decoded.extend(e.kind for e in es) or many(es, *a))
    cat = Catalog(scan_cache(tmp_path), Index(idx))
    plan = plan_rm(cat, cat.scan.find(fx[0]))
    assert {r.file.path for r in plan.removals if r.entry} == {loaders[0], cat.scan.find(fx[0]).entries[0].path}
    assert decoded.count(KeyKind.AOT_AUTOGRAD) == 1
