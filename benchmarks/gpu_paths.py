"""The GPU code paths, end to end on a CUDA device (or on CPU, to check this script itself):
BPFT training of a tiny random Qwen2.5-Omni thinker (bf16 on a GPU), the `omni` backend loading its
adapter by name and generating, the same at the real 7B thinker's widths (two layers of each stack, random
weights: time per generated token, not answers), and the ECAPA and pyannote production loaders on tiny
local models.

    python benchmarks/gpu_paths.py --device cuda --out DIR

Prints one line per path with its time, and a JSON summary; exits non-zero if any path failed.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np

os.environ.setdefault("PYANNOTE_METRICS_ENABLED", "0")
SUITE = Path(__file__).resolve().parent / "suites" / "shbench-mini"


def bpft_and_omni(device: str, tmp: Path) -> dict:
    from guard.audio import decode
    from guard.backends.base import Task
    from guard.backends.omni import OmniBackend
    from guard.train import data
    from guard.train.bpft import Recipe, train
    from guard.train.layouts import build_base

    base = build_base(tmp / "base", "tiny", seed=0)
    recs = json.loads((SUITE / "questions.json").read_text())
    q = tmp / "q.json"
    q.write_text(json.dumps(recs[:4]))
    data.build([q], tmp / "train.jsonl")
    recipe = Recipe.load(max_steps=6, grad_accum=1, learning_rate=2e-3, scheduler="constant", warmup_ratio=0.0)
    t = time.perf_counter()
    model, facts = train(base, tmp / "train.jsonl", SUITE, tmp / "adapter", recipe, device=device)
    out = {"train_steps": len(facts["losses"]), "train_seconds": time.perf_counter() - t,
           "losses": [round(x, 4) for x in facts["losses"]],
           "train_dtype": str(next(model.parameters()).dtype)}
    del model
    backend = OmniBackend(str(base), {"bpft": str(tmp / "adapter")}, "bpft", device=device)
    audio = decode(encoded=(SUITE / recs[0]["audio"]).read_bytes()).samples
    task = Task(prompt=recs[0]["question"], question=recs[0]["question"])
    backend.generate(audio, task)  # warm
    t = time.perf_counter()
    text = backend.generate(audio, task)
    out.update({"omni_device": str(next(backend.model.parameters()).device),
                "omni_dtype": str(next(backend.model.parameters()).dtype),
                "omni_generate_seconds": time.perf_counter() - t, "omni_text_chars": len(text)})
    return out


def omni_7b_widths(device: str, tmp: Path) -> dict:
    import torch

    from guard.audio import decode
    from guard.backends.base import Task
    from guard.backends.omni import OmniBackend
    from guard.train.layouts import build_base

    t = time.perf_counter()
    base = build_base(tmp / "base7b", "qwen2.5-omni-7b-2l", seed=0, dtype="bfloat16")
    built = time.perf_counter() - t
    backend = OmniBackend(str(base), device=device)
    backend.model.generation_config.eos_token_id = None   # random weights: always the full token count
    recs = json.loads((SUITE / "questions.json").read_text())
    audio = decode(encoded=(SUITE / recs[0]["audio"]).read_bytes()).samples
    task = Task(prompt=recs[0]["question"], question=recs[0]["question"])

    def timed(tokens: int) -> float:
        backend.max_new_tokens = tokens
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        t = time.perf_counter()
        backend.generate(audio, task)
        return time.perf_counter() - t

    timed(16)  # warm
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    first, full = timed(1), timed(16)
    out = {"build_seconds": built, "audio_seconds": len(audio) / 16000,
           "params": sum(p.numel() for p in backend.model.parameters()),
           "dtype": str(next(backend.model.parameters()).dtype),
           "first_token_seconds": first, "ms_per_next_token": (full - first) / 15 * 1000}
    if device.startswith("cuda"):
        out["peak_gib"] = torch.cuda.max_memory_allocated() / 2**30
    return out


def ecapa(device: str, tmp: Path) -> dict:
    from guard.hearing.embed import EcapaEmbedder
    from guard.layouts import ecapa_dir

    emb = EcapaEmbedder(str(ecapa_dir(tmp / "ecapa")), device)
    x = np.random.default_rng(0).normal(0, 0.1, 160000).astype(np.float32)
    starts = np.arange(0, 160000 - 24000, 6400)
    emb.embed_windows(x, starts, 24000)
    t = time.perf_counter()
    e = emb.embed_windows(x, starts, 24000)
    return {"ecapa_device": emb.device, "ecapa_windows": len(starts), "ecapa_seconds": time.perf_counter() - t, "dim": int(e.shape[1])}


def pyannote(device: str, tmp: Path) -> dict:
    from guard.hearing.diarize_pyannote import PyannoteDiarizer
    from guard.hearing.embed import make_embedder
    from guard.layouts import pyannote_pipeline

    pa = PyannoteDiarizer(str(pyannote_pipeline(tmp / "pyannote")), make_embedder("resemblyzer", device=device),
                          device)
    x = np.random.default_rng(0).normal(0, 0.1, 160000).astype(np.float32)
    pa(x)
    t = time.perf_counter()
    d = pa(x)
    return {"pyannote_10s_seconds": time.perf_counter() - t, "tracks": len(d.tracks)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--out", default="")
    ap.add_argument("--only", nargs="*", default=[], help="run these paths alone")
    args = ap.parse_args()
    report, failed = {}, []
    paths = (("bpft_and_omni", bpft_and_omni), ("ecapa", ecapa), ("pyannote", pyannote),
             ("omni_7b_widths", omni_7b_widths))
    for name, fn in paths:
        if args.only and name not in args.only:
            continue
        t = time.perf_counter()
        try:
            report[name] = fn(args.device, Path(tempfile.mkdtemp()))
            print(f"ok   {name} ({time.perf_counter() - t:.1f} s)", flush=True)
        except Exception:  # noqa: BLE001 - every path is reported, then the exit code says it failed
            failed.append(name)
            report[name] = {"error": traceback.format_exc(limit=8)}
            print(f"FAIL {name}\n{report[name]['error']}", flush=True)
    print(json.dumps(report, indent=2))
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "gpu_paths.json").write_text(json.dumps(report, indent=2))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
