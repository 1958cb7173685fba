"""Review round 10 transformers models (imports torch and transformers, offline)."""

import torch  # noqa: E402

from tests.harness.evaluation import hf as _hf  # noqa: F401 - offline() before transformers loads


def mistral_sw() -> torch.nn.Module:
    """A Mistral decoder with a sliding window of 4."""
    from transformers import MistralConfig, MistralForCausalLM

    torch.manual_seed(0)
    cfg = MistralConfig(
        vocab_size=100,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        sliding_window=4,
        use_cache=False,
    )
    return MistralForCausalLM(cfg).eval()
