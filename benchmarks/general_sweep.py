"""GENERAL mode's option weights swept on captured transcripts (decision 133).

A whole GENERAL replay spends ~10 s a question hearing the audio and ~1 s choosing an option. `capture`
replays a suite in process (benchmarks/replay_inprocess.py, GENERAL mode) and keeps what each question's
`CascadeBackend.choose` was given: the transcript, the question, the options and the keyword detections.
`sweep` then chooses again from those inputs with backend attributes changed, and prints Main-Gen / By-Gen
per variant, with the answers each variant gains and loses against the first. Only the choice is redone:
a variant that would change what is heard (the recognisers, the streams) needs the full replay.

    .venv/bin/python benchmarks/general_sweep.py capture --questions DIR/questions.json --out CAP.pkl
    .venv/bin/python benchmarks/general_sweep.py sweep --questions DIR/questions.json --capture CAP.pkl \
        --vary spot_weight=0.3,0.2,0

`capture` writes the replay's own rows beside the pickle (OUT.replay/). The pickle holds transcripts of the
suite's speech: keep it with the suite, not anywhere shared.
"""
from __future__ import annotations

import argparse
import json
import pickle
import sys
from pathlib import Path

from guard.backends.cascade import CascadeBackend
from guard.bench.shbench import expected_letter, official_letter, score_records


def capture(questions: str, out: str) -> None:
    seen: list[dict] = []
    chosen = CascadeBackend.choose

    def keep(self, transcript, question, options, spotted=None, min_relevance=0.0, selective=True):
        seen.append({"transcript": transcript, "question": question, "options": list(options),
                     "spotted": set(spotted or ())})
        return chosen(self, transcript, question, options, spotted, min_relevance, selective)

    CascadeBackend.choose = keep
    sys.path.insert(0, str(Path(__file__).parent))
    import replay_inprocess

    sys.argv = [sys.argv[0], "--questions", questions, "--modes", "general", "--out", f"{out}.replay"]
    replay_inprocess.main()
    Path(out).write_bytes(pickle.dumps(seen))
    print(f"captured {len(seen)} questions to {out}")


def sweep(questions: str, captured: str, vary: str) -> None:
    records = json.loads(Path(questions).read_text())
    seen = pickle.loads(Path(captured).read_bytes())
    if [r["question"] for r in records] != [s["question"] for s in seen]:
        raise SystemExit("the capture is not of these questions, in this order")
    name, values = vary.split("=")
    backend = CascadeBackend(whisper="", second_whisper="", recheck=False, reader="none", decode_processes=0)
    first = None
    for value in values.split(","):
        kind = type(getattr(backend, name))
        setattr(backend, name, value.lower() in ("1", "true", "yes") if kind is bool else kind(value))
        rows = [{**r, "pred": backend.choose(s["transcript"], s["question"], s["options"], s["spotted"], 0.0,
                                             selective=False)} for s, r in zip(seen, records)]
        score = score_records(rows, selective=False)   # the official rule, as the replays score
        right = [official_letter(r["pred"]) == expected_letter(r, selective=False) for r in rows]
        first = right if first is None else first
        gained = sum(a and not b for a, b in zip(right, first))
        lost = sum(b and not a for a, b in zip(right, first))
        print(f"{name}={value}: Main-Gen {score.main:.1f} By-Gen {score.bystander:.1f} (+{gained} -{lost} "
              f"against {name}={values.split(',')[0]})", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("step", choices=["capture", "sweep"])
    ap.add_argument("--questions", required=True)
    ap.add_argument("--out", help="capture: where the pickle goes")
    ap.add_argument("--capture", help="sweep: the pickle `capture` wrote")
    ap.add_argument("--vary", default="spot_weight=0.3,0.2,0",
                    help="sweep: one CascadeBackend attribute and its values, the first the baseline")
    args = ap.parse_args()
    if args.step == "capture":
        capture(args.questions, args.out or "general_capture.pkl")
    else:
        sweep(args.questions, args.capture, args.vary)


if __name__ == "__main__":
    main()
