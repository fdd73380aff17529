"""What the secret ledger hears: pocketsphinx alone against Whisper-led transcripts (tiny.en, and base:
the shipped default `policy.ledger_whisper` since decision 93, the cascade's too), side by side on one
run, on every utterance of a VoxPrivacy-format suite; and the ledger as shipped, which reads an instruction
in tiny.en's words as well as base's and takes the stricter (`policy.ledger_second_whisper`, decision 109).

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
from guard.policy.secrets import stricter

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
    # tiny.en: the ledger's recogniser until decision 93, its second since decision 109
    recognisers = {"pocketsphinx": Transcriber(cache_size=0),
                   "Whisper tiny.en": Transcriber(cache_size=0, lead=shared(BUNDLED), runner_ups=False),
                   "Whisper base": Transcriber(cache_size=0, lead=shared(BUNDLED_BASE), runner_ups=False)}
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
        heard: dict[str, list[str]] = {}
        for name, asr in recognisers.items():
            t = time.perf_counter()
            heard[name] = [asr(x).best for x, _, _ in clips]
            row(room, name, clips, heard[name], heard[name], time.perf_counter() - t, classify)
        # the ledger as shipped: base's words, an instruction read in tiny.en's too (decision 109)
        row(room, "Whisper base + tiny.en instructions (default)", clips, heard["Whisper base"],
            heard["Whisper tiny.en"], None, classify)


def row(room: str, name: str, clips: list, hyps: list[str], also: list[str], seconds: float | None,
        classify: PrivacyText) -> None:
    """One table row: WER and secret keys of `hyps`; instructions read in `hyps`, or in `also` where that
    reading is stricter (the ledger's rule); instructions are right when they read as the typed text does."""
    errs = n = instr_ok = instr_n = key_ok = key_n = 0
    for (_, line, keys), hyp, other in zip(clips, hyps, also):
        e, k = wer(spoken(line).split(), hyp.split())
        errs, n = errs + e, n + k
        want = classify.instruction(line)
        if want:
            got = stricter(classify.instruction(hyp), classify.instruction(other))
            instr_ok, instr_n = instr_ok + (got == want), instr_n + 1
        if keys:
            key_ok, key_n = key_ok + contains_key(hyp, keys), key_n + 1
    took = "-" if seconds is None else f"{seconds:.1f}"
    print(f"| {room} | {name} | {100 * errs / n:.1f} | {instr_ok} / {instr_n} | {key_ok} / {key_n} | {took} |",
          flush=True)

if __name__ == "__main__":
    main()
