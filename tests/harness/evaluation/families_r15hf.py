"""The fifteenth round's transformers families: models not used before (mixture-of-experts,
partial-rotary and post-norm decoders, character and two-stream encoders, encoder-decoders,
convolutional and windowed vision models, raw audio), called as users call them: masks,
token types, positions and labels given or left out, caches and output options, batch and
sequence length changes, marks with and without a range, warm-ups that recompile, training
mode, int32 ids, interpolated image sizes.
:mod:`tests.harness.evaluation.families` adds them; nothing here imports torch."""

from __future__ import annotations

from tests.harness.evaluation.family import Family
from tests.harness.evaluation.family import q as _q
from tests.harness.evaluation.family import t as _t

_H = "tests.harness.evaluation.hf_r15:"
_TR = {"@train": True}
_NC = {"use_cache": False}
_IMG = [2, 3, 32, 32]


def _ids(*shape: int, **more) -> dict:
    return _t(list(shape), dtype="int64", **more)


R15HF_FAMILIES: list[Family] = [
    Family("r15_qwen2moe", _H + "qwen2moe", "Qwen2MoeForCausalLM", None, model=True,
           build=(({"input_ids": _ids(2, 8), **_NC},),),
           doc="a Qwen2-MoE decoder with a shared expert (dynamic=None)",
           queries=(
               _q("as built", input_ids=_ids(2, 8), **_NC),
               _q("router logits out", input_ids=_ids(2, 8), output_router_logits=True, **_NC),
               _q("batch 1", input_ids=_ids(1, 8), **_NC),
           )),
    Family("r15_olmo2_dyn", _H + "olmo2", "Olmo2ForCausalLM", True, model=True,
           build=(({"input_ids": _ids(2, 8), **_NC},),),
           doc="an OLMo2 decoder (dynamic=True)",
           queries=(
               _q("longer", input_ids=_ids(2, 13), **_NC),
               _q("one token", input_ids=_ids(2, 1), **_NC),
               _q("position ids given", input_ids=_ids(2, 8), position_ids=_ids(2, 8), **_NC),
           )),
    Family("r15_glm_mask", _H + "glm", "GlmForCausalLM", None, model=True,
           build=(({"input_ids": _ids(2, 8), "attention_mask": _ids(2, 8), **_NC},),),
           doc="a GLM decoder built with a mask (dynamic=None)",
           queries=(
               _q("mask left out", input_ids=_ids(2, 8), **_NC),
               _q("labels given", input_ids=_ids(2, 8), attention_mask=_ids(2, 8), labels=_ids(2, 8), **_NC),
               _q("int32 ids and mask", input_ids=_t([2, 8], dtype="int32"),
                  attention_mask=_t([2, 8], dtype="int32"), **_NC),
           )),
    Family("r15_helium_static", _H + "helium", "HeliumForCausalLM", False, model=True,
           build=(({"input_ids": _ids(2, 8), **_NC},),),
           doc="a Helium decoder (dynamic=False)",
           queries=(
               _q("as built", input_ids=_ids(2, 8), **_NC),
               _q("longer", input_ids=_ids(2, 12), **_NC),
               _q("hidden states out", input_ids=_ids(2, 8), output_hidden_states=True, **_NC),
           )),
    Family("r15_nemotron_warm", _H + "nemotron", "NemotronForCausalLM", None, model=True,
           build=(({"input_ids": _ids(2, 8), **_NC}, {"input_ids": _ids(2, 12), **_NC}),),
           doc="a Nemotron decoder built with two lengths, so recompiled dynamic (dynamic=None)",
           queries=(
               _q("length 16 after the warm-ups", input_ids=_ids(2, 16), **_NC,
                  warm_up=({"input_ids": _ids(2, 8), **_NC}, {"input_ids": _ids(2, 12), **_NC})),
               _q("length 16 first", input_ids=_ids(2, 16), **_NC),
               _q("batch 1, length 12", input_ids=_ids(1, 12), **_NC),
           )),
    Family("r15_persimmon_marked", _H + "persimmon", "PersimmonForCausalLM", None, model=True,
           build=(({"input_ids": _ids(2, 8, mark=[1], min=2, max=32), **_NC},),),
           doc="a Persimmon decoder, its length marked dynamic in 2..32 (dynamic=None)",
           queries=(
               _q("length 20 marked alike", input_ids=_ids(2, 20, mark=[1], min=2, max=32), **_NC),
               _q("length 40 marked without a range", input_ids=_ids(2, 40, mark=[1]), **_NC),
               _q("length 8 unmarked", input_ids=_ids(2, 8), **_NC),
           )),
    Family("r15_modernbert", _H + "modernbert", "ModernBertModel", None, model=True,
           build=(({"input_ids": _ids(2, 8)},),),
           doc="a ModernBERT encoder, global and local layers (dynamic=None)",
           queries=(
               _q("a mask given", input_ids=_ids(2, 8), attention_mask=_ids(2, 8)),
               _q("batch 1", input_ids=_ids(1, 8)),
               _q("hidden states out", input_ids=_ids(2, 8), output_hidden_states=True),
           )),
    Family("r15_xlnet", _H + "xlnet", "XLNetLMHeadModel", None, model=True,
           build=(({"input_ids": _ids(2, 8)},),),
           doc="an XLNet language model (dynamic=None)",
           queries=(
               _q("a mask given", input_ids=_ids(2, 8), attention_mask=_ids(2, 8)),
               _q("token types given", input_ids=_ids(2, 8), token_type_ids=_ids(2, 8)),
               _q("return_dict=False", input_ids=_ids(2, 8), return_dict=False),
           )),
    Family("r15_canine", _H + "canine", "CanineModel", None, model=True,
           build=(({"input_ids": _ids(2, 16)},),),
           doc="a CANINE character encoder downsampling by 4 (dynamic=None)",
           queries=(
               _q("as built", input_ids=_ids(2, 16)),
               _q("a mask given", input_ids=_ids(2, 16), attention_mask=_ids(2, 16)),
               _q("length 20", input_ids=_ids(2, 20)),
           )),
    Family("r15_megatron_cls", _H + "megatron_bert", "MegatronBertForSequenceClassification", None, model=True,
           build=(({"input_ids": _ids(2, 8), "labels": _ids(2)},),),
           doc="a Megatron-BERT classifier built with labels (dynamic=None)",
           queries=(
               _q("labels left out", input_ids=_ids(2, 8)),
               _q("token types and labels", input_ids=_ids(2, 8), token_type_ids=_ids(2, 8), labels=_ids(2)),
               _q("training mode, labels", input_ids=_ids(2, 8), labels=_ids(2), **_TR),
           )),
    Family("r15_ctrl_dyn", _H + "ctrl", "CTRLLMHeadModel", True, model=True,
           build=(({"input_ids": _ids(2, 8), **_NC},),),
           doc="a CTRL language model (dynamic=True)",
           queries=(
               _q("batch 1", input_ids=_ids(1, 8), **_NC),
               _q("longer", input_ids=_ids(2, 20), **_NC),
               _q("attentions out", input_ids=_ids(2, 8), output_attentions=True, **_NC),
           )),
    Family("r15_m2m100", _H + "m2m100", "M2M100ForConditionalGeneration", None, model=True,
           build=(({"input_ids": _ids(2, 8), "decoder_input_ids": _ids(2, 4)},),),
           doc="an M2M100 encoder-decoder (dynamic=None)",
           queries=(
               _q("as built", input_ids=_ids(2, 8), decoder_input_ids=_ids(2, 4)),
               _q("a mask given", input_ids=_ids(2, 8), attention_mask=_ids(2, 8), decoder_input_ids=_ids(2, 4)),
               _q("longer decoder ids", input_ids=_ids(2, 8), decoder_input_ids=_ids(2, 6)),
           )),
    Family("r15_blenderbot", _H + "blenderbot", "BlenderbotForConditionalGeneration", None, model=True,
           build=(({"input_ids": _ids(2, 8), "labels": _ids(2, 4)},),),
           doc="a Blenderbot encoder-decoder built with labels (dynamic=None)",
           queries=(
               _q("decoder ids, no labels", input_ids=_ids(2, 8), decoder_input_ids=_ids(2, 4)),
               _q("longer labels", input_ids=_ids(2, 8), labels=_ids(2, 6)),
               _q("as built", input_ids=_ids(2, 8), labels=_ids(2, 4)),
           )),
    Family("r15_convnextv2_dyn", _H + "convnextv2", "ConvNextV2Model", True, model=True,
           build=(({"pixel_values": _IMG},),),
           doc="a ConvNeXt V2 (dynamic=True)",
           queries=(
               _q("64x64 images", pixel_values=[2, 3, 64, 64]),
               _q("batch 1", pixel_values=[1, 3, 32, 32]),
               _q("hidden states out", pixel_values=_IMG, output_hidden_states=True),
           )),
    Family("r15_efficientnet", _H + "efficientnet", "EfficientNetModel", None, model=True,
           build=(({"pixel_values": _IMG},),),
           doc="an EfficientNet with batch norms (dynamic=None)",
           queries=(
               _q("training mode", pixel_values=_IMG, **_TR),
               _q("as built", pixel_values=_IMG),
               _q("48x48 images", pixel_values=[2, 3, 48, 48]),
           )),
    Family("r15_swinv2", _H + "swinv2", "Swinv2Model", None, model=True,
           build=(({"pixel_values": _IMG},),),
           doc="a Swin V2 (dynamic=None)",
           queries=(
               _q("64x64 images", pixel_values=[2, 3, 64, 64]),
               _q("batch 1", pixel_values=[1, 3, 32, 32]),
               _q("attentions out", pixel_values=_IMG, output_attentions=True),
           )),
    Family("r15_siglip_vision", _H + "siglip_vision", "SiglipVisionModel", None, model=True,
           build=(({"pixel_values": _IMG},),),
           doc="a SigLIP vision tower (dynamic=None)",
           queries=(
               _q("interpolate_pos_encoding=True", pixel_values=_IMG, interpolate_pos_encoding=True),
               _q("64x64, interpolated", pixel_values=[2, 3, 64, 64], interpolate_pos_encoding=True),
               _q("as built", pixel_values=_IMG),
           )),
    Family("r15_unispeech", _H + "unispeech", "UniSpeechModel", None, model=True,
           build=(({"input_values": [2, 400]},),),
           doc="a UniSpeech encoder over raw audio (dynamic=None)",
           queries=(
               _q("a mask given", input_values=[2, 400], attention_mask=_ids(2, 400)),
               _q("batch 1", input_values=[1, 400]),
               _q("800 samples", input_values=[2, 800]),
           )),
    Family("r15_mpt_marked", _H + "mpt", "MptForCausalLM", None, model=True,
           build=(({"input_ids": _ids(2, 8, mark=[0]), **_NC},),),
           doc="an MPT decoder with ALiBi, its batch marked dynamic (dynamic=None)",
           queries=(
               _q("batch 4 marked", input_ids=_ids(4, 8, mark=[0]), **_NC),
               _q("batch 4 unmarked", input_ids=_ids(4, 8), **_NC),
               _q("longer, batch marked", input_ids=_ids(2, 12, mark=[0]), **_NC),
           )),
]

R15HF_B_FAMILIES: list[Family] = [
    Family("r15_olmo2_keep_dyn", _H + "olmo2", "Olmo2ForCausalLM", True, model=True,
           build=(({"input_ids": _ids(2, 8), "logits_to_keep": 2, **_NC},),),
           doc="an OLMo2 decoder keeping the last 2 positions' logits (dynamic=True)",
           queries=(
               _q("logits_to_keep=3", input_ids=_ids(2, 8), logits_to_keep=3, **_NC),
               _q("logits_to_keep=1", input_ids=_ids(2, 8), logits_to_keep=1, **_NC),
               _q("logits_to_keep left out", input_ids=_ids(2, 8), **_NC),
           )),
    Family("r15_helium_grad", _H + "helium", "HeliumForCausalLM", None, model=True, states_grad=True,
           build=(({"input_ids": _ids(2, 8), **_NC},),),
           doc="a Helium decoder built under no_grad (dynamic=None)",
           queries=(
               _q("grad enabled", input_ids=_ids(2, 8), **_NC, **{"@grad": True}),
               _q("inference mode", input_ids=_ids(2, 8), **_NC, **{"@inference": True}),
               _q("autocast bfloat16", input_ids=_ids(2, 8), **_NC, **{"@autocast": "bfloat16"}),
           )),
    Family("r15_ctrl_batch_warm", _H + "ctrl", "CTRLLMHeadModel", None, model=True,
           build=(({"input_ids": _ids(2, 8), **_NC}, {"input_ids": _ids(4, 8), **_NC}),),
           doc="a CTRL language model built with two batch sizes, so recompiled dynamic (dynamic=None)",
           queries=(
               _q("batch 1 after the warm-ups", input_ids=_ids(1, 8), **_NC,
                  warm_up=({"input_ids": _ids(2, 8), **_NC}, {"input_ids": _ids(4, 8), **_NC})),
               _q("batch 6 after the warm-ups", input_ids=_ids(6, 8), **_NC,
                  warm_up=({"input_ids": _ids(2, 8), **_NC}, {"input_ids": _ids(4, 8), **_NC})),
               _q("batch 6 first", input_ids=_ids(6, 8), **_NC),
           )),
    Family("r15_swinv2_modes", _H + "swinv2", "Swinv2Model", None, model=True,
           build=(({"pixel_values": _IMG},),),
           doc="a Swin V2 asked channels-last and in training mode (dynamic=None)",
           queries=(
               _q("channels-last", pixel_values=_t(_IMG, stride=[3072, 1, 96, 3])),
               _q("training mode", pixel_values=_IMG, **_TR),
               _q("eval mode stated", pixel_values=_IMG, **{"@train": False}),
           )),
    Family("r15_megatron_embeds", _H + "megatron_bert", "MegatronBertForSequenceClassification", None,
           model=True, build=(({"input_ids": _ids(2, 8)},),),
           doc="a Megatron-BERT classifier asked with embeddings and positions (dynamic=None)",
           queries=(
               _q("inputs_embeds, no ids", inputs_embeds=[2, 8, 32]),
               _q("position ids given", input_ids=_ids(2, 8), position_ids=_ids(2, 8)),
               _q("int32 ids", input_ids=_t([2, 8], dtype="int32")),
           )),
]
