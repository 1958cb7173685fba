"""An evaluation family (:mod:`tests.harness.evaluation.families`) built and asked in fresh
processes, for a torch test: the build's calls in one ``python -m
tests.harness.evaluation.torch_side`` process, then each query in a process of its own on a
copy of the built cache, as the evaluation asks torch (:func:`family_answers`). torch's
recorded lookups come back per query (the record format of :mod:`tests.harness.oracle`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]


def _request(req: dict) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-m", "tests.harness.evaluation.torch_side", json.dumps(req)],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(f"torch_side {req['op']} {req['family']} failed: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def family_answers(family: str, base: Path, queries: list[dict[str, Any]]) -> dict[str, Any]:
    """Build ``family`` into ``base/cache`` (its first build sequence), then ask each of
    ``queries`` (calls) on a copy of it: ``{"cache": Path, "build": answer, "answers": [answer,
    ...]}``, each answer :func:`tests.harness.evaluation.torch_side.run_request`'s."""
    from tests.harness.evaluation.families import FAMILIES

    cache = base / "cache"
    build = _request({"op": "build", "family": family, "cache_dir": str(cache),
                      "calls": list(FAMILIES[family].build[0])})
    answers = []
    for i, call in enumerate(queries):
        q = base / f"query-{i}"
        shutil.copytree(cache, q)
        answers.append(_request({"op": "query", "family": family, "cache_dir": str(q), "calls": [call]}))
    return {"cache": cache, "build": build, "answers": answers}
