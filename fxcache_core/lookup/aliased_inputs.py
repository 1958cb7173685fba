"""One tensor passed for two parameters: what a key's inputs say of a call that does so.

Dynamo wraps each tensor argument once: a call ``f(x, x)`` gives the graph one input for
both parameters (the source it met first, ``L['a']``), and guards that they are one object
(``L['a'] is L['b']``, a guard of Dynamo's, not of the cache's entries); a call with two
tensors gives the graph an input for each, and guards that they are not one. The two are
two graphs, two keys. A call says a parameter takes the very tensor of another with
``b=@a`` (:attr:`~fxcache_core.lookup.binding.TensorArg.same_as`); a tensor given by its
shape is a tensor of its own.

:func:`aliased_call` judges a key for the groups of parameters a call passes one tensor
for (each group: ``a`` and every ``b=@a``):

* the key takes a tensor input from two or more parameters of a group: it was traced with
  a tensor of their own for each, and the call's one tensor is one input: torch traces
  another graph (``aliased-call-two-inputs``);
* the key takes a tensor input from exactly one of them: the others were one tensor with
  it when it was traced, where that is exact: each other one is computed into what the
  function returns whenever it is a tensor
  (:func:`~fxcache_core.lookup.tensor_flow.computed_into_output`, so it was no tensor of its
  own, nor None), and the key takes a tensor input from no other parameter of the function
  (with which it may have been one instead). Each is then accounted for (``aliased-input``);
  otherwise the lookup is undecided (``aliased-inputs-unknown``), naming them;
* the key takes none of them: the other rules say what that is.

The reverse, a key traced with one tensor for two parameters and a call that gives a tensor
of its own for each, is :func:`~fxcache_core.lookup.optional_tensors.tensor_given`'s
(``aliased-when-traced``). Nothing here imports torch or runs the source.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from fxcache_core.decode.entries import DecodedEntry
from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.functions.trees import function_node
from fxcache_core.lookup.accounting import Accounting
from fxcache_core.lookup.binding import InputValue, TensorArg
from fxcache_core.lookup.source_values import LOCAL_RE
from fxcache_core.lookup.tensor_flow import computed_into_output
from fxcache_core.reasons import Reason

__all__ = ["AliasRule", "aliased_call", "groups", "tensor_inputs"]

_TENSOR_TYPE = re.compile(r"^[a-z]\w*\[")  # f32[s0, 8][8, 1]cpu: a tensor; Sym(s0): no


@dataclass(frozen=True, slots=True)
class AliasRule:
    """What :func:`aliased_call` found for one key.

    Attributes:
        problems: reasons that rule the key out.
        notes: reasons that leave its lookup undecided.
        accounted: parameter name -> why it is accounted for (``aliased-input``).
    """

    problems: tuple[Reason, ...] = ()
    notes: tuple[Reason, ...] = ()
    accounted: Mapping[str, Reason] = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.accounted is None:
            object.__setattr__(self, "accounted", {})

    def applied(self, acc: Accounting) -> Accounting:
        """``acc`` with each parameter of :attr:`accounted` accounted for by its reason."""
        if not self.accounted:
            return acc
        return replace(acc, params=tuple(
            replace(p, status="accounted", how=self.accounted[p.name], brief="one tensor with another input")
            if p.name in self.accounted else p for p in acc.params))


def groups(inputs: Mapping[str, InputValue]) -> list[tuple[str, ...]]:
    """The sources the call passes one tensor for, each group its first source then every
    ``b=@a`` of it, in the call's order; only groups of two or more."""
    out: dict[str, list[str]] = {}
    for src, v in inputs.items():
        if isinstance(v, TensorArg) and v.same_as is not None:
            out.setdefault(v.same_as, [v.same_as]).append(src)
    return [tuple(g) for g in out.values()]


def tensor_inputs(entry: DecodedEntry) -> frozenset[str]:
    """The sources ``entry``'s graph takes a whole tensor from (``L['a']``; not a size's
    ``L['a'].size()[0]``)."""
    return frozenset(i.source for i in entry.inputs if i.source and _TENSOR_TYPE.match(i.type))


def _name(src: str) -> str:
    m = LOCAL_RE.fullmatch(src)
    return m.group(1) if m is not None else src


def aliased_call(entry: DecodedEntry, frame: CompiledFrom | None, inputs: Mapping[str, InputValue]) -> AliasRule:
    """The key of ``entry`` (compiled from ``frame``) judged for the tensors ``inputs`` passes
    for two parameters or more (see the module docstring). Raises nothing."""
    found = groups(inputs)
    if not found:
        return AliasRule()
    taken = tensor_inputs(entry)
    problems: list[Reason] = []
    notes: list[Reason] = []
    accounted: dict[str, Reason] = {}
    for group in found:
        mine = [s for s in group if s in taken]
        said = ", ".join(f"{_name(s)}=@{_name(group[0])}" for s in group[1:])
        if len(mine) >= 2:
            problems.append(Reason(
                f"the call passes one tensor for {', '.join(_name(s) for s in group)} ({said}), which Dynamo takes "
                f"as one graph input, and this key's graph takes an input from each of {', '.join(mine)}: it was "
                "traced with a tensor of their own for each, and torch traces another graph",
                "aliased-call-two-inputs"))
            continue
        if not mine:
            continue
        others = [s for s in group if s not in mine]
        why = _undecided(frame, inputs, mine[0], others, taken)
        if why is not None:
            notes.append(Reason(
                f"the call passes one tensor for {', '.join(_name(s) for s in group)} ({said}), and this key takes "
                f"an input from {mine[0]} only: {why}; the cache does not record which tensors were one when it "
                "was traced", "aliased-inputs-unknown"))
            continue
        for s in others:
            accounted[_name(s)] = Reason(
                f"{_name(s)}: the very tensor of {_name(mine[0])} (one graph input, {mine[0]}), as when this key "
                f"was traced: the code computes with {_name(s)} into what it returns whenever it is a tensor, and "
                "this key takes no input from it", "aliased-input")
    return AliasRule(tuple(problems), tuple(notes), accounted)


def _undecided(frame: CompiledFrom | None, inputs: Mapping[str, InputValue], kept: str, others: list[str],
               taken: frozenset[str]) -> str | None:
    """Why it is not exact that the key was traced with ``others`` the very tensor of ``kept``
    (a clause of the verdict's sentence); None where it is."""
    fn = function_node(frame.file, frame.line, frame.function) if frame is not None else None
    if frame is None or fn is None or frame.wrappers or frame.whole_module or frame.parent is not None:
        return "the function's source cannot be read here to say what the others were"
    params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
    rivals = sorted(t for t in taken if t != kept and LOCAL_RE.fullmatch(t) and _name(t) in params)
    if rivals:
        return (f"it takes an input from {', '.join(rivals)} too, which the others may have been the very "
                "tensor of instead")
    tensors = {_name(s) for s, v in inputs.items() if isinstance(v, TensorArg) and v.shape != ()}
    numbers = {_name(s) for s, v in inputs.items() if type(v) in (int, float)}
    for s in others:
        if computed_into_output(fn, frame.file, _name(s), tensors - {_name(s)}, numbers) is None:
            return f"the source does not show that {_name(s)} is computed into what the function returns"
    return None
