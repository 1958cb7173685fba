"""The transformers models of the tenth round of evaluation families: tiny configs, random
weights from a fixed seed, nothing downloaded (imports torch and transformers, offline, as
:mod:`tests.harness.evaluation.hf`). Each builder returns the eager model, in eval mode."""

import torch  # noqa: E402

from tests.harness.evaluation import hf as _hf  # noqa: F401 - offline() before transformers loads


def stablelm() -> torch.nn.Module:
    """A StableLM decoder: partial rotary (a quarter of each head), LayerNorm."""
    from transformers import StableLmConfig, StableLmForCausalLM

    torch.manual_seed(0)
    cfg = StableLmConfig(
        vocab_size=100,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=64,
        partial_rotary_factor=0.25,
        use_cache=False,
    )
    return StableLmForCausalLM(cfg).eval()


def gpt_bigcode() -> torch.nn.Module:
    """A GPT-BigCode decoder: multi-query attention, learned positions."""
    from transformers import GPTBigCodeConfig, GPTBigCodeForCausalLM

    torch.manual_seed(0)
    cfg = GPTBigCodeConfig(
        vocab_size=100,
        n_positions=64,
        n_embd=32,
        n_layer=1,
        n_head=4,
        multi_query=True,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        use_cache=False,
    )
    return GPTBigCodeForCausalLM(cfg).eval()


def qwen3() -> torch.nn.Module:
    """A Qwen3 decoder: RMSNorm on queries and keys, grouped-query attention."""
    from transformers import Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(0)
    cfg = Qwen3Config(
        vocab_size=100,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        max_position_embeddings=64,
        use_cache=False,
    )
    return Qwen3ForCausalLM(cfg).eval()


def dinov2() -> torch.nn.Module:
    """A DINOv2 encoder: position embeddings interpolated to the image's patch grid."""
    from transformers import Dinov2Config, Dinov2Model

    torch.manual_seed(0)
    cfg = Dinov2Config(
        image_size=32,
        patch_size=8,
        num_channels=3,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        mlp_ratio=2,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    return Dinov2Model(cfg).eval()


def mobilenet_v2() -> torch.nn.Module:
    """A MobileNetV2: depthwise convolutions, ReLU6, BatchNorm, a pooled output."""
    from transformers import MobileNetV2Config, MobileNetV2Model

    torch.manual_seed(0)
    cfg = MobileNetV2Config(num_channels=3, image_size=32, depth_multiplier=0.25, min_depth=4)
    return MobileNetV2Model(cfg).eval()
