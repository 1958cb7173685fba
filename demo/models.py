"""A small ``transformers`` model for ``make demo``: GPT-2 from a config, nothing downloaded.

:data:`CASES` holds one :class:`demo.cases.Case`, ``gpt2``: a one-layer
``GPT2LMHeadModel`` (random weights from a fixed seed) compiled whole,
``torch.compile(model, dynamic=True)``, and called with a keyword,
``model(input_ids=ids)``, as a user calls it. ``fxcache`` names its graphs after
the model's class (``--fn GPT2LMHeadModel``), and the input as its source says
(``--shapes input_ids=[2,8]``).

Importing this module imports torch and transformers, offline and quiet
(``HF_HUB_OFFLINE=1``, ``TRANSFORMERS_OFFLINE=1``).
"""

import os
from typing import Any

os.environ.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                   "TRANSFORMERS_VERBOSITY": "error", "TOKENIZERS_PARALLELISM": "false"})

import torch  # noqa: E402
import transformers  # noqa: E402

from demo.cases import Case, Shapes  # noqa: E402

transformers.logging.set_verbosity_error()

VOCAB = 100


def tiny_gpt2() -> torch.nn.Module:
    """A one-layer GPT-2 language model (32-wide, 2 heads, 100 tokens, 64 positions),
    weights from seed 0, for inference: eval mode, and no parameter requires grad (one
    FX graph; with parameters that require grad, AOTAutograd compiles a backward too)."""
    with torch.random.fork_rng():
        torch.manual_seed(0)
        cfg = transformers.GPT2Config(n_layer=1, n_embd=32, n_head=2, vocab_size=VOCAB,
                                      n_positions=64, resid_pdrop=0.0, embd_pdrop=0.0,
                                      attn_pdrop=0.0, use_cache=False, bos_token_id=0,
                                      eos_token_id=0)
        return transformers.GPT2LMHeadModel(cfg).eval().requires_grad_(False)


def _token_ids(shapes: Shapes) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """``[[batch, seq]]`` -> ``model(input_ids=<int64 [batch, seq]>)``."""
    ((batch, seq),) = shapes
    g = torch.Generator().manual_seed(0)
    return (), {"input_ids": torch.randint(0, VOCAB, (batch, seq), generator=g)}


CASES: dict[str, Case] = {
    "gpt2": Case(
        "gpt2",
        tiny_gpt2(),
        {"dynamic": True},
        [[[2, 8]]],
        make_inputs=_token_ids,
        doc="transformers' GPT2LMHeadModel from a config, compiled whole, called with input_ids=",
    ),
}
