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


def test_a_transcript_does_not_depend_on_what_was_heard_before():
    from guard.hearing.asr import Transcriber

    asr = Transcriber(cache_size=0)   # no cache: every call decodes
    clips = [scenes.conversation(v, [line], [], seed=i).samples for i, (v, line) in enumerate([
        ("slt", "Our holiday starts in November this year."),
        ("awb", "From now on I travel to work by car."),
        ("rms", "The new puppy is called Rosie and she loves the garden.")])]
    first = [asr(c) for c in clips]
    again = [asr(c) for c in reversed(clips)][::-1]
    assert [(t.best, t.nbest) for t in first] == [(t.best, t.nbest) for t in again]


def test_spotted_option_counts_in_general_but_not_off_topic_in_selective(cascade):
    off_topic = Transcript("i usually take the early train to work on monday mornings")
    q = "What colour will the kitchen be?"
    # GENERAL: a detection is evidence even when the 1-best missed the word.
    assert cascade.choose(off_topic, q, OPTIONS, {"blue"}, 0.0).startswith("B.")
    # SELECTIVE: what the main speaker said is not about the question: the detection is discounted.
    assert cascade.choose(off_topic, q, OPTIONS, {"blue"}, 0.3).startswith("C.")
    on_topic = Transcript("we are going to paint the kitchen soon")
    assert cascade.choose(on_topic, q, OPTIONS, {"blue"}, 0.3).startswith("B.")


def test_relevance_also_reads_the_runner_up_hypotheses(cascade):
    q = "What colour will the kitchen be?"
    garbled = Transcript("we decided to think of the country",
                         ["we decided to paint the kitchen", "we decided to think of the country"])
    assert cascade.choose(garbled, q, OPTIONS, {"blue"}, 0.3).startswith("B.")
    assert cascade.choose(Transcript(garbled.best), q, OPTIONS, {"blue"}, 0.3).startswith("C.")


def test_runner_up_words_count_in_selective_only_when_on_topic(cascade):
    q = "On what floor is the new flat?"
    options = ["I do not have the information to answer the question", "five", "three", "twenty", "eight"]
    # the main speaker's "buy cheese", misheard as "five g's" in a runner-up: not evidence about a flat
    off_topic = Transcript("for the party we still need to buy cheese",
                           ["for the party we still need to five g's"])
    assert cascade.choose(off_topic, q, options, set(), 0.0).startswith("B.")   # GENERAL: partial credit
    assert cascade.choose(off_topic, q, options, set(), 0.3).startswith("A.")   # SELECTIVE: off topic
    on_topic = Transcript("the new flat is on the floor nine", ["the new flat is on the floor five"])
    assert cascade.choose(on_topic, q, options, set(), 0.3).startswith("B.")


def test_part_of_an_option_counts_in_selective_only_when_on_topic(cascade):
    q = "At what time does the plumber arrive?"
    options = ["two o'clock", "four o'clock", "I do not have the information to answer the question",
               "six o'clock", "eleven o'clock"]
    # the main speaker's "floor fifteen", heard as "four fifteen": one word of "four o'clock"
    off_topic = Transcript("we moved to four fifteen of the building we decided to paint the kitchen grey")
    assert cascade.choose(off_topic, q, options, set(), 0.0).startswith("B.")   # GENERAL: half the option
    assert cascade.choose(off_topic, q, options, set(), 0.3).startswith("C.")   # SELECTIVE: off topic
    on_topic = Transcript("tomorrow the plumber comes at four in the afternoon")
    assert cascade.choose(on_topic, q, options, set(), 0.3).startswith("B.")


def test_plural_and_silent_e_share_a_stem():
    from guard import text

    assert text.content("castles") == text.content("a castle")
    assert text.content("pirates") == text.content("pirate") and text.content("boxes") == text.content("box")
    assert text.content("painting") == text.content("painted") == text.content("paint")


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


def test_recall_question_falls_back_to_the_closest_memory_line(cascade):
    memory = ["the library opens at nine in the morning", "we are throwing a surprise party for an eye on friday"]
    # topic misheard ("Emma" -> "him"): no window clears min_support, the closest memory line answers
    assert cascade.extract(" . ".join(memory), "what did i tell you about him", memory) in memory
    # no memory the requester may hear: "I don't know", never a guess from elsewhere
    assert cascade.extract("the library opens at nine", "what did i tell you about him", []).startswith("I do not")
    # a question that matches is answered from its window, not the fallback
    assert "library" in cascade.extract(" . ".join(memory), "when does the library open", memory)


@pytest.mark.parametrize("heard, repaired", [
    ("the train leaves from platform for", "the train leaves from platform four"),
    ("meet me at gate to at noon", "meet me at gate two at noon"),
    ("i take the bus to work", "i take the bus to work"),          # a preposition with its object stays
    ("there is room for the kids", "there is room for the kids"),
    ("i cleaned the floor too", "i cleaned the floor too"),
])
def test_counted_nouns_take_numbers_not_their_homophones(heard, repaired):
    from guard.hearing.asr import repair_numbers

    assert repair_numbers(heard) == repaired
