"""Keys with FX entries only: naming their graph inputs by the names of their symbols.

When torch bypasses the AOTAutograd cache for a graph (``BypassAOTAutogradCache`` in
torch/_functorch/_aot_autograd/autograd_cache.py, e.g. ``Unsupported call_function
target torch._refs.tensor`` for ``torch.tensor([n])`` of a SymInt ``n``, as diffusers'
UNets embed a timestep), it writes no AOTAutograd entry, only the FX key: a call of
that graph looks the FX key up by its own guards. FX entries record no Dynamo
source for their inputs (AOTAutograd entries do: :mod:`fxcache_core.decode.sources`),
so such a key's inputs cannot be bound by name the usual way.

Their symbols can. ``ShapeEnv.create_symbol`` names the symbol of a source ``s{N}``
with ``N = sha256(source.name) % 100``, the next free number on a collision
(``ShapeEnv._generate_unique_id`` in torch/fx/experimental/symbolic_shapes.py, torch
2.13): ``L['timestep']`` is ``s21``, ``L['sample'].size()[0]`` is ``s53``. So each
symbol of the key that exactly one source the call names hashes to is that source's;
a tensor input whose dims carry its own ``.size()[i]`` symbols is that tensor.
:func:`name_inputs` does so only when *every* symbol of the key is explained by one
source the inputs give: a symbol left over (a source not given, a collision, or a
cache from a torch that numbered symbols in order) leaves the key unnamed, as before.
Static tensors (parameters, unmarked dims under ``dynamic=None``) carry no symbol and
stay unnamed, as do a backward graph's tensors (saved activations and gradients, not
inputs of the call; its SymInts are the forward's symbols): the fit checks what it can name.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from fxcache_core.decode.entries import DecodedEntry
from fxcache_core.lookup.binding import InputValue, TensorArg
from fxcache_core.lookup.graph_types import TensorType
from fxcache_core.lookup.inputs import candidates

_PLAIN_RE = re.compile(r"s[0-9]+")
_TOKEN_RE = re.compile(r"\bs[0-9]+\b")
_SIZE_RE = re.compile(r"(.+)\.size\(\)\[([0-9]+)\]")


def symbol_id(source: str) -> int:
    """The number torch first tries for the symbol of ``source`` (``L['x'].size()[0]``
    -> 77): ``ShapeEnv._generate_unique_id``'s ``sha256(name) % 100``."""
    return int(hashlib.sha256(source.encode()).hexdigest(), 16) % 100


@dataclass(frozen=True, slots=True)
class NamedInputs:
    """What :func:`name_inputs` found for one FX graph.

    Attributes:
        by_symbol: symbol -> the source it was made for (``s21`` -> ``L['timestep']``).
        tensors: graph input position -> the source of the tensor it is.
    """

    by_symbol: dict[str, str]
    tensors: dict[int, str]

    def apply(self, d: DecodedEntry) -> DecodedEntry:
        """``d`` with these sources on its inputs (SymInts by symbol, tensors by position)."""
        out = []
        for i in d.inputs:
            src = i.source or (self.by_symbol.get(i.symbol or "") if i.is_symint else self.tensors.get(i.position))
            out.append(replace(i, source=src) if src != i.source else i)
        return replace(d, inputs=tuple(out))


def key_symbols(d: DecodedEntry) -> set[str]:
    """The plain symbols (``s21``) of an entry's inputs: its SymInts and its tensors' sizes
    and strides."""
    out: set[str] = set()
    for i in d.inputs:
        if i.is_symint:
            if i.symbol and _PLAIN_RE.fullmatch(i.symbol):
                out.add(i.symbol)
            elif i.expr:
                out.update(_TOKEN_RE.findall(i.expr))
        elif (tt := TensorType.parse(i.type)) is not None:
            for size in (*tt.sizes, *tt.strides):
                out.update(_TOKEN_RE.findall(size))
    return out


def _candidate_sources(inputs: Mapping[str, InputValue], params: Sequence[str]) -> dict[int, list[str]]:
    """Symbol number -> the sources the call names that hash to it: a scalar input itself
    (an int's symbol; a float or 0-d tensor given there is then named, and the fit says
    that the key takes an int), and a tensor's sizes, strides and storage offset; each
    under every name the key may give the input (:func:`~fxcache_core.lookup.inputs.candidates`)."""
    out: dict[int, list[str]] = {}
    for src, val in inputs.items():
        for c in candidates(src, params):
            names = [c] if not isinstance(val, TensorArg) or not val.shape else []
            if isinstance(val, TensorArg):
                names += [f"{c}.size()[{i}]" for i in range(len(val.shape))]
                names += [f"{c}.stride()[{i}]" for i in range(len(val.shape))] + [f"{c}.storage_offset()"]
            for n in names:
                out.setdefault(symbol_id(n), []).append(n)
    return out


def name_inputs(d: DecodedEntry, inputs: Mapping[str, InputValue],
                params: Sequence[str] = ()) -> NamedInputs | None:
    """Name an FX entry's inputs from its symbols' names (see the module docstring).

    ``params``: the compiled frame's parameter names (so ``timestep`` may also be
    ``L['args'][1]`` or ``L['kwargs']['timestep']``). None unless every plain symbol
    of the entry's inputs is the symbol of exactly one source the inputs give.
    """
    symbols = key_symbols(d)
    if not symbols:
        return None
    cands = _candidate_sources(inputs, params)
    by_symbol: dict[str, str] = {}
    for s in sorted(symbols):
        found = cands.get(int(s[1:]), [])
        if len(found) != 1:
            return None  # not given, or two sources the call names hash alike
        by_symbol[s] = found[0]
    tensors: dict[int, str] = {}
    for i in d.inputs if not d.is_backward else ():  # a backward graph's tensors are saved values
        tt = TensorType.parse(i.type) if not i.is_symint else None
        if tt is None or i.source:
            continue
        bases = set()
        for dim, size in enumerate(tt.sizes):
            m = _SIZE_RE.fullmatch(by_symbol.get(size, ""))
            if m is not None and int(m.group(2)) == dim:
                bases.add(m.group(1))
        if len(bases) == 1:
            tensors[i.position] = bases.pop()
    taken = list(tensors.values())
    tensors = {p: s for p, s in tensors.items() if taken.count(s) == 1}
    return NamedInputs(by_symbol, tensors)
