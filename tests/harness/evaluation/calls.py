"""How one call of an evaluation family is written down (JSON) and described to ``fxcache match``.

A call is a dict, parameter name -> value, in the order the arguments are passed.
A value is one of:

- a list of ints: a float32 CPU tensor of that shape (``[4, 3]``; ``[]`` a 0-d tensor);
- ``{"t": [4, 3], "dtype": "float16", "mark": [0], "min": 2, "max": 16}``: a tensor with
  a dtype, dims marked dynamic (``torch._dynamo.mark_dynamic``), with a range or not;
- ``{"list": [value, ...]}``: a Python list of tensors;
- ``{"star": [value, ...]}``: tensors passed by position into a ``*args`` parameter
  (described as ``xs[0]=...``, as a list is);
- ``{"tuple": [1, 2]}``: a tuple of Python values;
- ``{"dtype": "float16"}``: a ``torch.dtype`` (``torch.float16``);
- ``{"same": "a"}``: the very tensor given for parameter ``a`` (one tensor passed for two
  parameters), described as ``b=@a``;
- anything else (``True``, ``"gelu"``, ``None``, ``7``, ``0.1``): that Python value.

A tensor's ``"static": [1]`` marks those dims static (``torch._dynamo.mark_static``),
``"stride": [1, 4]`` gives its strides (``torch.empty_strided``: a transposed or
channels-last input), ``"rg": True`` makes it require grad.
``{"dict": {"k": value, ...}}`` is a dict of values (tensors), and a ``{"tuple": [...]}``
may hold tensors and tuples of them.
A key starting with ``@`` is no argument: ``"@train": True`` puts a module compiled
whole in training mode for the call (``model.train()``; else ``model.eval()``), described
to ``fxcache match`` as the module's state ``self.training=True``; ``"@train": False`` (eval
mode, as when it is not there) is described as ``self.training=False``, and without the key
the mode is left out (as a user calling in the build's mode does);
``"@grad": True`` makes the call with grad enabled (else under ``torch.no_grad()``);
``"@set": {"scale": 3.0}`` sets attributes of a module compiled whole before the call,
described as ``self.scale=3.0``; ``"@global": {"GAIN": 3.0}`` sets globals of the
function's module before the call, described as ``G['GAIN']=3.0``.
The global state and settings a call runs under, each described when the call has it:
``"@inference": True`` (under ``torch.inference_mode()``, described as
``torch.is_inference_mode_enabled()=True``), ``"@autocast": "bfloat16"`` (under
``torch.autocast("cpu", dtype=...)``; ``None``: without, described as
``torch.is_autocast_enabled()=True|False``), ``"@default_dtype": "float64"``
(``torch.set_default_dtype``, described as ``torch.get_default_dtype()=torch.float64``),
``"@backward": True`` (``out.sum().backward()`` after the call, not described); and, taken
from the first call of a process for the whole process, ``"@compile": {"mode": ...}``
(``torch.compile`` keywords, described as ``torch.compile.mode='...'``),
``"@dynamo": {...}`` and ``"@inductor": {...}`` (config values set before compiling,
described as ``torch._dynamo.config.NAME=VALUE``, ``torch._inductor.config.NAME=VALUE``).
:func:`short` shows them.

A parameter not in the dict is left out of the call (its default holds). The first
``positional`` parameters (a family's setting) are passed by position, the rest by
keyword.

:func:`describe` writes the call as the docs tell a user to (docs/tasks/will-this-call-hit.md):
``x=[4,3]``, ``x=[4,3]:dtype=float16:mark_dynamic=[0]``, ``xs[0]=[3,4]``, ``n=9``,
``lr=0.1``, ``dtype=torch.float16``, ``x=[4,8]:mark_static=[1]``, and for the values the call-description syntax of the match gaps' fixes
accepts: ``clip=True``, ``act='gelu'``, ``mask=None``, ``dims=(2,3)`` and a marked
range ``x=[8,16]:mark_dynamic=[0]:min=2:max=16``. Items today's ``--shapes`` takes go to
``--shapes``; the others to ``--inputs`` (:data:`NEW_KINDS_OPTION`), the option name those
fixes add beside it. A command line today's code rejects (exit 2) is counted "not
describable", not a crash.

Nothing here imports torch.
"""

from __future__ import annotations

import json
from typing import Any

Call = dict[str, Any]

SHAPES_OPTION = "--shapes"
NEW_KINDS_OPTION = "--inputs"


def is_shape(v: Any) -> bool:
    """A list of ints (not bools): a tensor's shape."""
    return isinstance(v, list) and all(isinstance(d, int) and not isinstance(d, bool) for d in v)


def _dims(dims: list[int]) -> str:
    return "[" + ",".join(str(d) for d in dims) + "]"


def _py(v: Any) -> str:
    """A Python value as a user writes it (``True``, ``'gelu'``, ``None``, ``(2,3)``, ``0.5``)."""
    if isinstance(v, dict) and "tuple" in v:
        items = [_py(x) for x in v["tuple"]]
        return "(" + ",".join(items) + ("," if len(items) == 1 else "") + ")"
    if isinstance(v, dict) and "dtype" in v:
        return f"torch.{v['dtype']}"
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        return repr(v)
    return str(v)


def _tensor(spec: Any, grad: bool = False) -> tuple[str, bool]:
    """``[4,3]:dtype=...:mark_dynamic=[...]:min=..:max=..`` and whether it needs the new syntax;
    ``grad``: with ``:requires_grad=True|False`` (a family that states grad)."""
    if is_shape(spec):
        return _dims(spec) + (":requires_grad=False" if grad else ""), grad
    out = _dims(spec["t"])
    if "dtype" in spec:
        out += f":dtype={spec['dtype']}"
    if spec.get("mark"):
        out += f":mark_dynamic={_dims(spec['mark'])}"
    if spec.get("static"):
        out += f":mark_static={_dims(spec['static'])}"
    if spec.get("stride"):
        out += f":stride={_dims(spec['stride'])}"
    new = grad
    if "param" in spec:  # an nn.Parameter (requires grad unless rg is False), or a plain tensor
        out += ":param" if spec["param"] else ":param=False"
        if spec["param"] and spec.get("rg") is False:
            out += ":requires_grad=False"
        elif not spec["param"] and "rg" in spec:
            out += f":requires_grad={bool(spec['rg'])}"
        new = True
    elif grad:
        out += f":requires_grad={bool(spec.get('rg'))}"
    for bound in ("min", "max"):
        if bound in spec:
            out += f":{bound}={spec[bound]}"
            new = True
    return out, new


def is_tensor(v: Any) -> bool:
    return is_shape(v) or (isinstance(v, dict) and "t" in v)


def arguments(call: Call) -> Call:
    """The call's arguments: its items but the ``@`` settings (the module doc)."""
    return {k: v for k, v in call.items() if not k.startswith("@")}


def _holds_tensor(v: Any) -> bool:
    if is_tensor(v):
        return True
    if isinstance(v, dict) and "tuple" in v:
        return any(_holds_tensor(x) for x in v["tuple"])
    return isinstance(v, dict) and ("list" in v or "star" in v or "dict" in v)


def _items_of(name: str, v: Any, new_option: str, grad: bool) -> list[tuple[str, str]]:
    if isinstance(v, dict) and "same" in v:
        return [(new_option, f"{name}=@{v['same']}")]
    if is_tensor(v):
        text, new = _tensor(v, grad)
        return [(new_option if new else SHAPES_OPTION, f"{name}={text}")]
    if isinstance(v, dict) and ("list" in v or "star" in v or ("tuple" in v and _holds_tensor(v))):
        return [it for i, el in enumerate(v.get("list", v.get("star", v.get("tuple"))))
                for it in _items_of(f"{name}[{i}]", el, new_option, grad)]
    if isinstance(v, dict) and "dict" in v:
        return [it for k, el in v["dict"].items() for it in _items_of(f"{name}[{k!r}]", el, new_option, grad)]
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return [(SHAPES_OPTION, f"{name}={_py(v)}")]
    return [(new_option, f"{name}={_py(v)}")]  # bool, str, None, tuple, dtype: the new kinds


def items(call: Call, new_option: str = NEW_KINDS_OPTION, grad: bool = False) -> list[tuple[str, str]]:
    """``(option, item)`` for each argument of ``call`` (see the module doc); ``new_option``:
    the option of the items today's ``--shapes`` does not take; ``grad``: the call states its
    grad mode (``torch.is_grad_enabled()=...``) and every tensor's ``requires_grad``
    (else it leaves them, as a user calling as the cache was built does)."""
    out: list[tuple[str, str]] = []
    if grad:
        out.append((new_option, f"torch.is_grad_enabled()={bool(call.get('@grad'))}"))
    if "@train" in call:
        out.append((new_option, f"self.training={bool(call['@train'])}"))
    for attr, v in (call.get("@set") or {}).items():
        out.append((new_option if not isinstance(v, (int, float)) or isinstance(v, bool) else SHAPES_OPTION,
                    f"self.{attr}={_py(v)}"))
    for g, v in (call.get("@global") or {}).items():
        out.append((new_option if not isinstance(v, (int, float)) or isinstance(v, bool) else SHAPES_OPTION,
                    f"G[{g!r}]={_py(v)}"))
    out += [(new_option, item) for item in ambient_items(call)]
    for name, v in arguments(call).items():
        out += _items_of(name, v, new_option, grad)
    return out


def ambient_items(call: Call) -> list[str]:
    """The global state and settings ``call`` has, as ``fxcache match`` items (the module doc)."""
    out: list[str] = []
    if "@inference" in call:
        out.append(f"torch.is_inference_mode_enabled()={bool(call['@inference'])}")
    if "@autocast" in call:
        out.append(f"torch.is_autocast_enabled()={bool(call['@autocast'])}")
    if "@default_dtype" in call:
        out.append(f"torch.get_default_dtype()=torch.{call['@default_dtype']}")
    for k, v in (call.get("@compile") or {}).items():
        out.append(f"torch.compile.{k}={_py(v)}")
    for prefix, key in (("torch._dynamo.config", "@dynamo"), ("torch._inductor.config", "@inductor")):
        out += [f"{prefix}.{k}={_py(v)}" for k, v in (call.get(key) or {}).items()]
    return out


def describe(call: Call, new_option: str = NEW_KINDS_OPTION, grad: bool = False) -> list[str]:
    """``fxcache match`` arguments for the inputs of ``call``: ``--shapes x=[4,3] --inputs clip=True ...``
    (``grad``: :func:`items`)."""
    out: list[str] = []
    for option, item in items(call, new_option, grad):
        out += [option, item]
    return out


def short(call: Call) -> str:
    """The call in one line, for reports: ``x=[8,16], act='gelu', clip=True``; ``@grad``
    and ``requires_grad`` shown too (match is not told them)."""
    text = ", ".join(item for _, item in items(call)) or "(no arguments)"
    rg = [n for n, v in arguments(call).items() if isinstance(v, dict) and v.get("rg")]
    return (text + ("; grad enabled" if call.get("@grad") else "") + "".join(f"; {n} requires grad" for n in rg)
            + ("; backward" if call.get("@backward") else ""))


def canonical(call: Call) -> str:
    return json.dumps(call, sort_keys=False, separators=(",", ":"))
