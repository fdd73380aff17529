"""Quantities said in other units: lengths of time ("half a year" for "Six months", "eight weeks" for "Two
months", "about twenty days" for "Three weeks") and sums of money ("a fiver" for "Five pounds", "nineteen
quid" for "Nineteen pounds"). The cascade writes an option beside a span of a hypothesis that says the same
quantity in other words (`with_equivalents`), so its word rules hear the option there (decision 131).

Text in, text out: lower-case words as the recognisers write them, numbers spelled out
(guard.hearing.whisper.spoken). Nothing here reads meaning; a number and a unit are parsed.
"""
from __future__ import annotations

import functools
import math

from guard.hearing.whisper import ONES, TENS, spoken

TIME = {"minute": 1 / 1440, "hour": 1 / 24, "day": 1.0, "week": 7.0, "fortnight": 14.0, "month": 365.25 / 12,
        "year": 365.25}   # days
# unit word -> (what it measures, how many of that measure's base unit); "money" is any currency
UNITS = ({u: ("time", d) for u, d in TIME.items()} | {u + "s": ("time", d) for u, d in TIME.items()}
         | {"pound": ("pound", 1.0), "pounds": ("pound", 1.0), "quid": ("pound", 1.0), "pence": ("pound", 0.01),
            "penny": ("pound", 0.01), "dollar": ("dollar", 1.0), "dollars": ("dollar", 1.0), "buck": ("dollar", 1.0),
            "bucks": ("dollar", 1.0), "cents": ("dollar", 0.01), "cent": ("dollar", 0.01), "euro": ("euro", 1.0),
            "euros": ("euro", 1.0), "grand": ("money", 1000.0)})
NOTES = {"fiver": 5.0, "tenner": 10.0}   # a sum said as one word: "all i had was a fiver"
TOLERANCE = 0.1   # two amounts are the same when they differ by at most this share of the larger
SMALL = {w: n for n, w in enumerate(ONES) if n} | {"a": 1, "an": 1}
TENS_VALUE = {w: 10 * n for n, w in enumerate(TENS) if w}
RATE = frozenset(["once", "twice", "thrice", "times", "per", "every", "each"])   # "twice a day" is how often


def below_hundred(words: list[str], i: int) -> tuple[float, int] | None:
    """The number under a hundred said at words[i] ("a", "twelve", "twenty one"), or None."""
    w = words[i]
    if w in TENS_VALUE:
        if i + 1 < len(words) and words[i + 1] in ONES[1:10]:
            return float(TENS_VALUE[w] + ONES.index(words[i + 1])), i + 2
        return float(TENS_VALUE[w]), i + 1
    if w in SMALL:
        return float(SMALL[w]), i + 1
    return None


def number(words: list[str], i: int) -> tuple[float, int] | None:
    """The number said at words[i] ("a", "twenty one", "a couple of", "half a", "two hundred and fifty") as
    (value, the index after it), or None."""
    w = words[i]
    if w == "half" and words[i + 1:i + 2] in (["a"], ["an"]):
        return 0.5, i + 2
    if w == "a" and words[i + 1:i + 3] == ["couple", "of"]:
        return 2.0, i + 3
    found = below_hundred(words, i)
    if found is None:
        return None
    value, j = found
    for scale, size in (("hundred", 100), ("thousand", 1000)):
        if words[j:j + 1] == [scale]:
            value, j = value * size, j + 1
            k = j + 1 if words[j:j + 1] == ["and"] else j   # "two hundred and fifty", "two hundred fifty"
            rest = below_hundred(words, k) if k < len(words) and words[k] not in ("a", "an") else None
            if rest is not None:
                value, j = value + rest[0], rest[1]
    return value, j


def said(words: list[str]) -> list[tuple[int, int, str, float]]:
    """Each quantity in `words` as (first index, index after it, what it measures, amount in that measure's
    base unit): a number and a unit, with "and a half" after either ("two and a half years", "a year and a
    half"), or a note ("a fiver"); not after a word of how often (RATE: "twice a day", "every two weeks")."""
    out = []
    i = 0
    while i < len(words):
        if words[i] in NOTES:
            out.append((i, i + 1, "money", NOTES[words[i]]))
            i += 1
            continue
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
            out.append((i, j, unit[0], value * unit[1]))
        i = j
    return out


@functools.lru_cache(maxsize=1024)   # asked again for each hypothesis and phrase of a request
def quantity(option: str) -> tuple[str, float] | None:
    """What an option measures and how much, where the option is one quantity ("Three weeks", "Half a
    year", "Five pounds"); None otherwise ("Three weeks late", "Monday")."""
    words = spoken(option).split()
    spans = said(words)
    if len(spans) != 1 or spans[0][:2] != (0, len(words)):
        return None
    return spans[0][2], spans[0][3]


def same(a: tuple[str, float], b: tuple[str, float]) -> bool:
    """Whether two quantities are one: the same measure ("money" matches every currency) and amounts
    within TOLERANCE."""
    x, y = a[0], b[0]
    alike = x == y or (x == "money" and y != "time") or (y == "money" and x != "time")
    return alike and min(a[1], b[1]) >= (1 - TOLERANCE) * max(a[1], b[1])


def with_equivalents(heard: str, options: list[str]) -> str:
    """`heard` with, after each quantity it says that an option says in other units, that option's words:
    "we only have half a year left" -> "we only have half a year six months left" for the options "Six
    months", "Two months". The option nearest the amount said, of those `same` as it; a span that already
    says the option's words is left as it is. Unchanged where no option is a quantity."""
    measured = [(o, q) for o in options if (q := quantity(o)) is not None]
    if not measured:
        return heard
    words = heard.split()
    out, last = [], 0
    for a, b, kind, amount in said(words):
        alike = [(o, q) for o, q in measured if same(q, (kind, amount))]
        if not alike:
            continue
        option, _ = min(alike, key=lambda oq: abs(math.log(oq[1][1] / amount)))
        mine = spoken(option).split()
        if words[a:b] == mine:
            continue
        out += words[last:b] + mine
        last = b
    return " ".join(out + words[last:])
