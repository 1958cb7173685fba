"""Workloads on models from a library fxcache did not write: Hugging Face ``transformers``.

Each :class:`Workload` builds a tiny model from a config (random weights from a
fixed seed; nothing is downloaded), compiles it the way a user would
(``torch.compile(model)``, or ``torch.compile`` of a function that calls the
model), and knows how to make the inputs of one call from a small JSON
description (``{"batch": 2, "seq": 8}``). It also knows how a user describes that
call to ``fxcache match``, word for word as docs/tasks/will-this-call-hit.md says (:meth:`Workload.match_args`).

The workloads cover what the docs' match page (docs/tasks/will-this-call-hit.md) promises on real models:

* ``gpt2_module``: ``torch.compile(GPT2LMHeadModel, dynamic=True)`` called with a
  keyword (``model(input_ids=ids)``): sources ``L['kwargs']['input_ids']``.
* ``resnet_ranges``: ``torch.compile(ResNetModel)`` (dynamic=None) called
  positionally (``model(pixels)``; its undecorated ``forward`` is the compiled
  frame, so the source is the parameter's, ``L['pixel_values']``), the batch marked
  dynamic with a range; two ranges give one key with two entries (inductor bounds
  a conv's batch by 15, so the ranges are [2, 7] and [8, 15]).
* ``llama_train``: a training step ``llama_loss(ids, labels)`` around
  ``LlamaForCausalLM`` under automatic dynamic (dynamic=None): a fresh process
  compiles its first call static, a later call with another length makes that dim
  symbolic in ``ids`` and ``labels``, and the graph makes the two equal.
* ``bert_mask``: ``torch.compile(BertModel)`` with ``input_ids`` and
  ``attention_mask`` marked dynamic on the sequence dim (two marked dims the
  graph forces equal); the mask int64, or bool (``{"mask": "bool"}``): another dtype,
  another graph.

Importing this module imports torch and transformers. Set ``HF_HUB_OFFLINE=1``
and ``TRANSFORMERS_OFFLINE=1`` (:func:`offline`) before: nothing is fetched.
"""

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.harness.offline import offline

offline()

import torch  # noqa: E402
import transformers  # noqa: E402

transformers.logging.set_verbosity_error()

Call = dict[str, Any]  # one call, e.g. {"batch": 2, "seq": 8}


@dataclass(frozen=True)
class Workload:
    """A model, how it is compiled, and how one call is made and described.

    Attributes:
        name: the workload's name.
        build: returns ``(model, compiled)``: the eager model and the compiled
            callable (a compiled module, or a compiled function around the model).
        make_inputs: call description -> ``(args, kwargs)`` for ``compiled``.
        describe: call description -> the ``--shapes`` items a user gives
            ``fxcache match`` for that call (the docs' naming).
        fn: what the user passes as ``--fn`` (the compiled function, or the
            class of a module compiled whole).
        dynamic: ``torch.compile(dynamic=...)``.
        build_calls: the calls made, in one process, to build the cache.
        train: run ``loss.backward()`` after each call (the call returns the loss).
    """

    name: str
    build: Callable[[], tuple[torch.nn.Module, Callable[..., Any]]]
    make_inputs: Callable[[Call], tuple[tuple[Any, ...], dict[str, Any]]]
    describe: Callable[[Call], list[str]]
    fn: str
    dynamic: bool | None
    build_calls: tuple[tuple[Call, ...], ...]
    train: bool = False

    def match_args(self, call: Call) -> list[str]:
        """``fxcache match`` arguments for ``call``, as the docs tell a user to write them."""
        mode = {True: "true", None: "none", False: "false"}[self.dynamic]
        out = ["--fn", self.fn, "--dynamic", mode]
        for item in self.describe(call):
            out += ["--shapes", item]
        return out


def _ids(batch: int, seq: int, seed: int = 0, vocab: int = 100) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, vocab, (batch, seq), generator=g)


def _shape(*dims: int) -> str:
    return "[" + ",".join(map(str, dims)) + "]"


def _mark(dims: list[int]) -> str:
    return f":mark_dynamic={_shape(*dims)}" if dims else ""


# --- gpt2_module: torch.compile(model, dynamic=True), keyword input ---------------


def _gpt2() -> tuple[torch.nn.Module, Callable[..., Any]]:
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    cfg = GPT2Config(
        n_layer=1,
        n_embd=32,
        n_head=2,
        vocab_size=100,
        n_positions=64,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        use_cache=False,
        bos_token_id=0,
        eos_token_id=0,
    )
    model = GPT2LMHeadModel(cfg).eval()
    return model, torch.compile(model, dynamic=True)


def _gpt2_inputs(call: Call) -> tuple[tuple[Any, ...], dict[str, Any]]:
    # {"flags": {"return_dict": False}}: Python flags by keyword, as a user passes them
    return (), {"input_ids": _ids(call["batch"], call["seq"]), **call.get("flags", {})}


def _gpt2_describe(call: Call) -> list[str]:
    return [
        f"input_ids={_shape(call['batch'], call['seq'])}",
        *(f"{k}={v}" for k, v in call.get("flags", {}).items()),
    ]


# --- resnet_ranges: torch.compile(model), positional input, mark_dynamic ranges ---


def _resnet() -> tuple[torch.nn.Module, Callable[..., Any]]:
    from transformers import ResNetConfig, ResNetModel

    torch.manual_seed(0)
    # One stage of one basic layer: convolutions enough for Inductor's bound on the batch;
    # each more stage is more kernels for every session to compile.
    cfg = ResNetConfig(
        embedding_size=8, hidden_sizes=[8], depths=[1], num_channels=3, layer_type="basic"
    )
    model = ResNetModel(cfg).eval()
    return model, torch.compile(model)


def _resnet_inputs(call: Call) -> tuple[tuple[Any, ...], dict[str, Any]]:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(call["batch"], 3, call["size"], call["size"], generator=g)
    lo, hi = call["range"]
    torch._dynamo.mark_dynamic(x, 0, min=lo, max=hi)
    return (x,), {}


def _resnet_describe(call: Call) -> list[str]:
    shape = _shape(call["batch"], 3, call["size"], call["size"])
    # A positional input: by position, or by the forward's parameter name.
    name = call.get("as", "")
    return [(f"{name}=" if name else "") + shape + _mark([0])]


# --- llama_train: a training step around the model, automatic dynamic -------------


def _llama() -> tuple[torch.nn.Module, Callable[..., Any]]:
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    # As many key/value heads as heads: grouped-query attention's repeat would be more
    # kernels (in the forward and the backward, at each compile), and no check reads it.
    cfg = LlamaConfig(
        num_hidden_layers=1,
        hidden_size=32,
        intermediate_size=64,
        num_attention_heads=2,
        num_key_value_heads=2,
        vocab_size=100,
        max_position_embeddings=64,
        use_cache=False,
        attention_dropout=0.0,
        bos_token_id=0,
        eos_token_id=0,
        pad_token_id=0,
    )
    model = LlamaForCausalLM(cfg)
    model.eval()  # no dropout; the parameters still require grad

    def llama_loss(ids, labels):
        return model(ids, labels=labels).loss

    return model, torch.compile(llama_loss)


def _llama_inputs(call: Call) -> tuple[tuple[Any, ...], dict[str, Any]]:
    ids = _ids(call["batch"], call["seq"])
    return (ids, ids.clone()), {}


def _llama_describe(call: Call) -> list[str]:
    # A call after automatic dynamic made a dim symbolic: describe it as marked.
    marks = call.get("dynamic_dims", [])
    s = _shape(call["batch"], call["seq"]) + _mark(marks)
    return [f"ids={s}", f"labels={s}"]


# --- bert_mask: two marked dims the graph forces equal ----------------------------


def _bert() -> tuple[torch.nn.Module, Callable[..., Any]]:
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    cfg = BertConfig(
        num_hidden_layers=1,
        hidden_size=32,
        intermediate_size=64,
        num_attention_heads=2,
        vocab_size=100,
        max_position_embeddings=64,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    model = BertModel(cfg, add_pooling_layer=False).eval()
    return model, torch.compile(model)


def _bert_inputs(call: Call) -> tuple[tuple[Any, ...], dict[str, Any]]:
    ids = _ids(call["batch"], call["seq"])
    # The mask is int64, as a tokenizer gives it; {"mask": "bool"} passes it as bool.
    mask = torch.ones(call["batch"], call["seq"], dtype=getattr(torch, call.get("mask", "long")))
    torch._dynamo.mark_dynamic(ids, 1)
    torch._dynamo.mark_dynamic(mask, 1)
    return (), {"input_ids": ids, "attention_mask": mask}


def _bert_describe(call: Call) -> list[str]:
    s = _shape(call["batch"], call["seq"]) + _mark([1])
    dtype = f":dtype={call['mask']}" if "mask" in call else ""  # said only when not the tokenizer's
    return [f"input_ids={s}", f"attention_mask={s}{dtype}"]


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in [
        Workload(
            "gpt2_module",
            _gpt2,
            _gpt2_inputs,
            _gpt2_describe,
            fn="GPT2LMHeadModel",
            dynamic=True,
            build_calls=(({"batch": 2, "seq": 8},),),
        ),
        Workload(
            "resnet_ranges",
            _resnet,
            _resnet_inputs,
            _resnet_describe,
            fn="ResNetModel",
            dynamic=None,
            build_calls=(
                ({"batch": 4, "size": 32, "range": [2, 7]},),
                ({"batch": 12, "size": 32, "range": [8, 15]},),
            ),
        ),
        Workload(
            "llama_train",
            _llama,
            _llama_inputs,
            _llama_describe,
            fn="llama_loss",
            dynamic=None,
            train=True,
            build_calls=(({"batch": 2, "seq": 8}, {"batch": 2, "seq": 12}),),
        ),
        Workload(
            "bert_mask",
            _bert,
            _bert_inputs,
            _bert_describe,
            fn="BertModel",
            dynamic=None,
            build_calls=(({"batch": 2, "seq": 8},),),
        ),
    ]
}


def run_call(
    w: Workload,
    compiled: Callable[..., Any],
    model: torch.nn.Module,
    call: Call,
    on_phase: Callable[[str], None] | None = None,
) -> None:
    """One call of the compiled workload (and its backward when training)."""
    args, kwargs = w.make_inputs(call)
    if on_phase is not None:
        on_phase("forward")
    if w.train:
        loss = compiled(*args, **kwargs)
        if on_phase is not None:
            on_phase("backward")
        loss.backward()
        model.zero_grad(set_to_none=True)  # as in a fresh process: no .grad yet
    else:
        with torch.no_grad():
            compiled(*args, **kwargs)


def fresh_state() -> None:
    """Make this process look fresh to the next compile: Dynamo's caches and
    automatic-dynamic state (``torch._dynamo.reset``), and the once-only
    warnings transformers keeps (a warning can be a graph break)."""
    torch._dynamo.reset()
    from transformers.utils import logging as hf_logging

    for fn in (getattr(hf_logging.get_logger("x"), "warning_once", None),):
        clear = getattr(fn, "cache_clear", None)
        if clear is not None:
            clear()


def describe_all() -> str:
    """The workloads and the calls that build their cache, as JSON (for the docs)."""
    return json.dumps(
        {
            n: {"fn": w.fn, "dynamic": w.dynamic, "build": w.build_calls}
            for n, w in WORKLOADS.items()
        },
        indent=1,
    )
