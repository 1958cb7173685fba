"""The transformers models of the seventh round of evaluation families: tiny configs, random
weights from a fixed seed, nothing downloaded (imports torch and transformers, offline, as
:mod:`tests.harness.evaluation.hf`). Each builder returns the eager model, in eval mode."""

import torch  # noqa: E402

from tests.harness.evaluation import hf as _hf  # noqa: F401 - offline() before transformers loads


def llama() -> torch.nn.Module:
    """A Llama decoder: rotary positions, grouped-query attention, RMSNorm."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=100,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        use_cache=False,
    )
    return LlamaForCausalLM(cfg).eval()


def gptj() -> torch.nn.Module:
    """A GPT-J decoder: partial rotary positions, a parallel block."""
    from transformers import GPTJConfig, GPTJForCausalLM

    torch.manual_seed(0)
    cfg = GPTJConfig(
        vocab_size=100,
        n_embd=32,
        n_layer=1,
        n_head=2,
        rotary_dim=8,
        n_positions=64,
        use_cache=False,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
    )
    return GPTJForCausalLM(cfg).eval()


def swin() -> torch.nn.Module:
    """A Swin encoder: shifted windows of patches, patch merging."""
    from transformers import SwinConfig, SwinModel

    torch.manual_seed(0)
    cfg = SwinConfig(
        image_size=32,
        patch_size=4,
        num_channels=3,
        embed_dim=8,
        depths=[1, 1],
        num_heads=[1, 2],
        window_size=4,
        mlp_ratio=2.0,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        drop_path_rate=0.0,
    )
    return SwinModel(cfg).eval()
