"""Run the evaluation: build each family's cache, ask torch each query in a fresh process,
ask ``fxcache match``, and compare (:mod:`tests.harness.evaluation.compare`).

Used by ``python -m tests.harness.evaluation`` (see the package doc).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.harness.evaluation import compare
from tests.harness.evaluation.calls import NEW_KINDS_OPTION, short
from tests.harness.evaluation.families import Family, Query

REPO_ROOT = Path(__file__).resolve().parents[3]


class Torch:
    """Where torch's answers come from: a fork server (``torch_side --serve``: a child per
    request, each a fresh process but for the imports), or with ``fresh`` a new
    ``python -m tests.harness.evaluation.torch_side`` process per request."""

    def __init__(self, fresh: bool = False, timeout: float = 600) -> None:
        self.fresh = fresh
        self.timeout = timeout
        self._proc: Any = None
        self._log: Any = None

    def _env(self) -> dict[str, str]:
        from demo.build_cache import _child_env

        return _child_env()

    def ask(self, req: dict) -> dict:
        """torch_side's answer to ``req``; raises ``RuntimeError`` when it failed."""
        if self.fresh:
            from demo.build_cache import run_json_subprocess

            return run_json_subprocess(["-m", "tests.harness.evaluation.torch_side", json.dumps(req)],
                                       python=sys.executable, timeout=self.timeout)
        if self._proc is None:
            self._log = tempfile.TemporaryFile()
            self._proc = subprocess.Popen([sys.executable, "-m", "tests.harness.evaluation.torch_side", "--serve"],
                                          cwd=REPO_ROOT, env=self._env(), stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, stderr=self._log, text=True,
                                          start_new_session=True)
        self._proc.stdin.write(json.dumps(req) + "\n")
        self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        if not line:
            self._log.seek(0)
            raise RuntimeError("the torch server exited:\n" + self._log.read().decode(errors="replace")[-6000:])
        out = json.loads(line)
        if "failed" in out:
            raise RuntimeError(f"torch failed on {req['family']} {req['op']}:\n{out['failed']}")
        return out

    def close(self) -> None:
        """Ends the server: stdin closed, then, if it is still busy a minute later (a
        child it forked still running), its whole process group killed."""
        if self._proc is not None:
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self._proc.pid, signal.SIGKILL)
                self._proc.wait(timeout=60)
            self._proc = None
            self._log.close()


def present_keys(cache_dir: Path) -> set[str]:
    """The keys (FX and AOTAutograd) the cache holds."""
    from fxcache_core.cache.scan import scan_cache

    return {k.key for k in scan_cache(cache_dir).keys}


def _globals(cache_dir: Path, source_dirs: tuple[str, ...]) -> list[str]:
    """fxcache's global options: the cache dir, and each ``--source-dir OLD=NEW``."""
    return ["--cache-dir", str(cache_dir), *(a for d in source_dirs for a in ("--source-dir", d))]


def explain_traces(cache_dir: Path, traces: list[Path], index_dir: Path, source_dirs: tuple[str, ...] = ()) -> None:
    """``fxcache --cache-dir C explain TRACE`` for each trace, in a fresh process: the usage
    store of ``index_dir`` then holds Dynamo's guards of each compile, which ``match``
    reads as evidence (what a user does with the trace of the run that built the cache).
    ``source_dirs``: ``OLD=NEW`` for ``--source-dir``."""
    env = dict(os.environ, FXCACHE_INDEX_DIR=str(index_dir), COLUMNS="200", NO_COLOR="1")
    env["PYTHONPATH"] = str(REPO_ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    for trace in traces:
        proc = subprocess.run([sys.executable, "-m", "fxcache_cli", *_globals(cache_dir, source_dirs), "explain", "--json",
                               str(trace)], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
        if proc.returncode not in (0, 1):
            raise RuntimeError(f"fxcache explain {trace}: exit {proc.returncode}: {proc.stderr.strip()[-2000:]}")


def own_sources(cache_dir: Path, index_dir: Path, sources: str, nowhere: Path) -> tuple[str, ...]:
    """``--source-dir`` items for the family's own source files (the dirs its cache records
    under ``tests/harness/evaluation``, read off ``fxcache ls --json``): none where they
    are readable (``readable``); each mapped to ``nowhere``, a path that does not exist (``hidden``:
    a cache from another machine, as the closed-world rule sees one); each mapped to a copy
    of it beside ``nowhere`` (``moved``: the same files under another path, which fxcache
    finds only through the mapping). Installed libraries (transformers) stay readable either way."""
    if sources == "readable":
        return ()
    proc = subprocess.run([sys.executable, "-m", "fxcache_cli", "--cache-dir", str(cache_dir), "ls", "--json"],
                          cwd=REPO_ROOT, env=dict(os.environ, FXCACHE_INDEX_DIR=str(index_dir), PYTHONPATH=str(REPO_ROOT)),
                          capture_output=True, text=True, timeout=300)
    marker = "/tests/harness/evaluation/"
    dirs = sorted({m.group(1) for m in re.finditer(r'"(/[^"]*?/tests/harness/evaluation)/[^"/]*\.py"', proc.stdout)})
    assert all(marker[:-1] in d for d in dirs)
    if sources == "hidden":
        return tuple(f"{d}={nowhere}" for d in dirs)
    out = []
    for n, d in enumerate(dirs):
        copy = nowhere.parent / "moved-sources" / str(n)
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(d, copy, ignore=shutil.ignore_patterns("__pycache__"))
        out.append(f"{d}={copy}")
    return tuple(out)


def ask_fxcache(cache_dir: Path, args: list[str], index_dir: Path, source_dirs: tuple[str, ...] = ()
                ) -> tuple[dict | None, str | None, int]:
    """``fxcache --cache-dir C match --json ARGS`` in a fresh process: (its JSON, or None
    and the usage error's line on exit 2; the exit code). ``source_dirs``: ``OLD=NEW`` for
    ``--source-dir``."""
    env = dict(os.environ, FXCACHE_INDEX_DIR=str(index_dir), COLUMNS="200", NO_COLOR="1")
    env["PYTHONPATH"] = str(REPO_ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run([sys.executable, "-m", "fxcache_cli", *_globals(cache_dir, source_dirs), "match", "--json",
                           *args], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    if proc.returncode == 2:
        return None, (proc.stderr.strip().splitlines() or ["(no message)"])[-1], 2
    try:
        return json.loads(proc.stdout), None, proc.returncode
    except json.JSONDecodeError:
        return None, f"exit {proc.returncode}, no JSON: {(proc.stderr.strip().splitlines() or [''])[-1]}", \
            proc.returncode


def build_family(torch: Torch, family: Family, cache_dir: Path) -> list[dict]:
    """Each build sequence of ``family`` in a process of its own, into ``cache_dir``, under
    ``TORCH_TRACE`` (``build-trace-N`` beside the cache: the evidence a user's build run
    would leave, for ``--build-traces``)."""
    out = []
    for n, seq in enumerate(family.build):
        ans = torch.ask({"op": "build", "family": family.name, "cache_dir": str(cache_dir), "calls": list(seq),
                         "trace_dir": str(cache_dir.parent / f"build-trace-{n}")})
        if ans["error"]:
            raise RuntimeError(f"{family.name}: building {seq}: {ans['error']}")
        out.append(ans)
    return out


def trace_build(torch: Torch, family: Family, fdir: Path, writes: list, log: Any) -> list[str]:
    """The trace of a family's build kept from before builds were traced: the build made
    again into a scratch cache under ``TORCH_TRACE`` (its keys are the kept cache's: a
    trace changes no key, and the writes are checked to be the same), the scratch cache
    then removed. Returns the trace dirs, relative to ``fdir``."""
    scratch = fdir / "trace-build"
    shutil.rmtree(scratch, ignore_errors=True)
    log(f"{family.name}: building again under TORCH_TRACE")
    again = build_family(torch, family, scratch / "cache")
    keys = [sorted({w["key"] for per_call in seq for w in per_call}) for seq in writes]
    got = [sorted({w["key"] for per_call in b["writes"] for w in per_call}) for b in again]
    if keys != got:
        raise RuntimeError(f"{family.name}: the traced build wrote other keys than the kept one: rebuild (--rebuild)")
    shutil.rmtree(scratch / "cache", ignore_errors=True)
    return [f"trace-build/build-trace-{n}" for n in range(len(again))]


def torch_answer(torch: Torch, family: Family, query: Query, cache_dir: Path, scratch: Path) -> dict:
    """Torch's lookups for ``query``, made on a copy of ``cache_dir`` (left as it was)."""
    copy = scratch / "query-cache"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(cache_dir, copy, symlinks=True)
    try:
        return torch.ask({"op": "query", "family": family.name, "cache_dir": str(copy), "calls": [query.call],
                          "warm_up": list(query.warm_up)})
    finally:
        shutil.rmtree(copy, ignore_errors=True)


def source_changed(cache_dir: Path) -> str | None:
    """Why the code a kept build compiled is not the code here now: the first line one of
    its keys was traced from that its file (at the recorded path) no longer holds, or that
    lies in a statement of several lines of a file written since the key's entries
    (:func:`fxcache_core.lookup.source_lines.first_change`); None when every line read
    agrees. A family's functions live in worktrees that change, and fxcache rightly calls a
    key of changed code undecided: a kept build of old code is built again, not graded."""
    from fxcache_core.cache.scan import scan_cache
    from fxcache_core.catalog.reader import Catalog
    from fxcache_core.lookup.source_lines import first_change, recorded_lines, written_since

    cat = Catalog(scan_cache(cache_dir))
    for k in cat.scan.keys:
        change = first_change(recorded_lines(cat, k) or (), written_since(cat, k))
        if change is not None:
            return str(change[1])
    return None


def evaluate_family(torch: Torch, family: Family, workdir: Path, *, rebuild: bool, log: Any,
                    new_option: str = NEW_KINDS_OPTION, build_traces: bool = False,
                    source_dirs: tuple[str, ...] = (), sources: str = "readable") -> dict:
    """Build (or reuse) the family's cache and torch's answers, ask fxcache, compare. With
    ``build_traces``, fxcache is first given the traces of the family's build
    (:func:`explain_traces`), where its build recorded them (a build kept from before
    builds were traced has none: the result's ``build_traces`` is then 0).
    ``source_dirs``: ``OLD=NEW`` for fxcache's ``--source-dir``; ``sources``: where fxcache
    reads the family's own source files (:func:`own_sources`)."""
    fdir = workdir / family.name
    cache_dir = fdir / "cache"
    answers_file = fdir / "torch-answers.json"
    calls_now = [[q.call, list(q.warm_up)] for q in family.queries]
    stored = json.loads(answers_file.read_text()) if answers_file.exists() and not rebuild else None
    if stored is not None and (stored.get("build") != [list(s) for s in family.build]
                               or not cache_dir.is_dir()):
        stored = None  # the family's build changed: build again
    if stored is not None and (changed := source_changed(cache_dir)) is not None:
        log(f"{family.name}: {changed}: building again")  # torch's answers were for the old code
        stored = None
    t0 = time.monotonic()
    if stored is None:
        shutil.rmtree(fdir, ignore_errors=True)
        fdir.mkdir(parents=True)
        log(f"{family.name}: building ({len(family.build)} process(es))")
        build = build_family(torch, family, cache_dir)
        stored = {"build": [list(s) for s in family.build], "build_writes": [b["writes"] for b in build],
                  "build_traces": [f"build-trace-{n}" for n in range(len(build))],
                  "torch_version": build[0]["torch_version"],
                  "transformers_version": build[0].get("transformers_version"), "answers": {}}
    build_s = time.monotonic() - t0
    answers = stored["answers"]
    for q, key in zip(family.queries, calls_now, strict=True):
        k = json.dumps(key, sort_keys=True)
        if k not in answers:
            log(f"{family.name}: torch: {short(q.call)}" + (" (after warm-up)" if q.warm_up else ""))
            answers[k] = torch_answer(torch, family, q, cache_dir, fdir)
            answers_file.write_text(json.dumps(stored, sort_keys=True))
    answers_file.write_text(json.dumps(stored, sort_keys=True))
    present = present_keys(cache_dir)
    if build_traces and "build_traces" not in stored:
        stored["build_traces"] = trace_build(torch, family, fdir, stored["build_writes"], log)
        answers_file.write_text(json.dumps(stored, sort_keys=True))
    traces = [fdir / t for t in stored.get("build_traces", ()) if (fdir / t).is_dir()] if build_traces else []
    index_dir = fdir / ("fxcache-index-traced" if build_traces else "fxcache-index")
    source_dirs = source_dirs + own_sources(cache_dir, index_dir, sources, workdir / "no-sources-here")
    if traces:
        shutil.rmtree(index_dir, ignore_errors=True)
        explain_traces(cache_dir, traces, index_dir, source_dirs)
    rows = []
    for q, key in zip(family.queries, calls_now, strict=True):
        ans = answers[json.dumps(key, sort_keys=True)]
        args = family.match_args(q, new_option)
        report, usage, code = ask_fxcache(cache_dir, args, index_dir, source_dirs)
        tv = compare.torch_verdict(ans["lookups"][0] if ans["lookups"] else [], present, ans["error"],
                                   ans["writes"][0] if ans["writes"] else [])
        fline = compare.function_line(report, usage, tv, family.fn)
        klines = compare.key_lines(report, ans["lookups"][0] if ans["lookups"] else [], present)
        rows.append({"call": short(q.call), "note": q.note, "warm_up": [short(c) for c in q.warm_up],
                     "match_args": args, "exit_code": code, "verdict": fline.to_json(),
                     "keys": [ln.to_json() for ln in klines],
                     "torch_lookups": [{"kind": lk["kind"], "key": lk["key"], "status": lk["status"],
                                        "mode": lk["mode"], "hit": lk["hit"]}
                                       for lk in (ans["lookups"][0] if ans["lookups"] else [])],
                     "torch_error": ans["error"]})
    verdicts = [compare.Line(**r["verdict"]) for r in rows]
    keys = [compare.Line(**k) for r in rows for k in r["keys"]]
    return {"versions": {"torch": stored["torch_version"], "transformers": stored.get("transformers_version")},
            "family": family.name, "doc": family.doc, "fn": family.fn, "dynamic": family.dynamic,
            "cache_dir": str(cache_dir), "keys_in_cache": len(present), "build_traces": len(traces), "seconds": round(time.monotonic() - t0, 1),
            "build_seconds": round(build_s, 1), "verdicts": compare.tally(verdicts), "key_lines": compare.tally(keys),
            "rows": rows}
