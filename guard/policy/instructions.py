"""Privacy instructions read from what a speaker said: "nobody" (not even me), "owner_only" (just between
us) or None, and whether the instruction points ahead to what the speaker is about to say.

A small grammar of the parts, not a list of sentences (decision 94): an instruction first RESTRICTS
disclosure (a negated telling verb with an audience, "keep it to yourself / private", "between us", "in
confidence"...); then either takes the speaker IN ("not even me", "including me", "even if I ask", "don't
tell me") or keeps the speaker OUT ("only me", "anyone else", "you can remind me"). Restricting without
saying which is owner_only, as "don't tell anyone" means. Text is normalised first, so recogniser
output (any case, with or without punctuation) reads the same as typed text.
"""
from __future__ import annotations

import re

from guard import text

NOBODY, OWNER_ONLY = "nobody", "owner_only"

_NEG = r"(?:don'?t|do not|never|won'?t|will not|mustn'?t|must not|shouldn'?t|should not|can'?t|cannot|not)"
_VERB = (r"(?:tell(?:ing)?|repeat|mention|say|speak|share|breathe|reveal|disclose|discuss|spread|pass|bring|talk|remind|"
         r"let (?:\w+ ){1,3}?(?:know|hear|find out|come up))")
# Other people by who they are ("my wife", "the kids", "the rest of the family")
_OTHERS = (r"(?:my|our|your|his|her|their|the) (?:\w+ ){0,2}?(?:wife|husband|partner|family|kids|children|son|"
           r"daughter|mum|mom|dad|mother|father|parents|brother|sister|friends?|boss|neighbou?rs?|colleagues?|"
           r"others|house|household|flatmates?|roommates?|girlfriend|boyfriend|in ?laws|grandparents|guests)")
_AUDIENCE = (r"(?:anyone|anybody|any ?one|any (?:person|people)|no ?one|nobody|a soul|a word|"
             r"a single (?:person|soul)|people|others|everyone|everybody|me|myself|it|this|that|them|"
             rf"{_OTHERS})")
_FILLER = r"(?:\w+ ){0,2}"   # "don't EVER say", "you must NEVER repeat", "don't EVEN bring"
_NOT_NEGATED = r"(?<!don't )(?<!dont )(?<!do not )(?<!never )"
_US = r"(?:you and me|me and you|you and i|us|ourselves|the two of us|us two)"


def _any(*parts: str) -> re.Pattern:
    return re.compile("|".join(parts))


_NOT_OF_SOMEONE = (r"(?<!\bi )(?<!\bshe )(?<!\bhe )(?<!\bthey )(?<!\bpromised )(?<!\bpromise )(?<!\bswore )"
                   r"(?<!\bcan't )(?<!\bcannot )(?<!\bcouldn't )")
RESTRICT = _any(
    rf"{_NOT_OF_SOMEONE}\b{_NEG} {_FILLER}{_VERB}\b(?: \w+){{0,4}}? {_AUDIENCE}\b",
    rf"\b(?:(?:don'?t|do not|never) want you to|i'?d rather you (?:didn'?t|did not|never|don'?t)) {_VERB}\b",
    rf"{_NOT_OF_SOMEONE}\bkeep (?:it|this|that|these|them|a|the)? ?(?:\w+ )?(?:to yourself|private|secret|quiet|confidential|"
    r"between|from (?:everyone|everybody|anyone|anybody|the others|others|people)|locked|under wraps)",
    rf"\bbetween {_US}\b",
    rf"\b{_NEG} (?:\w+ )?be (?:repeated|told|mentioned|shared|said|passed on|discussed)\b",
    r"\b(?:don'?t|do not|never) want (?:\w+ ){0,3}to (?:know|hear|find out)\b",
    r"\b(?:don'?t|do not|never) want (?:\w+ ){1,3}?(?:knowing|hearing|finding out)\b",
    rf"\b{_OTHERS} (?:\w+ )?(?:mustn'?t|must not|shouldn'?t|should not|can'?t|cannot|won'?t|will not|"
    r"(?:must|should|can|will|may) never|(?:is|are) not to) (?:ever )?(?:find out|know|hear)\b",
    rf"\bnot to (?:the others|anyone|anybody|a soul|other people|{_OTHERS})\b(?!')",
    r"\b(?:nobody|no ?one)(?: else)? (?:hears|gets told|is told|gets to hear)\b",
    r"\b(?:never|doesn'?t|does not|won'?t|will not) leaves? (?:you|here|this room|the room|us)\b",
    r"\b(?:neither|nor) should (?:anyone|anybody|any ?one|the others|they)\b",
    r"\b(?:for|to|with) (?:me|my ears) only\b|\bonly for (?:me|my ears)\b",
    r"\b(?:this|it|that|everything|what i said) (?:stays?|remains?) (?:in|inside) (?:this|the) room\b",
    r"\bstrike (?:it|this|that) from the record\b|(?:^|please )bury (?:it|this|that)\b",   # not "the dog buries it"
    r"\bi'?d rather (?:\w+ ){1,3}?(?:didn'?t|did not|never|don'?t) (?:find out|know|hear)\b",
    r"\byou (?:know|heard|saw) nothing\b|\byou (?:don'?t|do not) know (?:anything|a thing)\b|\blips (?:are )?sealed\b|\bzip (?:it|your lips)\b(?! up)",
    r"\bonly (?:tell|mention|say|repeat|remind|share|discuss|talk about|bring (?:it|this|that) up)\b",
    r"\b(?:this|that|it)(?: one)? ?(?:'s|s|is) (?:strictly |very |totally )?(?:private|personal|confidential)\b",
    r"\b(?:don'?t|do not|never) want (?:this|it|that|any of (?:this|it)) (?:\w+ )?(?:repeated|told|shared|"
    r"mentioned|passed on|spread|known|getting out|to get out|coming out|to come out|getting around)\b",
    r"\b(?:goes|go|going) no further\b|\b(?:doesn'?t|does not|won'?t|will not) go any further\b",
    r"\bnot (?:a|one) (?:single )?(?:word|peep|whisper)\b|\bunder your hat\b",
    r"\b(?:consider|treat) (?:it|this|that) (?:as )?(?:unsaid|unheard|never said)\b",
    r"\b(?:this|it|that) dies with (?:you|us)\b|\btake (?:it|this|that) to (?:your|the|our) graves?\b",
    # "never repeat it to anybody" heard as "never repeated to anybody": no subject, no object, so not a
    # statement about the past ("I never mentioned it to anyone" keeps both)
    rf"(?<!\bi )(?<!\bwe )(?<!\byou )(?<!\bthey )(?<!\bhe )(?<!\bshe )\b(?:never|don'?t|do not) "
    rf"(?:repeated|mentioned|shared) (?:to|with) {_AUDIENCE}\b",
    r"\b(?:this|it|that) (?:kept|to stay|stays|to remain|remains) (?:private|secret|quiet|confidential|between)\b",
    r"\bkeep (?:it|this|that) (?:away )?from (?:the rest of|my|our|your|his|her|the (?:kids|children|family|others))\b",
    r"\b(?:are|re|am|is) the only (?:ones?|people|person) (?:who|that)? ?(?:should|can|may|gets? to|need to|"
    r"is to|are to) (?:ever )?(?:know|hear)\b",
    r"\b(?:but|and) (?:to |with )?(?:nobody|no ?one|not anyone|not anybody) else\b",
    r"\bnot even i (?:should|can|may|must|need to|want to)\b|\b(?:pretend|act like|act as if|treat (?:it|this|that) (?:like|as if)) (?:that )?(?:you|i) never (?:heard|said)\b",
    r"\bin confidence\b|\bconfidential\b|\bnobody'?s ears\b|\btrust(?:ing)? you with (?:this|that|it)\b",
    r"\b(?:it'?s|this is|that'?s|keep (?:it|this|that) ?) ?(?:our|a) (?:little )?secret\b",
    r"\bstays? (?:with|between) (?:you|us)\b|\b(?:just )?for (?:the two of us|us two|you and me)\b",
    r"\b(?:no ?one|nobody|anyone|anybody) (?:else |but me |except me )?(?:should|needs to|must|can|may|is to|has to|gets to|"
    r"get to|is allowed to|is going to|will) (?:ever )?"
    r"(?:know|hear|find out)\b",
    r"\bonly i should\b",
    r"\btell (?:no ?one|nobody)\b|\boff the record\b|\bon the down ?low\b|\bhush\b|\bmum'?s the word\b",
    r"\bfor (?:your|my) ears\b|\bto (?:ourselves|the two of us)\b|\b(?:erase|delete|wipe) (?:it|this|that) from your memory\b",
    rf"{_NOT_NEGATED}\bforget (?:this|that|it|what i|i said|i told|everything)\b",
)
# The speaker is included in the restriction: these win over anything that keeps the speaker out.
SELF_IN = _any(
    r"\bnot even (?:\w+ ){0,2}?(?:me|mine|myself)\b|\bnot even (?:when|if) i\b|\bnot even i\b|\beven (?:when|if) i'?m the one\b|\bnot evenly\b",  # misheard
    r"\beven (?:to |with |around |from |for |in front of |before )?(?:me|myself)\b",
    r"\b(?:(?:and|but|especially|particularly|certainly) not|not (?:to|with)) me\b|\bleast of all (?:to )?me\b",
    r"\bi (?:don'?t|do not|never) want to (?:hear|know)\b",
    r"\b(?:including|includes|include) (?:me|myself|yours truly)\b|\bme (?:included|too|neither|either|as well)\b",
    r"\b(?:when|if) i ask(?: you)?(?: about it| for it)? (?:as well|too)\b|\bas well as (?:to |with )?me\b",
    r"\bme either\b|\bnor (?:to |with )?me\b|\beven (?:if|when) i\b",
    r"\b(?:me|myself)(?: this| that| it)? or (?:to |with )?(?:anyone|anybody)\b|\b(?:anyone|anybody) or (?:me|myself)\b",
    rf"{_NOT_NEGATED}\bforget\b|\bfrom your memory\b|\bgoes for me\b|\bmyself included\b",
    r"\bi (?:shouldn'?t|should not|mustn'?t|must not) hear\b|\b(?:from|to) me (?:as well|too)\b|\bi mean (?:from |to )?me\b|\bnot even the (?:person|one) (?:saying|telling|who)\b",
    rf"\b{_NEG} {_FILLER}(?:tell|repeat|mention|say|share|bring|remind)\b(?: \w+){{0,3}}? again\b",
)
# The speaker is kept out of the restriction.
SELF_OUT = _any(
    r"\bonly (?:\w+ ){0,4}?(?:to |with |for )?(?:me|i)\b",
    r"\b(?:except|besides|but|other than) (?:for |with |to )?(?:me|i)\b|\bthe only (?:ones?|people)\b",
    r"\b(?:anyone|anybody|any ?one|everyone|everybody|no ?one|nobody|someone|people) else\b|\bthe others\b",
    rf"\bbetween {_US}\b|\bthe two of us\b|\bus two\b|\bwith us\b|\bour (?:little )?secret\b",
    r"\byou (?:can|may|could) (?:\w+ ){0,3}?(?:tell|remind|mention|talk to|ask|bring it up with) me\b",
    r"\bfeel free to (?:tell|remind|mention it to) me\b|\bjust you and me\b|\b(?:and )?mine only\b",
    r"\bmy ears\b|\b(?:for|to|with) me only\b|\bto ourselves\b|\bi'?m the only (?:one|person)\b|\bwhen (?:it'?s|it is) just (?:me|us)\b",
)
# A negated telling verb whose object is the speaker ("don't tell me", "don't bring it up with me").
NEG_SELF = re.compile(rf"\b{_NEG} {_FILLER}{_VERB}\b(?: \w+){{0,3}}? (?:to |with )?me\b")
# Asking not to be told something new is a request, not a restriction ("don't tell me the score").
REQUEST = re.compile(rf"\b{_NEG} {_FILLER}(?:tell|say|remind|show) me (?:(?:about )?(?:the|a|an)|you|what|how|who|when|"
                     r"where|which|whether|if)\b")
# The instruction is about what comes next, not what was said before.
AHEAD = _any(
    r"\b(?:about|going) to (?:tell|say|share)\b|\bgonna (?:tell|say)\b|\bcan i tell you\b",
    r"\bi(?:'m| am)? (?:want to|need to|have to|wanna) tell you\b|\bhere'?s (?:a|my|something)\b",
    r"\bwhat i(?:'m| am) (?:about|going) to\b|\bwhat comes next\b|\bthe next thing\b",
)


def normalise(utterance: str) -> str:
    s = utterance.lower().replace("\u2019", "'")
    s = re.sub(r"[^a-z0-9' ]+", " ", s)
    return re.sub(r"\s+", " ", s).strip()


def read(utterance: str) -> str | None:
    """nobody | owner_only | None for one utterance."""
    s = normalise(utterance)
    if not RESTRICT.search(REQUEST.sub(" ", s)):
        return None
    if SELF_IN.search(s):
        return NOBODY
    if SELF_OUT.search(s):
        return OWNER_ONLY
    return NOBODY if NEG_SELF.search(s) else OWNER_ONLY


# Words of an instruction itself, beyond the patterns above: what is left of a clause once its instruction
# is taken out carries content only with some other word.
_TELLING = (   # telling, knowing and keeping, in their forms
    "tell tells telling say says saying said repeat repeated repeating mention mentioned mentioning share "
    "shared sharing spread spreading pass passed bring brings breathe speak talk talking hear hears heard "
    "hearing know knows knowing known find finds ask asks asked asking remind reminded forget forgot "
    "forgotten leave leaves keep keeps kept stay stays stayed remain remains lock locked wipe erase delete "
    "pretend act let let's lets get gets go goes going gonna want need promise promised dare mean means told "
    "discuss discussed")
_WHO = (   # who may hear, and how firmly
    "anyone anybody nobody everyone everybody someone somebody one person people soul living single others "
    "other rest else whole myself mine yourself ourselves us two between except unless only even just "
    "secret secrets private confidential quiet strictly word words ears family kids children wife husband "
    "partner friends neighbours neighbors house household parents come bury strike record front")
_DISCOURSE = (   # fillers, emphasis, time, modals and contractions
    "please okay ok alright right so well hey listen look mind whatever happens matter seriously honestly "
    "really definitely absolutely sure make rather like also too either neither nor both all any more "
    "something anything thing things nothing once then now after ever never again later forever anymore "
    "today tomorrow tonight completely entirely totally fully "
    "still back up away around out loud includes including included favour favor gone if otherwise "
    "can could may will would must should shall not no don't dont i'm im i've i'll i'd you'll you're "
    "it's that's one's m didn't didnt doesn't doesnt won't wont")
_INSTRUCTION_WORDS = frozenset(f"{_TELLING} {_WHO} {_DISCOURSE}".split())   # beside text.STOP (said_with drops both)
_CLAUSES = re.compile(r"[.?!,;:]+")


def said_with(utterance: str) -> str:
    """What an instruction utterance says besides the instruction ("just between us, I'm quitting" ->
    "i'm quitting"); "" for an instruction alone. Clause by clause (a recogniser's punctuation), each with
    the instruction's own phrases taken out; a clause is kept when a word outside them is left."""
    kept = []
    for clause in _CLAUSES.split(utterance):
        c = normalise(clause)
        for pattern in (AHEAD, RESTRICT, SELF_IN, SELF_OUT, NEG_SELF):
            c = pattern.sub(" ", c)
        c = re.sub(r"\s+", " ", c).strip()
        if {w.strip("'") for w in c.split()} - _INSTRUCTION_WORDS - text.STOP:
            kept.append(c)
    return " ".join(kept)


def ahead(utterance: str) -> bool:
    """Does the instruction point at what the speaker is about to say ("can I tell you something...")?"""
    return bool(AHEAD.search(normalise(utterance)))
