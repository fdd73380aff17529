"""The SELECTIVE gate joins the main speaker's own speech that diarization heard as a second voice
(decision 71), and nothing else: real TTS voices, diarization written by hand."""
from __future__ import annotations

import numpy as np
import pytest

from guard import scenes
from guard.audio import dbfs
from guard.config import PolicySettings
from guard.hearing import Diarization, Track
from guard.hearing.vad import FRAME
from guard.policy import selective

FIRST = "The library closes at six on Saturdays and stays shut on Sundays."
SECOND = "We are out of coffee so put it on the shopping list."


def split_voice(second_voice: str, second_db: float, main_id: str = "", second_id: str = ""):
    """`awb` says FIRST at -20 dBFS, then `second_voice` says SECOND at `second_db`; diarization (as
    written here) hears two voices, one per sentence."""
    a = scenes.level(scenes.tts("awb", FIRST), -20.0)
    b = scenes.level(scenes.tts(second_voice, SECOND), second_db)
    x = np.concatenate([a, b]).astype(np.float32)
    n = len(x) // FRAME
    x = x[:n * FRAME]
    first, second = np.zeros(n, bool), np.zeros(n, bool)
    first[:len(a) // FRAME], second[len(a) // FRAME:] = True, True
    tracks = [Track("S1", first, np.zeros(4), len(a) / 16000, dbfs(a), speaker_id=main_id),
              Track("S2", second, np.zeros(4), len(b) / 16000, dbfs(b), speaker_id=second_id)]
    return x, Diarization(n, np.ones(n, bool), np.zeros(n, bool), tracks)


def second_passed(x: np.ndarray, d: Diarization, settings: PolicySettings) -> float:
    """Share of the second sentence's samples that reach the model."""
    out = selective.gate(x, d, d.tracks[0], settings).samples
    second = np.repeat(d.tracks[1].frames, FRAME)[:len(x)]
    return float(np.mean(out[second] != 0))


def test_the_main_speakers_sentence_heard_as_another_voice_passes():
    x, d = split_voice("awb", -21.0)
    assert second_passed(x, d, PolicySettings()) > 0.95
    assert selective.gate(x, d, d.tracks[0], PolicySettings()).joined == ("S2",)   # reported as main
    assert selective.gate(x, d, d.tracks[0], PolicySettings(same_voice_db=0)).joined == ()
    assert second_passed(x, d, PolicySettings(same_voice_db=0)) < 0.05   # off: withheld as before


@pytest.mark.parametrize("voice, db", [("slt", -20.0),    # as loud, another pitch
                                       ("awb", -30.0)])   # the same voice, 10 dB behind
def test_another_pitch_or_a_quieter_voice_is_withheld(voice, db):
    x, d = split_voice(voice, db)
    assert second_passed(x, d, PolicySettings()) < 0.05


@pytest.mark.parametrize("main_id, second_id", [("alice", ""), ("", "bob")])
def test_enrolled_voices_are_left_to_verification(main_id, second_id):
    x, d = split_voice("awb", -20.0, main_id, second_id)
    assert second_passed(x, d, PolicySettings()) < 0.05


def test_silence_joins_nothing():
    x, d = split_voice("awb", -20.0)
    x[np.repeat(d.tracks[1].frames, FRAME)[:len(x)]] = 0.0   # no pitch to compare
    j, main, joined = selective.join_same_voice(x, d, d.tracks[0], PolicySettings())
    assert j is d and main is d.tracks[0] and joined == ()


def test_the_foreground_speaker_counts_its_split_off_stretches():
    """Decision 101: diarization split the main voice in two (1.16 and 1.00 s of the louder half) and a
    third track, another voice, held 1.27 s. With the audio, a track's own stretches count together."""
    def scene(third_voice: str):
        parts = [scenes.level(scenes.tts("awb", FIRST), -20.0), scenes.level(scenes.tts("kal", SECOND), -22.0),
                 scenes.level(scenes.tts(third_voice, SECOND), -21.0)]
        x = np.concatenate(parts).astype(np.float32)
        n = len(x) // FRAME
        edges = np.cumsum([0] + [len(p) // FRAME for p in parts])
        tracks = []
        for k, (p, fg) in enumerate(zip(parts, (1.16, 1.27, 1.0))):
            frames = np.zeros(n, bool)
            frames[edges[k]:edges[k + 1]] = True
            tracks.append(Track(f"S{k + 1}", frames, np.zeros(4), len(p) / 16000, dbfs(p), foreground_seconds=fg))
        return x[:n * FRAME], Diarization(n, np.ones(n, bool), np.zeros(n, bool), tracks)

    x, d = scene("awb")
    assert selective.choose_main(d, PolicySettings()).track.label == "S2"       # by its own tracks alone
    assert selective.choose_main(d, PolicySettings(), x).track.label == "S1"    # S1 and S3 are one voice
    x, d = scene("slt")   # the third track another voice: nothing joins
    assert selective.choose_main(d, PolicySettings(), x).track.label == "S2"
