"""Qwen2.5-Omni thinker base-model folders built locally, for tests and for checking the recipe offline.

Two layouts, both random-weight (nothing is downloaded):
- `tiny`: the smallest thinker that runs (hidden 64, 2 text and 2 audio layers) - seconds on a CPU.
- `qwen2.5-omni-7b-2l`: the real Qwen2.5-Omni-7B thinker configuration (transformers' defaults for
  `Qwen2_5OmniThinkerConfig` are that checkpoint's) with every stack cut to 2 layers; widths, vocabulary and
  special-token ids are the real ones, so module names, shapes and LoRA targets are those of the 7B model.

The folder holds what a real checkpoint folder holds for the thinker: config + weights (`save_pretrained`),
the Whisper feature extractor (128 mel bins), a tokenizer with Qwen's special tokens at their real ids
(byte-level, so any text encodes) and a chat template.
"""
from __future__ import annotations

from pathlib import Path

# Qwen2.5-Omni's special tokens and their ids (tokenizer of Qwen/Qwen2.5-Omni-7B).
SPECIAL = {"<|endoftext|>": 151643, "<|im_start|>": 151644, "<|im_end|>": 151645, "<|AUDIO|>": 151646,
           "<|audio_bos|>": 151647, "<|audio_eos|>": 151648, "<|box_end|>": 151649, "<|quad_start|>": 151650,
           "<|quad_end|>": 151651, "<|vision_bos|>": 151652, "<|vision_eos|>": 151653, "<|vision_pad|>": 151654,
           "<|IMAGE|>": 151655, "<|VIDEO|>": 151656}
NAMED = {"audio_token": "<|AUDIO|>", "audio_bos_token": "<|audio_bos|>", "audio_eos_token": "<|audio_eos|>",
         "image_token": "<|IMAGE|>", "video_token": "<|VIDEO|>", "vision_bos_token": "<|vision_bos|>",
         "vision_eos_token": "<|vision_eos|>"}
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'audio' %}<|audio_bos|><|AUDIO|><|audio_eos|>"
    "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
LAYOUTS = ("tiny", "qwen2.5-omni-7b-2l")


def build_tokenizer():
    """Byte-level tokenizer (256 byte tokens, fillers up to Qwen's first special id, then Qwen's specials)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {ch: i for i, ch in enumerate(sorted(alphabet))}
    first = min(SPECIAL.values())
    vocab.update({f"<|filler_{i}|>": i for i in range(len(vocab), first)})
    vocab.update(SPECIAL)
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(list(SPECIAL))
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   extra_special_tokens=NAMED, chat_template=CHAT_TEMPLATE)


def thinker_config(layout: str):
    from transformers import Qwen2_5OmniThinkerConfig

    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}; one of {LAYOUTS}")
    if layout == "tiny":
        audio = {"d_model": 64, "encoder_layers": 2, "encoder_attention_heads": 2, "encoder_ffn_dim": 128,
                 "output_dim": 64, "num_mel_bins": 128, "n_window": 50}
        vision = {"depth": 1, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2, "out_hidden_size": 64,
                  "fullatt_block_indexes": [0]}
        text = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
                "num_key_value_heads": 2, "vocab_size": 152064,
                "rope_parameters": {"rope_type": "default", "rope_theta": 1e6, "mrope_section": [2, 3, 3]}}
        cfg = Qwen2_5OmniThinkerConfig(audio_config=audio, vision_config=vision, text_config=text)
    else:
        cfg = Qwen2_5OmniThinkerConfig()
        cfg.audio_config.encoder_layers = 2
        cfg.vision_config.depth = 2
        cfg.vision_config.fullatt_block_indexes = [1]
        cfg.text_config.num_hidden_layers = 2
        cfg.text_config.layer_types = cfg.text_config.layer_types[:2]
        cfg.text_config.rope_parameters = {**cfg.text_config.rope_parameters, "mrope_section": [16, 24, 24]}
    cfg.vision_start_token_id, cfg.vision_end_token_id = SPECIAL["<|vision_bos|>"], SPECIAL["<|vision_eos|>"]
    cfg.text_config.pad_token_id = SPECIAL["<|endoftext|>"]
    cfg.text_config.eos_token_id = SPECIAL["<|im_end|>"]
    return cfg


def build_base(out: Path, layout: str = "tiny", seed: int = 0, dtype: str = "float32") -> Path:
    """Write a random-weight thinker folder in `layout` to OUT; returns OUT."""
    import torch
    from transformers import Qwen2_5OmniThinkerForConditionalGeneration, WhisperFeatureExtractor

    torch.manual_seed(seed)
    cfg = thinker_config(layout)
    model = Qwen2_5OmniThinkerForConditionalGeneration(cfg).to(getattr(torch, dtype))
    model.generation_config.pad_token_id = SPECIAL["<|endoftext|>"]
    model.generation_config.eos_token_id = SPECIAL["<|im_end|>"]
    out = Path(out)
    model.save_pretrained(out)
    WhisperFeatureExtractor(feature_size=128).save_pretrained(out)
    build_tokenizer().save_pretrained(out)
    return out
