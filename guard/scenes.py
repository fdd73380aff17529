"""The scene generator: the single source of synthetic test audio (tests, mini suites, benchmarks).

Voices are Debian's offline TTS engines (installed by scripts/install.sh). A scene puts a main speaker
in front and one or two bystanders behind (-10 dB by default), partly overlapping, with optional noise
and reverberation, and records reference turns (RTTM). Everything is deterministic from a seed.

Voices: flite awb / rms / slt / kal16, festival ked_diphone, and espeak-ng formant voices. flite kal and
festival kal_diphone are the same person (as are slt and cmu_us_slt_arctic_hts): never use both as
different people. Pitch-shifted copies of a voice are impostors of it, not new people.
`heart` is a neural voice (hibari-tts, distilled from Kokoro's af_heart, inside the pip package): far
closer to a person than the diphone voices, and never used to tune anything, so suites that include it
(`HELD_OUT`) measure how the guard does on a voice it was not built on.
"""
from __future__ import annotations

import functools
import hashlib
import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import soundfile as sf

from guard.audio import SAMPLE_RATE, resample

VOICES = {
    "awb": ("flite", "awb"), "rms": ("flite", "rms"), "slt": ("flite", "slt"), "kal": ("flite", "kal16"),
    "ked": ("festival", "ked_diphone"), "esp_us": ("espeak", "en-us"), "esp_gb": ("espeak", "en-gb"),
    "heart": ("hibari", "heart"),
}
NATURAL = ("awb", "rms", "slt", "kal", "ked")
HELD_OUT = ("heart",)
CACHE = Path(os.environ.get("GUARD_TTS_CACHE", Path(tempfile.gettempdir()) / "guard-tts-cache"))


def tts(voice: str, text: str, *, pitch_cents: int = 0) -> np.ndarray:
    """Speak text with a named voice -> float32 mono 16 kHz. Cached on disk by (voice, text, pitch)."""
    engine, name = VOICES[voice]
    key = hashlib.sha1(f"{voice}|{pitch_cents}|{text}".encode()).hexdigest()[:20]
    path = CACHE / f"{voice}-{key}.wav"
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp.wav")
        if engine == "hibari":
            sf.write(tmp, _hibari(name)(text, seed=0), 24000, subtype="PCM_16")
        else:
            if engine == "flite":
                cmd = ["flite", "-voice", name, "-t", text, "-o", str(tmp)]
            elif engine == "festival":
                cmd = ["text2wave", "-eval", f"(voice_{name})", "-o", str(tmp)]
            else:
                cmd = ["espeak-ng", "-v", name, "-w", str(tmp), text]
            subprocess.run(cmd, input=text.encode() if engine == "festival" else None, check=True,
                           capture_output=True, timeout=60)
        if pitch_cents:
            shifted = tmp.with_suffix(".p.wav")
            subprocess.run(["sox", str(tmp), str(shifted), "pitch", str(pitch_cents)], check=True,
                           capture_output=True, timeout=60)
            tmp.unlink()
            shifted.rename(tmp)
        tmp.rename(path)
    x, rate = sf.read(path, dtype="float32", always_2d=True)
    return _trim(resample(x.mean(1), rate))


@functools.cache
def _hibari(voice: str):
    """hibari's voice model: only the bundled voice is used (the others download on first use)."""
    from hibari import Hibari

    return Hibari(voice=voice, threads=1)


def _trim(x: np.ndarray, thresh: float = 1e-3) -> np.ndarray:
    idx = np.flatnonzero(np.abs(x) > thresh)
    return x[idx[0]:idx[-1] + 1] if len(idx) else x


def level(x: np.ndarray, dbfs: float) -> np.ndarray:
    rms = np.sqrt(np.mean(x.astype(np.float64) ** 2)) + 1e-12
    return (x * (10 ** (dbfs / 20) / rms)).astype(np.float32)


def reverb(x: np.ndarray, rng: np.random.Generator, rt60: float, drr_db: float = 8.0) -> np.ndarray:
    """A plain room: direct path plus an exponentially decaying noise tail (-60 dB at rt60) whose
    energy sits drr_db below the direct sound. Output keeps the input's RMS level."""
    n = max(1, int(rt60 * SAMPLE_RATE))
    tail = rng.normal(0, 1, n) * np.exp(-6.9 * np.arange(n) / n)
    tail *= 10 ** (-drr_db / 20) / (np.sqrt(np.sum(tail ** 2)) + 1e-12)
    ir = np.concatenate([[1.0], np.zeros(int(0.002 * SAMPLE_RATE)), tail])
    y = np.convolve(x, ir)[:len(x)]
    return (y * np.sqrt(np.mean(x ** 2) / (np.mean(y ** 2) + 1e-12))).astype(np.float32)


def room(x: np.ndarray, rng: np.random.Generator, rt60: float = 0.3, drr_db: float = 8.0,
         snr_db: float = 20.0) -> np.ndarray:
    """`reverb`, then white noise `snr_db` below the speech: a far-field microphone in a plain room."""
    y = reverb(x, rng, rt60, drr_db)
    return (y + rng.normal(0, 1, len(y)) * np.sqrt(np.mean(y ** 2)) * 10 ** (-snr_db / 20)).astype(np.float32)


@dataclass
class Turn:
    speaker: str   # role-free name: the voice key, e.g. "awb"
    start: float
    end: float
    text: str


@dataclass
class Scene:
    samples: np.ndarray
    turns: list[Turn] = field(default_factory=list)      # whole utterances, with their text
    activity: list[Turn] = field(default_factory=list)   # where each voice is actually audible (RTTM)

    def rttm(self, uri: str) -> str:
        return "".join(f"SPEAKER {uri} 1 {t.start:.3f} {t.end - t.start:.3f} <NA> <NA> {t.speaker} <NA> <NA>\n"
                       for t in self.activity)

    def reference(self, n_frames: int) -> dict[str, np.ndarray]:
        """{voice: (n_frames,) bool} at 10 ms from the activity list."""
        ref: dict[str, np.ndarray] = {}
        for t in self.activity:
            m = ref.setdefault(t.speaker, np.zeros(n_frames, bool))
            m[round(t.start * 100):round(t.end * 100)] = True
        return ref

    def write(self, path: Path) -> None:
        sf.write(path, self.samples, SAMPLE_RATE, subtype="PCM_16")


def activity(x: np.ndarray, floor_db: float = 35.0, min_gap: float = 0.25, min_run: float = 0.1
             ) -> list[tuple[float, float]]:
    """(start, end) seconds where a clean clip is audible: 10 ms frames within floor_db of its loudest."""
    hop = SAMPLE_RATE // 100
    n = len(x) // hop
    if n == 0:
        return []
    e = 10 * np.log10(np.mean(x[:n * hop].reshape(n, hop).astype(np.float64) ** 2, axis=1) + 1e-12)
    on = e > e.max() - floor_db
    runs, start = [], None
    for i, v in enumerate(np.append(on, False)):
        if v and start is None:
            start = i
        elif not v and start is not None:
            runs.append([start, i])
            start = None
    merged: list[list[int]] = []
    for a, b in runs:
        if merged and a - merged[-1][1] < min_gap * 100:
            merged[-1][1] = b
        else:
            merged.append([a, b])
    return [(a / 100, b / 100) for a, b in merged if b - a >= min_run * 100]



def compose(parts: list[tuple[str, str, float, float]], *, seed: int = 0, noise_dbfs: float | None = -50,
            rt60: float = 0.0, pad: float = 0.3, pitch: dict[str, int] | None = None) -> Scene:
    """parts: (voice, text, start_seconds, level_dbfs). Starts may overlap earlier parts."""
    rng = np.random.default_rng(seed)
    clips = []
    for voice, text, start, db in parts:
        x = level(tts(voice, text, pitch_cents=(pitch or {}).get(voice, 0)), db)
        if rt60:
            x = reverb(x, rng, rt60)
        clips.append((voice, text, start + pad, x))
    total = max(s + len(x) / SAMPLE_RATE for _, _, s, x in clips) + pad
    out = np.zeros(int(total * SAMPLE_RATE), np.float32)
    turns, active = [], []
    for voice, text, start, x in clips:
        i = int(start * SAMPLE_RATE)
        out[i:i + len(x)] += x
        turns.append(Turn(voice, start, start + len(x) / SAMPLE_RATE, text))
        active.extend(Turn(voice, start + a, start + b, text) for a, b in activity(x))
    if noise_dbfs is not None:
        out += level(rng.normal(0, 1, len(out)).astype(np.float32), noise_dbfs)
    peak = np.abs(out).max()
    if peak > 0.99:
        out *= 0.99 / peak
    return Scene(out, sorted(turns, key=lambda t: t.start), sorted(active, key=lambda t: t.start))


def duration(voice: str, text: str) -> float:
    return len(tts(voice, text)) / SAMPLE_RATE


def conversation(main: str, main_lines: list[str], bystanders: list[tuple[str, list[str]]], *,
                 seed: int = 0, bystander_db: float = -10.0, overlap: float = 0.3, main_dbfs: float = -20.0,
                 noise_dbfs: float | None = -50, rt60: float = 0.0) -> Scene:
    """Main speaker's lines in sequence; each bystander line starts `overlap` seconds before the
    previous turn ends (partly overlapping). Bystanders sit `bystander_db` below the main speaker."""
    rng = np.random.default_rng(seed)
    parts, t = [], 0.0
    queue = [(main, line, main_dbfs) for line in main_lines]
    for voice, lines in bystanders:
        for line in lines:
            queue.insert(int(rng.integers(1, len(queue) + 1)), (voice, line, main_dbfs + bystander_db))
    for voice, text, db in queue:
        start = max(0.0, t - (overlap if voice != main or parts and parts[-1][0] != main else 0.0))
        parts.append((voice, text, start, db))
        t = start + duration(voice, text) + 0.25
    return compose(parts, seed=seed, noise_dbfs=noise_dbfs, rt60=rt60)


def background(main: str, main_lines: list[str], bystander: str, bystander_lines: list[str], *, seed: int = 0,
               bystander_db: float = -10.0, start: float = 1.0, main_dbfs: float = -20.0,
               noise_dbfs: float | None = -50, rt60: float = 0.0) -> Scene:
    """A bystander talking under the main speaker (SH-Bench's recordings: a voice in the background
    throughout): the main speaker's lines 0.25 s apart, the bystander's from `start` seconds, 0.4 s apart,
    `bystander_db` below. The bystander is heard alone only in the main speaker's pauses."""
    parts, t = [], 0.0
    for line in main_lines:
        parts.append((main, line, t, main_dbfs))
        t += duration(main, line) + 0.25
    t = start
    for line in bystander_lines:
        parts.append((bystander, line, t, main_dbfs + bystander_db))
        t += duration(bystander, line) + 0.4
    return compose(parts, seed=seed, noise_dbfs=noise_dbfs, rt60=rt60)


SENTENCES = [
    "The weather is going to be cold and rainy all weekend long.",
    "I usually take the early train to work on Monday mornings.",
    "My favourite dinner is roasted vegetables with a little rice.",
    "Could you turn the living room lights down a little bit please.",
    "We should repaint the fence before the end of the summer.",
    "The library closes at six on Saturdays and stays shut on Sundays.",
    "Remind me to water the tomato plants in the garden tomorrow.",
    "There is a new bakery on the corner that sells great bread.",
    "Our neighbours are going on holiday to Portugal next month.",
    "I need to buy batteries, milk, eggs and a loaf of bread.",
    "The football match starts at eight and finishes around ten.",
    "Please add a dentist appointment for next Thursday afternoon.",
    "The car needs new tyres before we drive up to the mountains.",
    "I finished reading that long history book about old ships.",
    "Set a timer for twenty minutes while the pasta is cooking.",
    "The children want pancakes with strawberries for breakfast.",
    "My brother is moving to a bigger flat across the river.",
    "We are out of coffee so put it on the shopping list.",
    "The heating makes a strange noise every night around midnight.",
    "I think the museum has a new exhibition about ancient maps.",
    "Call the plumber about the leaking pipe under the kitchen sink.",
    "The concert tickets went on sale this morning at nine.",
    "Let us plan a picnic by the lake if the sun comes out.",
    "I lost my umbrella on the bus again this afternoon.",
]
