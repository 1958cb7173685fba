"""Build a cache from the model workloads (tests/harness/models.py), and ask torch what it looks up.

    python -m tests.harness.model_runs build CACHE_DIR [--workloads a,b] [--save-blob PATH]
    python -m tests.harness.model_runs oracle CACHE_DIR QUERIES_JSON

Both print one JSON object as the last line of stdout, with lookups and writes in
the record format of ``tests.harness.oracle``.

``build`` runs each workload's build sequences: the calls of one sequence are
made in one process state (so automatic dynamic sees the second call change a
dim), and each sequence starts fresh (:func:`tests.harness.models.fresh_state`).
``--save-blob``: at the end, ``torch.compiler.save_cache_artifacts()`` of the whole
build (``torch._dynamo.reset`` keeps what the process recorded) written there, as a
user ships a warm cache; no compile more.

``oracle`` takes ``[[workload, [call, ...]], ...]``: each query is a sequence of
calls made in a fresh process state, the first call being a fresh process's
first call. Torch's compile of a model costs seconds to minutes on a CPU, and
importing torch and transformers another ten, so one process runs every query:
before each query it resets Dynamo (``torch._dynamo.reset``, which "resets
Dynamo's state as if you had started a fresh process", automatic-dynamic state
included), clears the once-only warnings, compiles the workload anew, and
deletes the entry files the previous query wrote (the recorder sees each
write), so every query sees the cache as it was given. Run it on a copy.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any


def _setup(cache_dir: str) -> tuple[Any, Any]:
    from demo.build_cache import configure_torch, prepare_env

    cache_dir = prepare_env(cache_dir)
    from tests.harness import models  # imports torch and transformers, offline

    configure_torch()
    from demo.recorder import install_recorder

    return models, install_recorder()


def _run_sequence(models: Any, rec: Any, compiled: Any, model: Any, w: Any,
                  calls: list[dict]) -> tuple[list, list, dict | None]:
    lookups, writes, error = [], [], None
    for call in calls:
        rec.clear()
        try:
            models.run_call(w, compiled, model, call, on_phase=rec.set_phase)
        except Exception as e:  # noqa: BLE001 - what torch does is the answer
            error = {"type": type(e).__name__, "message": str(e).strip().splitlines()[0][:500]}
        lookups.append(list(rec.lookups))
        writes.append(list(rec.writes))
        if error:
            break
    return lookups, writes, error


def build(cache_dir: str, names: list[str] | None = None, save_blob: str | None = None,
          trace: str | None = None) -> dict:
    """Run every build sequence of the chosen workloads (default: all) into ``cache_dir``;
    ``save_blob``: then write the process's mega-cache blob there (its path and the
    artifacts per type are the summary's ``blob``); ``trace``: under ``TORCH_TRACE`` there
    (the record of the keywords each key was compiled with, which the cache lacks)."""
    models, rec = _setup(cache_dir)
    import torch

    if trace is not None:
        from tests.harness.traced import start_trace

        start_trace(trace)

    out: dict[str, Any] = {"cache_dir": os.path.abspath(cache_dir), "torch_version": torch.__version__,
                           "workloads": {}}
    t_all = time.perf_counter()
    for name in names or list(models.WORKLOADS):
        w = models.WORKLOADS[name]
        t0 = time.perf_counter()
        seqs = []
        for seq in w.build_calls:
            models.fresh_state()
            model, compiled = w.build()  # a fresh compile; the same weights (fixed seed)
            lookups, writes, error = _run_sequence(models, rec, compiled, model, w, list(seq))
            if error:
                raise RuntimeError(f"{name}: building {seq}: {error}")
            seqs.append({"calls": list(seq), "lookups": lookups, "writes": writes})
        out["workloads"][name] = {"sequences": seqs, "seconds": round(time.perf_counter() - t0, 1)}
    models.fresh_state()
    if save_blob is not None:
        out["blob"] = _save_blob(save_blob)
    out["seconds"] = round(time.perf_counter() - t_all, 1)
    return out


def _save_blob(path: str) -> dict:
    """``torch.compiler.save_cache_artifacts()`` written to ``path``: what it holds."""
    import torch

    got = torch.compiler.save_cache_artifacts()
    if got is None:
        raise RuntimeError("torch recorded no cache artifact to save")
    blob, info = got
    with open(path, "wb") as f:
        f.write(blob)
    return {"path": os.path.abspath(path), "artifacts": {k: len(v) for k, v in info.artifacts.items() if v}}


def oracle(cache_dir: str, queries: list[list[Any]], alone: tuple[str, int] | None = None) -> dict:
    """Torch's lookups for each query (a sequence of calls from a fresh process state).

    ``alone``: ``(another_cache_dir, i)``: also ask query ``i`` alone, in a child forked
    before this process compiles anything (a fresh process's state after the imports,
    as :class:`tests.harness.oracle.ForkServer` gives), on ``another_cache_dir``; its
    result is ``"alone"`` in the answer. The batched queries reset Dynamo between them;
    the child never saw another query."""
    models, rec = _setup(cache_dir)
    import torch

    child = _fork_alone(models, rec, *alone, queries[alone[1]]) if alone else None
    results = []
    written: list[dict] = []
    for name, calls in queries:
        w = models.WORKLOADS[name]
        _forget(cache_dir, written)
        written = []
        models.fresh_state()
        model, compiled = w.build()
        lookups, writes, error = _run_sequence(models, rec, compiled, model, w, list(calls))
        written = [x for per_call in writes for x in per_call]
        results.append({"workload": name, "calls": calls, "lookups": lookups,
                        "writes": writes, "error": error})
    _forget(cache_dir, written)
    out = {"cache_dir": os.path.abspath(cache_dir), "results": results,
           "torch_version": torch.__version__}
    if child is not None:
        out["alone"] = _collect_alone(*child)
    return out


def _fork_alone(models: Any, rec: Any, cache_dir: str, _: int, query: list[Any]) -> tuple[int, int]:
    """Fork a child that answers ``query`` alone on ``cache_dir``; (pid, read fd)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: one query, then _exit (never back into the batch)
        try:
            os.close(r)
            try:
                os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.abspath(cache_dir)
                name, calls = query
                w_ = models.WORKLOADS[name]
                models.fresh_state()
                model, compiled = w_.build()
                lookups, writes, error = _run_sequence(models, rec, compiled, model, w_, list(calls))
                out = {"cache_dir": os.path.abspath(cache_dir), "results": [
                    {"workload": name, "calls": calls, "lookups": lookups, "writes": writes,
                     "error": error}]}
            except BaseException as e:  # noqa: BLE001 - sent to the parent, which raises it
                out = {"failed": f"{type(e).__name__}: {e}"}
            with os.fdopen(w, "w") as f:
                f.write(json.dumps(out, sort_keys=True))
        finally:
            os._exit(0)
    os.close(w)
    return pid, r


def _collect_alone(pid: int, r: int) -> dict:
    with os.fdopen(r) as f:
        text = f.read()
    os.waitpid(pid, 0)
    out = json.loads(text) if text else {"failed": "the alone query's process gave no answer"}
    if "failed" in out:
        raise RuntimeError(f"the alone query failed: {out['failed']}")
    return out


def _forget(cache_dir: str, writes: list[dict]) -> None:
    """Delete the entry files a query wrote, so the next one sees the cache as given."""
    for wr in writes:
        key, entry = wr["key"], wr["entry"]
        if wr["kind"] == "fxgraph":
            path = os.path.join(cache_dir, "fxgraph", key[1:3], key, entry)
        else:
            path = os.path.join(cache_dir, "aotautograd", key, entry)
        try:
            os.unlink(path)
        except FileNotFoundError:
            continue
        try:
            os.rmdir(os.path.dirname(path))  # only if it is empty now: a key it created
        except OSError:
            pass


def build_subprocess(cache_dir: str | os.PathLike[str], workloads: list[str] | None = None,
                     timeout: float = 1800, save_blob: str | os.PathLike[str] | None = None,
                     trace: str | os.PathLike[str] | None = None) -> dict:
    """:func:`build` in a fresh ``python -m tests.harness.model_runs`` process."""
    from demo.build_cache import run_json_subprocess

    argv = ["-m", "tests.harness.model_runs", "build", os.path.abspath(os.fspath(cache_dir))]
    if workloads:
        argv += ["--workloads", ",".join(workloads)]
    if save_blob is not None:
        argv += ["--save-blob", os.path.abspath(os.fspath(save_blob))]
    if trace is not None:
        argv += ["--trace", os.path.abspath(os.fspath(trace))]
    return run_json_subprocess(argv, python=sys.executable, timeout=timeout)


def oracle_subprocess(cache_dir: str | os.PathLike[str], queries: list[list[Any]],
                      timeout: float = 1800, alone: tuple[str | os.PathLike[str], int] | None = None
                      ) -> dict:
    """:func:`oracle` in a fresh process, on ``cache_dir`` as given (use a copy; ``alone``
    names another copy for the query asked alone)."""
    from demo.build_cache import run_json_subprocess

    argv = ["-m", "tests.harness.model_runs", "oracle", os.path.abspath(os.fspath(cache_dir)),
            json.dumps(queries)]
    if alone is not None:
        argv += ["--alone", os.path.abspath(os.fspath(alone[0])), str(alone[1])]
    return run_json_subprocess(argv, python=sys.executable, timeout=timeout)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.harness.model_runs")
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("cache_dir")
    b.add_argument("--workloads", default=None)
    b.add_argument("--save-blob", default=None)
    b.add_argument("--trace", default=None)
    o = sub.add_parser("oracle")
    o.add_argument("cache_dir")
    o.add_argument("queries_json")
    o.add_argument("--alone", nargs=2, metavar=("CACHE_DIR", "INDEX"), default=None)
    ns = p.parse_args(argv)
    if ns.cmd == "build":
        names = [n for n in ns.workloads.split(",") if n] if ns.workloads else None
        result = build(ns.cache_dir, names, ns.save_blob, ns.trace)
    else:
        alone = (ns.alone[0], int(ns.alone[1])) if ns.alone else None
        result = oracle(ns.cache_dir, json.loads(ns.queries_json), alone)
    sys.stdout.write(json.dumps(result, sort_keys=True) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
