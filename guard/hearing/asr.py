"""Offline speech recognition for the policy layer and the cascade backend: pocketsphinx, US English
model shipped inside the package. Returns the 1-best transcript and the N-best runner-ups."""
from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Transcript:
    best: str
    nbest: list[str] = field(default_factory=list)  # runner-up hypotheses, best first

    def joined(self, other: Transcript) -> Transcript:
        return Transcript(" . ".join(t for t in (self.best, other.best) if t), self.nbest + other.nbest)


class Transcriber:
    """pocketsphinx, one decoder per thread (decoders are not thread-safe). Transcripts of identical
    audio are reused from a small in-memory LRU (never persisted): a replay asks many questions about one
    recording. Each call's audio is peak-normalised first (GENERAL mode sends each voice on its own, so a
    quiet bystander is decoded at full scale)."""

    def __init__(self, cache_size: int = 64, nbest: int = 20):
        from pocketsphinx import Decoder  # noqa: F401 - fail at load, not at first request

        self._local = threading.local()
        self._cache: OrderedDict[str, Transcript] = OrderedDict()
        self.nbest = nbest
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def _decoder(self):
        if not hasattr(self._local, "d"):
            from pocketsphinx import Decoder

            self._local.d = Decoder(samprate=16000, logfn=os.devnull)
        return self._local.d

    def __call__(self, audio: np.ndarray) -> Transcript:
        if not np.any(audio):
            return Transcript("")
        key = hashlib.sha1(np.ascontiguousarray(audio, np.float32).tobytes()).hexdigest()
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        text = self._decode(_trim_silence(audio))
        with self._lock:
            self._cache[key] = text
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return text

    def _decode(self, audio: np.ndarray) -> Transcript:
        peak = float(np.abs(audio).max())
        pcm = (audio * (0.5 / peak if peak > 0 else 1.0) * 32767).astype("<i2")
        d = self._decoder()
        d.start_utt()
        d.process_raw(pcm.tobytes(), full_utt=True)
        d.end_utt()
        hyp = d.hyp()
        if hyp is None:
            return Transcript("")
        nbest = [n.hypstr for n, _ in zip(d.nbest(), range(self.nbest))] if self.nbest else []
        return Transcript(hyp.hypstr, [h for h in nbest if h and h != hyp.hypstr])


def _trim_silence(audio: np.ndarray, keep: int = 4000) -> np.ndarray:
    """Shorten runs of exact silence (gated-out stretches) to 0.25 s: less to decode, same words."""
    silent = audio == 0
    if not silent.any():
        return audio
    out, i, n = [], 0, len(audio)
    while i < n:
        j = i
        while j < n and silent[j] == silent[i]:
            j += 1
        out.append(audio[i:j] if not silent[i] else audio[i:min(j, i + keep)])
        i = j
    return np.concatenate(out)
