"""A traced run in one line, and its causes (``summary.verdict``/``causes`` of ``fxcache explain``).

:func:`run_verdict` reads the explained lookups of a run
(:class:`~fxcache_core.trace.explain_report.LookupExplanation`) and says what the cache did
for the run as a whole::

    7 of 7 lookups missed: the cache was built by torch 2.13.0+cpu, this run is torch 2.14.1+cu130
    all 7 hit, but 5 kernels were rebuilt (6.2 s): <the rebuilt cause>

One :class:`CauseRow` per cause of a miss: a new key's root cause
(:mod:`fxcache_core.trace.root_cause`: the component, with this run's value and
the cache's), a guard miss's first failing clause with the call's values, a first
compile, a missing FX entry. The most common cause leads the line. Words are the
user's (``TORCHINDUCTOR_MAX_AUTOTUNE``, ``x``, ``x.size(0)``) unless ``raw``
(torch's names: ``inductor_config[max_autotune]``, ``example_inputs[0]``,
``L['t0']``). Nothing here reads the cache or prints.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from fxcache_core.trace.user_terms import user_source

# The lookups are fxcache_core.trace.explain_report's LookupExplanation and RootCause, read by
# attribute: report imports this module (its JSON holds the verdict), not the other way.
LookupExplanation = Any
RootCause = Any


@dataclass(frozen=True)
class CauseRow:
    """One cause of the run's misses.

    Attributes:
        component: the root cause's component (``torch_version``,
            ``inductor_config[max_autotune]``, ``example_inputs[0]``), ``guards`` for a
            guard miss, None for a first compile or a missing FX entry.
        lookups: how many lookups missed for it.
        this: its value in this run (a guard miss: the call's values), None where unknown.
        cache: its value in the cache (a guard miss: the clause that failed).
        code: ``torch-version``, ``inductor-config``, ``input-dtype``..., ``guard``,
            ``first-compile``, ``fx-entry-missing``, ``unexplained``.
        words: the cause as one clause, in the user's terms (or torch's, ``raw``).
        env: a config key's variable; input: an example input's argument name.
    """

    component: str | None
    lookups: int
    this: str | None
    cache: str | None
    code: str
    words: str
    env: str | None = None
    input: str | None = None

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"component": self.component, "lookups": self.lookups, "this": self.this,
                                  "cache": self.cache, "code": self.code, "words": self.words}
        if self.env is not None:
            out["env"] = self.env
        if self.input is not None:
            out["input"] = self.input
        return out


@dataclass(frozen=True)
class RunVerdict:
    """The run in one line (see the module docstring).

    Attributes:
        line: the verdict.
        causes: one row per cause of a miss, the most lookups first.
        rebuilt_after_hit: hits whose compile still built kernels.
    """

    line: str
    causes: tuple[CauseRow, ...]
    rebuilt_after_hit: int

    def to_json(self) -> dict[str, object]:
        """``verdict``, ``causes``, ``rebuilt_after_hit`` (keys of ``explain --json``'s ``summary``)."""
        return {"verdict": self.line, "causes": [c.to_json() for c in self.causes],
                "rebuilt_after_hit": self.rebuilt_after_hit}


def run_verdict(lookups: Sequence[LookupExplanation], raw: bool = False) -> RunVerdict:
    """The verdict of a run from its explained lookups, in the run's order; ``raw``:
    torch's names instead of the user's."""
    n = len(lookups)
    if n == 0:
        return RunVerdict("no cache lookup: nothing was compiled with Inductor", (), 0)
    counts: Counter[tuple[object, ...]] = Counter()
    first: dict[tuple[object, ...], CauseRow] = {}
    for x in lookups:
        if x.lookup.state == "miss":
            row = _cause(x, raw)
            ident = (row.component, row.this, row.cache, row.code)
            counts[ident] += 1
            first.setdefault(ident, row)
    causes = tuple(replace(first[i], lookups=c) for i, c in counts.most_common())
    missed = sum(1 for x in lookups if x.lookup.state == "miss")
    hits = [x for x in lookups if x.lookup.state == "hit"]
    bypassed = [x for x in lookups if x.lookup.state == "bypass"]
    rebuilt = [x for x in hits if x.rebuilt is not None and x.rebuilt.kernels > 0]
    parts = []
    if missed:
        head = f"{missed} of {n} lookups missed" if n > 1 else "the lookup missed"
        parts.append(f"{head}: {causes[0].words}" if causes else head)
        if len(causes) > 1:
            parts[-1] += f" ({causes[0].lookups} of them); {len(causes) - 1} other cause"
            parts[-1] += "s" if len(causes) > 2 else ""
    elif len(hits) == n:
        parts.append(f"all {n} hit" if n > 1 else "the lookup hit")
    if bypassed:
        why = Counter(x.lookup.bypass_reason or "no reason recorded" for x in bypassed).most_common(1)[0][0]
        parts.append(f"{len(bypassed)} of {n} bypassed the cache ({_one_line(why)})")
    if hits and len(hits) != n:
        parts.append(f"{len(hits)} hit")
    if rebuilt:
        kernels = sum(x.rebuilt.kernels for x in rebuilt if x.rebuilt is not None)
        seconds = sum(x.rebuilt.seconds for x in rebuilt if x.rebuilt is not None)
        why = Counter(x.rebuilt.cause for x in rebuilt if x.rebuilt is not None and x.rebuilt.cause)
        text = f"{kernels} kernel{'s' if kernels != 1 else ''} {'were' if kernels != 1 else 'was'} rebuilt"
        text += f" ({seconds:.1f} s)" + (f": {why.most_common(1)[0][0]}" if why else "")
        if len(hits) != n:
            text = f"{len(rebuilt)} of the hits still compiled: {text}"
        parts.append(text)
    line = "; ".join(parts)
    if len(hits) == n and rebuilt:
        line = parts[0] + ", but " + "; ".join(parts[1:])
    return RunVerdict(line, causes, len(rebuilt))


def _one_line(text: str) -> str:
    first = text.strip().splitlines()[0] if text.strip() else text
    return re.sub(r" at 0x[0-9a-f]+", "", first)[:160]


def _cause(x: LookupExplanation, raw: bool) -> CauseRow:
    if x.root_cause is not None:
        return _root_row(x.root_cause, raw)
    if x.cause == "guard-miss" and not x.lookup.for_aot:
        return _guard_row(x, raw)
    if x.cause == "fx-entry-missing" or (x.cause == "guard-miss" and x.lookup.for_aot):
        # The AOTAutograd hit, and the FX load made for it that found no entry.
        return CauseRow(None, 1, None, None, "fx-entry-missing",
                        "an AOTAutograd entry's FX entry is gone from the cache")
    if x.cause == "new-key" and x.first_compile:
        return CauseRow(None, 1, None, None, "first-compile", "first compile: no key in the cache is close")
    if x.cause == "new-key" and x.nearest is not None and not x.nearest.differs:
        return CauseRow(None, 1, None, None, "aotautograd-only",
                        "a new AOTAutograd key whose FX keys are the cache's (AOTAutograd's own settings)")
    return CauseRow(None, 1, None, None, "unexplained", "new keys, with no nearest key to compare")


def root_cause_words(r: RootCause, raw: bool = False) -> str:
    """A root cause as one clause (``max_autotune (TORCHINDUCTOR_MAX_AUTOTUNE) is True in
    this run, False in the cache``); ``raw``: torch's names."""
    return _root_row(r, raw).words


def consequence_words(r: RootCause) -> str:
    """What follows from a root cause, counted: ``30 settings new or changed with it, the
    backward graph's node names``; "" when nothing does."""
    if r.code == "more-dynamic-dims":
        inputs = sum(1 for c in r.consequences if c.startswith("example_inputs["))
        parts = ["the graph (the same ops, with symbolic sizes)"] if "gm" in r.consequences else []
        if inputs:
            parts.append(f"{inputs} example input{'s' if inputs != 1 else ''} (a SymInt added, the rest moved)")
        if "fx_kwargs[static_input_idxs]" in r.consequences:
            parts.append("the places of the static inputs")
        return ", ".join(parts)
    if r.code.startswith("input-"):
        n = sum(1 for c in r.consequences if c.startswith("example_inputs["))
        return f"{n} more input{'s' if n != 1 else ''} with the same {r.code.removeprefix('input-')} change" if n else ""
    settings = sum(1 for c in r.consequences if c != "gm" and not c.startswith("system_info"))
    parts = [f"{settings} setting{'s' if settings != 1 else ''} new or with another default"] if settings else []
    if any(c.startswith("system_info") for c in r.consequences):
        parts.append("the build's system info")
    if "gm" in r.consequences:
        parts.append("the graph's node names (the same graph otherwise)")
    return ", ".join(parts)


def _root_row(r: RootCause, raw: bool) -> CauseRow:
    this, cache = r.this or "unknown", r.cache or "unknown"
    if r.code == "torch-version":
        words = f"the cache was built by torch {cache}, this run is torch {this}"
    elif r.code in ("inductor-config", "setting"):
        name = r.component
        if not raw and name.startswith("inductor_config[") and name.endswith("]"):
            name = name[len("inductor_config["):-1]
        via = f" ({r.env})" if r.env and not raw else ""
        words = f"{name}{via} is {this} in this run, {cache} in the cache"
    elif r.code.startswith("input"):
        name = r.component if raw or r.input is None else r.input
        what = r.code.removeprefix("input-") if r.code != "input" else "metadata"
        words = f"input {name} has {what} {this} in this run, {cache} in the cache"
    elif r.code == "more-dynamic-dims":
        name = r.component if raw else user_source(r.component)
        was = f"; it was {cache} in the compile of the nearest key" if r.cache else ""
        words = f"a recompile made {name} symbolic (automatic dynamic{was})"
    elif r.code == "graph":
        words = f"the traced graph differs ({this} in this run, {cache} in the cache)"
    else:
        words = f"{r.component} is {this} in this run, {cache} in the cache"
    return CauseRow(r.component, 1, r.this, r.cache, r.code, words, env=r.env, input=r.input)


def _guard_row(x: LookupExplanation, raw: bool) -> CauseRow:
    failed = next((t for t in x.tried if t.clause), None)
    if failed is None:
        return CauseRow("guards", 1, None, None, "guard", "no entry's guards held for the call")
    clause, vals = failed.clause or "", []
    for v in failed.values:
        name = v.placeholder
        if not raw and v.source:
            name = user_source(v.source)
            clause = re.sub(rf"L\['{v.placeholder}'\]|\b{v.placeholder}\b", lambda _m, n=name: n, clause)
        if v.value is not None and re.search(rf"\b{re.escape(v.placeholder)}\b", failed.clause or ""):
            vals.append(f"{name} = {v.value}")
    this = ", ".join(vals) or None
    words = f"the cache's guard {clause} fails" + (f" with {this}" if this else "")
    return CauseRow("guards", 1, this, clause, "guard", words)


__all__ = ["CauseRow", "RunVerdict", "consequence_words", "root_cause_words", "run_verdict"]
