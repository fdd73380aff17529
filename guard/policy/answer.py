"""Answer handling: find the chosen option in model text; recognise the "I don't know" option.

`extract_letter` is at least as robust as SH-Bench's official rule (guard.bench.shbench.official_letter,
which it falls back on): it also accepts an answer that quotes an option's text without its letter.
"""
from __future__ import annotations

import re

from guard.bench.shbench import LETTERS, official_letter

IDK_PATTERN = re.compile(r"\b(do not|don't|cannot|can't|not) (have|know|enough|be determined|answer)|"
                         r"\bnot mentioned\b|\bno information\b|\bunknown\b", re.IGNORECASE)
# The assistant speaking of itself: "I don't know", "I do not have an answer", "I cannot answer".
FIRST_PERSON_IDK = re.compile(r"^\W*I\s+(do not|don't|cannot|can't|am not able to)\s+(know|have|answer|tell|say)\b",
                              re.IGNORECASE)
IDK_TEXT = "I do not have the information to answer the question"


def idk_index(options: list[str]) -> int:
    """Index of the "I don't know" option, or -1. An option in the assistant's own voice ("I don't know",
    "I do not have an answer") wins over one that only reads like it: in the official SH-Bench files
    "They don't have the required documents" and "Not mentioned." are distractors beside "I don't know"
    (40 of the 16,000 records there; the first match used to be taken)."""
    own = [i for i, o in enumerate(options) if FIRST_PERSON_IDK.search(o)]
    if own:
        return own[0]
    return next((i for i, o in enumerate(options) if IDK_PATTERN.search(o)), -1)


def extract_letter(text: str, options: list[str]) -> str:
    """The chosen option's letter, or "" when the text commits to none."""
    s = text.strip()
    m = re.match(r"^\(?([A-E])(?:[\).:,]|$)", s)
    if m and LETTERS.index(m.group(1)) < len(options):
        return m.group(1)
    low = s.lower()
    hits = [i for i, o in enumerate(options) if o and o.lower().strip(" .") in low]
    if len(hits) == 1:
        return LETTERS[hits[0]]
    letter = official_letter(s)
    return letter if letter and LETTERS.index(letter) < len(options) else ""


def answered(text: str, choice_index: int, options: list[str]) -> bool:
    """Whether the model committed to an answer: an option chosen (the service has already turned the
    "I don't know" option into a refusal), or, to an open question, text that is not the assistant saying it
    does not know."""
    if options:
        return choice_index >= 0
    return bool(text.strip()) and not FIRST_PERSON_IDK.search(text)
