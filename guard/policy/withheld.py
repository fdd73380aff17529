"""The answer check against withheld speech (SELECTIVE mode, decision 119).

The gate keeps every other voice from the model, but the guard itself still holds that audio. Before an
answer to a multiple-choice question leaves the guard, the check asks whose speech the question is about:
it transcribes what the model heard and each withheld voice on its own (the guard's own recogniser, the
ledger's Whisper), and measures how like the question with each of its options (all-MiniLM-L6-v2) the
pieces of each transcript are (`text.passages`). Where the withheld speech is not at least `margin` less
like the question than what the model heard, the question is about someone else's speech and the answer
is refused, whatever the backend: a guess from the main speaker's own words is not an answer to a
question about a bystander.

On the generated suites the question's likeness to the speech it is about was 0.32-0.80, to the other
voice's 0.03-0.36 (decision 119). What is transcribed here lives only in this call: it is never stored,
logged or returned.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from guard import text
from guard.hearing.asr import Transcriber
from guard.policy.answer import idk_index

WINDOW_WORDS = 12   # the cascade's window (backend.cascade window_words' default)


@dataclass(frozen=True)
class Verdict:
    heard: float      # how like the question what the model heard is (best option, best piece)
    withheld: float   # the same for the withheld voices
    refuse: bool


class WithheldCheck:
    def __init__(self, asr: Transcriber, margin: float):
        self.asr, self.margin = asr, margin

    def likeness(self, audio: np.ndarray, prompts: np.ndarray) -> float:
        t = self.asr(audio)
        pieces = text.passages(t.best, t.phrases, WINDOW_WORDS)
        return float((prompts @ text.embed(pieces).T).max()) if pieces else 0.0

    def __call__(self, heard: np.ndarray, withheld: list[np.ndarray], question: str,
                 options: list[str]) -> Verdict:
        """`heard`: the audio the model received; `withheld`: each other voice's speech on its own."""
        idk = idk_index(options)
        real = [o for i, o in enumerate(options) if i != idk]
        if not withheld or not real:
            return Verdict(0.0, 0.0, False)
        prompts = text.embed([f"{question} {o}" for o in real])
        other = max(self.likeness(w, prompts) for w in withheld)
        mine = self.likeness(heard, prompts)
        return Verdict(mine, other, other > mine - self.margin)
