"""The transformers models of the fourteenth round of evaluation families: tiny configs, random
weights from a fixed seed, nothing downloaded (imports torch and transformers, offline, as
:mod:`tests.harness.evaluation.hf`). Each builder returns the eager model, in eval mode."""

import torch  # noqa: E402

from tests.harness.evaluation import hf as _hf  # noqa: F401 - offline() before transformers loads

_DEC = dict(vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4,
            num_key_value_heads=2, max_position_embeddings=64, pad_token_id=0, bos_token_id=1, eos_token_id=2)
_ENC = dict(vocab_size=100, hidden_size=32, num_hidden_layers=1, num_attention_heads=4, intermediate_size=64,
            max_position_embeddings=64, type_vocab_size=2, hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0)


def cohere() -> torch.nn.Module:
    """A Cohere decoder: parallel attention and MLP, a logit scale, a layer norm without bias."""
    from transformers import CohereConfig, CohereForCausalLM

    torch.manual_seed(0)
    return CohereForCausalLM(CohereConfig(**_DEC, logit_scale=0.5)).eval()


def starcoder2() -> torch.nn.Module:
    """A Starcoder2 decoder: grouped-query attention with biases, a sliding window, a GELU MLP."""
    from transformers import Starcoder2Config, Starcoder2ForCausalLM

    torch.manual_seed(0)
    return Starcoder2ForCausalLM(Starcoder2Config(**_DEC, sliding_window=16, residual_dropout=0.0,
                                                  embedding_dropout=0.0, attention_dropout=0.0)).eval()


def gemma2() -> torch.nn.Module:
    """A Gemma2 decoder: attention and final logit soft-capping, alternating sliding layers."""
    from transformers import Gemma2Config, Gemma2ForCausalLM

    torch.manual_seed(0)
    cfg = Gemma2Config(**{**_DEC, "num_hidden_layers": 2}, head_dim=8, sliding_window=8,
                       attn_logit_softcapping=50.0, final_logit_softcapping=30.0, query_pre_attn_scalar=8)
    return Gemma2ForCausalLM(cfg).eval()


def convbert() -> torch.nn.Module:
    """A ConvBERT encoder: span-based dynamic convolution heads beside self-attention."""
    from transformers import ConvBertConfig, ConvBertModel

    torch.manual_seed(0)
    return ConvBertModel(ConvBertConfig(**_ENC, embedding_size=32, head_ratio=2, conv_kernel_size=3)).eval()


def ernie() -> torch.nn.Module:
    """An ERNIE encoder with a masked-LM head: task type embeddings, labels give a loss."""
    from transformers import ErnieConfig, ErnieForMaskedLM

    torch.manual_seed(0)
    return ErnieForMaskedLM(ErnieConfig(**_ENC, use_task_id=True, task_type_vocab_size=3)).eval()


def xglm() -> torch.nn.Module:
    """An XGLM decoder: sinusoidal positions, scaled embeddings, a key/value cache."""
    from transformers import XGLMConfig, XGLMForCausalLM

    torch.manual_seed(0)
    cfg = XGLMConfig(vocab_size=100, d_model=32, ffn_dim=64, num_layers=1, attention_heads=4,
                     max_position_embeddings=64, dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
                     layerdrop=0.0, pad_token_id=1, bos_token_id=0, eos_token_id=2)
    return XGLMForCausalLM(cfg).eval()


def data2vec_text() -> torch.nn.Module:
    """A Data2Vec text encoder with a sequence classification head (labels give a loss)."""
    from transformers import Data2VecTextConfig, Data2VecTextForSequenceClassification

    torch.manual_seed(0)
    cfg = Data2VecTextConfig(**{**_ENC, "max_position_embeddings": 80}, num_labels=3, pad_token_id=1)
    return Data2VecTextForSequenceClassification(cfg).eval()


def roformer() -> torch.nn.Module:
    """A RoFormer encoder: rotary positions, sinusoidal tables sliced by the sequence length."""
    from transformers import RoFormerConfig, RoFormerModel

    torch.manual_seed(0)
    return RoFormerModel(RoFormerConfig(**_ENC, embedding_size=32)).eval()


def mobilevit() -> torch.nn.Module:
    """A MobileViT: inverted residual convolutions, unfold into patches, transformer, fold back."""
    from transformers import MobileViTConfig, MobileViTModel

    torch.manual_seed(0)
    cfg = MobileViTConfig(image_size=64, patch_size=2, hidden_sizes=[16, 24, 32],
                          neck_hidden_sizes=[8, 8, 16, 16, 24, 24, 48], num_attention_heads=2,
                          mlp_ratio=2.0, expand_ratio=2.0, hidden_dropout_prob=0.0,
                          attention_probs_dropout_prob=0.0, classifier_dropout_prob=0.0)
    return MobileViTModel(cfg).eval()


def poolformer() -> torch.nn.Module:
    """A PoolFormer: average pooling as the token mixer, group norm, layer scale."""
    from transformers import PoolFormerConfig, PoolFormerModel

    torch.manual_seed(0)
    cfg = PoolFormerConfig(num_channels=3, patch_size=7, stride=4, pool_size=3, depths=[1, 1],
                           hidden_sizes=[16, 32], num_encoder_blocks=2, mlp_ratio=2.0, drop_path_rate=0.0,
                           patch_sizes=[7, 3], strides=[4, 2], padding=[2, 1])
    return PoolFormerModel(cfg).eval()


def mixtral() -> torch.nn.Module:
    """A Mixtral decoder: a sparse mixture of experts routed top-2 of 4."""
    from transformers import MixtralConfig, MixtralForCausalLM

    torch.manual_seed(0)
    return MixtralForCausalLM(MixtralConfig(**_DEC, num_local_experts=4, num_experts_per_tok=2,
                                            sliding_window=None)).eval()


def funnel() -> torch.nn.Module:
    """A Funnel encoder: pooling halves the sequence between blocks, relative attention."""
    from transformers import FunnelBaseModel, FunnelConfig

    torch.manual_seed(0)
    cfg = FunnelConfig(vocab_size=100, block_sizes=[1, 1], block_repeats=None, num_decoder_layers=1,
                       d_model=32, n_head=4, d_head=8, d_inner=64, hidden_dropout=0.0, attention_dropout=0.0,
                       activation_dropout=0.0, max_position_embeddings=64, type_vocab_size=3)
    return FunnelBaseModel(cfg).eval()
