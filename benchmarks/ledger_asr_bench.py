"""What the secret ledger hears: pocketsphinx alone against Whisper-led transcripts (tiny.en, and base:
the shipped default `policy.ledger_whisper` since decision 93, the cascade's too), side by side on one
run, on every utterance of a VoxPrivacy-format suite.

    .venv/bin/python benchmarks/ledger_asr_bench.py --suite benchmarks/suites/voxprivacy-mini \\
        [--rooms clean,room,far]

Per recogniser and room: word error rate; decode seconds (the same clips, one after the other; the ledger
decodes with Whisper alone, pocketsphinx only where Whisper heard nothing); the privacy instructions ("not
even me", "between us") classified as the text says (a missed one leaves a secret disclosable); the secret
statements whose key word was heard (the content an owner asks back). Rooms (guard.scenes.room on the
suite's audio): `clean` as stored; `room` RT60 0.3 s, direct-to-reverberant 8 dB, white noise 20 dB down;
`far` RT60 0.6 s, 4 dB, 15 dB.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from asr_bench import wer

from guard import scenes
from guard.audio import decode
from guard.bench.voxprivacy import contains_key
from guard.hearing.asr import Transcriber
from guard.hearing.whisper import BUNDLED, BUNDLED_BASE, shared, spoken
from guard.policy.privacy_text import PrivacyText

ROOMS = {"clean": None, "room": (0.3, 8.0, 20.0), "far": (0.6, 4.0, 15.0)}


def utterances(suite: Path) -> list[tuple[str, str, list[str]]]:
    """(audio path, text, secret keys when it is a secret statement) for each distinct utterance."""
    samples = json.loads((suite / "suite.json").read_text())   # a list of samples (README: the format)
    out: dict[str, tuple[str, str, list[str]]] = {}
    for s in samples:
        for turn in [*s["turns"], s["probe"]]:
            keys = s["secret_keys"] if turn["text"] == s.get("secret") else []
            out.setdefault(turn["audio"], (turn["audio"], turn["text"], keys))
    return list(out.values())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--suite", required=True)
    ap.add_argument("--rooms", default="clean,room,far")
    args = ap.parse_args()
    suite = Path(args.suite)
    items = utterances(suite)
    # tiny.en: the ledger's recogniser until decision 93
    whisper = Transcriber(cache_size=0, lead=shared(BUNDLED), runner_ups=False)
    recognisers = {"pocketsphinx": Transcriber(cache_size=0), "Whisper tiny.en": whisper,
                   "Whisper base (default)": Transcriber(cache_size=0, lead=shared(BUNDLED_BASE),
                                                               runner_ups=False)}
    classify = PrivacyText()
    print(f"{len(items)} utterances of {suite}")
    print("| room | recogniser | WER % | instructions classified right | secret keys heard | seconds |")
    print("|---|---|---|---|---|---|")
    for room in args.rooms.split(","):
        rng = np.random.default_rng(0)
        clips = []
        for path, line, keys in items:
            x = decode(encoded=(suite / path).read_bytes()).samples
            clips.append((scenes.room(x, rng, *ROOMS[room]) if ROOMS[room] else x, line, keys))
        for name, asr in recognisers.items():
            errs = n = instr_ok = instr_n = key_ok = key_n = 0
            t = time.perf_counter()
            for x, line, keys in clips:
                hyp = asr(x).best
                e, k = wer(spoken(line).split(), hyp.split())
                errs, n = errs + e, n + k
                want = classify.instruction(line)
                if want:
                    instr_ok, instr_n = instr_ok + (classify.instruction(hyp) == want), instr_n + 1
                if keys:
                    key_ok, key_n = key_ok + contains_key(hyp, keys), key_n + 1
            print(f"| {room} | {name} | {100 * errs / n:.1f} | {instr_ok} / {instr_n} | {key_ok} / {key_n} "
                  f"| {time.perf_counter() - t:.1f} |", flush=True)


if __name__ == "__main__":
    main()
