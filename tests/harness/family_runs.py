"""Evaluation families (:mod:`tests.harness.evaluation.families`) built and asked for a torch
test, the way the evaluation asks torch: one fork server (``torch_side --serve``, which
imports torch once and compiles nothing) for the whole session, a forked child per build
and per query, so each answer is a fresh process's (``tests/torch/test_fork_server.py``
checks the fork server against fresh processes). The background builders share it
(:func:`shared_torch`); it is closed when the session's process exits."""

from __future__ import annotations

import atexit
import shutil
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

_LOCK = threading.Lock()
_SERVER: Any = None


class _SharedTorch:
    """:class:`tests.harness.evaluation.run.Torch`'s ``ask``, one request at a time, from any thread."""

    def ask(self, req: dict) -> dict:
        global _SERVER
        with _LOCK:
            if _SERVER is None:
                from tests.harness.evaluation.run import Torch

                _SERVER = Torch()
                atexit.register(_SERVER.close)
            return _SERVER.ask(req)


def shared_torch() -> Any:
    """The session's torch side, for :func:`tests.harness.evaluation.run.evaluate_family` and
    :func:`family_answers` (an object with ``ask(request) -> answer``)."""
    return _SharedTorch()


def family_answers(family: str, base: Path, queries: list[dict[str, Any]]) -> dict[str, Any]:
    """Build ``family`` into ``base/cache`` (its first build sequence), then ask each of
    ``queries`` (calls) on a copy of it: ``{"cache": Path, "build": answer, "answers": [answer,
    ...]}``, each answer :func:`tests.harness.evaluation.torch_side.run_request`'s."""
    from tests.harness.evaluation.families import FAMILIES

    torch = shared_torch()
    cache = base / "cache"
    build = torch.ask({"op": "build", "family": family, "cache_dir": str(cache),
                       "calls": list(FAMILIES[family].build[0])})
    answers = []
    for i, call in enumerate(queries):
        q = base / f"query-{i}"
        shutil.copytree(cache, q)
        answers.append(torch.ask({"op": "query", "family": family, "cache_dir": str(q), "calls": [call]}))
    return {"cache": cache, "build": build, "answers": answers}


def evaluated(name: str, families: Sequence[str]) -> dict[str, dict]:
    """Each of ``families`` evaluated as ``make eval`` does (built, torch asked each query,
    fxcache asked and compared: :func:`tests.harness.evaluation.run.evaluate_family`) in a
    new build dir named for ``name``: family -> its result."""
    from tests.harness.background import build_dir
    from tests.harness.evaluation.families import FAMILIES
    from tests.harness.evaluation.run import evaluate_family

    workdir = build_dir(name)
    return {f: evaluate_family(shared_torch(), FAMILIES[f], workdir, rebuild=True, log=lambda _m: None)
            for f in families}


def rows_by_note(results: Mapping[str, dict], family: str) -> dict[str, dict]:
    """A family's graded rows (one per query) by the query's note."""
    return {r["note"]: r for r in results[family]["rows"]}


def wrong_lines(result: dict) -> list[dict]:
    """The rows of one family's result whose verdict, or a key line of which, is graded wrong."""
    return [r for r in result["rows"]
            if r["verdict"]["grade"] == "wrong" or any(k["grade"] == "wrong" for k in r["keys"])]
