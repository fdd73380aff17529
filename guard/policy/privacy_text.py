"""Offline text classifiers for the secret ledger: privacy instructions and Tier 3 sensitivity.

Instructions: the grammar of guard.policy.instructions first (recognisers hear its function words well),
then, where it finds none, the nearest MiniLM prototype (guard/data/privacy_prototypes.yaml) above
`instruction_threshold`. Sensitivity: nearest-prototype over MiniLM sentence embeddings. No training,
no download.
"""
from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

import numpy as np
import yaml

from guard import text
from guard.policy import instructions

NOBODY, OWNER_ONLY = instructions.NOBODY, instructions.OWNER_ONLY
INFERRED, PUBLIC = "inferred_private", "public"
CATEGORIES = ("health", "finances", "relationships", "location", "beliefs", "career", "illegal", "surprise")


def _prototypes() -> dict:
    return yaml.safe_load(resources.files("guard.data").joinpath("privacy_prototypes.yaml").read_text())


@dataclass(frozen=True)
class Sensitivity:
    private: bool
    category: str       # one of CATEGORIES, or "public"
    score: float        # similarity margin of the decision


class PrivacyText:
    """`instruction(text)` -> nobody | owner_only | None; `sensitivity(text)` -> Sensitivity."""

    def __init__(self, instruction_threshold: float = 0.6, margin: float = 0.0):
        p = _prototypes()
        self._inst = {k: text.embed(v) for k, v in p["instructions"].items()}
        self._cats = {k: text.embed(v) for k, v in p["categories"].items()}
        self.instruction_threshold = instruction_threshold
        self.margin = margin

    def instruction(self, utterance: str) -> str | None:
        if not utterance.strip():
            return None
        said = instructions.read(utterance)
        if said:
            return said
        e = text.embed([utterance])[0]
        scores = {k: float(np.max(v @ e)) for k, v in self._inst.items()}
        best = max(scores, key=scores.get)
        if best == "none" or scores[best] < self.instruction_threshold:
            return None
        return NOBODY if best == "nobody" else OWNER_ONLY

    def sensitivity(self, utterance: str) -> Sensitivity:
        e = text.embed([utterance])[0]
        scores = {k: float(np.sort(v @ e)[-2:].mean()) for k, v in self._cats.items()}
        public = scores.pop("public")
        best = max(scores, key=scores.get)
        if scores[best] > public + self.margin:
            return Sensitivity(True, best, scores[best] - public)
        return Sensitivity(False, "public", public - scores[best])
