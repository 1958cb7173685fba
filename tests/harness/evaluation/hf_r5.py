"""The transformers models of the fifth round of evaluation families: tiny configs, random
weights from a fixed seed, nothing downloaded (imports torch and transformers, offline, as
:mod:`tests.harness.evaluation.hf`). Each builder returns the eager model, in eval mode."""

import torch  # noqa: E402

from tests.harness.evaluation import hf as _hf  # noqa: F401 - offline() before transformers loads


def phi() -> torch.nn.Module:
    """A Phi decoder: partial rotary positions, a parallel attention and MLP block."""
    from transformers import PhiConfig, PhiForCausalLM

    torch.manual_seed(0)
    cfg = PhiConfig(vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                    num_attention_heads=2, max_position_embeddings=64, partial_rotary_factor=0.5,
                    use_cache=False, resid_pdrop=0.0, embd_pdrop=0.0, attention_dropout=0.0)
    return PhiForCausalLM(cfg).eval()


def deberta_v2() -> torch.nn.Module:
    """A DeBERTa-v2 encoder: disentangled attention over log-bucketed relative positions."""
    from transformers import DebertaV2Config, DebertaV2Model

    torch.manual_seed(0)
    cfg = DebertaV2Config(vocab_size=100, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                          intermediate_size=64, max_position_embeddings=64, relative_attention=True,
                          position_buckets=8, max_relative_positions=16, pos_att_type=["p2c", "c2p"],
                          hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    return DebertaV2Model(cfg).eval()


def gemma() -> torch.nn.Module:
    """A Gemma decoder: embeddings scaled by sqrt(hidden), grouped-query attention."""
    from transformers import GemmaConfig, GemmaForCausalLM

    torch.manual_seed(0)
    cfg = GemmaConfig(vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=1, head_dim=16, max_position_embeddings=64,
                      use_cache=False, pad_token_id=0, bos_token_id=1, eos_token_id=2)
    return GemmaForCausalLM(cfg).eval()


def electra() -> torch.nn.Module:
    """An ELECTRA discriminator: embeddings narrower than the hidden size, a projection up."""
    from transformers import ElectraConfig, ElectraForPreTraining

    torch.manual_seed(0)
    cfg = ElectraConfig(vocab_size=100, embedding_size=16, hidden_size=32, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=64,
                        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    return ElectraForPreTraining(cfg).eval()
