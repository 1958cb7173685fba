"""The transformers models of the eighth round of evaluation families: tiny configs, random
weights from a fixed seed, nothing downloaded (imports torch and transformers, offline, as
:mod:`tests.harness.evaluation.hf`). Each builder returns the eager model, in eval mode."""

import torch  # noqa: E402

from tests.harness.evaluation import hf as _hf  # noqa: F401 - offline() before transformers loads


def gpt_neo() -> torch.nn.Module:
    """A GPT-Neo decoder: global and local attention layers in turn; labels give a loss."""
    from transformers import GPTNeoConfig, GPTNeoForCausalLM

    torch.manual_seed(0)
    cfg = GPTNeoConfig(
        vocab_size=100,
        hidden_size=32,
        num_layers=2,
        num_heads=2,
        attention_types=[[["global", "local"], 1]],
        window_size=4,
        max_position_embeddings=64,
        intermediate_size=64,
        embed_dropout=0.0,
        attention_dropout=0.0,
        resid_dropout=0.0,
        use_cache=False,
    )
    return GPTNeoForCausalLM(cfg).eval()


def marian() -> torch.nn.Module:
    """A Marian encoder-decoder: labels shifted right into decoder inputs, sinusoidal positions."""
    from transformers import MarianConfig, MarianMTModel

    torch.manual_seed(0)
    cfg = MarianConfig(
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
        eos_token_id=2,
        use_cache=False,
        dropout=0.0,
        attention_dropout=0.0,
        activation_dropout=0.0,
    )
    return MarianMTModel(cfg).eval()


def mobilebert_cls() -> torch.nn.Module:
    """A MobileBERT classifier: bottleneck layers, token types, a loss from labels whose dtype picks it."""
    from transformers import MobileBertConfig, MobileBertForSequenceClassification

    torch.manual_seed(0)
    cfg = MobileBertConfig(
        vocab_size=100,
        hidden_size=32,
        embedding_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        intra_bottleneck_size=16,
        true_hidden_size=16,
        num_feedforward_networks=1,
        max_position_embeddings=64,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        num_labels=60,
    )
    return MobileBertForSequenceClassification(cfg).eval()


def beit() -> torch.nn.Module:
    """A BEiT encoder: a relative position bias per layer, mean pooling."""
    from transformers import BeitConfig, BeitModel

    torch.manual_seed(0)
    cfg = BeitConfig(
        image_size=32,
        patch_size=8,
        num_channels=3,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        use_relative_position_bias=True,
        use_mask_token=True,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        drop_path_rate=0.0,
    )
    return BeitModel(cfg).eval()


def hubert() -> torch.nn.Module:
    """A HuBERT encoder: a convolutional front end over raw audio, a conv position embedding."""
    from transformers import HubertConfig, HubertModel

    torch.manual_seed(0)
    cfg = HubertConfig(
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        conv_dim=(16, 16),
        conv_stride=(5, 2),
        conv_kernel=(10, 3),
        num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=2,
        hidden_dropout=0.0,
        attention_dropout=0.0,
        activation_dropout=0.0,
        feat_proj_dropout=0.0,
        layerdrop=0.0,
        mask_time_prob=0.0,
    )
    return HubertModel(cfg).eval()
