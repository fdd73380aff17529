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
    return WithheldCheck(Transcriber(lead=shared(BUNDLED_BASE), runner_ups=False), 0.05)


def test_a_question_about_what_only_the_withheld_voice_said_is_refused(check):
    main = scenes.level(scenes.tts("awb", "We are going to paint the kitchen blue next weekend."), -20)
    other = scenes.level(scenes.tts("slt", "My flight to Tokyo leaves at half past seven tomorrow."), -20)
    flight = ["Seven thirty", "Noon", IDK, "Six"]
    v = check(main, [other], "When does the flight to Tokyo leave?", flight)
    assert v.refuse and v.withheld > v.heard + 0.05
    kitchen = ["Blue", "Green", IDK, "Red"]
    v = check(main, [other], "What colour will the kitchen be painted?", kitchen)
    assert not v.refuse and v.heard > v.withheld + 0.05
    # nothing withheld, or only "I don't know" to choose from: nothing to weigh
    assert not check(main, [], "When does the flight to Tokyo leave?", flight).refuse
    assert not check(main, [other], "When does the flight to Tokyo leave?", [IDK]).refuse


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
