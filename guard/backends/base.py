"""The one interface every model behind the guard implements, and the registry that picks one."""
from __future__ import annotations

import abc
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Task:
    """What the model is asked. `prompt` is the full instruction text (SH-Bench layout); question and
    options are also given apart for backends that do not read prompts (the cascade)."""

    prompt: str
    question: str
    options: list[str] = field(default_factory=list)
    selective: bool = False
    # The same audio split by voice (each (n,) float32, silence elsewhere), for backends that do better
    # hearing one voice at a time; in GENERAL mode also a voice under the main speaker heard in its pauses
    # (decision 121). In SELECTIVE mode it holds only the main speaker's gated audio.
    streams: list[np.ndarray] = field(default_factory=list)
    # Session memory the requester may hear (earlier statements, as text), and whether the question
    # itself was spoken in the audio (then the audio is the question, not a source of answers).
    context: list[str] = field(default_factory=list)
    spoken_question: bool = False
    # SELECTIVE mode: whether the guard will weigh the answer against speech it withheld from the model
    # (guard.policy.withheld). False where the gate withheld no other voice: one heard, or a voice under
    # the main speaker that diarization never split off. A backend must not guess then (decision 121).
    checked: bool = False


class Backend(abc.ABC):
    name: str

    @abc.abstractmethod
    def generate(self, audio: np.ndarray, task: Task) -> str:
        """audio: (n,) float32 mono 16 kHz, already gated in SELECTIVE mode -> the model's answer text."""

    def close(self) -> None:
        pass
