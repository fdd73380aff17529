"""How far the recogniser alone moves the SELECTIVE cells. The suite's audio as stored, then copies with
+-1 LSB of 16-bit dither (inaudible: the rounding any re-encoding makes), each heard, gated and answered
as the service does (cascade backend, default settings). A gate or backend change whose effect on a
suite is inside this spread is not measured by that suite.

    .venv/bin/python benchmarks/selective_noise_bench.py --questions benchmarks/suites/shbench-mini/questions.json --copies 3

Prints Main-Sel and By-Sel per copy and how many questions' answers differ from the stored audio's.
Offline (no server).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from guard.audio import decode
from guard.backends.base import Task
from guard.backends.cascade import CascadeBackend
from guard.bench.shbench import official_letter, score_records
from guard.config import load_settings
from guard.hearing import Hearing
from guard.hearing.whisper import shared
from guard.policy import selective, tails


def answers(records: list[dict], root: Path, hearing: Hearing, cascade: CascadeBackend, settings,
            dither_seed: int | None) -> list[str]:
    """The cascade's SELECTIVE answer to each record, on audio dithered with `dither_seed` (None: as stored)."""
    gated: dict[str, np.ndarray] = {}
    out = []
    for rec in records:
        if rec["audio"] not in gated:
            x = decode(encoded=(root / rec["audio"]).read_bytes()).samples
            if dither_seed is not None:
                lsb = np.random.default_rng(dither_seed).integers(-1, 2, len(x)) / 32768.0
                x = (x + lsb).astype(np.float32)
            d = hearing.hear(x, [])
            main = selective.choose_main(d, settings.policy).track
            recogniser = shared(settings.policy.tail_whisper, "policy.tail_whisper")
            gated[rec["audio"]] = selective.gate(x, d, main, settings.policy,
                                                 tails.source(recogniser, x)).samples
        g = gated[rec["audio"]]
        prompt = selective.build_prompt(rec["question"], rec["options"], selective=True,
                                        description=rec.get("main_speaker_desc", ""))
        out.append(cascade.generate(g, Task(prompt, rec["question"], rec["options"], True, [g])))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", required=True)
    ap.add_argument("--audio-root")
    ap.add_argument("--copies", type=int, default=3, help="dithered copies besides the stored audio")
    ap.add_argument("--out", default="out/selective_noise.json")
    args = ap.parse_args()
    root = Path(args.audio_root or Path(args.questions).parent)
    records = json.loads(Path(args.questions).read_text())
    settings = load_settings(env={})
    hearing = Hearing.from_settings(settings.hearing)
    cascade = CascadeBackend()
    runs = {}
    for seed in [None, *range(1, args.copies + 1)]:
        preds = answers(records, root, hearing, cascade, settings, seed)
        score = score_records([{**r, "pred": p} for r, p in zip(records, preds)], selective=True)
        runs["stored" if seed is None else f"dither {seed}"] = (score.main, score.bystander, preds)
    base = runs["stored"][2]
    print(f"SELECTIVE cells on {args.questions} ({len(records)} questions), cascade backend")
    print("| audio | Main-Sel | By-Sel | answers changed |\n|---|---|---|---|")
    for name, (m, b, preds) in runs.items():
        changed = sum(official_letter(p) != official_letter(q) for p, q in zip(preds, base))
        print(f"| {name} | {m:.1f} | {b:.1f} | {changed} |")
    mains = [m for m, _, _ in runs.values()]
    print(f"Main-Sel spread: {min(mains):.1f} - {max(mains):.1f}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({k: {"main": m, "bystander": b} for k, (m, b, _) in runs.items()},
                                         indent=2))


if __name__ == "__main__":
    main()
