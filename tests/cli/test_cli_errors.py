"""The CLI's error layer: a core parameter is written as its flag. ``main()``
installs the CLI's naming (``errors.use_names(flag_of)``), so core texts made during
a run say ``--inputs`` where a library caller reads ``inputs``; nothing is rendered
after the fact, so text read from a cache is never turned into a flag. No torch; the
last tests run the command (forked) on argument paths the system refuses to look up."""

from __future__ import annotations

import io
import json
import sys

import pytest

from fxcache_cli import _errors
from fxcache_cli._flags import FLAGS, flag_of
from fxcache_cli._output import out, shown
from fxcache_core.errors import FxcacheError, ShapeSpecError, param, use_names
from fxcache_core.reasons import Reason


@pytest.mark.parametrize("name,flag", [
    ("inputs", "--inputs"), ("shapes", "--inputs"), ("sym", "--sym"), ("key", "--key"), ("arg", "--arg"), ("range", "--range"),
    ("dynamic", "--dynamic"), ("duck_shape", "--duck-shape"), ("fn", "--fn"), ("cache_dir", "--cache-dir"),
    ("remote", "--remote"), ("rank", "--rank"), ("compile", "--compile"), ("older_than", "--older-than"),
    ("max_size", "--max-size"), ("artifacts", "--artifacts"), ("keep_costly", "--keep-costly"),
    ("older_than_s", "--older-than"), ("max_size_bytes", "--max-size"), ("function", "--fn"),
    ("other_cache_dir", "--other-cache-dir"), ("compile_id", "--compile"),
])
def test_a_core_parameter_is_written_as_its_flag(name, flag):
    assert flag_of(name) == flag


def _options() -> set[str]:
    """Every option any command (or the app) takes."""
    from typer.main import get_command

    from fxcache_cli._commands import commands_dict
    from fxcache_cli.fxcache import app

    group = get_command(app)
    cmds = [group, *(group.get_command(None, n) for n in commands_dict)]
    return {o for c in cmds for p in c.params for o in (*p.opts, *p.secondary_opts) if o.startswith("--")}


def test_every_flag_the_table_names_is_an_option_of_some_command():
    options = _options()
    named = {flag_of(n) for n in ("inputs", "sym", "key", "arg", "range", "dynamic", "duck_shape", "fn",
                                  "cache_dir", "remote", "rank", "compile", "older_than", "max_size",
                                  "artifacts", "keep_last", "keep_costly", "set_ttl", "stale")}
    assert named | set(FLAGS.values()) <= options


def _parameters_core_names() -> set[str]:
    """Every parameter a core text names: the string literal of each ``param(...)`` call
    in fxcache_core, and each name passed to ``resolve_cache_dir(explicit_name=...)``."""
    import ast
    from pathlib import Path

    import fxcache_core

    names = set()
    for path in Path(fxcache_core.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "param" and node.args \
                    and isinstance(node.args[0], ast.Constant):
                names.add(node.args[0].value)
            if isinstance(node, ast.arg) and node.arg == "explicit_name":
                names.add("cache_dir")
    return names


def test_every_parameter_core_names_is_written_as_an_option_the_cli_has():
    """What a core message says through ``param()`` reads as a real flag of some command,
    whichever parameter a future message names."""
    named = _parameters_core_names()
    assert {"inputs", "sym", "key", "range", "dynamic", "cache_dir"} <= named  # the scan finds them
    missing = {n: flag_of(n) for n in named}
    assert {n: f for n, f in missing.items() if f not in _options()} == {}


@pytest.fixture
def cli_naming():
    restore = use_names(flag_of)
    yield
    restore()


def test_texts_name_parameters_for_library_callers_and_flags_under_the_cli():
    assert f"{param('sym')} needs {param('key')}" == "sym needs key"
    restore = use_names(flag_of)
    try:
        assert f"{param('sym')} needs {param('key')}" == "--sym needs --key"
        assert param("older_than_s") == "--older-than"
    finally:
        restore()
    assert param("sym") == "sym"


def _captured(fn, *args):
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = io.StringIO(), io.StringIO()
    try:
        fn(*args)
        return sys.stdout.getvalue(), sys.stderr.getvalue()
    finally:
        sys.stdout, sys.stderr = stdout, stderr


def test_json_results_and_listings_name_flags(cli_naming):
    why = Reason(f"pass {param('dynamic')} true/none/false", "mode-unknown")
    body = {"reason": why, "reason_code": why.code, "reasons": [why]}
    got, _ = _captured(out.result, body)
    assert json.loads(got) == {"reason": "pass --dynamic true/none/false", "reason_code": "mode-unknown",
                               "reasons": ["pass --dynamic true/none/false"]}
    streamed, _ = _captured(out.listing, {"kept": None, "n": 1}, {"kept": iter([{"why": why}])})
    assert json.loads(streamed) == {"kept": [{"why": "pass --dynamic true/none/false"}], "n": 1}


def test_a_name_read_from_a_cache_is_never_turned_into_a_flag(cli_naming):
    """What a hostile cache writes stays what it is: escaped for people, exact in JSON."""
    name = "tmp\x1esym\x1f.tmp"
    assert shown(name) == "tmp\\x1esym\\x1f.tmp"
    got, _ = _captured(out.result, {"path": name})
    assert json.loads(got) == {"path": name}


def test_an_fxcache_error_is_one_line_with_its_flag_and_exit_2(capsys):
    e = ShapeSpecError(f"{param('inputs')} x=-5: x is a tensor", param="inputs", value="x=-5")
    assert str(e) == "inputs x=-5: x is a tensor" and e.param == "inputs"  # a library caller's words
    restore = use_names(flag_of)
    try:
        e = ShapeSpecError(f"{param('inputs')} x=-5: x is a tensor", param="inputs", value="x=-5")
    finally:
        restore()
    with pytest.raises(SystemExit) as exit_:
        _errors.handle(e)
    assert exit_.value.code == _errors.BAD_INPUT == 2
    assert capsys.readouterr().err == "fxcache: error: --inputs x=-5: x is a tensor\n"


def test_what_no_row_handles_is_raised_again():
    with pytest.raises(ZeroDivisionError):
        _errors.handle(ZeroDivisionError("a bug"))
    assert isinstance(FxcacheError("x"), Exception)


# --- argument paths the system refuses to look up: one line, exit 2 ----------------

LONG_NAME = "x" * 300  # a path component over NAME_MAX (255 bytes): ENAMETOOLONG


@pytest.mark.parametrize("command", ["ls", "df", "gc", "verify", "unpack"])
def test_a_cache_dir_name_over_the_systems_limit_is_one_line(tmp_path, command):
    from tests.cli.test_pack_hostile import make_cache
    from tests.helpers import run_fxcache

    make_cache(tmp_path / "cache")
    pack = tmp_path / "p.tar.gz"
    assert run_fxcache("--cache-dir", str(tmp_path / "cache"), "pack", "--all", str(pack)).returncode == 0
    args = [str(pack)] if command == "unpack" else []
    r = run_fxcache("--cache-dir", str(tmp_path / LONG_NAME), command, *args)
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "File name too long" in r.stderr and "--cache-dir" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("what", ["a pack name over the limit", "EIO on read"])
def test_a_pack_that_cannot_be_read_is_one_line(tmp_path, what):
    from tests.helpers import run_fxcache

    pack, why = {"a pack name over the limit": (str(tmp_path / LONG_NAME), "File name too long"),
                 "EIO on read": ("/proc/self/mem", "Input/output error")}[what]
    r = run_fxcache("--cache-dir", str(tmp_path / "dst"), "unpack", pack)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and why in r.stderr, r.stderr
    assert not (tmp_path / "dst").exists()


@pytest.mark.parametrize("out", [LONG_NAME, f"{LONG_NAME}/p.tar.gz", "x" * 250])
def test_a_pack_out_name_over_the_limit_is_one_line_and_nothing_written(tmp_path, out):
    """``x * 250`` fits NAME_MAX, but its temp name beside it does not."""
    from tests.cli.test_pack_hostile import make_cache
    from tests.helpers import run_fxcache

    make_cache(tmp_path / "cache")
    before = sorted(p.name for p in tmp_path.rglob("*"))
    r = run_fxcache("--cache-dir", str(tmp_path / "cache"), "pack", "--all", "--json", str(tmp_path / out))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "File name too long" in r.stderr, r.stderr
    assert sorted(p.name for p in tmp_path.rglob("*")) == before
