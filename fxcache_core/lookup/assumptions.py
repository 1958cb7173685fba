"""What a verdict takes for granted that the call does not say: each as an
:class:`Assumption` (the name, the value taken, where that value comes from).

A key is looked up under more than the call's arguments: the grad mode, each input's
``requires_grad`` and dtype, a module's ``training`` flag and the other attributes its code
reads, the globals it reads, autocast and the other global state and settings
(:mod:`fxcache_core.lookup.global_state`). Where the call leaves one out, ``match`` takes it
to be as when the key was compiled (the documented rule), and a decided verdict says so:

* from the key's entry, where it shows the value: the grad mode on where the entry has a
  backward (``grad-mode-from-entry``), each given tensor's ``requires_grad`` as the entry
  records it (``requires-grad-from-entry``), a tensor the key took as a static input an
  ``nn.Parameter`` (``parameter-from-entry``: :mod:`fxcache_core.lookup.param_inputs`);
* as when the key was compiled, where the cache does not record it: the grad mode of a key
  without a backward or of an FX key (``grad-mode-assumed``), ``requires_grad`` where the
  entry does not record it (``requires-grad-assumed``), a module's state
  (``module-state-assumed``), the globals the code reads (``globals-assumed``), each global
  setting (``state-assumed``).

The dtypes a fit assumed (``dtype-assumed``) and the parameters accounting assumed
(``default-assumed``, ``module-default``...) are made where they are decided
(:mod:`fxcache_core.lookup.fit`, :mod:`fxcache_core.lookup.accounting`) and turned into
records here (:func:`dtype_assumptions`, :func:`param_assumptions`). Never imports torch.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from fxcache_core.cache.keys import KeyKind
from fxcache_core.decode.entries import DecodedEntry
from fxcache_core.errors import param
from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.guards.user_terms import user_source
from fxcache_core.lookup.binding import (
    DEFAULT_DTYPE,
    GRAD_MODE,
    INFERENCE_MODE,
    NUM_THREADS,
    InputValue,
    TensorArg,
)
from fxcache_core.lookup.param_account import ParamAccount
from fxcache_core.lookup.pyvalues import PyValue
from fxcache_core.reasons import Reason

__all__ = ["Assumption", "ambient_assumptions", "dtype_assumptions", "param_assumptions", "said"]


@dataclass(frozen=True, slots=True)
class Assumption:
    """One thing a verdict takes for granted that the call does not say.

    Attributes:
        name: the parameter or state, as a call would give it (``x.dtype``,
            ``torch.is_grad_enabled()``, ``self.training``, ``return_dict``).
        value: the value taken (``float32``, ``True``); None where it is whatever it was
            when the key was compiled, which the cache does not record.
        source: where the value comes from, in words (``the key's entry has a backward,
            so grad mode was on when it was compiled``).
        code: what kind of assumption it is (the module docstring).
    """

    name: str
    value: str | None
    source: str
    code: str

    @property
    def from_entry(self) -> bool:
        """The value is one the key's entry shows (not only "as when compiled")."""
        return self.value is not None and self.code in (
            "grad-mode-from-entry",
            "requires-grad-from-entry",
            "parameter-from-entry",
        )

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "value": self.value, "from": self.source, "code": self.code}


_AS_COMPILED = "as when the key was compiled: the cache does not record it"

_SETTINGS: tuple[tuple[str, str], ...] = (
    ("torch.is_autocast_enabled()", "autocast"),
    ("torch.are_deterministic_algorithms_enabled()", "deterministic algorithms"),
    (NUM_THREADS, "the thread count"),
    (DEFAULT_DTYPE, "the default dtype"),
    ("torch.compile.mode", "torch.compile's mode"),
    ("torch.compile.fullgraph", "fullgraph"),
    ("torch.compile.backend", "backend"),
    ("torch._dynamo.config.", "Dynamo's config"),
    ("torch._inductor.config.", "Inductor's config"),
    ("torch._functorch.config.", "AOTAutograd's config"),
)
"""Each global setting a key depends on that the cache does not record
(:mod:`fxcache_core.lookup.global_state`), with how a line names it; a name ending in ``.``
covers every config value under it."""


def dtype_assumptions(assumed: Iterable[tuple[str, str]]) -> list[Assumption]:
    """The dtypes a fit took from the key (``KeyMatch.assumed``: source -> dtype)."""
    return [
        Assumption(
            f"{user_source(src)}.dtype",
            dtype,
            "the dtype of the key's input (the call gives none)",
            "dtype-assumed",
        )
        for src, dtype in assumed
    ]


def param_assumptions(params: Iterable[ParamAccount]) -> list[Assumption]:
    """The parameters accounting assumed (status ``assumed``), with its reason as the source."""
    return [
        Assumption(p.name, p.value, str(p.how), p.how.code or "params-assumed")
        for p in params
        if p.status == "assumed"
    ]


def ambient_assumptions(
    kind: KeyKind,
    entry: DecodedEntry,
    frame: CompiledFrom | None,
    inputs: Mapping[str, InputValue],
    bound: Mapping[str, str],
    grad_enabled: bool | None,
    state: Mapping[str, PyValue],
) -> tuple[Assumption, ...]:
    """What a key of ``kind`` (its first readable ``entry``, its compiled ``frame``) is
    looked up under that the call (``inputs``, ``grad_enabled``, ``state``; ``bound``: the
    user's sources -> the key's) leaves out: the module docstring's list, in that order."""
    out: list[Assumption] = []
    if grad_enabled is None:
        out.append(_grad_mode(kind, entry, INFERENCE_MODE in state))
    if kind is KeyKind.AOT_AUTOGRAD:
        for src, t in inputs.items():
            if (
                isinstance(t, TensorArg)
                and t.requires_grad is None
                and (a := _requires_grad(entry, src, bound))
            ):
                out.append(a)
    if _module_frame(entry, frame) and not any(
        s in ("L['self'].training", "self.training") for s in inputs
    ):
        out.append(
            Assumption(
                "self.training",
                None,
                "the module's training mode (model.train()/model.eval(), "
                "each submodule's too) and the other attributes its code reads, as when the key was "
                "compiled: Dynamo guards them and the cache does not record them",
                "module-state-assumed",
            )
        )
    other = "other " if any(s.startswith("G[") for s in inputs) else ""
    out.append(
        Assumption(
            "G[...]",
            None,
            f"the {other}globals the code reads, as when the key was compiled: Dynamo "
            "guards each and bakes it into the graph, and the cache does not record them",
            "globals-assumed",
        )
    )
    for name, _ in _SETTINGS:
        if not any(s == name or (name.endswith(".") and s.startswith(name)) for s in state):
            out.append(
                Assumption(
                    name,
                    "'inductor'",
                    "the caches fxcache reads are Inductor's: another backend reads none of them",
                    "state-assumed",
                )
                if name == "torch.compile.backend"
                else Assumption(
                    name + ("*" if name.endswith(".") else ""), None, _AS_COMPILED, "state-assumed"
                )
            )
    return tuple(out)


def _grad_mode(kind: KeyKind, entry: DecodedEntry, inference_given: bool) -> Assumption:
    if kind is KeyKind.AOT_AUTOGRAD and entry.backward is not None:
        return Assumption(
            GRAD_MODE,
            "True",
            "the key's entry has a backward, so grad mode was on when it was "
            "compiled (not under torch.no_grad() or torch.inference_mode())",
            "grad-mode-from-entry",
        )
    why = (
        "the key's entry has no backward: compiled under torch.no_grad(), or with grad on and nothing that "
        "needed a backward"
        if kind is KeyKind.AOT_AUTOGRAD
        else "an FX key does not record it"
    )
    return Assumption(
        GRAD_MODE,
        None,
        f"as when the key was compiled ({why})"
        + ("; inference mode off, as the call says" if inference_given else ""),
        "grad-mode-assumed",
    )


def _requires_grad(entry: DecodedEntry, src: str, bound: Mapping[str, str]) -> Assumption | None:
    key_src = bound.get(src, src)
    if key_src not in entry.arg_sources:
        return None  # not an input of this key
    name = f"{user_source(src)}.requires_grad"
    i = entry.arg_sources.index(key_src)
    flag = entry.requires_grad[i] if i < len(entry.requires_grad) else None
    if flag is None:
        return Assumption(
            name,
            None,
            "as when the key was compiled: its entry does not record it",
            "requires-grad-assumed",
        )
    return Assumption(name, str(flag), "as the key's entry records it", "requires-grad-from-entry")


def parameters_assumed(sources: Iterable[str]) -> tuple[Assumption, ...]:
    """The tensor inputs (their user's ``sources``) a call does not say are Parameters or not,
    taken to be ``nn.Parameter`` s as the key's graph shows (its static inputs:
    :func:`~fxcache_core.lookup.param_inputs.parameter_assumed`)."""
    return tuple(
        Assumption(
            f"isinstance({user_source(src)}, nn.Parameter)",
            "True",
            f"as the key's graph records (a static input; a plain tensor: {user_source(src)}=[...]:param=False)",
            "parameter-from-entry",
        )
        for src in sources
    )


def _module_frame(entry: DecodedEntry, frame: CompiledFrom | None) -> bool:
    """The key was compiled from a module's frame (compiled whole, or a method), by its
    recorded frame, else by an input of the module (``L['self']...``)."""
    if frame is not None:
        return frame.whole_module or frame.module_class is not None
    return any(
        (s or "").startswith("L['self']")
        for s in (*entry.arg_sources, *(i.source for i in entry.inputs))
    )


def said(records: Sequence[Assumption]) -> tuple[Reason, ...]:
    """The state records of ``records`` in words, for a decided verdict: the values the
    key's entry shows (``state-from-entry``), then what is taken as when the key was compiled
    (``state-assumed``); () for none. The dtypes and parameters have lines of their own."""
    shown = [a for a in records if a.from_entry]
    rest = [a for a in records if not a.from_entry and a.code not in _OWN_LINES]
    out = []
    if shown:
        out.append(
            Reason(
                "assumed what the key's entry shows, as the call does not say: "
                + ", ".join(
                    f"{a.name}={a.value}" + (" (it has a backward)" if a.name == GRAD_MODE else "")
                    for a in shown
                ),
                "state-from-entry",
            )
        )
    if rest:
        labels = dict(_SETTINGS)
        words = _merged(list(dict.fromkeys(_label(a, labels) for a in rest)))
        out.append(
            Reason(
                "assumed the state the call runs under as when the key was compiled (the cache does not "
                f"record it; a call under other state: give it with {param('inputs')}): "
                + ", ".join(words),
                "state-assumed",
            )
        )
    return tuple(out)


_OWN_LINES = frozenset(
    {
        "dtype-assumed",
        "default-assumed",
        "module-default",
        "tuple-assumed",
        "container-assumed",
        "params-assumed",
    }
)


def _label(a: Assumption, labels: Mapping[str, str]) -> str:
    if a.code == "grad-mode-assumed":
        return "the grad mode"
    if a.code == "requires-grad-assumed":
        return a.name
    if a.code == "module-state-assumed":
        return "self.training (each submodule's too) and the module's other attributes"
    if a.code == "globals-assumed":
        return a.source.partition(",")[0]
    return labels.get(a.name.rstrip("*"), a.name)


_GROUPS = (
    (
        ("torch.compile's mode", "fullgraph", "backend"),
        "torch.compile's mode, fullgraph and backend",
    ),
    (
        ("Dynamo's config", "Inductor's config", "AOTAutograd's config"),
        "Dynamo's, Inductor's and AOTAutograd's config",
    ),
)


def _merged(words: list[str]) -> list[str]:
    """``words`` with each group of settings all there said as one."""
    for group, as_one in _GROUPS:
        if all(w in words for w in group):
            i = words.index(group[0])
            words = [w for w in words if w not in group]
            words.insert(i, as_one)
    return words
