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
def cascade():
    backend = CascadeBackend()
    yield backend
    backend.close()   # its pocketsphinx worker process


def test_spot_finds_a_spoken_option_and_skips_unknown_words(cascade):
    clip = scenes.level(scenes.tts("awb", "We are going to paint the kitchen blue next weekend."), -20)
    found = cascade.asr.spot(clip, ["blue", "zzqx"])
    assert found == {"blue"}
    assert cascade.asr.spot(np.zeros(16000, np.float32), ["blue"]) == set()
    # the detection's time falls on the 1-best's "blue" (or its neighbours, when the 1-best misheard it)
    (_, start, end), = cascade.asr.spot_times(clip, ["blue"])
    assert "blue" in cascade.asr(clip).near(start, end, 0.3).split()


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


class Heard:
    """A recogniser stand-in: one transcript with word times, and keyword detections at given times."""

    def __init__(self, transcript: Transcript, hits: list[tuple[str, float, float]]):
        self.transcript, self.hits = transcript, hits

    def __call__(self, audio):
        return self.transcript

    def many(self, audios):
        return [self(a) for a in audios]

    def spot_times(self, audio, phrases, threshold):
        return [h for h in self.hits if h[0] in {p.lower() for p in phrases}]


def timed(*sentences: tuple[str, float]) -> Transcript:
    """A transcript of sentences starting at the given seconds, a word every 0.3 s."""
    words = [(w, t + 0.3 * i, t + 0.3 * i + 0.25) for line, t in sentences for i, w in enumerate(line.split())]
    return Transcript(" ".join(line for line, _ in sentences), [], words)


def test_a_detection_counts_in_selective_only_on_topic_and_beside_a_word_heard(cascade, monkeypatch):
    q = "What colour will the kitchen be?"
    heard = timed(("i usually take the early train to work on monday mornings", 0.0),
                  ("and we are going to paint the kitchen soon", 8.0))
    audio = np.ones(16000, np.float32)
    general = Task("p", q, OPTIONS, selective=False, streams=[audio])
    selective = Task("p", q, OPTIONS, selective=True, streams=[audio], checked=True)
    # "blue" detected inside the sentence about trains: a false alarm. The transcript as a whole is about
    # the kitchen (its later sentence), which let such detections through before they were judged locally.
    assert cascade.on_topic(heard, [("blue", 1.2, 1.5)], q, cascade.spot_min_relevance) == set()
    assert cascade.on_topic(heard, [("blue", 10.7, 11.0)], q, cascade.spot_min_relevance) == {"blue"}
    monkeypatch.setattr(cascade, "asr", Heard(heard, [("blue", 1.2, 1.5)]))
    assert cascade.generate(audio, general).startswith("B.")      # GENERAL: a detection is evidence
    # SELECTIVE: no evidence; with the guess (decision 119) the answer is the one likeness alone gives
    guessed = cascade.guess(heard, q, OPTIONS)
    assert guessed is not None and not guessed.startswith("B.")
    assert cascade.generate(audio, selective) == guessed
    unchecked = Task("p", q, OPTIONS, selective=True, streams=[audio])   # nothing withheld: no guess (121)
    assert cascade.generate(audio, unchecked).startswith("C.")
    monkeypatch.setattr(cascade, "guess_min", 0.0)                # the text rules alone: I don't know
    assert cascade.generate(audio, selective).startswith("C.")
    # right after "paint the kitchen", but no recogniser hypothesis says "blue": a detection alone is not
    # evidence enough about what the main speaker said (decision 99: "may" and "watch" were false alarms
    # beside sentences like the question, and answered bystanders' questions)
    monkeypatch.setattr(cascade, "asr", Heard(heard, [("blue", 10.7, 11.0)]))
    assert cascade.generate(audio, selective).startswith("C.")
    named = timed(("i usually take the early train to work on monday mornings", 0.0),
                  ("and we are going to paint the kitchen blue soon", 8.0))
    monkeypatch.setattr(cascade, "asr", Heard(named, [("blue", 10.7, 11.0)]))
    assert cascade.generate(audio, selective).startswith("B.")
    real = [o for o in OPTIONS if not o.startswith("I do not")]
    detected, not_detected = (cascade.support(named, q, real, spotted, 0.3)[1] for spotted in ({"blue"}, set()))
    assert detected == pytest.approx(not_detected + cascade.spot_weight)   # beside a word heard, it adds


def test_relevance_also_reads_the_runner_up_hypotheses(cascade):
    q = "What colour will the kitchen be?"
    garbled = Transcript("we decided to think of the country",
                         ["we decided to paint the kitchen blue", "we decided to think of the country"])
    assert cascade.choose(garbled, q, OPTIONS, set(), 0.3).startswith("B.")
    off_topic = Transcript("i usually take the early train to work", ["i usually take the early blue train to work"])
    assert cascade.choose(off_topic, q, OPTIONS, set(), 0.3).startswith("C.")


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


def test_a_misheard_option_counts_as_weak_evidence(cascade):
    from guard import text

    def close(word, heard, ratio=0.85):
        return text.heard_close(word, text.heard_forms(heard), ratio)

    assert close("basketball", "my brother goes to play casket ball")   # two words run together
    assert close("thursday", "next thirsday afternoon")
    assert not close("cricket", "my brother plays rugby")
    assert not close("twelve", "twelfth")   # under 7 letters: no misspelling allowed
    assert not close("basketball", "casket ball", 0)   # 0 turns it off
    q = "What does the brother play at weekends?"
    options = ["rugby", "cricket", "basketball", "golf",
               "I do not have the information to answer the question"]
    heard = Transcript("every weekend my brother goes to play casket ball")
    assert cascade.choose(heard, q, options, set(), 0.3).startswith("C.")
    # off topic in SELECTIVE mode it is weak evidence that does not count
    q2 = "Which sport does the neighbour watch?"
    other = Transcript("we bought a new casket ball for the garden party")
    assert not cascade.choose(other, q2, options, set(), 0.3).startswith("C.")


def test_a_name_heard_as_it_sounds_counts_as_weak_evidence(cascade):
    from guard import text

    keys = text.sound_keys("our new neighbor's name is thomas the new neighbour introduced herself as the clan")
    assert text.sounds_heard("Tomasz", keys) and text.sounds_heard("Declan", keys)   # "the clan" run together
    assert not text.sounds_heard("Fatima", keys) and not text.sounds_heard("Margaret", keys)
    assert not text.sounds_heard("Priya", text.sound_keys("they prayed"))   # key "pra": too short to trust
    assert not text.sounds_heard("nine", text.sound_keys("no name"))        # under 5 letters
    assert not text.sounds_heard("Oisin", text.sound_keys("the bakery is on harrow street"))   # "is on": no content
    assert text.sounds_heard("Oisin", text.sound_keys("my nephew oaisen is coming to stay"))
    # the recogniser's "thomas" (tiny.en and base on the held-out voice, decision 100) for "Tomasz"
    q = "What is the name of the new neighbour?"
    names = ["Declan", "Tomasz", "Fatima", "Priya", "I do not have the information to answer the question"]
    heard = Transcript("i got my mother a watch for her birthday our new neighbor's name is thomas")
    assert cascade.choose(heard, q, names, set(), 0.3).startswith("B.")            # SELECTIVE
    off = object.__new__(CascadeBackend)
    off.__dict__.update(cascade.__dict__, sound_alike=False)
    assert off.choose(heard, q, names, set(), 0.3).startswith("E.")   # without it: I don't know
    # off the question's topic, a name that sounds heard is weak evidence that does not count
    other = Transcript("thomas brought the cake and we sang in the garden")
    assert cascade.choose(other, "Which city is the sister flying to?",
                          ["Tomasz City", "Paris", "Madrid", "Oslo", names[4]], set(), 0.3).startswith("E.")


def test_a_name_spelled_out_or_heard_in_a_runner_up_counts_as_weak_evidence(cascade):
    from guard import text

    assert text.spelled(text.words("my nephew d m i d r i is here i am")) == ["my", "nephew", "dmidri", "is",
                                                                           "here", "i", "am"]
    assert text.sounds_heard("Dmitri", text.sound_keys("my nephew d m i d r i is coming"))   # d/t meet
    assert text.sounds_heard("Marlowe", text.sound_keys("our new puppy is called marlo"))    # silent e, w
    assert text.sounds_heard("Achebe", text.sound_keys("a novel by a chabie"))   # a name's final e sounded
    assert text.sounds_heard("Geoffrey", text.sound_keys("my manager is called jeffrey"))    # soft g
    assert text.sounds_heard("Lindqvist", text.sound_keys("mr lindquist"))   # long keys one sound apart
    assert text.sounds_heard("brogues", text.sound_keys("i need new brooks for the wedding"))   # final "gue"
    assert not text.sounds_heard("brogues", text.sound_keys("i need new books for the wedding"))
    assert text.sound_key("Clarence") == text.sound_key("clarins")   # a c before a silent e is soft
    assert not text.sounds_heard("Lindqvist", text.sound_keys("mr lindsay"))
    assert not text.sounds_heard("Comets", text.sound_keys("he paid a commission"))
    # The held-out voice's teacher sentence (seed 412): the 1-best's "linquist" is two sounds off, the
    # first runner-up's "lindquist" one: weak evidence at that runner-up's rank
    q = "Who is the daughter's teacher?"
    names = ["Patel", "Lindqvist", "Brennan", "Moreau", "I do not have the information to answer the question"]
    heard = Transcript("last month my brother moved to worcester my daughter's teacher is mr linquist",
                       ["last month my brother moved to worcester my daughter's teacher is mr lindquist"])
    assert cascade.choose(heard, q, names, set(), 0.3).startswith("B.")
    assert cascade.choose(Transcript(heard.best), q, names, set(), 0.3).startswith("E.")   # 1-best alone
    # off the question's topic it is weak evidence that does not count
    assert cascade.choose(heard, "What name did they give the new puppy?",
                          ["Pepper", "Lindqvist", "Ziggy", "Biscuit", names[4]], set(), 0.3).startswith("E.")

def test_a_number_heard_inside_a_longer_number_and_a_past_form_name_no_option(cascade):
    # the main speaker's words, gated; each question is a bystander's (decision 100)
    idk = "I do not have the information to answer the question"
    heard = Transcript("last night we watched a film called red harbor we celebrated my grandmother turning "
                       "eighty two")
    prices = ["thirty", "forty", "eighty", "sixty", idk]
    assert cascade.choose(heard, "How much did the new jacket cost?", prices, set(), 0.3).startswith("E.")
    gifts = ["scarf", "book", "watch", "vase", idk]
    q = "What gift did the speaker buy for their mother's birthday?"
    assert cascade.choose(heard, q, gifts, set(), 0.3).startswith("E.")
    # nor does a past form whose plain word ends in "y" (its stem ends in "i": decision 118)
    rooms = ["study", "attic", "garage", "cellar", idk]
    studied = Transcript("last night we studied for the exam")
    assert cascade.choose(studied, "Which room did they paint?", rooms, set(), 0.3).startswith("E.")
    # said plainly, both are still heard
    said = Transcript("i paid eighty dollars for my new jacket and i bought my mother a watch")
    assert cascade.choose(said, "How much did the new jacket cost?", prices, set(), 0.3).startswith("C.")
    assert cascade.choose(said, q, gifts, set(), 0.3).startswith("C.")


def test_in_selective_an_option_word_said_about_something_else_names_nothing(cascade):
    # seed 412's gated main speaker as Whisper heard it: "Niamh" as "nine". The question is a bystander's
    # about a flight (decision 105).
    idk = "I do not have the information to answer the question"
    times = ["six fifteen", idk, "eight forty", "nine", "eleven"]
    q = "When does the flight take off?"
    small_talk = Transcript("at work my new manager is nine we are painting the hallway mustard")
    assert cascade.choose(small_talk, q, times, set(), 0.3).startswith("B.")
    assert cascade.choose(small_talk, q, times, set(), 0.0).startswith("D.")   # GENERAL mode: answered
    # said about the question: beside one of its words ...
    said = Transcript("we leave early tomorrow and the flight takes off at nine")
    assert cascade.choose(said, q, times, set(), 0.3).startswith("D.")
    # ... or in words like it, though the question's own word was misheard (the mini suite's plumber)
    plumber = Transcript("i have been learning to play the guitar this year tomorrow the flimmer arrives at "
                         "nine o'clock")
    hours = ["eight o'clock", "nine o'clock", "noon", idk, "ten o'clock"]
    assert cascade.choose(plumber, "When is the plumber coming?", hours, set(), 0.3).startswith("B.")
    assert cascade.off_topic(small_talk, q, {"nin", "work"}, {"flight", "tak", "off"}) == {"nin", "work"}
    # cut into its phrases (the speaker paused between them), the sentence about the manager is still
    # about something else
    paused = timed(("at work my new manager is nine", 0.0), ("we are painting the hallway mustard", 4.0))
    assert paused.phrases == ["at work my new manager is nine", "we are painting the hallway mustard"]
    assert cascade.choose(paused, q, times, set(), 0.3).startswith("B.")


def test_a_sentence_between_pauses_is_read_whole(cascade):
    # Two of seed 501's gated main speakers as Whisper heard them (decision 113). The sliding windows
    # astride a sentence also hold the next one's words: read that way, neither sentence is about its
    # question; read whole (the speaker paused before and after it), each is.
    idk = "I do not have the information to answer the question"
    mentor = timed(("my men taught old me i should learn to say no", 0.0),
                   ("we are celebrating the anniversary at the stake house on martin street", 4.0))
    advice = ["learn to say no", "ask for a pay rise", idk, "write everything down", "find a quieter desk"]
    q = "What advice did the mentor give?"
    assert cascade.choose(mentor, q, advice, set(), 0.3).startswith("A.")
    assert cascade.choose(Transcript(mentor.best), q, advice, set(), 0.3).startswith("C.")   # no times, no pauses
    launch = timed(("the vet thinks our cat might have an overactive thyroid", 0.0),
                   ("the plan is to release the product at the sprint rate fair", 4.0))
    when = ["right after the summer holidays", "just before the Christmas rush", idk, "at the start of next month",
            "at the spring trade fair"]
    q = "What is the suggested timeline for the product launch?"
    assert cascade.choose(launch, q, when, set(), 0.3).startswith("E.")
    assert cascade.choose(Transcript(launch.best), q, when, set(), 0.3).startswith("C.")
    # a phrase joins another transcript's with its own
    assert launch.joined(mentor).phrases == launch.phrases + mentor.phrases


def test_in_selective_an_option_nothing_heard_names_is_not_answered(cascade):
    # A background-layout scene's gated audio as Whisper heard it: the main speaker's own sentences. The
    # bystander's question about the meeting has four weekdays; MiniLM likeness puts "Saturday" a shade
    # over min_support though no day was said (decision 89).
    heard = Transcript("every weekend my brother goes to play football i lost my umbrella on the bus again "
                       "this afternoon my sister is flying to madrid next week")
    q = "When is the team meeting now?"
    days = ["Thursday", "Friday", "Saturday", "I do not have the information to answer the question", "Monday"]
    likeness = cascade.support(heard, q, days[:3] + days[4:])   # GENERAL: likeness alone
    assert likeness.max() >= cascade.min_support                # would answer
    assert cascade.choose(heard, q, days, set(), 0.3).startswith("D.")   # SELECTIVE: I don't know
    # named by what was heard: answered as before; a keyword detection alone does not name it (decision 99)
    said = Transcript("every weekend my brother goes to play football the team meeting moved to friday")
    assert cascade.choose(said, q, days, set(), 0.3).startswith("B.")
    assert cascade.choose(heard, q, days, {"monday"}, 0.3).startswith("D.")
    assert cascade.choose(said, q, days, {"friday"}, 0.3).startswith("B.")


def test_in_selective_an_option_said_in_other_words_is_answered_by_a_clear_margin(cascade, monkeypatch):
    # Seed 601's gated main speakers as Whisper heard them (facts_6: options that summarise what was
    # said, decision 114). No word heard names "Bias in hiring software": the text rules say "I don't
    # know"; what was said means it, by a clear margin over the other options.
    idk = "I do not have the information to answer the question"
    heard = Transcript("for my dissertation i am looking at whether recruitment programs treat some applicants "
                       "in fairleg what users hated about the old remote is that you had to change the "
                       "batteries every fortnight")
    q = "What is the topic of the speaker's thesis?"
    thesis = ["Artificial intelligence in schools", "Data privacy in hospitals", "Bias in hiring software", idk,
              "Renewable energy in farming"]
    assert cascade.choose(heard, q, thesis, set(), 0.3).startswith("D.")
    assert cascade.in_other_words(heard, q, thesis) == "C. Bias in hiring software"
    # a bystander's question about something the main speaker did not talk about: no option is that like
    deadline = ["Health insurance enrollment", "A student loan repayment", idk, "A parking fine", "Tax filing"]
    assert cascade.in_other_words(heard, "What type of deadline did the speaker miss?", deadline) is None
    # the question's topic with a value not among the options ("it stopped working from the other side
    # of the room"): two options are about as like it, so nothing is answered
    remote = Transcript("the problem with old remote was that it stopped working from the other side of the "
                        "room speed matter so much in marketing since other firms steal anything good within days")
    problems = ["Disorganised buttons", "It was too heavy", idk, "Short battery life", "It broke easily"]
    assert cascade.in_other_words(remote, "What problem did the speaker identify with the old remote?",
                                  problems) is None
    # wired after the text rules and the re-reading, in SELECTIVE mode only; margin 0 turns it off
    audio = np.ones(16000, np.float32)
    monkeypatch.setattr(cascade, "asr", Heard(heard, []))
    monkeypatch.setattr(cascade, "recheck", None)
    assert cascade.generate(audio, Task("p", q, thesis, selective=True, streams=[audio])).startswith("C.")
    general = cascade.generate(audio, Task("p", q, thesis, selective=False, streams=[audio]))
    monkeypatch.setattr(cascade, "meaning_margin", 0.0)
    monkeypatch.setattr(cascade, "guess_min", 0.0)   # the guess after it (decision 119) is tested apart
    assert cascade.generate(audio, Task("p", q, thesis, selective=True, streams=[audio])).startswith("D.")
    assert cascade.generate(audio, Task("p", q, thesis, selective=False, streams=[audio])) == general


def test_in_selective_a_question_about_what_the_main_speaker_said_gets_the_best_supported_option(
        cascade, monkeypatch):
    # Seed 601's gated main speaker as Whisper heard it (facts_6). No word heard names "Exhausted", and the
    # answer by meaning is not clear enough (decision 114): the text rules say "I don't know". GENERAL
    # mode's best-supported option is the guess; the policy's withheld-speech check refuses it where the
    # question is about a bystander (decision 119).
    idk = "I do not have the information to answer the question"
    heard = Transcript("after the interview i honestly felt completely worn out and ready for bed my ex "
                       "suddenly reached out by posting me a handwritten note")
    q = "How did the speaker feel after the interview?"
    feel = ["Nervous about the result", "Exhausted", "Angry at the panel", "Relieved and hopeful", idk]
    assert cascade.choose(heard, q, feel, set(), 0.3).startswith("E.")
    assert cascade.in_other_words(heard, q, feel) is None
    general = cascade.choose(heard, q, feel, set(), 0.0, selective=False)
    # an option, not "I don't know": "Relieved and hopeful" under decision 123's weights, which lose this
    # one ("Exhausted" before them) and gain others: seed 601's Main-Gen 65.0 -> 70.0
    assert general == "D. Relieved and hopeful"
    assert cascade.guess(heard, q, feel) == general
    # a question about something the main speaker did not talk about: nothing is that like it
    deadline = ["Health insurance enrollment", "A student loan repayment", idk, "A parking fine", "Tax filing"]
    assert cascade.guess(heard, "What type of deadline did the speaker miss?", deadline) is None
    # wired last in SELECTIVE mode; guess_min 0 turns it off
    audio = np.ones(16000, np.float32)
    monkeypatch.setattr(cascade, "asr", Heard(heard, []))
    monkeypatch.setattr(cascade, "recheck", None)
    assert cascade.generate(audio, Task("p", q, feel, selective=True, streams=[audio], checked=True)) == general
    # never where the guard has no withheld speech to weigh the answer against (decision 121)
    assert cascade.generate(audio, Task("p", q, feel, selective=True, streams=[audio])).startswith("E.")
    monkeypatch.setattr(cascade, "guess_min", 0.0)
    assert cascade.generate(audio, Task("p", q, feel, selective=True, streams=[audio], checked=True)).startswith("E.")


def test_a_runner_up_word_beside_the_question_s_own_words_counts_in_selective(cascade):
    # A background-layout scene's main speaker, "I am going to work by bus from now on", as heard under a
    # bystander: the 1-best lost "bus", a runner-up kept it beside "work"; MiniLM puts that hypothesis at
    # 0.17 to the question, under the relevance bar, so only its place says it is about the question.
    q = "How will the speaker travel to work?"
    options = ["train", "bus", "bicycle", "boat", "I do not have the information to answer the question"]
    heard = Transcript("i am going to work by this from now on let us plan a picnic by the lake",
                       ["i'm growing to work by a bus from now on the planet as one of picnic by the way"])
    assert cascade.choose(heard, q, options, set(), 0.3).startswith("B.")
    assert cascade.beside("i'm growing to work by a bus from now on", {"travel", "work"}) >= {"bus"}
    # the same word far from any of the question's words is still weak evidence that does not count
    far = Transcript("i am going to work by this from now on let us plan a picnic by the lake",
                     ["i'm growing to work by the time and now one of those picnics by a bus"])
    assert cascade.choose(far, q, options, set(), 0.3).startswith("E.")


def test_in_selective_a_word_other_options_share_names_none_of_them(cascade):
    from guard.backends.cascade import naming_words

    q = "How long is left on the lease?"
    options = ["Two months", "I do not have the information to answer the question", "Four months",
               "Six months", "One year"]
    # "four months" heard as "for months": "months" is in three options and tells none of them apart
    heard = Transcript("the lease runs out at the end of the summer for months away")
    assert not cascade.choose(heard, q, options, set(), 0.0).startswith("B.")   # GENERAL: its best guess
    assert cascade.choose(heard, q, options, set(), 0.3).startswith("B.")      # SELECTIVE: no option named
    said = Transcript("the lease runs out at the end of the summer four months away")
    assert cascade.choose(said, q, options, set(), 0.3).startswith("C.")
    # an option whose words all others share keeps them; one with words of its own is named by those
    assert naming_words([{"red", "blue"}, {"red"}, {"blue"}]) == [{"red", "blue"}, {"red"}, {"blue"}]
    assert naming_words([{"two", "month"}, {"six", "month"}]) == [{"two"}, {"six"}]


def test_a_grammar_word_in_a_runner_up_is_not_evidence(cascade):
    # seed 602 (session 40): a bystander's question, the main speaker's letter about a parking ticket;
    # tiny.en's runner-up "missed taking the ticket" answered it "Taking photos of doorways"
    q = "What does the speaker always do on arriving in a new city?"
    options = ["I do not have the information to answer the question", "Riding the first bus to the end",
               "Writing postcards to themselves", "Taking photos of doorways", "Eating street food at midnight"]
    heard = Transcript(
        "stuck with the application i ended up going to see my careers advisor at school i got a letter saying"
        " i had missed aint the ticket from when i parked outside the station",
        [("stuck with the application i ended up went to see my career advisor at school i got a letter saying"
         " i had missed taking the ticket from when i parked outside the station"),
         ("stop with the application i ended up went to see my careers advisor that's cool i've got a letter"
         " saying by this they take it from when i thought that's like the station"),
         ("stop with the application i ended up went to see my career advice about school i've got a letter"
         " stating my father's they ticket from when i thought that's like the station")])
    assert cascade.choose(heard, q, options, set(), 0.3).startswith("A.")
    # in the 1-best a grammar word still counts: "has been" in "our son has been picked on"
    q = "What news did the parents get about their boy?"
    options = ["He is top of the class", "He has been bullied", "He talks too much in lessons",
               "I do not have the information to answer the question"]
    said = Transcript("the teacher told us our son has been picked on by some older kids")
    assert cascade.choose(said, q, options, set(), 0.0, selective=False).startswith("B.")
    # (SELECTIVE mode now answers it "I don't know": "has been" names the option only in part, and the
    # words around it are likest another option, decision 117; the price of that rule, measured)
    assert cascade.choose(said, q, options, set(), 0.3).startswith("D.")


def test_british_and_american_spellings_share_a_stem():
    from guard import text

    for british, american in [("colour", "color"), ("neighbours", "neighbors"), ("centre", "center"),
                              ("theatre", "theater"), ("travelled", "traveled"), ("organised", "organized"),
                              ("analyse", "analyze"), ("catalogue", "catalog"), ("defence", "defense"),
                              ("jewellery", "jewelry"), ("grey", "gray"), ("tyres", "tires")]:
        assert text.stem(british) == text.stem(american), british
    # words with no British form keep apart from their neighbours
    stems = [text.stem(w) for w in ("four", "hour", "your", "tour", "spelled", "telling", "rise", "size")]
    assert stems == ["four", "hour", "your", "tour", "spell", "tell", "ris", "siz"]
    assert text.stem("spelled") != text.stem("sped") and text.stem("filled") != text.stem("filed")


def test_in_selective_an_option_named_in_part_must_be_the_likest_where_it_is_said(cascade):
    # seed 702 (session 41): "drives me mad" says "drive", one word of "Parking in front of their drive";
    # the words around it are more like another option, so it names none (the main speaker said loud music,
    # or rubbish, neither among these options)
    q = "Why is the speaker annoyed with the neighbour?"
    idk = "I do not have the information to answer the question"
    options = [idk, "Smoke from a bonfire", "Parking in front of their drive", "Rubbish left outside", "A barking dog"]
    music = ("our neighbor drives me mad because he plays his stereo at full blast after midnight we go all on"
             " sunday i took an elbow to the face and it's all bruised")
    rubbish = ("our neighbor drives me mad because bags of waste pile up by the fence i am leaving my job because"
               " my bus shouts at everyone")
    for said in (music, rubbish):
        assert cascade.choose(Transcript(said), q, options, set(), 0.3, selective=True).startswith("A."), said
        # GENERAL mode keeps its reading
        assert cascade.choose(Transcript(said), q, options, set(), 0.0, selective=False) != options[0]
    # an option named in part where it is the likest is answered: "send a postcard to my own address"
    q = "What does the speaker always do on arriving in a new city?"
    options = ["Taking photos of doorways", idk, "Riding the first bus to the end", "Eating street food at midnight",
               "Writing postcards to themselves"]
    said = Transcript("when i land in a new city i always send a postcard to my own address walking out of the station")
    assert cascade.choose(said, q, options, set(), 0.3, selective=True).startswith("E.")


def test_an_adjective_in_y_meets_its_noun(cascade):
    from guard import text

    for adjective, noun in [("salty", "salt"), ("rainy", "raining"), ("cloudy", "clouds"), ("tasty", "taste"),
                            ("smoky", "smoke"), ("messy", "mess"), ("sleepy", "sleeping"), ("windy", "wind")]:
        assert text.stem(adjective) == text.stem(noun), adjective
    # ... but not where the shorter word is another word
    for one, other in [("party", "part"), ("ready", "read"), ("forty", "fort"), ("eighty", "eight"),
                       ("busy", "bus"), ("sunny", "sun"), ("factory", "factor"), ("carry", "car"),
                       ("billy", "bill"), ("early", "earl"), ("county", "count"), ("every", "ever")]:
        assert text.stem(one) != text.stem(other), one
    # seed 702 (session 41): the main speaker's "salt" names "It was too salty" in SELECTIVE mode
    q = "What was wrong with the food?"
    options = ["It was too salty", "It was the wrong order", "It was cold", "It was undercooked",
               "I do not have the information to answer the question"]
    said = Transcript("the dinner went back to the kitchen since i could not taste anything but salt teacher told"
                      " us our son has been picked on by some older kids")
    assert cascade.choose(said, q, options, set(), 0.3, selective=True).startswith("A.")


def test_plural_and_silent_e_share_a_stem():
    from guard import text

    assert text.content("castles") == text.content("a castle")
    assert text.content("pirates") == text.content("pirate") and text.content("boxes") == text.content("box")
    assert text.content("painting") == text.content("painted") == text.content("paint")
    # a noun or verb in "-y" meets its "-ies" and "-ied" forms; seed 601 (session 42): "you had to change
    # the batteries every fortnight" says the "battery" of "Short battery life" as a word heard, not misheard
    for one, other in [("battery", "batteries"), ("city", "cities"), ("study", "studied"), ("carry", "carries"),
                       ("movie", "movies"), ("party", "parties")]:
        assert text.content(one) == text.content(other), one
    assert text.content("day") == text.content("days") and text.content("taxi") == text.content("taxis")
    # a possessive names its noun: the question's "son" is the heard "son's"; "speaker's" is a stop word
    assert text.content("our son's team") == text.content("the son and the team") == {"son", "team"}
    assert text.content("the speaker's parents' car") == {"parent", "car"} and text.stem("it's") == "it"


def test_general_mode_hears_the_mixture_as_well_as_each_voice(cascade, monkeypatch):
    heard = []

    class Spy:
        def __call__(self, audio):
            heard.append(len(audio))
            return Transcript("")

        def many(self, audios):
            return [self(a) for a in audios]

        def spot_times(self, audio, phrases, threshold):
            return []

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


def test_the_second_whisper_is_named_in_config_and_shared():
    from guard.backends import make_backend
    from guard.config import BackendSettings
    from guard.hearing.whisper import BUNDLED, BUNDLED_BASE, shared

    made = [make_backend(BackendSettings(**kw)) for kw in (
        {}, {"cascade_second_whisper": ""}, {"cascade_whisper": ""}, {"cascade_second_whisper": BUNDLED_BASE})]
    for backend in made:
        backend.close()   # their pocketsphinx worker processes
    default, no_second, sphinx_alone, lead_twice = made
    assert default.asr.lead is shared(BUNDLED_BASE) and default.asr.second is shared(BUNDLED)
    assert no_second.asr.second is None
    assert sphinx_alone.asr.second is None   # pocketsphinx alone
    assert lead_twice.asr.second is None   # the lead named twice


def test_general_mode_answers_its_best_supported_option_where_selective_says_i_dont_know(cascade, monkeypatch):
    # GENERAL: every question has an answer in the audio, so "I don't know" is never right there; the
    # best-supported option is (decision 98). SELECTIVE keeps the floor: a guess about a bystander is the
    # error that matters. Nothing heard at all is "I don't know" in both.
    q = "What colour will the kitchen be?"
    heard = timed(("i usually take the early train to work on monday mornings", 0.0))   # support < 0.2
    audio = np.ones(16000, np.float32)
    monkeypatch.setattr(cascade, "asr", Heard(heard, []))
    general = cascade.generate(audio, Task("p", q, OPTIONS, selective=False, streams=[audio]))
    selective = cascade.generate(audio, Task("p", q, OPTIONS, selective=True, streams=[audio]))
    assert general[0] in "ABDE"   # an option, not C ("I don't know")
    assert selective.startswith("C.")
    monkeypatch.setattr(cascade, "general_min_support", cascade.min_support)   # the old rule, by setting
    assert cascade.generate(audio, Task("p", q, OPTIONS, selective=False, streams=[audio])).startswith("C.")
    monkeypatch.setattr(cascade, "general_min_support", 0.0)
    monkeypatch.setattr(cascade, "asr", Heard(Transcript(""), []))
    assert cascade.generate(audio, Task("p", q, OPTIONS, selective=False, streams=[audio])).startswith("C.")


def test_words_said_inside_a_longer_option_name_the_longer_one(cascade):
    from guard.backends.cascade import within_longer

    q = "How old did the grandmother turn?"
    ages = ["eighty two", "eighty", "seventy", "seventy five", "I do not have the information to answer the question"]
    for said, letter in (("my grandmother turned eighty two last weekend", "A."),   # likeness alone said "eighty"
                         ("last weekend my grandmother turned seventy five", "D."),
                         ("my grandmother turned eighty last weekend", "B.")):
        for selective in (True, False):
            assert cascade.choose(Transcript(said), q, ages, set(), 0.3 if selective else 0.0,
                                  selective=selective).startswith(letter), (said, selective)
    # said on its own elsewhere too, the shorter option stays heard
    assert within_longer("the jacket was seventy and she turned seventy five", ["seventy", "seventy five"]) == [
        False, False]
    assert within_longer("ember and oak", ["Ember and Oak", "Oak", "Blue Kettle"]) == [False, True, False]


def test_in_selective_a_runner_up_word_counts_only_where_that_runner_up_agrees_with_the_1_best(cascade):
    from guard import text

    # seed 405, background layout (decision 122): the main speaker's gated audio. pocketsphinx read a whole
    # stretch its own way, and its "seventy's" and "fish" answered two bystanders' questions
    best = ("my dentist appointment is on the twenty first of the moon library closes at six on saturdays and"
            " thursdays on sundays i got my mother camera for her birthday")
    garble = ("my dentist appointment is over twenty thirty per month library of voters and seventy's and fish"
              " farms and is i got my mother camera or for it")
    kept = text.words(text.agreeing(best, garble, 3))
    assert "fish" not in kept and "seventy's" not in kept and {"dentist", "mother", "camera"} <= set(kept)
    assert set(text.words(text.agreeing(best, garble, 0))) <= set(text.words(best))   # what both say
    heard = Transcript(best, [garble])
    hobby = ["swimming", "I do not have the information to answer the question", "cycling", "hiking", "fishing"]
    q = "What does the speaker do with friends on Sundays?"
    assert cascade.choose(heard, q, hobby, set(), 0.3).startswith("B.")                    # SELECTIVE
    assert cascade.choose(heard, q, hobby, set(), 0.0, selective=False).startswith("E.")   # GENERAL: whole
    everywhere = object.__new__(CascadeBackend)
    everywhere.__dict__.update(cascade.__dict__, agree_span=0)
    assert everywhere.choose(heard, q, hobby, set(), 0.3).startswith("E.")   # 0: counted everywhere
    # a few words read in place of the 1-best's, between words both share, still count (seed 403)
    plumber = Transcript("while the past is cooking the plumbers coming up to a clock tomorrow",
                         ["while the pasta is cooking the plumber is coming at two o'clock tomorrow"])
    times = ["nine o'clock", "four o'clock", "I do not have the information to answer the question",
             "seven o'clock", "two o'clock"]
    assert cascade.choose(plumber, "At what time does the plumber arrive?", times, set(), 0.3).startswith("E.")


def test_in_selective_a_name_heard_as_it_sounds_beside_the_question_s_words_counts(cascade):
    # seed 404, background layout (decision 122): "brogues" heard as "brooks", in a sentence MiniLM puts
    # under the relevance bar (0.14 to the question here, 0.19 in the suite); beside "need" it still counts
    q = "Which shoes does the speaker need?"
    shoes = ["I do not have the information to answer the question", "heels", "trainers", "brogues", "loafers"]
    heard = Transcript("my brother is moving to a bigger flat now i need new brooks for the wedding")
    assert cascade.choose(heard, q, shoes, set(), 0.3).startswith("D.")
    assert cascade.near_question(heard.best, {"need"}) == "bigger flat now i need new brooks for the"
    # a grammar word of the question places nothing: "virtue" sounds like "forty", beside "has" (seed 404)
    assert cascade.near_question("by virtue of museum has a new exhibition", {"has", "meet", "mov"}) == ""
    # the same word far from any of the question's words is weak evidence that does not count
    far = Transcript("the brooks in the valley ran dry my brother is moving to a bigger flat in june")
    assert cascade.choose(far, q, shoes, set(), 0.3).startswith("A.")


def test_general_mode_weighs_an_option_said_in_other_words_by_its_own_likeness(cascade, monkeypatch):
    # "question + option" is mostly the question, which all five options share; the option's own likeness
    # tells summaries apart, and a word an option shares with another sentence ("end", said about the
    # lease) weighs less (decision 123). The old weights, by setting, answer the bus. Read through MiniLM, the
    # encoder decision 123 was measured with: through MPNet (decision 128) "first" and "end" still answer the
    # bus, the two options' "question + option" likeness being level (0.549 and 0.548)
    monkeypatch.setattr(cascade, "general_encoder", "minilm")
    q = "What does the speaker always do on arriving in a new city?"
    options = ["Buying toothpaste from a local shop", "Taking photos of doorways", "I don't know",
               "Eating street food at midnight", "Riding the first bus to the end"]
    heard = Transcript("whenever i arrive somewhere new the first thing i do is walk around snapping pictures of "
                       "front doors we checked the lease and it turns out we must leave before the end of the "
                       "month in about twenty days")
    assert cascade.choose(heard, q, options, set(), 0.0, selective=False) == "B. Taking photos of doorways"
    monkeypatch.setattr(cascade, "general_alone", 0.0)
    monkeypatch.setattr(cascade, "general_words", 1.0)
    assert cascade.choose(heard, q, options, set(), 0.0, selective=False) == "E. Riding the first bus to the end"


@pytest.mark.parametrize("said, question, options, right", [
    (("after the interview i honestly felt completely worn out and ready for bed in marketing you have to be quick "
      "because what people want shifts from one week to the next"), "How did the speaker feel after the interview?",
     ["Relieved and hopeful", "Disappointed in themselves", "Nervous about the result", "Exhausted", "I don't know"],
     "D. Exhausted"),
    (("once the signal reaches the television it changes over to whatever you picked in marketing you have to be "
      "quick because what people want shifts from one week to the next"), "What happens after the signal reaches the TV?",
     ["It goes into standby", "It raises the volume", "It restarts itself", "It switches to the chosen function",
      "I don't know"], "D. It switches to the chosen function"),
])
def test_general_mode_reads_a_summary_through_mpnet(cascade, monkeypatch, said, question, options, right):
    # an option that summarises what was said, in none of its words: MPNet puts it first, MiniLM (the setting
    # 'minilm') another option (decision 128); SELECTIVE mode's rules keep MiniLM
    heard = Transcript(said)
    assert cascade.general_encoder == "bundled-mpnet"
    assert cascade.choose(heard, question, options, set(), 0.0, selective=False) == right
    monkeypatch.setattr(cascade, "general_encoder", "minilm")
    assert cascade.choose(heard, question, options, set(), 0.0, selective=False) != right


def test_general_mode_counts_an_option_s_words_only_where_the_talk_is_about_the_question(cascade, monkeypatch):
    # seed 701, as heard (decision 134): "there", said about the car, was half of "There was a hair in it" heard
    # and outweighed the chicken still pink inside. Counted only in the four passages most like the question,
    # it is not heard; by setting (0), anywhere in the transcript
    meal = ["It was undercooked", "There was a hair in it", "I do not have the information to answer the question",
            "It was the wrong order", "It was too salty"]
    heard = Transcript("i was late this morning because my front wheel had a puncture the dinner went back to the "
                       "kitchen since the chicken was still pink inside during the match on sunday i managed to "
                       "tear a muscle in the back of my leg the mechanic told me there's a drip of oil coming from "
                       "underneath")
    q = "Why did the speaker send the meal back?"
    assert cascade.general_focus == 4
    assert cascade.choose(heard, q, meal, set(), 0.0, selective=False) == "A. It was undercooked"
    monkeypatch.setattr(cascade, "general_focus", 0)
    assert cascade.choose(heard, q, meal, set(), 0.0, selective=False) == "B. There was a hair in it"


@pytest.mark.parametrize("selective", [True, False])
def test_a_length_said_in_other_units_names_the_option(cascade, monkeypatch, selective):
    # "half a year" says "Six months" in other units: the option is written beside it before the word rules
    # read the transcript (guard.quantities, decision 131); by setting, it is not, and no option is named
    options = ["Two months", "Six months", "I do not have the information to answer the question", "One year",
               "Three weeks"]
    heard = timed(("the landlord reminded us that we only have half a year left on the lease", 0.0))
    audio = np.ones(16000, np.float32)
    monkeypatch.setattr(cascade, "asr", Heard(heard, []))
    monkeypatch.setattr(cascade, "recheck", None)
    ask = Task("p", "How long is left on the lease?", options, selective=selective, streams=[audio])
    assert cascade.generate(audio, ask) == "B. Six months"
    monkeypatch.setattr(cascade, "quantities", False)
    assert cascade.generate(audio, ask) != "B. Six months"


LATE = ["The train was cancelled", "A flat tyre", "I do not have the information to answer the question",
        "They overslept", "Heavy traffic"]


def test_general_mode_reads_meaning_from_the_second_recogniser_too(cascade, monkeypatch):
    # seed 701, as the two Whispers heard one main speaker: base (the lead) "had a function", tiny.en
    # "had a puncture" (decision 132). Read from the lead alone, GENERAL mode answers another option.
    heard = Transcript("i was late this morning because my front wheel had a function the dinner went back to the "
                       "kitchen since the chicken was still pink inside",
                       second="i was late this morning because my front wheel had a puncture the dinner went back "
                              "to the kitchen since the chicken was still pink inside")
    q = "Why was the speaker late?"
    assert cascade.choose(heard, q, LATE, set(), 0.0, selective=False) == "B. A flat tyre"
    monkeypatch.setattr(cascade, "meaning_second", False)
    assert cascade.choose(heard, q, LATE, set(), 0.0, selective=False) != "B. A flat tyre"


def test_in_selective_the_second_recogniser_says_what_a_sentence_is_about(cascade, monkeypatch):
    # the lead heard "the reason i got insolat", tiny.en "in so late": the question's own word, so what the
    # main speaker said is about the question and the option said in other words is answered (decision 132).
    # The word rules still read the lead's words alone: neither hypothesis names an option.
    heard = Transcript("the worst part of the holiday was that it never stopped pouring the whole week the reason "
                       "i got insolat is that my front wheel had a puncture",
                       second="the worst part of the holiday was that it never stopped pouring the whole week the "
                              "reason i got in so late is that my front wheel had a puncture")
    q = "Why was the speaker late?"
    assert cascade.choose(heard, q, LATE, set(), 0.3).startswith("C.")
    assert cascade.in_other_words(heard, q, LATE) == "B. A flat tyre"
    monkeypatch.setattr(cascade, "meaning_second", False)
    assert cascade.in_other_words(heard, q, LATE) is None
    assert cascade.guess(heard, q, LATE, set()) is None


def test_a_transcript_keeps_the_second_recogniser_s_words_when_joined():
    from guard.hearing.asr import Transcriber

    led = Transcriber._led(Transcript("a b", ["c d"]), [("x", 0.0, 0.5), ("y", 0.5, 1.0)], 0.9, second="x z")
    assert led.second == "x z" and led.nbest[0] == "x z"
    same = Transcriber._led(Transcript(""), [("x", 0.0, 0.5)], 0.9, second="x")
    assert same.second == ""   # nothing the 1-best did not say
    assert led.joined(Transcript("q", second="r s")).second == "x z . r s"
    assert Transcript("").joined(led).second == "x z"


def test_in_selective_mpnet_tells_whether_the_main_speaker_talked_about_the_question(cascade, monkeypatch):
    # seed 701's gated main speaker as heard (facts_7): no word names "Learning a language" and MiniLM puts
    # the sentence under the guess's bar (0.38), so SELECTIVE mode said "I don't know" where GENERAL mode
    # answered. Through MPNet (backend.cascade_guess_encoder, decision 135) it is about the question (0.41)
    idk = "I do not have the information to answer the question"
    said = ["the worst part of the holiday was that it never stopped pouring the whole week",
            "these days most afternoon i am practising my spanish verbs"]   # cut where the speaker paused
    heard = Transcript(" ".join(said), phrases=said,
                       second="the worst part of the holiday was that it never stopped pouring the whole week "
                              "these days most afternoons i am practising my spanish ribs")
    q = "What hobby has the speaker taken up?"
    hobby = [idk, "Gardening", "Volunteering", "Painting", "Learning a language"]
    assert cascade.choose(heard, q, hobby, set(), 0.3).startswith("A.")
    assert cascade.guess_encoder == "bundled-mpnet"
    assert cascade.guess(heard, q, hobby) == "E. Learning a language"
    # a question about something the main speaker did not talk about is still under the bar
    late = ["A flat tyre", idk, "Heavy traffic", "The train was cancelled", "Looking after a sick child"]
    assert cascade.guess(heard, "Why was the speaker late?", late) is None
    monkeypatch.setattr(cascade, "guess_encoder", "minilm")
    assert cascade.guess(heard, q, hobby) is None
