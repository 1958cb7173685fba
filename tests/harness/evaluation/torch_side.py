"""The torch side of the evaluation: build a family's cache, and ask torch what one call looks up.

    python -m tests.harness.evaluation.torch_side --serve      # one JSON request a line
    python -m tests.harness.evaluation.torch_side REQUEST_JSON # one request, this process

A request is ``{"op": "build" | "query", "family": NAME, "cache_dir": DIR, "calls": [call, ...],
"warm_up": [call, ...], "trace_dir": DIR}`` (``trace_dir``, optional: run under ``TORCH_TRACE``). ``build`` makes ``calls`` (one build sequence) in one process,
as a user's run would, into ``cache_dir``; ``query`` makes the ``warm_up`` calls, unrecorded,
then the one call in ``calls``. The answer has torch's lookups and writes per call, in the
record format of ``tests.harness.oracle`` (``demo.recorder`` wraps ``find_guarded_entry``),
and the error a call raised, if any.

Fresh processes: ``--serve`` is the oracle's fork server loop
(:func:`tests.harness.oracle.serve_forked`) answering :func:`run_request`: it imports torch,
Inductor and transformers, the family modules (which define functions and build no
model), and computes torch's machine facts, then forks one child per request and never
compiles or traces anything itself. Each child starts as a fresh process does
after those imports (the argument of ``tests.harness.oracle.ForkServer``, checked against
fresh processes in tests/torch/test_fork_server.py), builds its model, compiles and makes
its calls, and exits. ``python -m tests.harness.evaluation --fresh`` runs every request in
a fresh ``python -m`` process instead, to check.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from typing import Any

from tests.harness.evaluation.calls import Call, arguments, is_shape
from tests.harness.evaluation.families import FAMILIES, Family

_PRELOAD = ("torch._dynamo", "torch._inductor.compile_fx", "torch._inductor.codecache",
            "torch._functorch._aot_autograd.autograd_cache",
            "tests.harness.evaluation.fns", "tests.harness.evaluation.hf",
            "tests.harness.evaluation.fns_r4", "tests.harness.evaluation.hf_r4",
            "tests.harness.evaluation.fns_r5", "tests.harness.evaluation.hf_r5",
            "tests.harness.evaluation.fns_r6", "tests.harness.evaluation.hf_r6",
            "tests.harness.evaluation.fns_r7", "tests.harness.evaluation.hf_r7",
            "tests.harness.evaluation.fns_r8", "tests.harness.evaluation.hf_r8")


def _tensor(spec: Any, seed: int, name: str) -> Any:
    import torch

    shape, dtype = (spec, "float32") if is_shape(spec) else (spec["t"], spec.get("dtype", "float32"))
    g = torch.Generator().manual_seed(seed)
    dt = getattr(torch, dtype)
    if isinstance(spec, dict) and spec.get("stride"):
        t = torch.empty_strided(shape, spec["stride"], dtype=dt)
        t.copy_(torch.randn(shape, generator=g, dtype=torch.float32).to(dt))
    elif dt == torch.bool:
        t = torch.ones(shape, dtype=dt)
    elif dt.is_floating_point:
        t = torch.randn(shape, generator=g, dtype=torch.float32).to(dt)
    elif "mask" in name:  # an attention mask: all ones, as a tokenizer gives it unpadded
        t = torch.ones(shape, dtype=dt)
    elif "type" in name:  # token type ids: segments 0 and 1
        t = torch.randint(0, 2, shape, generator=g, dtype=dt)
    else:  # token ids: within every model's vocabulary
        t = torch.randint(1, 50, shape, generator=g, dtype=dt)
    if isinstance(spec, dict) and spec.get("param"):  # an nn.Parameter: requires grad unless rg is False
        t = torch.nn.Parameter(t, requires_grad=bool(spec.get("rg", True)))
    if isinstance(spec, dict) and spec.get("mark"):
        for d in spec["mark"]:
            kw = {k: spec[k] for k in ("min", "max") if k in spec}
            torch._dynamo.mark_dynamic(t, d, **kw)
    if isinstance(spec, dict) and spec.get("static"):
        for d in spec["static"]:
            torch._dynamo.mark_static(t, d)
    if isinstance(spec, dict) and spec.get("rg") and not spec.get("param"):
        t.requires_grad_(True)
    return t


def _value(v: Any, seed: int, name: str) -> Any:
    if is_shape(v) or (isinstance(v, dict) and "t" in v):
        return _tensor(v, seed, name)
    if isinstance(v, dict) and "list" in v:
        return [_tensor(el, seed * 10 + i, name) for i, el in enumerate(v["list"])]
    if isinstance(v, dict) and "tuple" in v:
        return tuple(_value(x, seed * 10 + i, name) if isinstance(x, (list, dict)) else x
                     for i, x in enumerate(v["tuple"]))
    if isinstance(v, dict) and "dict" in v:
        return {k: _value(x, seed * 10 + i, k) for i, (k, x) in enumerate(v["dict"].items())}
    if isinstance(v, dict) and "dtype" in v:
        import torch

        return getattr(torch, v["dtype"])
    return v


def make_inputs(family: Family, call: Call) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """``(args, kwargs)`` of one call (the first ``family.positional`` by position)."""
    args, kwargs = [], {}
    made: dict[str, Any] = {}
    for i, (name, v) in enumerate(arguments(call).items()):
        if isinstance(v, dict) and "star" in v:
            args.extend(_tensor(el, i * 10 + j, name) for j, el in enumerate(v["star"]))
            continue
        # {"same": "a"}: the very object given for parameter a (one tensor for two parameters)
        value = made[v["same"]] if isinstance(v, dict) and "same" in v else _value(v, i, name)
        made[name] = value
        if i < family.positional:
            args.append(value)
        else:
            kwargs[name] = value
    return tuple(args), kwargs


def _target(family: Family) -> Any:
    module, attr = family.target.split(":")
    return getattr(importlib.import_module(module), attr)


def _compiled(family: Family, first: Call | None = None) -> tuple[Any, Any]:
    """(the eager model or None, the compiled callable); ``first``: the process's first call,
    whose ``@compile`` (``torch.compile`` keywords), ``@dynamo`` and ``@inductor`` (config
    values) hold for the whole process, set before anything is compiled."""
    import torch

    first = first or {}
    for mod, values in ((torch._dynamo.config, first.get("@dynamo")), (torch._inductor.config, first.get("@inductor"))):
        for k, v in (values or {}).items():
            setattr(mod, k, v)
    obj = _target(family)
    model = obj() if family.model else None
    return model, torch.compile(model if family.model else obj, dynamic=family.dynamic, **(first.get("@compile") or {}))


def _ambient(call: Call) -> Any:
    """The context a call runs in: its grad mode (``@grad``; ``@inference``: inference mode),
    ``@autocast`` (a CPU autocast dtype) and ``@default_dtype``."""
    import contextlib

    import torch

    stack = contextlib.ExitStack()
    if call.get("@inference"):
        stack.enter_context(torch.inference_mode())
    else:
        stack.enter_context(torch.enable_grad() if call.get("@grad") else torch.no_grad())
    if call.get("@autocast"):
        stack.enter_context(torch.autocast("cpu", dtype=getattr(torch, call["@autocast"])))
    if call.get("@default_dtype"):
        before = torch.get_default_dtype()
        torch.set_default_dtype(getattr(torch, call["@default_dtype"]))
        stack.callback(torch.set_default_dtype, before)
    return stack


def _call(family: Family, compiled: Any, model: Any, call: Call, on_phase: Any = None) -> None:

    args, kwargs = make_inputs(family, call)
    if model is not None:
        model.train(bool(call.get("@train", False)))
        for attr, v in (call.get("@set") or {}).items():
            setattr(model, attr, v)
    if call.get("@global"):
        module = importlib.import_module(family.target.split(":")[0])
        for g, v in call["@global"].items():
            setattr(module, g, v)
    if on_phase is not None:
        on_phase("forward")
    if family.train:
        loss = compiled(*args, **kwargs)
        if on_phase is not None:
            on_phase("backward")
        loss.backward()
        if model is not None:
            model.zero_grad(set_to_none=True)
    else:
        with _ambient(call):
            out = compiled(*args, **kwargs)
            if call.get("@backward"):
                out.sum().backward()


def run_request(req: dict) -> dict:
    """In this process (fresh, or a fresh fork): the request's calls, recorded."""
    from demo.build_cache import configure_torch, prepare_env

    cache_dir = prepare_env(req["cache_dir"], isa_checks=False)
    import torch

    if req.get("trace_dir"):
        from tests.harness.traced import start_trace

        start_trace(req["trace_dir"])

    configure_torch(isa_checks=False)
    from demo.recorder import counters, install_recorder

    family = FAMILIES[req["family"]]
    rec = install_recorder()
    torch._dynamo.reset()
    model, compiled = _compiled(family, ((req.get("warm_up") or []) + req["calls"])[0])
    for call in req.get("warm_up") or ():
        _call(family, compiled, model, call)
    lookups, writes, error = [], [], None
    for call in req["calls"]:
        torch._dynamo.utils.counters.clear()
        rec.clear()
        try:
            _call(family, compiled, model, call, on_phase=rec.set_phase)
        except Exception as e:  # noqa: BLE001 - what torch does is the answer
            error = {"type": type(e).__name__, "message": str(e).strip().splitlines()[0][:500] if str(e).strip()
                     else ""}
        lookups.append(list(rec.lookups))
        writes.append(list(rec.writes))
        if error:
            break
    return {"cache_dir": cache_dir, "family": family.name, "op": req["op"], "calls": req["calls"],
            "warm_up": req.get("warm_up") or [], "lookups": lookups, "writes": writes, "error": error,
            "counters": counters(), "torch_version": torch.__version__,
            "transformers_version": _transformers_version(), "pid": os.getpid()}


def _transformers_version() -> str | None:
    module = sys.modules.get("transformers")
    return getattr(module, "__version__", None)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--serve"]:
        from tests.harness.oracle import serve_stdio

        serve_stdio(run_request, _PRELOAD)  # the oracle's fork server loop, answering run_request
        return 0
    if len(argv) != 1:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    out = json.dumps(run_request(json.loads(argv[0])), sort_keys=True)
    sys.stdout.write(out + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
