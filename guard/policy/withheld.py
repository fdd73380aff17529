"""The answer check against withheld speech (SELECTIVE mode, decision 119).

The gate keeps every other voice from the model, but the guard itself still holds that audio. Before an
answer leaves the guard, the check asks whose speech the question is about: it transcribes what the model
heard and each withheld voice on its own (the guard's own recogniser, the ledger's Whisper), and measures
how like the question with each of its options (all-MiniLM-L6-v2) the pieces of each transcript are
(`text.passages`), read from the lead recogniser's 1-best and, where there is one, the second's (the ledger's
tiny.en, decision 137): where base garbles a sentence ("at my easel with water killers"), tiny.en often hears
the words that say what it is about. An open question (no options) is weighed the same way by the question
alone, once the model has answered it with anything but "I don't know" (decision 120); the session memory
the model was given counts as heard. The withheld speech must be at least `margin` less like the question
than what the model heard, unless what the model heard says more of the question's own content words and the
withheld speech is no more than `margin` likelier (decision 136). Otherwise the question is about someone
else's speech and the answer is refused, whatever the backend: a guess from the main speaker's own words is
not an answer to a question about a bystander.
Where the model heard no words at all (a spoken request alone, its own words taken out, decision 126),
likeness has nothing to weigh: the answer is refused only where a withheld voice says some of the
question's own words.

Measured on the generated suites in decision 119. What is transcribed here is never stored, logged or
returned; like every transcript, it stays only in the recognisers' small in-memory caches of recent audio.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from guard import text
from guard.hearing.asr import Transcriber
from guard.policy.answer import idk_index


@dataclass(frozen=True)
class Verdict:
    heard: float      # how like the question what the model heard is (best option, best piece)
    withheld: float   # the same for the withheld voices (the likest voice)
    refuse: bool
    words: tuple[int, int] = (0, 0)   # the question's own words said in what the model heard, and withheld


class WithheldCheck:
    def __init__(self, asr: Transcriber, margin: float, second: Transcriber | None = None):
        self.asr, self.margin, self.second = asr, margin, second

    def read(self, audio: np.ndarray, prompts: np.ndarray, asked: set[str],
             context: Sequence[str] = ()) -> tuple[int, float | None]:
        """(how many of the question's content stems `audio`'s lead 1-best and `context` say, their best
        likeness to `prompts`, the second recogniser's pieces included; None where the lead and `context`
        hold no words). The lead alone says whether words were heard and which (as the cascade's word rules,
        decision 132): a second reading of what the lead heard as silence is not let turn decision 126's
        words rule into a likeness weighed against the withheld speech."""
        t = self.asr(audio)
        pieces = text.passages(t.best, t.phrases, text.WINDOW_WORDS) + [c for c in context if c.strip()]
        if self.second is not None and pieces:
            again = self.second(audio)
            pieces = list(dict.fromkeys(pieces + text.passages(again.best, again.phrases, text.WINDOW_WORDS)))
        like = float((prompts @ text.embed(pieces).T).max()) if pieces else None
        return len(asked & text.content(" ".join([t.best, *context]))), like

    def __call__(self, heard: np.ndarray, withheld: list[np.ndarray], question: str,
                 options: list[str], context: Sequence[str] = ()) -> Verdict:
        """`heard`: the audio the model received; `withheld`: each other voice's kept-back speech. Refused
        where the withheld speech is not `margin` less like the question than what the model heard, unless
        what the model heard says more of the question's own words and the withheld speech is not `margin`
        likelier either: "our landlord is a man called stanislaus" is about "What is the landlord called?",
        though MiniLM puts "we rented a cottage near norway" as close. Where the model heard words, the words
        alone never refuse: one of the main speaker's own words the gate withheld at a change of speaker ("for
        her birthday") would (decision 119); where it heard none (a spoken request alone, decision 126), they
        are all there is to weigh. `options` empty: an open question, weighed alone. `context`: the session
        memory the model was given, counted as heard."""
        idk = idk_index(options)
        real = [o for i, o in enumerate(options) if i != idk]
        if not withheld or (options and not real):
            return Verdict(0.0, 0.0, False)
        prompts = text.embed([f"{question} {o}" for o in real] if real else [question])
        asked = text.content(question)
        words, like = self.read(heard, prompts, asked, context)
        other = [self.read(w, prompts, asked) for w in withheld]
        their_words, their_like = max(w for w, _ in other), max(x or 0.0 for _, x in other)
        if like is None:   # no words heard to weigh (a spoken request alone, decision 126): refused only
            # where the withheld speech says some of the question's own words
            return Verdict(0.0, their_like, their_words > 0, (0, their_words))
        # the question's own words tip a near tie, never a clear lead: "get" (in "get out the chess set") is one
        # of "What news did the parents get about their boy?", which a withheld "our son has been picked on"
        # is far likelier (0.50 against 0.20; decision 136)
        outweighed = their_like > like + self.margin
        refuse = their_like > like - self.margin and (words <= their_words or outweighed)
        return Verdict(like, their_like, refuse, (words, their_words))
