"""Every field parser of the decoding layer is total: hostile field values never make
a valid entry corrupt.

An entry is valid when it unpickles within its budgets and its root and guards string
are what torch reads; the other fields are read by parsers that either answer or leave
their field absent (``DecodedEntry.absent``). Here each parser is fed hostile values
(huge ints, deep nesting, odd unicode, None, wrong types), directly and through whole
synthetic entries (tests/synth.py): torch never writes such fields, but it loads such an
entry, since it parses none of them on load.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fxcache_core.cache.keys import KeyKind
from fxcache_core.decode import entries, origins, printed, sources, unpickler
from fxcache_core.decode.entries import FIELDS, LIGHT, ORIGIN, decode_entry
from fxcache_core.decode.unpickler import load_stubs
from fxcache_core.errors import EntryDecodeError
from fxcache_core.state.index import from_json, light, to_json
from tests.synth import Fake, dumps

HUGE = "9" * 5000  # past Python's 4,300-digit int conversion limit
_AOT = "torch._functorch._aot_autograd.aot_autograd_result"
_SRC = "torch._dynamo.source"

_HOSTILE_TEXT = [
    "",
    HUGE,
    "9" * 4299,
    "-" + HUGE,
    "(" * 100_000,
    "[" * 50_000 + "]" * 50_000,
    "\x00" * 10,
    "\ud800\udfff",
    "\u202e" + "s0",
    "١٢٣",
    "𝟗𝟗",
    "s\u0300",
    "\ufeff",
    "🙂" * 1000,
    f"[abc] example_inputs[{HUGE}]: ('s0',)",
    "[abc] example_inputs[١]: ('s0',)",
    f"[abc] example_inputs[{'9' * 4299}]: ('s0',)",  # converts: a 4,299-digit position
    "class GraphModule(torch.nn.Module):\n    def forward(\n        self,\n"
    f'        arg0_1: "Sym(s0)",  # PlainAOTInput(idx={"9" * 4299})\n    ):\n',
    "[abc] example_inputs[0]: " + "(" * 10_000,
    f'        arg0_1: "Sym(s0)",  # PlainAOTInput(idx={HUGE})',
    'def forward(\n        arg0_1: "Sym(s0)",  # PlainAOTInput(idx=٣)\n    ):\n',
    f"# File: /a.py:{HUGE} in f, code: x",
    f"s0 = {HUGE}",
    f"\ndef get_args():\n    arg0_1 = {HUGE}\n",
    "\ndef get_args():\n    arg0_1 = 9\n    return [" + "a, " * 10_000 + "]\n",
    f'  File "/a.py", line {HUGE}, in f\n    x\n',
    "# File: " * 20_000,
    "\n" * 100_000,
]
"""Texts no torch writes: each a way a parser of printed text could fail."""


def _nested(depth: int) -> Any:
    node: Any = "leaf"
    for _ in range(depth):
        node = [node]
    return node


_HOSTILE = [
    None,
    True,
    0,
    -1,
    2**63,
    10**5000,
    -(10**5000),
    float("nan"),
    float("inf"),
    b"bytes",
    b"\xff" * 100,
    *_HOSTILE_TEXT,
    [],
    [None],
    [HUGE, 10**5000],
    (HUGE,),
    {"is_backward": HUGE},
    {HUGE: 1},
    {1: 2},
    _nested(200),
    [(1, HUGE), (2, 3)],
    [[1, 2, 3]],
    [(1,)] * 100,
    {"input_info": 3},
    (HUGE, [HUGE]),
    ("fk", "not a list"),
    ("fk", [1, None]),
    (7, []),
    [[] for _ in range(20)],
]
"""Values of every type and shape a field could hold in a hostile pickle."""


def _stubs() -> list[Any]:
    """Stubs of classes torch writes, holding hostile state (made by the stub unpickler)."""
    made = [
        Fake(_SRC, "LocalSource", local_name=HUGE),
        Fake(_SRC, "LocalSource", local_name=10**5000),
        Fake(
            _SRC,
            "TensorPropertySource",
            base=Fake(_SRC, "LocalSource", local_name="x"),
            prop=HUGE,
            idx=10**5000,
        ),
        Fake(
            _SRC,
            "GetItemSource",
            base=Fake(_SRC, "LocalSource", local_name="x"),
            index=_nested(100),
        ),
        Fake(
            _AOT,
            "CompiledForward",
            fx_graph_cache_info=(HUGE, [HUGE]),
            fx_graph_guard_expr=10**5000,
        ),
        Fake(
            _AOT,
            "BundledCompiledForward",
            result=Fake(
                "torch._inductor.output_code",
                "CompiledFxGraph",
                inductor_post_grad_graph_str=HUGE,
                cache_linemap=HUGE,
            ),
        ),
        Fake(
            "torch._functorch._aot_autograd.schemas",
            "CacheableAOTConfig",
            aot_autograd_arg_pos_to_source=[Fake(_SRC, "LocalSource", local_name="\ud800")] * 3,
        ),
    ]
    root, _ = load_stubs(dumps(made))
    return list(root)


_PARSERS = {
    "parse_graph_signature": printed.parse_graph_signature,
    "example_run": printed.example_run,
    "parse_example_run": printed.parse_example_run,
    "parse_hints": printed.parse_hints,
    "parse_get_args": printed.parse_get_args,
    "symbol_hints": lambda v: printed.symbol_hints(
        printed.parse_graph_signature('def forward(self, arg0_1: "Sym(s0)"):'), v, v
    ),
    "parse_origin": origins.parse_origin,
    "parse_linemap_frames": origins.parse_linemap_frames,
    "linemap_stacks": lambda v: list(origins.linemap_stacks(v)),
    "stack_frames": lambda v: list(origins.stack_frames(v)),
    "graph_comment": origins.graph_comment,
    "source_name": sources.source_name,
    "source_names": lambda v: sources.source_names(v if isinstance(v, list) else [v, v]),
    "plain": unpickler.plain,
    "str_items": unpickler.str_items,
    "iter_str_items": lambda v: list(unpickler.iter_str_items(v)),
    "opt_str": unpickler.opt_str,
    "opt_int": unpickler.opt_int,
    "is_backward": entries._is_backward,
    "arg_sources": entries._arg_sources,
    "requires_grad": entries._requires_grad,
    "fx_ref": entries._fx_ref,
    "bundled_graph": entries._bundled_graph,
}
"""Each parser that turns an unpickled field into a DecodedEntry field."""
_TEXT_ONLY = {
    "parse_graph_signature",
    "parse_hints",
    "parse_get_args",
    "symbol_hints",
    "parse_origin",
    "stack_frames",
    "graph_comment",
}
"""Parsers of printed text: the decoder gives them a str or None only (``opt_str``)."""
_NEVER_RAISE = {
    "example_run",
    "source_name",
    "source_names",
    "str_items",
    "iter_str_items",
    "opt_str",
    "opt_int",
    "is_backward",
    "bundled_graph",
    "linemap_stacks",
    "requires_grad",
}
"""Parsers that answer without raising on any value; the rest may raise an ordinary
exception, which the field layer turns into an absent field."""


@pytest.mark.parametrize("name", sorted(_PARSERS))
def test_each_parser_answers_or_fails_as_an_absent_field_on_hostile_values(name):
    parse = _PARSERS[name]
    values = [
        v for v in _HOSTILE + _stubs() if name not in _TEXT_ONLY or v is None or isinstance(v, str)
    ]
    if name in ("example_run", "parse_example_run"):
        values = [(v,) for v in values if isinstance(v, str)] + [(), ("a", "b")]
    for value in values:
        start = time.process_time()
        try:
            parse(value)
        except Exception as e:  # an ordinary failure: the field layer leaves the field absent
            assert name not in _NEVER_RAISE, (name, repr(value)[:80], e)
            f = entries._Fields()
            assert f.read(name, "empty", parse, value) == "empty"
            assert f.absent and f.absent[0][0] == name and len(f.absent[0][1]) <= 200
        assert time.process_time() - start < 2, (name, repr(value)[:80])


_FX_FIELDS = (
    "_fx_graph_cache_debug_lines",
    "inductor_post_grad_graph_str",
    "source_code",
    "runnable_graph_str",
    "fx_kwargs",
    "cache_linemap",
    "_fx_graph_cache_key",
    "cache_key",
    "_time_taken_ns",
)
_AOT_FIELDS = (
    "sanitized_aot_config",
    "runtime_metadata",
    "aot_forward_graph_str",
    "aot_backward_graph_str",
    "forward_time_taken_ns",
    "backward_time_taken_ns",
    "compiled_fw",
    "compiled_bw",
)
_HOSTILE_STUBS = [
    Fake(_SRC, "LocalSource", local_name=HUGE),
    Fake(_AOT, "CompiledForward", fx_graph_cache_info=(HUGE, [HUGE]), fx_graph_guard_expr=10**5000),
    Fake(_AOT, "CompiledForward", fx_graph_cache_info="fk", fx_graph_guard_expr=None),
    Fake(
        _AOT,
        "BundledCompiledForward",
        result=Fake(
            "torch._inductor.output_code",
            "CompiledFxGraph",
            inductor_post_grad_graph_str=HUGE,
            cache_linemap=[(1, HUGE)],
        ),
    ),
    Fake(
        "torch._functorch._aot_autograd.schemas",
        "CacheableAOTConfig",
        aot_autograd_arg_pos_to_source=[Fake(_SRC, "LocalSource", local_name=10**5000), None, HUGE],
    ),
    Fake(
        "torch._functorch._aot_autograd.schemas",
        "ViewAndMutationMeta",
        input_info=[
            Fake("torch._functorch._aot_autograd.schemas", "InputAliasInfo", requires_grad=HUGE)
        ],
    ),
]
_VALUE = st.one_of(
    st.sampled_from([v for v in _HOSTILE if not isinstance(v, float)] + _HOSTILE_STUBS),
    st.text(max_size=50),
    st.integers(),
    st.lists(st.one_of(st.text(max_size=20), st.integers()), max_size=5),
    st.sampled_from(_HOSTILE_TEXT).map(lambda t: [t]),
)


_PAIR = "\ud800\udfff"
"""A high surrogate then a low one, as two code points: a pickle can hold them
(``surrogatepass``), and JSON writes them as the escapes of the one character they pair to."""


def _has_pair(v: Any) -> bool:
    if isinstance(v, str):
        return _PAIR in v
    if isinstance(v, (list, tuple)):
        return any(map(_has_pair, v))
    if isinstance(v, dict):
        return any(_has_pair(k) or _has_pair(x) for k, x in v.items())
    return isinstance(v, Fake) and _has_pair(v.state)


@pytest.mark.xfail(
    strict=True, reason="JSON cannot tell two surrogate code points from the one they pair to"
)
def test_a_surrogate_pair_survives_the_index_row():
    # Known gap: no torch writes such a string (Python never makes the pair from text it
    # decodes, only a pickle's surrogatepass does); every command reads the entry through
    # its row, so they agree with each other, but the row holds U+103FF.
    data = dumps(
        Fake(
            "torch._inductor.output_code",
            "CompiledFxGraph",
            guards_expr="L['t0'] > 2",
            _fx_graph_cache_key="\ud800\udfff",
        )
    )
    d = decode_entry(data, KeyKind.FX_GRAPH, LIGHT)
    assert ascii(from_json(to_json(d)).fx_key) == ascii(d.fx_key)  # ascii: a report must encode


def _decoded(data: bytes, kind: KeyKind) -> dict[frozenset[str], Any]:
    return {fields: decode_entry(data, kind, fields) for fields in (FIELDS, LIGHT, ORIGIN)}


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.dictionaries(st.sampled_from(_FX_FIELDS), _VALUE, max_size=len(_FX_FIELDS)))
def test_a_valid_fx_entry_stays_valid_whatever_its_other_fields_hold(state):
    data = dumps(
        Fake("torch._inductor.output_code", "CompiledFxGraph", guards_expr="L['t0'] <= 8", **state)
    )
    got = _decoded(data, KeyKind.FX_GRAPH)  # never raises: validity is the root and guards alone
    whole = got[FIELDS]
    assert whole.guards_expr == "L['t0'] <= 8"
    assert light(whole) == got[LIGHT]
    assert {name for name, _ in whole.absent} <= set(FIELDS)
    if not _has_pair(state):  # test_a_surrogate_pair_survives_the_index_row says why
        assert from_json(to_json(got[LIGHT])) == got[LIGHT]  # the index keeps it


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.dictionaries(st.sampled_from(_AOT_FIELDS), _VALUE, max_size=len(_AOT_FIELDS)))
def test_a_valid_aot_entry_stays_valid_whatever_its_other_fields_hold(state):
    data = dumps(Fake(_AOT, "AOTAutogradResult", guards_expr="L['t0'] > 2", **state))
    got = _decoded(data, KeyKind.AOT_AUTOGRAD)
    whole = got[FIELDS]
    assert whole.guards_expr == "L['t0'] > 2"
    assert light(whole) == got[LIGHT]
    if not _has_pair(state):
        assert from_json(to_json(got[LIGHT])) == got[LIGHT]


@pytest.mark.parametrize(
    "guards",
    [7, 10**5000, b"L['t0'] > 2", ["L['t0'] > 2"], HUGE.encode()],
    ids=["int", "huge-int", "bytes", "list", "huge-bytes"],
)
def test_guards_torch_could_not_evaluate_still_make_the_entry_corrupt(guards):
    for kind, name in (
        (KeyKind.FX_GRAPH, "torch._inductor.output_code.CompiledFxGraph"),
        (KeyKind.AOT_AUTOGRAD, f"{_AOT}.AOTAutogradResult"),
    ):
        module, cls = name.rsplit(".", 1)
        for fields in (FIELDS, LIGHT, ORIGIN):
            with pytest.raises(EntryDecodeError) as err:
                decode_entry(dumps(Fake(module, cls, guards_expr=guards)), kind, fields)
            assert err.value.message.code == "guards-not-a-string"


_ROOTS = {
    KeyKind.FX_GRAPH: ("torch._inductor.output_code", "CompiledFxGraph", _FX_FIELDS),
    KeyKind.AOT_AUTOGRAD: (_AOT, "AOTAutogradResult", _AOT_FIELDS),
}


@pytest.mark.parametrize("kind", list(_ROOTS), ids=lambda k: k.value)
def test_each_field_of_a_valid_entry_holding_each_hostile_value_leaves_it_valid(kind):
    module, cls, fields = _ROOTS[kind]
    values = [*_HOSTILE, *_HOSTILE_STUBS, *([t] for t in _HOSTILE_TEXT)]
    for field in fields:
        for value in values:
            data = dumps(Fake(module, cls, guards_expr="L['t0'] > 2", **{field: value}))
            got = _decoded(data, kind)  # raises if the entry read as corrupt
            assert got[FIELDS].guards_expr == "L['t0'] > 2" and light(got[FIELDS]) == got[LIGHT]
