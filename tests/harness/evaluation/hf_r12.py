"""The transformers models of the twelfth round of evaluation families: tiny configs, random
weights from a fixed seed, nothing downloaded (imports torch and transformers, offline, as
:mod:`tests.harness.evaluation.hf`). Each builder returns the eager model, in eval mode."""

import torch  # noqa: E402

from tests.harness.evaluation import hf as _hf  # noqa: F401 - offline() before transformers loads


def olmo() -> torch.nn.Module:
    """An OLMo decoder: q, k and v clamped to a float bound (clip_qkv), non-parametric layer norm."""
    from transformers import OlmoConfig, OlmoForCausalLM

    torch.manual_seed(0)
    cfg = OlmoConfig(
        vocab_size=100,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=64,
        clip_qkv=4.0,
        pad_token_id=1,
        bos_token_id=None,
        eos_token_id=2,
        use_cache=False,
    )
    return OlmoForCausalLM(cfg).eval()


def biogpt() -> torch.nn.Module:
    """A BioGPT decoder: scaled embeddings, learned positions offset by 2, a causal mask."""
    from transformers import BioGptConfig, BioGptForCausalLM

    torch.manual_seed(0)
    cfg = BioGptConfig(
        vocab_size=100,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=64,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        layerdrop=0.0,
        use_cache=False,
    )
    return BioGptForCausalLM(cfg).eval()


def levit() -> torch.nn.Module:
    """A LeViT: convolutional stem, attention with learned biases cached in eval mode only."""
    from transformers import LevitConfig, LevitModel

    torch.manual_seed(0)
    cfg = LevitConfig(
        image_size=64,
        num_channels=3,
        kernel_size=3,
        stride=2,
        padding=1,
        patch_size=16,
        hidden_sizes=[16, 32],
        num_attention_heads=[1, 2],
        depths=[1, 1],
        key_dim=[8, 8],
        drop_path_rate=0,
        mlp_ratio=[2, 2],
        attention_ratio=[2, 2],
        down_ops=[["Subsample", 8, 1, 2, 2, 2]],
    )
    return LevitModel(cfg).eval()


def squeezebert() -> torch.nn.Module:
    """A SqueezeBERT encoder: grouped 1-D convolutions in place of dense layers; token types."""
    from transformers import SqueezeBertConfig, SqueezeBertModel

    torch.manual_seed(0)
    cfg = SqueezeBertConfig(
        vocab_size=100,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=64,
        type_vocab_size=2,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        q_groups=2,
        k_groups=2,
        v_groups=2,
        post_attention_groups=2,
        intermediate_groups=2,
        output_groups=2,
        embedding_size=32,
    )
    return SqueezeBertModel(cfg).eval()
