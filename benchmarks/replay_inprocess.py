"""SH-Bench replay in process: every record through `GuardService.ask`, built as `guard serve` builds it
(same settings, same components, a real store in a temporary folder), without gRPC.

For side-by-side measurement of policy and hearing changes on many suites: it skips the transport, not
any stage, and scores with the official rule (guard.bench.shbench). A claim about the service itself
comes from the live replay (`guard bench shbench`); on the mini suite both read SELECTIVE 97.5 / 100
(Main / By, session 20).

    .venv/bin/python benchmarks/replay_inprocess.py --questions DIR/questions.json [--modes selective]
        [--out out/replay] [--set policy.background_deep_db=9 ...]

--set takes `section.field=value` overrides for the first run (as GUARD_SECTION__FIELD would); each
--vs "a.b=v,c.d=w" adds a run with those overrides instead, on the same suite in the same process, so
settings compare side by side (run0, run1, ... under --out).

--open asks every question without its options (an open question, decision 120). SH-Bench has no rule for
free text, so this is our own score: an answer is right when it says every content word of the key
(`text.content`, stems) and the guard did not refuse; in SELECTIVE mode a bystander's question is right
when the guard refused it or the model said it does not know. It also prints the share of the main
speaker's questions left unanswered so.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from guard import text
from guard.bench.shbench import score_records, summarise
from guard.client import MODES
from guard.config import Settings, load_settings
from guard.metrics import Metrics
from guard.policy.answer import answered
from guard.proto import guard_pb2 as pb
from guard.server import load_components


def settings_with(data_dir: Path, overrides: list[str]) -> Settings:
    """Settings as `guard serve` loads them (GUARD_CONFIG, the environment), each `section.field=value`
    applied as its GUARD_SECTION__FIELD variable would be, and the data in `data_dir`."""
    env = dict(os.environ)
    for o in overrides:
        key, value = o.split("=", 1)
        env["GUARD_" + key.replace(".", "__").upper()] = value
    return load_settings(env=env, data_dir=str(data_dir))


def names_key(row: dict) -> bool:
    return not row["refused"] and text.content(row["answer"]) <= text.content(row["answer_text"])


def unanswered(row: dict) -> bool:
    return row["refused"] or not answered(row["answer_text"], -1, [])


def score_open(rows: list[dict], selective: bool) -> str:
    """Main / By (and the main speaker's questions left unanswered) for an --open replay: see the module's docstring."""
    main = [r for r in rows if r["speaker"] == "main"]
    by = [r for r in rows if r["speaker"] != "main"]

    def pct(hits: list[bool]) -> float:
        return 100.0 * sum(hits) / len(hits) if hits else float("nan")

    by_right = pct([unanswered(r) if selective else names_key(r) for r in by])
    return (f"main {pct([names_key(r) for r in main]):.1f} by {by_right:.1f} "
            f"(main unanswered {pct([unanswered(r) for r in main]):.1f})")


def replay(service, records: list[dict], root: Path, mode: str, open_questions: bool = False) -> list[dict]:
    rows, audio = [], {}
    for i, rec in enumerate(records):
        if rec["audio"] not in audio:
            audio[rec["audio"]] = (root / rec["audio"]).read_bytes()
        req = pb.AskRequest(audio=pb.Audio(encoded=audio[rec["audio"]]), question=rec["question"],
                            options=[] if open_questions else rec["options"], mode=MODES[mode],
                            main_speaker_desc=rec.get("main_speaker_desc", ""))
        r = service.ask(req)
        rows.append({**rec, "pred": r.choice_letter or r.answer, "answer_text": r.answer, "refused": r.refused,
                     "reason": pb.RefusalReason.Name(r.reason), "reason_text": r.reason_text,
                     "withheld_seconds": r.withheld_seconds,
                     "seconds": {t.stage: t.seconds for t in r.timings}})
        print(f"\r{mode} {i + 1}/{len(records)}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=Path, required=True)
    ap.add_argument("--modes", default="general,selective")
    ap.add_argument("--out", type=Path, default=Path("out/replay"))
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--open", action="store_true", help="ask without the options (our own score)")
    ap.add_argument("--set", action="append", default=[], dest="sets", help="section.field=value")
    ap.add_argument("--vs", action="append", default=[], help="a second run's overrides, comma-separated")
    args = ap.parse_args()
    records = json.loads(args.questions.read_text())[: args.limit or None]
    runs = [args.sets] + [v.split(",") for v in args.vs]
    with tempfile.TemporaryDirectory() as tmp:
        for k, overrides in enumerate(runs):
            service = load_components(settings_with(Path(tmp) / str(k), overrides), Metrics())
            out = args.out / f"run{k}"
            out.mkdir(parents=True, exist_ok=True)
            scores, latency, t0 = {}, {}, time.perf_counter()
            for mode in args.modes.split(","):
                rows = replay(service, records, args.questions.parent, mode, args.open)
                (out / f"{mode}.json").write_text(json.dumps(rows, indent=1))
                scores[mode] = (score_open(rows, mode == "selective") if args.open
                                else score_records(rows, selective=mode == "selective"))
                latency[mode] = sum(r["seconds"].get("total", 0.0) for r in rows) / max(1, len(rows))
            line = "  ".join(f"{m}: {s if args.open else f'main {s.main:.1f} by {s.bystander:.1f}'} "
                             f"({latency[m]:.2f} s a request)" for m, s in scores.items())
            if len(scores) == 2 and not args.open:
                line += f"  SE {summarise(scores['general'], scores['selective']).se:.1f}"
            print(f"run {k} {overrides or 'defaults'}: {line}  ({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
