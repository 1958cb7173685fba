"""Reviewer families (not for commit)."""
from tests.harness.evaluation.family import Family
from tests.harness.evaluation.family import q as _q

_F = "tests.harness.evaluation.fns_rv:"
_S = "tests.harness.evaluation.fns_rv_shadow:"
X = [4, 8]

RV_FAMILIES = [
    Family("rv_shadow_min", _S + "shadow_min", "shadow_min", None, build=(({"x": X, "n": 2},),), positional=1,
           queries=(_q("as built", x=X, n=2), _q("n=3", x=X, n=3), _q("n=6", x=X, n=6))),
    Family("rv_shadow_floor", _S + "shadow_floor", "shadow_floor", None, build=(({"x": X, "s": 1.5},),), positional=1,
           queries=(_q("as built", x=X, s=1.5), _q("s=1.2", x=X, s=1.2), _q("s=2.5", x=X, s=2.5))),
    Family("rv_local_max", _F + "local_max", "local_max", None, build=(({"x": X, "n": 2},),), positional=1,
           queries=(_q("as built", x=X, n=2), _q("n=3", x=X, n=3), _q("n=1", x=X, n=1))),
    Family("rv_param_min", _F + "param_min", "param_min", None, build=(({"x": X, "n": 2},),), positional=1,
           queries=(_q("as built", x=X, n=2), _q("n=3", x=X, n=3))),
    Family("rv_shifted_gate", _F + "shifted_gate", "shifted_gate", None, build=(({"x": X, "eps": 0.5},),),
           positional=1,
           queries=(_q("as built", x=X, eps=0.5), _q("eps=-0.5", x=X, eps=-0.5), _q("eps=-2.0", x=X, eps=-2.0))),
    Family("rv_other_param", _F + "other_param", "other_param", None, build=(({"x": X, "n": 5, "k": 2},),),
           positional=1,
           queries=(_q("as built", x=X, n=5, k=2), _q("n=2", x=X, n=2, k=2), _q("n=3", x=X, n=3, k=2))),
    Family("rv_other_float", _F + "other_float", "other_float", None,
           build=(({"x": X, "s": 0.1, "lo": 0.5},),), positional=1,
           queries=(_q("as built", x=X, s=0.1, lo=0.5), _q("s=0.5", x=X, s=0.5, lo=0.5),
                    _q("s=0.9", x=X, s=0.9, lo=0.5))),
    Family("rv_gate_other", _F + "gate_other", "gate_other", None,
           build=(({"x": X, "eps": 0.5, "t": 1.0},),), positional=1,
           queries=(_q("as built", x=X, eps=0.5, t=1.0), _q("eps=-0.5", x=X, eps=-0.5, t=1.0),
                    _q("eps=-1.5", x=X, eps=-1.5, t=1.0))),
    Family("rv_zero_scale", _F + "zero_scale", "zero_scale", None, build=(({"x": X, "s": 0.0},),), positional=1,
           queries=(_q("as built", x=X, s=0.0), _q("s=-0.0", x=X, s=-0.0))),
    Family("rv_nan_scale", _F + "nan_scale", "nan_scale", None, build=(({"x": X, "s": float("nan")},),),
           positional=1,
           queries=(_q("as built", x=X, s=float("nan")), _q("s=1.0", x=X, s=1.0))),
    Family("rv_walrus", _F + "walrus_gate", "walrus_gate", None, build=(({"x": X, "eps": 1.0},),), positional=1,
           queries=(_q("as built", x=X, eps=1.0), _q("eps=0.2", x=X, eps=0.2), _q("eps=2.0", x=X, eps=2.0))),
    Family("rv_elif", _F + "elif_gate", "elif_gate", None, build=(({"x": X, "eps": 0.5},),), positional=1,
           queries=(_q("as built", x=X, eps=0.5), _q("eps=0.7", x=X, eps=0.7), _q("eps=2.0", x=X, eps=2.0),
                    _q("eps=-1.0", x=X, eps=-1.0))),
    Family("rv_round", _F + "round_cols", "round_cols", None, build=(({"x": X, "s": 2.5},),), positional=1,
           queries=(_q("as built", x=X, s=2.5), _q("s=2.4", x=X, s=2.4), _q("s=3.5", x=X, s=3.5),
                    _q("s=1.5", x=X, s=1.5))),
    Family("rv_int_bool", _F + "int_vs_bool", "int_vs_bool", None, build=(({"x": X, "n": 1},),), positional=1,
           queries=(_q("as built", x=X, n=1), _q("True", x=X, n=True), _q("1.0", x=X, n=1.0))),
    Family("rv_early_ret", _F + "early_ret", "early_ret", None, build=(({"x": X, "eps": 1.0},),), positional=1,
           queries=(_q("as built", x=X, eps=1.0), _q("eps=2.0", x=X, eps=2.0), _q("eps=-1.0", x=X, eps=-1.0))),
    Family("rv_same_ops", _F + "same_ops", "same_ops", None, build=(({"x": X, "eps": 1.0},),), positional=1,
           queries=(_q("as built", x=X, eps=1.0), _q("eps=-1.0", x=X, eps=-1.0))),
]

from tests.harness.evaluation.family import t as _t  # noqa: E402

_R6 = "tests.harness.evaluation.fns_r6:"
RV2_FAMILIES = [
    Family("rv_auto_min", _R6 + "min_len", "min_len", None,
           build=(({"x": X, "n": 3}, {"x": X, "n": 5}),), positional=1,
           queries=(_q("n=3", x=X, n=3), _q("n=6", x=X, n=6), _q("n=100", x=X, n=100),
                    _q("after n=3: n=6", warm_up=({"x": X, "n": 3},), x=X, n=6),
                    _q("after n=3: n=100", warm_up=({"x": X, "n": 3},), x=X, n=100))),
    Family("rv_mark_min", _R6 + "min_len", "min_len", None,
           build=(({"x": _t(X, mark=[1]), "n": 100},),), positional=1,
           queries=(_q("n=50 marked", x=_t(X, mark=[1]), n=50), _q("n=6 marked", x=_t(X, mark=[1]), n=6),
                    _q("10 wide marked", x=_t([4, 10], mark=[1]), n=100), _q("n=100 unmarked", x=X, n=100))),
    Family("rv_gate_dyn", _R6 + "eps_gate", "eps_gate", True,
           build=(({"x": X, "eps": 1e-5},),), positional=1,
           queries=(_q("eps=0.0", x=X, eps=0.0), _q("eps=1e-3", x=X, eps=1e-3), _q("eps=-1.0", x=X, eps=-1.0),
                    _q("left out", x=X))),
    Family("rv_floor_dyn", _R6 + "floor_scale", "floor_scale", True,
           build=(({"x": X, "s": 0.1},),), positional=1,
           queries=(_q("s=0.2", x=X, s=0.2), _q("s=0.7", x=X, s=0.7), _q("s=0.1", x=X, s=0.1))),
    Family("rv_gate_auto", _R6 + "eps_gate", "eps_gate", None,
           build=(({"x": X, "eps": 1e-5}, {"x": X, "eps": 1e-3}),), positional=1,
           queries=(_q("eps=0.0", x=X, eps=0.0), _q("eps=1e-2", x=X, eps=1e-2),
                    _q("after 1e-5: eps=0.0", warm_up=({"x": X, "eps": 1e-5},), x=X, eps=0.0),
                    _q("after 1e-5: eps=0.5", warm_up=({"x": X, "eps": 1e-5},), x=X, eps=0.5))),
]

RV3_FAMILIES = [
    Family("rv_cat_min", _F + "cat_min", "cat_min", None, build=(({"x": X, "n": 8},),), positional=1,
           queries=(_q("as built", x=X, n=8), _q("n=12", x=X, n=12), _q("n=20", x=X, n=20))),
    Family("rv_cat_minf", _F + "cat_minf", "cat_minf", None, build=(({"x": X, "s": 0.8},),), positional=1,
           queries=(_q("as built", x=X, s=0.8), _q("s=1.2", x=X, s=1.2), _q("s=2.0", x=X, s=2.0))),
]

RV4_FAMILIES = [
    Family("rv_ret_same", _F + "ret_same", "ret_same", None, build=(({"x": X, "eps": 1.0},),), positional=1,
           queries=(_q("eps=-1.0", x=X, eps=-1.0), _q("eps=0.0", x=X, eps=0.0))),
    Family("rv_fallback", _F + "fallback", "fallback", None, build=(({"x": X, "eps": 1.0},),), positional=1,
           queries=(_q("eps=-1.0", x=X, eps=-1.0), _q("eps=0.0", x=X, eps=0.0))),
]

RV5_FAMILIES = [
    Family("rv_kw_scale", _F + "kw_scale", "kw_scale", None, build=(({"x": X, "n": 3},),), positional=1,
           queries=(_q("as built", x=X, n=3), _q("n=4", x=X, n=4), _q("none", x=X), _q("m=3", x=X, m=3),
                    _q("n=3,m=1", x=X, n=3, m=1), _q("n=3.0", x=X, n=3.0))),
    Family("rv_kw_min", _F + "kw_min", "kw_min", None, build=(({"x": X, "n": 100},),), positional=1,
           queries=(_q("as built", x=X, n=100), _q("n=50", x=X, n=50), _q("n=6", x=X, n=6))),
]

RV6_FAMILIES = [
    Family("rv_kw_local", _F + "kw_local", "kw_local", None, build=(({"x": X, "n": 4},),), positional=1,
           queries=(_q("n=7", x=X, n=7), _q("n=4", x=X, n=4), _q("none", x=X))),
    Family("rv_kw_local2", _F + "kw_local2", "kw_local2", None, build=(({"x": X, "n": 4},),), positional=1,
           queries=(_q("n=7", x=X, n=7), _q("n=4.0", x=X, n=4.0))),
]

RV7_FAMILIES = [
    Family("rv_brk_gate", _F + "brk_gate", "brk_gate", None, build=(({"x": X, "eps": 1.0},),), positional=1,
           queries=(_q("as built", x=X, eps=1.0), _q("eps=-1.0", x=X, eps=-1.0), _q("eps=2.0", x=X, eps=2.0))),
    Family("rv_t_max", _F + "t_max", "t_max", False, build=(({"x": X, "n": 2},),), positional=1,
           queries=(_q("as built", x=X, n=2), _q("n=3", x=X, n=3), _q("n=6", x=X, n=6))),
]
