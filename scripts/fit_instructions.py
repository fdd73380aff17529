"""Refit guard/data/instruction_model.npz (guard.policy.instruction_model) from the labelled lines:
benchmarks/privacy_eval, the prototypes and the VoxPrivacy generator's phrasings. Deterministic; the test
tests/test_instruction_model.py refits into a temporary file and compares.

    .venv/bin/python scripts/fit_instructions.py [--out guard/data/instruction_model.npz]
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from guard import text
from guard.policy.instruction_model import CLASSES, fit, labelled

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "guard/data/instruction_model.npz")
    args = ap.parse_args()
    rows = [r for lines in labelled(ROOT / "benchmarks/privacy_eval").values() for r in lines]
    w, b = fit(text.embed([s for s, _ in rows]), [k for _, k in rows])
    np.savez(args.out, w=w, b=b, classes=np.array(CLASSES))
    counts = {c: sum(k == c for _, k in rows) for c in CLASSES}
    print(f"wrote {args.out}: {len(rows)} lines {counts}")


if __name__ == "__main__":
    main()
