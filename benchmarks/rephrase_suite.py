"""Copy an SH-Bench-format suite with its questions asked in other words: every record's `question` is
replaced from a YAML map (original -> other phrasing; a question the map lacks is an error), and the audio
folder is linked, not copied. The copy replays with the same commands, so the figures compare side by side
with the original's: how much the answers depend on the question sharing the speaker's words.

    .venv/bin/python benchmarks/rephrase_suite.py benchmarks/suites/shbench-mini \\
        benchmarks/rephrasings/shbench-mini.yaml DST
    .venv/bin/python benchmarks/replay_inprocess.py --questions DST/questions.json
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import yaml


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("src", help="suite folder holding questions.json and audio/")
    ap.add_argument("rephrasings", help="YAML map: question -> other phrasing")
    ap.add_argument("dst")
    args = ap.parse_args()
    src, dst = Path(args.src).resolve(), Path(args.dst)
    other = yaml.safe_load(Path(args.rephrasings).read_text())
    records = json.loads((src / "questions.json").read_text())
    missing = sorted({r["question"] for r in records} - set(other))
    if missing:
        raise SystemExit(f"no other phrasing for: {missing}")
    dst.mkdir(parents=True, exist_ok=True)
    for r in records:
        r["question"] = other[r["question"]]
    (dst / "questions.json").write_text(json.dumps(records, indent=1))
    link = dst / "audio"
    if not link.exists():
        link.symlink_to(src / "audio", target_is_directory=True)
    print(f"wrote {dst / 'questions.json'}: {len(records)} records, {len(set(other.values()))} phrasings")


if __name__ == "__main__":
    main()
