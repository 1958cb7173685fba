"""Which cache dir a traced run is related to (fxcache_core.trace.run_cache), on
hand-made dirs: the dir given, else $TORCHINDUCTOR_CACHE_DIR, else a dir the run
wrote code into, else torch's default; none, with why, where none exists. No torch."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from fxcache_core.errors import CacheDirError
from fxcache_core.trace.run_cache import run_cache


def test_the_dir_given_wins_and_its_errors_are_raised(tmp_path):
    run = SimpleNamespace(cache_dirs=(str(tmp_path / "written"),))
    scan, why = run_cache(run, tmp_path, env={})
    assert scan.root == tmp_path and why is None
    with pytest.raises(CacheDirError):
        run_cache(run, tmp_path / "nonexistent", env={})


def test_without_a_dir_the_first_dir_the_run_wrote_into_that_exists(tmp_path):
    (tmp_path / "b").mkdir()
    run = SimpleNamespace(cache_dirs=(str(tmp_path / "a"), str(tmp_path / "b")))
    scan, why = run_cache(run, env={"TMPDIR": str(tmp_path / "none"), "USER": "x"})
    assert scan.root == tmp_path / "b" and why is None


def test_the_environment_variable_wins_over_the_runs_dirs(tmp_path):
    (tmp_path / "env").mkdir()
    (tmp_path / "b").mkdir()
    run = SimpleNamespace(cache_dirs=(str(tmp_path / "b"),))
    scan, _ = run_cache(run, env={"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "env")})
    assert scan.root == tmp_path / "env"


def test_no_dir_at_all_says_each_dir_tried_and_names_the_parameter(tmp_path):
    run = SimpleNamespace(cache_dirs=(str(tmp_path / "a"),))
    scan, why = run_cache(run, env={"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "gone")})
    assert scan is None
    assert why.startswith("no cache to relate the run to (") and str(tmp_path / "gone") in why
    assert str(tmp_path / "a") not in why  # the variable set: the run's dirs are not tried
    assert why.endswith("): give cache_dir")
