"""``fxcache match``: which entry torch would load for a call.

Parses the call, asks :func:`fxcache_core.lookup.match.match` and
:func:`fxcache_core.lookup.prediction.verdicts`, renders their answer; decides
nothing. ``--audit`` and ``--coverage KEY --range ...`` are deprecated spellings of
``fxcache audit`` and ``fxcache coverage`` (the same output, one more line on stderr).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, NamedTuple

import typer

from ._context import done_reading, indexed_catalog, scan_dir
from ._options import Dynamic, DynamicOpt, JsonOpt, mode_of
from ._output import (
    COLOUR,
    deprecated,
    fail,
    origin_text,
    out,
    paint,
    plural,
    safe,
    short,
)


def match_cmd(
    inputs: Annotated[list[str] | None, typer.Option(
        "--inputs", "--shapes", "-s",
        help="An argument of the call, NAME=VALUE (repeat, or comma-separate): a tensor NAME=[d0,d1,...] "
        "(NAME=[] a 0-d tensor; :mark_dynamic=[0,1] marks dims, with :min=2:max=16 their range; "
        ":mark_static=[0] marks them static; :dtype=bool names the dtype, else the key's is assumed, and said, "
        "where it is an integer or bool dtype or float32 (a float16, bfloat16 or float64 key is then undecided); "
        ":requires_grad=True; :param an "
        "nn.Parameter, :param=False a plain tensor), a Python "
        "int NAME=7, float NAME=0.5, bool NAME=True, NAME=None, string NAME='gelu' (or NAME=gelu), tuple "
        "NAME=(2,3), torch.dtype NAME=torch.float16; NAME=@OTHER the very tensor given for OTHER (f(x, x): a=[4,8] "
        "b=@a). NAME is the compiled function's parameter (x, xs[0]; "
        "an item of a dict cfg['n']=4, a field cfg.n=4: one per item the code reads), "
        "a module's state (self.training=True: undecided, the cache does not record it) or a global "
        "(G['GAIN']=3.0: undecided too); torch.is_grad_enabled()=False is the grad mode, "
        "torch.is_inference_mode_enabled()=True inference mode; other global state and settings "
        "(torch.is_autocast_enabled()=True, torch.get_default_dtype()=torch.float64, "
        "torch.compile.mode='max-autotune', torch._dynamo.config.NAME=VALUE, torch._inductor.config.NAME=VALUE) "
        "are undecided where the cache does not record them; left out, each is as when the key was compiled "
        "(a decided verdict lists what it took so). "
        "A parameter left out takes its default. --shapes is the older name.")] = None,
    dynamic: DynamicOpt = None,
    duck_shape: Annotated[bool | None, typer.Option(
        "--duck-shape/--no-duck-shape", help="torch.fx.experimental._config.use_duck_shape "
        "(torch's default: on). Off, equal sizes keep separate symbols under --dynamic true, "
        "and a symbol a key shares is one the graph forces. Not given: an entry in the cache "
        "compiled with equal sizes on separate symbols makes a duck-sizing conflict undecided.")] = None,
    args: Annotated[list[str] | None, typer.Option(
        "--arg", help="A tensor input of an FX graph by position, [d0,d1,...] (repeat, in graph "
        "order): for FX keys no AOTAutograd entry loads, whose inputs have no names.")] = None,
    sym: Annotated[list[str] | None, typer.Option(
        "--sym", help="Bind a placeholder or symbol directly (t0=16, s77=16); needs --key.")] = None,
    key: Annotated[str | None, typer.Option("--key", "-k", help="Only this key (a unique prefix).")] = None,
    fn: Annotated[str | None, typer.Option("--fn", help="Only keys traced from the function of this name.")] = None,
    coverage_key: Annotated[str | None, typer.Option(
        "--coverage", hidden=True, help="Deprecated: fxcache coverage KEY --range ...")] = None,
    value_range: Annotated[str | None, typer.Option(
        "--range", hidden=True, help="Deprecated, with --coverage: fxcache coverage KEY --range ...")] = None,
    audit: Annotated[bool, typer.Option("--audit", hidden=True, help="Deprecated: fxcache audit.")] = False,
    explain: Annotated[bool, typer.Option("--explain", help="Also show keys that cannot take these inputs, and why, the FX keys behind each AOTAutograd entry, and each failing clause as stored.")] = False,
    from_trace: Annotated[str | None, typer.Option(
        "--from-trace", help="Take the call's inputs (and --fn, --dynamic) from a run's TORCH_TRACE: "
        "the call compiled as --compile ID.")] = None,
    compile_id: Annotated[str | None, typer.Option(
        "--compile", help="With --from-trace: the compile id (0/1, as `fxcache explain` shows it).")] = None,
    rank: Annotated[int | None, typer.Option("--rank", help="With --from-trace: the rank, when the trace has several.")] = None,
    after_recompile: Annotated[bool, typer.Option(
        "--after-recompile", help="Under automatic dynamic (--dynamic none, or not given): ask about the "
        "calls after a recompile, whose changed dims are symbols, not about the first call in a fresh "
        "process. Both are said; this picks the one the exit status follows.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Which entry torch would load for these inputs, and why the others would not.

    Prints the verdict first, one line per function (HIT / MISS / NEW GRAPH /
    UNDECIDED), then the lookup of each key. Under automatic dynamic
    (dynamic=None) a function gets two lines: the first call in a fresh process,
    and the calls after a recompile. Exit status, as grep and diff: 0 every
    function hits, 1 some function misses or needs a new graph, 3 none misses but
    some is undecided, 2 a usage error; it follows the first call, or with
    --after-recompile the later calls. Without --fn, functions none of whose keys
    can take the call are listed but do not count (unless no function can).
    (``--audit`` and ``--coverage KEY --range ...``, deprecated, are ``fxcache
    audit`` and ``fxcache coverage KEY --range ...``.)
    """
    if audit:
        deprecated("match --audit", "fxcache audit")
        from .audit import audit as show_audit

        show_audit(as_json)
        return
    if coverage_key is not None or value_range is not None:
        _coverage(coverage_key, value_range, bool(inputs or key), sym, dynamic, as_json)
        return
    call = _parse_call(inputs, args, sym, fn, dynamic, from_trace, compile_id, rank)
    answer, only = _lookup(call, key, duck_shape, after_recompile, as_json)
    if answer.report.function_missing:  # a usage error, --json or not: one line, no result
        fail(_function_missing(answer.report, call.fn))
    if as_json:
        out.result(answer.to_json())
        raise typer.Exit(answer.verdict.exit_code)
    raise typer.Exit(_render(answer, call, only is not None or explain))


class _Call(NamedTuple):
    """The call asked about, as parsed: its inputs by name (``--inputs``), the
    symbols bound directly (``--sym``), tensors by position (``--arg``), the
    function (``--fn``) and ``--dynamic``, from the flags or a trace; with a trace,
    the Python values each key it looked up was traced with (``recorded``)."""

    inputs: Any
    syms: dict[str, int]
    positional: list[Any]
    fn: str | None
    dynamic: Dynamic | None
    recorded: Any = None


def _coverage(key: str | None, value_range: str | None, with_call: bool, sym: list[str] | None,
              dynamic: Dynamic | None, as_json: bool) -> None:
    """``match --coverage KEY --range ...`` (deprecated): ``fxcache coverage``'s output."""
    from fxcache_core.lookup.binding import parse_sym

    from .coverage import coverage

    deprecated("match --coverage", "fxcache coverage KEY --range ...")
    if with_call:
        fail("--coverage takes --range (and --sym for the other placeholders), not --inputs or --key")
    if key is None or value_range is None:
        fail("give both --coverage KEY and --range NAME=LO:HI")
    coverage(key, value_range, parse_sym(sym or []), mode_of(dynamic), as_json)


def _parse_call(shapes: list[str] | None, args: list[str] | None, sym: list[str] | None, fn: str | None,
                dynamic: Dynamic | None, from_trace: str | None, compile_id: str | None,
                rank: int | None) -> _Call:
    """The call from the flags, or from a trace's compile (``--from-trace``, ``--compile``)."""
    from fxcache_core.lookup.binding import parse_shapes, parse_sym

    inputs = parse_shapes(shapes or [])
    recorded = None
    if from_trace is not None or compile_id is not None:
        if from_trace is None or compile_id is None:
            fail("give both --from-trace TRACE and --compile ID")
        if shapes or args or sym:
            fail("--from-trace gives the call's inputs: not with --inputs, --arg or --sym")
        from pathlib import Path

        from fxcache_core.trace.call import call_inputs
        from fxcache_core.trace.constants import key_constants
        from fxcache_core.trace.run import read_run

        run = read_run(Path(from_trace))
        traced = call_inputs(run, compile_id, rank)
        recorded = key_constants(run)
        inputs = traced.inputs
        fn = fn or traced.function
        if dynamic is None and traced.mode.value != "unknown":
            dynamic = Dynamic(traced.mode.value)
    syms = parse_sym(sym or [])
    positional = [_positional(a) for a in args or []]
    if not inputs and not syms and not positional:
        fail("give the call's inputs with --inputs NAME=[...] (or --arg [...], or --key K --sym t0=N)")
    return _Call(inputs, syms, positional, fn, dynamic, recorded)


def _positional(a: str) -> Any:
    """One ``--arg [d0,d1,...]`` as a tensor input."""
    from fxcache_core.errors import ShapeSpecError
    from fxcache_core.lookup.binding import TensorArg, parse_shape_spec

    try:
        t = parse_shape_spec(f"arg={a}")[1]
    except ShapeSpecError:
        t = None
    if not isinstance(t, TensorArg):
        fail(f"--arg {a!r}: expected a tensor shape like [16,4] (one --arg per tensor input, in graph order)")
    return t


def _lookup(call: _Call, key: str | None, duck_shape: bool | None, after_recompile: bool,
            as_json: bool) -> tuple[Any, Any]:
    """Core's answer for ``call`` on the cache, and the key ``--key`` named (None: all)."""
    from fxcache_core.lookup.match import match
    from fxcache_core.lookup.phases import Phase
    from fxcache_core.lookup.prediction import MatchAnswer, verdicts

    scan = scan_dir(quiet=as_json)
    only = scan.find(key) if key else None
    report = match(indexed_catalog(scan, as_json), call.inputs, call.syms, only, function=call.fn,
                   positional=call.positional, mode=mode_of(call.dynamic), duck_shape=duck_shape,
                   phase=Phase.AFTER_RECOMPILE if after_recompile else Phase.FIRST, recorded=call.recorded)
    done_reading()
    return MatchAnswer(report, verdicts(report, count_all=call.fn is not None or only is not None, function=call.fn)), only


def _function_missing(report: Any, fn: str | None) -> str:
    """The line for ``--fn NAME`` that no key was compiled from: the functions the cache
    holds, and for a class or ``Class.method`` where a class is found."""
    line = (f"no key was compiled from a function named {fn!r}; the cache holds keys compiled from: "
            + ("; ".join(report.functions_held) if report.functions_held else "none that records its function"))
    if fn and ("." in fn or fn[:1].isupper()):
        line += ("; a class (Class, Class.method) is read from the source file of its methods, which must be "
                 "readable here: name where it moved with --source-dir OLD=NEW")
    return line


def _render(answer: Any, call: _Call, explain: bool) -> int:
    """Print the answer (the verdicts, then each key's lookup); the exit code."""
    report, verdict, fn = answer.report, answer.verdict, call.fn
    if not report.results and call.positional:
        out.print("No FX key takes --arg: it binds FX keys that no AOTAutograd entry loads "
                  "(name one with --key to bind it by position anyway).")
        return verdict.exit_code
    if not report.results and not report.unbound:
        out.print(f"No key among {report.keys_considered}" + (f" compiled from {safe(fn)}" if fn else "")
                  + " has an input named "
                  + ", ".join(safe(_user(s)) for s, _ in report.inputs)
                  + " (names are the compiled function's parameters, a module's keyword or "
                  "forward parameter, or args\\[i]; see `fxcache guards KEY`).")
        return verdict.exit_code
    # One print at the end: a large cache binds thousands of keys, and rich costs
    # ~0.1 ms per print call.
    buf: list[str] = []
    _verdict_lines(verdict, buf.append)
    _key_blocks(report, verdict, fn, explain, buf.append)
    _print_unbound(report.unbound, buf.append)
    for src in report.unused:
        buf.append("\n[yellow]warning:[/yellow] no key " + (f"compiled from {safe(fn)} " if fn else "")
                   + f"takes {safe(_user(src))}")
    if buf:
        out.text("\n".join(buf))
    return verdict.exit_code


def _verdict_lines(verdict: Any, say: Callable[[str], None]) -> None:
    """One line per function (two under automatic dynamic), then those not counted."""
    for v in verdict.functions:
        if v.phases:  # automatic dynamic: the first call, then the calls after a recompile
            say(f"[bold]{safe(v.label)}[/bold]: {safe(v.phases[0].heading or '')}: {_painted(v.phases[0])}")
            for p in v.phases[1:]:
                say(f"  {safe(p.heading or '')}: {_painted(p)}")
        else:
            say(f"[bold]{safe(v.label)}[/bold]: {_painted(v)}")
        for r in v.assumed:
            say(f"  [dim]{safe(r)}[/dim]")
        for r in (v.rests_on, v.assumed_params, *v.assumed_state, v.params_unchecked):
            if r is not None:
                say(f"  [dim]{safe(r)}[/dim]")
    if verdict.others:
        names = ", ".join(sorted({safe(o.label) for o in verdict.others}))
        say(f"[dim]Not counted: {names} (no key of {'it' if len(verdict.others) == 1 else 'them'} can take "
            "these inputs; name a function with --fn to count it).[/dim]")


def _key_blocks(report: Any, verdict: Any, fn: str | None, explain: bool, say: Callable[[str], None]) -> None:
    """Each key's lookup, and a note on those not shown. Reasons of keys that cannot
    take the call are shown when a function named with --fn has only such keys, and
    it has a few."""
    new_graph = {m.key.key for v in verdict.functions if v.status == "new-graph"
                 for m in v.keys} if fn is not None else set()
    show_nofit = explain or (0 < len(new_graph) <= 6)
    folded_keys = report.folded()
    shown, hidden_nofit, folded = [], 0, 0
    for m in report.results:
        if not m.fits and not (explain or (show_nofit and m.key.key in new_graph)):
            hidden_nofit += 1
        elif m.key.key in folded_keys and not explain:
            folded += 1
        else:
            shown.append(m)
    for m in shown:
        _key_block(m, explain, say)
    notes = []
    if hidden_nofit:
        notes.append(f"{plural(hidden_nofit, 'key')} cannot take these shapes")
    if folded:
        notes.append(f"{plural(folded, 'FX key')} only loaded by the AOTAutograd hits above")
    if notes:
        say("\n[dim]" + "; ".join(notes) + " (--explain shows them all, with reasons).[/dim]")


def _painted(v) -> str:
    """A verdict's line with its head in the status's colour: ``HIT entry ...``, ``MISS: ...``."""
    c = COLOUR[v.status]
    head, _, rest = v.line.partition(":") if v.status != "hit" else (v.line, "", "")
    return f"[{c}]{safe(head)}[/{c}]" + (":" + safe(rest) if rest else "")


def _key_block(m, explain: bool, say) -> None:
    """One key's lookup: its inputs' values, why it cannot take them, each entry's verdict."""
    from fxcache_core.guards.user_terms import user_text

    c = COLOUR[m.status]
    head = f"[bold]{m.key.kind.short}[/bold] {m.key.key}  [{c}]{m.status.upper()}[/{c}]"
    if m.hit is not None:
        head += f" {safe(short(m.hit.name))}" if m.status == "hit" else f" (guards pass: {safe(short(m.hit.name))})"
    if m.compiled is not None:
        head += f"  [cyan]{safe(str(m.compiled))}[/cyan]"
    elif m.origin is not None:
        head += f"  [cyan]{safe(origin_text(m.origin))}[/cyan]"
    say("\n" + head)
    for given, src in m.bound:
        if given != src:
            say(f"  [dim]{safe(_user(given))} is {safe(src)}[/dim]")
    names = m.user_names
    by_ph = {s.placeholder: s for s in m.symbols}
    for ph, v in m.values:
        s = by_ph.get(ph)
        where = f"{ph}, {s.expr}" if s else ph
        say(f"  {safe(names.get(ph, ph))} = {v if v is not None else '?'}  [dim]({safe(where)})[/dim]")
    for r in m.reasons:
        say(f"  [dim]{safe(user_text(r))}[/dim]")
    for r in m.uncertain:
        say(f"  [yellow]cannot tell:[/yellow] {safe(user_text(r))}")
    for r in m.assumptions:
        say(f"  [dim]{safe(user_text(r))}[/dim]")
    if m.aborted:
        say(f"  [red]{safe(user_text(m.aborted))}[/red]")
    for i, v in enumerate(m.entries):
        if m.hit is v.entry:
            tag = paint("hit") if m.status == "hit" else paint("passes")
        elif v.entry in m.shadowed:
            tag = "[yellow]shadowed[/yellow] (passes too, but comes later)"
        else:  # an entry's other outcomes (error, undecided...) in yellow
            tag = paint(v.outcome) if v.outcome in ("fail", "pass") else f"[yellow]{v.outcome}[/yellow]"
        if v.outcome in ("fail", "error") and v.failed_clause is not None:
            why = safe(f"{v.user_clause(names)}" + (" is False" if v.outcome == "fail" else " raises")
                         + f"  with {v.user_values(names)}")
            if explain and v.reason:
                why += f"  [dim](stored: {safe(v.reason)})[/dim]"
        else:
            why = safe(user_text(v.reason)) if v.reason else ""
        say(f"  #{i} {safe(short(v.entry.name))}  {tag}" + (f"  {why}" if why else ""))
    for ld in m.loads:
        where = safe(short(ld.entry)) if ld.entry else "[red]gone: torch will recompile[/red]"
        say(f"  -> loads {ld.role} fx {short(ld.key)} / {where}")


def _user(src: str) -> str:
    """``L['x']`` as the user wrote it: ``x``."""
    from fxcache_core.lookup.inputs import user_name

    return user_name(src)


def _print_unbound(unbound, say=None) -> None:
    """Keys of the --fn function that no input given names (a resume frame's locals)."""
    say = say or out.print
    for u in unbound:
        where = f"  [cyan]{safe(origin_text(u.origin))}[/cyan]" if u.origin is not None else ""
        what = (f"takes {safe(', '.join(u.takes))}: name them with --inputs too" if u.takes else
                f"its inputs have no names: give them in graph order with --arg ({safe(', '.join(u.unnamed))})")
        say(f"\n[bold]{u.key.kind.short}[/bold] {u.key.key}  [yellow]NOT BOUND[/yellow]{where}\n  [dim]{what}[/dim]")


