"""The transformers models of the fourth round of evaluation families: tiny configs,
random weights from a fixed seed, nothing downloaded (imports torch and transformers,
offline, as :mod:`tests.harness.evaluation.hf`). Each builder returns the eager model, in
eval mode."""

import torch  # noqa: E402

from tests.harness.evaluation import hf as _hf  # noqa: F401 - offline() before transformers loads


def whisper_encoder() -> torch.nn.Module:
    """Whisper's audio encoder: 8 mel bins, 32 frames in (it raises on another length)."""
    from transformers import WhisperConfig
    from transformers.models.whisper.modeling_whisper import WhisperEncoder

    torch.manual_seed(0)
    cfg = WhisperConfig(vocab_size=100, num_mel_bins=8, d_model=32, encoder_layers=1, encoder_attention_heads=2,
                        decoder_layers=1, decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64,
                        max_source_positions=16, max_target_positions=16, dropout=0.0, attention_dropout=0.0,
                        activation_dropout=0.0, use_cache=False)
    return WhisperEncoder(cfg).eval()


def resnet() -> torch.nn.Module:
    """A two-stage ResNet of basic blocks over images (``ResNetModel``)."""
    from transformers import ResNetConfig, ResNetModel

    torch.manual_seed(0)
    cfg = ResNetConfig(num_channels=3, embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1], layer_type="basic")
    return ResNetModel(cfg).eval()


def gpt_neox() -> torch.nn.Module:
    """A GPT-NeoX decoder: partial rotary positions, called with ``position_ids`` or not."""
    from transformers import GPTNeoXConfig, GPTNeoXForCausalLM

    torch.manual_seed(0)
    cfg = GPTNeoXConfig(vocab_size=100, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64, rotary_pct=0.5, use_cache=False,
                        hidden_dropout=0.0, attention_dropout=0.0)
    return GPTNeoXForCausalLM(cfg).eval()


def roberta() -> torch.nn.Module:
    """A RoBERTa encoder: positions counted from the ids that are not padding."""
    from transformers import RobertaConfig, RobertaModel

    torch.manual_seed(0)
    cfg = RobertaConfig(vocab_size=100, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64, pad_token_id=1,
                        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    return RobertaModel(cfg, add_pooling_layer=False).eval()
