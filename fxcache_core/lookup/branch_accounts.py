"""Branch evidence for one parameter (:func:`branch_account`): every read of it is the
test of an ``if``, and the key's graph shows which side the trace took, by its ops from
the side's lines (this key's, another key's of the function, or a body that makes an op
whatever it is given: :func:`~fxcache_core.lookup.branches.body_makes_op`). The call's
value then goes the same way (``branch``), the other way into a side that makes other
ops (``branch-not-taken``: another graph, where no other code of the function may make up
the difference, :mod:`fxcache_core.lookup.made_up_ops`; else ``branch-may-be-made-up``), or
it cannot be told (``branch-unknown``).
One parameter's accounting
(:class:`~fxcache_core.lookup.accounting.ParamAccounting`) asks it after the baked
constants. Never imports torch."""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Protocol

from fxcache_core.cache.keys import KeyKind
from fxcache_core.errors import param
from fxcache_core.functions.cond_tests import nn_layers, submodules
from fxcache_core.functions.params import BranchTest
from fxcache_core.functions.trees import function_node, module_node
from fxcache_core.lookup.binding import TensorArg
from fxcache_core.lookup.branches import TracedCode, body_makes_op, branch_holds
from fxcache_core.lookup.grad_paths import inference_forward_graph
from fxcache_core.lookup.layer_bodies import LAYER_TRAINING_FREE, body_makes_op_on_layer
from fxcache_core.lookup.made_up_ops import may_make_up
from fxcache_core.lookup.param_account import ParamAccount
from fxcache_core.lookup.pyvalues import text_of
from fxcache_core.lookup.source_values import LOCAL_RE
from fxcache_core.reasons import Reason

__all__ = ["ParamAccounting", "branch_account"]


class ParamAccounting(Protocol):
    """What :func:`branch_account` reads of one parameter's accounting
    (:class:`fxcache_core.lookup.accounting.ParamAccounting`, which imports this module):
    the ledger (traced code and sibling keys), the key and call (``KeyCall``), the
    compiled frame, its reads (``FrameReads``), the parameter (``ParamUse``) and how a
    result is made."""

    ledger: Any
    call: Any
    frame: Any
    reads: Any
    p: Any

    def result(
        self, status: str, how: Reason, value: object = ..., brief: str = ""
    ) -> ParamAccount: ...


def _side(acc: ParamAccounting, traced: TracedCode, t: BranchTest) -> tuple[bool | None, str]:
    """Which side of ``t`` a graph was traced through, and how that is known. For a
    conditional expression, only an op from its line, where the other side is bare (no op
    at all): that side ran, whatever the ops (no op says nothing: a side may make none). For
    an operand of ``and`` only the body (every operand held), of ``or`` only the ``else``
    (none held)."""
    if t.form == "ifexp":
        if t.bare is not None and t.line in traced.lines:
            return not t.bare, f"its ops at line {t.line}, which its {'else' if t.bare else 'body'} makes"
        return None, ""
    if t.form in ("and", "or"):  # the side says the operand's truth only where it decided the test
        side, how = _side(acc, traced, replace(t, form="if"))
        return (side, how) if side is (t.form == "and") else (None, "")
    body = _hits(traced, t.body)
    other = _hits(traced, t.orelse) if t.orelse is not None else []
    if body and not other:
        return True, f"its ops at line {body[0]}"
    if other and not body:
        return False, f"its ops at line {other[0]}"
    if body or t.orelse is not None:
        return None, ""
    for k, _ in acc.ledger.siblings(acc.call.key, acc.frame):
        tc = acc.ledger.traced(k, acc.reads, acc.frame.function)
        if tc is not None and (seen := _hits(tc, t.body)):
            return False, (
                f"no op from lines {t.body[0]}-{t.body[1]}, where key {k.key[:12]} "
                f"has ops (line {seen[0]})"
            )
    if (made := _made_op(acc, t, traced)) is not None:
        return (
            False,
            f"no op from line {made[0]}, which makes one whenever it runs, reaching line {made[1]}",
        )
    return None, ""


def _made_op(acc: ParamAccounting, t: BranchTest, traced: TracedCode) -> tuple[int, int] | None:
    """:func:`~fxcache_core.lookup.branches.body_makes_op` for an AOTAutograd key with no backward (no pass merged ops),
    and for a test of a module's attribute :func:`_layer_op`'s."""
    call = acc.call
    if (
        call.key.kind is not KeyKind.AOT_AUTOGRAD
        or call.entry.backward is not None
        or inference_forward_graph(call.key) is None
    ):
        return None
    got = body_makes_op(acc.frame, t, call.inputs, call.taken, traced)
    if got is None and (layer := _layer_op(acc, t, traced)) is not None:
        return t.body[0], layer[1]
    return got


def _layer_op(acc: ParamAccounting, t: BranchTest, traced: TracedCode) -> tuple[str, int] | None:
    """For a test of a module's attribute whose body has no op in ``traced``: (the op the
    body makes whenever it runs, the return's line, which has ops in ``traced``), by
    :func:`~fxcache_core.lookup.layer_bodies.body_makes_op_on_layer`; None otherwise. The
    caller checks that the key's graph is an AOTAutograd inference graph as traced."""
    if not acc.p.name.startswith("self.") or _hits(traced, t.body):
        return None
    tensors = {m.group(1): v for src, v in acc.call.inputs.items() if isinstance(v, TensorArg) and v.shape != ()
               and src in acc.call.taken and (m := LOCAL_RE.fullmatch(src)) is not None}
    f = acc.frame
    got = body_makes_op_on_layer(f.file, f.line, f.function, t, tensors)
    return got if got is not None and got[1] in traced.lines else None


def _side_ops(
    acc: ParamAccounting, t: BranchTest, taken: bool, traced: TracedCode
) -> tuple[str, ...] | None:
    """The ops side ``taken`` of ``t`` makes, from a graph traced through it (this
    key's ``traced`` or another key's of the function, whose every line there has
    its ops printed); () for an ``else`` that is not there, unless the body exits (a
    ``return``...: the code after the ``if`` is then that side's) or, for a test of a
    number, code after it tests anything (:attr:`BranchTest.shared_after`); None when no
    graph shows them."""
    if t.form == "ifexp":  # the bare side makes none; the other, what this key's line shows
        if t.bare is None:
            return None
        return () if taken == t.bare else (tuple(sorted(traced.ops[t.line])) if t.line in traced.ops else None)
    span, opposite = (t.body, t.orelse) if taken else (t.orelse, t.body)
    if span is None:
        # The code after the if is the missing else's where the body exits; and for a test
        # of a number (an ordering, arithmetic), as for a float's (float_branches), a later
        # test could trace the body's ops for it.
        return None if t.exits or (t.op in ("lt", "le", "gt", "ge") or t.expr is not None) \
            and not t.shared_after else ()
    for tc in (
        traced,
        *(
            acc.ledger.traced(k, acc.reads, acc.frame.function)
            for k, _ in acc.ledger.siblings(acc.call.key, acc.frame)
        ),
    ):
        if tc is None:
            continue
        lines = _hits(tc, span)
        if lines and all(n in tc.ops for n in lines) and not _hits(tc, opposite):
            return tuple(sorted(op for n in lines for op in tc.ops[n]))
    return None


def branch_account(acc: ParamAccounting, v: object, what: str) -> ParamAccount | None:
    """Branch evidence for one parameter's accounting ``acc`` (its value ``v``, shown as
    ``what``): None when there is none to give (no test of it, or it is
    assigned); else accounted, undecided or ruling the key out."""
    p, reads = acc.p, acc.reads
    if not p.tests or p.assigned or reads.opaque:
        return None
    traced = acc.ledger.traced(acc.call.key, reads, acc.frame.function)
    if traced is None:
        return None
    known: dict[int, bool] = {}
    unknown: list[BranchTest] = []
    for i, _ in p.tests:
        t = reads.tests[i]
        if not _reached(acc, t, traced, known):
            continue
        side, how = _side(acc, traced, t)
        holds = branch_holds(t, v)
        if t.form in ("and", "or") and holds is (t.form == "and"):
            holds = side  # the operand leaves the test to the rest of it, which held as it did for the key
        if side is None or holds is None:
            unknown.append(t)
            continue
        known[i] = side
        if holds != side:
            mine = _side_ops(acc, t, side, traced)
            theirs = _side_ops(acc, t, holds, traced)
            if theirs is None and holds and mine == () and _made_op(acc, t, traced) is not None:
                layer = _layer_op(acc, t, traced)
                theirs = (f"torch.ops.aten.{layer[0]}.Tensor",) if layer else \
                    ("(an op the body makes whatever it is given)",)
            if mine is not None and theirs is not None and Counter(mine) != Counter(theirs):
                made = _made_up(acc, t, Counter(mine), Counter(theirs), traced)
                if made is not None:
                    return acc.result(
                        "undecided",
                        Reason(
                            f"{what} {'passes' if holds else 'fails'} {t.shown} (line {t.line}), which this "
                            f"key's graph was traced through the other way ({how}), and the ops by which the two "
                            f"sides differ may be made elsewhere: line {made[0]}, {made[1]}; FX's graph key is the "
                            "ops, not the lines they came from, so the call may trace this key's graph",
                            "branch-may-be-made-up",
                        ),
                    )
                return acc.result(
                    "rules-out",
                    Reason(
                        f"{what} {'passes' if holds else 'fails'} {t.shown} (line {t.line}), which this key's "
                        f"graph was traced through the other way ({how}): torch traces another graph",
                        "branch-not-taken",
                    ),
                )
            body = mine if side else theirs
            if t.exits and t.orelse is None and body:
                # The body returns: the code after the if is the other trace's side, which
                # has the body's ops only where code after the if makes them.
                made = _made_up(acc, t, Counter(body), Counter(), traced, after=t.body[1])
                if made is None:
                    return acc.result("rules-out", Reason(
                        f"{what} {'passes' if holds else 'fails'} {t.shown} (line {t.line}), which this key's "
                        f"graph was traced through the other way ({how}); the body returns, and no code after it "
                        f"may make its ops ({', '.join(sorted(set(body)))}): torch traces another graph",
                        "branch-not-taken"))
                return acc.result("undecided", Reason(
                    f"{what} {'passes' if holds else 'fails'} {t.shown} (line {t.line}), which this key's "
                    f"graph was traced through the other way ({how}); the body returns, and the code after it may "
                    f"make its ops: line {made[0]}, {made[1]}; FX's graph key is the ops, not the lines they came "
                    "from", "branch-may-be-made-up"))
            return acc.result(
                "undecided",
                Reason(
                    f"{what} {'passes' if holds else 'fails'} {t.shown} (line {t.line}), which this key's "
                    f"graph was traced through the other way ({how}); whether that side makes the same ops "
                    "the cache cannot tell",
                    "branch-unknown",
                ),
            )
    if unknown:
        t = unknown[0]
        return acc.result(
            "undecided",
            Reason(
                f"{what}: this key's graph has no op that shows which way {t.shown} (line {t.line}) "
                f"went when it was traced, and the cache does not record {p.name}; Dynamo's guards in a run's "
                f"TORCH_TRACE would (the trace explained, or given as {param('from_trace')})",
                "branch-unknown",
            ),
        )
    others = [n for n in p.other if not _skipped(acc, n, known)]
    if others or not known:
        return None
    i = next(iter(known))
    t = reads.tests[i]
    return acc.result(
        "accounted",
        Reason(
            f"{what}: this key's graph was traced through {t.shown} (line {t.line}) the way "
            f"{p.name}={text_of(v)} goes"
            + (f", and {len(known) - 1} more test of it" if len(known) > 1 else ""),
            "branch",
        ),
        brief=f"the graph went through {t.shown} (line {t.line}) that way",
    )


def _made_up(
    acc: ParamAccounting, t: BranchTest, mine: Counter[str], theirs: Counter[str], traced: TracedCode,
    after: int | None = None,
) -> tuple[int, str] | None:
    """Where other code of the compiled frame may make up the ops by which the sides of
    ``t`` differ (:func:`~fxcache_core.lookup.made_up_ops.may_make_up`, with the ops every
    graph of the function shows each line made); (0, why) where its source cannot be read."""
    fn = function_node(acc.frame.file, acc.frame.line, acc.frame.function)
    if fn is None:
        return 0, "the compiled function's source, which cannot be read"
    seen: dict[int, list[str]] = {}
    for tc in (traced, *(acc.ledger.traced(k, acc.reads, acc.frame.function)
                         for k, _ in acc.ledger.siblings(acc.call.key, acc.frame))):
        for n, ops in (tc.ops.items() if tc is not None else ()):
            seen.setdefault(n, []).extend(ops)
    return may_make_up(fn, t.line, ((mine - theirs) + (theirs - mine)).keys(), seen, _agreed(acc, t, traced),
                       after, _same_calls(acc))


def _same_calls(acc: ParamAccounting) -> Callable[[ast.Call], bool] | None:
    """For :func:`~fxcache_core.lookup.made_up_ops.may_make_up`: which calls of the module's
    own code run alike in the key's trace and the call's: a submodule
    (:func:`~fxcache_core.functions.cond_tests.submodules`) called as ``self.name(...)`` with
    constants and the tensors the call gives for the frame's parameters (none the code
    assigns), whose guards the key's holds where it serves the call. Its ops depend on those
    and on its own state, which the call leaves as it was where it gives nothing but the
    frame's parameters and the attribute tested. Where it gives other attributes of the
    module (``self.keep=0.25``), only a stock layer
    (:func:`~fxcache_core.functions.cond_tests.nn_layers`), which reads none of them; and
    where ``self.training`` is tested or given (model.train() and model.eval() set every
    submodule's), only one whose ops do not depend on it
    (:data:`~fxcache_core.lookup.layer_bodies.LAYER_TRAINING_FREE`). None where the call
    gives any other state."""
    tested = acc.user_src if acc.p.name.startswith("self.") else None
    tensors = {m.group(1) for src, v in acc.call.inputs.items()
               if isinstance(v, TensorArg) and (m := LOCAL_RE.fullmatch(src)) is not None}
    params = {q.name for q in acc.reads.params if not q.assigned and q.name != acc.p.name and q.name in tensors}
    others = [src for src in acc.call.inputs
              if src != tested and not (LOCAL_RE.match(src) and not src.startswith("L['self']"))]
    if any(not re.fullmatch(r"L\['self'\]\.\w+", src) for src in others):
        return None
    subs = submodules(module_node(acc.frame.file))
    if others or tested == "L['self'].training":
        layers = nn_layers(module_node(acc.frame.file))
        free = LAYER_TRAINING_FREE if "L['self'].training" in (*others, tested) else None
        subs = frozenset(n for n in subs if (c := layers.get(n.removeprefix("self."))) and (free is None or c in free))

    def same(c: ast.Call) -> bool:
        f = c.func
        return (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self"
                and f"self.{f.attr}" in subs
                and all(isinstance(a, ast.Constant) or isinstance(a, ast.Name) and a.id in params
                        for a in (*c.args, *(k.value for k in c.keywords))))
    return same


def _agreed(acc: ParamAccounting, t: BranchTest, traced: TracedCode) -> dict[int, tuple[bool, bool]]:
    """The other tests of the frame's parameters that the call's values decide (a parameter
    the function does not assign), whose side the call does not take has no op in this key's
    graph: line -> (the side the call takes, whether the key's graph has ops from it), for
    :func:`~fxcache_core.lookup.made_up_ops.may_make_up`. A module's attribute the code tests
    (and never changes) counts too, where the call gives it.
    A conditional expression counts where this key's graph shows its side, the side the
    call takes."""
    by_test = {i: q for q in (*acc.reads.params, *acc.reads.attrs) for i, _ in q.tests}
    attrs = {q.name for q in acc.reads.attrs}
    out: dict[int, tuple[bool, bool]] = {}
    for i, t2 in enumerate(acc.reads.tests):
        q = by_test.get(i)
        if t2.line == t.line or q is None or q.assigned or t2.form in ("and", "or"):
            continue
        src = "L['self']." + q.name.removeprefix("self.")
        if q.name in attrs and src not in acc.call.inputs:
            continue  # may differ from the key's: the call does not say
        given = acc.call.inputs.get(src)
        v = getattr(given, "value", given) if q.name in attrs else \
            type(acc)(acc.ledger, acc.call, acc.frame, acc.reads, q).value()  # type: ignore[call-arg]
        if type(v) is object:  # not given, and no default
            continue
        holds = branch_holds(t2, v)
        if holds is None:
            continue
        if t2.form == "ifexp":
            if _side(acc, traced, t2)[0] == holds:
                out[t2.line] = (holds, holds != t2.bare)
            continue
        taken, other = (t2.body, t2.orelse) if holds else (t2.orelse, t2.body)
        if not _hits(traced, other):
            out[t2.line] = (holds, bool(_hits(traced, taken)))
    return out


def _reached(
    acc: ParamAccounting, t: BranchTest, traced: TracedCode, known: dict[int, bool]
) -> bool:
    """Whether the trace reached ``t``: no test around it is known to have gone the
    other way (a test of this parameter, or of another one the call agrees on)."""
    for i, on in t.within:
        outer = acc.reads.tests[i]
        side = known.get(i)
        if side is None:
            side, _ = _side(acc, traced, outer)
        if side is not None and side != on:
            return False
    return True


def _skipped(acc: ParamAccounting, line: int, known: dict[int, bool]) -> bool:
    """Whether a read at ``line`` sits on a side of a test of this parameter that
    the trace did not take (nor does the call: it agrees with every known test)."""
    for i, side in known.items():
        t = acc.reads.tests[i]
        if t.form != "if":
            continue  # both sides share the line
        span = t.orelse if side else t.body
        if span is not None and span[0] <= line <= span[1]:
            return True
    return False


def _hits(traced: TracedCode, span: tuple[int, int] | None) -> list[int]:
    """The lines of ``span`` (first, last; None: no lines) that have ops in ``traced``."""
    if span is None:
        return []
    return sorted(n for n in traced.lines if span[0] <= n <= span[1])
