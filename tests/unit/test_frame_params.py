"""How the compiled frame's code reads each parameter (fxcache_core/functions/params.py).

Read from source text with ``ast`` (never run): which tests of an ``if`` compare one
parameter with constants (and which lines each side spans), every other read, what
the body assigns, defaults and annotations, and a resume frame's reads after its break.
"""

from __future__ import annotations

import textwrap

from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.functions.params import frame_reads

SOURCE = textwrap.dedent('''\
    import torch

    def f(x, clip: bool = False, act="relu", mask: torch.Tensor | None = None, *, n=3, scale=None, k=[1]):
        y = x * 2
        if clip:
            y = y.clamp(0, 1)
        if act == "gelu":
            y = y + 1
        elif act in ("tanh", "sigmoid"):
            if mask is not None:
                y = y * mask
        else:
            y = y - 1
        scale = scale if scale is not None else 2.0
        return y * n * scale

    def g(x, flag=False, *args, **kwargs):
        def inner(flag):
            return flag
        for i in range(2):
            x = x + i
        h = lambda: flag
        return x, h, inner

    def opaque(x, flag=False):
        return locals()

    def passes_on(x, **extra):
        return g(x, **extra)
''')


def _reads(tmp_path, function: str, line: int):
    path = tmp_path / "m.py"
    path.write_text(SOURCE)
    return frame_reads(CompiledFrom(function=function, file=str(path), line=line))


def test_tests_on_one_parameter_and_the_lines_of_each_side(tmp_path):
    r = _reads(tmp_path, "f", 3)
    assert [p.name for p in r.params] == ["x", "clip", "act", "mask", "n", "scale", "k"]
    tests = {t.text: t for t in r.tests}
    assert tests["clip"].op == "truth" and tests["clip"].body == (6, 6) and tests["clip"].orelse is None
    gelu = tests["act == 'gelu'"]
    assert (gelu.op, gelu.operand, gelu.body, gelu.orelse) == ("eq", "gelu", (8, 8), (9, 13))
    inner = tests["act in ('tanh', 'sigmoid')"]
    assert inner.op == "in" and inner.within == ((r.tests.index(gelu), False),)
    masked = tests["mask is not None"]
    assert masked.op == "is-not" and masked.within == ((r.tests.index(gelu), False), (r.tests.index(inner), True))
    assert gelu.holds("gelu") and not gelu.holds("relu") and inner.holds("tanh")
    assert tests["clip"].holds(True) and not tests["clip"].holds(None) and masked.holds(None) is False


def test_each_parameters_reads_defaults_and_annotation(tmp_path):
    r = _reads(tmp_path, "f", 3)
    p = {q.name: q for q in r.params}
    assert p["clip"].default.literal and p["clip"].default.value is False and p["clip"].annotation == "bool"
    assert [line for _, line in p["clip"].tests] == [5] and p["clip"].other == ()
    assert p["mask"].tensor_annotated and not p["clip"].tensor_annotated
    assert p["mask"].other == (11,)  # y * mask, inside the test's body
    assert p["n"].keyword_only and p["n"].other == (15,)
    assert p["scale"].assigned and not p["clip"].assigned
    assert p["k"].default.given and not p["k"].default.literal  # a list: no value match takes
    assert p["x"].default.given is False


def test_nested_functions_and_lambdas_read_a_parameter_or_shadow_it(tmp_path):
    r = _reads(tmp_path, "g", 17)
    assert r.varargs and r.varkw and r.loops == ((20, 21),)
    flag = r.param("flag")
    assert flag is not None and flag.assigned  # `def inner(flag)` shadows it: nothing is read as it
    assert _reads(tmp_path, "opaque", 25).opaque


def test_a_resume_frame_reads_what_comes_after_its_break(tmp_path):
    r = _reads(tmp_path, "torch_dynamo_resume_in_f_at_12", 3)
    p = {q.name: q for q in r.params}
    assert not p["clip"].read and not p["act"].read  # their tests are before line 12
    assert p["n"].read and p["scale"].read
    assert _reads(tmp_path, "torch_dynamo_resume_in_g_at_21", 17).param("x").read  # inside the loop


def test_a_source_that_cannot_be_read_says_why(tmp_path):
    from fxcache_core.reasons import Reason

    gone = frame_reads(CompiledFrom(function="f", file=str(tmp_path / "gone.py"), line=3))
    assert isinstance(gone, Reason) and gone.code == "source-unreadable"
    moved = _reads(tmp_path, "f", 20)  # another def at that line now
    assert isinstance(moved, Reason) and moved.code == "source-changed"


def test_whether_the_body_names_its_kwargs(tmp_path):
    """A **kwargs the body never names cannot change what Dynamo traces; one passed on
    can (fxcache_core/lookup/kwargs_evidence.py accounts the first as unread)."""
    g = _reads(tmp_path, "g", 17)
    assert (g.varkw, g.varkw_name, g.varkw_read) == (True, "kwargs", False)
    on = _reads(tmp_path, "passes_on", 28)
    assert (on.varkw_name, on.varkw_read) == ("extra", True)
    f = _reads(tmp_path, "f", 3)
    assert (f.varkw, f.varkw_name, f.varkw_read) == (False, None, False)


def test_a_keyword_binds_to_the_key_input_in_a_kw_dict_of_any_name(tmp_path):
    """kw_sum(x, **kw) reads kw['bias']: the key's input is L['kw']['bias'], and a call's
    ``bias=[8]`` names it (not left unbound, where its sizes would go unchecked). Where
    ``bias`` is a parameter of the function, or the dict is a named parameter and not the
    ``**`` one, the name binds to nothing else; nor without a readable source."""
    from fxcache_core.lookup.inputs import alias

    path = tmp_path / "kw.py"
    path.write_text("def kw_sum(x, **kw):\n    return x + kw['bias']\n\n\n"
                    "def by_dict(x, batch, bias=None):\n    return x + batch['bias']\n")
    bias = object()
    frame = CompiledFrom(function="kw_sum", file=str(path), line=1)
    inputs, bound = alias({"L['x']": 1, "L['bias']": bias}, {"L['x']", "L['kw']['bias']"}, frame)
    assert inputs["L['kw']['bias']"] is bias and ("L['bias']", "L['kw']['bias']") in bound
    other = CompiledFrom(function="by_dict", file=str(path), line=5)
    inputs, bound = alias({"L['bias']": bias}, {"L['batch']['bias']"}, other)
    assert inputs == {"L['bias']": bias} and bound == ()
    hidden = CompiledFrom(function="kw_sum", file=str(tmp_path / "gone.py"), line=1)
    assert alias({"L['bias']": bias}, {"L['kw']['bias']"}, hidden) == ({"L['bias']": bias}, ())


ORDERS = textwrap.dedent('''\
    def gate(x, n=3):
        if x.shape[0] > 4:
            x = x.sin()
        y = x if n >= 2 else -x
        k = min(n, x.shape[1])
        if 2 < 3:
            pass
        return y[:, :k]
''')

REGIONS = textwrap.dedent('''\
    def regions(x):
        if x.shape[0] >= 16:
            y = x * 2
        elif x.shape[0] >= 8:
            y = x * 2
        else:
            y = x * 2
        return y + 1
''')


def test_the_places_the_code_orders_values_in_python(tmp_path):
    """``if``/ternary tests with ``<``/``>`` of a non-literal and ``min``/``max`` of two values;
    an ``if`` chain whose every side runs the same statements, and literals alone, are not."""
    from fxcache_core.functions.params import FrameReads, reads_of_def
    from tests.synth import one_def

    gate = reads_of_def(one_def(ORDERS), "m.py")
    assert isinstance(gate, FrameReads)
    assert gate.order_tests == ((2, "x.shape[0] > 4"), (4, "n >= 2"), (5, "min(n, x.shape[1])"))
    assert reads_of_def(one_def(REGIONS), "m.py").order_tests == ()


ORDERED = textwrap.dedent('''\
    def f(x, t=0.7, n=3, s="a", b=True):
        if t > 0.5:
            x = x.relu()
        if 0 < n:
            x = x + 1
        elif n <= -2:
            x = x - 1
        if s < "b":
            x = x * 2
        if t > True:
            x = x * 3
        if n >= x.shape[0]:
            x = x * 4
        return x
''')


def test_an_ordering_against_a_number_is_a_test_and_holds_as_python_orders(tmp_path):
    """``if t > 0.5:`` and ``if 0 < n:`` (the literal on the left: ``n > 0``) are tests of one
    parameter; an ordering against a str, a bool or anything not a literal is a read."""
    path = tmp_path / "o.py"
    path.write_text(ORDERED)
    r = frame_reads(CompiledFrom(function="f", file=str(path), line=1))
    tests = {t.text: t for t in r.tests}
    assert set(tests) == {"t > 0.5", "0 < n", "n <= -2"}
    above, pos, low = tests["t > 0.5"], tests["0 < n"], tests["n <= -2"]
    assert (above.op, above.operand, above.body, above.orelse) == ("gt", 0.5, (3, 3), None)
    assert (pos.op, pos.operand) == ("gt", 0) and (low.op, low.operand) == ("le", -2)
    assert low.within == ((r.tests.index(pos), False),)
    assert above.holds(0.9) and not above.holds(0.5) and above.holds(1) and not above.holds(False)
    assert pos.holds(1) and not pos.holds(0) and not pos.holds(-0.0) and pos.holds(True)
    assert low.holds(-2) and not low.holds(-1.5)
    # Not a number: unknown, never a side.
    assert above.holds("x") is None and above.holds(None) is None and above.holds((1,)) is None
    p = {q.name: q for q in r.params}
    assert p["s"].tests == () and p["s"].other == (8,)
    assert [line for _, line in p["t"].tests] == [2] and p["t"].other == (10,)
    assert [line for _, line in p["n"].tests] == [4, 6] and p["n"].other == (12,)


ARITH = textwrap.dedent('''\
    def f(x, n=2, t=1.0, k=3, m=1):
        if n % 2 == 0:
            x = x.sin()
        if 1 < t * 2 - 1:
            x = x.cos()
        if k // m > 1:
            x = x.exp()
        if m + len(x) > 1:
            x = x.tan()
        if n % 2 is None:
            x = x.neg()
        return x
''')


def test_arithmetic_of_one_parameter_with_number_literals_is_a_test_computed_as_python_does(tmp_path):
    """``if n % 2 == 0:`` is a test of n (its value computed through ``n % 2``, by walking
    the expression, never eval); arithmetic of two parameters, or with a call, is a read."""
    path = tmp_path / "a.py"
    path.write_text(ARITH)
    r = frame_reads(CompiledFrom(function="f", file=str(path), line=1))
    tests = {t.text: t for t in r.tests}
    assert set(tests) == {"n % 2 == 0", "1 < t * 2 - 1"}
    even, wide = tests["n % 2 == 0"], tests["1 < t * 2 - 1"]
    assert (even.op, even.operand, even.expr) == ("eq", 0, "n % 2")
    assert (wide.op, wide.operand, wide.expr) == ("gt", 1, "t * 2 - 1")
    assert even.holds(4) and not even.holds(3) and even.holds(0) and even.holds(-2) and even.holds(2.0)
    assert wide.holds(1.5) and not wide.holds(1.0) and not wide.holds(0)
    assert even.holds("ab") is None and even.holds(None) is None and even.holds((2,)) is None
    p = {q.name: q for q in r.params}
    assert p["k"].tests == () and p["m"].tests == () and p["n"].other == (10,)


def test_a_body_that_returns_says_so(tmp_path):
    """``if t > 0.5: return x.sin()`` then ``return x.sin()``: the code after the ``if`` is
    the other side's (its ops not known from the body's), so the test says its body exits."""
    path = tmp_path / "e.py"
    path.write_text(textwrap.dedent('''\
        def f(x, t=1.0, flag=True):
            if t > 0.5:
                return x.sin()
            if flag:
                x = x.cos()
            return x.sin()
    '''))
    r = frame_reads(CompiledFrom(function="f", file=str(path), line=1))
    tests = {t.text: t for t in r.tests}
    assert tests["t > 0.5"].exits and not tests["flag"].exits


def test_code_after_an_if_that_tests_anything_is_not_shared(tmp_path):
    """``if t > 0.5: y = x.sin()`` then ``if y is None: y = x.sin()``: the later test can
    trace the body's ops for the other side, so the code after the first ``if`` is not shared."""
    path = tmp_path / "s.py"
    path.write_text(textwrap.dedent('''\
        def f(x, t=1.0, u=1.0, n=2):
            y = None
            if t > 0.5:
                y = x.sin()
            if y is None:
                y = x.sin()
            for _ in range(2):
                if n > 1:
                    y = y + 1
            if u > 0:
                y = y * 2
            return y
    '''))
    r = frame_reads(CompiledFrom(function="f", file=str(path), line=1))
    tests = {t.text: t for t in r.tests}
    assert not tests["t > 0.5"].shared_after  # an if after it
    assert not tests["n > 1"].shared_after  # in a loop
    assert tests["u > 0"].shared_after
