"""``fxcache --source-dir OLD=NEW`` on the recorded caches of tests/fixtures/torch_versions
(real caches another torch wrote, torch's own lookups in truth.json). Their frames name
/work/wt-15/demo/cases.py, the machine that built them: here that file is not there, so
the parameters a call leaves out cannot be checked and a HIT or MISS of a key that takes
the call is undecided; read from where the source is kept here
(fixtures/torch_versions/src), the verdict is torch's again (a call that fails a size
bound stays undecided either way: the source does not show whose check it was)."""

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


@pytest.mark.parametrize("i", [1, 3])
def test_a_moved_source_is_undecided_until_source_dir_says_where_it_is(i):
    torch_said = TRUTH["calls"][i]["lookups"][0]  # the AOTAutograd key's lookup
    assert torch_said["kind"] == "aotautograd" and torch_said["status"] == "hit"
    rc, fv, _ = _match(i)
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "source-unread", fv
    assert "cannot be read here" in fv["why"] and "--source-dir OLD=NEW" in fv["why"], fv["why"]
    rc, fv, report = _match(i, *MAPPED)
    assert (rc, fv["status"]) == (0, "hit"), fv
    (mine,) = [r for r in report["results"] if r["key"] == torch_said["key"]]
    assert mine["status"] == "hit" and mine["hit"] == torch_said["hit"] and mine["params_unchecked"] is None, mine


def test_a_failed_bound_stays_undecided_with_the_source_read():
    """Call 2 (10 rows) fails each entry's bound of same_graph_two_regions (<= 7, >= 16),
    and torch took a new entry of the key (its three sides run the same ops). The source
    read does not show that every check behind the bounds is such a branch (a helper's, an
    op's): undecided (``bound-failed``), not a MISS, with or without --source-dir."""
    assert [lk["status"] for lk in TRUTH["calls"][2]["lookups"]][:1] == ["guard_miss"]
    for glob in ((), MAPPED):
        rc, fv, _ = _match(2, *glob)
        assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "bound-failed", fv
        assert "x.size(0) >= 16" in fv["why"] and "x.size(0) <= 7" in fv["why"], fv["why"]


def test_a_call_no_key_takes_is_a_new_graph_without_the_source():
    """n=9 is baked into each key of int_arg_auto: torch looked up a key the cache lacks
    (truth.json), and no parameter left out could make one of these keys the call's."""
    assert TRUTH["calls"][6]["lookups"][0]["status"] == "full_miss"
    rc, fv, _ = _match(6)
    assert rc == 1 and fv["status"] == "new-graph", fv


def test_a_file_under_new_that_no_longer_holds_the_function_is_undecided():
    """The repository's demo/cases.py moved same_graph_two_regions since the fixture was
    built: found under NEW, its lines are not those the key's graph was traced from, and
    the first that differs is named."""
    rc, fv, _ = _match(1, "--source-dir", f"/work/wt-15={REPO_ROOT}")
    assert rc == 3 and fv["why_code"] == "source-changed", fv
    assert "changed since the compile: line 101 of /work/wt-15/demo/cases.py (read from " in fv["why"], fv["why"]
    assert "where the compile traced `y = x * 2`" in fv["why"], fv["why"]


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
    call = TRUTH["calls"][1]
    args = ("--cache-dir", str(CACHE), "match", "--json", "--fn", call["case"], *call["match_args"])
    proc = run_fxcache(*args, env=env)
    (fv,) = json.loads(proc.stdout)["verdicts"]["functions"]
    assert (proc.returncode, fv["status"]) == (0, "hit"), fv
    proc = run_fxcache(*args[:2], "--source-dir", f"/work/wt-15={REPO_ROOT}", *args[2:], env=env)
    (fv,) = json.loads(proc.stdout)["verdicts"]["functions"]
    assert proc.returncode == 3 and fv["why_code"] == "source-changed", fv


@pytest.mark.parametrize("value", ["/work/wt-15", "wt-15=/tmp", "/work/wt-15=src"])
def test_a_bad_fxcache_source_dir_is_one_line_naming_it_and_exit_2(value):
    proc = run_fxcache("--cache-dir", str(CACHE), "ls", env={"FXCACHE_SOURCE_DIR": value})
    assert proc.returncode == 2 and proc.stdout == "", proc
    assert proc.stderr.count("\n") == 1 and "FXCACHE_SOURCE_DIR" in proc.stderr, proc.stderr


def _edited_copy(tmp_path: Path, old: str, new: str) -> tuple[str, str]:
    """A copy of the fixture source with ``old`` (one occurrence) replaced by ``new``, and
    the ``--source-dir`` that reads it."""
    copy = tmp_path / "src"
    (copy / "demo").mkdir(parents=True)
    text = (FIXTURES / "src" / "demo" / "cases.py").read_text()
    assert text.count(old) == 1, old
    (copy / "demo" / "cases.py").write_text(text.replace(old, new))
    return "--source-dir", f"/work/wt-15={copy}"


@pytest.mark.parametrize("old,new,line,now", [
    # an op line edited: the graph the code traces now is not known
    ("    if x.shape[0] >= 16:\n        y = x * 2\n", "    if x.shape[0] >= 16:\n        y = x * 3\n", 101, "y = x * 3"),
    # a line put in above the function: every traced line moved
    ("def same_graph_two_regions(x):\n", "# a new comment\ndef same_graph_two_regions(x):\n", 101, "if x.shape[0] >= 16:"),
])
def test_a_source_edited_since_the_compile_is_undecided_naming_the_line(tmp_path, old, new, line, now):
    """Real caches (another torch's, tests/fixtures) read through a copy of their source
    edited since: the HIT torch gave for the code as it was (call 1) is undecided, naming the
    first traced line that differs, recorded text and file text."""
    rc, fv, _ = _match(1, *_edited_copy(tmp_path, old, new))
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "source-changed", fv
    assert f"line {line} of /work/wt-15/demo/cases.py (read from " in fv["why"], fv["why"]
    assert f"reads `{now}` where the compile traced `y = x * 2`" in fv["why"], fv["why"]


def test_a_traced_line_now_inside_a_statement_of_several_lines_is_undecided(tmp_path):
    """The region the trace went through turned into a string: lines 101 and 106, the
    lines call 1's key (a HIT for the code as it was) records, read as recorded, but the
    code is now ``y = x + 1`` and torch would trace another graph. torch records a
    statement's first line only, so where a traced line lies in a statement of several
    lines and the file (this copy) was written after the key's entries, the HIT is
    undecided, naming the statement (fxcache_core/lookup/source_lines.py ``first_change``)."""
    glob = _edited_copy(tmp_path, "    if x.shape[0] >= 16:\n        y = x * 2\n    elif x.shape[0] >= 8:\n"
                        "        y = x * 2\n    else:\n        y = x * 2\n",
                        '    y = x + 1; """the regions, left out:\n        y = x * 2\n    elif x.shape[0] >= 8:\n'
                        '        y = x * 2\n    else:\n    """\n')
    rc, fv, _ = _match(1, *glob)
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "source-changed", fv
    assert "line 101 of /work/wt-15/demo/cases.py (read from " in fv["why"], fv["why"]
    assert "is in a statement of lines 100-105, and the compile recorded only line 101 of it" in fv["why"], fv["why"]


def test_a_whitespace_only_edit_of_a_traced_line_still_decides(tmp_path):
    """Spaces around an operator, a trailing comment and trailing blanks change no token:
    the verdict is torch's, as with the source unchanged."""
    glob = _edited_copy(tmp_path, "    return y + 1\n", "    return y+1    # the same code\n")
    rc, fv, _ = _match(1, *glob)
    assert (rc, fv["status"]) == (0, "hit"), fv
    rc, fv, _ = _match(2, *glob)  # a failed bound: undecided with the source unchanged too
    assert (rc, fv["status"], fv["why_code"]) == (3, "undecided", "bound-failed"), fv


def test_every_line_the_recorded_caches_were_traced_from_is_in_the_kept_source():
    """The reconstructed source (fixtures/torch_versions/src) holds each line every key of
    both recorded caches was traced from, at its number: else their verdicts through it
    would be source-changed."""
    from fxcache_core.cache.scan import scan_cache
    from fxcache_core.catalog.reader import Catalog
    from fxcache_core.functions.source_dirs import use_source_dirs
    from fxcache_core.lookup.source_lines import first_change, recorded_lines

    restore = use_source_dirs({"/work/wt-15": str(FIXTURES / "src")})
    try:
        for version in ("2.14.1", "2.15.0"):
            cat = Catalog(scan_cache(FIXTURES / version / "cache"))
            lines = [x for k in cat.scan.keys for x in recorded_lines(cat, k) or () if x[0].startswith("/work/wt-15/")]
            assert len({n for _, n, _ in lines}) >= 5, lines
            assert first_change(lines) is None, (version, first_change(lines))
    finally:
        restore()


def test_a_file_under_new_that_is_a_symlink_says_so(tmp_path):
    """A source read under NEW is opened without following a symlink: the verdict says
    that is why, not that the file cannot be read."""
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "cases.py").symlink_to(FIXTURES / "src" / "demo" / "cases.py")
    rc, fv, _ = _match(1, "--source-dir", f"/work/wt-15={tmp_path}")
    assert rc == 3 and fv["why_code"] == "source-unread", fv
    assert f"(read from {tmp_path}/demo/cases.py) is a symlink, which is not followed" in fv["why"], fv["why"]


def test_one_old_dir_mapped_twice_in_fxcache_source_dir_names_the_variable():
    proc = run_fxcache("--cache-dir", str(CACHE), "ls", env={"FXCACHE_SOURCE_DIR": "/a=/b:/a/=/c"})
    assert proc.returncode == 2 and proc.stdout == "", proc
    assert proc.stderr.count("\n") == 1 and "FXCACHE_SOURCE_DIR: /a is mapped twice (/b and /c)" in proc.stderr, \
        proc.stderr
