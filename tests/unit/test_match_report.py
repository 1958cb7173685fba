"""What a key's lookup says, independent of how it was judged."""

from __future__ import annotations

from dataclasses import replace

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey
from fxcache_core.lookup.match_report import KeyMatch
from fxcache_core.reasons import Reason


def test_a_key_says_each_thing_it_cannot_tell_once():
    """Two rules that find the same argument unknown (a float read twice, a reason the
    keys beside it share) give one line, in the order first found."""
    k = CacheKey(KeyKind.AOT_AUTOGRAD, "a0", "/nowhere/a0", ())
    a = Reason("lr is not readable", "float-provenance-unknown")
    b = Reason("act is not recorded", "constant-unrecorded")
    m = replace(KeyMatch(k, True, uncertain=(a, b)), uncertain=(a, b, a))
    assert m.uncertain == (a, b) and [r.code for r in m.uncertain] == [a.code, b.code]


def test_a_key_whose_inputs_nothing_names_leaves_the_functions_new_graph_undecided_on_one_line():
    """The function's named AOTAutograd key cannot take the call (NEW GRAPH by itself), and
    an FX key of the same function stands alone with inputs nothing names (a training graph
    whose backward never compiled): Inductor may find that key after AOTAutograd traces
    again, so the function's verdict is UNDECIDED, one line however many such keys."""
    from fxcache_core.decode.entries import Origin
    from fxcache_core.lookup.match_report import MatchReport, UnboundKey
    from fxcache_core.lookup.prediction import verdicts

    o = Origin("forward", "/m.py", 7, ("forward",))
    aot = CacheKey(KeyKind.AOT_AUTOGRAD, "a0", "/nowhere/a0", ())
    no_fit = KeyMatch(aot, False, reasons=(Reason("x is float64, the key takes float32", "dtype-differs"),), origin=o)
    alone = [UnboundKey(CacheKey(KeyKind.FX_GRAPH, f"f{i}", f"/nowhere/f{i}", ()), o, (),
                        ("f32[8, 8][8, 1]cpu", "f32[4, 8][8, 1]cpu")) for i in range(2)]
    report = MatchReport(inputs=(("L['x']", "[4,8]"),), results=(no_fit,), keys_considered=3)
    (only,) = verdicts(report, count_all=True).functions
    assert only.status == "new-graph", only
    (v,) = verdicts(replace(report, unbound=tuple(alone)), count_all=True).functions
    assert v.status == "undecided" and v.why.code == "inputs-unnamed" and "--arg" not in v.why, v
    assert "by position with positional" in v.why and "f32[8, 8]" in v.why, v.why


def test_keys_that_each_take_the_call_with_parameters_unchecked_are_each_undecided():
    """Two keys of one function whose guards both take the call, where the function's
    source cannot be read (a cache from another machine, a file since moved): their graphs
    differ in a Python value nothing read (seen in the evaluation: ``std(dim=None)`` and
    ``std(dim=1)`` compiled for the same x), and torch looks up one of them, which the cache
    cannot tell. Read parameters would tell them apart: then both stay as judged."""
    from fxcache_core.cache.scan import Entry, FileInfo
    from fxcache_core.decode.entries import Origin
    from fxcache_core.lookup.across_keys import unchecked_rivals
    from fxcache_core.lookup.match_report import MatchReport
    from fxcache_core.lookup.prediction import verdicts

    o = Origin("spread", "/gone/fns.py", 37, ("spread",))
    unread = Reason("parameters not checked: the source of spread (fns.py) cannot be read here", "params-unchecked")

    def hit(name: str, unchecked: Reason | None) -> KeyMatch:
        k = CacheKey(KeyKind.AOT_AUTOGRAD, name, f"/nowhere/{name}", ())
        e = Entry(KeyKind.AOT_AUTOGRAD, name, FileInfo(f"/nowhere/{name}/e0", 10, 0.0, 0.0), 0)
        return KeyMatch(k, True, hit=e, origin=o, params_unchecked=unchecked)

    pair = unchecked_rivals([hit("a0", unread), hit("a1", unread)])
    assert [m.status for m in pair] == ["undecided", "undecided"]
    assert all(m.uncertain[0].code == "several-keys-fit" and "cannot be read here" in m.uncertain[0]
               and "a0, a1" in m.uncertain[0] for m in pair), pair
    (v,) = verdicts(MatchReport(inputs=(("L['x']", "[4,6]"),), results=tuple(pair), keys_considered=2)).functions
    assert v.status == "undecided" and v.why.code == "several-keys-fit", v
    assert [m.status for m in unchecked_rivals([hit("a0", None), hit("a1", None)])] == ["hit", "hit"]
    assert [m.status for m in unchecked_rivals([hit("a0", unread)])] == ["hit"]
    # Read parameters that leave two keys taking the call still do not pick the first one.
    (both,) = verdicts(MatchReport(inputs=(("L['x']", "[4,6]"),), results=(hit("a0", None), hit("a1", None)),
                                   keys_considered=2)).functions
    assert both.status == "undecided" and both.why.code == "several-keys-fit", both


def test_an_fx_forward_whose_loader_misses_on_requires_grad_is_undecided_and_the_verdict_new_graph():
    """The AOTAutograd key misses because another input requires grad: torch compiles the
    graph again, and its forward graph, looked up in the FX cache by its own key, may be the
    cached one (torch hit it where only b's requires_grad changed). The FX key is undecided
    (forward-may-hit), not ruled out; the function's verdict stays NEW GRAPH. Another reason
    (a dtype) still rules the FX key out through its loader."""
    from fxcache_core.decode.entries import Origin
    from fxcache_core.lookup.across_keys import fit_through_loaders
    from fxcache_core.lookup.match_report import MatchReport
    from fxcache_core.lookup.prediction import verdicts

    o = Origin("forward", "/m.py", 7, ("forward",))
    aot = CacheKey(KeyKind.AOT_AUTOGRAD, "a0", "/nowhere/a0", ())
    fx = KeyMatch(CacheKey(KeyKind.FX_GRAPH, "f0", "/nowhere/f0", ()), True, origin=o, loaded_by=("a0",))
    grad = KeyMatch(aot, False, origin=o, reasons=(Reason(
        "b.requires_grad=True: key a0 was compiled with it not requiring grad", "requires-grad-differs"),))
    m = fit_through_loaders(fx, {"a0": grad})
    assert m.fits and [r.code for r in m.uncertain] == ["forward-may-hit"], m
    report = MatchReport(inputs=(("L['x']", "[4,8]"),), results=(grad, m), keys_considered=2)
    (v,) = verdicts(report, count_all=True).functions
    assert v.status == "new-graph" and v.why.code == "requires-grad-differs", v
    dtype = replace(grad, reasons=(Reason("x is float64, the key takes float32", "dtype-differs"),))
    assert not fit_through_loaders(fx, {"a0": dtype}).fits
