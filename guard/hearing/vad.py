"""Voice activity detection: where is there speech at all.

Output is a boolean mask over 10 ms frames (FRAME_SECONDS), the resolution every hearing stage shares.
Both detectors ship their models inside their pip packages: no download, no path to configure.
"""
from __future__ import annotations

import abc
import threading

import numpy as np

from guard.audio import SAMPLE_RATE

FRAME_SECONDS = 0.01
FRAME = int(SAMPLE_RATE * FRAME_SECONDS)  # 160 samples


class Vad(abc.ABC):
    name: str

    @abc.abstractmethod
    def speech_mask(self, samples: np.ndarray) -> np.ndarray:
        """samples: (n,) float32 16 kHz -> (ceil(n / 160),) bool, True where speech."""


def n_frames(n_samples: int) -> int:
    return -(-n_samples // FRAME)


def smooth(mask: np.ndarray, min_gap_frames: int = 20, min_speech_frames: int = 15) -> np.ndarray:
    """Fill interior pauses shorter than min_gap, then drop speech runs shorter than min_speech."""
    out = mask.copy()
    for start, end in runs(out, False):
        if start > 0 and end < len(out) and end - start < min_gap_frames:
            out[start:end] = True
    for start, end in runs(out, True):
        if end - start < min_speech_frames:
            out[start:end] = False
    return out


def runs(mask: np.ndarray, value: bool = True) -> list[tuple[int, int]]:
    """[(start, end)) index runs where mask == value."""
    m = np.concatenate([[False], mask == value, [False]]).astype(np.int8)
    d = np.diff(m)
    return list(zip(np.flatnonzero(d == 1).tolist(), np.flatnonzero(d == -1).tolist()))


def near(frames: np.ndarray, seconds: float) -> np.ndarray:
    """Frames within `seconds` of any set frame (the set frames included when seconds > 0)."""
    k = round(seconds / FRAME_SECONDS)
    if k <= 0:
        return np.zeros(len(frames), bool)
    return np.convolve(frames.astype(np.int32), np.ones(2 * k + 1, np.int32), mode="same") > 0


class WebrtcVad(Vad):
    """Google WebRTC VAD (webrtcvad-wheels), 30 ms decisions spread over 10 ms frames."""

    name = "webrtcvad"

    def __init__(self, aggressiveness: int = 2):
        import webrtcvad

        self._make = lambda: webrtcvad.Vad(aggressiveness)


    def speech_mask(self, samples: np.ndarray) -> np.ndarray:
        pcm = (np.clip(samples, -1, 1) * 32767).astype("<i2")
        step = 3 * FRAME  # 30 ms
        nf = n_frames(len(samples))
        mask = np.zeros(nf, dtype=bool)
        # Quiet-but-real speech (a bystander at -10 dB) must still count: normalise the level first.
        peak = np.abs(pcm).max() if len(pcm) else 0
        if peak > 0:
            pcm = (pcm.astype(np.float32) * min(8.0, 16000.0 / peak)).astype("<i2")
        vad = self._make()  # per call: the detector adapts to its input, so no state crosses requests
        for i in range(0, len(pcm) - step + 1, step):
            if vad.is_speech(pcm[i:i + step].tobytes(), SAMPLE_RATE):
                mask[i // FRAME:i // FRAME + 3] = True
        return smooth(mask)


class SileroVad(Vad):
    """Silero VAD v6, the JIT model inside the silero-vad package."""

    name = "silero"

    def __init__(self, threshold: float = 0.5):
        from silero_vad import load_silero_vad

        self._model = load_silero_vad()
        self._threshold = threshold
        self._lock = threading.Lock()  # the model carries state between chunks: one stream at a time

    def speech_mask(self, samples: np.ndarray) -> np.ndarray:
        import torch

        chunk = 512  # the model's window at 16 kHz (32 ms)
        n = len(samples) // chunk
        mask = np.zeros(n_frames(len(samples)), dtype=bool)
        x = torch.from_numpy(np.ascontiguousarray(samples[:n * chunk]))
        with self._lock, torch.inference_mode():
            self._model.reset_states()
            for i in range(n):
                p = float(self._model(x[i * chunk:(i + 1) * chunk], SAMPLE_RATE))
                if p >= self._threshold:
                    mask[(i * chunk) // FRAME:((i + 1) * chunk) // FRAME + 1] = True
        return smooth(mask)


VADS: dict[str, type[Vad]] = {WebrtcVad.name: WebrtcVad, SileroVad.name: SileroVad}
