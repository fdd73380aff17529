"""Offline text classifiers for the secret ledger: privacy instructions and Tier 3 sensitivity.

Nearest-prototype over MiniLM sentence embeddings (prototypes: guard/data/privacy_prototypes.yaml), plus
cue phrases for the instructions, which recognisers tend to hear well. No training, no download.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

import numpy as np
import yaml

from guard import text

NOBODY, OWNER_ONLY, INFERRED, PUBLIC = "nobody", "owner_only", "inferred_private", "public"
CATEGORIES = ("health", "finances", "relationships", "location", "beliefs", "career", "illegal", "surprise")

NOBODY_CUES = re.compile(r"\bnot even (to )?me\b|\b(anyone|anybody|no one)\b.*\bnot even|\b(don'?t|do not|never) (tell|repeat|mention)\w*.*\b(anyone|anybody|"
                         r"a soul|no one|me)\b.*\b(even|including|me too|either)\b|\bforget (that )?i (said|told)",
                         re.IGNORECASE)
OWNER_CUES = re.compile(r"\bbetween (you and me|us|the two of us|ourselves)\b|\bjust between\b|\bour (little )?"
                        r"secret\b|\bonly (tell|remind|share with) me\b|\bnobody (else )?but me\b|"
                        r"\b(don'?t|do not|never) (tell|repeat|mention)\w* (\w+ )?(to )?(anyone|anybody|a soul)\b",
                        re.IGNORECASE)


def _prototypes() -> dict:
    return yaml.safe_load(resources.files("guard.data").joinpath("privacy_prototypes.yaml").read_text())


@dataclass(frozen=True)
class Sensitivity:
    private: bool
    category: str       # one of CATEGORIES, or "public"
    score: float        # similarity margin of the decision


class PrivacyText:
    """`instruction(text)` -> nobody | owner_only | None; `sensitivity(text)` -> Sensitivity."""

    def __init__(self, instruction_threshold: float = 0.55, margin: float = 0.0):
        p = _prototypes()
        self._inst = {k: text.embed(v) for k, v in p["instructions"].items()}
        self._cats = {k: text.embed(v) for k, v in p["categories"].items()}
        self.instruction_threshold = instruction_threshold
        self.margin = margin

    def instruction(self, utterance: str) -> str | None:
        if not utterance.strip():
            return None
        if NOBODY_CUES.search(utterance):
            return NOBODY
        if OWNER_CUES.search(utterance):
            return OWNER_ONLY
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
