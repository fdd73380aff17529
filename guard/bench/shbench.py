"""SH-Bench scoring, exactly as the benchmark's own evaluate.py scores it.

Its quirks are kept on purpose, because published numbers depend on them:
- the prefix list has two pairs run together by missing commas ("The best option isThe correct option
  is", "Best answer:Best option:"), so those four prefixes are never stripped on their own;
- each prefix is applied in order with split(prefix)[-1];
- more than 10 words with no A-E capital left -> no answer; else the first A-E capital anywhere;
- Selective mode comes from "selective" in the file name (or an explicit mode); "noidk" in the name
  turns off the IDK rule; in Selective mode a bystander question's answer is its idk_answer.
SE is the harmonic mean of Main-Gen, Main-Sel, By-Gen and By-Sel.
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path

LETTERS = "ABCDE"
OFFICIAL_PREFIXES = [
    "The best answer is",
    "The correct answer is",
    "The answer is",
    "The answer",
    ("The best option is" "The correct option is"),
    ("Best answer:" "Best option:"),
    "Answer:",
    "Option:",
    "The correct answer",
    "The correct option",
]


def official_letter(pred: str) -> str:
    s = pred.strip()
    for prefix in OFFICIAL_PREFIXES:
        s = s.split(prefix)[-1]
    if len(s.split()) > 10 and not re.search("[ABCDE]", s):
        return ""
    m = re.search(r"[ABCDE]", s)
    return m[0] if m else ""


@dataclass
class FileScore:
    path: str
    mode: str                 # general | selective
    n: int
    main: float               # accuracy, percent
    bystander: float
    main_real: float
    main_synth: float
    bystander_real: float
    bystander_synth: float
    idk_rate: float           # share of answers that chose the IDK option, percent


def expected_letter(rec: dict, selective: bool, noidk: bool = False) -> str:
    target = rec["idk_answer"] if selective and rec["speaker"] != "main" and not noidk else rec["answer"]
    return LETTERS[rec["options"].index(target)]


def score_records(records: list[dict], *, selective: bool, noidk: bool = False, path: str = "") -> FileScore:
    hits: dict[tuple[str, str], int] = {}
    totals: dict[tuple[str, str], int] = {}
    idk = 0
    for rec in records:
        pred = official_letter(rec["pred"])
        key = ("main" if rec["speaker"] == "main" else "bystander", "real" if rec["type"] == "real" else "synth")
        totals[key] = totals.get(key, 0) + 1
        hits[key] = hits.get(key, 0) + int(pred == expected_letter(rec, selective, noidk))
        if rec.get("idk_answer") in rec["options"] and pred == LETTERS[rec["options"].index(rec["idk_answer"])]:
            idk += 1

    def acc(*keys: tuple[str, str]) -> float:
        n = sum(totals.get(k, 0) for k in keys)
        return 100.0 * sum(hits.get(k, 0) for k in keys) / n if n else float("nan")

    return FileScore(path=path, mode="selective" if selective else "general", n=len(records),
                     main=acc(("main", "real"), ("main", "synth")),
                     bystander=acc(("bystander", "real"), ("bystander", "synth")),
                     main_real=acc(("main", "real")), main_synth=acc(("main", "synth")),
                     bystander_real=acc(("bystander", "real")), bystander_synth=acc(("bystander", "synth")),
                     idk_rate=100.0 * idk / len(records) if records else float("nan"))


def score_file(path: str | Path, mode: str | None = None) -> FileScore:
    p = Path(path)
    records = json.loads(p.read_text())
    selective = ("selective" in p.name) if mode is None else mode == "selective"
    return score_records(records, selective=selective, noidk="noidk" in p.name, path=str(p))


def harmonic_mean(values: list[float]) -> float:
    if any(v <= 0 for v in values):
        return 0.0
    return len(values) / sum(1.0 / v for v in values)


@dataclass
class Summary:
    main_gen: float
    main_sel: float
    by_gen: float
    by_sel: float
    se: float

    def as_dict(self) -> dict:
        return asdict(self)


def summarise(general: FileScore, selective: FileScore) -> Summary:
    cells = [general.main, selective.main, general.bystander, selective.bystander]
    return Summary(*cells, se=harmonic_mean(cells))
