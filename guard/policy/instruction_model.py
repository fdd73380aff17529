"""A learned reader of privacy instructions, behind the grammar (guard.policy.instructions): softmax
regression over MiniLM sentence embeddings, classes nobody / owner_only / none (decision 107).

The grammar reads the parts of an instruction and misses a phrasing outside them: "lock this away and
throw away the key, me included", "if I ask you about this later, act like you have no clue". This model
has seen every labelled line the repository holds (`labelled`), and answers where the grammar reads none,
when its probability reaches the bar. Its weights ship in
guard/data/instruction_model.npz; `scripts/fit_instructions.py` refits them from the labelled lines
(`tests/test_instruction_model.py` checks they match). numpy only, no training at run time.
"""
from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

CLASSES = ("nobody", "owner_only", "none")
FILE = "instruction_model.npz"


def fit(x: np.ndarray, labels: list[str], l2: float = 1e-4, steps: int = 3000, rate: float = 4.0
        ) -> tuple[np.ndarray, np.ndarray]:
    """(W, b) of a softmax regression of `labels` (CLASSES) on the rows of `x`, each class weighted by
    the inverse of its count (the statements outnumber the instructions two to one), by full-batch
    gradient descent from zero: deterministic."""
    y = np.array([CLASSES.index(k) for k in labels])
    counts = np.bincount(y, minlength=len(CLASSES))
    if (counts == 0).any():
        raise ValueError(f"every class needs examples; counts {dict(zip(CLASSES, counts.tolist()))}")
    weight = (len(y) / (len(CLASSES) * counts))[y]
    weight = weight / weight.sum()
    onehot = np.eye(len(CLASSES))[y]
    w = np.zeros((x.shape[1], len(CLASSES)))
    b = np.zeros(len(CLASSES))
    for _ in range(steps):
        p = softmax(x @ w + b)
        g = (p - onehot) * weight[:, None]
        w -= rate * (x.T @ g + l2 * w)
        b -= rate * g.sum(0)
    return w.astype(np.float32), b.astype(np.float32)


def softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


@dataclass(frozen=True)
class InstructionModel:
    w: np.ndarray   # (embedding dim, len(CLASSES))
    b: np.ndarray   # (len(CLASSES),)

    @classmethod
    def load(cls) -> InstructionModel:
        with resources.files("guard.data").joinpath(FILE).open("rb") as f:
            z = np.load(f)
            if tuple(str(c) for c in z["classes"]) != CLASSES:
                raise ValueError(f"{FILE}: classes {z['classes'].tolist()}, expected {CLASSES}")
            return cls(z["w"], z["b"])

    def read(self, embedding: np.ndarray) -> tuple[str, float]:
        """(the likeliest class, its probability) for one sentence embedding."""
        p = softmax(embedding @ self.w + self.b)
        k = int(p.argmax())
        return CLASSES[k], float(p[k])


def labelled(eval_dir: Path) -> dict[str, list[tuple[str, str]]]:
    """The lines the model learns from, by set: the hand-written sets of `eval_dir` (benchmarks/privacy_eval:
    instructions_*.yaml, statements*.yaml, secrets_*.yaml; each measured blind by the reader of its day,
    then learned from), the prototypes in guard/data/privacy_prototypes.yaml, and the VoxPrivacy
    generator's built-in phrasings and statements. Every statement that is not an instruction is "none"."""
    import yaml

    from guard.bench import gen_voxprivacy as gen

    def read(path: Path) -> dict:
        return yaml.safe_load(path.read_text()) or {}

    sets: dict[str, list[tuple[str, str]]] = {}
    for path in sorted(eval_dir.glob("instructions_*.yaml")):
        sets[path.stem] = [(s, k) for k, lines in read(path).items() for s in lines]
    for path in sorted(eval_dir.glob("statements*.yaml")):
        data = read(path)
        sets[path.stem] = ([(s, k) for k, lines in data.get("instructions", {}).items() for s in lines]
                           + [(s, "none") for lines in data["statements"].values() for s in lines])
    for path in sorted(eval_dir.glob("secrets_*.yaml")):
        secrets, control = gen.statements(path)
        sets[path.stem] = [(e[0], "none") for lines in [*secrets.values(), control] for e in lines]
    proto = yaml.safe_load(resources.files("guard.data").joinpath("privacy_prototypes.yaml").read_text())
    sets["prototypes"] = ([(s, k) for k, lines in proto["instructions"].items() for s in lines]
                          + [(s, "none") for lines in proto["categories"].values() for s in lines])
    sets["generator"] = ([(s, "nobody") for s in gen.TIER1 + gen.TIER1_AHEAD]
                         + [(s, "owner_only") for s in gen.TIER2 + gen.TIER2_AHEAD]
                         + [(e[0], "none") for lines in [*gen.SECRETS.values(), gen.CONTROL] for e in lines])
    return sets
