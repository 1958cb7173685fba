"""The CLI's error layer: a core parameter is written as its flag, in errors and in
everything the output object writes (human and JSON), so core texts that name
parameters through markers read as the CLI always read. No torch, no subprocess."""

from __future__ import annotations

import io
import json
import sys

import pytest

from fxcache_cli import _errors
from fxcache_cli._errors import flag_of, render_flags, render_json_flags
from fxcache_cli._output import error_line, out
from fxcache_core.errors import FxcacheError, ShapeSpecError, param
from fxcache_core.reasons import Reason


@pytest.mark.parametrize("name,flag", [
    ("shapes", "--shapes"), ("sym", "--sym"), ("key", "--key"), ("arg", "--arg"), ("range", "--range"),
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

    from fxcache_cli._app import app
    from fxcache_cli._commands import commands_dict

    group = get_command(app)
    cmds = [group, *(group.get_command(None, n) for n in commands_dict)]
    return {o for c in cmds for p in c.params for o in (*p.opts, *p.secondary_opts) if o.startswith("--")}


def test_every_flag_the_table_names_is_an_option_of_some_command():
    options = _options()
    named = {flag_of(n) for n in ("shapes", "sym", "key", "arg", "range", "dynamic", "duck_shape", "fn",
                                  "cache_dir", "remote", "rank", "compile", "older_than", "max_size",
                                  "artifacts", "keep_last", "keep_costly", "set_ttl", "stale")}
    assert named | set(_errors.FLAGS.values()) <= options


def test_markers_render_as_flags_in_text_and_in_json_text():
    text = f"{param('sym')} binds placeholders of one key: give {param('key')} too"
    assert render_flags(text) == "--sym binds placeholders of one key: give --key too"
    assert render_flags("no marker") == "no marker"
    assert json.loads(render_json_flags(json.dumps({"why": text}))) == {"why": render_flags(text)}


def _captured(fn, *args):
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = io.StringIO(), io.StringIO()
    try:
        fn(*args)
        return sys.stdout.getvalue(), sys.stderr.getvalue()
    finally:
        sys.stdout, sys.stderr = stdout, stderr


def test_json_results_and_listings_name_flags_not_markers():
    why = Reason(f"pass {param('dynamic')} true/none/false", "mode-unknown")
    body = {"reason": why, "reason_code": why.code, "reasons": [why]}
    got, _ = _captured(out.result, body)
    assert json.loads(got) == {"reason": "pass --dynamic true/none/false", "reason_code": "mode-unknown",
                               "reasons": ["pass --dynamic true/none/false"]}
    assert "\\u001e" not in got
    streamed, _ = _captured(out.listing, {"kept": None, "n": 1}, {"kept": iter([{"why": why}])})
    assert json.loads(streamed) == {"kept": [{"why": "pass --dynamic true/none/false"}], "n": 1}


def test_human_text_tables_and_error_lines_name_flags():
    text = f"give {param('shapes')} NAME=[...]"
    got, _ = _captured(out.text, f"[dim]{text}[/dim]")
    assert got == "give --shapes NAME=[...]\n"
    got, _ = _captured(out.table, "t", [("a",), (text,)], set())
    assert got == "t\na\ngive --shapes NAME=[...]\n"
    _, err = _captured(error_line, f"{param('range')} s0=-5:10:   empty")  # markers survive the split
    assert err == "fxcache: error: --range s0=-5:10: empty\n"


def test_an_fxcache_error_is_one_line_with_its_flag_and_exit_2(capsys):
    e = ShapeSpecError(f"{param('shapes')} x=-5: x is a tensor", param="shapes", value="x=-5")
    assert str(e) == "shapes x=-5: x is a tensor"  # a library caller reads its own argument's name
    with pytest.raises(SystemExit) as exit_:
        _errors.handle(e)
    assert exit_.value.code == _errors.BAD_INPUT == 2
    assert capsys.readouterr().err == "fxcache: error: --shapes x=-5: x is a tensor\n"


def test_what_no_row_handles_is_raised_again():
    with pytest.raises(ZeroDivisionError):
        _errors.handle(ZeroDivisionError("a bug"))
    assert isinstance(FxcacheError("x"), Exception)
