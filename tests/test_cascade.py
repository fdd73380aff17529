"""The cascade's evidence: keyword spotting on real TTS audio, and how SELECTIVE mode discounts it."""
from __future__ import annotations

import numpy as np
import pytest

from guard import scenes
from guard.backends.base import Task
from guard.backends.cascade import CascadeBackend
from guard.hearing.asr import Transcript

OPTIONS = ["red", "blue", "I do not have the information to answer the question", "green", "yellow"]


@pytest.fixture(scope="module")
def cascade() -> CascadeBackend:
    return CascadeBackend()


def test_spot_finds_a_spoken_option_and_skips_unknown_words(cascade):
    clip = scenes.level(scenes.tts("awb", "We are going to paint the kitchen blue next weekend."), -20)
    found = cascade.asr.spot(clip, ["blue", "zzqx"])
    assert found == {"blue"}
    assert cascade.asr.spot(np.zeros(16000, np.float32), ["blue"]) == set()


def test_spotted_option_counts_in_general_but_not_off_topic_in_selective(cascade):
    off_topic = Transcript("i usually take the early train to work on monday mornings")
    q = "What colour will the kitchen be?"
    # GENERAL: a detection is evidence even when the 1-best missed the word.
    assert cascade.choose(off_topic, q, OPTIONS, {"blue"}, 0.0).startswith("B.")
    # SELECTIVE: what the main speaker said is not about the question: the detection is discounted.
    assert cascade.choose(off_topic, q, OPTIONS, {"blue"}, 0.3).startswith("C.")
    on_topic = Transcript("we are going to paint the kitchen soon")
    assert cascade.choose(on_topic, q, OPTIONS, {"blue"}, 0.3).startswith("B.")


def test_general_mode_hears_the_mixture_as_well_as_each_voice(cascade, monkeypatch):
    heard = []

    class Spy:
        def __call__(self, audio):
            heard.append(len(audio))
            return Transcript("")

        def spot(self, audio, phrases, threshold):
            return set()

    monkeypatch.setattr(cascade, "asr", Spy())
    mix, a, b = np.ones(100, np.float32), np.ones(50, np.float32), np.ones(60, np.float32)
    cascade.generate(mix, Task("p", "q?", OPTIONS, selective=False, streams=[a, b]))
    assert heard == [50, 60, 100]
    heard.clear()
    cascade.generate(a, Task("p", "q?", OPTIONS, selective=True, streams=[a]))
    assert heard == [50]   # SELECTIVE: only the gated main speaker
