"""The answer check against withheld speech (decision 119): real TTS voices, real hearing, the guard's own
Whisper; the model behind the guard is scripted so that only the check decides."""
from __future__ import annotations

import pytest

from guard import scenes
from guard.hearing.asr import Transcriber
from guard.hearing.whisper import BUNDLED_BASE, shared
from guard.policy.withheld import WithheldCheck
from guard.proto import guard_pb2 as pb
from tests.test_fail_closed import make

IDK = "I do not have the information to answer the question"
PARTY = ["Saturday", "Sunday", IDK, "Friday"]            # the bystander's: "... the birthday party on Sunday?"
TABLE = ["Seven thirty", "Eight", IDK, "Noon", "Six"]     # the main speaker's: "around seven thirty"


@pytest.fixture(scope="module")
def check() -> WithheldCheck:
    return WithheldCheck(Transcriber(lead=shared(BUNDLED_BASE), runner_ups=False), 0.1)


def test_a_question_about_what_only_the_withheld_voice_said_is_refused(check):
    main = scenes.level(scenes.tts("awb", "We are going to paint the kitchen blue next weekend."), -20)
    other = scenes.level(scenes.tts("slt", "My flight to Tokyo leaves at half past seven tomorrow."), -20)
    flight = ["Seven thirty", "Noon", IDK, "Six"]
    v = check(main, [other], "When does the flight to Tokyo leave?", flight)
    assert v.refuse and v.withheld > v.heard
    kitchen = ["Blue", "Green", IDK, "Red"]
    v = check(main, [other], "What colour will the kitchen be painted?", kitchen)
    assert not v.refuse and v.heard > v.withheld + 0.1
    # nothing withheld, or only "I don't know" to choose from: nothing to weigh
    assert not check(main, [], "When does the flight to Tokyo leave?", flight).refuse
    assert not check(main, [other], "When does the flight to Tokyo leave?", [IDK]).refuse


def test_an_open_question_is_weighed_alone_and_the_memory_the_model_was_given_counts_as_heard(check):
    main = scenes.level(scenes.tts("awb", "We are going to paint the kitchen blue next weekend."), -20)
    other = scenes.level(scenes.tts("slt", "My flight to Tokyo leaves at half past seven tomorrow."), -20)
    v = check(main, [other], "When does the flight to Tokyo leave?", [])
    assert v.refuse and v.withheld > v.heard + 0.1
    v = check(main, [other], "What colour will the kitchen be painted?", [])
    assert not v.refuse and v.heard > v.withheld + 0.1
    # session memory the model was given counts as heard, its words as well
    v = check(main, [other], "When is my sister's wedding?", [], ["my sister's wedding is on the twelfth of june"])
    assert not v.refuse and v.heard > 0.7 and v.withheld < 0.3 and v.words == (2, 0)
    # by the same rule: where the withheld voice says it again, the question is as much about them (refused)
    v = check(main, [other], "When does the flight to Tokyo leave?", [],
              ["my flight to tokyo leaves at half past seven tomorrow"])
    assert v.refuse and v.heard > 0.8 and v.words == (3, 3)


def test_the_question_s_own_words_clear_an_answer_likeness_alone_would_refuse_but_never_refuse_one():
    # Gated main speakers and the voices withheld beside them, as Whisper base heard them (seeds 422 and
    # 702; decision 119). The recogniser is a stand-in: the rule is what is tested.
    import numpy as np

    from guard.hearing.asr import Transcript

    said = {1: "i baked a raspberry cake for the party our landlord is a man called stanislaus",
            2: "our new dentist is called dr fitzgerald for the holidays we rented a cottage near norway",
            3: "when i picked up the car the mechanics said the pads are almost gone say we got my mum a silver "
               "necklace with matching earrings",
            4: "our holiday is that we were sick for three days after a seafood dinner for her birthday",
            5: "for this evening the plan is to get out the chess set and the monopoly",
            6: "the teacher told us our son has been picked on by some older kids"}
    check = WithheldCheck(lambda audio: Transcript(said[int(audio[0])]), 0.1)
    heard = {k: np.full(4, k, np.float32) for k in said}
    # MiniLM puts the rented cottage within the margin of the landlord question, but only the main
    # speaker says "landlord": answered
    landlord = ["Rhys", "Leopold", "Cormac", IDK, "Stanislaw"]
    v = check(heard[1], [heard[2]], "What is the landlord called?", landlord)
    assert not v.refuse and v.words == (2, 1) and v.withheld > v.heard - 0.1   # "landlord", "called": "called"
    dentist = ["Dr Fitzgerald", "Dr Okonkwo", IDK, "Dr Shah"]
    v = check(heard[1], [heard[2]], "What is the new dentist called?", dentist)
    assert v.refuse and v.words == (1, 3)
    # ... but they tip only a near tie: "get" (a game night) is one of the question's words, and the withheld
    # "our son has been picked on" is far likelier (seed 702; decision 136)
    boy = ["He often forgets his homework", "He is top of the class in maths", "He has been bullied", IDK]
    v = check(heard[5], [heard[6]], "What news did the parents get about their boy?", boy)
    assert v.refuse and v.words == (1, 0) and v.withheld > v.heard + 0.1
    # the main speaker's own "for her birthday", which the gate withheld at a change of speaker, says more
    # of the question's words than what the model heard; its necklace is far likelier: answered
    present = ["A cookery course", "A new phone", "Jewellery", IDK, "Theatre tickets"]
    v = check(heard[3], [heard[4]], "What birthday present did the mother receive?", present)
    assert not v.refuse and v.words == (0, 1) and v.heard > v.withheld + 0.1
    # neither says the question's words: likeness decides, by the margin
    v = check(heard[1], [heard[2]], "Where did the speaker go?", ["A rented cottage", "A hotel", IDK, "A tent"])
    assert v.words == (0, 0) and v.refuse and v.withheld > v.heard + 0.1
    v = check(heard[1], [heard[2]], "What did the speaker make?", ["A raspberry cake", "Bread", IDK, "Cookies"])
    assert v.words == (0, 0) and not v.refuse and v.heard > v.withheld + 0.1


def test_the_second_recogniser_s_reading_counts_on_both_sides():
    # Seed 701 as Whisper base (lead) and tiny.en (second) heard it (decision 137); the recognisers are
    # stand-ins, the rule is what is tested. Base garbles what says what a sentence is about ("i can't accept it
    # only needed a quick check", "bracketizing my spamisher"); tiny.en often hears it ("the car the mechanic
    # said", "my spanish"), on the model's side and on the withheld side alike.
    import numpy as np

    from guard.hearing.asr import Transcript

    lead = {1: "i sent the meal back because i found a long hair in the sauce when i picked up the cardamom i "
               "can't accept it only needed a quick check and it's fine",
            2: "or this evening the plan is to be in bed by nine part of the holiday was that the rule has stains "
               "on the sheets and mulled in the shower",
            3: "i sent the meal back because i found a lung hair in the sauce at parents evening we heard that "
               "our boy beats everyone in his ear at sums",
            4: "this case must after me and i am bracketizing my spamisher"}
    second = {1: "i sent the meal back because i found a long hair in the sauce when i picked up the car the "
                 "mechanic said it only needed a quick check and is fine",
              2: "florida's evening the plan is to be in bed by nine part of the holiday was that the room has "
                 "stains on the sheets and mold in the shower",
              3: "i sent the meal back because i found a lung here in this loss at parents' evening we heard that "
                 "our boy beats everyone in his ear at sums",
              4: "these days most after i'm entirely advertising my spanish"}
    one = WithheldCheck(lambda audio: Transcript(lead[int(audio[0])]), 0.1)
    both = WithheldCheck(one.asr, 0.1, lambda audio: Transcript(second[int(audio[0])]))
    heard = {k: np.full(4, k, np.float32) for k in lead}
    garage = [IDK, "The battery is dead", "The brakes are worn", "An oil leak", "Nothing serious"]
    q = "What did the garage say was wrong with the car?"   # the main speaker's: answered with both
    v, w = one(heard[1], [heard[2]], q, garage), both(heard[1], [heard[2]], q, garage)
    assert v.refuse and not w.refuse and w.heard > v.heard + 0.1 and w.words == v.words == (0, 0)
    hobby = ["Bird watching", "Painting", "Volunteering", IDK, "Learning a language"]
    q = "What hobby has the speaker taken up?"   # the bystander's: refused with both
    v, w = one(heard[3], [heard[4]], q, hobby), both(heard[3], [heard[4]], q, hobby)
    assert not v.refuse and w.refuse and w.withheld > v.withheld + 0.1 and w.heard == pytest.approx(v.heard, abs=1e-5)
    # where the lead heard no words, the second's reading does not make them: decision 126's words rule decides
    lead[5], second[5] = "", "thank you"
    heard[5] = np.full(4, 5, np.float32)
    v, w = one(heard[5], [heard[2]], "When does the flight leave?", garage), both(heard[5], [heard[2]],
                                                                                  "When does the flight leave?", garage)
    assert v.heard == w.heard == 0.0 and not v.refuse and not w.refuse and v.words == w.words == (0, 0)


def with_check(tmp_path, hearing, check, replies, **env):
    service, backend = make(tmp_path, hearing, replies, **env)
    service.withheld = check
    return service, backend


def ask(service, scene, question, options):
    return service.ask(pb.AskRequest(audio=pb.Audio(float32=scene.samples.astype("<f4").tobytes(),
                                                    sample_rate=16000), mode=pb.SELECTIVE, question=question,
                                     options=options))


def test_the_service_refuses_an_answer_about_the_bystander_and_passes_the_main_speaker_s(tmp_path, hearing,
                                                                                          scene, check):
    service, _ = with_check(tmp_path, hearing, check, ["B. Sunday", "A. Seven thirty"])
    r = ask(service, scene, "When is the birthday party?", PARTY)
    assert r.refused and r.reason == pb.NOT_FROM_MAIN_SPEAKER and r.answer == IDK and r.choice_index == 2
    assert "withheld" in r.reason_text
    r = ask(service, scene, "What time should the table be booked for?", TABLE)
    assert not r.refused and r.choice_letter == "A"
    assert any(t.stage == "policy" for t in r.timings)
    counted = {s.labels["verdict"]: s.value for m in service.metrics.registry.collect()
               if m.name == "guard_withheld_checks" for s in m.samples if s.name.endswith("_total")}
    assert counted == {"refused": 1.0, "passed": 1.0}


def test_a_free_text_answer_about_the_bystander_is_refused_and_i_dont_know_is_not_weighed(tmp_path, hearing,
                                                                                         scene, check):
    service, _ = with_check(tmp_path, hearing, check, ["On Sunday.", "Around seven thirty."])
    r = ask(service, scene, "When is the birthday party?", [])
    assert r.refused and r.reason == pb.NOT_FROM_MAIN_SPEAKER and r.answer == IDK and r.choice_index == -1
    r = ask(service, scene, "What time should the table be booked for?", [])
    assert not r.refused and r.answer == "Around seven thirty."
    calls = []
    service, _ = with_check(tmp_path / "idk", hearing, lambda *a: calls.append(a), ["I don't know."])
    r = ask(service, scene, "When is the birthday party?", [])
    assert not r.refused and r.answer == "I don't know." and calls == []


def test_the_check_is_skipped_for_i_dont_know_and_without_gating(tmp_path, hearing, scene):
    calls = []
    service, _ = with_check(tmp_path, hearing, lambda *a: calls.append(a), ["C. " + IDK])
    r = ask(service, scene, "When is the birthday party?", PARTY)
    assert r.refused and r.reason == pb.NOT_FROM_MAIN_SPEAKER and calls == []
    # gating off is the measurement mode "told to be selective, hearing everything": no guard, no check
    service, _ = with_check(tmp_path / "off", hearing, lambda *a: calls.append(a), ["B. Sunday"],
                            GUARD_POLICY__GATING="false")
    r = ask(service, scene, "When is the birthday party?", PARTY)
    assert not r.refused and r.choice_letter == "B" and calls == []


def test_a_failing_check_refuses(tmp_path, hearing, scene):
    def broken(*a):
        raise RuntimeError("recogniser gone")

    service, _ = with_check(tmp_path, hearing, broken, ["A. Seven thirty"])
    r = ask(service, scene, "What time should the table be booked for?", TABLE)
    assert r.refused and r.reason == pb.POLICY_FAILED and "answer check" in r.reason_text


def test_the_model_is_told_whether_its_answer_will_be_weighed(tmp_path, hearing, scene, check):
    # Only where the gate withheld another voice is there speech to weigh an answer against; one voice
    # heard (or one under the main speaker that diarization never split off) leaves nothing (decision 121)
    service, backend = with_check(tmp_path, hearing, check, ["C. " + IDK] * 3)
    ask(service, scene, "When is the birthday party?", PARTY)
    alone = scenes.level(scenes.tts("awb", "We are going to paint the kitchen blue next weekend."), -20)
    ask(service, scenes.Scene(alone), "When is the birthday party?", PARTY)
    service.ask(pb.AskRequest(audio=pb.Audio(float32=scene.samples.astype("<f4").tobytes(), sample_rate=16000),
                              mode=pb.GENERAL, question="When is the birthday party?", options=PARTY))
    assert [task.checked for _, task in backend.calls] == [True, False, False]
    service, backend = with_check(tmp_path / "none", hearing, None, ["C. " + IDK])
    ask(service, scene, "When is the birthday party?", PARTY)
    assert [task.checked for _, task in backend.calls] == [False]


KITCHEN = "We are going to paint the kitchen blue next weekend."
FLIGHT = "My flight to Tokyo leaves at half past seven tomorrow."


def asked_aloud(question: str) -> scenes.Scene:
    """awb says KITCHEN, slt (5 dB behind) FLIGHT, then awb asks `question` aloud."""
    flight_at = scenes.duration("awb", KITCHEN) + 0.4
    ask_at = flight_at + scenes.duration("slt", FLIGHT) + 0.5
    return scenes.compose([("awb", KITCHEN, 0.0, -20.0), ("slt", FLIGHT, flight_at, -25.0),
                           ("awb", question, ask_at, -20.0)], seed=3)


def test_a_spoken_question_is_weighed_by_its_request_not_passed_for_being_heard(tmp_path, hearing, check,
                                                                                classifier):
    # Without question text the question is the main speaker's own speech, so it is always in what the
    # model heard; its last utterance is the request, weighed against the rest (decision 126)
    from guard.config import PolicySettings
    from guard.policy.secrets import SecretLedger

    service, backend = with_check(tmp_path, hearing, check, ["Half past seven.", "Blue."])
    service.ledger = SecretLedger(service.store, check.asr, classifier, 0.80, PolicySettings())
    r = ask(service, asked_aloud("When does the flight to Tokyo leave?"), "", [])
    assert backend.calls[0][1].spoken_question
    assert r.refused and r.reason == pb.NOT_FROM_MAIN_SPEAKER and r.answer == IDK
    r = ask(service, asked_aloud("What colour will the kitchen be painted?"), "", [])
    assert not r.refused and r.answer == "Blue."


def test_a_spoken_request_alone_is_refused_only_where_the_withheld_voice_says_its_words(tmp_path, hearing,
                                                                                      check, classifier):
    # Nothing but the request reached the model: no words to weigh likeness against (decision 126)
    from guard.config import PolicySettings
    from guard.policy.secrets import SecretLedger

    def alone(question: str) -> scenes.Scene:
        return scenes.compose([("slt", FLIGHT, 0.0, -25.0),
                               ("awb", question, scenes.duration("slt", FLIGHT) + 0.5, -20.0)], seed=4)

    service, backend = with_check(tmp_path, hearing, check, ["Half past seven.", "It is noon."])
    service.ledger = SecretLedger(service.store, check.asr, classifier, 0.80, PolicySettings())
    r = ask(service, alone("When does the flight to Tokyo leave?"), "", [])
    assert r.refused and r.reason == pb.NOT_FROM_MAIN_SPEAKER
    r = ask(service, alone("What time is it?"), "", [])
    assert not r.refused and r.answer == "It is noon."
    assert len(backend.calls) == 2


def test_the_request_is_the_speech_after_the_last_long_pause():
    import numpy as np

    from guard.hearing import Track
    from guard.policy.selective import last_utterance

    frames = np.zeros(600, bool)
    frames[0:100] = frames[300:350] = frames[400:450] = frames[460:500] = True   # pauses: 2 s, 0.5 s, 0.1 s
    last = last_utterance(Track("A", frames, np.zeros(3)), 0.8)
    assert np.flatnonzero(last.frames).tolist() == [*range(300, 350), *range(400, 450), *range(460, 500)]
    assert last_utterance(Track("A", frames, np.zeros(3)), 0.4).frames.sum() == 90      # from 400 on
    assert last_utterance(Track("A", frames, np.zeros(3)), 5.0).frames.sum() == frames.sum()   # no such pause
    assert not last_utterance(Track("A", np.zeros(10, bool), np.zeros(3)), 0.8).frames.any()
