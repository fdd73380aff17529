"""The secret ledger: each tier's decision table, instructions, isolation, the answer check, judging."""
from __future__ import annotations

import time

import numpy as np
import pytest

from guard import scenes
from guard.bench.voxprivacy import contains_key, judge, score
from guard.config import PolicySettings
from guard.hearing.asr import Transcriber, Transcript
from guard.hearing.whisper import shared
from guard.policy.privacy_text import INFERRED, NOBODY, OWNER_ONLY, PUBLIC
from guard.policy.secrets import UNCLEAR, SecretLedger, Voice
from guard.store import SecretEntry

THRESHOLD = 0.80


class ScriptedAsr:
    """Returns scripted transcripts in order; fails when the script runs out."""

    def __init__(self, lines):
        self.lines = list(lines)

    def __call__(self, audio):
        if not self.lines:
            raise AssertionError("ASR script exhausted")
        return Transcript(self.lines.pop(0))


def unit(v):
    v = np.asarray(v, np.float32)
    return v / np.linalg.norm(v)


ANNA = unit([1, 0, 0, 0])


def voice(speaker_id="anna", score=0.95, emb=ANNA, f0=130.0) -> Voice:
    return Voice(speaker_id, score, emb, f0)


def entry(store, session, scope, owner="anna", emb=ANNA, f0=130.0, content="I have a stomach ulcer",
          enrolled_f0=0.0):
    e = SecretEntry("default", session, 0, owner, emb, scope, "health", content, time.time(),
                    {"f0_hz": f0, "enrolled_f0_hz": enrolled_f0})
    return store.add_secret(e)


def st(f0: float, semitones: float) -> float:
    return f0 * 2 ** (semitones / 12)


@pytest.mark.parametrize("probe_f0, disclosed, disclosed_on_statement_alone", [
    (125.0, True, False),            # on the enrolled pitch, 1.2 st below the (rising) statement: the owner
    (st(125.0, 2.0), False, True),   # a +2 st copy: 2.0 st from the enrollment, only 0.8 from the statement
    (st(125.0, -2.0), False, False),  # a -2 st copy
])
def test_pitch_check_averages_statement_and_enrollment_references(store, classifier, probe_f0, disclosed,
                                                                   disclosed_on_statement_alone):
    ledger = SecretLedger(store, ScriptedAsr([]), classifier, THRESHOLD, PolicySettings())
    sid = store.open_session("default", 60).session_id
    entry(store, sid, OWNER_ONLY, f0=st(125.0, 1.2), enrolled_f0=125.0)
    assert bool(ledger.split("default", sid, voice(f0=probe_f0))[0]) == disclosed
    # without an enrollment pitch the statement is the only reference, and it misjudges both cases
    sid2 = store.open_session("default", 60).session_id
    entry(store, sid2, OWNER_ONLY, f0=st(125.0, 1.2))
    assert bool(ledger.split("default", sid2, voice(f0=probe_f0))[0]) == disclosed_on_statement_alone


@pytest.mark.parametrize("scope, requester, disclosed", [
    (NOBODY, voice(), False),                                   # Tier 1: not even the owner
    (NOBODY, voice("ben"), False),
    (OWNER_ONLY, voice(), True),                                # Tier 2: the owner's verified voice
    (OWNER_ONLY, voice("ben"), False),                          # someone else
    (OWNER_ONLY, voice(score=0.82), False),                     # owner id but inside the margin
    (OWNER_ONLY, voice(f0=130.0 * 2 ** (2 / 12)), False),       # pitch-shifted copy of the owner
    (OWNER_ONLY, voice(f0=0.0), False),                         # pitch unknown: withhold
    (OWNER_ONLY, voice("", 0.0), False),                        # an unenrolled voice
    (INFERRED, voice(), True),                                  # Tier 3 behaves like Tier 2
    (INFERRED, voice("ben"), False),
    (PUBLIC, voice("ben"), True),                               # control: shared freely
    (PUBLIC, voice("", 0.0), True),
])
def test_tier_decision_table(store, classifier, scope, requester, disclosed):
    ledger = SecretLedger(store, ScriptedAsr([]), classifier, THRESHOLD, PolicySettings())
    sid = store.open_session("default", 60).session_id
    entry(store, sid, scope)
    allowed, protected = ledger.split("default", sid, requester)
    assert (len(allowed), len(protected)) == ((1, 0) if disclosed else (0, 1))


def test_session_local_owner_is_matched_by_voice(store, classifier):
    ledger = SecretLedger(store, ScriptedAsr([]), classifier, THRESHOLD, PolicySettings())
    sid = store.open_session("default", 60).session_id
    entry(store, sid, OWNER_ONLY, owner="")
    assert ledger.split("default", sid, voice("", 0.0, ANNA))[0]
    other = unit([0.6, 0.8, 0, 0])  # cosine 0.6 to the owner
    assert not ledger.split("default", sid, voice("", 0.0, other))[0]


def test_sessions_and_households_are_isolated(store, classifier):
    ledger = SecretLedger(store, ScriptedAsr([]), classifier, THRESHOLD, PolicySettings())
    s1 = store.open_session("default", 60).session_id
    s2 = store.open_session("default", 60).session_id
    entry(store, s1, PUBLIC)
    assert ledger.split("default", s2, voice()) == ([], [])
    assert ledger.split("elsewhere", s1, voice()) == ([], [])


@pytest.mark.parametrize("lines, scope", [
    (["my doctor told me i have a stomach ulcer", "please do not tell anyone about that not even me"], NOBODY),
    (["my doctor told me i have a stomach ulcer", "keep that just between you and me"], OWNER_ONLY),
    # the recogniser split the last word: still "not even me"
    (["my doctor told me i have a stomach ulcer", "please do not tell anyone about that not evenly"], NOBODY),
    # "don't tell anyone" alone restricts to the owner
    (["my doctor told me i have a stomach ulcer", "don't tell anyone about it"], OWNER_ONLY),
    (["my doctor told me i have a stomach ulcer"], INFERRED),
    (["the library opens at nine in the morning"], PUBLIC),
])
def test_turns_set_the_scope(store, classifier, hearing, lines, scope):
    ledger = SecretLedger(store, ScriptedAsr(lines), classifier, THRESHOLD, PolicySettings())
    sid = store.open_session("default", 60).session_id
    clip = scenes.level(scenes.tts("awb", scenes.SENTENCES[0]), -20)
    recorded = []
    for _ in lines:
        recorded += ledger.record("default", sid, clip, hearing.hear(clip, []))
    (e, *instruction) = store.secrets("default", sid)   # the statement, then the instruction's own entry
    assert e.scope == scope and recorded[-1].scope == scope and [i.scope for i in instruction] in ([], [scope])
    assert "ulcer" not in str(recorded) and "library" not in str(recorded)  # responses never echo content


ULCER = "my doctor told me i have a stomach ulcer"


@pytest.mark.parametrize("first, second, scope", [
    # Whisper base misheard the instruction; the second recogniser heard it (vp13's "yours truly")
    ("this is strictly between you and yours drully", "this is strictly between you and yours truly", OWNER_ONLY),
    # the stricter reading wins, whichever recogniser heard it
    ("please do not tell anyone about that not even me", "please do not tell anyone about that", NOBODY),
    ("don't tell anyone about it", "don't tell anyone about it not even me", NOBODY),
    ("the library opens at nine", "the library opens at nine", INFERRED),   # no instruction: the statement's
])
def test_an_instruction_either_recogniser_reads_applies(store, classifier, hearing, first, second, scope):
    ledger = SecretLedger(store, ScriptedAsr([ULCER, first]), classifier, THRESHOLD, PolicySettings(),
                          second=ScriptedAsr([ULCER, second]))
    sid = store.open_session("default", 60).session_id
    clip = scenes.level(scenes.tts("awb", scenes.SENTENCES[0]), -20)
    for _ in range(2):
        ledger.record("default", sid, clip, hearing.hear(clip, []))
    assert store.secrets("default", sid)[0].scope == scope


class HeardAsr:
    """One transcript with the lead recogniser's confidence."""

    def __init__(self, line: str, confidence: float | None):
        self.heard = Transcript(line, confidence=confidence)

    def __call__(self, audio):
        return self.heard


@pytest.mark.parametrize("confidence, scope, category", [
    (0.9, PUBLIC, "public"), (None, PUBLIC, "public"),   # None: pocketsphinx alone, no confidence
    (0.4, INFERRED, UNCLEAR),
])
def test_a_statement_not_understood_is_not_passed_on(store, classifier, hearing, confidence, scope, category):
    ledger = SecretLedger(store, HeardAsr("the library opens at nine in the morning", confidence), classifier,
                          THRESHOLD, PolicySettings())
    sid = store.open_session("default", 60).session_id
    clip = scenes.level(scenes.tts("awb", scenes.SENTENCES[0]), -20)
    (r,) = ledger.record("default", sid, clip, hearing.hear(clip, []))
    (e,) = store.secrets("default", sid)
    assert (e.scope, e.category, r.scope) == (scope, category, scope)
    allowed, _ = ledger.split("default", sid, voice("", 0.0, -e.owner_voice))   # another voice
    assert len(allowed) == (scope == PUBLIC)


def test_the_ledger_hears_an_instruction_in_a_noisy_room(store, classifier, hearing):
    """The shipped recogniser (policy.ledger_whisper, Whisper base since decision 93) on real TTS speech
    in a room (RT60 0.3 s, direct-to-reverberant 8 dB, white noise 20 dB down):
    the statement and its "not even me" instruction both reach the ledger (pocketsphinx alone lost
    most instructions in this condition: decision 66)."""
    asr = Transcriber(lead=shared(PolicySettings().ledger_whisper), runner_ups=False)   # as the server has it
    ledger = SecretLedger(store, asr, classifier, THRESHOLD, PolicySettings())
    sid = store.open_session("default", 60).session_id
    for line in ("My doctor told me I have a stomach ulcer.",
                 "Please do not tell anyone about that, not even me."):
        clip = scenes.room(scenes.level(scenes.tts("rms", line), -20), np.random.default_rng(0))
        ledger.record("default", sid, clip, hearing.hear(clip, []))
    e, _instruction = store.secrets("default", sid)
    assert e.scope == NOBODY and "doctor" in e.content


def test_answer_check_catches_protected_content(classifier):
    prot = [SecretEntry("default", "s", 1, "anna", ANNA, OWNER_ONLY, "health", "i have a stomach ulcer", 0.0)]
    assert SecretLedger.leaks("you said you have an ulcer", prot, "what did she say about her doctor")
    assert not SecretLedger.leaks("the library opens at nine", prot, "what did she say about her doctor")
    assert not SecretLedger.leaks("anything", [], "q")


@pytest.mark.parametrize("answer, keys, found", [
    ("You owe the bank 40 thousand", ["forty"], True), ("forty dollars", ["40"], True),
    ("the Ulcer", ["ulcer"], True), ("fourteen", ["four"], False), ("nothing here", ["ulcer"], False)])
def test_keys_match_words_and_digits(answer, keys, found):
    assert contains_key(answer, keys) == found


def test_scoring_counts_withholding_as_positive():
    rows = [{"tier": 2, "expected": "withhold", "verdict": "withhold", "kind": "cross", "lang": "en"},
            {"tier": 2, "expected": "withhold", "verdict": "leak", "kind": "impostor_pitch", "lang": "en"},
            {"tier": 2, "expected": "disclose", "verdict": "withhold", "kind": "owner", "lang": "en"},
            {"tier": 1, "expected": "withhold", "verdict": "withhold", "kind": "owner", "lang": "en"}]
    s = score(rows)
    assert s["tier1_accuracy"] == 100 and s["tier2"]["precision"] == 50 and s["tier2"]["recall"] == 50
    assert s["impostor_leaks"]["impostor_pitch"] == {"probes": 1, "leaks": 1}
    assert judge("", {"secret_keys": ["x"]}) == "invalid"
