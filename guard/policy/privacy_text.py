"""Offline text classifiers for the secret ledger: privacy instructions and Tier 3 sensitivity.

Instructions: the grammar of guard.policy.instructions first (recognisers hear its function words well),
then, where it finds none, a softmax regression over the MiniLM embedding (guard.policy.instruction_model,
decision 107) when its probability reaches the bar for the class it reads (`policy.instruction_min_probability`
for owner-only, `policy.instruction_nobody_min_probability` for never-disclose). Where the grammar reads
owner-only and the model reads never-disclose at `policy.instruction_overrule_probability` or more, the
stricter reading wins: the grammar takes "including when I ask" for an owner's exception (decision 109).
Sensitivity: private when the statement says it is kept from someone (SECRECY), else
nearest-prototype over MiniLM sentence embeddings: eight private categories against everyday talk, which
must lead by `public_margin` to be shared (decision 97: closer calls are kept private). No training at run
time, no download.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

import numpy as np
import yaml

from guard import text
from guard.config import PolicySettings
from guard.policy import instructions
from guard.policy.instruction_model import InstructionModel

NOBODY, OWNER_ONLY = instructions.NOBODY, instructions.OWNER_ONLY
INFERRED, PUBLIC = "inferred_private", "public"
# A statement that says it is kept from someone is private whatever its topic: "... and nobody knows",
# "she has no idea", "I haven't told my mum", "behind his back", "secretly". (Said of a statement, not an
# instruction to the assistant: those are read by guard.policy.instructions.)
_NOT_ME = r"(?<!\bi )(?<!\byou )(?<!\bwe )"     # "I don't know what to cook" is not about a secret
_END = r"(?: yet| about (?:it|this|that|any of (?:it|this)))?(?: at all)?(?=$| and | but | so | because )"
SECRECY = re.compile(
    r"\b(?:secretly|in secret|behind (?:[\w']+ ){1,2}back)\b"
    rf"|\b(?:nobody|no ?one|no one else|none of them) (?:else )?(?:knows|suspects){_END}"
    rf"|{_NOT_ME}\b(?:doesn'?t|don'?t|does not|do not|didn'?t|did not) (?:\w+ )?(?:know|suspect){_END}"
    rf"|{_NOT_ME}\b(?:has|have|had) no idea{_END}"
    r"|\b(?:haven'?t|hasn'?t|have not|has not) (?:\w+ )?(?:told|mentioned (?:it|this|that) to)\b"
    r"|\bdon'?t let on\b")
CATEGORIES = ("health", "finances", "relationships", "location", "beliefs", "career", "illegal", "surprise")


def _prototypes() -> dict:
    return yaml.safe_load(resources.files("guard.data").joinpath("privacy_prototypes.yaml").read_text())


def combine(said: str | None, label: str, p: float, bars: dict[str, float], overrule: float) -> str | None:
    """The instruction read from the grammar's reading `said` and the model's (`label`, probability `p`):
    the grammar's where it reads one, but never-disclose where it reads owner-only and the model reads
    never-disclose at `overrule` or more; else the model's where `p` reaches the bar for its class."""
    if said == OWNER_ONLY and label == NOBODY and p >= overrule:
        return NOBODY
    if said:
        return said
    return label if label in bars and p >= bars[label] else None


@dataclass(frozen=True)
class Sensitivity:
    private: bool
    category: str       # one of CATEGORIES, or "public"
    score: float        # private: best category's cosine minus everyday talk's; public: the reverse


class PrivacyText:
    """`instruction(text)` -> nobody | owner_only | None; `sensitivity(text)` -> Sensitivity."""

    def __init__(self, settings: PolicySettings | None = None):
        settings = settings or PolicySettings()
        p = _prototypes()
        self._inst = InstructionModel.load()
        self._cats = {k: text.embed(v) for k, v in p["categories"].items()}
        self.bars = {OWNER_ONLY: settings.instruction_min_probability,
                     NOBODY: settings.instruction_nobody_min_probability}
        self.overrule = settings.instruction_overrule_probability
        self.public_margin = settings.public_margin

    def instruction(self, utterance: str) -> str | None:
        if not utterance.strip():
            return None
        said = instructions.read(utterance)
        if said == NOBODY:
            return said
        return combine(said, *self._inst.read(text.embed([utterance])[0]), self.bars, self.overrule)

    def sensitivity(self, utterance: str) -> Sensitivity:
        e = text.embed([utterance])[0]
        scores = {k: float(np.sort(v @ e)[-2:].mean()) for k, v in self._cats.items()}
        public = scores.pop("public")
        best = max(scores, key=scores.get)
        if SECRECY.search(instructions.normalise(utterance)) or scores[best] > public - self.public_margin:
            return Sensitivity(True, best, scores[best] - public)
        return Sensitivity(False, "public", public - scores[best])
