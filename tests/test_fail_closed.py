"""SELECTIVE mode fails closed: any broken stage is a refusal, and the model never hears ungated audio."""
from __future__ import annotations

import numpy as np
import pytest

from guard.backends import Backend, Task
from guard.config import load_settings
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



def make(tmp_path, hearing, replies):
    settings = load_settings(env={"GUARD_DATA_DIR": str(tmp_path)})
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
