"""The transformers models of the eleventh round of evaluation families: tiny configs, random
weights from a fixed seed, nothing downloaded (imports torch and transformers, offline, as
:mod:`tests.harness.evaluation.hf`). Each builder returns the eager model, in eval mode."""

import torch  # noqa: E402

from tests.harness.evaluation import hf as _hf  # noqa: F401 - offline() before transformers loads


def granite() -> torch.nn.Module:
    """A Granite decoder: float multipliers on the embeddings, attention, residuals and logits."""
    from transformers import GraniteConfig, GraniteForCausalLM

    torch.manual_seed(0)
    cfg = GraniteConfig(
        vocab_size=100,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        embedding_multiplier=12.0,
        attention_multiplier=0.125,
        residual_multiplier=0.22,
        logits_scaling=8.0,
        use_cache=False,
    )
    return GraniteForCausalLM(cfg).eval()


def fnet() -> torch.nn.Module:
    """An FNet encoder: token mixing by a 2-D Fourier transform instead of attention."""
    from transformers import FNetConfig, FNetModel

    torch.manual_seed(0)
    cfg = FNetConfig(
        vocab_size=100,
        hidden_size=32,
        num_hidden_layers=1,
        intermediate_size=64,
        max_position_embeddings=64,
        type_vocab_size=2,
        hidden_dropout_prob=0.0,
        use_tpu_fourier_optimizations=False,
    )
    return FNetModel(cfg).eval()


def regnet() -> torch.nn.Module:
    """A RegNet: grouped convolutions, squeeze-and-excitation, a pooled output."""
    from transformers import RegNetConfig, RegNetModel

    torch.manual_seed(0)
    cfg = RegNetConfig(
        num_channels=3,
        embedding_size=8,
        hidden_sizes=[8, 16],
        depths=[1, 1],
        groups_width=8,
        layer_type="y",
    )
    return RegNetModel(cfg).eval()


def codegen() -> torch.nn.Module:
    """A CodeGen decoder: rotary on part of each head, a fused qkv split by a fixed mp_num."""
    from transformers import CodeGenConfig, CodeGenForCausalLM

    torch.manual_seed(0)
    cfg = CodeGenConfig(
        vocab_size=100,
        n_positions=64,
        n_ctx=64,
        n_embd=32,
        n_layer=1,
        n_head=4,
        rotary_dim=4,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        use_cache=False,
    )
    return CodeGenForCausalLM(cfg).eval()
