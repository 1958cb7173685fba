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


def esm() -> torch.nn.Module:
    """An ESM protein encoder: rotary positions, token dropout scaling in eval."""
    from transformers import EsmConfig, EsmModel

    torch.manual_seed(0)
    cfg = EsmConfig(
        vocab_size=64,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        position_embedding_type="rotary",
        pad_token_id=1,
        mask_token_id=32,
        token_dropout=True,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    return EsmModel(cfg, add_pooling_layer=False).eval()


def wavlm() -> torch.nn.Module:
    """A WavLM encoder: convolutions over raw audio, a gated relative position bias."""
    from transformers import WavLMConfig, WavLMModel

    torch.manual_seed(0)
    cfg = WavLMConfig(
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        conv_dim=(8, 8, 8),
        conv_stride=(5, 2, 2),
        conv_kernel=(10, 3, 3),
        num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=2,
        num_buckets=32,
        max_bucket_distance=64,
        hidden_dropout=0.0,
        attention_dropout=0.0,
        activation_dropout=0.0,
        feat_proj_dropout=0.0,
        final_dropout=0.0,
        layerdrop=0.0,
        mask_time_prob=0.0,
    )
    return WavLMModel(cfg).eval()


def pegasus() -> torch.nn.Module:
    """A Pegasus encoder-decoder: sinusoidal positions, pre-norm layers."""
    from transformers import PegasusConfig, PegasusModel

    torch.manual_seed(0)
    cfg = PegasusConfig(
        vocab_size=100,
        d_model=32,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=64,
        pad_token_id=0,
        decoder_start_token_id=0,
        use_cache=False,
        dropout=0.0,
        attention_dropout=0.0,
        activation_dropout=0.0,
    )
    return PegasusModel(cfg).eval()
