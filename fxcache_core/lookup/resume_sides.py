"""Resume frames after a data-dependent jump: which one a call runs is the data's choice.

When Dynamo meets a jump on a tensor's value (``if y.sum() > 0:``, a ``while``, an
``assert``, a conditional expression, ``and``/``or`` on a tensor) it compiles the graph
traced so far and makes two resume functions, one for each side of the jump
(``generic_jump`` in torch/_dynamo/symbolic_convert.py: ``create_call_resume_at`` for
the next instruction and for the jump's target). Both are named
``torch_dynamo_resume_in_<fn>_at_<line>`` after the line of the jump, and each is a
frame of its own with its own graphs and keys. Which of them a call runs depends on
the values in its tensors, which no call description states and the cache does not
record: a key of one side may fit a call's shapes while the call takes the other side,
whose graph is another key (one the cache may not hold).

:func:`side_unknown` says, for a key's compiled frame, whether it is such a resume
frame, or one resumed after one (a resume of a resume, each break line of the chain):
the line a break is named after holds a conditional (the test of an ``if``, ``while``
or ``assert``, a conditional expression, ``and``/``or``, a comprehension's ``if``) in the
function the frame resumes, or the source cannot be read to say it does not. Such a key
that fits the call is undecided (``resume-side-unknown``, naming the line); a key that
does not fit stays ruled out, as it is on either side. The frame compiled first, before
any break, is not concerned: its code runs for every call. Nothing here imports torch or
runs the source.
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace

from fxcache_core.functions.frames import CompiledFrom, resume_parent
from fxcache_core.functions.trees import function_node
from fxcache_core.lookup.match_report import KeyMatch
from fxcache_core.reasons import Reason

__all__ = ["break_lines", "conditional_at", "side_unknown", "with_side_unknown"]

_RESUME = re.compile(r"^torch_dynamo_resume_in_(?P<parent>\w+?)_at_(?P<line>[0-9]+)$")


def break_lines(function: str) -> tuple[int, ...]:
    """The lines of the graph breaks a resume frame ``function`` was resumed after,
    outermost first (``torch_dynamo_resume_in_torch_dynamo_resume_in_f_at_3_at_7`` ->
    ``(3, 7)``); () for a frame that is no resume frame."""
    out: list[int] = []
    while (m := _RESUME.match(function)) is not None:
        out.append(int(m.group("line")))
        function = m.group("parent")
    return tuple(reversed(out))


def _tests(node: ast.AST) -> list[ast.AST]:
    """The conditions ``node`` jumps on: an ``if``/``while``/``assert``'s test, a conditional
    expression's, an ``and``/``or`` (its operands but the last), a comprehension's ``if`` s."""
    if isinstance(node, (ast.If, ast.While, ast.IfExp)):
        return [node.test]
    if isinstance(node, ast.Assert):
        return [node.test]
    if isinstance(node, ast.BoolOp):
        return list(node.values[:-1])
    if isinstance(node, ast.comprehension):
        return list(node.ifs)
    return []


def conditional_at(fn: ast.FunctionDef | ast.AsyncFunctionDef, line: int) -> bool:
    """Whether a jump on a condition of ``fn``'s own code (not a nested ``def``'s or
    ``lambda``'s) has its test on ``line`` (the line Dynamo names a resume after)."""
    todo: list[ast.AST] = list(fn.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        for t in _tests(node):
            first = getattr(t, "lineno", None)
            if first is not None and first <= line <= (getattr(t, "end_lineno", None) or first):
                return True
        todo.extend(ast.iter_child_nodes(node))
    return False


def side_unknown(frame: CompiledFrom | None) -> Reason | None:
    """Why a key compiled from ``frame`` cannot be told to be the side a call takes
    (code ``resume-side-unknown``, see the module docstring); None where ``frame`` is no
    resume frame, or none of its break lines holds a conditional."""
    if frame is None:
        return None
    lines = break_lines(frame.function)
    if not lines:
        return None
    parent = resume_parent(frame.function) or frame.function
    fn = function_node(frame.file, frame.line, parent)
    if fn is None:
        at = lines[-1]
        return Reason(
            f"this frame resumes {parent} after the graph break at line {at}, and its source cannot be read "
            "to say whether the break is a jump on a tensor's value (an if on the data), after which Dynamo "
            "makes one frame of this name for each side, and the data decide which one a call runs", "resume-side-unknown")
    jumps = [n for n in lines if conditional_at(fn, n)]
    if not jumps:
        return None
    at = jumps[-1]
    return Reason(
        f"the graph break at line {at} of {parent} is at a condition that may be a tensor's value (an if on "
        f"the data): Dynamo makes one frame resumed there for each side, both of this name, and which one a "
        f"call runs depends on the values in its tensors, which the cache does not record: this key is one "
        f"side's; the call may take the other, whose graph is another key", "resume-side-unknown")


def with_side_unknown(m: KeyMatch) -> KeyMatch:
    """``m`` undecided where its compiled frame is a resume frame after a data-dependent
    jump (:func:`side_unknown`) and it fits the call; as it is otherwise (a key that does
    not fit is ruled out on either side)."""
    if not m.fits:
        return m
    why = side_unknown(m.compiled)
    if why is None:
        return m
    # A lookup a guard aborted is this side's too: say it with the reason, undecided.
    more = (m.aborted,) if m.aborted is not None else ()
    return replace(m, uncertain=(why, *m.uncertain, *more), aborted=None)
