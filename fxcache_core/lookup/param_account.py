"""How one parameter of a compiled function is accounted for in a key's lookup: the
record (:class:`ParamAccount`) and the codes of its evidence (:data:`HOW`); how the
accounting is done is :mod:`fxcache_core.lookup.accounting`."""

from __future__ import annotations

from dataclasses import dataclass

from fxcache_core.reasons import Reason

HOW = {
    "key-input": "an input of the key: its guards decide",
    "baked-constant": "a constant of the key's graph, read exactly, the call's value",
    "trace-guard": "Dynamo's guard in a run's trace that looked the key up (for **kwargs: every guard on the dict)",
    "branch": "the side of each if on it that the key's graph was traced through",
    "no-input-none": "None, and the key takes no input from this tensor parameter",
    "unread": "the code never reads it (for **kwargs: never names the dict)",
    "after-break": "read only after the graph break the key's graph ends at (by the resume frame)",
    "aliased-input": "the very tensor of another input (b=@a), as when the key was traced: one graph input",
    "tensor-given": "a tensor the key takes no input from (the key's notes decide)",
    "module-state-recorded": "a module's attribute: Dynamo's guard in a run's trace that looked the key up",
    "module-state-unread": "a module's attribute no guard of a run's trace that looked the key up reads",
    "state-recorded": "global state: Dynamo's guard on it in a run's trace that looked the key up",
    "grad-mode": "the grad mode given: the entry has a backward, compiled with grad enabled",
    "grad-mode-off": "the grad mode given: the entry's graph shows it was compiled with grad disabled",
    "requires-grad": "whether the input requires grad, as the entry records",
    "parameter": "whether the input is an nn.Parameter, as the key's graph records (its static inputs)",
    "module-default": "assumed: left out of a module compiled whole, as when the key was compiled",
    "default-assumed": "assumed: left out (None), as when the key was compiled",
    "tuple-assumed": "assumed: the constants of the key's graph, from a tuple as the call's (a list is another graph)",
    "container-assumed": "assumed: a container given item by item is of the type the key was compiled with",
}
"""The codes of a parameter accounted for (the last four: assumed), and what each means."""

ARGUMENT_CODES = frozenset({"branch-not-taken", "none-for-input", "list-shorter", "list-longer", "sequence-shorter",
                            "slice-length-differs"})
"""The codes of a key ruled out by a Python argument the code branches on, a list's or
tuple's length, or an int that slices a module's layers (not by a size)."""


@dataclass(frozen=True, slots=True)
class ParamAccount:
    """How one parameter of the compiled function is accounted for in a key's lookup.

    Attributes:
        name: the parameter (``clip``).
        value: the call's value as written (``True``, ``'gelu'``, ``[8,16]``); None
            when the call gives none and the source has no default.
        given: the call gave it (False: the default of the source, or not given).
        status: ``accounted``; ``undecided`` (nothing says what the key was traced
            with); ``rules-out`` (the key's graph was traced with another value).
        how: the code (:data:`HOW`, or the undecided or ruling-out reason's) and,
            in words, the evidence.
        source: the call's input it was given as (``L['clip']``); None for a default.
        brief: for evidence beyond the key's inputs, what it is in a few words (the
            verdict's "rests on" line).
    """

    name: str
    value: str | None
    given: bool
    status: str
    how: Reason
    source: str | None = None
    brief: str = ""

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "value": self.value, "given": self.given, "status": self.status,
                "how": self.how.code, "detail": str(self.how)}
