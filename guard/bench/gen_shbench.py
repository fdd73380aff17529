"""Generate an SH-Bench-format mini suite from the scene generator.

Each scene: a main speaker in front states facts; one or two bystanders, 10 dB lower and partly
overlapping, state other facts (layout `background`: one bystander talks under the main speaker). Every
fact becomes a 5-option question (answer, three distractors from its pool, the IDK option) in the
official record format; `speaker` says who stated it. The facts are the built-in ones or a list of your
own (`facts`, read by guard.bench.facts.load_facts).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import soundfile as sf

from guard import scenes
from guard.bench.facts import DESCRIPTIONS, FACTS, IDK, Fact


def generate(out: Path, *, n_scenes: int = 20, seed: int = 0, variant: int = 0, fmt: str = "flac",
             voices: list[str] | None = None, layout: str = "turns", facts: list[Fact] | None = None) -> Path:
    """Writes OUT/questions.json and OUT/audio/*.{flac,wav}; returns the questions file. Layout `turns`:
    speakers take turns, overlapping at the changes; `background`: one bystander talks under the main
    speaker throughout (10 or 15 dB down), and the main speaker adds a sentence of small talk."""
    rng = np.random.default_rng(seed)
    bank = facts or FACTS
    voices = list(voices or scenes.NATURAL)
    out = Path(out)
    (out / "audio").mkdir(parents=True, exist_ok=True)
    records = []
    for i in range(n_scenes):
        speakers = list(rng.permutation(voices)[: 2 + (i % 3 == 2 and layout == "turns")])
        main, bystanders = speakers[0], speakers[1:]
        said = []
        for k, f in enumerate(bank[j] for j in rng.permutation(len(bank))[:4]):
            who = main if k < 2 else bystanders[(k - 2) % len(bystanders)]
            value = str(rng.choice(f.pool))
            line = f.says[(variant + k) % len(f.says)].format(x=f.said(value))
            said.append((who, f, value, line))
        main_lines = [s[3] for s in said if s[0] == main]
        by_lines = [(b, [s[3] for s in said if s[0] == b]) for b in bystanders]
        rt60 = 0.3 if i % 4 == 3 else 0.0
        if layout == "background":
            small_talk = scenes.SENTENCES[int(rng.integers(len(scenes.SENTENCES)))]
            sc = scenes.background(main, [main_lines[0], small_talk, *main_lines[1:]], *by_lines[0],
                                   seed=seed * 1000 + i, bystander_db=-10.0 if i % 2 else -15.0, rt60=rt60)
        else:
            sc = scenes.conversation(main, main_lines, [(b, ls) for b, ls in by_lines if ls],
                                     seed=seed * 1000 + i, overlap=0.5, rt60=rt60)
        name = f"scene_{seed}_{i:03d}.{fmt}"
        sf.write(out / "audio" / name, sc.samples, 16000, subtype="PCM_16")
        topics = " and ".join(f.key for w, f, _, _ in said if w == main)
        desc = DESCRIPTIONS[main]
        for who, f, value, _ in said:
            distract = [v for v in rng.permutation(f.pool) if v != value][:3]
            options = [value, *distract, IDK]
            options = [options[j] for j in rng.permutation(5)]
            records.append({
                "question": f.asks[variant % len(f.asks)], "options": options, "answer": value,
                "speaker": "main" if who == main else "bystander", "audio": f"audio/{name}",
                "scene": f"generated_{f.key}", "main_speaker_desc": desc,
                "main_speaker_desc_w_content": f"{desc} They talk about their {topics}.",
                "type": "synth", "main_speaker_desc_w_content_filter": f"{desc} They talk about everyday plans.",
                "idk_answer": IDK})
    q = out / "questions.json"
    q.write_text(json.dumps(records, indent=1))
    return q
