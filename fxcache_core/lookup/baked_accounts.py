"""How a value the key does not take as an input, a constant of its graph, accounts for
the parameter it was passed as (:func:`baked_account`): a ``torch.dtype``, a bool or a
tuple of ints, an int or a float, read by :mod:`fxcache_core.lookup.dtype_args`,
:mod:`fxcache_core.lookup.int_args` and :mod:`fxcache_core.lookup.fit_floats`. One
parameter's accounting (:class:`~fxcache_core.lookup.accounting.ParamAccounting`) asks it
before the other evidence. Never imports torch."""

from __future__ import annotations

from typing import Any, Protocol

from fxcache_core.lookup.dtype_args import dtype_account
from fxcache_core.lookup.fit_floats import baked_float, baked_int, baked_value, traced_float
from fxcache_core.lookup.param_account import ParamAccount
from fxcache_core.lookup.pyvalues import TorchDtype, text_of
from fxcache_core.lookup.source_values import param_sources
from fxcache_core.reasons import Reason

__all__ = ["ParamAccounting", "baked_account"]


class ParamAccounting(Protocol):
    """What :func:`baked_account` reads of one parameter's accounting
    (:class:`fxcache_core.lookup.accounting.ParamAccounting`, which imports this module):
    the ledger (its catalog), the key and call (``KeyCall``), the compiled frame, the
    parameter (``p.name``), its sources in the key, the source the user gave it by (or
    None), and how a result is made."""

    ledger: Any
    call: Any
    frame: Any
    p: Any
    sources: tuple[str, ...]
    user_src: str | None

    def result(self, status: str, how: Reason, value: object = ..., brief: str = "") -> ParamAccount: ...


def baked_account(acc: ParamAccounting, v: object) -> ParamAccount | None:
    """An int or float the key does not take (a constant of its graph), accounted from
    what :mod:`fxcache_core.lookup.int_args` and
    :func:`fxcache_core.lookup.fit_floats.baked_float` read: ``baked-constant``; their
    notes leave it undecided, their problems rule the key out. None where they read
    nothing (the value is no int or float, or no op of the graph computes with it):
    the other evidence decides. The one place that says how a baked constant accounts
    for a parameter."""
    call = acc.call
    if isinstance(v, TorchDtype):
        got = dtype_account(acc.ledger.catalog, call.key, call.entry, acc.frame, acc.p.name,
                            lambda name: param_sources(name, acc.frame), call.inputs, v)
        return None if got is None else acc.result(got[0], got[1], brief=got[2])
    if v is None or type(v) in (bool, str) or (isinstance(v, tuple) and v and all(type(i) is int for i in v)):
        got = baked_value(acc.ledger.catalog, call.key, acc.sources[0], v, call.inputs, call.frame)
        if got is None:
            return None
        kind, why = got
        if kind == "problem":
            return acc.result("rules-out", why)
        if isinstance(v, tuple):
            return acc.result("assumed", Reason(f"{acc.p.name}={text_of(v)}: {why}", "tuple-assumed"),
                              brief="the constants of its graph, from a tuple")
        return acc.result("accounted", Reason(f"{acc.p.name}={text_of(v)}: {why}", "baked-constant"),
                          brief="the constants of its graph")
    if type(v) not in (int, float):
        return None
    if acc.user_src is not None:
        said = [(kind, why) for src, kind, why in call.int_rule.about if src == acc.user_src]
    elif call.int_default is not None and type(v) is int:
        rule = call.int_default(acc.sources[0], v)  # type: ignore[arg-type]
        said = [(kind, why) for _, kind, why in rule.about]
    else:
        said = []
    if type(v) is float:
        got = baked_float(acc.ledger.catalog, call.key, acc.sources[0], v, call.mode,  # type: ignore[arg-type]
                          call.inputs, call.frame)
        if got is not None:
            said.append(got)
    for kind, why in said:
        if kind == "problem":
            return acc.result("rules-out", why)
    if type(v) is int and (why := traced_float(acc.ledger.catalog, call.key, acc.p.name, acc.sources[0], v,
                                                call.inputs, call.frame)) is not None:
        return acc.result("rules-out", why)
    if type(v) is int and not said and (got := baked_int(acc.ledger.catalog, call.key, acc.sources[0], v,
                                                         call.mode, call.inputs, call.frame)) is not None:
        said.append(got)  # a keyword-only int, or one left out: the int rule does not speak of it
        if got[0] == "problem":
            return acc.result("rules-out", got[1])
    for kind, why in said:
        if kind == "note":
            return acc.result("undecided", why)
    for kind, why in said:
        if kind == "baked":
            return acc.result("accounted", Reason(f"{acc.p.name}={text_of(v)}: {why}", "baked-constant"))
    return None
