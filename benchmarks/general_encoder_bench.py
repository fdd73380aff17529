"""GENERAL mode's option support through each sentence encoder, side by side (decision 128).

Text only: for every topic of the facts files, every statement wording, question wording and pool value, the
statement is said among three other topics' sentences (one phrase each, in a shuffled order) and GENERAL
mode's `CascadeBackend.choose` picks among the value, three other pool values and "I don't know", as the
suite generator lays them out. Prints each encoder's share right, then what each costs: its load (seconds,
resident memory before and after, peak), and the seconds to embed the same texts, as a ratio to MiniLM's.

    .venv/bin/python benchmarks/general_encoder_bench.py [--facts F1.yaml,F2.yaml | --facts builtin]
        [--encoders minilm,bundled-mpnet] [--seed 7]

Defaults: the summary facts (benchmarks/shbench_facts/facts_6.yaml and facts_7.yaml), MiniLM against the
bundled all-mpnet-base-v2. `builtin` names the generator's own facts.
"""
from __future__ import annotations

import argparse
import itertools
import random
import resource
import sys
import time
from pathlib import Path

from guard import sentence_models, text
from guard.backends.cascade import CascadeBackend
from guard.bench.facts import FACTS, load_facts
from guard.bench.gen_shbench import IDK
from guard.hearing.asr import Transcript

HERE = Path(__file__).parent / "shbench_facts"


def resident_mb(pid: int | str = "self") -> float:
    """A process's resident memory (VmRSS), in MB: this one's, or another's by pid."""
    return int(Path(f"/proc/{pid}/status").read_text().split("VmRSS:")[1].split()[0]) / 1024


def cases(files: list[str], seed: int):
    """(transcript, question, options, key) per statement wording x question wording x pool value."""
    rng = random.Random(seed)
    for name in files:
        facts = list(FACTS) if name == "builtin" else load_facts(Path(name))
        for f in facts:
            others = [g for g in facts if g.key != f.key]
            for say, ask, value in itertools.product(f.says, f.asks, f.pool):
                said = [say.format(x=f.said(value))]
                for g in rng.sample(others, 3):
                    said.append(rng.choice(g.says).format(x=g.said(rng.choice(g.pool))))
                rng.shuffle(said)
                phrases = [" ".join(text.words(s)) for s in said]
                options = [value, *[v for v in rng.sample(f.pool, len(f.pool)) if v != value][:3], IDK]
                rng.shuffle(options)
                yield Transcript(" ".join(phrases), phrases=phrases), ask, options, value


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--facts", default=f"{HERE / 'facts_6.yaml'},{HERE / 'facts_7.yaml'}")
    ap.add_argument("--encoders", default=f"{sentence_models.MINILM},{sentence_models.BUNDLED_MPNET}")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    encoders = args.encoders.split(",")
    backend = CascadeBackend(whisper="", second_whisper="", recheck=False, reader="none", decode_processes=0,
                             general_encoder=sentence_models.MINILM)
    text.embed(["warm"])
    costs = {}
    for enc in encoders:
        before, t = resident_mb(), time.perf_counter()
        sentence_models.shared(enc)(["warm"])
        costs[enc] = (time.perf_counter() - t, before, resident_mb())
    all_cases = list(cases(args.facts.split(","), args.seed))
    right = dict.fromkeys(encoders, 0)
    for transcript, question, options, key in all_cases:
        for enc in encoders:
            backend.general_encoder = enc
            right[enc] += backend.choose(transcript, question, options, set(), 0.0, selective=False)[3:] == key
    said = [t.best for t, *_ in all_cases[:200]]
    seconds = {}
    for enc in encoders:
        embed, t = sentence_models.shared(enc), time.perf_counter()
        for i in range(0, len(said), 20):
            embed(said[i:i + 20])
        seconds[enc] = time.perf_counter() - t
    print(f"{len(all_cases)} cases from {args.facts} (seed {args.seed})")
    for enc in encoders:
        load, before, after = costs[enc]
        print(f"  {enc:>14}: right {right[enc]} ({100 * right[enc] / len(all_cases):.1f} %); load {load:.1f} s, "
              f"resident {before:.0f} -> {after:.0f} MB; {len(said)} transcripts embedded in {seconds[enc]:.2f} s "
              f"({seconds[enc] / seconds[encoders[0]]:.1f}x {encoders[0]})")
    print(f"  peak resident {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    sys.exit(main())
