"""What the cascade should listen to in GENERAL mode: the mixture, each diarized voice alone, or both; and
what keyword spotting of the options adds. Prints Main/Bystander General accuracy per source, side by side
in one run, on an SH-Bench-format suite.

    .venv/bin/python benchmarks/cascade_sources_bench.py --questions benchmarks/suites/shbench-mini/questions.json

Offline (no server): hearing + pocketsphinx + MiniLM exactly as the service uses them.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from guard.audio import decode
from guard.backends.cascade import CascadeBackend
from guard.config import load_settings
from guard.hearing import Hearing
from guard.hearing.asr import Transcript
from guard.policy import selective
from guard.policy.answer import idk_index


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", required=True)
    ap.add_argument("--audio-root")
    ap.add_argument("--out", default="out/cascade_sources.json")
    args = ap.parse_args()
    root = Path(args.audio_root or Path(args.questions).parent)
    records = json.loads(Path(args.questions).read_text())
    settings = load_settings(env={})
    hearing = Hearing.from_settings(settings.hearing)
    cascade = CascadeBackend()
    heard: dict[str, tuple[np.ndarray, list[np.ndarray]]] = {}
    results: dict[str, dict[str, list[bool]]] = {}
    for rec in records:
        if rec["audio"] not in heard:
            audio = decode(encoded=(root / rec["audio"]).read_bytes()).samples
            d = hearing.hear(audio, [])
            heard[rec["audio"]] = (audio, [selective.isolate(audio, d, t, settings.policy.hangover_seconds)
                                         for t in d.tracks])
        mix, streams = heard[rec["audio"]]
        idk = idk_index(rec["options"])
        real = [o for i, o in enumerate(rec["options"]) if i != idk]
        for name, sources in (("mixture", [mix]), ("voices", streams), ("voices+mixture", streams + [mix])):
            transcript = Transcript("")
            for s in sources:
                transcript = transcript.joined(cascade.asr(s))
            for spot in (False, True):
                spotted: set[str] = set()
                if spot:
                    for s in sources:
                        spotted |= cascade.asr.spot(s, real, cascade.spot_threshold)
                answer = cascade.choose(transcript, rec["question"], rec["options"], spotted)
                key = f"{name}{' + spotting' if spot else ''}"
                ok = answer.split(". ", 1)[-1] == rec["answer"]
                results.setdefault(key, {"main": [], "bystander": []})[rec["speaker"]].append(ok)
    table = {k: {spk: round(100 * float(np.mean(v)), 1) for spk, v in cells.items()} for k, cells in results.items()}
    print(f"GENERAL-mode accuracy on {args.questions} ({len(records)} questions)")
    print("| heard | Main-Gen | By-Gen |\n|---|---|---|")
    for k, cells in table.items():
        print(f"| {k} | {cells['main']} | {cells['bystander']} |")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(table, indent=2))


if __name__ == "__main__":
    main()
