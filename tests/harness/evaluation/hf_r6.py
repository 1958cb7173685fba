"""The transformers models of the sixth round of evaluation families: tiny configs, random
weights from a fixed seed, nothing downloaded (imports torch and transformers, offline, as
:mod:`tests.harness.evaluation.hf`). Each builder returns the eager model, in eval mode."""

import torch  # noqa: E402

from tests.harness.evaluation import hf as _hf  # noqa: F401 - offline() before transformers loads


def bloom() -> torch.nn.Module:
    """A BLOOM decoder: ALiBi position biases built from the attention mask."""
    from transformers import BloomConfig, BloomForCausalLM

    torch.manual_seed(0)
    cfg = BloomConfig(vocab_size=100, hidden_size=32, n_layer=1, n_head=2, use_cache=False,
                      hidden_dropout=0.0, attention_dropout=0.0)
    return BloomForCausalLM(cfg).eval()


def mpnet() -> torch.nn.Module:
    """An MPNet encoder: relative position buckets added to the attention scores."""
    from transformers import MPNetConfig, MPNetModel

    torch.manual_seed(0)
    cfg = MPNetConfig(vocab_size=100, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                      intermediate_size=64, max_position_embeddings=64,
                      hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    return MPNetModel(cfg, add_pooling_layer=False).eval()


def falcon() -> torch.nn.Module:
    """A Falcon decoder: rotary positions, multi-query attention, a parallel block."""
    from transformers import FalconConfig, FalconForCausalLM

    torch.manual_seed(0)
    cfg = FalconConfig(vocab_size=100, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                       multi_query=True, parallel_attn=True, alibi=False, new_decoder_architecture=False,
                       use_cache=False, hidden_dropout=0.0, attention_dropout=0.0, max_position_embeddings=64)
    return FalconForCausalLM(cfg).eval()


def segformer() -> torch.nn.Module:
    """A SegFormer encoder: overlapping patch embeddings, reduced-sequence attention."""
    from transformers import SegformerConfig, SegformerModel

    torch.manual_seed(0)
    cfg = SegformerConfig(num_channels=3, num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1],
                          hidden_sizes=[8, 16], patch_sizes=[7, 3], strides=[4, 2], num_attention_heads=[1, 2],
                          mlp_ratios=[2, 2], hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                          drop_path_rate=0.0)
    return SegformerModel(cfg).eval()
