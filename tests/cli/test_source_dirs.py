"""``fxcache --source-dir OLD=NEW`` on the recorded caches of tests/fixtures/torch_versions
(real caches another torch wrote, torch's own lookups in truth.json). Their frames name
/work/wt-15/demo/cases.py, the machine that built them: here that file is not there, so
the parameters a call leaves out cannot be checked and a HIT or MISS of a key that takes
the call is undecided; read from where the source is kept here
(fixtures/torch_versions/src), the verdict is torch's again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import REPO_ROOT, run_fxcache

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "torch_versions"
CACHE = FIXTURES / "2.15.0" / "cache"
TRUTH = json.loads((FIXTURES / "2.15.0" / "truth.json").read_text())
MAPPED = ("--source-dir", f"/work/wt-15={FIXTURES / 'src'}")


def _match(i: int, *glob: str) -> tuple[int, dict, dict]:
    call = TRUTH["calls"][i]
    proc = run_fxcache("--cache-dir", str(CACHE), *glob, "match", "--json", "--fn", call["case"], *call["match_args"])
    report = json.loads(proc.stdout)
    (fv,) = report["verdicts"]["functions"]
    assert proc.returncode == report["verdicts"]["exit_code"], proc.stderr
    return proc.returncode, fv, report


@pytest.mark.parametrize("i,status", [(2, "miss"), (3, "hit")])
def test_a_moved_source_is_undecided_until_source_dir_says_where_it_is(i, status):
    torch_said = TRUTH["calls"][i]["lookups"][0]  # the AOTAutograd key's lookup
    assert torch_said["kind"] == "aotautograd" and torch_said["status"] == {"miss": "guard_miss", "hit": "hit"}[status]
    rc, fv, _ = _match(i)
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "source-unread", fv
    assert "cannot be read here" in fv["why"] and "--source-dir OLD=NEW" in fv["why"], fv["why"]
    rc, fv, report = _match(i, *MAPPED)
    assert (rc, fv["status"]) == ({"miss": 1, "hit": 0}[status], status), fv
    (mine,) = [r for r in report["results"] if r["key"] == torch_said["key"]]
    assert mine["status"] == status and mine["hit"] == torch_said["hit"] and mine["params_unchecked"] is None, mine


def test_a_call_no_key_takes_is_a_new_graph_without_the_source():
    """n=9 is baked into each key of int_arg_auto: torch looked up a key the cache lacks
    (truth.json), and no parameter left out could make one of these keys the call's."""
    assert TRUTH["calls"][6]["lookups"][0]["status"] == "full_miss"
    rc, fv, _ = _match(6)
    assert rc == 1 and fv["status"] == "new-graph", fv


def test_a_file_under_new_that_no_longer_holds_the_function_is_undecided():
    """The repository's demo/cases.py moved same_graph_two_regions since the fixture was
    built: found under NEW, it is not the function at the recorded line."""
    rc, fv, _ = _match(2, "--source-dir", f"/work/wt-15={REPO_ROOT}")
    assert rc == 3 and fv["why_code"] == "source-unread", fv
    assert "no longer has the function at that line" in fv["why"], fv["why"]


@pytest.mark.parametrize("value,says", [
    ("/work/wt-15", "expected OLD=NEW"),
    ("wt-15=/tmp", "'wt-15' is not an absolute directory"),
    ("/work/wt-15=src", "'src' is not an absolute directory"),
    ("/work/wt-15=", "'' is not an absolute directory"),
])
def test_a_bad_source_dir_is_one_line_and_exit_2(value, says):
    proc = run_fxcache("--cache-dir", str(CACHE), "--source-dir", value, "ls")
    assert proc.returncode == 2 and proc.stdout == "", proc
    assert proc.stderr.count("\n") == 1 and "--source-dir" in proc.stderr and says in proc.stderr, proc.stderr


def test_one_old_dir_mapped_twice_is_a_usage_error():
    proc = run_fxcache("--cache-dir", str(CACHE), "--source-dir", "/a=/b", "--source-dir", "/a/=/c", "ls")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "mapped twice" in proc.stderr, proc.stderr


def test_fxcache_source_dir_gives_the_mapping_where_the_option_is_not_given():
    """The environment variable maps as the option does (pairs separated by os.pathsep, an
    unrelated pair beside it), and the option, given, replaces it."""
    env = {"FXCACHE_SOURCE_DIR": f"/elsewhere=/tmp:/work/wt-15={FIXTURES / 'src'}"}
    call = TRUTH["calls"][2]
    args = ("--cache-dir", str(CACHE), "match", "--json", "--fn", call["case"], *call["match_args"])
    proc = run_fxcache(*args, env=env)
    (fv,) = json.loads(proc.stdout)["verdicts"]["functions"]
    assert (proc.returncode, fv["status"]) == (1, "miss"), fv
    proc = run_fxcache(*args[:2], "--source-dir", f"/work/wt-15={REPO_ROOT}", *args[2:], env=env)
    (fv,) = json.loads(proc.stdout)["verdicts"]["functions"]
    assert proc.returncode == 3 and fv["why_code"] == "source-unread", fv


@pytest.mark.parametrize("value", ["/work/wt-15", "wt-15=/tmp", "/work/wt-15=src"])
def test_a_bad_fxcache_source_dir_is_one_line_naming_it_and_exit_2(value):
    proc = run_fxcache("--cache-dir", str(CACHE), "ls", env={"FXCACHE_SOURCE_DIR": value})
    assert proc.returncode == 2 and proc.stdout == "", proc
    assert proc.stderr.count("\n") == 1 and "FXCACHE_SOURCE_DIR" in proc.stderr, proc.stderr
