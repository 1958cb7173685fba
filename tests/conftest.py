"""Shared fixtures and the test tiers.

The suite has three tiers (``make test-fast`` runs the first two, ``make test`` all):

- ``tests/unit``: the library in-process, on synthetic inputs; no torch.
- ``tests/cli``: the CLI (a subprocess where the process is what is tested) on
  synthetic caches and on the recorded caches of other torch versions.
- ``tests/torch``: real caches torch compiles here, and torch's own lookup as the
  oracle (``tests/harness``). Every test there gets the ``torch`` marker, so
  ``-m "not torch"`` is the fast tier; the few ``torch`` tests of the other tiers
  carry the marker themselves. Without torch installed they are skipped.

Tests run unit, cli, then torch; at the end of collection the real caches and
batched oracle answers the collected torch tests need start building on background
threads (``tests.harness.background``), so they build while the fast tiers run.

- ``real_cache`` (session): a real Inductor cache built once per session from
  every case in ``tests.harness.cases``; every test that reads a real cache of the demo
  cases reads this one (never mutate it: use ``cache_copy``).
- ``oracle_queries`` (session): torch's answers to the calls test_torch_oracle.py,
  test_fork_server.py and test_recorded_answers.py check, each asked once by a fork server
  on a build thread, with the copies of the real cache they ran on
  (``tests.harness.oracle_queries``).
- ``cache_copy``: a fresh copy of that cache in ``tmp_path`` (mutate it freely;
  run the oracle on it).
- ``default_dir`` (session): a copy of torch's default cache dir as the session's
  torch processes see it (precompiled headers only), each header copied whole.
- ``fxcache``: :func:`tests.helpers.run_fxcache`.
- ``fresh_decoders``: decode workers forked after the test's own patches (see the fixture).
- ``oracle_server`` (session, for ``torch`` tests): ``tests.harness.oracle.torch_lookups``
  asks a :class:`tests.harness.oracle.ForkServer`, which imports torch once and forks a
  fresh child per query (test_fork_server.py checks that a fork server answers as a fresh
  process).
  The build processes (``python -m demo.build_cache`` and the like) fork in the same
  way from a :class:`tests.harness.zygote.Zygote` that has imported torch.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from fxcache_core.decode import memlimit as _memlimit
from tests.harness import match_runs
from tests.harness import oracle_queries as _oracle_queries  # noqa: F401  (registers the build oracle_queries)
from tests.harness.background import BUILD_DIR, prebuilt
from tests.harness.cleanup import remove_at_exit
from tests.harness.offline import offline
from tests.harness.real_cache import RealCache  # registers the build real_cache, first
from tests.helpers import TESTS_DIR, run_fxcache

if sys.version_info < (3, 11, 8):
    # CPython before 3.11.8 may raise "SystemError: AST constructor recursion depth
    # mismatch" from ast.parse when another thread compiles at the same time (gh-106905):
    # this session's build threads import and compile while tests parse sources. A parse
    # that hit it is parsed again; only the test process does this, never fxcache.
    import ast as _ast

    _parse = _ast.parse

    def _parse_again_on_gh_106905(*args, **kwargs):
        try:
            return _parse(*args, **kwargs)
        except SystemError as e:
            if "recursion depth mismatch" not in str(e):
                raise
            return _parse(*args, **kwargs)

    _ast.parse = _parse_again_on_gh_106905

# Without torch the torch-marked tests are skipped (pytest_collection_modifyitems) and no
# background build starts; nothing else of the suite needs to know.
HAVE_TORCH = importlib.util.find_spec("torch") is not None

# The environment every test and every process the tests start (fxcache, torch) sees;
# tests/README.md lists each variable and why.
#
# The per-decode memory budget (fxcache_core.decode.memlimit) lowers RLIMIT_AS for the
# whole process while one entry decodes: "single-threaded use". This test process is
# not single-threaded (background builds start torch subprocesses, which would inherit
# a lowered limit), so the budget is off here; the tests of the budget itself decode in
# children of their own, where it is on (tests/unit/test_decode_safety.py), and every
# fxcache command a test runs (tests/cli_run.py) has it on as users do.
_memlimit.ENFORCED = False

# transformers offline and quiet in every process, set before any starts (importing
# tests.harness.models later would otherwise change the environment mid-session).
offline()
# fxcache's index of decoded entries (fxcache_core.state.index) goes to a temp dir for
# the whole session, never to the user's ~/.cache (subprocesses inherit this),
# removed when the session ends.
os.environ["FXCACHE_INDEX_DIR"] = tempfile.mkdtemp(prefix="fxcache-test-index-")
remove_at_exit(os.environ["FXCACHE_INDEX_DIR"])
# Torch writes C++ precompiled headers (~156 MB each) into the *default* cache dir,
# <tempdir>/torchinductor_<user>/precompiled_headers, whatever TORCHINDUCTOR_CACHE_DIR
# says (_HEADER_DIR in torch/_inductor/codecache.py). The torch processes the tests
# start get a temp dir of the session as their tempdir, so that dir is theirs
# (see the default_dir fixture) and nothing lands in the user's.
TORCH_TMPDIR = tempfile.mkdtemp(prefix="fxcache-test-tmp-")
os.environ["TMPDIR"] = TORCH_TMPDIR
remove_at_exit(TORCH_TMPDIR)
# The programs torch builds to check the CPU's vector ISAs, built once by the first
# build process and copied into every later fresh cache dir (demo/build_cache.py).
os.environ["FXCACHE_ISA_SEED"] = str(BUILD_DIR / "isa-checks")



TIERS = ("unit", "cli", "torch")


def _tier(item: pytest.Item) -> str:
    rel = Path(str(item.path)).resolve().relative_to(TESTS_DIR)
    return rel.parts[0] if len(rel.parts) > 1 and rel.parts[0] in TIERS else "torch"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test of tests/torch ``torch``; skip ``torch`` tests without torch; run
    the tests that need no torch first, then the ``torch`` ones, each part by tier (unit,
    cli, torch), each tier's files in the order collected."""
    skip = pytest.mark.skip(reason="torch is not installed")
    for item in items:
        if _tier(item) == "torch":
            item.add_marker(pytest.mark.torch)
        if not HAVE_TORCH and item.get_closest_marker("torch"):
            item.add_marker(skip)
    rank = {t: i for i, t in enumerate(TIERS)}
    # Tests that need torch (the torch tier, and the few marked ones of the others) run
    # after every test that does not, so none waits for a background build while the
    # fast tests could run.
    items.sort(key=lambda it: (it.get_closest_marker("torch") is not None, rank[_tier(it)],
                               _TORCH_ORDER.get(Path(str(it.path)).name, 0)))


# Within the torch tests: first those that need the real cache alone (torch's answers to
# their queries are recorded: tests/harness/recorded.py), then each file in the order its
# last background build is ready, as measured on a 2-core machine: the models' chain, the
# oracle's own queries (tests.harness.oracle_queries) and the changed copies, the blobs,
# the traced runs and their report, the remote cache, the pack's dry runs, the rebuilt
# kernels; then test_keying.py (its tests read the variants, but the last, which reads the
# other torch build: that build starts once the first gc build is done) and the gc builds'
# tests. So the tests of a build run while the later builds go on, and few are left for
# after the last one. A file missing here runs first and may wait there; a file placed
# before its build is ready holds every later file back while it waits.
_TORCH_ORDER = {"test_real_cache.py": 1, "test_arguments.py": 2, "test_int_arguments.py": 2,
                "test_scalar_arguments.py": 2, "test_star_arguments.py": 2, "test_state_arguments.py": 2,
                "test_layer_slices.py": 2, "test_py_exprs_oracle.py": 2, "test_decomposed_args.py": 2,
                "test_tensor_flow.py": 2,
                "test_source_changed.py": 2, "test_containers.py": 2,
                "test_models_oracle.py": 3, "test_torch_oracle.py": 4,
                "test_fork_server.py": 4, "test_recorded_answers.py": 4, "test_oracle_suite.py": 4,
                "test_changed_copies.py": 4, "test_resume_sides.py": 4, "test_aliased_inputs.py": 4,
                "test_made_up_and_params.py": 4, "test_left_out_defaults.py": 4,
                "test_cond_branches.py": 4, "test_recorded_state.py": 4, "test_kwargs_sizes.py": 4,
                "test_blobs.py": 5, "test_explain.py": 6,
                "test_explain_cause.py": 7, "test_report.py": 8, "test_remote.py": 9, "test_pack.py": 10,
                "test_explain_rebuilt.py": 11, "test_keying.py": 12, "test_gc_concurrent.py": 13}


_ZYGOTE = None
"""The zygote the build processes fork from (tests/harness/zygote.py), made at configure
time: started then where the run may collect tests/torch, so that its imports (about 13 s
of CPU) overlap the collection instead of holding back the first builds."""


def _may_collect_the_torch_tier(config: pytest.Config) -> bool:
    """Whether the run may collect a test of tests/torch: a path it was given holds that
    dir or lies in it, and its ``-m`` does not leave out ``torch``."""
    if "not torch" in (config.option.markexpr or ""):
        return False
    torch_dir = TESTS_DIR / "torch"
    for arg in config.args:
        p = Path(config.invocation_params.dir, arg.split("::")[0]).resolve()
        if p == torch_dir or torch_dir in p.parents or p in torch_dir.parents:
            return True
    return False


def pytest_configure(config: pytest.Config) -> None:
    """Pin the environment of the fxcache runs that import torch; make the zygote; start it
    now where the run may collect the torch tier."""
    global _ZYGOTE
    from tests import cli_run

    cli_run.TORCH_SERVER_BASE_ENV = dict(os.environ)
    if not HAVE_TORCH or config.option.collectonly:
        return
    from demo.build_cache import BuildOptions, _child_env
    from tests.harness.zygote import Zygote

    _ZYGOTE = Zygote()
    if _may_collect_the_torch_tier(config):
        # in the environment a build's process gets (Zygote.run forks only for that one)
        _ZYGOTE.start(_child_env(BuildOptions(base_env=dict(os.environ))))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start building, in the background, every prebuilt value a collected test asks for."""
    if not HAVE_TORCH or session.config.option.collectonly:
        return
    from demo.build_cache import BuildOptions
    from tests.harness.background import BACKGROUND

    # The build processes fork from one that has imported torch (tests/harness/zygote.py).
    BACKGROUND.configure(BuildOptions(fork_from=_ZYGOTE))
    wanted = set()
    for item in session.items:
        if not item.get_closest_marker("skip"):
            wanted.update(getattr(item, "fixturenames", ()))
    for name in BACKGROUND.names():  # in the order registered (conftest's first)
        if name in wanted:
            BACKGROUND.start(name)
    # The tests' `fxcache match` runs on the real cache, on the build threads behind the
    # builds, in the order the tests ask for them (tests/harness/match_runs.py).
    match_runs.queue(match_runs.plans(session.items))


def pytest_runtest_logfinish(nodeid: str, location) -> None:
    """A test ended: drop the match runs made ahead for it alone that it never asked for."""
    match_runs.ended(nodeid)


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    """How long each background build took (they never show in --durations)."""
    bg = sys.modules.get("tests.harness.background")
    if bg is not None and bg.BACKGROUND.spans:
        t0 = min(a for a, _ in bg.BACKGROUND.spans.values())
        terminalreporter.write_sep(
            "-", "background builds (start, end; seconds into the first; CPU of their processes forked from the zygote)")
        for name, (a, b) in sorted(bg.BACKGROUND.spans.items(), key=lambda kv: kv[1]):
            cpu = bg.BACKGROUND.cpu.get(name, 0.0)
            terminalreporter.write_line(f"{name:28} {a - t0:7.1f} {b - t0:7.1f}  ({b - a:.1f} s, CPU {cpu:.1f} s)")
        stats = match_runs.STATS
        if stats["ahead"] + stats["waited"] + stats["own"]:
            terminalreporter.write_line(
                f"match runs: {stats['ahead']} made ahead ({bg.BACKGROUND.job_seconds:.1f} s on the build threads), "
                f"{stats['waited']} waited for, {stats['own']} run by the test "
                f"({stats['seconds']:.1f} s in the tests), "
                f"{stats['dropped']} dropped unasked, {match_runs.untaken()} queued that no test asked for")
        if os.environ.get("FXCACHE_TEST_MATCH_LOG"):
            match_runs.log(os.environ["FXCACHE_TEST_MATCH_LOG"], t0)


def pytest_sessionfinish(session: pytest.Session) -> None:
    if "tests.harness.background" in sys.modules:
        sys.modules["tests.harness.background"].BACKGROUND.close()
    if _ZYGOTE is not None:
        _ZYGOTE.close()


@pytest.fixture(scope="session")
def oracle_server():
    from tests.harness import oracle

    # Started by the first query a test asks in this process: the torch tier's own queries
    # are asked on build threads (tests.harness.oracle_queries, test_changed_copies.py),
    # by the server the builds share (tests.harness.oracle.builds_server).
    server = oracle.ForkServer()
    previous = oracle.use_server(server)
    yield server
    oracle.use_server(previous)
    server.close()


@pytest.fixture(autouse=True)
def _torch_queries_ask_the_fork_server(request: pytest.FixtureRequest) -> None:
    """A ``torch`` test's oracle queries go to the session's fork server (torch tier only)."""
    if request.node.get_closest_marker("torch"):
        request.getfixturevalue("oracle_server")


@pytest.fixture(scope="session")
def real_cache() -> RealCache:
    return prebuilt("real_cache")


@pytest.fixture(scope="session")
def arg_answers(real_cache: RealCache) -> dict[str, dict]:
    """Torch's recorded answers to the calls of the real cache's cases
    (tests/data/oracle-answers.json), named as this session's build named its keys."""
    from tests.harness.recorded import answers_for

    return answers_for(real_cache.summary, "real")


@pytest.fixture(scope="session")
def oracle_queries() -> dict:
    """Torch's answers to the oracle tests' calls, each asked once, and the copies of the
    real cache they ran on (:func:`tests.harness.oracle_queries.build`)."""
    return prebuilt("oracle_queries")


@pytest.fixture(scope="session")
def default_dir(real_cache: RealCache) -> Path:
    """A copy of torch's default cache dir as the session's torch processes see it
    (``<TMPDIR>/torchinductor_<user>``), taken after ``real_cache`` was built: it
    holds only what torch puts there whatever ``TORCHINDUCTOR_CACHE_DIR`` says,
    the C++ precompiled headers (and their locks), each copied whole
    (:func:`tests.harness.real_cache.snapshot_default_dir`)."""
    from fxcache_core.cache.location import default_cache_dir
    from tests.harness.real_cache import snapshot_default_dir

    d = Path(TORCH_TMPDIR) / default_cache_dir().name
    assert (d / "precompiled_headers").is_dir(), f"torch wrote no precompiled header under {d}"
    # A copy: the session's torch processes keep building headers in the live dir meanwhile.
    return snapshot_default_dir(d, Path(tempfile.mkdtemp(prefix="default-", dir=TORCH_TMPDIR)))


@pytest.fixture
def cache_copy(real_cache: RealCache, tmp_path: Path) -> Path:
    """A fresh ``copytree`` of the real cache; safe to mutate or to run torch on."""
    dst = tmp_path / "cache"
    shutil.copytree(real_cache.root, dst, symlinks=True)
    return dst


@pytest.fixture(scope="module")
def browser():
    """A headless chromium (:func:`tests.browser.browser_session`), one per test module."""
    from tests.browser import browser_session

    b = browser_session()
    yield b
    b.close()


@pytest.fixture
def fxcache():
    return run_fxcache


@pytest.fixture
def fresh_decoders():
    """Decode workers (``fxcache_core.decode.workers``) forked from this process as the
    test has patched it: a worker forked earlier runs the modules as they were then.
    The idle ones are ended before and after the test, so none outlives its patches."""
    from fxcache_core.decode.workers import close_idle

    close_idle()
    yield
    close_idle()


@pytest.fixture
def marker_dir():
    """A fresh dir with a short path (``/tmp/fxm-XXXX``), removed after the test: for a
    marker file whose path a test expects shown whole in a finding (``tmp_path`` is
    longer under pytest-xdist, past what a finding shows of a call)."""
    d = Path(tempfile.mkdtemp(prefix="fxm-"))
    yield d
    shutil.rmtree(d, ignore_errors=True)
