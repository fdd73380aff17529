"""SELECTIVE mode fails closed: any broken stage is a refusal, and the model never hears ungated audio."""
from __future__ import annotations

import numpy as np
import pytest

from guard import recordings
from guard.backends import Backend, Task
from guard.config import load_settings
from guard.hearing import Diarization, Track
from guard.metrics import Metrics
from guard.policy import selective
from guard.proto import guard_pb2 as pb
from guard.service import GuardService
from guard.store import open_store

OPTIONS = ["Seven thirty", "Eight", "I do not have the information to answer the question", "Noon", "Six"]


class ScriptedBackend(Backend):
    """Replies from a script, records what audio it was given, and fails when the script runs out."""

    name = "scripted"

    def __init__(self, replies):
        self.replies, self.calls = list(replies), []

    def generate(self, audio: np.ndarray, task: Task) -> str:
        self.calls.append((audio.copy(), task))
        if not self.replies:
            raise RuntimeError("script exhausted")
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply



def make(tmp_path, hearing, replies, **env):
    settings = load_settings(env={"GUARD_DATA_DIR": str(tmp_path), **env})
    backend = ScriptedBackend(replies)
    return GuardService(settings, open_store(settings), hearing, backend, Metrics()), backend


def ask(service, scene, mode=pb.SELECTIVE):
    return service.ask(pb.AskRequest(audio=pb.Audio(float32=scene.samples.astype("<f4").tobytes(),
                                                    sample_rate=16000), mode=mode, question="What time?",
                                     options=OPTIONS))


def test_no_hearing_refuses_selective_and_never_calls_the_model(tmp_path, scene):
    service, backend = make(tmp_path, None, ["A"])
    r = ask(service, scene)
    assert r.refused and r.reason == pb.HEARING_UNAVAILABLE and r.choice_index == 2
    assert backend.calls == []


def test_hearing_failure_refuses(tmp_path, hearing, scene, monkeypatch):
    service, backend = make(tmp_path, hearing, ["A"])
    monkeypatch.setattr(hearing.diarizer, "cluster", lambda *a: (_ for _ in ()).throw(ValueError("boom")))
    r = ask(service, scene)
    assert r.refused and r.reason == pb.HEARING_FAILED and backend.calls == []


def test_policy_failure_refuses(tmp_path, hearing, scene, monkeypatch):
    service, backend = make(tmp_path, hearing, ["A"])
    monkeypatch.setattr(selective, "gate", lambda *a: (_ for _ in ()).throw(KeyError("x")))
    r = ask(service, scene)
    assert r.refused and r.reason == pb.POLICY_FAILED and backend.calls == []


def test_backend_failure_refuses(tmp_path, hearing, scene):
    service, _backend = make(tmp_path, hearing, [TimeoutError("slow")])
    r = ask(service, scene)
    assert r.refused and r.reason == pb.BACKEND_FAILED and r.answer == OPTIONS[2]


def test_model_receives_only_gated_audio(tmp_path, hearing, scene):
    service, backend = make(tmp_path, hearing, ["A. Seven thirty", "A"])
    r = ask(service, scene)
    assert not r.refused and r.choice_letter == "A"
    heard, task = backend.calls[0]
    assert task.selective and "ONLY listen to what the foreground main speaker" in task.prompt
    bystander = next(t for t in scene.turns if t.speaker == "slt")
    a, b = int((bystander.start + 0.6) * 16000), int((bystander.end - 0.6) * 16000)
    assert np.abs(heard[a:b]).max() == 0.0  # the bystander's turn is silence for the model
    assert np.abs(heard).max() > 0.01       # the main speaker is not
    ask(service, scene, pb.GENERAL)
    general_audio, general_task = backend.calls[1]
    assert np.array_equal(general_audio, scene.samples) and not general_task.selective


def test_any_other_failure_in_selective_mode_is_a_refusal(tmp_path, hearing, scene, monkeypatch):
    service, backend = make(tmp_path, hearing, ["A"])
    monkeypatch.setattr(selective, "build_prompt", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("x")))
    r = ask(service, scene)
    assert r.refused and r.reason == pb.INTERNAL and backend.calls == []
    with pytest.raises(RuntimeError):  # GENERAL mode: an error status (INTERNAL via the interceptor)
        ask(service, scene, pb.GENERAL)


def test_voices_the_verifier_cannot_tell_apart_refuse_and_the_model_hears_nothing(tmp_path, hearing):
    """Real people (the recorded call, Diane in front, Sheila 10 dB down): the embedder does not separate
    them, diarization mixes them, and the gate would pass Sheila's words (decision 76)."""
    call = recordings.call_scene("speaker90", -10.0)
    service, backend = make(tmp_path, hearing, ["A", "A"])
    r = ask(service, call)
    assert r.refused and r.reason == pb.VOICES_INDISTINCT and "cannot be told apart" in r.reason_text
    assert r.answer == OPTIONS[2] and backend.calls == []
    assert r.main_speaker and len(r.speakers) >= 2          # the evidence still says what was heard
    assert not ask(service, call, pb.GENERAL).refused and len(backend.calls) == 1
    off, backend_off = make(tmp_path / "off", hearing, ["A"], GUARD_POLICY__INDISTINCT_SECONDS="0")
    assert not ask(off, call).refused and len(backend_off.calls) == 1   # the check off: the gate alone


def test_a_real_voice_the_verifier_confuses_but_far_behind_is_answered(tmp_path, hearing):
    """Decision 79: Sheila in front, Diane 10 dB down: the verifier scores the two above its threshold,
    but the diarized Diane is more than 9 dB below Sheila, so level keeps her out and the model is asked;
    with the exemption off the same request refuses."""
    call = recordings.call_scene("speaker91", -10.0)
    service, backend = make(tmp_path, hearing, ["A"])
    r = ask(service, call)
    assert not r.refused and len(backend.calls) == 1 and r.withheld_seconds > 5
    strict, backend_strict = make(tmp_path / "strict", hearing, ["A"], GUARD_POLICY__INDISTINCT_BEHIND_DB="0")
    r = ask(strict, call)
    assert r.refused and r.reason == pb.VOICES_INDISTINCT and backend_strict.calls == []


def test_indistinct_names_the_closest_voice_the_verifier_would_confuse():
    n = 10
    def track(label, angle, seconds=2.0):
        return Track(label, np.zeros(n, bool), np.array([np.cos(angle), np.sin(angle)], np.float32), seconds)
    main = track("S1", 0.0)
    near, nearer, far = track("S2", np.arccos(0.82)), track("S3", np.arccos(0.9)), track("S4", np.arccos(0.5))
    short = track("S5", 0.0, seconds=0.5)
    d = Diarization(n, np.zeros(n, bool), np.zeros(n, bool), [main, near, nearer, far, short])
    got = selective.indistinct(d, main, threshold=0.8, min_seconds=1.0)
    assert got is not None and got[0] is nearer and got[1] == pytest.approx(0.9, abs=1e-6)
    assert selective.indistinct(d, main, 0.85, 1.0)[0] is nearer
    assert selective.indistinct(d, main, 0.95, 1.0) is None   # S5 scores 1.0 but is too short to embed
    d.tracks.remove(nearer)
    assert selective.indistinct(d, main, 0.8, 1.0)[0] is near
    assert selective.indistinct(d, main, 0.8, 0.0) is None    # off


def test_a_voice_far_behind_the_main_speaker_is_not_indistinct():
    """Decision 79: a voice the verifier would confuse, but 9 dB or more below the main speaker's level,
    is kept from the model by level; closer than that it still refuses."""
    n = 10
    e = np.array([1.0, 0.0], np.float32)
    main = Track("S1", np.zeros(n, bool), e, 5.0, -30.0)
    behind = Track("S2", np.zeros(n, bool), e, 5.0, -39.5)
    d = Diarization(n, np.zeros(n, bool), np.zeros(n, bool), [main, behind])
    assert selective.indistinct(d, main, 0.8, 1.0, behind_db=9.0) is None
    assert selective.indistinct(d, main, 0.8, 1.0, behind_db=10.0)[0] is behind
    assert selective.indistinct(d, main, 0.8, 1.0, behind_db=0.0)[0] is behind   # no exemption
    louder = Track("S3", np.zeros(n, bool), e, 5.0, -25.0)   # a louder voice never is behind
    d.tracks.append(louder)
    assert selective.indistinct(d, main, 0.8, 1.0, behind_db=9.0)[0] is louder
