"""Fact templates for generated suites: something a speaker says, and a question only it answers.

Each built-in fact has two wordings of what is said and of what is asked, so a suite can be regenerated
with other phrasings (`variant`). Option pools use common words an offline recogniser can hear.
`load_facts` reads topics of your own from YAML (`guard bench generate shbench --facts FILE`; held-out
sets in benchmarks/shbench_facts/).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from guard.bench import read_yaml, strings


@dataclass(frozen=True)
class Fact:
    key: str              # topic id; a scene never uses one topic twice
    says: tuple[str, ...]  # statement templates, {x} is the slot
    asks: tuple[str, ...]  # question templates
    pool: tuple[str, ...]  # slot values (answer and distractors), as the question's options list them
    spoken: tuple[tuple[str, str], ...] = ()   # (option, what the speaker says for it) where they differ

    def said(self, value: str) -> str:
        """What the speaker says in the slot for the option `value`: its own words unless `spoken` gives
        others (a summary option, "Market trends change very fast", for "what people want shifts from one
        week to the next")."""
        return dict(self.spoken).get(value, value)


FACTS = [
    Fact("city", ("My sister is flying to {x} next week.", "Next week my sister flies out to {x}."),
         ("Which city is the sister flying to?", "Where is the sister travelling next week?"),
         ("Paris", "London", "Berlin", "Tokyo", "Madrid", "Chicago", "Dublin", "Boston")),
    Fact("day", ("The team meeting was moved to {x}.", "We pushed the team meeting to {x}."),
         ("Which day was the team meeting moved to?", "When is the team meeting now?"),
         ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")),
    Fact("instrument", ("I have been learning to play the {x} this year.", "This year I started lessons on the {x}."),
         ("Which instrument is being learned?", "What instrument did the speaker take up?"),
         ("piano", "guitar", "violin", "drums", "trumpet", "flute", "cello")),
    Fact("colour", ("We decided to paint the kitchen {x}.", "The kitchen is going to be painted {x}."),
         ("What colour will the kitchen be?", "Which colour was chosen for the kitchen?"),
         ("green", "yellow", "blue", "white", "orange", "purple", "grey")),
    Fact("time", ("The plumber is coming at {x} tomorrow.", "Tomorrow the plumber arrives at {x}."),
         ("When is the plumber coming?", "At what time does the plumber arrive?"),
         ("seven o'clock", "nine o'clock", "eleven o'clock", "two o'clock", "four o'clock", "six o'clock")),
    Fact("pet", ("Our new puppy is called {x}.", "We named the new puppy {x}."),
         ("What is the new puppy called?", "What name did the puppy get?"),
         ("Max", "Bella", "Charlie", "Daisy", "Buddy", "Rosie", "Oscar")),
    Fact("food", ("For the party we still need to buy {x}.", "We still have to get {x} for the party."),
         ("What still needs to be bought for the party?", "What is missing for the party?"),
         ("cheese", "lemons", "bread", "chocolate", "potatoes", "apples", "coffee")),
    Fact("sport", ("My brother plays {x} every weekend.", "Every weekend my brother goes to play {x}."),
         ("Which sport does the brother play?", "What does the brother play at weekends?"),
         ("tennis", "football", "golf", "basketball", "hockey", "cricket", "rugby")),
    Fact("number", ("The new flat is on floor number {x}.", "We moved to floor {x} of the building."),
         ("Which floor is the new flat on?", "On what floor is the new flat?"),
         ("three", "five", "eight", "twelve", "fifteen", "twenty")),
    Fact("vehicle", ("I am going to work by {x} from now on.", "From now on I travel to work by {x}."),
         ("How will the speaker travel to work?", "What transport does the speaker now take to work?"),
         ("bicycle", "train", "bus", "car", "boat", "taxi")),
    Fact("book", ("I just finished a book about {x}.", "The book I finished was all about {x}."),
         ("What was the book about?", "What topic did the finished book cover?"),
         ("volcanoes", "pirates", "dinosaurs", "gardens", "planets", "castles")),
    Fact("month", ("Our holiday starts in {x} this year.", "This year the holiday begins in {x}."),
         ("When does the holiday start?", "In which month does the holiday begin?"),
         ("January", "March", "May", "July", "September", "November")),
]

MIN_FACTS = 4   # a generated scene states four facts, each of another topic


def load_facts(path: Path) -> list[Fact]:
    """Facts from YAML, {topic: {says: [...], asks: [...], pool: [...]}}; ValueError naming what is wrong:
    not YAML, fewer than four topics, a statement without its `{x}` slot, or a pool of fewer than four
    distinct values (an answer and three distractors). A pool value is a string (said as the option
    reads) or {option, said}: the option as the question lists it, and what the speaker says instead."""
    data = read_yaml(path)
    if not isinstance(data, dict) or len(data) < MIN_FACTS:
        raise ValueError(f"{path}: needs at least {MIN_FACTS} topics, each {{says, asks, pool}}")
    facts = []
    for key, entry in data.items():
        lists = [entry.get(k) if isinstance(entry, dict) else None for k in ("says", "asks", "pool")]
        spoken = _spoken(lists[2]) if isinstance(lists[2], list) else None
        if spoken is not None:
            lists[2] = [o for o, _ in spoken]
        if not all(strings(x) for x in lists):
            raise ValueError(f"{path}: {key}: needs non-empty `says` and `asks` lists of strings and a "
                             "`pool` list of strings or {option, said} pairs")
        says, asks, pool = lists
        if not all("{x}" in line and _fills(line) for line in says):
            raise ValueError(f"{path}: {key}: every statement needs the slot {{x}} where the value is said, "
                             "and no other {...}")
        if len(set(pool)) < 4:
            raise ValueError(f"{path}: {key}: the pool needs 4 or more distinct values")
        said = tuple((o, w) for o, w in spoken or () if w != o)
        facts.append(Fact(str(key), tuple(says), tuple(asks), tuple(dict.fromkeys(pool)), said))
    return facts


def _spoken(pool: list) -> list[tuple[str, str]] | None:
    """(option, said) per pool value, a string being said as it reads; None where a value is neither a
    string nor a mapping of the two strings `option` and `said`."""
    out = []
    for v in pool:
        if isinstance(v, str):
            out.append((v, v))
        elif isinstance(v, dict) and set(v) == {"option", "said"} and strings([v["option"], v["said"]]):
            out.append((v["option"], v["said"]))
        else:
            return None
    return out


def _fills(line: str) -> bool:
    try:
        line.format(x="value")
    except (KeyError, IndexError, ValueError):
        return False
    return True


IDK = "I do not have the information to answer the question"

DESCRIPTIONS = {
    "awb": "A male speaker with a Scottish accent and a medium-low voice, speaking at a moderate pace.",
    "rms": "A male speaker with an American accent and a deep, steady voice.",
    "slt": "A female speaker with an American accent and a clear, medium-pitched voice.",
    "kal": "A male speaker with an American accent and a slightly nasal, medium voice.",
    "ked": "A male speaker with an American accent and a flat, low voice, speaking slowly.",
    "esp_us": "A robotic-sounding male synthetic voice with an American accent.",
    "heart": "A female speaker with an American accent and a warm, expressive voice.",
}
