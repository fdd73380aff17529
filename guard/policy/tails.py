"""Word tails: the main speaker's last words where diarization placed the change of speaker too early.

Diarization places a change of speaker from windows of speech: where the next voice starts under the
main speaker's last word, the change can land 0.2-0.6 s early, and the SELECTIVE gate cut the word the
question was about ("... by boat", "... to Friday"). A recogniser places word boundaries better. The
guard transcribes the whole request with its own recogniser (the words are used for their times only
and dropped; they never reach the model or a log), and at each end of the passed audio where another
voice takes over, follows the words that run on from it: the passed audio is extended to the end of
the furthest such word, within `tail_seconds`, whose level is at most `tail_margin_db` under the median
of the main speaker's passed words (two quieter words in a row end the run). Level decides because that
is what tells the voices apart at a change: the main speaker is in front, and where the next voice is
not at least `tail_level_gap_db` quieter, nothing is extended. A word's RMS level is compared with
words' (frame medians sit 2-3 dB lower; decision 69 has the thresholds measured). The recogniser's word
ends can land early (tiny.en ended "Oscar" 0.08 s before its last syllable, after the "k"'s silence), so
past the last word followed, the audio passes on through the 10 ms frames as loud as a followed word
must be, within `slack_seconds`, until more than MAX_DIP quiet frames in a row (decision 73).

Shapes: 10 ms frames throughout (guard.hearing.vad.FRAME); words are (text, start_s, end_s).
"""
from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from guard.audio import dbfs, frame_dbfs
from guard.hearing import Diarization, Track
from guard.hearing.vad import FRAME, runs

Word = tuple[str, float, float]
Recogniser = Callable[[np.ndarray], list[Word]]   # the guard's own: audio -> words with their times
MAX_GAP_S = 0.15     # words further apart than this do not run on from each other
START_S = 0.1        # the first word must start no later than this after the passed audio ends
MAX_DIP = 3          # quiet 10 ms frames in a row that end a word's slack (the dip before a last burst)
MIN_WORDS = 3        # the main speaker's words (inside the passed audio) needed to know its word level


def source(recogniser: Recogniser | None, samples: np.ndarray) -> Callable[[], list[Word]] | None:
    """The gate's word source for one request: `recogniser(samples)` when called; None without one."""
    return None if recogniser is None else functools.partial(recogniser, samples)


def extend(samples: np.ndarray, d: Diarization, main: Track, passed: np.ndarray, words: Callable[[], list[Word]],
           tail_seconds: float, gap_db: float, margin_db: float, slack_seconds: float = 0.0) -> np.ndarray:
    """(n_frames,) bool: frames to pass beyond `passed` (the gate's frames) at the main speaker's turn
    ends. `words()` is called (the request transcribed) only where some turn end may have a tail."""
    out = np.zeros(d.n_frames, bool)
    own = passed & main.frames
    if tail_seconds <= 0 or not own.any():
        return out
    level = frame_dbfs(samples, d.n_frames, FRAME)
    typical, cap = float(np.median(level[own])), round(tail_seconds * 100)
    ends = [b for _, b in runs(passed) if _handed_over(d, main, level, typical, b, cap, gap_db)]
    if not ends:
        return out
    heard = words()
    inside = [dbfs(_audio(samples, a, b)) for _, a, b in heard if own[_frames(a, b)].mean() > 0.5]
    if len(inside) < MIN_WORDS:
        return out
    threshold = float(np.median(inside)) - margin_db
    for b in ends:
        e = _tail_end(samples, heard, b, cap, threshold)
        if e > b:
            e = _loud_until(samples, e, min(b + cap, e + round(slack_seconds * 100)), threshold)
        out[b:e] = True
    return out


def _handed_over(d: Diarization, main: Track, level: np.ndarray, typical: float, b: int, cap: int,
                 gap_db: float) -> bool:
    """Whether the passed audio ending at frame `b` hands over to another voice at least `gap_db` quieter
    than the main speaker (median levels); a turn that ends in silence is the gate's hangover's."""
    if b >= d.n_frames or not d.speech[b:b + round(START_S * 100) + 1].any():
        return False
    other = _taking_over(d, main, b, cap)
    if other is None or not (other.frames & ~d.overlap).any():
        return False
    return typical - float(np.median(level[other.frames & ~d.overlap])) >= gap_db


def _frames(start: float, stop: float) -> slice:
    return slice(round(start * 100), max(round(stop * 100), round(start * 100) + 1))


def _audio(samples: np.ndarray, start: float, stop: float) -> np.ndarray:
    f = _frames(start, stop)
    return samples[f.start * FRAME:f.stop * FRAME]


def _taking_over(d: Diarization, main: Track, b: int, cap: int) -> Track | None:
    """The voice (not the main speaker) with most frames in the `cap` frames after frame `b`."""
    best, most = None, 0
    for t in d.tracks:
        k = int(t.frames[b:b + cap].sum())
        if t is not main and k > most:
            best, most = t, k
    return best


def _loud_until(samples: np.ndarray, e: int, stop: int, threshold_db: float) -> int:
    """Where a followed word really ends when the recogniser put its end at frame `e` too early: one past
    the last 10 ms frame at or above `threshold_db` before `stop`, in a run from `e` broken by no more
    than MAX_DIP quiet frames in a row (a stop consonant's silence); `e` when none is loud."""
    end, quiet = e, 0
    for f in range(e, stop):
        if dbfs(samples[f * FRAME:(f + 1) * FRAME]) >= threshold_db:
            end, quiet = f + 1, 0
        else:
            quiet += 1
            if quiet > MAX_DIP:
                break
    return end


def _tail_end(samples: np.ndarray, words: list[Word], b: int, cap: int, threshold_db: float) -> int:
    """The frame where the tail ends: the end of the furthest word at or above `threshold_db` in the run
    of words from frame `b` (the first starting by START_S after `b`, each within MAX_GAP_S of the last,
    all ending within `cap` frames); the run stops at two quiet words in a row. `b` when none is loud."""
    best, last_end, misses = b, b / 100, 0
    for _, start, stop in sorted(words, key=lambda w: w[1]):
        if stop * 100 <= b:
            continue
        if start - last_end > (START_S if last_end == b / 100 else MAX_GAP_S) or stop * 100 > b + cap:
            break
        last_end = stop
        if dbfs(_audio(samples, start, stop)) >= threshold_db:
            best, misses = _frames(start, stop).stop, 0
        else:
            misses += 1
            if misses == 2:
                break
    return best
