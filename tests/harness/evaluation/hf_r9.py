"""The transformers models of the ninth round of evaluation families: tiny configs, random
weights from a fixed seed, nothing downloaded (imports torch and transformers, offline, as
:mod:`tests.harness.evaluation.hf`). Each builder returns the eager model, in eval mode."""

import torch  # noqa: E402

from tests.harness.evaluation import hf as _hf  # noqa: F401 - offline() before transformers loads


def phi3() -> torch.nn.Module:
    """A Phi-3 decoder: rotary positions, grouped-query attention, fused qkv."""
    from transformers import Phi3Config, Phi3ForCausalLM

    torch.manual_seed(0)
    cfg = Phi3Config(
        vocab_size=100,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        original_max_position_embeddings=64,
        pad_token_id=0,
        use_cache=False,
    )
    return Phi3ForCausalLM(cfg).eval()


def xlmr() -> torch.nn.Module:
    """An XLM-RoBERTa encoder: positions counted from the padding index."""
    from transformers import XLMRobertaConfig, XLMRobertaModel

    torch.manual_seed(0)
    cfg = XLMRobertaConfig(
        vocab_size=100,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    return XLMRobertaModel(cfg).eval()


def deit() -> torch.nn.Module:
    """A DeiT encoder: a class and a distillation token before the patches."""
    from transformers import DeiTConfig, DeiTModel

    torch.manual_seed(0)
    cfg = DeiTConfig(
        image_size=32,
        patch_size=8,
        num_channels=3,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    return DeiTModel(cfg).eval()


def speech2text() -> torch.nn.Module:
    """A Speech2Text encoder-decoder: a strided conv subsampler over filter-bank features."""
    from transformers import Speech2TextConfig, Speech2TextModel

    torch.manual_seed(0)
    cfg = Speech2TextConfig(
        vocab_size=100,
        d_model=32,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        input_feat_per_channel=16,
        input_channels=1,
        num_conv_layers=2,
        conv_channels=32,
        conv_kernel_sizes=(5, 5),
        max_source_positions=128,
        max_target_positions=64,
        dropout=0.0,
        attention_dropout=0.0,
        activation_dropout=0.0,
        use_cache=False,
        pad_token_id=1,
        decoder_start_token_id=2,
    )
    return Speech2TextModel(cfg).eval()


def mbart() -> torch.nn.Module:
    """An MBart encoder-decoder: labels shifted into decoder inputs by the last non-pad token."""
    from transformers import MBartConfig, MBartForConditionalGeneration

    torch.manual_seed(0)
    cfg = MBartConfig(
        vocab_size=100,
        d_model=32,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=64,
        pad_token_id=1,
        use_cache=False,
        dropout=0.0,
        attention_dropout=0.0,
        activation_dropout=0.0,
    )
    return MBartForConditionalGeneration(cfg).eval()
