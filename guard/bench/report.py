"""Printing scores: the `guard bench score` table."""
from __future__ import annotations

from pathlib import Path

from guard.bench.shbench import FileScore, score_file, summarise


def _row(s: FileScore) -> str:
    return (f"{Path(s.path).name:<40} {s.mode:<9} n={s.n:<5} main={s.main:5.1f} by={s.bystander:5.1f} "
            f"| main real/synth {s.main_real:5.1f}/{s.main_synth:5.1f} "
            f"by real/synth {s.bystander_real:5.1f}/{s.bystander_synth:5.1f} | IDK {s.idk_rate:4.1f}%")


def print_scores(files: list[str], mode: str | None = None) -> int:
    scores = [score_file(f, mode) for f in files]
    for s in scores:
        print(_row(s))
    gen = [s for s in scores if s.mode == "general"]
    sel = [s for s in scores if s.mode == "selective"]
    if len(gen) == 1 and len(sel) == 1:
        m = summarise(gen[0], sel[0])
        print(f"Main-Gen {m.main_gen:.1f}  Main-Sel {m.main_sel:.1f}  By-Gen {m.by_gen:.1f}  "
              f"By-Sel {m.by_sel:.1f}  SE {m.se:.1f}")
    return 0
