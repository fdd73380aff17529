"""Median fundamental frequency (F0) of voiced speech: a cheap check that GE2E voiceprints lack.

Speaker embeddings barely move when a voice is pitch-shifted by two semitones (models/hearing-
calibration.md: ~79 % of such impostors pass the cosine threshold), so disclosure decisions also compare
the requester's median F0 with the owner's. Autocorrelation per 40 ms frame, 60-400 Hz, voiced frames
only (energy and periodicity gates).
"""
from __future__ import annotations

import math

import numpy as np

RATE = 16000


def median_f0(samples: np.ndarray, frame: int = 640, hop: int = 320) -> float:
    """Median F0 in Hz over voiced frames; 0.0 when nothing voiced is found."""
    if len(samples) < frame:
        return 0.0
    lo, hi = RATE // 400, RATE // 60
    n = (len(samples) - frame) // hop + 1
    frames = np.lib.stride_tricks.sliding_window_view(samples, frame)[::hop][:n].astype(np.float64)
    energy = np.sqrt(np.mean(frames ** 2, axis=1))
    loud = energy > max(1e-4, 0.1 * np.percentile(energy, 95))
    f0s = []
    for x in frames[loud]:
        x = x - x.mean()
        spec = np.fft.rfft(x, 2 * frame)
        ac = np.fft.irfft(spec * np.conj(spec))[:frame]
        if ac[0] <= 0:
            continue
        ac /= ac[0]
        lag = lo + int(np.argmax(ac[lo:hi]))
        if ac[lag] > 0.5:  # periodic enough to be voiced
            f0s.append(RATE / lag)
    return float(np.median(f0s)) if len(f0s) >= 5 else 0.0


def semitones(a: float, b: float) -> float:
    """|distance| in semitones between two frequencies; inf when either is unknown."""
    if a <= 0 or b <= 0:
        return math.inf
    return abs(12 * math.log2(a / b))
