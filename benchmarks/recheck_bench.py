"""What the cascade's Whisper re-reading (decision 102) adds in SELECTIVE mode, and what it risks.

Replays a suite's SELECTIVE mode in process (as benchmarks/replay_inprocess.py does: every stage, the
official scoring) with the re-reading on, and records for every request the text rules' choice beside
the service's answer. Prints Main-Sel / By-Sel both ways and each answer the re-reading changed.

Then a stress the generated suites never contain: a bystander's question on the main speaker's own topic.
For each pair of main questions asked in the same words whose answers differ, the first one's options
(which lack the second's answer) are put to the second one's gated audio: the main speaker said
something of that kind, but none of the options. Any answer there is a false alarm.

    .venv/bin/python benchmarks/recheck_bench.py --questions DIR/questions.json [--limit N]
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from guard.backends.cascade import CascadeBackend
from guard.bench.shbench import score_records
from guard.metrics import Metrics
from guard.server import load_components

sys.path.insert(0, str(Path(__file__).parent))
from replay_inprocess import replay, settings_with


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=Path, required=True)
    ap.add_argument("--limit", type=int, default=0)
    args = ap.parse_args()
    records = json.loads(args.questions.read_text())[: args.limit or None]
    seen: dict = {}   # the request in flight: its gated streams and the text rules' choice
    choose, generate = CascadeBackend.choose, CascadeBackend.generate

    def text_rules(self, *a, **k):
        seen["choice"] = choose(self, *a, **k)
        return seen["choice"]

    def gated(self, audio, task):
        seen["streams"] = list(task.streams or [audio])
        return generate(self, audio, task)

    CascadeBackend.choose, CascadeBackend.generate = text_rules, gated
    with tempfile.TemporaryDirectory() as tmp:
        service = load_components(settings_with(Path(tmp), ["backend.cascade_recheck=true"]), Metrics())
        backend = service.backend
        rows, off, heard = [], [], []
        for rec in records:
            seen.clear()
            row, = replay(service, [rec], args.questions.parent, "selective")
            rows.append(row)
            choice = seen.get("choice")
            off.append({**row, "pred": choice[0] if choice else row["pred"]})
            heard.append([(s, backend.asr(s)) for s in seen.get("streams", [])])
            if choice and choice[0] != row["pred"]:
                print(f"re-read: {rec['speaker']} {rec['question']!r} -> {row['answer_text']!r} "
                      f"(said: {rec['answer']!r})")
    a, b = score_records(off, selective=True), score_records(rows, selective=True)
    print(f"SELECTIVE Main-Sel / By-Sel: text rules {a.main:.1f} / {a.bystander:.1f}, "
          f"with the re-reading {b.main:.1f} / {b.bystander:.1f}")

    mains = [(r, h) for r, h in zip(records, heard) if r["speaker"] == "main" and h]
    pairs = [(q, h) for q, _ in mains for r, h in mains if q["question"] == r["question"]
             and q["answer"] != r["answer"] and r["answer"] not in q["options"]]
    false = 0
    for q, h in pairs:
        out = backend.reread(h, q["question"], q["options"])
        false += out is not None
        if out:
            print(f"stress false alarm: {q['question']!r} {out!r} from {h[0][1].best[:80]!r}")
    print(f"same-topic stress: {false} answers to {len(pairs)} questions none of whose options was said")


if __name__ == "__main__":
    main()
