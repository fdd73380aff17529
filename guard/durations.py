"""Lengths of time said in other units: "half a year" for "Six months", "eight weeks" for "Two months",
"about twenty days" for "Three weeks". The cascade writes an option beside a span of the 1-best that says
the same length in other words (`with_equivalents`), so its word rules hear the option there (decision 131).

Text in, text out: lower-case words as the recognisers write them, numbers spelled out
(guard.hearing.whisper.spoken). Nothing here reads meaning; a length said as a number and a unit is parsed.
"""
from __future__ import annotations

import math

from guard.hearing.whisper import ONES, TENS, spoken

DAYS = {"minute": 1 / 1440, "hour": 1 / 24, "day": 1.0, "week": 7.0, "fortnight": 14.0, "month": 365.25 / 12,
        "year": 365.25}
TOLERANCE = 0.1   # two lengths are the same when they differ by at most this share of the longer
UNITS = {u: u for u in DAYS} | {u + "s": u for u in DAYS}
SMALL = {w: n for n, w in enumerate(ONES) if n} | {"a": 1, "an": 1}
TENS_VALUE = {w: 10 * n for n, w in enumerate(TENS) if w}
RATE = frozenset(["once", "twice", "thrice", "times", "per", "every", "each"])   # "twice a day" is how often


def number(words: list[str], i: int) -> tuple[float, int] | None:
    """The number said at words[i] ("a", "twelve", "twenty one", "a couple of", "half a") as (value, the
    index after it), or None."""
    w = words[i]
    if w == "half" and i + 1 < len(words) and words[i + 1] in ("a", "an"):
        return 0.5, i + 2
    if w == "a" and words[i + 1:i + 3] == ["couple", "of"]:
        return 2.0, i + 3
    if w in TENS_VALUE:
        if i + 1 < len(words) and words[i + 1] in SMALL and words[i + 1] not in ("a", "an") \
                and ONES.index(words[i + 1]) < 10:
            return float(TENS_VALUE[w] + ONES.index(words[i + 1])), i + 2
        return float(TENS_VALUE[w]), i + 1
    if w in SMALL:
        return float(SMALL[w]), i + 1
    return None


def said(words: list[str]) -> list[tuple[int, int, float]]:
    """Each length of time in `words` as (first index, index after it, days): a number and a unit, with
    "and a half" after either ("two and a half years", "a year and a half"); not after a word of how often
    (RATE: "twice a day", "every two weeks")."""
    out = []
    i = 0
    while i < len(words):
        found = number(words, i)
        if found is None:
            i += 1
            continue
        value, j = found
        if words[j:j + 3] == ["and", "a", "half"]:
            value, j = value + 0.5, j + 3
        unit = UNITS.get(words[j]) if j < len(words) else None
        if unit is None:
            i += 1
            continue
        j += 1
        if words[j:j + 3] == ["and", "a", "half"]:
            value, j = value + 0.5, j + 3
        if i == 0 or words[i - 1] not in RATE:
            out.append((i, j, value * DAYS[unit]))
        i = j
    return out


def length(option: str) -> float | None:
    """The length of time an option says, in days, where the option is one ("Three weeks", "Half a
    year"); None otherwise ("Three weeks late", "Monday")."""
    words = spoken(option).split()
    spans = said(words)
    if len(spans) != 1 or spans[0][:2] != (0, len(words)):
        return None
    return spans[0][2]


def same(a: float, b: float) -> bool:
    return min(a, b) >= (1 - TOLERANCE) * max(a, b)


def with_equivalents(heard: str, options: list[str]) -> str:
    """`heard` with, after each length of time it says that an option says in other units, that option's
    words: "we only have half a year left" -> "we only have half a year six months left" for the options
    "Six months", "Two months". The option nearest the length said, within TOLERANCE; a span that already
    says the option's words is left as it is. Unchanged where no option is a length of time."""
    lengths = [(o, d) for o in options if (d := length(o)) is not None]
    if not lengths:
        return heard
    words = heard.split()
    out, last = [], 0
    for a, b, days in said(words):
        option, d = min(lengths, key=lambda od: abs(math.log(od[1] / days)))
        mine = spoken(option).split()
        if not same(days, d) or words[a:b] == mine:
            continue
        out += words[last:b] + mine
        last = b
    return " ".join(out + words[last:])
