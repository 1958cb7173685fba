"""Whether equal sizes share a symbol: duck sizing and the key's shared symbols.

Under ``dynamic=True`` Dynamo's ShapeEnv gives equal sizes of unmarked dims one
symbol (``DimDynamic.DUCK``, ``ShapeEnv.create_symbol`` in
torch/fx/experimental/symbolic_shapes.py, while
``torch.fx.experimental._config.use_duck_shape`` is on); a marked dim gets a symbol
of its own. :func:`duck_sizing` finds the calls that duck sizing traces into another
graph than the key's; :func:`shared_symbols` the dims the key shares one symbol
between that the call traces apart. Both add to the fit's
:class:`~fxcache_core.lookup.fit_binding.Binding`; never evaluates guards, never prints.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from fxcache_core.decode.entries import DecodedEntry
from fxcache_core.errors import GuardParseError, param
from fxcache_core.lookup.binding import InputValue, TensorArg
from fxcache_core.lookup.fit_binding import (
    SYMBOL_RE,
    Binding,
    Sibling,
    Siblings,
    Static,
    Symbolic,
    how,
    pairs,
)
from fxcache_core.lookup.inputs import entry_dims
from fxcache_core.reasons import Reason

_EQ_RE = re.compile(r"^\(?L\['(t[0-9]+)'\] == L\['(t[0-9]+)'\]\)?$")


def duck_sizing(b: Binding, symbolic: list[Symbolic], static: list[Static],
          hints: Mapping[str, int] | None = None, siblings: Siblings | None = None) -> None:
    """Duck sizing: equal sizes of duck dims get one symbol in Dynamo's ShapeEnv.

    Two such dims the key gives two symbols, or one the key has specialized to
    that size (under ``dynamic=True`` a static size of an input was a symbol
    once), mean torch traces another graph. Only ``duck`` dims take part
    (``ShapeEnv.create_symbol`` registers and reuses a value for DUCK only);
    ``unknown`` ones make a note instead of a problem. With ``hints`` or
    ``siblings`` (given when the user did not say ``use_duck_shape``), an entry of
    this key or of another key of the function compiled with equal sizes on two
    symbols is evidence that duck sizing was off: the conflict is then a note.
    """
    duckish = ("duck", "unknown")
    looked: list[str | None] = []

    def off() -> str | None:
        """The sibling evidence of duck sizing off, in words (looked up once)."""
        if not looked:
            ev = _duck_off_sibling(siblings()) if siblings is not None else None
            looked.append(None if ev is None else
                          f"key {ev[0].key[:12]}"
                          + (" of the same function" if ev[0].same_function else " (another function)")
                          + f" was compiled with {ev[1]} = {ev[2]} = {ev[3]} as two symbols")
        return looked[0]

    for (w1, s1, v1, k1), (w2, s2, v2, k2) in pairs(symbolic):
        if v1 == v2 and s1 != s2 and k1 in duckish and k2 in duckish:
            h1, h2 = (hints or {}).get(s1), (hints or {}).get(s2)
            own = h1 is not None and h1 == h2
            if k1 == k2 == "duck" and (own or off()):
                shown = (f"this key's entry was compiled with {s1} = {s2} = {h1} as two symbols"
                         if own else off())
                b.notes.append(Reason(
                    f"{w1} and {w2} are both {v1}: duck sizing would give them one symbol, but {shown}: "
                    "with duck sizing off (torch.fx.experimental._config.use_duck_shape = False) or with "
                    f"those dims marked dynamic; pass {param('no_duck_shape')} (or {param('duck_shape')}), "
                    "or mark_dynamic=[...]", "duck-sizing-off"))
            elif k1 == k2 == "duck":
                b.problems.append(Reason(
                    f"{w1} and {w2} are both {v1}: under dynamic=True duck sizing gives equal "
                    f"sizes one symbol, so this call traces another graph (this key has {s1} and {s2})",
                    "duck-sizing"))
            else:
                b.notes.append(Reason(
                    f"{w1} and {w2} are both {v1}: under dynamic=True duck sizing gives them one "
                    f"symbol and torch traces another graph; marked dynamic (mark_dynamic, automatic "
                    f"dynamic) they keep this key's {s1} and {s2} ({how()})", "duck-sizing-depends-on-mode"))
    for w1, _s1, v1, k1 in symbolic:
        for w2, v2, k2 in static:
            if v1 == v2 and k1 in duckish and k2 in duckish:
                if k1 == k2 == "duck" and off():
                    b.notes.append(Reason(
                        f"{w1} = {v1} equals {w2}, static here: with duck sizing on torch traces "
                        f"another graph, but {off()} (duck sizing off, or marked dims); pass "
                        f"{param('no_duck_shape')} (or {param('duck_shape')})", "duck-sizing-off"))
                elif k1 == k2 == "duck":
                    b.problems.append(Reason(
                        f"{w1} = {v1} equals {w2}, static here: under dynamic=True that dim was a "
                        "symbol specialized to its size, and duck sizing gives both one symbol, so "
                        f"torch traces another graph ({w1} is static too)", "duck-sizing"))
                else:
                    b.notes.append(Reason(
                        f"{w1} = {v1} equals {w2}, static here: if both are duck-sized "
                        "(dynamic=True, unmarked), torch traces another graph; if either is marked "
                        f"dynamic or static, it does not ({how()})", "duck-sizing-depends-on-mode"))
                break


def _duck_off_sibling(siblings: Sequence[Sibling]) -> tuple[Sibling, str, str, int] | None:
    """A key compiled with two separate symbols of equal hint (> 1) for tensor sizes:
    (that key, symbol, symbol, hint); evidence that the program runs with duck sizing
    off (or marks those dims). Duck sizing is a process-wide setting
    (``torch.fx.experimental._config.use_duck_shape``), so a key of another function
    counts too, after those of the same function. None when no key shows it."""
    for sib in siblings:
        by_hint: dict[int, str] = {}
        for info in sib.symbols:
            if (info.hint is None or info.hint <= 1 or not SYMBOL_RE.fullmatch(info.expr or "")
                    or ".size()[" not in (info.source or "")):
                continue  # an int argument is never duck-sized with a size: no evidence
            other = by_hint.setdefault(info.hint, info.expr or "")
            if other != info.expr:
                return sib, other, info.expr or "", info.hint
    return None


def shared_symbols(b: Binding, d: DecodedEntry, symbolic: list[Symbolic],
                    inputs: Mapping[str, InputValue], guards: str | None,
                    siblings: Siblings | None = None) -> None:
    """Dims that share one of the key's symbols where one of them is traced with a
    symbol of its own (marked dynamic, or duck sizing off).

    Such a dim (``DimDynamic.DYNAMIC``, or DUCK with ``use_duck_shape`` off) gets a
    fresh symbol in ``ShapeEnv.create_symbol`` (torch/fx/experimental/symbolic_shapes.py),
    never one reused by duck sizing. The key can still have one symbol for both: when
    the graph forces the sizes equal (the inner dims of a matmul, the batch of a loss's
    input and target, the dims a ``cat`` joins), the ShapeEnv replaces one symbol by
    the other (``_set_replacement``) and the graph keeps one input for both, exactly
    as duck sizing would have made it. So a shared symbol is a forced equality, and a
    call with equal values (one value per symbol is checked when binding) fits.

    The exception is evidence that the sharing came from duck sizing: another key of
    the same function (``siblings``) keeps those dims on separate symbols, so its graph
    does not force them equal, and a call that gives them a symbol each traces that
    graph, not this one.
    """
    placeholder = {i.source: f"t{n}" for n, i in enumerate(d.symints) if i.source}
    equal = _equated(guards)
    for sym in dict.fromkeys(s for _, s, _, _ in symbolic):
        dims = [(w, k) for w, s, _, k in symbolic if s == sym]
        if len(dims) <= 1 or not any(k == "dynamic" for _, k in dims):
            continue
        phs = [placeholder.get(w) for w, _ in dims]
        if None not in phs and all(_same(equal, phs[0], p) for p in phs[1:]):
            continue  # the guards equate them: the graph's ops made the sizes equal
        apart = _kept_apart(siblings() if siblings is not None else (), [w for w, _ in dims])
        if apart is None:
            continue  # a forced equality: any call with equal sizes traces this graph
        (w1, w2), other = apart
        marked = [w for w, _ in dims if _marked(inputs, w)]
        b.problems.append(Reason(
            f"{w1} and {w2} share {sym} here (one graph input), but key {other[:12]} of the "
            "same function keeps them on separate symbols, so the graph does not force them "
            "equal: this key's sharing comes from duck sizing, and " + (
                "marked dims get a symbol each" if len(marked) == len(dims) else
                f"{marked[0]} is marked dynamic and gets a symbol of its own" if marked else
                "with duck sizing off they get a symbol each")
            + ": torch traces another graph", "marked-dim-shared"))


def _kept_apart(siblings: Sequence[Sibling], dims: Sequence[str]
                ) -> tuple[tuple[str, str], str] | None:
    """Two of ``dims`` (``L['a'].size()[0]``) that a sibling key gives two different
    symbols, with that key's name; None when no sibling does."""
    for sib in siblings:
        if not sib.same_function:
            continue
        sizes = {f"{src}.size()[{i}]": v for (src, i), v in entry_dims(sib.entry).items()}
        for w1, w2 in pairs(list(dims)):
            a, z = sizes.get(w1), sizes.get(w2)
            if a and z and a != z and SYMBOL_RE.fullmatch(a) and SYMBOL_RE.fullmatch(z):
                return (w1, w2), sib.key
    return None


def _marked(inputs: Mapping[str, InputValue], where: str) -> bool:
    """Whether ``where`` (``L['x'].size()[1]``) is a dim the user marked dynamic."""
    m = re.fullmatch(r"(.+)\.size\(\)\[([0-9]+)\]", where)
    val = inputs.get(m.group(1)) if m else None
    return isinstance(val, TensorArg) and int(m.group(2)) in val.marked  # type: ignore[union-attr]


def _equated(guards: str | None) -> list[set[str]]:
    """Placeholders a guards expression's top-level ``L['ti'] == L['tj']`` clauses
    make equal, as classes (ShapeEnv's replacement of one symbol by another,
    ``_set_replacement`` in torch/fx/experimental/symbolic_shapes.py, leaves such
    a clause in the guards)."""
    if not guards:
        return []
    from fxcache_core.guards.expr import parse_guards

    try:
        clauses = parse_guards(guards).clauses
    except (GuardParseError, ValueError):
        return []
    classes: list[set[str]] = []
    for c in clauses:
        m = _EQ_RE.match(c.text.strip())
        if m is None:
            continue
        a, z = m.group(1), m.group(2)
        hit = [cl for cl in classes if a in cl or z in cl]
        merged = {a, z}.union(*hit) if hit else {a, z}
        classes = [cl for cl in classes if cl not in hit] + [merged]
    return classes


def _same(classes: list[set[str]], a: str | None, z: str | None) -> bool:
    return a is not None and z is not None and any(a in cl and z in cl for cl in classes)
