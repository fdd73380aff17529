"""What the reader (SmolLM2-135M wording an open question's answer, decision 124) changes, side by side.

Replays a suite's questions without their options in process (as `replay_inprocess.py --open` does: every
stage, GENERAL mode by default), with the reader off, and keeps what each open question's answer was drawn
from (the transcript, the question, the memory). Then answers every one of them both ways on the same
inputs: the window alone, and the reader's wording of it. Prints, each way: the share of answers that say
every content word of the record's key (`replay_inprocess.py --open`'s score), the answer's mean length in
words and its content words that are neither the question's nor the key's (what else it says), seconds an
answer; and how often the reader's wording was kept (every word it added was heard), the
seconds its first load took, and the process's peak memory before and after it.

    .venv/bin/python benchmarks/reader_bench.py --questions DIR/questions.json [--modes general] [--limit N]
        [--dump answers.json]
"""
from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

from guard import text
from guard.backends.cascade import CascadeBackend
from guard.backends.reader import Reader
from guard.metrics import Metrics
from guard.server import load_components

sys.path.insert(0, str(Path(__file__).parent))
from replay_inprocess import replay, settings_with


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=Path, required=True)
    ap.add_argument("--modes", default="general", help="general or selective")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--dump", type=Path, help="also write each question's inputs and both answers here (JSON)")
    args = ap.parse_args()
    records = json.loads(args.questions.read_text())[: args.limit or None]
    asked: list[tuple] = []   # (transcript, question, memory, the record's key)
    key = {"now": ""}
    answer_open = CascadeBackend.answer_open

    def keep(self, transcript, question, memory=()):
        asked.append((transcript, question, list(memory), key["now"]))
        return answer_open(self, transcript, question, memory)

    CascadeBackend.answer_open = keep
    with tempfile.TemporaryDirectory() as tmp:
        service = load_components(settings_with(Path(tmp), ["backend.cascade_reader=none"]), Metrics())
        for rec in records:   # a refused request never reaches the model
            key["now"] = rec["answer"]
            replay(service, [rec], args.questions.parent, args.modes, open_questions=True)
        cascade = service.backend
    CascadeBackend.answer_open = answer_open
    print(f"{len(asked)} open questions reached the model ({len(records)} records, {args.modes} mode)")

    before = peak_mb()
    start = time.perf_counter()
    reader = Reader()
    reader.answer("the library opens at nine", "when does the library open")   # loads the model
    load_s, after = time.perf_counter() - start, peak_mb()

    rows = {"window": [], "reader": []}
    kept = 0
    for transcript, question, memory, _ in asked:
        start = time.perf_counter()
        window = cascade.extract(transcript, question, memory)
        rows["window"].append((window, time.perf_counter() - start))
        cascade.reader = reader
        start = time.perf_counter()
        said = cascade.answer_open(transcript, question, memory)
        rows["reader"].append((said, time.perf_counter() - start))
        cascade.reader = None
        kept += said != window   # answer_open answers the window where the wording was not grounded

    for way, got in rows.items():
        right = sum(text.content(q[3]) <= text.content(a) for (a, _), q in zip(got, asked, strict=True))
        words = sum(len(text.words(a)) for a, _ in got) / max(len(got), 1)
        other = sum(len(text.content(a) - text.content(q[1]) - text.content(q[3]))
                    for (a, _), q in zip(got, asked, strict=True)) / max(len(got), 1)
        secs = sum(s for _, s in got) / max(len(got), 1)
        print(f"{way:7s} says the key {100 * right / max(len(got), 1):5.1f} %  mean words {words:5.1f}  "
              f"content words beyond the question and key {other:4.1f}  seconds an answer {secs:.3f}")
    if args.dump:
        args.dump.write_text(json.dumps([{"transcript": t, "question": q, "memory": m, "key": k, "window": w,
                                           "reader": r} for (t, q, m, k), (w, _), (r, _)
                                          in zip(asked, rows["window"], rows["reader"], strict=True)], indent=1))
    print(f"reader's wording kept {kept} of {len(asked)}; first load {load_s:.1f} s; "
          f"peak memory {before:.0f} MB -> {after:.0f} MB")


if __name__ == "__main__":
    main()
