"""Offline speech recognition for the policy layer and the cascade backend: pocketsphinx, US English
model shipped inside the package. Returns the 1-best transcript and the N-best runner-ups, and spots
given phrases (keyword search) for multiple choice, where the candidate answers are known in advance.
With a `lead` recogniser (Whisper, guard.hearing.whisper) its words are the 1-best and pocketsphinx's
hypotheses the runner-ups (the cascade), or pocketsphinx decodes only what the lead heard nothing in
(`runner_ups=False`: the ledger and spoken questions). A `second` recogniser's 1-best (another Whisper)
comes first among the runner-ups (decision 91)."""
from __future__ import annotations

import hashlib
import os
import re
import tempfile
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

FPS = 100  # pocketsphinx frames per second
PHRASE_GAP = 0.3  # seconds of silence between two 1-best words that end a phrase (Transcript.phrases)


@dataclass(frozen=True)
class Transcript:
    best: str
    nbest: list[str] = field(default_factory=list)  # runner-up hypotheses, best first
    # The 1-best's words with their times (seconds into the decoded audio: gated-out stretches are
    # shortened first, as for `Transcriber.spot_times`, so the two share one timeline). Times belong to one
    # decode: a joined transcript has none.
    words: list[tuple[str, float, float]] = field(default_factory=list)
    # The lead recogniser's mean word probability (Whisper); None when unknown (pocketsphinx alone, joined).
    confidence: float | None = None
    # The lead recogniser's probability of each of `words` (Whisper); empty when unknown.
    sure: list[float] = field(default_factory=list)
    # The 1-best cut where the speaker paused (PHRASE_GAP or more between words): sentences, roughly.
    # Filled from `words`; a joined transcript keeps both parts' phrases.
    phrases: list[str] = field(default_factory=list)
    # The second recogniser's 1-best (also a runner-up in `nbest`), "" when there is none or it says what the
    # 1-best says; a joined transcript keeps both parts'. Read for meaning beside the 1-best (the cascade's
    # `meaning_second`, decision 132).
    second: str = ""

    def __post_init__(self):
        if self.words and not self.phrases:
            cuts = [i for i in range(1, len(self.words)) if self.words[i][1] - self.words[i - 1][2] >= PHRASE_GAP]
            phrases = [" ".join(w for w, _, _ in self.words[a:b]) for a, b in zip([0, *cuts], [*cuts, None])]
            object.__setattr__(self, "phrases", phrases)

    def joined(self, other: Transcript) -> Transcript:
        return Transcript(" . ".join(t for t in (self.best, other.best) if t), self.nbest + other.nbest,
                          phrases=self.phrases + other.phrases,
                          second=" . ".join(t for t in (self.second, other.second) if t))

    def near(self, start: float, end: float, seconds: float) -> str:
        """The 1-best words heard within `seconds` of [start, end]."""
        return " ".join(w for w, a, b in self.words if b >= start - seconds and a <= end + seconds)


class Transcriber:
    """pocketsphinx, one decoder per thread (decoders are not thread-safe). Transcripts of identical
    audio are reused from a small in-memory LRU (never persisted): a replay asks many questions about one
    recording. Each call's audio is peak-normalised first (GENERAL mode sends each voice on its own, so a
    quiet bystander is decoded at full scale)."""

    def __init__(self, cache_size: int = 64, nbest: int = 20, lead=None, runner_ups: bool = True,
                 second=None, pool=None):
        from pocketsphinx import Decoder  # noqa: F401 - fail at load, not at first request

        # .read(audio) -> ([(word, start, end)], mean word probability, [each word's probability]), as
        # Whisper.read; or None
        self.lead = lead
        # With a lead: also decode with pocketsphinx for its runner-up hypotheses (the cascade searches
        # them); without, pocketsphinx decodes only what the lead heard nothing in (the ledger reads the
        # 1-best alone, and the second decode doubled its time).
        self.runner_ups = runner_ups
        # Another recogniser (.transcribe as the lead's): where the lead garbles a word under another voice,
        # a smaller model often hears it ("two o'clock" against base's "at to the door"); its 1-best is
        # the first runner-up, weak evidence as every runner-up is (decision 91). Only with runner_ups.
        self.second = second if runner_ups else None
        # A guard.hearing.decode_pool.DecodePool: the runner-up decodes run in its process while the lead
        # reads here (decision 127); None = in this thread, after the lead.
        self.pool = pool if lead is not None and runner_ups else None

        self._local = threading.local()
        self._cache: OrderedDict[str, Transcript] = OrderedDict()
        self.nbest = nbest
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def _decoder(self, kind: str = "lm"):
        """This thread's decoder of `kind`: "lm" transcribes, "kws" spots phrases. Kept apart so a keyword
        search never leaves state behind in the transcriber's lattice (N-best) search."""
        d = getattr(self._local, kind, None)
        if d is None:
            from pocketsphinx import Decoder

            d = Decoder(samprate=16000, logfn=os.devnull)
            setattr(self._local, kind, d)
        return d

    def __call__(self, audio: np.ndarray) -> Transcript:
        return self.many([audio])[0]

    def many(self, audios: list[np.ndarray]) -> list[Transcript]:
        """The transcripts of `audios`, in order. With a pool, every runner-up decode is sent to it first,
        so pocketsphinx decodes all of them while the lead (and the second) read each one here, in the
        order they always did (a Whisper read depends on the reads before it: decision 120)."""
        keys = [hashlib.sha1(np.ascontiguousarray(a, np.float32).tobytes()).hexdigest() for a in audios]
        out: list[Transcript | None] = []
        with self._lock:
            for a, key in zip(audios, keys):
                if not np.any(a):
                    out.append(Transcript(""))
                elif key in self._cache:
                    self._cache.move_to_end(key)
                    out.append(self._cache[key])
                else:
                    out.append(None)
        first = {k: i for i, k in reversed(list(enumerate(keys)))}   # the same audio twice is read once
        todo = {i: trim_silence(a) for i, a in enumerate(audios) if out[i] is None and first[keys[i]] == i}
        if self.lead is not None and self.runner_ups:
            decoded = {i: self._runner_ups(t) for i, t in todo.items()}
        for i, trimmed in todo.items():
            if self.lead is None:
                text = self._decode(trimmed)
            elif self.runner_ups:
                second = self.second.transcribe(trimmed)[0] if self.second is not None else []
                words = self.lead.read(trimmed)
                text = self._led(decoded[i](), *words, second=" ".join(w for w, _, _ in second))
            else:
                words, confidence, sure = self.lead.read(trimmed)
                text = self._led(Transcript(""), words, confidence, sure) if words else self._decode(trimmed)
            out[i] = text
            with self._lock:
                self._cache[keys[i]] = text
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return [t if t is not None else out[first[k]] for t, k in zip(out, keys)]

    def _runner_ups(self, trimmed: np.ndarray):
        """A function that returns pocketsphinx's transcript of `trimmed`: decoded by the pool, started
        now, or here when called."""
        if self.pool is not None:
            return self.pool.submit(trimmed)
        return lambda: self._decode(trimmed)

    @staticmethod
    def _led(ps: Transcript, words: list[tuple[str, float, float]], confidence: float, sure: list[float] = (),
             second: str = "") -> Transcript:
        """The lead recogniser's words as the 1-best (with its times: same trimmed audio, same timeline as
        `spot_times`, and its confidence); the `second` recogniser's 1-best, then pocketsphinx's 1-best and
        N-best as runner-ups. Nothing heard: pocketsphinx alone."""
        best = " ".join(w for w, _, _ in words)
        if not best:
            return ps
        return Transcript(best, [h for h in dict.fromkeys([second, ps.best, *ps.nbest]) if h and h != best],
                          words, confidence, list(sure), second=second if second != best else "")

    def spot(self, audio: np.ndarray, phrases: list[str], threshold: float = 1e-10,
             per_phone: float | None = None) -> set[str]:
        """The phrases `spot_times` detects, without their times."""
        return {p for p, _, _ in self.spot_times(audio, phrases, threshold, per_phone)}

    def spot_times(self, audio: np.ndarray, phrases: list[str], threshold: float = 1e-10,
                   per_phone: float | None = None) -> list[tuple[str, float, float]]:
        """Each detection of a phrase by pocketsphinx's keyword search in `audio`: (the phrase, lower-case
        as given; start and end in seconds on the timeline of `Transcript.words`). Phrases
        with a word outside the recogniser's dictionary are skipped. A keyword search hears words the
        free-running 1-best misses (its language model prefers common words); false alarms are the price,
        so callers weigh a detection as evidence, not as an answer. One `threshold` serves every phrase;
        with `per_phone` a phrase's threshold is per_phone ** (its phone count) instead. Length-scaled
        thresholds cut false alarms by half but also lost hits, and the SH-Bench cells did not improve
        (docs/decisions.md, benchmarks/kws_threshold_bench.py)."""
        known = sorted({p.lower().strip() for p in phrases if p.strip()})
        d = self._decoder("kws")
        known = [p for p in known if all(d.lookup_word(w) for w in p.split())]
        if not known or not np.any(audio):
            return []
        with tempfile.NamedTemporaryFile("w", suffix=".kws") as f:
            f.write("".join(f"{p} /{per_phone ** phones(d, p) if per_phone else threshold:g}/\n"
                            for p in known))
            f.flush()
            d.add_kws("spot", f.name)
        d.activate_search("spot")
        d.start_stream()
        d.start_utt()
        d.process_raw(_pcm(trim_silence(audio)), full_utt=True)
        d.end_utt()
        segs = (d.seg() or []) if d.hyp() is not None else []
        return [(g.word.strip(), g.start_frame / FPS, g.end_frame / FPS) for g in segs if g.word.strip() in known]

    def _decode(self, audio: np.ndarray) -> Transcript:
        d = self._decoder()
        d.start_stream()   # fresh noise statistics: the transcript must not depend on earlier audio
        d.start_utt()
        d.process_raw(_pcm(audio), full_utt=True)
        d.end_utt()
        hyp = d.hyp()
        if hyp is None:
            return Transcript("")
        nbest = [n.hypstr for n, _ in zip(d.nbest(), range(self.nbest)) if n is not None] if self.nbest else []
        best = repair_numbers(hyp.hypstr)
        words = [(re.sub(r"\(\d+\)$", "", g.word), g.start_frame / FPS, g.end_frame / FPS) for g in (d.seg() or [])
                 if not g.word.startswith(("<", "["))]   # not <s>, <sil>, [NOISE]; "to(2)" is "to"
        return Transcript(best, [r for r in dict.fromkeys(repair_numbers(h) for h in nbest) if r and r != best],
                          words)


# Nouns that take a number after them ("platform four", "gate two"). The recogniser's language model
# prefers the function word that sounds the same ("platform for"); after one of these nouns and at the
# end of the utterance or before a word that ends a phrase (a preposition is followed by its object:
# "the bus to work", "room for the kids" stay as they are), the number is what was said.
COUNTED = frozenset({
    "platform", "gate", "room", "floor", "track", "level", "page", "chapter", "table", "seat", "row",
    "number", "bus", "line", "terminal", "door", "apartment", "flat", "unit", "suite", "lane", "exit",
    "channel", "pier", "dock", "aisle", "bay", "locker", "stop", "route", "highway", "section", "box",
    "car", "coach", "court", "ward", "bed", "building", "block", "lot", "space"})
HOMOPHONES = {"for": "four", "fore": "four", "to": "two", "won": "one", "ate": "eight"}
PHRASE_END = frozenset({"and", "or", "but", "at", "on", "in", "by", "from", "today", "tomorrow", "tonight",
                        "then", "please", "so", "because"})


def repair_numbers(hyp: str) -> str:
    """Counted-noun + number homophone -> the number word (see COUNTED)."""
    w = hyp.split()
    for i in range(1, len(w)):
        if w[i] in HOMOPHONES and w[i - 1] in COUNTED and (i + 1 == len(w) or w[i + 1] in PHRASE_END):
            w[i] = HOMOPHONES[w[i]]
    return " ".join(w)


def phones(decoder, phrase: str) -> int:
    """Phones in the recogniser's pronunciation of `phrase` (every word must be in its dictionary)."""
    return sum(len(decoder.lookup_word(w).split()) for w in phrase.split())


def _pcm(audio: np.ndarray) -> bytes:
    """Peak-normalised 16-bit PCM (a quiet voice on its own is decoded at full scale)."""
    peak = float(np.abs(audio).max())
    return (audio * (0.5 / peak if peak > 0 else 1.0) * 32767).astype("<i2").tobytes()


def trim_silence(audio: np.ndarray, keep: int = 4000) -> np.ndarray:
    """Shorten runs of exact silence (gated-out stretches) to 0.25 s: less to decode, same words."""
    silent = audio == 0
    if not silent.any():
        return audio
    idx = np.arange(len(audio))
    first = silent & ~np.concatenate([[False], silent[:-1]])        # where each silent run starts
    into = idx - np.maximum.accumulate(np.where(first, idx, 0))     # samples into the current run
    return audio[~silent | (into < keep)]
