"""Whisper re-reading the sentence about the question with each option in it (decision 102), on real TTS
audio and the bundled Whisper base."""
from __future__ import annotations

import numpy as np
import pytest

from guard import scenes, text
from guard.backends.base import Task
from guard.backends.cascade import CascadeBackend
from guard.backends.recheck import Recheck
from guard.hearing.whisper import BUNDLED_BASE, shared

MANAGERS = ["Joaquin", "Katherine", "Siobhan", "Geoffrey"]
IDK = "I do not have the information to answer the question"


@pytest.fixture(scope="module")
def whisper():
    return shared(BUNDLED_BASE)


def said(voice: str, line: str):
    return scenes.level(scenes.tts(voice, line), -20)


def test_whisper_scores_what_was_said_above_what_was_not(whisper):
    clip = said("awb", "At work my new manager is Joaquin.")
    right, wrong = whisper.score(clip, ["at work my new manager is Joaquin",
                                        "at work my new manager is Katherine"])
    assert right > wrong + 3
    assert whisper.score(np.zeros_like(clip), ["at work my new manager is Joaquin"]) == [float("-inf")]


@pytest.mark.parametrize("voice, line, question, options, answer", [
    ("awb", "At work my new manager is Joaquin.", "Who is the speaker's new manager?", MANAGERS, "Joaquin"),
    ("kal", "Our son's football team is the Badgers.", "Which team does the son play for?",
     ["Rovers", "Hornets", "Badgers", "Comets"], "Badgers")])
def test_a_name_heard_as_other_words_is_read_back_in_its_sentence(whisper, voice, line, question, options,
                                                                  answer):
    clip = said(voice, line)
    words, _, sure = whisper.read(clip)
    assert answer.lower() not in [w for w, _, _ in words]   # the 1-best misses it: "walking", "the baddest"
    found = Recheck(whisper)(clip, words, question, options, sure)
    assert found is not None and options[found.option] == answer
    assert found.delta >= -12 and found.margin >= 5


def test_no_reading_without_the_question_s_words_beside_each_other(whisper):
    rc = Recheck(whisper)
    heard = text.words("at work my new manager is walking we are painting the hallway mustard")
    # two of the question's words, side by side
    assert rc.region(heard, "Who is the speaker's new manager?") == (0, 11, [3, 4])
    # one shared word ("new") is not the sentence about a plant: a bystander's question (decision 102)
    assert rc.region(heard, "Which plant is new in the living room?") is None
    # a question with one content word needs only it; a possessive meets its noun
    assert rc.region(text.words("you can find the bakery on middle"), "Where is the bakery?") is not None
    son = text.words("our son's football team is the bachelor's")
    assert rc.region(son, "Which team does the son play for?")[2] == [1, 3]
    # a question word the recogniser split in two ("land lord") is found, both halves anchors
    split = text.words("the land lord's name is gerald")
    assert rc.region(split, "Who is the landlord?") == (0, 6, [1, 2])
    assert rc.region(text.words("the land is ours"), "Who is the landlord?") is None
    clip = said("awb", "At work my new manager is Joaquin.")
    words, _, sure = whisper.read(clip)
    assert Recheck(whisper)(clip, words, "Which plant is new in the living room?",
                            ["fern", "orchid", "bonsai", "cactus"], sure) is None


def test_only_words_whisper_was_unsure_of_are_read_again():
    class Scores:   # records the readings; every one as likely as what was heard
        def score(self, audio, texts):
            self.texts = texts
            return [0.0] * len(texts)

    heard = text.words("from now on i travel to work by goldmine")
    timed = [(w, 0.3 * i, 0.3 * i + 0.25) for i, w in enumerate(heard)]
    sure = [0.95, 1.0, 0.97, 0.83, 0.91, 1.0, 1.0, 0.97, 0.72]   # Whisper base on the mini suite's scene
    scores = Scores()
    found = Recheck(scores)(np.ones(48000, np.float32), timed, "How will the speaker travel to work?",
                            ["car", "boat", "bicycle"], sure)
    assert found is None   # three readings alike: no margin
    # "goldmine" (0.72) alone is unsure: it, or "by goldmine", gives way to each option; "to" never does
    kept = "from now on i travel to work"
    assert set(scores.texts[1:]) == {f"{kept}{by} {o}" for o in ("car", "boat", "bicycle")
                                     for by in ("", " by")}
    # every word unsure: any word beside the question's may be read
    Recheck(scores)(np.ones(48000, np.float32), timed, "How will the speaker travel to work?",
                    ["car", "boat", "bicycle"], [0.5] * len(timed))
    assert any("travel car work" in r for r in scores.texts)
    # sureness unknown or not one per word: nothing is read again (not every word)
    scores.texts = None
    for unknown in ([], sure[:-1]):
        assert Recheck(scores)(np.ones(48000, np.float32), timed, "How will the speaker travel to work?",
                               ["car", "boat", "bicycle"], unknown) is None
    assert scores.texts is None


def test_selective_mode_answers_a_reread_name_and_only_where_nothing_named_an_option(monkeypatch, request):
    clip = said("awb", "At work my new manager is Joaquin.")
    options = MANAGERS[:2] + [IDK] + MANAGERS[2:]
    task = Task(prompt="", question="Who is the speaker's new manager?", options=options, selective=True,
                streams=[clip])
    on, off = CascadeBackend(), CascadeBackend(recheck=False)
    for backend in (on, off):
        request.addfinalizer(backend.close)   # their pocketsphinx worker processes
    assert off.generate(clip, task).startswith("C.")   # the text rules: "walking" names no option
    assert on.generate(clip, task) == "A. Joaquin"
    # GENERAL mode is not re-read: it answers its best-supported option as before
    general = Task(prompt="", question=task.question, options=options, selective=False, streams=[clip])
    assert on.generate(clip, general) == off.generate(clip, general)
    # a 1-best naming an option leaves the choice to the text rules, even when they say "I don't know".
    # (A name with one spelling: on session 33's machine Whisper wrote "Katherine" as "catherine", at 0.32,
    # where the same test had passed on earlier machines.) A spy stands for the re-reading.
    monkeypatch.setattr(on, "choose", lambda *a, **k: "C. " + IDK)
    monkeypatch.setattr(on, "meaning_margin", 0.0)   # the answer by meaning (decision 114) is tested apart
    read: list = []
    monkeypatch.setattr(on, "recheck", lambda *a, **k: read.append(a))
    named = said("awb", "At work my new manager is Grace.")
    assert "grace" in on.asr(named).best.split()
    graced = ["Joaquin", "Grace", IDK, "Siobhan", "Geoffrey"]
    assert on.generate(named, Task(prompt="", question=task.question, options=graced, selective=True,
                                   streams=[named])).startswith("C.")
    assert read == []   # not read again
    assert on.generate(clip, task).startswith("C.") and len(read) == 1   # "walking" names none: read again
