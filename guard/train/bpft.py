"""BPFT training: LoRA on the language model of a Qwen2.5-Omni thinker, General + Selective examples.

The recipe (`models/bpft-recipe.yaml`): rank 32, alpha 64, dropout 0.05 on q/k/v/o of the LLM's attention
(MLP optional); lr 2e-4, cosine, one epoch. Everything outside the LLM's LoRA matrices is frozen, and that
is asserted after wrapping, not assumed: the audio encoder also has q/k/v projections, so targets are
matched by a regex rooted at the language model. HF Trainer does the loop (checkpoints, resume, bf16 and
gradient checkpointing on GPU). Inputs are built by `guard.backends.omni.encode`, the same code the `omni`
backend serves with; only the assistant reply is in the loss.
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import yaml

from guard.audio import decode
from guard.backends.omni import encode, load_thinker, resolve_device
from guard.errors import ConfigError

RECIPE_FILE = Path(__file__).resolve().parents[2] / "models" / "bpft-recipe.yaml"
# The thinker's LLM layers are `model.language_model.layers.N` from transformers 5.2x and `model.layers.N` in
# 5.17 and before (the audio tower is `model.audio_tower` / `audio_tower`): the targets match both layouts,
# never the audio tower (peft full-matches the module name).
LLM_LAYERS = r"model\.(language_model\.)?layers\.\d+\."
LLM_ATTENTION = LLM_LAYERS + r"self_attn\.(q|k|v|o)_proj"
LLM_ATTENTION_MLP = LLM_LAYERS + r"(self_attn\.(q|k|v|o)_proj|mlp\.(gate|up|down)_proj)"


@dataclass
class Recipe:
    rank: int = 32
    alpha: int = 64
    dropout: float = 0.05
    mlp: bool = False
    learning_rate: float = 2e-4
    scheduler: str = "cosine"
    warmup_ratio: float = 0.03
    epochs: float = 1.0
    max_steps: int = -1            # > 0 overrides epochs
    batch_size: int = 1
    grad_accum: int = 8
    save_steps: int = 200
    seed: int = 0
    system: str = ""               # must match backend.omni_system_prompt at serving time

    @classmethod
    def load(cls, path: Path | None = None, **overrides) -> Recipe:
        data = yaml.safe_load(Path(path or RECIPE_FILE).read_text()) if (path or RECIPE_FILE.is_file()) else {}
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise ConfigError(f"unknown recipe keys {sorted(unknown)}")
        return cls(**{**data, **{k: v for k, v in overrides.items() if v is not None}})

    @property
    def target_regex(self) -> str:
        return LLM_ATTENTION_MLP if self.mlp else LLM_ATTENTION


def lora_model(model, recipe: Recipe):
    """Wrap with LoRA and check that exactly the LLM's LoRA matrices train."""
    from peft import LoraConfig, get_peft_model

    cfg = LoraConfig(r=recipe.rank, lora_alpha=recipe.alpha, lora_dropout=recipe.dropout,
                     target_modules=recipe.target_regex, bias="none")
    model = get_peft_model(model, cfg)
    check_only_llm_lora_trains(model)
    return model


def check_only_llm_lora_trains(model) -> None:
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    if not trainable:
        raise RuntimeError("no trainable parameters: the LoRA targets matched nothing")
    bad = [n for n in trainable if "lora_" not in n or not re.search(r"(^|\.)" + LLM_ATTENTION_MLP, n)]
    if bad:
        raise RuntimeError(f"parameters outside the LLM's LoRA matrices would train: {bad[:5]}")


class BpftDataset:
    """Rows of the data builder's JSONL -> tokenised examples (prompt masked out of the labels)."""

    def __init__(self, rows: list[dict], audio_root: Path, tokenizer, features, system: str = ""):
        self.rows, self.root, self.tok, self.fe, self.system = rows, Path(audio_root), tokenizer, features, system
        self.end = tokenizer.convert_tokens_to_ids("<|im_end|>")
        self._audio: dict[str, np.ndarray] = {}

    def __len__(self) -> int:
        return len(self.rows)

    def _load(self, rel: str) -> np.ndarray:
        if rel not in self._audio:
            self._audio[rel] = decode(encoded=(self.root / rel).read_bytes()).samples
        return self._audio[rel]

    def __getitem__(self, i: int) -> dict:
        import torch

        row = self.rows[i]
        audio = self._load(row["audio"]) if row.get("audio") else None   # general-task rows may be text only
        x = encode(self.tok, self.fe, audio, row["prompt"], self.system)
        prompt = x["input_ids"][0]
        target = torch.tensor(self.tok(row["target"], add_special_tokens=False)["input_ids"] + [self.end])
        out = {"input_ids": torch.cat([prompt, target]), "labels": torch.cat([torch.full_like(prompt, -100), target])}
        if "input_features" in x:
            out.update(input_features=x["input_features"], feature_attention_mask=x["feature_attention_mask"])
        return out


def collate(pad_id: int):
    def fn(batch: list[dict]) -> dict:
        import torch

        n = max(len(b["input_ids"]) for b in batch)
        ids = torch.full((len(batch), n), pad_id, dtype=torch.long)
        labels = torch.full((len(batch), n), -100, dtype=torch.long)
        mask = torch.zeros((len(batch), n), dtype=torch.long)
        for i, b in enumerate(batch):
            k = len(b["input_ids"])
            ids[i, :k], labels[i, :k], mask[i, :k] = b["input_ids"], b["labels"], 1
        out = {"input_ids": ids, "attention_mask": mask, "labels": labels}
        with_audio = [b for b in batch if "input_features" in b]   # clips in the order their tokens appear
        if with_audio:
            out["input_features"] = torch.cat([b["input_features"] for b in with_audio])
            out["feature_attention_mask"] = torch.cat([b["feature_attention_mask"] for b in with_audio])
        return out
    return fn


def train(base: Path, data_file: Path, audio_root: Path, out: Path, recipe: Recipe, *, device: str = "auto",
          resume: bool = False) -> tuple[object, dict]:
    """Train an adapter into OUT (adapter files + checkpoints/); returns the trained (peft) model and the
    run's facts for the card."""
    from transformers import Trainer, TrainingArguments

    device = resolve_device(device)
    cuda = device.startswith("cuda")
    model, tok, fe = load_thinker(base, device)   # bf16 on a GPU, float32 on CPU
    model.train()
    model = lora_model(model, recipe)
    if cuda:
        model.enable_input_require_grads()
    rows = [json.loads(line) for line in Path(data_file).read_text().splitlines() if line.strip()]
    bad = [i for i, r in enumerate(rows) if not (r.get("prompt") and r.get("target"))]
    if bad or not rows:
        raise ConfigError(f"{data_file}: every example needs 'prompt' and 'target' (lines {bad[:5]} lack them)"
                          if rows else f"{data_file} holds no examples")
    dataset = BpftDataset(rows, audio_root, tok, fe, recipe.system)
    args = TrainingArguments(
        output_dir=str(out / "checkpoints"), per_device_train_batch_size=recipe.batch_size,
        gradient_accumulation_steps=recipe.grad_accum, learning_rate=recipe.learning_rate,
        lr_scheduler_type=recipe.scheduler, warmup_steps=recipe.warmup_ratio, num_train_epochs=recipe.epochs,
        max_steps=recipe.max_steps, logging_steps=1, save_steps=recipe.save_steps, save_total_limit=2,
        seed=recipe.seed, bf16=cuda, gradient_checkpointing=cuda, use_cpu=not cuda, report_to=[],
        remove_unused_columns=False, dataloader_num_workers=0, disable_tqdm=False)
    trainer = Trainer(model=model, args=args, train_dataset=dataset,
                      data_collator=collate(tok.pad_token_id))
    has_checkpoint = any((out / "checkpoints").glob("checkpoint-*"))
    result = trainer.train(resume_from_checkpoint=True if resume and has_checkpoint else None)
    model.save_pretrained(out)
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    total = sum(p.numel() for p in model.parameters())
    return model, {"steps": trainer.state.global_step, "losses": losses, "train_seconds": result.metrics.get(
        "train_runtime"), "examples": len(rows), "trainable_params": trainable, "total_params": total,
        "device": device, "recipe": asdict(recipe), "target_regex": recipe.target_regex}
