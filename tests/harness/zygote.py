"""Start the tests' torch build processes by forking one that has imported torch already.

Every background build (the real cache, the model cache, the variants, the pack
app...) is a ``python -m MODULE ARGS`` process that imports torch, Dynamo and
Inductor (about 5 s of CPU each here) and checks the CPU's vector ISAs (a g++ build
per ISA) before it compiles anything. On a 2-core machine those repeated imports
are a good part of ``make test``. The zygote pays them once: it imports what
:data:`_PRELOAD` names, runs torch's ISA checks (:func:`demo.build_cache._save_isa_checks`
keeps their programs for the fresh cache dirs), and then forks a child per request.

A child starts as a fresh process does but for what was imported, exactly as the
oracle's fork server (``tests.harness.oracle.serve_forked``) argues: nothing was traced or
compiled before the fork. It takes the request's environment, working dir and
``sys.argv``, forgets the temp dir the zygote computed (``tempfile.tempdir``: torch's
default cache dir and precompiled headers live under it), and runs the module as
``__main__``. Only what does not depend on what the environment said at ``import
torch`` time may come here (:func:`may_fork`): a run in another environment than the
zygote's starts a fresh process as before. A run under ``TORCH_TRACE`` may: the variable
is read only where torch's logging is set up (``_init_logs``, at import), and the routed
modules start their trace after the import as that would have
(:func:`tests.harness.traced.trace_this_process`).

Requests go over a Unix socket, one connection per request, so builds on several
background threads run at once (each in its own child). :func:`run` is
:func:`demo.build_cache.run_json_subprocess` for the routed modules.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
from typing import Any

# Modules whose ``main`` sets the cache env itself (demo.build_cache.prepare_env), reads
# no env var at import time that the zygote's own prepare_env did not set the same way,
# and starts its TORCH_TRACE, if any, with tests.harness.traced.trace_this_process (after
# the import where torch is imported already). tests.harness.traced: its plans that set
# variables torch reads at import start fresh (traced_subprocess).
# tests.harness.match_runs: the match arguments of the planned calls (a case's inputs; no compile).
# tests.harness.oracle: a query asked as a fresh process's (``torch_lookups(..., fresh=True)``,
# test_gc_concurrent.py's compiles), never its --serve (started with Popen, not here).
_ROUTED = ("demo.build_cache", "tests.harness.model_runs", "tests.harness.variants", "tests.harness.pack_app",
           "tests.harness.blob_app", "tests.harness.oracle", "tests.harness.traced", "tests.harness.match_runs")

# What those modules import lazily, imported before the first fork.
_PRELOAD = ("torch._dynamo", "torch._inductor.compile_fx", "torch._inductor.codecache",
            "torch._functorch._aot_autograd.autograd_cache", "tests.harness.cases", "demo.recorder")


def _relevant(env: dict[str, str]) -> dict[str, str]:
    """What of an environment torch can see at import: not pytest's or fxcache's own."""
    return {k: v for k, v in env.items() if not k.startswith(("PYTEST_", "FXCACHE_"))}


def may_fork(argv: list[str]) -> bool:
    """Whether ``python argv...`` may run in a child of the zygote."""
    return (len(argv) >= 2 and argv[0] == "-m" and argv[1] in _ROUTED
            and "--serve" not in argv)


def _send(sock: socket.socket, obj: Any) -> None:
    data = json.dumps(obj).encode()
    sock.sendall(struct.pack("!Q", len(data)) + data)


def _recv(sock: socket.socket) -> Any:
    head = b""
    while len(head) < 8:
        chunk = sock.recv(8 - len(head))
        if not chunk:
            raise ConnectionError("the zygote closed the connection")
        head += chunk
    (n,) = struct.unpack("!Q", head)
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(1 << 20, n - len(buf)))
        if not chunk:
            raise ConnectionError("the zygote closed the connection")
        buf += chunk
    return json.loads(buf)


def _child(conn: socket.socket, req: dict[str, Any]) -> None:
    """In the forked child: run the request's module as ``__main__``, send its exit
    status and output. Never returns."""
    import runpy

    code = 1
    out = tempfile.TemporaryFile()
    try:
        os.setsid()
        os.environ.clear()
        os.environ.update(req["env"])
        os.chdir(req["cwd"])
        tempfile.tempdir = None  # computed again from this request's TMPDIR
        sys.stdout.flush()
        sys.stderr.flush()
        err = tempfile.TemporaryFile()
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        _send(conn, {"pid": os.getpid()})
        sys.argv = [req["argv"][1], *req["argv"][2:]]
        try:
            runpy.run_module(req["argv"][1], run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:  # noqa: BLE001 - reported as a failed process
            import traceback

            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        out.seek(0)
        err.seek(0)
        _send(conn, {"rc": code, "stdout": out.read().decode(errors="replace"),
                     "stderr": err.read().decode(errors="replace")[-8000:], "cpu": _cpu_seconds()})
    finally:
        os._exit(0)


def _cpu_seconds() -> float:
    """This child's CPU (user + system), its own and its waited-for children's (g++)."""
    import resource

    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def serve(path: str) -> None:
    """The zygote: preload, check the ISAs, then fork a child per connection on ``path``."""
    import importlib
    import signal

    from demo.build_cache import configure_torch, prepare_env

    placeholder = tempfile.mkdtemp(prefix="fxcache-zygote-")
    prepare_env(placeholder, isa_checks=False)
    import torch  # noqa: F401

    configure_torch(isa_checks=True)  # the ISA checks, kept for fresh cache dirs (FXCACHE_ISA_SEED)
    for name in _PRELOAD:
        importlib.import_module(name)
    from tests.harness.guard_profile import skip_guard_latency_profile

    skip_guard_latency_profile()
    import shutil

    shutil.rmtree(placeholder, ignore_errors=True)
    os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(16)
    print("ready", flush=True)
    while True:
        conn, _ = srv.accept()
        try:
            req = _recv(conn)
        except (ConnectionError, ValueError):
            conn.close()
            continue
        if req.get("stop"):
            conn.close()
            return
        if os.fork() == 0:
            srv.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            _child(conn, req)
        conn.close()


class Zygote:
    """A ``python -m tests.harness.zygote PATH`` process and the client side of its socket.

    Thread-safe: each :meth:`run` opens its own connection. Started by :meth:`start`, else
    by the first request; :meth:`close` stops it (children still running finish on their own)."""

    def __init__(self) -> None:
        import threading

        self._lock = threading.Lock()
        self._proc: subprocess.Popen[str] | None = None
        self._ready = False
        self._env: dict[str, str] | None = None
        self._dir = tempfile.mkdtemp(prefix="fxcache-zygote-sock-")
        self._path = os.path.join(self._dir, "sock")

    def start(self, env: dict[str, str]) -> None:
        """Start the zygote in ``env`` (the environment a build's process gets:
        :func:`demo.build_cache._child_env`) unless it has started, without waiting for it:
        it imports torch while the caller goes on, and the first :meth:`run` waits for it."""
        from demo.build_cache import REPO_ROOT

        with self._lock:
            if self._proc is None:
                self._env = env
                self._proc = subprocess.Popen([sys.executable, "-m", "tests.harness.zygote", self._path],
                                              cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE,
                                              stderr=subprocess.DEVNULL, text=True, start_new_session=True)

    def _start(self, env: dict[str, str]) -> bool:
        self.start(env)
        with self._lock:
            assert self._proc is not None and self._proc.stdout is not None
            if not self._ready:
                self._ready = True
                if self._proc.stdout.readline().strip() != "ready":
                    self._proc.kill()
                    self._proc.wait()
            return self._proc.poll() is None and _relevant(env) == _relevant(self._env or {})

    def run(self, argv: list[str], env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str] | None:
        """``python argv...`` in a child of the zygote, as :func:`subprocess.run` would
        return it; None where it may not run there (:func:`may_fork`, another
        environment, a zygote that failed to start): run a fresh process then.

        Raises ``subprocess.TimeoutExpired`` after ``timeout`` seconds (the child is killed)."""
        import signal

        from demo.build_cache import REPO_ROOT

        if not may_fork(argv) or not self._start(env):
            return None
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(self._path)
            s.settimeout(timeout)
            _send(s, {"argv": argv, "env": env, "cwd": str(REPO_ROOT)})
            try:
                pid = _recv(s)["pid"]
                try:
                    res = _recv(s)
                except TimeoutError:
                    os.killpg(pid, signal.SIGKILL)
                    raise subprocess.TimeoutExpired(argv, timeout) from None
            except TimeoutError:  # no child answered at all
                raise subprocess.TimeoutExpired(argv, timeout) from None
            except ConnectionError as e:
                return subprocess.CompletedProcess(argv, 1, "", f"the zygote's child ended with no answer: {e}")
        from tests.harness.background import charge_cpu

        charge_cpu(res.get("cpu", 0.0))
        return subprocess.CompletedProcess(argv, res["rc"], res["stdout"], res["stderr"])

    def close(self) -> None:
        """Stop the zygote (children running go on to their end)."""
        import shutil

        with self._lock:
            proc, self._proc = self._proc, None
        if proc is not None:
            if proc.poll() is None:
                try:
                    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                        s.connect(self._path)
                        _send(s, {"stop": True})
                    proc.wait(timeout=30)
                except (OSError, subprocess.TimeoutExpired):
                    proc.kill()
                    proc.wait()
        shutil.rmtree(self._dir, ignore_errors=True)


if __name__ == "__main__":
    serve(sys.argv[1])
