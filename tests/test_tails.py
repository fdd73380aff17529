"""Word tails: the SELECTIVE gate follows the main speaker's last word past an early change of speaker,
only while it is as loud as the main speaker, and a broken recogniser refuses (fails closed)."""
from __future__ import annotations

import numpy as np
import pytest

from guard.config import PolicySettings, load_settings
from guard.hearing import Diarization, Track
from guard.hearing.vad import FRAME
from guard.metrics import Metrics
from guard.policy import selective, tails
from guard.proto import guard_pb2 as pb
from guard.service import GuardService
from guard.store import open_store
from tests.test_fail_closed import OPTIONS, ScriptedBackend, ask

MAIN_END = 1.3   # where the main speaker really stops; diarization puts the change at 1.0 s


def noise(seconds: float, db: float, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).normal(size=round(seconds * 16000))
    return (x / np.sqrt(np.mean(x ** 2)) * 10 ** (db / 20)).astype(np.float32)


def two_voices(other_db: float) -> tuple[np.ndarray, Diarization, Track]:
    """The main speaker at -20 dBFS until MAIN_END, then another voice at `other_db` until 2.0 s;
    diarization (as written here) hands the change over at 1.0 s."""
    x = np.concatenate([noise(MAIN_END, -20, 0), noise(2.0 - MAIN_END, other_db, 1)])
    n = len(x) // FRAME
    main, other = np.zeros(n, bool), np.zeros(n, bool)
    main[:100], other[100:] = True, True
    d = Diarization(n, np.ones(n, bool), np.zeros(n, bool),
                    [Track("S1", main, np.zeros(4)), Track("S2", other, np.zeros(4))])
    return x, d, d.tracks[0]


WORDS = [("from", 0.05, 0.25), ("now", 0.25, 0.5), ("travel", 0.5, 0.8), ("by", 0.8, 0.95),
         ("boat", 0.95, MAIN_END), ("my", 1.32, 1.6)]


class Recogniser:
    """Returns scripted words and counts how often the request was transcribed."""

    def __init__(self, words=WORDS):
        self.words, self.calls = words, 0

    def __call__(self):
        self.calls += 1
        return self.words


def tail(x, d, main, words=WORDS, seconds=0.8, gap_db=6.0, margin_db=3.0, slack=0.0):
    return tails.extend(x, d, main, main.frames, Recogniser(words), seconds, gap_db, margin_db, slack)


def test_the_last_word_is_followed_to_its_end_and_no_further():
    x, d, main = two_voices(-32)
    out = tail(x, d, main)
    assert np.flatnonzero(out).tolist() == list(range(100, 130))   # "boat", not the next voice's "my"


def test_a_word_end_put_early_is_followed_through_its_loud_frames_within_the_slack():
    x, d, main = two_voices(-32)
    early = [*WORDS[:4], ("boat", 0.95, 1.22)]   # the recogniser ends "boat" 0.08 s before it ends
    assert np.flatnonzero(tail(x, d, main, words=early)).tolist() == list(range(100, 122))
    assert np.flatnonzero(tail(x, d, main, words=early, slack=0.1)).tolist() == list(range(100, 130))
    # the slack passes loud frames only: the quieter voice after MAIN_END stays out
    assert np.flatnonzero(tail(x, d, main, slack=0.3)).tolist() == list(range(100, 130))
    # and follows nothing by itself: no word followed, no slack
    assert not tail(x, d, main, words=[*WORDS[:4], ("boat", 1.2, 1.3)], slack=0.3).any()


def test_nothing_is_followed_where_the_next_voice_is_as_loud():
    x, d, main = two_voices(-23)
    heard = Recogniser()
    assert not tails.extend(x, d, main, main.frames, heard, 0.8, 6.0, 3.0).any()
    assert heard.calls == 0   # nothing to follow: the request is not transcribed


def test_a_tail_is_capped_and_needs_words():
    x, d, main = two_voices(-32)
    assert not tail(x, d, main, seconds=0.2).any()       # "boat" ends 0.3 s past the change
    assert not tail(x, d, main, words=[]).any()
    assert not tail(x, d, main, words=[*WORDS[:3], ("boat", 1.2, 1.3)]).any()   # starts too late to run on
    assert not tail(x, d, main, words=WORDS[3:]).any()   # too few of the main speaker's words to know its level


def test_a_turn_that_ends_in_silence_is_left_to_the_hangover():
    x, d, main = two_voices(-32)
    d.speech[100:115] = False
    heard = Recogniser()
    assert not tails.extend(x, d, main, main.frames, heard, 0.8, 6.0, 3.0).any() and heard.calls == 0


def test_a_quiet_word_is_not_followed():
    x, d, main = two_voices(-32)
    x[int(0.95 * 16000):int(MAIN_END * 16000)] *= 10 ** (-5 / 20)   # "boat" 5 dB under the main speaker
    assert not tail(x, d, main).any()
    assert tail(x, d, main, margin_db=6.0).any()


def test_the_gate_passes_the_tail_only_with_words_and_the_setting():
    x, d, main = two_voices(-32)
    on = PolicySettings(tail_seconds=0.8)
    passed = {k: np.abs(g.samples[int(1.05 * 16000):int(1.25 * 16000)]).max() > 0 for k, g in {
        "on": selective.gate(x, d, main, on, Recogniser()), "no words": selective.gate(x, d, main, on),
        "off": selective.gate(x, d, main, PolicySettings(tail_seconds=0.0), Recogniser())}.items()}
    assert passed == {"on": True, "no words": False, "off": False}
    g = selective.gate(x, d, main, on, Recogniser()).samples
    assert np.abs(g[int(1.35 * 16000):]).max() == 0.0   # the other voice after the word stays out


class BrokenRecogniser:
    def __init__(self):
        self.calls = 0

    def __call__(self, samples):
        self.calls += 1
        raise RuntimeError("decoder crashed")


@pytest.mark.parametrize("seconds", [0.8, 0.0])
def test_a_broken_recogniser_refuses_when_tails_are_on(tmp_path, hearing, scene, seconds):
    settings = load_settings(env={"GUARD_DATA_DIR": str(tmp_path), "GUARD_POLICY__TAIL_SECONDS": str(seconds)})
    backend, words = ScriptedBackend(["A. Seven thirty"]), BrokenRecogniser()
    service = GuardService(settings, open_store(settings), hearing, backend, Metrics(), words=words)
    r = ask(service, scene)
    if seconds:
        assert r.refused and r.reason == pb.POLICY_FAILED and backend.calls == [] and words.calls == 1
    else:   # off: the recogniser is never asked
        assert not r.refused and r.choice_letter == "A" and words.calls == 0
    assert r.answer == (OPTIONS[2] if seconds else "A. Seven thirty")
