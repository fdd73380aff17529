"""The `omni` backend: a Qwen2.5-Omni thinker through transformers, with LoRA adapters from an allow-list.

Everything loads from local folders named in config (`backend.omni_base_path`, `backend.omni_adapters`);
clients never name a model or an adapter. Inputs are built here from the folder's own feature extractor,
tokenizer and chat template, exactly as `Qwen2_5OmniProcessor` builds audio+text inputs (one
`<|AUDIO|>` placeholder per clip, expanded to the audio encoder's output length), without the processor's
image/video stack, which needs torchvision. Audio longer than the feature extractor's 30 s window is sent
as consecutive 30 s clips, so nothing is cut off. The BPFT trainer (`guard.train.bpft`) uses the same
`encode`, so training and serving see identical inputs.
"""
from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from guard.backends.base import Backend, Task
from guard.errors import ConfigError

SAMPLE_RATE = 16000
AUDIO_PART = {"type": "audio", "audio": "<audio>"}


def audio_token_count(feature_frames: int) -> int:
    """Audio-encoder output length for `feature_frames` mel frames (two stride-2 stages; Qwen2.5-Omni)."""
    after_conv = (feature_frames - 1) // 2 + 1
    return (after_conv - 2) // 2 + 1


def clips(audio: np.ndarray, seconds: int = 30) -> list[np.ndarray]:
    n = seconds * SAMPLE_RATE
    return [audio[i:i + n] for i in range(0, max(len(audio), 1), n)]


def chat(prompt: str, n_audio: int, system: str = "", answer: str | None = None) -> list[dict]:
    msgs = [{"role": "system", "content": system}] if system else []
    msgs.append({"role": "user", "content": [AUDIO_PART] * n_audio + [{"type": "text", "text": prompt}]})
    if answer is not None:
        msgs.append({"role": "assistant", "content": answer})
    return msgs


def encode(tokenizer, feature_extractor, audio: np.ndarray | None, prompt: str, system: str = "") -> dict:
    """Model inputs (batch of one, torch tensors) for the generation prompt: system?, user(audio?, prompt).
    `audio=None` builds a text-only turn (general-task training examples)."""
    import torch

    if audio is None:
        text = tokenizer.apply_chat_template(chat(prompt, 0, system), tokenize=False, add_generation_prompt=True)
        ids = tokenizer(text, add_special_tokens=False, return_tensors="pt")
        return {"input_ids": ids["input_ids"], "attention_mask": ids["attention_mask"]}
    parts = clips(np.asarray(audio, dtype=np.float32))
    feats = feature_extractor(parts, sampling_rate=SAMPLE_RATE, padding="max_length", truncation=True,
                              return_attention_mask=True, return_tensors="pt")
    text = tokenizer.apply_chat_template(chat(prompt, len(parts), system), tokenize=False,
                                         add_generation_prompt=True)
    pieces = text.split(tokenizer.audio_token)
    if len(pieces) != len(parts) + 1:
        raise ConfigError(f"the chat template wrote {len(pieces) - 1} audio placeholders for {len(parts)} clips")
    counts = [audio_token_count(int(n)) for n in feats["attention_mask"].sum(-1)]
    text = pieces[0] + "".join(tokenizer.audio_token * c + p for c, p in zip(counts, pieces[1:]))
    ids = tokenizer(text, add_special_tokens=False, return_tensors="pt")
    return {"input_ids": ids["input_ids"], "attention_mask": ids["attention_mask"],
            "input_features": feats["input_features"],
            "feature_attention_mask": feats["attention_mask"].to(torch.long)}


def resolve_device(name: str) -> str:
    import torch

    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return name


def load_thinker(base: str | Path, device: str = "cpu"):
    """(model, tokenizer, feature_extractor) from a local thinker folder; no network is ever tried."""
    import torch
    from transformers import (
        AutoTokenizer,
        Qwen2_5OmniThinkerForConditionalGeneration,
        WhisperFeatureExtractor,
    )

    base = Path(base)
    if not (base / "config.json").is_file():
        raise ConfigError(f"backend.omni_base_path {str(base)!r} is not a model folder (no config.json)")
    dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
    model = Qwen2_5OmniThinkerForConditionalGeneration.from_pretrained(base, dtype=dtype, local_files_only=True)
    tok = AutoTokenizer.from_pretrained(base, local_files_only=True)
    fe = WhisperFeatureExtractor.from_pretrained(base, local_files_only=True)
    if not getattr(tok, "audio_token", None):
        raise ConfigError(f"the tokenizer in {base} has no audio_token; is this a Qwen2.5-Omni folder?")
    return model.to(device).eval(), tok, fe


def relayout(keys: list[str], language_model: bool) -> dict[str, str]:
    """Adapter keys renamed to this transformers' thinker layout: the LLM's layers are
    `model.language_model.layers.N` from transformers 5.2x and `model.layers.N` before. An adapter trained
    under one layout loads under the other (peft alone would load nothing and only warn)."""
    if language_model:
        return {k: k.replace("model.model.layers.", "model.model.language_model.layers.") for k in keys}
    return {k: k.replace("model.language_model.layers.", "model.layers.") for k in keys}


def load_adapter_weights(model, name: str, path: str) -> None:
    """Load the adapter's weights into `model` under `name`, renamed to the model's layout, and refuse an
    adapter of which any weight finds no place or that leaves any of its LoRA matrices unloaded: a
    silently unloaded adapter would serve the base model as if it were BPFT-adapted."""
    from peft import set_peft_model_state_dict
    from safetensors.torch import load_file

    file = Path(path) / "adapter_model.safetensors"
    if not file.is_file():
        raise ConfigError(f"backend.omni_adapters[{name!r}] = {path!r} holds no adapter_model.safetensors")
    state = load_file(str(file))
    lm = any(".language_model.layers." in n for n, _ in model.named_modules())
    state = {new: state[old] for old, new in relayout(list(state), lm).items()}
    result = set_peft_model_state_dict(model, state, adapter_name=name)
    missing = [k for k in result.missing_keys if "lora_" in k and f".{name}." in k]
    if result.unexpected_keys or missing or not state:
        raise ConfigError(f"adapter {name!r} at {path} does not fit this thinker: "
                          f"{len(result.unexpected_keys)} of its weights name no module here, "
                          f"{len(missing)} LoRA matrices left unloaded (another base model?)")


def attach_adapters(model, adapters: dict[str, str]):
    """Wrap `model` with every allow-listed adapter loaded under its name (inactive until chosen)."""
    from peft import PeftConfig, PeftModel

    for i, (name, path) in enumerate(sorted(adapters.items())):
        if not (Path(path) / "adapter_config.json").is_file():
            raise ConfigError(f"backend.omni_adapters[{name!r}] = {path!r} holds no adapter_config.json")
        config = PeftConfig.from_pretrained(path)
        config.inference_mode = True
        if i == 0:
            model = PeftModel(model, config, adapter_name=name)
        else:
            model.add_adapter(name, config)
        load_adapter_weights(model, name, path)
    return model.requires_grad_(False).eval()


class OmniBackend(Backend):
    name = "omni"

    def __init__(self, base: str, adapters: dict[str, str] | None = None, adapter: str = "",
                 device: str = "auto", system: str = "", max_new_tokens: int = 32):
        if not base:
            raise ConfigError("backend.name is omni but backend.omni_base_path is empty "
                              "(GUARD_BACKEND__OMNI_BASE_PATH)")
        adapters = adapters or {}
        if adapter and adapter not in adapters:
            raise ConfigError(f"backend.omni_adapter {adapter!r} is not in backend.omni_adapters")
        self.device = resolve_device(device)
        model, self.tokenizer, self.features = load_thinker(base, self.device)
        if adapters:
            model = attach_adapters(model, adapters)
            if adapter:
                model.set_adapter(adapter)
        self.model, self.adapter, self.system, self.max_new_tokens = model, adapter, system, max_new_tokens
        self._lock = threading.Lock()   # one generate at a time per loaded model

    def _run(self, inputs: dict) -> str:
        import contextlib

        import torch

        inputs = {k: v.to(self.device) for k, v in inputs.items()}
        # Adapters loaded but none chosen: the base model answers.
        base_only = not self.adapter and hasattr(self.model, "disable_adapter")
        with self._lock, torch.inference_mode(), (self.model.disable_adapter() if base_only
                                                  else contextlib.nullcontext()):
            out = self.model.generate(**inputs, max_new_tokens=self.max_new_tokens, do_sample=False)
        new = out[0, inputs["input_ids"].shape[1]:]
        return self.tokenizer.decode(new, skip_special_tokens=True).strip()

    def generate(self, audio: np.ndarray, task: Task) -> str:
        return self._run(encode(self.tokenizer, self.features, audio, task.prompt, self.system))
