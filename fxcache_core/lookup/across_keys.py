"""What the results of one call's keys say together, beyond each key's own lookup.

An FX key fits through the AOTAutograd keys that load it (its inputs are theirs:
``FxGraphCacheLoadable.load`` in torch/_functorch/_aot_autograd/aot_autograd_result.py
loads a forward FX graph by the exact guards string an AOTAutograd entry stores):
:func:`unfit_through_loaders` before its entries are read, :func:`fit_through_loaders`
after. Keys of one function that take the call only under different assumed dtypes
are each undecided (:func:`dtype_rivals`), as are keys of one function that each serve
the call while their parameters went unchecked (:func:`unchecked_rivals`). A negative int given where every key
takes a tensor is a usage error (:func:`check_negative_ints`). Values in, values out;
nothing here prints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from fxcache_core.cache.scan import CacheKey
from fxcache_core.catalog.reader import Catalog
from fxcache_core.errors import ShapeSpecError, param
from fxcache_core.functions.origin import function_name
from fxcache_core.lookup.binding import InputValue
from fxcache_core.lookup.match_report import KeyMatch
from fxcache_core.reasons import Reason, code_of


def _loader_unfit(results: Sequence[KeyMatch]) -> tuple[Reason, ...]:
    """Why an FX key does not fit when none of its loaders does: the first loader's reason."""
    why = results[0].reasons[0] if results[0].reasons else "no fit"
    return (Reason(f"loaded by AOTAutograd key {results[0].key.key[:12]}, which does not fit: {why}",
                   "loader-does-not-fit"),)


_FORWARD_MAY_BE_SAME = frozenset({"requires-grad-differs"})
"""Why an AOTAutograd key does not fit where the graph torch compiles instead may have the
same forward: which inputs require grad changes the joint graph (its backward) but not
always its forward. AOTAutograd then compiles the forward graph again and looks it up in
the FX graph cache by its own key (``FxGraphCache``, torch/_inductor/codecache.py), not
through the loader: an FX key of that forward graph can hit."""


def _forward_may_be_same(results: Sequence[KeyMatch]) -> bool:
    return all(r.reasons and code_of(r.reasons[0]) in _FORWARD_MAY_BE_SAME for r in results)


def unfit_through_loaders(catalog: Catalog, key: CacheKey,
                           aot: Mapping[str, KeyMatch]) -> KeyMatch | None:
    """An FX key every loader of which was matched and none fits: no fit, decided
    without decoding the key's own entries (what :func:`fit_through_loaders`
    would conclude after decoding them). None otherwise, and where each loader fails
    only on what may leave the forward graph the same (:data:`_FORWARD_MAY_BE_SAME`)."""
    loaders = tuple(sorted({e.key for e in catalog.loaders_of(key.key)}))
    results = [aot[k] for k in loaders if k in aot]
    if not loaders or len(results) != len(loaders) or any(r.fits for r in results) or \
            _forward_may_be_same(results):
        return None
    return KeyMatch(key=key, fits=False, loaded_by=loaders, origin=results[0].origin,
                    reasons=_loader_unfit(results), compiled=results[0].compiled)  # its loaders' function


def fit_through_loaders(m: KeyMatch, aot: Mapping[str, KeyMatch]) -> KeyMatch:
    """``m`` (an FX key that fits, its ``loaded_by`` set) judged through its loaders
    (``aot``: AOTAutograd key name -> its result): an FX graph's inputs are those of
    the AOTAutograd graph that compiled it.

    FX entries store no sources for their tensor inputs, so their rank and
    static dims are checked through the AOTAutograd keys that load them: when
    every such key was matched and none fits, the FX key does not fit either.
    """
    results = [aot[k] for k in m.loaded_by if k in aot]
    if not m.loaded_by or len(results) != len(m.loaded_by):
        return m
    if any(r.fits for r in results):
        # What makes every loader's lookup uncertain (how the call is traced) holds here too.
        common = set.intersection(*(set(r.uncertain) for r in results if r.fits))
        return replace(m, uncertain=m.uncertain + tuple(u for u in results[0].uncertain if u in common))
    if _forward_may_be_same(results):
        why = results[0].reasons[0]
        return replace(m, uncertain=m.uncertain + (Reason(
            f"loaded by AOTAutograd key {results[0].key.key[:12]}, which does not fit ({why}); torch then "
            "compiles the graph again and looks its forward graph up by its own key, which may be this one "
            "(which inputs require grad changes the backward, not always the forward)", "forward-may-hit"),))
    return KeyMatch(key=m.key, fits=False, symbols=m.symbols, loaded_by=m.loaded_by, origin=m.origin,
                    reasons=_loader_unfit(results), compiled=m.compiled)


def dtype_rivals(results: list[KeyMatch]) -> list[KeyMatch]:
    """Keys of one function that take the call only under different assumed dtypes
    (``mask=[2,8]`` given without a dtype; one key has it int64, another bool): which
    one torch traces depends on the dtype, so each is undecided (``dtype-not-given``)."""
    by: dict[tuple[str | None, str], dict[str, list[int]]] = {}
    for n, m in enumerate(results):
        if m.fits:
            fn = function_name(m.origin, m.compiled).name
            for src, dtype in m.assumed:
                by.setdefault((fn, src), {}).setdefault(dtype, []).append(n)
    out = list(results)
    for (_, src), dtypes in by.items():
        if len(dtypes) < 2:
            continue
        shown = ", ".join(f"{dtype} in key {results[ns[0]].key.key[:12]}" for dtype, ns in dtypes.items())
        why = Reason(f"{src} is given without a dtype, and keys of this function take it as different "
                     f"dtypes ({shown}): which one torch traces depends on it "
                     f"(give {src}=[...]:dtype=NAME)", "dtype-not-given")
        for ns in dtypes.values():
            for n in ns:
                out[n] = replace(out[n], uncertain=out[n].uncertain + (why,))
    return out


def unchecked_rivals(results: list[KeyMatch]) -> list[KeyMatch]:
    """Keys of one function (and kind) whose guards each take the call, where the
    parameters of at least one were not checked (its source cannot be read, or no frame
    is recorded: ``params_unchecked``): their graphs differ in something of the call that
    nothing read (a Python value the code branched on or folded in), and torch takes one
    of them, which the cache cannot say. Each is undecided (``several-keys-fit``). Where
    the parameters were read, the accounting tells such keys apart."""
    by: dict[tuple[str | None, str], list[int]] = {}
    for n, m in enumerate(results):
        if m.status == "hit":
            by.setdefault((function_name(m.origin, m.compiled).name, m.key.kind.value), []).append(n)
    out = list(results)
    for ns in by.values():
        if len(ns) < 2 or all(results[n].params_unchecked is None for n in ns):
            continue
        shown = ", ".join(results[n].key.key[:12] for n in ns)
        unchecked = next(str(results[n].params_unchecked) for n in ns if results[n].params_unchecked is not None)
        why = Reason(f"keys {shown} each take the call, and {unchecked.removeprefix('parameters not checked: ')}: "
                     "their graphs differ in a value of the call that nothing read, and which one torch looks "
                     "up is not known", "several-keys-fit")
        for n in ns:
            out[n] = replace(out[n], uncertain=out[n].uncertain + (why,))
    return out


def check_negative_ints(catalog: Catalog, results: Sequence[KeyMatch],
                               inputs: Mapping[str, InputValue]) -> None:
    """``x=-5`` where every key that takes ``x`` takes a tensor: a usage error (a
    negative number is no tensor's shape), not a key that "cannot take it".

    Raises:
        ShapeSpecError: naming the input and saying how a tensor is given.
    """
    from fxcache_core.guards.user_terms import user_source

    negs = {src: v for src, v in inputs.items() if isinstance(v, int) and v < 0}
    if not negs:
        return
    as_tensor: set[str] = set()
    as_int: set[str] = set()
    for m in results:
        first = catalog.first_readable(m.key)
        for i in first[1].inputs if first is not None else ():
            if i.source in negs:
                (as_int if i.is_symint else as_tensor).add(i.source)
    for src, v in negs.items():
        if src in as_tensor and src not in as_int:
            name = user_source(src)
            raise ShapeSpecError(f"{param('inputs')} {name}={v}: {name} is a tensor in the keys that take it, "
                                 f"and a negative number is no shape; give its shape, e.g. {name}=[{-v}]",
                                 param="inputs", value=f"{name}={v}")


def check_unknown_names(results: Sequence[KeyMatch], inputs: Mapping[str, InputValue]) -> None:
    """A call Python refuses before Dynamo sees it, where each function of the keys it was
    matched against could be read: a name (``typo=3``, ``typo=[4]``, an item ``cgf['n']=4``)
    that none of them has as a parameter, where none takes ``*args`` or ``**kwargs``; or a
    value given by position (``args[2]``) past every function's positional parameters
    where none takes ``*args`` (a keyword-only parameter is no position). Python raises
    ``TypeError``, so no verdict holds: a usage error naming the functions' parameters, not
    a verdict that ignores it. Under ``**kwargs`` a name that is no parameter is the call's
    keyword, an item of it that keyword's item (``cfg['n']=4``: the keyword ``cfg``), which
    :func:`~fxcache_core.lookup.kwargs_evidence.keywords_account` judges.
    Module state (``self.training``), globals, the grad mode and settings are not
    parameters and are not checked here; nor is anything where a frame is not known.

    Raises:
        ShapeSpecError: naming the input and the parameters the functions take.
    """
    import re

    from fxcache_core.functions.params import frame_reads
    from fxcache_core.guards.user_terms import user_source

    named = {m.group(1) for src in inputs if (m := re.fullmatch(r"L\['(\w+)'\](?:\[.*|\..*)?", src))}
    at = {int(m.group(1)): src for src in inputs if (m := re.fullmatch(r"L\['args'\]\[([0-9]+)\].*", src))}
    if not (named or at) or not results:
        return
    params: dict[str, tuple[str, ...]] = {}
    positional: dict[str, int] = {}
    absorbs = False  # some function takes *args or **kwargs: a name may be no parameter
    for m in results:
        if m.compiled is None or m.compiled.parent is not None:
            return  # not known; or a resume frame, whose locals a call may name too
        reads = frame_reads(m.compiled)
        if isinstance(reads, Reason):
            return
        params[reads.function] = tuple(p.name for p in reads.params)
        absorbs = absorbs or reads.varkw or reads.varargs
        if reads.varargs or reads.param("args") is not None:
            positional[reads.function] = -1  # any position (or args[i], an item of its parameter args)
        else:
            positional.setdefault(reads.function, sum(not p.keyword_only for p in reads.params))
    shown = "; ".join(f"{fn} takes {', '.join(ps) or 'nothing'}" for fn, ps in sorted(params.items()))
    past = sorted(i for i in at if all(0 <= n <= i for n in positional.values()))
    if past:
        name = user_source(at[past[0]])
        counts = "; ".join(f"{fn} takes {n} by position{': ' if n else ''}{', '.join(params[fn][:n])}"
                           for fn, n in sorted(positional.items()))
        raise ShapeSpecError(f"{param('inputs')} {name}: no parameter at that position ({counts}): "
                             "the call would raise TypeError before torch.compile sees it; give it by its name",
                             param="inputs", value=name)
    if absorbs:
        return
    # ``self`` (a plain function may name a parameter so), and any name a key binds
    # (a closure's variable Dynamo sources as L['n']), are taken as known.
    known = {p for ps in params.values() for p in ps} | {"self"} | {
        m.group(1) for r in results for user, _ in r.bound if (m := re.fullmatch(r"L\['(\w+)'\].*", user))}
    unknown = sorted(named - known - {"args", "kwargs"})  # a nameless item is args[i]: by position
    if unknown:
        name = unknown[0]
        raise ShapeSpecError(f"{param('inputs')} {name}: no parameter of that name ({shown}): "
                             "the call would raise TypeError before torch.compile sees it",
                             param="inputs", value=name)
