"""Running the ``fxcache`` command from the tests, and what one run did (:class:`Run`).

Three ways, by what a test checks:

- :func:`fxcache_forked`: what the command parses, decides and prints. The run is a
  process of its own, forked from a server that imported ``fxcache_cli`` and the
  command modules once (:class:`CliServer`): its own environment, working dir, stdout
  and stderr (files, as in a pipe, never a terminal), exit code, and fxcache's
  per-decode memory budget on, as users run it; nothing of the test process (its
  ``os.environ``, ``sys.stdout``, the background build threads) is touched. It costs a
  fork instead of a fresh interpreter's start-up (about half a second of imports).
  :func:`tests.helpers.run_fxcache` uses it.
- ``python -m fxcache_cli`` in a fresh interpreter where the process is what is tested
  (start-up imports, SIGPIPE, the console script's exit codes, stdin:
  :func:`tests.helpers.run_module`, tests/cli/test_startup.py,
  tests/cli/test_cli_conventions.py), and :func:`run_measured` where its cost is (peak RSS,
  CPU, time: the hostile tests).
- :func:`fxcache_in_process` only where a test patches fxcache's own code for the run
  (a hook into a walk); it swaps ``sys.argv``, ``sys.stdout`` and ``sys.stderr`` of this
  process while it runs, so nothing else may print meanwhile.
"""

from __future__ import annotations

import functools
import io
import json
import os
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True, slots=True)
class Run:
    """What one run of a command did, read like ``subprocess.CompletedProcess``.

    Attributes:
        returncode: the exit status.
        stdout_bytes / stderr_bytes: what it wrote, as bytes.
        seconds: wall time of the run (:func:`run_measured` only), in seconds.
        cpu: user + system CPU seconds of the command (:func:`run_measured` only).
        maxrss_kb: peak resident set size of the command in KiB (:func:`run_measured` only).
    """

    returncode: int
    stdout_bytes: bytes
    stderr_bytes: bytes
    seconds: float | None = None
    cpu: float | None = None
    maxrss_kb: int | None = None

    @property
    def stdout(self) -> str:
        """stdout as text (UTF-8; a byte that is not: ``\\xNN``)."""
        return self.stdout_bytes.decode("utf-8", "backslashreplace")

    @property
    def stderr(self) -> str:
        """stderr as text (UTF-8; a byte that is not: ``\\xNN``)."""
        return self.stderr_bytes.decode("utf-8", "backslashreplace")

    def __repr__(self) -> str:
        cost = "".join([f" {self.seconds:.2f}s" if self.seconds is not None else "",
                        f" cpu={self.cpu:.2f}s" if self.cpu is not None else "",
                        f" {self.maxrss_kb // 1024}MB" if self.maxrss_kb is not None else ""])
        return f"rc={self.returncode}{cost}\nstdout: {self.stdout[-1500:]}\nstderr: {self.stderr[-1500:]}"


def child_env(env: Mapping[str, str] | None = None, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment (or ``base``) plus ``env``, with the repo root first on
    ``PYTHONPATH`` (so a child imports this tree's ``fxcache_*``, ``demo`` and ``tests``)."""
    out = dict(os.environ if base is None else base)
    if env:
        out.update(env)
    pp = out.get("PYTHONPATH")
    out["PYTHONPATH"] = str(REPO_ROOT) + (os.pathsep + pp if pp else "")
    return out


# --- a measured child -------------------------------------------------------------

# Runs argv as the only child of this wrapper and reports its exit code, output, wall
# time, CPU and peak RSS (RUSAGE_CHILDREN: in the test process it would hold every
# earlier child's peak too). With "1" first, the child's stdout is a pipe whose reader
# is already gone.
_MEASURE = r"""
import json, os, resource, subprocess, sys, time
closed = sys.argv[1] == "1"
if closed:
    r, w = os.pipe()
    os.close(r)
t = time.perf_counter()
p = subprocess.run(sys.argv[2:], capture_output=not closed,
                   stdout=w if closed else None, stderr=subprocess.PIPE if closed else None)
seconds = time.perf_counter() - t
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": p.returncode, "seconds": seconds, "cpu": u.ru_utime + u.ru_stime,
                  "maxrss_kb": u.ru_maxrss, "out": (p.stdout or b"").hex(), "err": (p.stderr or b"").hex()}))
"""


def run_measured(argv: Sequence[str], env: Mapping[str, str] | None = None, timeout: float = 120,
            pipe_closed: bool = False) -> Run:
    """Run ``argv`` (``[python, ...]`` or a command) in a fresh process, measured: its
    :class:`Run` with ``seconds``, ``cpu`` and ``maxrss_kb``. ``env`` is added to this
    process's environment (:func:`child_env`); with ``pipe_closed`` its stdout is a pipe
    nobody reads. Raises ``subprocess.TimeoutExpired`` after ``timeout`` seconds."""
    p = subprocess.run([sys.executable, "-c", _MEASURE, "1" if pipe_closed else "0", *map(str, argv)],
                       cwd=REPO_ROOT, env=child_env(env), capture_output=True, timeout=timeout)
    m = json.loads(p.stdout)
    return Run(m["rc"], bytes.fromhex(m["out"]), bytes.fromhex(m["err"]),
               seconds=m["seconds"], cpu=m["cpu"], maxrss_kb=m["maxrss_kb"])


# A fixed piece of Python, and the CPU it takes (seconds, its process's start included) on
# a machine as fast as the one the suite's CPU limits were set on. The same 2-core kind of
# machine has run it in 0.42 s to 0.70 s of CPU on one day (its cores' speed varies), and
# the hostile-input commands' CPU grew with it.
_CALIBRATION = "s = 0\nfor i in range(3_000_000):\n    s += i * i\n"
_CALIBRATION_CPU_S = 0.30


@functools.cache
def machine_slowdown() -> float:
    """How much slower this machine runs a fixed piece of Python now than the machine the
    suite's CPU limits were set on (the least of three fresh runs), never less than 1: a
    CPU limit times this bounds the same work on a slower or busier machine."""
    took = min(run_measured([sys.executable, "-c", _CALIBRATION]).cpu for _ in range(3))
    return max(1.0, took / _CALIBRATION_CPU_S)


# --- forked runs ------------------------------------------------------------------


# What fxcache's commands import only when they run (rich's console for human output,
# the parts of sympy that guard arithmetic loads on first use): imported by the server,
# so no forked run pays them (about a second each otherwise).
_LAZY_IMPORTS = ("rich.console", "rich.markup", "rich.text", "rich.table", "typer._click.decorators",
                 "sympy.combinatorics", "sympy.tensor.tensor")

# What the commands that ask the installed torch import of it (fxcache_core.keying.current:
# ``key --current``, ``gc --stale``, ``unpack --dry-run``): imported, once, by the torch
# server only (about 6 s of CPU a run otherwise). Importing them computes nothing that
# those commands compute (torch_key, the system info, the config's portable form).
_TORCH_IMPORTS = ("torch", "torch._inductor.codecache", "torch._inductor.config",
                  "torch._inductor.config_comms", "torch._inductor.utils")


def torch_relevant(env: Mapping[str, str]) -> dict[str, str]:
    """What of an environment torch may read at its import: all but pytest's and
    fxcache's own variables (``PYTEST_*``, ``FXCACHE_*``)."""
    return {k: v for k, v in env.items() if not k.startswith(("PYTEST_", "FXCACHE_"))}


class _BlockTorch:
    """A ``sys.meta_path`` finder that makes ``import torch`` (and ``torch.*``) raise
    ``ModuleNotFoundError``, as :data:`tests.helpers._BLOCK_TORCH_RUNNER`'s does in a
    fresh process: the run proves that its path never needs torch."""

    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(f"import of {name!r} blocked: this run must not need torch", name=name)
        return None


def _child(conn, req: dict) -> None:
    """In the forked child: run ``fxcache ARGS`` as its own process with the request's
    environment and working dir (``block_torch``: with ``import torch`` made impossible,
    as in a fresh process: the server never imported it); send the exit code and
    output. Never returns."""
    import tempfile

    code = 1
    try:
        os.setsid()
        os.environ.clear()
        os.environ.update(req["env"])
        os.chdir(req["cwd"])
        tempfile.tempdir = None  # computed again from this run's TMPDIR
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        conn.send(os.getpid())
        if req.get("block_torch"):
            sys.meta_path.insert(0, _BlockTorch())
        sys.argv = ["fxcache", *req["args"]]
        try:
            from fxcache_cli.fxcache import main

            main()
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:  # noqa: BLE001 - reported as a process that crashed
            import traceback

            traceback.print_exc()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        out.seek(0)
        err.seek(0)
        conn.send((code, out.read(), err.read()))
    finally:
        os._exit(0)


def serve(address: str, with_torch: bool = False) -> None:
    """The server (``python -m tests.cli_run ADDRESS [--torch]``): import every module of
    ``fxcache_core`` and ``fxcache_cli`` (none imports torch), with ``with_torch`` then
    :data:`_TORCH_IMPORTS` in this environment, then fork a child per request on the Unix
    socket ``address``, until a stop request or the end of stdin."""
    import importlib
    import pkgutil
    import select
    import signal
    import socket
    from multiprocessing.connection import Connection

    import fxcache_cli
    import fxcache_core

    for pkg in (fxcache_core, fxcache_cli):
        for mod in pkgutil.walk_packages(pkg.__path__, f"{pkg.__name__}."):
            if not mod.name.endswith(".__main__"):
                importlib.import_module(mod.name)
    for name in _LAZY_IMPORTS:
        importlib.import_module(name)
    assert "torch" not in sys.modules, "a module of fxcache imported torch"
    if with_torch:
        import warnings

        with warnings.catch_warnings():  # as fxcache_core.keying.current imports it
            warnings.simplefilter("ignore")
            for name in _TORCH_IMPORTS:
                importlib.import_module(name)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(address)
    srv.listen(16)
    print("ready", flush=True)
    while True:
        # stdin is a pipe from the test process: at its end (that process is gone, even
        # killed) the server ends too.
        ready, _, _ = select.select([srv, sys.stdin], [], [])
        if sys.stdin in ready:
            return
        sock, _ = srv.accept()
        conn = Connection(sock.detach())
        try:
            req = conn.recv()
        except (EOFError, OSError):
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


class CliServer:
    """A ``python -m tests.cli_run ADDRESS [--torch]`` process and the client side of its socket.

    Thread-safe (one connection per run); started by the first run; :meth:`close`
    stops it (and is registered to run when this process exits). ``with_torch``: the
    server has imported torch too (:data:`_TORCH_IMPORTS`), in the environment of its
    first run (:attr:`env`)."""

    def __init__(self, with_torch: bool = False) -> None:
        import tempfile

        self._lock = threading.Lock()
        self._proc: subprocess.Popen[str] | None = None
        self._dir = tempfile.mkdtemp(prefix="fxcache-cli-server-")
        self.address = os.path.join(self._dir, "sock")
        self.with_torch = with_torch
        self.env: dict[str, str] | None = None
        """The environment the server started in (torch imported there, ``with_torch``)."""

    def start(self, env: Mapping[str, str] | None = None) -> None:
        """Start the server (if it is not running) in ``env`` (default: :func:`child_env`)."""
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self.env = dict(env) if env is not None else child_env()
                argv = [sys.executable, "-m", "tests.cli_run", self.address, *(["--torch"] if self.with_torch else [])]
                self._proc = subprocess.Popen(argv,
                                              cwd=REPO_ROOT, env=self.env, stdin=subprocess.PIPE,
                                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                              start_new_session=True)
                assert self._proc.stdout is not None
                line = self._proc.stdout.readline().strip()
                if line != "ready":
                    self._proc.kill()
                    self._proc.wait()
                    raise RuntimeError("the fxcache test server did not start")

    def serves(self, env: Mapping[str, str]) -> bool:
        """Whether a run in ``env`` may fork from this server: always, but for a server
        ``with_torch``, whose torch was imported where ``env`` may differ in what torch
        reads at import (:func:`torch_relevant`); that one starts in ``env`` if it has not
        started yet. A run it does not serve runs as a fresh process."""
        self.start(env if self.with_torch else None)
        return not self.with_torch or torch_relevant(env) == torch_relevant(self.env or {})

    def run(self, args: Sequence[str], env: Mapping[str, str], cwd: str, timeout: float,
            block_torch: bool = False) -> Run:
        """``fxcache ARGS`` in a forked child with exactly ``env`` and ``cwd`` (``block_torch``:
        where any ``import torch`` raises ``ModuleNotFoundError``). Raises
        ``subprocess.TimeoutExpired`` after ``timeout`` seconds (the child is killed)."""
        import signal
        from multiprocessing.connection import Client

        self.start()
        args = [str(a) for a in args]
        with Client(self.address, family="AF_UNIX") as conn:
            conn.send({"args": args, "env": dict(env), "cwd": cwd, "block_torch": block_torch})
            if not conn.poll(timeout):
                raise subprocess.TimeoutExpired(["fxcache", *args], timeout)
            pid = conn.recv()
            if not conn.poll(timeout):
                os.killpg(pid, signal.SIGKILL)
                raise subprocess.TimeoutExpired(["fxcache", *args], timeout)
            try:
                code, out, err = conn.recv()
            except EOFError:
                return Run(1, b"", b"the forked fxcache ended with no answer")
        return Run(code, out, err)

    def close(self) -> None:
        """Stop the server (children still running finish on their own)."""
        import shutil
        from multiprocessing.connection import Client

        with self._lock:
            proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            try:
                with Client(self.address, family="AF_UNIX") as conn:
                    conn.send({"stop": True})
                proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait()
        shutil.rmtree(self._dir, ignore_errors=True)


_SERVERS: dict[bool, CliServer] = {}
_SERVER_LOCK = threading.Lock()


def _session_server(with_torch: bool = False) -> CliServer:
    with _SERVER_LOCK:
        if with_torch not in _SERVERS:
            import atexit

            _SERVERS[with_torch] = server = CliServer(with_torch)
            atexit.register(server.close)
        return _SERVERS[with_torch]


def fxcache_forked(*args: str, env: Mapping[str, str] | None = None, timeout: float = 300,
                   block_torch: bool = False) -> Run:
    """``fxcache ARGS...`` as a process forked from the session's :class:`CliServer`,
    with this process's environment plus ``env`` and its working dir; ``block_torch``:
    any ``import torch`` in it raises ``ModuleNotFoundError`` (the server has not
    imported torch: :func:`serve` checks), so the run proves its path never needs torch."""
    return _session_server().run(args, child_env(env), os.getcwd(), timeout, block_torch=block_torch)


TORCH_SERVER_BASE_ENV: dict[str, str] | None = None
"""The environment :func:`fxcache_forked_with_torch`'s runs start from, and its server in:
the session's as conftest set it up (``pytest_configure``), not this process's of the
moment, which a test running meanwhile may have changed (a build thread asks too).
None: this process's environment at each run."""


def fxcache_forked_with_torch(*args: str, env: Mapping[str, str] | None = None, timeout: float = 300) -> Run | None:
    """``fxcache ARGS...`` of a command that imports torch (``key --current``, ``gc
    --stale``, ``unpack --dry-run``) as a process forked from the session's second
    :class:`CliServer`, which has imported torch too: as :func:`fxcache_forked`, less the
    import of torch each run would pay, in :data:`TORCH_SERVER_BASE_ENV` plus ``env``.
    None where that differs from the server's environment in what torch reads at import
    (:meth:`CliServer.serves`): run a fresh process then."""
    server = _session_server(with_torch=True)
    full = child_env(env, base=TORCH_SERVER_BASE_ENV)
    if not server.serves(full):
        return None
    return server.run(args, full, os.getcwd(), timeout)


def fxcache_forked_as(args: Sequence[str], env: Mapping[str, str], cwd: str | os.PathLike[str],
                      timeout: float = 300) -> Run:
    """``fxcache ARGS`` forked from the session's :class:`CliServer` with exactly ``env``
    (nothing of this process's) and working dir ``cwd``: a caller that builds a
    command's whole environment itself (``tools.render_docs``'s runs)."""
    return _session_server().run(args, env, os.fspath(cwd), timeout)


def fxcache_in_process(*args: str) -> Run:
    """``fxcache ARGS...`` through :func:`fxcache_cli.fxcache.main` in this process, stdout and
    stderr captured (never a terminal: as in a pipe), the exit code as main gave it. Only
    for a test that patches fxcache's code for the run: it swaps ``sys.argv``,
    ``sys.stdout`` and ``sys.stderr`` while it runs."""
    from fxcache_cli.fxcache import main

    argv, stdout, stderr = sys.argv, sys.stdout, sys.stderr
    sys.argv = ["fxcache", *map(str, args)]
    sys.stdout, sys.stderr = io.StringIO(), io.StringIO()
    code = 0
    try:
        main()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        out, err = sys.stdout.getvalue(), sys.stderr.getvalue()
        sys.argv, sys.stdout, sys.stderr = argv, stdout, stderr
    return Run(code, out.encode("utf-8", "surrogatepass"), err.encode("utf-8", "surrogatepass"))


if __name__ == "__main__":
    serve(sys.argv[1], with_torch="--torch" in sys.argv[2:])
