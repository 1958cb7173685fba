"""The transformers models of the fifteenth round of evaluation families: tiny configs, random
weights from a fixed seed, nothing downloaded (imports torch and transformers, offline, as
:mod:`tests.harness.evaluation.hf`). Each builder returns the eager model, in eval mode."""

import torch  # noqa: E402

from tests.harness.evaluation import hf as _hf  # noqa: F401 - offline() before transformers loads
from tests.harness.evaluation.hf_r14 import _DEC, _ENC  # the same tiny decoder and encoder


def qwen2moe() -> torch.nn.Module:
    """A Qwen2-MoE decoder: routed experts beside a gated shared expert."""
    from transformers import Qwen2MoeConfig, Qwen2MoeForCausalLM

    torch.manual_seed(0)
    cfg = Qwen2MoeConfig(**_DEC, moe_intermediate_size=16, shared_expert_intermediate_size=32, num_experts=4,
                         num_experts_per_tok=2, decoder_sparse_step=1, use_sliding_window=False)
    return Qwen2MoeForCausalLM(cfg).eval()


def olmo2() -> torch.nn.Module:
    """An OLMo2 decoder: norms after attention and MLP, q/k norms."""
    from transformers import Olmo2Config, Olmo2ForCausalLM

    torch.manual_seed(0)
    return Olmo2ForCausalLM(Olmo2Config(**_DEC)).eval()


def glm() -> torch.nn.Module:
    """A GLM decoder: partial rotary, interleaved rotary halves, fused gate/up."""
    from transformers import GlmConfig, GlmForCausalLM

    torch.manual_seed(0)
    return GlmForCausalLM(GlmConfig(**_DEC, head_dim=8)).eval()


def helium() -> torch.nn.Module:
    """A Helium decoder (Llama-like, RMS norms with their own epsilon)."""
    from transformers import HeliumConfig, HeliumForCausalLM

    torch.manual_seed(0)
    return HeliumForCausalLM(HeliumConfig(**_DEC, head_dim=8)).eval()


def nemotron() -> torch.nn.Module:
    """A Nemotron decoder: layer norm 1p, squared-ReLU MLP, partial rotary."""
    from transformers import NemotronConfig, NemotronForCausalLM

    torch.manual_seed(0)
    return NemotronForCausalLM(NemotronConfig(**_DEC, head_dim=8, partial_rotary_factor=0.5)).eval()


def persimmon() -> torch.nn.Module:
    """A Persimmon decoder: fused QKV, q/k layer norms, partial rotary."""
    from transformers import PersimmonConfig, PersimmonForCausalLM

    torch.manual_seed(0)
    cfg = PersimmonConfig(vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                          num_attention_heads=4, max_position_embeddings=64, partial_rotary_factor=0.5,
                          hidden_dropout=0.0, attention_dropout=0.0, pad_token_id=0, bos_token_id=1,
                          eos_token_id=2)
    return PersimmonForCausalLM(cfg).eval()


def modernbert() -> torch.nn.Module:
    """A ModernBERT encoder: global and local attention layers, unpadding-free path on CPU."""
    from transformers import ModernBertConfig, ModernBertModel

    torch.manual_seed(0)
    cfg = ModernBertConfig(vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                           num_attention_heads=4, max_position_embeddings=64, global_attn_every_n_layers=2,
                           local_attention=8, pad_token_id=0, attn_implementation="eager")
    return ModernBertModel(cfg).eval()


def xlnet() -> torch.nn.Module:
    """An XLNet language model: two-stream relative attention, memories off."""
    from transformers import XLNetConfig, XLNetLMHeadModel

    torch.manual_seed(0)
    cfg = XLNetConfig(vocab_size=100, d_model=32, n_layer=1, n_head=4, d_inner=64, dropout=0.0, mem_len=None,
                      use_mems_eval=False, pad_token_id=0, bos_token_id=1, eos_token_id=2)
    return XLNetLMHeadModel(cfg).eval()


def canine() -> torch.nn.Module:
    """A CANINE encoder over characters: hashed embeddings, downsampling by a strided conv."""
    from transformers import CanineConfig, CanineModel

    torch.manual_seed(0)
    cfg = CanineConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=4, intermediate_size=64,
                       hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, max_position_embeddings=256,
                       num_hash_functions=2, num_hash_buckets=64, downsampling_rate=4, upsampling_kernel_size=4,
                       local_transformer_stride=16)
    return CanineModel(cfg).eval()


def megatron_bert() -> torch.nn.Module:
    """A Megatron-BERT sequence classifier over 64 labels: pre-norm layers, labels give a loss."""
    from transformers import MegatronBertConfig, MegatronBertForSequenceClassification

    torch.manual_seed(0)
    return MegatronBertForSequenceClassification(MegatronBertConfig(**_ENC, num_labels=64)).eval()


def ctrl() -> torch.nn.Module:
    """A CTRL language model: sinusoidal positions, scaled embeddings."""
    from transformers import CTRLConfig, CTRLLMHeadModel

    torch.manual_seed(0)
    cfg = CTRLConfig(vocab_size=100, n_positions=64, n_embd=32, dff=64, n_layer=1, n_head=4,
                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    return CTRLLMHeadModel(cfg).eval()


def m2m100() -> torch.nn.Module:
    """An M2M100 encoder-decoder: sinusoidal positions made from the ids (padding skipped)."""
    from transformers import M2M100Config, M2M100ForConditionalGeneration

    torch.manual_seed(0)
    cfg = M2M100Config(vocab_size=100, d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=4,
                       decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64,
                       max_position_embeddings=64, dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
                       encoder_layerdrop=0.0, decoder_layerdrop=0.0, pad_token_id=1, bos_token_id=0,
                       eos_token_id=2, decoder_start_token_id=2, use_cache=False)
    return M2M100ForConditionalGeneration(cfg).eval()


def blenderbot() -> torch.nn.Module:
    """A Blenderbot encoder-decoder: pre-norm layers, learned positions, labels give a loss."""
    from transformers import BlenderbotConfig, BlenderbotForConditionalGeneration

    torch.manual_seed(0)
    cfg = BlenderbotConfig(vocab_size=100, d_model=32, encoder_layers=1, decoder_layers=1,
                           encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
                           decoder_ffn_dim=64, max_position_embeddings=64, dropout=0.0, attention_dropout=0.0,
                           activation_dropout=0.0, encoder_layerdrop=0.0, decoder_layerdrop=0.0,
                           pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1,
                           use_cache=False)
    return BlenderbotForConditionalGeneration(cfg).eval()


def convnextv2() -> torch.nn.Module:
    """A ConvNeXt V2: depthwise convolutions, global response normalization."""
    from transformers import ConvNextV2Config, ConvNextV2Model

    torch.manual_seed(0)
    cfg = ConvNextV2Config(num_channels=3, patch_size=4, num_stages=2, hidden_sizes=[16, 32], depths=[1, 1],
                           drop_path_rate=0.0)
    return ConvNextV2Model(cfg).eval()


def efficientnet() -> torch.nn.Module:
    """An EfficientNet: batch norms (running statistics in training mode), squeeze-excite."""
    from transformers import EfficientNetConfig, EfficientNetModel

    torch.manual_seed(0)
    cfg = EfficientNetConfig(image_size=32, width_coefficient=0.25, depth_coefficient=0.25, hidden_dim=320,
                             kernel_sizes=[3, 3], in_channels=[32, 16], out_channels=[16, 24],
                             depthwise_padding=[], strides=[1, 2], num_block_repeats=[1, 1],
                             expand_ratios=[1, 6], dropout_rate=0.0, drop_connect_rate=0.0)
    return EfficientNetModel(cfg).eval()


def swinv2() -> torch.nn.Module:
    """A Swin V2: windowed cosine attention with a log-spaced continuous position bias."""
    from transformers import Swinv2Config, Swinv2Model

    torch.manual_seed(0)
    cfg = Swinv2Config(image_size=32, patch_size=4, embed_dim=16, depths=[1, 1], num_heads=[2, 2], window_size=4,
                       mlp_ratio=2.0, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                       drop_path_rate=0.0)
    return Swinv2Model(cfg).eval()


def siglip_vision() -> torch.nn.Module:
    """A SigLIP vision tower: patch embeddings, positions interpolated on request."""
    from transformers import SiglipVisionConfig, SiglipVisionModel

    torch.manual_seed(0)
    cfg = SiglipVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4,
                             image_size=32, patch_size=8, attention_dropout=0.0)
    return SiglipVisionModel(cfg).eval()


def unispeech() -> torch.nn.Module:
    """A UniSpeech encoder over raw audio (kernels 10, 3, 3; strides 5, 2, 2)."""
    from transformers import UniSpeechConfig, UniSpeechModel

    torch.manual_seed(0)
    cfg = UniSpeechConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
                          conv_dim=(8, 8, 8), conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3),
                          num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2, feat_extract_norm="group",
                          do_stable_layer_norm=False, vocab_size=32, hidden_dropout=0.0, attention_dropout=0.0,
                          activation_dropout=0.0, feat_proj_dropout=0.0, final_dropout=0.0, layerdrop=0.0,
                          mask_time_prob=0.0)
    return UniSpeechModel(cfg).eval()


def mpt() -> torch.nn.Module:
    """An MPT decoder: ALiBi position biases, no position embeddings."""
    from transformers import MptConfig, MptForCausalLM

    torch.manual_seed(0)
    cfg = MptConfig(vocab_size=100, d_model=32, n_heads=4, n_layers=1, expansion_ratio=2, max_seq_len=64,
                    attn_config={"alibi": True, "attn_pdrop": 0}, resid_pdrop=0.0, emb_pdrop=0.0)
    return MptForCausalLM(cfg).eval()
