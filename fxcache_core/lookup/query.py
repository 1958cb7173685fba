"""The call ``match`` asks about: :class:`CallQuery`, a frozen value checked when made.

What the call gives (inputs by name, tensors by position, or placeholder values),
how it is compiled (``torch.compile(dynamic=...)``, ``use_duck_shape``, whether a
saved profile fxcache could not read may change it), and what the question is
narrowed to (one key, one function's keys). :func:`~fxcache_core.lookup.match.match`
makes one per call and carries it through the pass over the keys
(:func:`~fxcache_core.lookup.key_lookup.match_key`) down to the fit of one graph
(:func:`~fxcache_core.lookup.fit.fit`), as gc carries its ``GcPolicy``. Never looks
at a cache.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from fxcache_core.errors import ShapeSpecError, param
from fxcache_core.lookup.binding import (
    GRAD_MODE,
    INFERENCE_MODE,
    DynamicMode,
    InputValue,
    TensorArg,
    is_state_item,
)
from fxcache_core.lookup.pyvalues import PyValue

if TYPE_CHECKING:
    from fxcache_core.cache.scan import CacheKey
    from fxcache_core.catalog.reader import Catalog


@dataclass(frozen=True, slots=True)
class CallQuery:
    """One call of a compiled function, as torch's lookup would see it.

    Attributes:
        inputs: the user's inputs by source (``L['x']`` -> a
            :class:`~fxcache_core.lookup.binding.TensorArg`, an int or a float), see
            :func:`fxcache_core.lookup.binding.parse_shapes`. Once bound to a key they
            are renamed to its sources (:func:`~fxcache_core.lookup.inputs.alias`).
        sym: direct placeholder or symbol values (``t0``/``s77`` -> int) of the one
            key ``only``; None when not given.
        positional: tensor shapes for an FX key's tensor inputs, in graph order
            (FX keys no AOTAutograd entry loads, whose inputs have no sources);
            bound as ``#0``, ``#1``...
        mode: the call's ``torch.compile(dynamic=...)``
            (:class:`~fxcache_core.lookup.binding.DynamicMode`): it decides duck sizing
            and which dims are static.
        duck_shape: torch's ``torch.fx.experimental._config.use_duck_shape``, read by
            ``ShapeEnv.create_symbol`` in torch/fx/experimental/symbolic_shapes.py
            (None: not said).
        pgo: the cache dir holds profile-guided automatic-dynamic state
            (torch/_dynamo/pgo.py) that fxcache could not read, so a first call's
            dims or ints may be dynamic; None: any saved profile counts
            (:meth:`pgo_state`).
        only: the one key asked about (the user named it): it always gets a result.
        function: keep only the keys compiled from the function of that name
            (:func:`~fxcache_core.functions.origin.keys_of_function`).
        recorded: the Python values each key was traced with, as a run's TORCH_TRACE
            recorded Dynamo's guards (key -> one mapping of source -> value per compile:
            :data:`~fxcache_core.lookup.accounting.RecordedConstants`); None: those kept
            in the usage store.
        grad_enabled: the grad mode the call runs under (``torch.is_grad_enabled()``;
            False under ``torch.no_grad()``); None: not said, taken to be as when each
            key was compiled (:mod:`~fxcache_core.lookup.ambient`). Given among the
            inputs as :data:`~fxcache_core.lookup.binding.GRAD_MODE`, it is moved here
            (:meth:`with_grad_mode`).
        state: the other global state and settings the call gives
            (:func:`~fxcache_core.lookup.binding.is_state_item`: ``torch.is_autocast_enabled()``,
            ``torch._dynamo.config.NAME``...), item name -> value; left out: taken to be
            as when each key was compiled (:mod:`~fxcache_core.lookup.global_state`).
            Given among the inputs, they are moved here (:meth:`with_grad_mode`).

    Raises:
        ShapeSpecError: ``sym`` without ``only``, or more than one of ``inputs``,
            ``positional`` and ``sym`` given.
    """

    inputs: Mapping[str, InputValue] = field(default_factory=dict)
    sym: Mapping[str, int] | None = None
    positional: Sequence[TensorArg] = ()
    mode: DynamicMode = DynamicMode.UNKNOWN
    duck_shape: bool | None = None
    pgo: bool | None = None
    only: CacheKey | None = None
    function: str | None = None
    recorded: Mapping[str, Sequence[Mapping[str, object]]] | None = None
    grad_enabled: bool | None = None
    state: Mapping[str, PyValue] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.sym and self.only is None:
            raise ShapeSpecError(f"{param('sym')} binds placeholders of one key: give {param('key')} too",
                                 param="sym", value=dict(self.sym))
        if sum(map(bool, (self.sym, self.inputs, self.positional))) > 1:
            raise ShapeSpecError(f"give one of {param('inputs')}, {param('arg')} or {param('sym')}",
                                 param="inputs")

    @property
    def forced(self) -> bool:
        """Whether every key looked at gets a result: the user named the key (``only``)."""
        return self.only is not None

    def pgo_state(self, catalog: Catalog) -> bool:
        """``pgo``, or where it is None whether ``catalog``'s cache dir holds any
        saved profile (:meth:`~fxcache_core.catalog.reader.Catalog.has_pgo_state`)."""
        return catalog.has_pgo_state() if self.pgo is None else self.pgo

    def with_grad_mode(self) -> CallQuery:
        """The query with the grad mode given among its inputs
        (:data:`~fxcache_core.lookup.binding.GRAD_MODE`) moved to ``grad_enabled``, and the
        other state items (:func:`~fxcache_core.lookup.binding.is_state_item`) to ``state``.
        Inference mode on (``torch.is_inference_mode_enabled()=True``) turns the grad mode off.

        Raises:
            ShapeSpecError: inference mode on with the grad mode given as enabled."""
        given = {s: v for s, v in self.inputs.items() if is_state_item(s)}
        if not given:
            return self
        rest = {s: v for s, v in self.inputs.items() if s not in given}
        grad = given.pop(GRAD_MODE, None)
        grad_enabled = self.grad_enabled if grad is None else bool(getattr(grad, "value", grad))
        inference = given.get(INFERENCE_MODE)
        if inference is not None and getattr(inference, "value", None) is True:
            if grad_enabled:
                raise ShapeSpecError(f"{INFERENCE_MODE}=True turns grad off: {GRAD_MODE}=True cannot hold with it",
                                     param="inputs")
            grad_enabled = False
        return replace(self, inputs=rest, grad_enabled=grad_enabled, state={**self.state, **given})

    def by_position(self) -> CallQuery:
        """The query with its positional tensors as the inputs ``#0``, ``#1``... (the
        names :func:`~fxcache_core.lookup.fit.positional_inputs` gives an FX graph's
        tensor inputs) and no ``positional`` left."""
        return replace(self, inputs={f"#{n}": t for n, t in enumerate(self.positional)}, positional=())
