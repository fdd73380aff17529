"""Whisper re-reads the sentence about the question with each option in place of the words it heard
(decision 102).

A name the recognisers hear as other words ("walking" for Joaquin, "the bachelor's" for the Badgers, "a
phone" for a fern) leaves no hypothesis naming any option, and SELECTIVE mode answers "I don't know" to
its own main speaker. Text alone cannot find it there; the audio can. The sentence about the question is
found by the question's own words in the 1-best ("my new manager is walking": "new", "manager"), each
option is put in place of one or two heard words beside them that Whisper itself was unsure of (a
sure "to" in "travel to work" gave way to "car" before a misheard "goldmine" did), and Whisper scores
every such reading against the clip (teacher forcing, `Whisper.score`). An option wins when its best
reading is nearly as likely as what was heard (`min_delta`) and clearly likelier than every other
option's (`min_margin`).

It only ever turns "I don't know" into an answer, so its error is answering a bystander's question. It
runs only where no 1-best word names any option (a named option was weighed, and perhaps rejected, by the
text rules) and where the 1-best holds at least two of the question's content words near each other (one
when the question has one): a single shared word ("new" in "my new manager" for "which plant is new in
the living room?") put a bystander's plant where the main speaker's manager's name was.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from guard import text
from guard.audio import SAMPLE_RATE


def anchors(words: list[str], asked: set[str]) -> list[str]:
    """Per word of `words`, the question's stem (of `asked`) it says, or "": a word alone ("landlord's"
    says "landlord"), or two the recogniser split run together ("land lord"), both then anchors."""
    hit = [s if s in asked else "" for s in map(text.stem, words)]
    for i in range(len(words) - 1):
        joined = text.stem(words[i] + words[i + 1])
        if joined in asked and not hit[i] and not hit[i + 1]:
            hit[i] = hit[i + 1] = joined
    return hit


@dataclass(frozen=True)
class Reading:
    option: int       # index into the options given
    delta: float      # log-probability of the best reading with it, less that of what was heard
    margin: float     # delta less the next option's
    said: str         # that reading


class Recheck:
    def __init__(self, whisper, near: int = 4, context: int = 6, min_delta: float = -12.0,
                 min_margin: float = 5.0, pad_seconds: float = 0.3, unsure: float = 0.8):
        self.whisper = whisper   # guard.hearing.whisper.Whisper: .score(audio, texts)
        self.unsure = unsure     # only words Whisper reads at under this probability are read again
        self.near, self.context = near, context
        self.min_delta, self.min_margin = min_delta, min_margin
        self.pad = pad_seconds

    def region(self, words: list[str], question: str) -> tuple[int, int, list[int]] | None:
        """(first, end) word indices of the stretch about the question and the question's words in it:
        the cluster of question words (each within 2 * `near` of the next) holding the most distinct ones,
        widened by `context` words; None when it holds fewer than min(2, the question's content words)."""
        asked = text.content(question)
        hit = anchors(words, asked)
        at = [i for i, h in enumerate(hit) if h]
        best: list[int] = []
        for k in range(len(at)):
            group = [at[k]]
            for j in at[k + 1:]:
                if j - group[-1] > 2 * self.near:
                    break
                group.append(j)
            if len({hit[i] for i in group}) > len({hit[i] for i in best}):
                best = group
        if not best or len({hit[i] for i in best}) < min(2, len(asked)):
            return None
        return max(0, best[0] - self.context), min(len(words), best[-1] + self.context + 1), best

    def __call__(self, audio: np.ndarray, timed: list[tuple[str, float, float]], question: str,
                 options: list[str], sure: list[float]) -> Reading | None:
        """The option Whisper reads in the stretch of `audio` about the question, or None. `timed`: the
        1-best words with their times in `audio` (Transcript.words); `sure`: Whisper's probability of
        each as it wrote them (Transcript.sure). Without one per word nothing is read again: treating
        every word as unsure is the looser rule that answered bystanders (decision 102)."""
        words = [w for w, _, _ in timed]
        found = self.region(words, question)
        if found is None or len(options) < 2 or len(sure) != len(timed):
            return None
        first, end, anchors = found
        sr = SAMPLE_RATE
        clip = audio[max(0, int((timed[first][1] - self.pad) * sr)): int((timed[end - 1][2] + self.pad) * sr)]
        said = words[first:end]
        at = [a - first for a in anchors]
        unsure = [p < self.unsure for p in sure[first:end]]
        readings, owner = [" ".join(said)], [-1]
        for k, o in enumerate(options):
            for span in (1, 2):
                for p in range(len(said) - span + 1):
                    covered = range(p, p + span)
                    beside = any(1 <= abs(i - j) <= self.near for i in covered for j in at)
                    over = any(j in at for j in covered) or not any(unsure[i] for i in covered)
                    if not beside or over:
                        continue
                    readings.append(" ".join(said[:p] + [o] + said[p + span:]))
                    owner.append(k)
        if len(readings) == 1:
            return None
        lp = self.whisper.score(clip, readings)
        best = [max((lp[i] for i in range(len(lp)) if owner[i] == k), default=float("-inf")) - lp[0]
                for k in range(len(options))]
        order = sorted(range(len(options)), key=lambda k: best[k], reverse=True)
        top, second = order[0], order[1]
        if best[top] < self.min_delta or best[top] - best[second] < self.min_margin:
            return None
        i = max((i for i in range(len(lp)) if owner[i] == top), key=lambda i: lp[i])
        return Reading(top, best[top], best[top] - best[second], readings[i])
