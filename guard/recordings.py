"""Real recordings that ship inside installed packages, turned into scenes with references.

Every other test voice here is synthetic (guard.scenes). The one recording of real people on these
machines is pyannote.audio's `sample` (MIT): a 30 s telephone call between two women, Diane
(`speaker90`) and Sheila (`speaker91`), with a reference RTTM and a word transcript (STM). It is
narrowband, both voices share one channel and level, and the turns are short (0.4-6.7 s), which is
what a room with real people looks like to the guard and what the generator's voices never were.

`call_scene(main, bystander_db)` keeps the main speaker's stretches as recorded and scales the other
voice's by `bystander_db` (0: the call as recorded), so the same real voices stand in front and behind,
as in SH-Bench's recordings. Where the two overlap (1.9 s in six stretches) both stay as recorded.
"""
from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

from guard.audio import SAMPLE_RATE, resample
from guard.scenes import Scene, Turn

CALL_SPEAKERS = ("speaker90", "speaker91")
CALL_NAMES = {"speaker90": "Diane", "speaker91": "Sheila"}


@dataclass(frozen=True)
class Recording:
    samples: np.ndarray      # float32 mono 16 kHz
    activity: list[Turn]     # reference speech (RTTM), text empty
    words: list[Turn]        # transcript lines (STM) with the speaker's RTTM name


def sample_folder() -> Path:
    """pyannote.audio's shipped sample folder; a clear error when the package is missing."""
    spec = importlib.util.find_spec("pyannote.audio")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("pyannote.audio is not installed; scripts/install.sh installs it")
    folder = Path(next(iter(spec.submodule_search_locations))) / "sample"
    if not (folder / "sample.wav").exists():
        raise FileNotFoundError(f"{folder}/sample.wav is missing: this pyannote.audio does not ship its sample "
                                "(4.0.7 does; scripts/install.sh installs a 4.x)")
    return folder


@functools.cache
def call() -> Recording:
    folder = sample_folder()
    x, rate = sf.read(folder / "sample.wav", dtype="float32", always_2d=True)
    activity = []
    for line in (folder / "sample.rttm").read_text().splitlines():
        p = line.split()
        start, dur = float(p[3]), float(p[4])
        activity.append(Turn(p[7], start, start + dur, ""))
    names = {v: k for k, v in CALL_NAMES.items()}
    words = []
    for line in (folder / "sample.stm").read_text().splitlines():
        _, _, who, start, end, *text = line.split()
        words.append(Turn(names[who], float(start), float(end), " ".join(text)))
    return Recording(resample(x.mean(1), rate), sorted(activity, key=lambda t: t.start), words)


def call_scene(main: str, bystander_db: float) -> Scene:
    """The recorded call with `main` as recorded and the other voice `bystander_db` down."""
    if main not in CALL_SPEAKERS:
        raise ValueError(f"main must be one of {CALL_SPEAKERS}, not {main!r}")
    rec = call()
    gain = np.ones(len(rec.samples), np.float32)
    mine = np.zeros(len(rec.samples), bool)
    for t in rec.activity:
        span = slice(round(t.start * SAMPLE_RATE), round(t.end * SAMPLE_RATE))
        if t.speaker == main:
            mine[span] = True
        else:
            gain[span] = 10 ** (bystander_db / 20)
    gain[mine] = 1.0
    return Scene((rec.samples * gain).astype(np.float32), list(rec.words), list(rec.activity))
