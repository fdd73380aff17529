"""Keyword-search thresholds for the cascade's option spotting, side by side, in SELECTIVE mode (the
audio is gated to the main speaker, as the service gates it).

    .venv/bin/python benchmarks/kws_threshold_bench.py --questions benchmarks/suites/shbench-mini/questions.json

Per scheme: main-speaker questions whose answer is detected (hits), detections of the other options on
main questions, and detections of any option on bystander questions (the main speaker never said those
words: every one is a false alarm, and the one that costs By-Sel).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import soundfile as sf

from guard.config import Settings
from guard.hearing import Hearing
from guard.hearing.asr import Transcriber
from guard.hearing.whisper import shared
from guard.policy import selective, tails
from guard.policy.answer import idk_index

SCHEMES = {"fixed 1e-10": {"threshold": 1e-10}, "fixed 1e-5": {"threshold": 1e-5},
           "0.3 per phone": {"per_phone": 0.3}, "0.1 per phone": {"per_phone": 0.1},
           "0.03 per phone": {"per_phone": 0.03}}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", required=True)
    args = ap.parse_args()
    path = Path(args.questions)
    settings = Settings()
    hearing, asr = Hearing.from_settings(settings.hearing), Transcriber()
    recogniser = shared(settings.policy.tail_whisper, "policy.tail_whisper")   # the gate's word tails
    gated: dict[str, object] = {}
    rows = {k: {"main hits": 0, "main other-option detections": 0, "bystander detections": 0} for k in SCHEMES}
    records = json.loads(path.read_text())
    for rec in records:
        if rec["audio"] not in gated:
            x, _ = sf.read(path.parent / rec["audio"], dtype="float32")
            d = hearing.hear(x, [])
            gated[rec["audio"]] = selective.gate(x, d, selective.choose_main(d, settings.policy).track,
                                                 settings.policy, tails.source(recogniser, x)).samples
        idk = idk_index(rec["options"])
        real = [o for i, o in enumerate(rec["options"]) if i != idk]
        for name, kw in SCHEMES.items():
            found = asr.spot(gated[rec["audio"]], real, **kw)
            if rec["speaker"] == "main":
                answer = rec["answer"].lower()
                rows[name]["main hits"] += answer in found
                rows[name]["main other-option detections"] += len(found - {answer})
            else:
                rows[name]["bystander detections"] += len(found)
    n_main = sum(r["speaker"] == "main" for r in records)
    print(f"{path}: {n_main} main and {len(records) - n_main} bystander questions, SELECTIVE gating")
    print("| scheme | main hits | main other-option detections | bystander detections |")
    print("|---|---|---|---|")
    for name, r in rows.items():
        print(f"| {name} | {r['main hits']} / {n_main} | {r['main other-option detections']} | "
              f"{r['bystander detections']} |")


if __name__ == "__main__":
    main()
