"""Word error rate of the offline recognisers side by side: pocketsphinx (the model inside its package)
under decoder settings, then the Whisper models that ship in packages (tiny.en and base), on the scene
generator's natural voices (flite/festival; espeak's formant voices are left out by default: the
recogniser is known to fail on them, see ../shared/NOTES-models.md). The Whisper rows also decode each
clip with another voice's sentence 12 dB under it, the background layout's shape: WER of the louder
voice's words.

    .venv/bin/python benchmarks/asr_bench.py [--voices awb,rms,slt,kal,ked] [--sentences 24]

Each setting decodes the same clips (level -20 dBFS, light noise) in one run, so the figures compare.
"""
from __future__ import annotations

import argparse
import os
import re
import time

import numpy as np

from guard import scenes
from guard.hearing.asr import _pcm, trim_silence
from guard.hearing.whisper import BUNDLED, BUNDLED_BASE, Whisper, spoken

WHISPERS = {"Whisper tiny.en": BUNDLED, "Whisper base": BUNDLED_BASE}
UNDER_DB = 12   # the other voice, this far under the clip's own

SETTINGS = {
    "default": {},
    "cmn batch": {"cmn": "batch"},
    "lw 5.5": {"lw": 5.5},
    "lw 8": {"lw": 8.0},
    "topn 8": {"topn": 8},
    "wide beams": {"beam": 1e-60, "wbeam": 1e-40, "pbeam": 1e-60},
}


def words(s: str) -> list[str]:
    return re.sub(r"[^a-z' ]", " ", s.lower()).split()


def wer(ref: list[str], hyp: list[str]) -> tuple[int, int]:
    d = np.arange(len(hyp) + 1)
    for i, r in enumerate(ref, 1):
        prev, d[0] = d.copy(), i
        for j, h in enumerate(hyp, 1):
            d[j] = min(prev[j] + 1, d[j - 1] + 1, prev[j - 1] + (r != h))
    return int(d[-1]), len(ref)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--voices", default="awb,rms,slt,kal,ked")
    ap.add_argument("--sentences", type=int, default=24)
    args = ap.parse_args()
    from pocketsphinx import Decoder

    rng = np.random.default_rng(0)
    clips = []
    for v in args.voices.split(","):
        for s in scenes.SENTENCES[:args.sentences]:
            x = scenes.level(scenes.tts(v, s), -20)
            x = x + rng.normal(0, 10 ** (-55 / 20), len(x)).astype(np.float32)
            x = trim_silence(x)
            clips.append((v, s, _pcm(x), x))
    print(f"{len(clips)} clips, {len(args.voices.split(','))} voices")
    print("| setting | WER % | errors / words | seconds |")
    print("|---|---|---|---|")
    for name, kw in SETTINGS.items():
        d = Decoder(samprate=16000, logfn=os.devnull, **kw)
        errs = n = 0
        t = time.perf_counter()
        for _, ref, pcm, _ in clips:
            d.start_utt()
            d.process_raw(pcm, full_utt=True)
            d.end_utt()
            hyp = d.hyp()
            e, k = wer(words(ref), words(hyp.hypstr if hyp else ""))
            errs, n = errs + e, n + k
        print(f"| {name} | {100 * errs / n:.1f} | {errs} / {n} | {time.perf_counter() - t:.1f} |")
    voices = args.voices.split(",")
    under = []   # each clip with the next voice's next sentence under it
    for i, (v, s, _, x) in enumerate(clips):
        other = scenes.level(scenes.tts(voices[(voices.index(v) + 1) % len(voices)],
                                        scenes.SENTENCES[(i + 1) % len(scenes.SENTENCES)]), -20 - UNDER_DB)
        y, overlap = x.copy(), min(len(x), len(other))
        y[:overlap] += other[:overlap]
        under.append((s, y))
    for name, setting in WHISPERS.items():
        whisper = Whisper(setting)
        for label, pairs in (("", [(s, x) for _, s, _, x in clips]), (f", a voice {UNDER_DB} dB under", under)):
            errs = n = 0
            t = time.perf_counter()
            for ref, x in pairs:
                e, k = wer(words(spoken(ref)), [w for w, _, _ in whisper(x)])
                errs, n = errs + e, n + k
            print(f"| {name}{label} | {100 * errs / n:.1f} | {errs} / {n} | {time.perf_counter() - t:.1f} |")


if __name__ == "__main__":
    main()
