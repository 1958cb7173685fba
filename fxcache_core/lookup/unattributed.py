"""A function asked for (``--fn NAME``) that no key records, where some keys record no
function at all.

Inductor keeps a key's function in its entries' stack traces (``cache_linemap`` and the
graph's ``stack_trace`` meta); some graphs lose them (``torch.cat(list).relu()``
under ``dynamic=True`` keeps none). Such a key may be the function's or another's: the
cache cannot tell. :func:`unattributed_keys` names them, ``match`` judges the
call against them as it would against the function's own keys (:func:`~fxcache_core.lookup.match.match`), and
:func:`attribute_verdicts` decides only what holds whichever function they came from:

* every one of them takes the call's inputs and none can take the call (each fit fails:
  a size that 0/1 specialization or duck sizing traces into another graph, a static size,
  a rank): whichever is the function's, Dynamo traces another graph, so ``new-graph``;
* anything else (a key that would hit or take a new entry, one the inputs do not bind,
  one whose fit is undecided) is ``undecided``, naming those keys: torch loads or
  extends one of them only if it is the function's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey
from fxcache_core.catalog.reader import Catalog
from fxcache_core.functions.origin import key_origin
from fxcache_core.lookup.match_report import KeyMatch, MatchReport
from fxcache_core.reasons import Reason, code_of

__all__ = ["attribute_verdicts", "marked", "unattributed_keys"]

_CODE = "function-unattributed"


def unattributed_keys(catalog: Catalog, keys: Iterable[CacheKey]) -> tuple[set[str], tuple[str, ...]]:
    """The keys of ``keys`` whose entries record no function, and of them, sorted, those
    torch looks up by their own guards (AOTAutograd keys, FX keys no AOTAutograd entry loads)."""
    none = [k for k in keys if key_origin(catalog, k) is None]
    return {k.key for k in none}, tuple(sorted(
        k.key for k in none if k.kind is KeyKind.AOT_AUTOGRAD or not catalog.loaders_of(k.key)))


def attribute_verdicts(report: MatchReport, function: str,
                       found: Sequence[tuple[str, Reason, tuple[KeyMatch, ...]]]) -> str | Reason:
    """What holds whichever function ``report.unattributed`` came from (module doc), given
    the verdicts ``found`` over those keys (status, line and keys of each): where
    ``new-graph`` holds (every key binds the call and none can take it), a note naming the
    keys, to add to each verdict's why; else the reason of one ``undecided`` verdict naming
    them (code ``function-unattributed``)."""
    names = set(report.unattributed)
    judged = {m.key.key: m for _, _, keys in found for m in keys}
    shown = ", ".join(k[:12] for k in report.unattributed[:6]) + (
        f" and {len(names) - 6} more" if len(names) > 6 else "")
    many = len(names) > 1
    held = report.functions_held
    others = "; ".join(held[:6]) + (f" and {len(held) - 6} more" if len(held) > 6 else "")
    why = (f"no key records that it was compiled from {function}"
           + (f" (the cache has keys of: {others})" if held else "")
           + f"; key{'s' if many else ''} {shown} record{'' if many else 's'} no function "
           "(the entries keep no stack traces)")
    every_refuses = (not report.unbound and names <= set(judged)
                     and all(not judged[k].fits and not judged[k].uncertain for k in names))
    if found and every_refuses and all(status == "new-graph" for status, _, _ in found):
        return f"; {why}, and none of them can take the call"
    said = "; ".join(f"{m.key.key[:12]}: {_then(replace(m, uncertain=m.uncertain[1:]))}" for m in report.results
                     if m.key.key in names and m.uncertain and code_of(m.uncertain[0]) == _CODE)
    said = f" (if it is, {said})" if said else ""
    return Reason(f"{why}, and whether one of them is {function}'s the cache cannot tell; torch looks one up "
                  f"only if it is{said}", "function-unattributed")


def marked(report: MatchReport, function: str) -> MatchReport:
    """``report``, made over keys that record no function, with each of them that can take
    the call undecided, first of all for this: whether it is ``function``'s the cache cannot
    tell; the note says what its lookup gives if it is (an entry's guards pass, or none's)."""
    done: dict[int, tuple[KeyMatch, ...]] = {}

    def mark(results: tuple[KeyMatch, ...]) -> tuple[KeyMatch, ...]:
        if id(results) not in done:
            done[id(results)] = tuple(_marked(m, function) if m.fits else m
                                      for m in results)
        return done[id(results)]

    passes = tuple(replace(p, results=mark(p.results)) for p in report.passes)
    return replace(report, results=mark(report.results), passes=passes)


def _marked(m: KeyMatch, function: str) -> KeyMatch:
    note = Reason(f"key {m.key.key[:12]} records no function: if it is {function}'s, {_then(m)}", _CODE)
    return replace(m, uncertain=(note, *m.uncertain))


def _then(m: KeyMatch) -> str:
    """What ``m``'s lookup says, for a key whose parameters could not be checked."""
    status = m.status
    if status == "hit" and m.hit is not None:
        return f"the inputs it takes pass the guards of its entry {m.hit.name[:16]}"
    if status == "miss":
        return "the inputs it takes fail every entry's guards"
    if status == "error":
        return "its lookup raises"
    return f"undecided: {m.uncertain[0]}" if m.uncertain else "undecided"
