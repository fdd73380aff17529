"""`guard train bpft`: split -> data -> LoRA training -> card -> evaluation through the live service.

The held-apart split is by recording (every question about one audio file lands on the same side), so the
evaluation never hears a scene the adapter trained on. Evaluation starts `guard serve` with the `omni`
backend loading the new adapter by name, replays the split with `guard bench shbench` (both modes), and
writes the four cells and SE into the card.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import tempfile
from pathlib import Path

from guard import __version__
from guard.train import data
from guard.train.bpft import Recipe, train

CARD_TEMPLATE = Path(__file__).resolve().parents[2] / "models" / "bpft-card-template.md"
ADAPTER_NAME = "bpft"


def split(question_files: list[Path], eval_fraction: float, out: Path) -> tuple[Path, Path | None, dict]:
    """Write train.json (and eval.json when eval_fraction > 0), splitting by audio file."""
    records = []
    for f in question_files:
        records += json.loads(Path(f).read_text())

    def held(rec: dict) -> bool:
        h = int(hashlib.sha256(rec["audio"].encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
        return h < eval_fraction

    train_recs = [r for r in records if not held(r)]
    eval_recs = [r for r in records if held(r)]
    out.mkdir(parents=True, exist_ok=True)
    (out / "train.json").write_text(json.dumps(train_recs, indent=1))
    eval_file = None
    if eval_recs:
        eval_file = out / "eval.json"
        eval_file.write_text(json.dumps(eval_recs, indent=1))
    return out / "train.json", eval_file, {"train_questions": len(train_recs), "eval_questions": len(eval_recs)}


def evaluate(base: Path, adapter: Path, questions: Path, audio_root: Path, out: Path, *,
             device: str = "auto", concurrency: int = 1, limit: int = 0) -> dict:
    """Replay QUESTIONS through a live `guard serve` whose omni backend uses ADAPTER; return the summary."""
    from guard.bench.replay import replay_shbench
    from guard.local_server import ServerProcess

    env = {"GUARD_BACKEND__NAME": "omni", "GUARD_BACKEND__OMNI_BASE_PATH": str(Path(base).resolve()),
           "GUARD_BACKEND__OMNI_ADAPTERS": json.dumps({ADAPTER_NAME: str(Path(adapter).resolve())}),
           "GUARD_BACKEND__OMNI_ADAPTER": ADAPTER_NAME, "GUARD_BACKEND__OMNI_DEVICE": device,
           "GUARD_SERVER__METRICS_PORT": "0"}
    with tempfile.TemporaryDirectory(prefix="guard-bpft-eval-") as tmp:
        server = ServerProcess(Path(tmp), env)
        try:
            return replay_shbench(questions, audio_root, server.target, out, concurrency=concurrency, limit=limit)
        finally:
            server.stop()


def _fmt(x) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):   # a cell with no questions is NaN
        return "n/a"
    return f"{x:.1f}" if isinstance(x, float) else str(x)


def write_card(out: Path, facts: dict) -> None:
    (out / "card.json").write_text(json.dumps(facts, indent=2, sort_keys=True))
    cells = (facts.get("evaluation") or {}).get("cells")
    if cells:
        evaluation = ("| Main-General | Main-Selective | Bystander-General | Bystander-Selective | SE |\n"
                      "|---|---|---|---|---|\n| " + " | ".join(_fmt(cells.get(k)) for k in (
                          "main_gen", "main_sel", "by_gen", "by_sel", "se"))
                      + f" |\n\nReplayed {facts['evaluation']['questions']} held-apart questions per mode "
                      f"through `guard bench shbench` (omni backend, adapter `{ADAPTER_NAME}`).")
    else:
        evaluation = facts.get("evaluation_note", "Not evaluated.")
    r = facts["recipe"]
    losses = facts["train"]["losses"]
    text = CARD_TEMPLATE.read_text().format(
        name=out.name, base=facts["base"], date=facts["date"], version=facts["guard_version"],
        device=facts["train"]["device"], steps=facts["train"]["steps"],
        seconds=_fmt(facts["train"]["train_seconds"]), trainable=facts["train"]["trainable_params"],
        total=facts["train"]["total_params"], files=", ".join(facts["data"]["question_files"]),
        examples=facts["data"]["examples"], sha=facts["data"]["sha256"],
        train_q=facts["data"]["train_questions"], eval_q=facts["data"]["eval_questions"],
        rank=r["rank"], alpha=r["alpha"], dropout=r["dropout"],
        targets=facts["train"]["target_regex"].replace("|", "\\|"),
        lr=r["learning_rate"], scheduler=r["scheduler"], epochs=r["epochs"], max_steps=r["max_steps"],
        batch=r["batch_size"], accum=r["grad_accum"], system=r["system"] or "(none)",
        loss_first=_fmt(losses[0] if losses else None), loss_last=_fmt(losses[-1] if losses else None),
        evaluation=evaluation, adapter=ADAPTER_NAME, path=str(out.resolve()))
    (out / "README.md").write_text(text)


def bpft(base: Path, question_files: list[Path], audio_root: Path, out: Path, recipe: Recipe, *,
         eval_fraction: float = 0.1, eval_questions: Path | None = None, evaluate_after: bool = True,
         general_mix: Path | None = None, mix_ratio: float = 0.0, device: str = "auto",
         resume: bool = False, eval_limit: int = 0) -> dict:
    out = Path(out)
    work = out / "data"
    train_file, eval_file, counts = split(question_files, 0.0 if eval_questions else eval_fraction, work)
    if eval_questions:
        eval_file = Path(eval_questions)
        counts["eval_questions"] = len(json.loads(eval_file.read_text()))
    info = data.build([train_file], work / "train.jsonl", general_mix=general_mix, mix_ratio=mix_ratio,
                      seed=recipe.seed)
    _, result = train(base, work / "train.jsonl", audio_root, out, recipe, device=device, resume=resume)
    facts = {"base": str(Path(base).resolve()), "date": dt.date.today().isoformat(), "guard_version": __version__,
             "recipe": result.pop("recipe"), "train": result,
             "data": {"question_files": [str(f) for f in question_files], **counts, **info}}
    write_card(out, facts)
    if evaluate_after and eval_file:
        summary = evaluate(base, out, eval_file, audio_root, out / "eval", device=device, limit=eval_limit)
        facts["evaluation"] = {"questions": summary["n"], "cells": summary.get("cells"),
                               "errors": {m: v["errors"] for m, v in summary["modes"].items()}}
    else:
        facts["evaluation_note"] = "Not evaluated: no held-apart questions." if not eval_file else \
            "Not evaluated: --no-eval was given."
    write_card(out, facts)
    return facts
