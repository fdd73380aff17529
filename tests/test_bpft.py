"""BPFT on a tiny random Qwen2.5-Omni thinker: the loss falls, only LoRA weights change, the adapter reloads
and changes the output, the card is written, training resumes, and the evaluation hook replays the
held-apart split through a live server with the `omni` backend."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from guard.backends.omni import OmniBackend, encode, relayout
from guard.train import data
from guard.train.bpft import Recipe, check_only_llm_lora_trains, train
from guard.train.layouts import build_base, thinker_config
from guard.train.run import bpft

SUITE = Path(__file__).resolve().parents[1] / "benchmarks" / "suites" / "shbench-mini"


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    return build_base(tmp_path_factory.mktemp("tiny-thinker"), "tiny", seed=0)


@pytest.fixture(scope="module")
def train_file(tmp_path_factory) -> Path:
    recs = json.loads((SUITE / "questions.json").read_text())
    d = tmp_path_factory.mktemp("bpft-data")
    q = d / "q.json"
    q.write_text(json.dumps([recs[0], next(r for r in recs if r["speaker"] == "bystander")]))
    data.build([q], d / "all.jsonl")
    # One example, seen at every step: the loss on it must fall (several examples' losses differ by more
    # than a few steps of a tiny random model can move them).
    (d / "train.jsonl").write_text((d / "all.jsonl").read_text().splitlines()[0] + "\n")
    return d / "train.jsonl"


@pytest.fixture(scope="module")
def trained(base, train_file, tmp_path_factory):
    out = tmp_path_factory.mktemp("adapter")
    # Dropout off and a constant rate, so the loss on the one example moves only by training.
    recipe = Recipe.load(max_steps=12, grad_accum=1, learning_rate=2e-3, scheduler="constant", warmup_ratio=0.0,
                         dropout=0.0)
    model, facts = train(base, train_file, SUITE, out, recipe, device="cpu")
    return out, model, facts


def _logits(backend: OmniBackend, audio: np.ndarray, prompt: str) -> torch.Tensor:
    x = encode(backend.tokenizer, backend.features, audio, prompt)
    with torch.inference_mode():
        return backend.model(**x).logits[0, -1]


def test_loss_falls(trained):
    losses = trained[2]["losses"]
    assert len(losses) == 12
    assert np.mean(losses[-3:]) < losses[0] - 0.2, losses


def test_only_lora_weights_change(base, trained):
    _, model, facts = trained
    from transformers import Qwen2_5OmniThinkerForConditionalGeneration

    before = dict(Qwen2_5OmniThinkerForConditionalGeneration.from_pretrained(base).named_parameters())
    after = {n.replace("base_model.model.", "").replace(".base_layer", ""): p.detach()
             for n, p in model.named_parameters() if "lora_" not in n}
    assert set(after) == set(before)
    changed = [n for n in before if not torch.equal(before[n].detach(), after[n])]
    assert changed == []
    assert any("audio_tower." in n for n in before)   # the audio tower was compared too
    lora_b = [p for n, p in model.named_parameters() if "lora_B" in n]
    assert lora_b and all(p.abs().sum() > 0 for p in lora_b)          # ...and LoRA did train
    assert facts["trainable_params"] == sum(p.numel() for n, p in model.named_parameters() if "lora_" in n)


def test_adapter_reloads_by_name_and_changes_the_output(base, trained):
    out = trained[0]
    audio = np.random.default_rng(0).normal(0, 0.1, 16000 * 3).astype(np.float32)
    plain = OmniBackend(str(base), device="cpu")
    adapted = OmniBackend(str(base), {"bpft": str(out)}, "bpft", device="cpu")
    assert adapted.model.active_adapter == "bpft"
    prompt = "Which option? A. yes B. no"
    assert not torch.allclose(_logits(plain, audio, prompt), _logits(adapted, audio, prompt), atol=1e-4)
    from guard.backends import Task

    task = Task(prompt=prompt, question="Which option?")
    text = adapted.generate(audio, task)
    assert isinstance(text, str) and text
    # Loaded but not chosen: requests are answered by the base model.
    idle = OmniBackend(str(base), {"bpft": str(out)}, "", device="cpu")
    assert idle.generate(audio, task) == plain.generate(audio, task)


def test_adapter_outside_allow_list_is_refused(base):
    from guard.config import load_settings

    with pytest.raises(ValueError, match="not in backend.omni_adapters"):
        load_settings(env={}, backend={"name": "omni", "omni_base_path": str(base), "omni_adapter": "other"})
    from guard.errors import ConfigError

    with pytest.raises(ConfigError, match="omni_base_path"):
        OmniBackend("", device="cpu")
    with pytest.raises(ConfigError, match="no adapter_config.json"):
        OmniBackend(str(base), {"bpft": str(base)}, "bpft", device="cpu")


def _adapter_with_keys(src: Path, dst: Path, rename) -> Path:
    import shutil

    from safetensors.torch import load_file, save_file

    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("checkpoints"))
    state = load_file(str(src / "adapter_model.safetensors"))
    save_file({rename(k): v for k, v in state.items()}, str(dst / "adapter_model.safetensors"))
    return dst


def test_adapter_saved_under_the_other_transformers_layout_loads(base, trained, tmp_path):
    """transformers 5.17 names the thinker's LLM layers `model.layers.N`, 5.2x `model.language_model.layers.N`:
    an adapter trained under either serves under either, with the same weights, not silently none. (Here,
    on 5.2x, peft also moves 5.17 keys; on 5.17 it loaded 5.2x adapters as nothing, with a warning.)"""
    from safetensors.torch import load_file

    out = trained[0]
    newer = any(".language_model.layers." in k for k in load_file(str(out / "adapter_model.safetensors")))
    other = _adapter_with_keys(out, tmp_path / "other", lambda k: relayout([k], not newer)[k])
    moved_keys = load_file(str(other / "adapter_model.safetensors"))
    assert any(".language_model.layers." in k for k in moved_keys) != newer   # really the other layout
    direct = OmniBackend(str(base), {"bpft": str(out)}, "bpft", device="cpu")
    moved = OmniBackend(str(base), {"bpft": str(other)}, "bpft", device="cpu")
    a = {n: p for n, p in direct.model.named_parameters() if "lora_" in n}
    b = dict(moved.model.named_parameters())
    assert len(a) == 16 and all(torch.equal(p, b[n]) for n, p in a.items())
    assert all(p.abs().sum() > 0 for n, p in b.items() if "lora_B" in n)


def test_adapter_that_fits_no_module_is_refused(base, trained, tmp_path):
    from guard.errors import ConfigError

    stray = _adapter_with_keys(trained[0], tmp_path / "stray", lambda k: k.replace("self_attn", "cross_attn"))
    with pytest.raises(ConfigError, match="does not fit this thinker"):
        OmniBackend(str(base), {"bpft": str(stray)}, "bpft", device="cpu")


def test_lora_targets_match_both_layouts_and_never_the_audio_tower():
    import re

    for n in ("model.layers.3.self_attn.q_proj", "model.language_model.layers.3.self_attn.o_proj"):
        assert re.fullmatch(Recipe().target_regex, n)
    for n in ("audio_tower.layers.3.self_attn.q_proj", "model.audio_tower.layers.3.self_attn.q_proj",
              "model.layers.3.mlp.up_proj"):
        assert not re.fullmatch(Recipe().target_regex, n)
    assert re.fullmatch(Recipe(mlp=True).target_regex, "model.layers.3.mlp.up_proj")
    # Saved adapter keys move between the layouts both ways; nothing else is renamed.
    newer, older = ("base_model.model.model.language_model.layers.0.self_attn.q_proj.lora_A.weight",
                    "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight")
    audio = "base_model.model.model.audio_tower.layers.0.self_attn.q_proj.lora_A.weight"
    assert relayout([newer, audio], language_model=False) == {newer: older, audio: audio}
    assert relayout([older, audio], language_model=True) == {older: newer, audio: audio}


def test_lora_that_reaches_the_audio_tower_is_rejected(base):
    from peft import LoraConfig, get_peft_model
    from transformers import Qwen2_5OmniThinkerForConditionalGeneration

    model = Qwen2_5OmniThinkerForConditionalGeneration.from_pretrained(base)
    wide = get_peft_model(model, LoraConfig(r=4, target_modules=["q_proj", "v_proj"]))  # also hits audio
    with pytest.raises(RuntimeError, match="outside the LLM"):
        check_only_llm_lora_trains(wide)


def test_seven_b_layout_keeps_real_widths_and_targets():
    from accelerate import init_empty_weights
    from transformers import Qwen2_5OmniThinkerForConditionalGeneration

    cfg = thinker_config("qwen2.5-omni-7b-2l")
    assert (cfg.text_config.hidden_size, cfg.text_config.vocab_size, cfg.audio_config.d_model) == (3584, 152064,
                                                                                                 1280)
    assert cfg.text_config.num_hidden_layers == 2 and cfg.audio_config.encoder_layers == 2
    with init_empty_weights():
        model = Qwen2_5OmniThinkerForConditionalGeneration(cfg)
    import re

    hits = [n for n, _ in model.named_modules() if re.fullmatch(Recipe().target_regex, n)]
    assert len(hits) == 2 * 4
    assert any("audio_tower." in n and n.endswith("q_proj") for n, _ in model.named_modules())


def test_resume_continues_from_the_checkpoint(base, train_file, tmp_path):
    first = Recipe.load(max_steps=2, grad_accum=1, save_steps=2, learning_rate=2e-3, dropout=0.0,
                        warmup_ratio=0.0)
    _, run1 = train(base, train_file, SUITE, tmp_path, first, device="cpu")
    assert (tmp_path / "checkpoints" / "checkpoint-2").is_dir()
    # Resumed with a negligible rate: had it restarted, step 2 would not have moved from step 1's loss.
    again = Recipe.load(max_steps=3, grad_accum=1, save_steps=2, learning_rate=1e-9, dropout=0.0,
                        warmup_ratio=0.0)
    _, run2 = train(base, train_file, SUITE, tmp_path, again, device="cpu", resume=True)
    assert run2["steps"] == 3 and run2["losses"][:2] == run1["losses"]
    assert run1["losses"][1] < run1["losses"][0] - 0.02


def test_recipe_defaults_are_the_published_ones():
    r = Recipe.load()
    assert (r.rank, r.alpha, r.dropout, r.learning_rate, r.scheduler, r.epochs, r.mlp) == (
        32, 64, 0.05, 2e-4, "cosine", 1, False)


def test_train_command_writes_card_and_evaluates_through_the_server(base, tmp_path):
    recs = json.loads((SUITE / "questions.json").read_text())
    q = tmp_path / "q.json"
    q.write_text(json.dumps(recs[:8]))
    ev = tmp_path / "eval.json"
    ev.write_text(json.dumps(recs[-2:]))
    facts = bpft(base, [q], SUITE, tmp_path / "adapter", Recipe.load(max_steps=2, grad_accum=1),
                 eval_questions=ev, device="cpu")
    card = (tmp_path / "adapter" / "README.md").read_text()
    assert "| 32 | 64 | 0.05 |" in card and facts["data"]["sha256"] in card
    assert json.loads((tmp_path / "adapter" / "card.json").read_text())["evaluation"]["questions"] == 2
    ev_facts = facts["evaluation"]
    assert ev_facts["errors"] == {"general": 0, "selective": 0}
    assert set(ev_facts["cells"]) == {"main_gen", "main_sel", "by_gen", "by_sel", "se"}
    assert "| Main-General |" in card
    rows = json.loads((tmp_path / "adapter" / "eval" / "general.json").read_text())
    assert len(rows) == 2 and all("error" not in r for r in rows)


def test_general_task_mix_trains_beside_audio_examples(base, tmp_path):
    recs = json.loads((SUITE / "questions.json").read_text())
    q = tmp_path / "q.json"
    q.write_text(json.dumps(recs[:1]))
    mix = tmp_path / "mix.jsonl"
    mix.write_text("".join(json.dumps({"prompt": f"What is {i} plus {i}?", "target": str(2 * i)}) + "\n"
                           for i in range(3)))
    info = data.build([q], tmp_path / "train.jsonl", general_mix=mix, mix_ratio=1.0)
    assert (info["bpft_examples"], info["general_mix"]) == (3, 3)
    recipe = Recipe.load(max_steps=3, grad_accum=1, batch_size=2)   # batches mix text-only and audio rows
    _, facts = train(base, tmp_path / "train.jsonl", SUITE, tmp_path / "adapter", recipe, device="cpu")
    assert facts["steps"] == 3 and facts["examples"] == 6 and all(np.isfinite(facts["losses"]))
    mix.write_text(json.dumps({"text": "no prompt"}) + "\n")
    with pytest.raises(ValueError, match="prompt"):
        data.build([q], tmp_path / "bad.jsonl", general_mix=mix, mix_ratio=1.0)
