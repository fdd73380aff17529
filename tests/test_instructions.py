"""Privacy instructions: the grammar's reading of other phrasings, and where in the conversation an
instruction applies (after the secret, before it, or in one breath with it)."""
from __future__ import annotations

import pytest

from guard import scenes
from guard.config import PolicySettings
from guard.policy import instructions
from guard.policy.privacy_text import INFERRED, NOBODY, OWNER_ONLY, PUBLIC
from guard.policy.secrets import AHEAD, SecretLedger
from tests.test_secrets import THRESHOLD, ScriptedAsr


@pytest.mark.parametrize("said, reading", [
    ("Please don't tell anybody this, not even me later.", NOBODY),
    ("Don't share this with anyone at all, including me.", NOBODY),
    ("even if I ask, don't tell me this again", NOBODY),
    ("Pretend you never heard this, and don't tell me either.", NOBODY),
    ("THIS ONE'S FOR NOBODY'S EARS, NOT EVEN MINE", NOBODY),
    # decision 109: the speaker taken in with other words
    ("i am begging you don't bring this back up to anybody especially not me", NOBODY),
    ("don't tell anyone, least of all me", NOBODY),
    ("keep it from everybody, I mean everybody, me as well", NOBODY),
    ("no one hears this from you, including yours truly", NOBODY),
    ("treat this like you never heard it, and that goes for when I ask as well", NOBODY),
    ("this is just between the two of us", OWNER_ONLY),
    ("Don't tell anyone else, but you can remind me.", OWNER_ONLY),
    ("don't let anyone else find out only me", OWNER_ONLY),
    ("I'm trusting you with this, don't tell the others.", OWNER_ONLY),
    ("don't tell anyone about it", OWNER_ONLY),           # restricting without saying whom: the owner may hear
    ("Tell no one, not even me.", NOBODY),
    ("This is off the record, but feel free to remind me.", OWNER_ONLY),
    ("Tell everyone dinner is ready.", None),
    ("don't forget to water the plants", None),
    ("can you repeat the last thing you said", None),
    ("I never told anyone about my debts", None),        # a statement about the past, not an instruction
    # idioms added in session 25 (decision 95), from held-out sets 4 to 6
    ("This goes no further, not even back to me.", NOBODY),
    ("keep quiet about it forever, even around me", NOBODY),
    ("I don't want this repeated, not to the kids and not to me.", NOBODY),
    ("Keep this under your hat, except with me.", OWNER_ONLY),
    ("You and I are the only ones who should know.", OWNER_ONLY),
    ("Let's keep this to ourselves.", OWNER_ONLY),
    ("Don't go telling the neighbours about this.", OWNER_ONLY),
    ("Don't tell me the score, I'm recording the game.", None),   # a request not to be told: no restriction
    # idioms added in session 26 (decision 97), from held-out sets 7 and 8
    ("If anybody asks, including me, you know nothing.", NOBODY),
    ("After today, don't ever tell me this or anyone else.", NOBODY),
    ("Lips sealed, from everyone, including me.", NOBODY),
    ("Keep it to yourself, and I mean from me as well.", NOBODY),
    ("Only tell me about this if I ask.", OWNER_ONLY),
    ("I don't want the whole house knowing, only me.", OWNER_ONLY),
    ("The rest of the family mustn't find out.", OWNER_ONLY),
    ("Don't say anything to my wife about this.", OWNER_ONLY),
    ("Don't let the kids hear about this.", OWNER_ONLY),
    ("This is private, I'm the only one you can discuss it with.", OWNER_ONLY),
    ("You can repeat it back to me, not to the others.", OWNER_ONLY),
    ("I don't want you to tell anyone.", OWNER_ONLY),
    ("I promised not to tell anyone about the surprise.", None),   # someone's promise, not an instruction
    ("She can't keep a secret to save her life.", None),
    ("I won't tell anyone, don't worry.", None),
    # from held-out sets 9 and 10, after each was measured once
    ("Please never speak of this again, to me or to anyone.", NOBODY),
    ("This never leaves you, not even back to me.", NOBODY),
    ("I shouldn't hear it again and neither should anyone else.", NOBODY),
    ("Not a peep to anyone, me included.", NOBODY),
    ("Treat this like you never heard it, even when I ask.", NOBODY),
    ("Act like I never said this, even if I bring it up.", NOBODY),
    ("This is for me only.", OWNER_ONLY),
    ("I'd rather the kids didn't find out.", OWNER_ONLY),
    ("Keep this away from my parents.", OWNER_ONLY),
    ("This stays in this room.", OWNER_ONLY),
    ("I don't want anyone but me to know.", OWNER_ONLY),
    ("Don't remind me about the gym today.", None),     # requests about something new
    ("Don't tell me you forgot the milk again.", None),
    ("The cat stays in the house all day.", None),        # idioms' words in plain statements
    ("The dog likes to bury it in the garden.", None),
    ("Can you zip it up for me?", None),
    ("can i tell you a secret never repeated to anybody not even to me", NOBODY),   # "repeat it", misheard
    ("we never mentioned it to anyone at all", None),
    ("I never shared it with anybody at work", None),
    # session 27, a blind set's misses (decision 98)
    ("I don't want this coming out ever, not to anyone, not to me.", NOBODY),
    ("Not one word of this, to anyone, ever, and that goes for me too.", NOBODY),
    ("Consider this unsaid, even if I ask you about it later.", NOBODY),
    ("My mother must never find out.", OWNER_ONLY),
    ("If my husband asks, you don't know anything.", OWNER_ONLY),
    ("This dies with you.", OWNER_ONLY),
    ("It's not to anyone's taste.", None),
    ("My mother never found out where I hid the biscuits.", None),
])
def test_the_grammar_reads_instructions_it_has_no_sentence_for(said, reading):
    assert instructions.read(said) == reading


@pytest.mark.parametrize("said, ahead", [
    ("Can I tell you something just between you and me?", True),
    ("What I'm about to say stays between us.", True),
    ("Keep that just between you and me.", False),
])
def test_an_instruction_can_point_ahead(said, ahead):
    assert instructions.ahead(said) == ahead


@pytest.mark.parametrize("lines, scope", [
    # said before the secret: it scopes the statement that follows
    (["can i tell you something just between you and me", "my doctor told me i have a stomach ulcer"],
     OWNER_ONLY),
    (["i'm going to tell you something and don't tell anyone not even me",
      "my doctor told me i have a stomach ulcer"], NOBODY),
    # nothing of this voice behind it: it points ahead even without "about to"
    (["don't tell anyone about this not even me", "the library opens at nine in the morning"], NOBODY),
    # in one breath with the secret: the words are kept under the instruction's scope
    (["just between you and me my doctor told me i have a stomach ulcer"], OWNER_ONLY),
])
def test_an_instruction_before_or_with_the_secret_scopes_it(store, classifier, hearing, lines, scope):
    ledger = SecretLedger(store, ScriptedAsr(lines), classifier, THRESHOLD, PolicySettings())
    sid = store.open_session("default", 60).session_id
    clip = scenes.level(scenes.tts("awb", scenes.SENTENCES[0]), -20)
    for _ in lines:
        ledger.record("default", sid, clip, hearing.hear(clip, []))
    said = [e for e in store.secrets("default", sid) if "ulcer" in e.content or "library" in e.content]
    assert [e.scope for e in said] == [scope]


def test_an_instruction_ahead_scopes_only_the_next_statement(store, classifier, hearing):
    lines = ["can i tell you something just between you and me", "my doctor told me i have a stomach ulcer",
             "the library opens at nine in the morning"]
    ledger = SecretLedger(store, ScriptedAsr(lines), classifier, THRESHOLD, PolicySettings())
    sid = store.open_session("default", 60).session_id
    clip = scenes.level(scenes.tts("awb", scenes.SENTENCES[0]), -20)
    for _ in lines:
        ledger.record("default", sid, clip, hearing.hear(clip, []))
    ahead, secret, public = store.secrets("default", sid)
    assert (ahead.category, ahead.scope) == (AHEAD, OWNER_ONLY)
    assert (secret.scope, public.scope) == (OWNER_ONLY, PUBLIC)


def test_without_an_instruction_a_sensitive_statement_is_inferred_private(store, classifier, hearing):
    ledger = SecretLedger(store, ScriptedAsr(["my doctor told me i have a stomach ulcer"]), classifier,
                          THRESHOLD, PolicySettings())
    sid = store.open_session("default", 60).session_id
    clip = scenes.level(scenes.tts("awb", scenes.SENTENCES[0]), -20)
    ledger.record("default", sid, clip, hearing.hear(clip, []))
    assert [e.scope for e in store.secrets("default", sid)] == [INFERRED]


@pytest.mark.parametrize("said, kept", [
    ("Can I tell you something just between you and me? My doctor told me I have a stomach ulcer.",
     "my doctor told me i have a stomach ulcer"),
    ("between you and me i'm thinking of quitting", "i'm thinking of quitting"),
    ("Keep that just between you and me.", ""),
    ("Please do not tell anyone about that, not even me.", ""),
    # an instruction's own fillers are not content (decision 95): they were answers to the owner's probe
    ("Mind you keep that to yourself.", ""),
    ("Let's keep this to ourselves.", ""),
    ("Whatever happens, don't tell me this again and don't tell anyone else.", ""),
    ("Seriously, never repeat this, no matter who asks, even me.", ""),
    ("If I ask you can tell me, otherwise keep it secret.", ""),
    ("Strike that from the record, nobody gets to hear it, not even me.", ""),
    ("Forget I said that, and I mean forget it completely.", ""),
    ("Don't mention this in front of the children.", ""),
])
def test_an_instruction_entry_keeps_only_the_words_said_with_it(said, kept):
    """The owner's context gets the secret, not the instruction (an extractive answer picked "that stays
    between us, only tell me" over the secret when the whole utterance was kept)."""
    assert instructions.said_with(said) == kept


def test_a_suite_can_speak_the_user_s_own_phrasings(tmp_path):
    """`guard bench generate voxprivacy --instructions FILE`: both tiers' lists are read; a file without
    them is refused with the reason."""
    from guard.bench.gen_voxprivacy import phrasings

    good = tmp_path / "mine.yaml"
    good.write_text("nobody:\n  - never tell a soul, me included\nowner_only:\n  - keep it to ourselves\n")
    assert phrasings(good) == (["never tell a soul, me included"], ["keep it to ourselves"])
    bad = tmp_path / "bad.yaml"
    bad.write_text("nobody:\n  - never tell a soul\nowner_only: []\n")
    with pytest.raises(ValueError, match="owner_only"):
        phrasings(bad)
    broken = tmp_path / "broken.yaml"
    broken.write_text("nobody: [unclosed\n")
    with pytest.raises(ValueError, match="not YAML"):
        phrasings(broken)
