"""Precision and recall of the privacy text classifiers on the held-out hand-written sets.

`statements.yaml` (instructions and statements), `instructions_2.yaml` onwards (more instruction
phrasings), `statements_2.yaml` onwards (more Tier 3 statements, half of them everyday talk that should stay
public); what each set was used for is said at its top. Instruction accuracy per set, and how many of a
set's instructions leave words behind that `said_with` would keep as content (the two sets 2 lines that
say a secret with the instruction should).

    .venv/bin/python benchmarks/privacy_text_bench.py
"""
from __future__ import annotations

import json
from pathlib import Path

import yaml

from guard.policy import instructions
from guard.policy.privacy_text import PrivacyText


def prf(pairs: list[tuple[bool, bool]]) -> dict:
    tp = sum(p and t for p, t in pairs)
    fp = sum(p and not t for p, t in pairs)
    fn = sum(t and not p for p, t in pairs)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return {"n": len(pairs), "precision": precision, "recall": recall}


def held_out(name: str) -> dict:
    return yaml.safe_load((Path(__file__).parent / f"privacy_eval/{name}.yaml").read_text())


def main() -> None:
    data = held_out("statements")
    clf = PrivacyText()
    inst = [(clf.instruction(s), label) for label, ss in data["instructions"].items() for s in ss]
    report = {"instruction_" + k: prf([(p == k, t == k) for p, t in inst]) for k in ("nobody", "owner_only")}
    report["instruction_accuracy"] = sum((p or "none") == t for p, t in inst) / len(inst)
    numbered = sorted(Path(__file__).parent.glob("privacy_eval/instructions_*.yaml"), key=lambda p: int(p.stem.split("_")[1]))
    for extra in (p.stem for p in numbered):
        more = held_out(extra)
        got = [(clf.instruction(s) or "none") == label for label, ss in more.items() for s in ss]
        report[f"instruction_accuracy_{extra}"] = sum(got) / len(got)
        # an instruction alone should leave no words to keep as content (instructions.said_with)
        alone = [s for label in ("nobody", "owner_only") for s in more[label]]
        report[f"leaving_words_{extra}"] = f"{sum(bool(instructions.said_with(s)) for s in alone)}/{len(alone)}"
    sens = [(clf.sensitivity(s), label) for label, ss in data["statements"].items() for s in ss]
    report["private"] = prf([(p.private, t != "public") for p, t in sens])
    report["category_accuracy_on_private"] = (sum(p.category == t for p, t in sens if t != "public")
                                              / sum(t != "public" for _, t in sens))
    for extra in sorted((p.stem for p in Path(__file__).parent.glob("privacy_eval/statements_*.yaml")),
                        key=lambda stem: int(stem.split("_")[1])):
        more = held_out(extra)["statements"]
        got = [(clf.sensitivity(s).private, label != "public") for label, ss in more.items() for s in ss]
        report[f"private_{extra}"] = prf(got)
        report[f"public_read_private_{extra}"] = f"{sum(p and not t for p, t in got)}/{sum(not t for _, t in got)}"
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
