"""Verification: which enrolled household voice (if any) each diarized voice is."""
from __future__ import annotations

import numpy as np

from guard.hearing.embed import unit
from guard.store.base import Voiceprint


def score(embedding: np.ndarray, vp: Voiceprint) -> float:
    """Cosine to the voiceprint centroid."""
    return float(unit(embedding) @ vp.centroid)


def identify(embedding: np.ndarray, voiceprints: list[Voiceprint], threshold: float
             ) -> tuple[Voiceprint | None, float]:
    """The best-matching voiceprint at or above threshold, and the best score (0.0 with none enrolled)."""
    if not voiceprints:
        return None, 0.0
    scores = [score(embedding, vp) for vp in voiceprints]
    best = int(np.argmax(scores))
    return (voiceprints[best] if scores[best] >= threshold else None), scores[best]
