"""The C++ compile steps a compile ran, from the trace's ``chromium_event`` records.

Torch times every C++ compiler run it makes with ``dynamo_timed("compile_file")``
(``run_compile_cmd`` in torch/_inductor/cpp_builder.py): a kernel library
(``CppCodeCache.load_async`` in torch/_inductor/codecache.py), the
preprocessing and building of a precompiled header (``_precompile_header``),
an ISA check program (``VecISA.check_build`` in torch/_inductor/cpu_vec_isa.py).
``dynamo_timed`` logs a ``chromium_event`` at the start (``"ph": "B"``) and
end (``"E"``) of each, with an epoch ``ts`` in microseconds
(torch/_dynamo/utils.py, ``ChromiumEventLogger``); the record carries the
compile id it ran in. With a pool of compile workers
(``compile_threads`` > 1) kernel libraries are built in the workers while the
parent waits in ``async_compile.wait``: those builds are not in the trace, the
wait is.

:class:`StepReader` reads those events of one compile, a record at a time,
into :class:`CompileStep` s. The payload is untrusted: only the payloads that
name one of these events are parsed (bounded), a ``ts`` that is not a finite
number is ignored, and at most :data:`MAX_STEPS` steps are kept per compile.
Nothing here imports torch.
"""

from __future__ import annotations

from dataclasses import dataclass

from fxcache_core.trace.reader import bounded_json
from fxcache_core.trace.record_values import number

MAX_STEPS = 10_000
"""Most compile steps kept per compile (a compile of a large model builds a few hundred)."""
_NAMES = ("compile_file", "async_compile.wait")
STEP_NEEDLES = {"chromium_event": tuple(f'"{n}"'.encode() for n in _NAMES)}
"""What the trace reader looks for in the payloads of the events it otherwise skips."""


@dataclass(frozen=True, slots=True)
class CompileStep:
    """One C++ compiler run (``compile_file``) or one wait on compile workers.

    Attributes:
        name: ``compile_file`` or ``async_compile.wait``.
        start, end: epoch seconds (the events' ``ts``).
        line: the line of its start record in the trace file (orders it against lookups).
        in_wait: a ``compile_file`` run while the compile waited on its workers'
            kernels (``async_compile.wait``): a kernel library build.
    """

    name: str
    start: float
    end: float
    line: int
    in_wait: bool = False

    @property
    def seconds(self) -> float:
        """Its wall time, seconds."""
        return max(0.0, self.end - self.start)


class StepReader:
    """The open and finished steps of one compile while its records are read."""

    def __init__(self) -> None:
        self._open: dict[str, list[tuple[float, int, bool]]] = {}
        self._done: list[CompileStep] = []

    def feed(self, payload: str, line: int) -> None:
        """One ``chromium_event`` payload (JSON text) at ``line`` of its file."""
        if len(self._done) >= MAX_STEPS or not any(f'"{n}"' in payload for n in _NAMES):
            return
        ev = bounded_json(payload, max_values=64)
        if not isinstance(ev, dict) or ev.get("name") not in _NAMES:
            return
        name, ts = ev["name"], number(ev.get("ts"))
        if ts is None:
            return
        stack = self._open.setdefault(name, [])
        if ev.get("ph") == "B" and len(stack) < 64:
            stack.append((ts / 1e6, line, bool(self._open.get("async_compile.wait"))))
        elif ev.get("ph") == "E" and stack:
            start, at, in_wait = stack.pop()
            self._done.append(CompileStep(name, start, max(start, ts / 1e6), at, in_wait))

    def steps(self) -> tuple[CompileStep, ...]:
        """The finished steps, by start line."""
        return tuple(sorted(self._done, key=lambda s: s.line))


__all__ = ["MAX_STEPS", "STEP_NEEDLES", "CompileStep", "StepReader"]
