"""The transformers models of the evaluation families: tiny configs, random weights from a
fixed seed, nothing downloaded (imports torch and transformers, offline; see
:mod:`tests.harness.models`). Each builder returns the eager model, in eval mode."""

from tests.harness.offline import offline

offline()

import torch  # noqa: E402
import transformers  # noqa: E402

transformers.logging.set_verbosity_error()


def t5() -> torch.nn.Module:
    """An encoder-decoder: ``T5ForConditionalGeneration(input_ids=, decoder_input_ids=)``."""
    from transformers import T5Config, T5ForConditionalGeneration

    torch.manual_seed(0)
    cfg = T5Config(vocab_size=100, d_model=32, d_kv=8, d_ff=64, num_layers=1, num_decoder_layers=1,
                   num_heads=2, dropout_rate=0.0, use_cache=False, decoder_start_token_id=0,
                   pad_token_id=0, eos_token_id=1)
    return T5ForConditionalGeneration(cfg).eval()


def wav2vec2() -> torch.nn.Module:
    """Convolutions over raw audio (kernels 10, 3, 3; strides 5, 2, 2): 30..49 samples
    leave one frame."""
    from transformers import Wav2Vec2Config, Wav2Vec2Model

    torch.manual_seed(0)
    cfg = Wav2Vec2Config(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
                         conv_dim=(8, 8, 8), conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3),
                         num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2,
                         feat_extract_norm="group", do_stable_layer_norm=False, vocab_size=32,
                         hidden_dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
                         feat_proj_dropout=0.0, final_dropout=0.0, layerdrop=0.0, mask_time_prob=0.0)
    return Wav2Vec2Model(cfg).eval()


def vit() -> torch.nn.Module:
    """A vision transformer over 32x32 images, 8x8 patches."""
    from transformers import ViTConfig, ViTModel

    torch.manual_seed(0)
    cfg = ViTConfig(image_size=32, patch_size=8, num_channels=3, hidden_size=32, num_hidden_layers=1,
                    num_attention_heads=2, intermediate_size=64, hidden_dropout_prob=0.0,
                    attention_probs_dropout_prob=0.0)
    return ViTModel(cfg, add_pooling_layer=False).eval()


def distilbert() -> torch.nn.Module:
    """An encoder called with an attention mask, or without."""
    from transformers import DistilBertConfig, DistilBertModel

    torch.manual_seed(0)
    cfg = DistilBertConfig(vocab_size=100, dim=32, n_layers=1, n_heads=2, hidden_dim=64,
                           max_position_embeddings=64, dropout=0.0, attention_dropout=0.0)
    return DistilBertModel(cfg).eval()


def opt() -> torch.nn.Module:
    """A decoder (``OPTForCausalLM``), called with ``output_hidden_states`` or not."""
    from transformers import OPTConfig, OPTForCausalLM

    torch.manual_seed(0)
    cfg = OPTConfig(vocab_size=100, hidden_size=32, num_hidden_layers=1, ffn_dim=64, num_attention_heads=2,
                    max_position_embeddings=64, word_embed_proj_dim=32, dropout=0.0, attention_dropout=0.0,
                    activation_dropout=0.0, layerdrop=0.0, use_cache=False, pad_token_id=1,
                    bos_token_id=0, eos_token_id=2)
    return OPTForCausalLM(cfg).eval()


def albert() -> torch.nn.Module:
    """A shared-layer encoder called with ``token_type_ids`` (or without)."""
    from transformers import AlbertConfig, AlbertModel

    torch.manual_seed(0)
    cfg = AlbertConfig(vocab_size=100, embedding_size=16, hidden_size=32, num_hidden_layers=1,
                       num_attention_heads=2, intermediate_size=64, max_position_embeddings=64,
                       hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, type_vocab_size=100)
    return AlbertModel(cfg, add_pooling_layer=False).eval()


def mistral() -> torch.nn.Module:
    """A decoder with grouped-query attention and a sliding window of 4 tokens
    (``MistralForCausalLM``)."""
    from transformers import MistralConfig, MistralForCausalLM

    torch.manual_seed(0)
    cfg = MistralConfig(vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                        num_attention_heads=4, num_key_value_heads=1, max_position_embeddings=64,
                        sliding_window=4, use_cache=False, pad_token_id=0, bos_token_id=1, eos_token_id=2)
    return MistralForCausalLM(cfg).eval()


def convnext() -> torch.nn.Module:
    """A ConvNeXt over 32x32 images (two stages)."""
    from transformers import ConvNextConfig, ConvNextModel

    torch.manual_seed(0)
    cfg = ConvNextConfig(num_channels=3, patch_size=4, num_stages=2, hidden_sizes=[8, 16], depths=[1, 1],
                         image_size=32, drop_path_rate=0.0)
    return ConvNextModel(cfg).eval()


def clip_text() -> torch.nn.Module:
    """CLIP's text tower: a causal mask, and the pooled output taken at the largest id."""
    from transformers import CLIPTextConfig, CLIPTextModel

    torch.manual_seed(0)
    cfg = CLIPTextConfig(vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=2, max_position_embeddings=32, pad_token_id=1, bos_token_id=0,
                         eos_token_id=2)
    return CLIPTextModel(cfg).eval()


def gpt2() -> torch.nn.Module:
    """A GPT-2 decoder (``GPT2LMHeadModel``): learned positions, called with a mask or not."""
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=100, n_positions=64, n_embd=32, n_layer=1, n_head=2, resid_pdrop=0.0,
                     embd_pdrop=0.0, attn_pdrop=0.0, use_cache=False)
    return GPT2LMHeadModel(cfg).eval()


def bert() -> torch.nn.Module:
    """A BERT encoder with two token types and a pooler (``BertModel``)."""
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=64, type_vocab_size=2,
                     hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    return BertModel(cfg).eval()


def qwen2() -> torch.nn.Module:
    """A Qwen2 decoder: rotary positions, grouped-query attention, qkv biases."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    cfg = Qwen2Config(vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                      use_cache=False, tie_word_embeddings=True)
    return Qwen2ForCausalLM(cfg).eval()


def bart() -> torch.nn.Module:
    """An encoder-decoder (``BartModel``) called with decoder ids, or deriving them by shifting."""
    from transformers import BartConfig, BartModel

    torch.manual_seed(0)
    cfg = BartConfig(vocab_size=100, d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                     decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=64,
                     dropout=0.0, attention_dropout=0.0, activation_dropout=0.0, use_cache=False,
                     pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2)
    return BartModel(cfg).eval()
