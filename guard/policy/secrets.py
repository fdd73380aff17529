"""The secret ledger: who told the assistant what, and who may hear it again (VoxPrivacy tiers).

Per Listen turn, each voice heard is transcribed and classified (an instruction is read in a second
recogniser's 1-best too, and the stricter reading applies: decision 109):
- an instruction ("not even me" -> nobody; "between you and me" -> owner_only) re-scopes that voice's
  latest entry in the session (the session's latest where none matches the voice: restrict-only), and is
  kept as an entry of that scope itself, holding the words said with it (not the instruction's own). One
  that points ahead ("can I tell you something, just between us?"), or that has nothing of its voice
  behind it, scopes the voice's next statement instead (decision 94);
- any other statement becomes an entry: inferred_private when its content is sensitive (Tier 3, then
  treated like owner_only), public otherwise (the control set). A statement the recogniser was unsure
  of (Whisper's mean word probability under `min_statement_confidence`) is kept inferred_private too,
  category "unclear": its words may hide a sensitive sentence (decision 68).
Per probe, the requester is the main speaker of the Ask. An entry is disclosed when its scope is public,
or owner_only/inferred_private and the requester is the owner's voice: the same enrolled id (or, for a
session-local owner, the same embedding) with a score margin above the verify threshold, AND a median F0
within max_f0_semitones (voiceprint cosine alone accepts pitch-shifted copies). Words never establish
identity. The pitch check averages the requester's distance to two references of the owner (the pitch of
the entry's own utterance and, for an enrolled owner, the enrollment pitch): one utterance's median F0
moves with intonation (a question rises), by up to 1.2 semitones between an owner's statement and probe
on the generated suites, while the mean of the two distances stayed <= 0.83 for owners and >= 1.11 for
+-2-semitone copies (median F0 of whole clips; voxprivacy-mini and a seed-7 suite, 24 of each).
Entries are sealed in the store, scoped to household and session, erased with either.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from guard import text
from guard.config import PolicySettings
from guard.hearing import Diarization, Track
from guard.hearing.asr import Transcriber
from guard.hearing.pitch import median_f0, semitones
from guard.hearing.vad import FRAME
from guard.policy import instructions
from guard.policy.privacy_text import INFERRED, NOBODY, OWNER_ONLY, PUBLIC, PrivacyText
from guard.policy.selective import isolate
from guard.proto import guard_pb2 as pb
from guard.store import SecretEntry, Store

REFUSAL = "I can't share that with you."
UNCLEAR = "unclear"   # the category of a statement the recogniser was unsure of (kept inferred-private)
INSTRUCTION = "instruction"   # an instruction that re-scoped what its speaker had said before
AHEAD = "instruction_ahead"   # an instruction that scopes its speaker's next statement
STRICTNESS = [PUBLIC, INFERRED, OWNER_ONLY, NOBODY]


def stricter(first: str | None, second: str | None) -> str | None:
    """The stricter of two instruction readings (None: no instruction), the first where they tie."""
    return max(first or PUBLIC, second or PUBLIC, key=STRICTNESS.index) if first or second else None


@dataclass(frozen=True)
class Voice:
    speaker_id: str        # enrolled identity or ""
    score: float           # cosine to that identity's voiceprint (0 when none)
    embedding: np.ndarray
    f0_hz: float
    enrolled_f0_hz: float = 0.0   # the matched voiceprint's enrollment pitch (0: none or unknown)


def voice_of(samples: np.ndarray, d: Diarization, track: Track) -> Voice:
    own = track.frames & ~d.overlap
    mask = np.repeat(own if own.any() else track.frames, FRAME)[:len(samples)]
    return Voice(track.speaker_id, track.score, track.embedding, median_f0(samples[mask]), track.enrolled_f0_hz)


class SecretLedger:
    def __init__(self, store: Store, asr: Transcriber, classifier: PrivacyText, verify_threshold: float,
                 settings: PolicySettings, second: Transcriber | None = None):
        self.store, self.asr, self.classifier = store, asr, classifier
        self.second = second   # hears each utterance again for an instruction the first recogniser missed
        self.threshold = verify_threshold
        self.settings = settings

    # recording ----------------------------------------------------------------------------------
    def record(self, household: str, session_id: str, samples: np.ndarray, d: Diarization) -> list[pb.Recorded]:
        out = []
        entries = self.store.secrets(household, session_id)
        for track in d.tracks:
            clip = isolate(samples, d, track, self.settings.hangover_seconds)
            heard = self.asr(clip)
            utterance = heard.best
            if not utterance:
                continue
            voice = voice_of(samples, d, track)
            instruction, utterance = self.instruction(clip, utterance)
            mine = [e for e in entries if self.same_voice(e, voice, strict=False)]
            ahead = bool(instruction) and instructions.ahead(utterance)
            reported = None
            if instruction and entries and not ahead:
                # Restrict-only: the speaker's latest entry (matched loosely: failing to apply a restriction
                # is the unsafe error), else the session's latest; a scope is only ever made stricter.
                target = (mine or entries)[-1]
                scope = max(target.scope, instruction, key=STRICTNESS.index)
                self.store.set_scope(household, session_id, target.entry_id, scope)
                entries[entries.index(target)] = SecretEntry(**{**target.__dict__, "scope": scope})
                reported = pb.Recorded(speaker_label=track.label, speaker_id=voice.speaker_id, scope=scope,
                                       category=target.category)
            if instruction:
                # Kept as an entry too, holding what was said with it ("just between us, I'm quitting" keeps
                # "i'm quitting", under its scope). Pointing ahead ("can I tell you something, just between
                # us?"), or with nothing of this voice's behind it, it scopes the voice's next statement.
                scope, category = instruction, (AHEAD if ahead or not mine else INSTRUCTION)
                utterance = instructions.said_with(utterance)   # "" for an instruction alone
            else:
                s = self.classifier.sensitivity(utterance)
                scope, category = (INFERRED if s.private else PUBLIC), s.category
                if scope == PUBLIC and heard.confidence is not None \
                        and heard.confidence < self.settings.min_statement_confidence:
                    scope, category = INFERRED, UNCLEAR   # not understood: not passed on to others
                if mine and mine[-1].category == AHEAD:   # the voice said what it was about to tell
                    scope = max(scope, mine[-1].scope, key=STRICTNESS.index)
            entry = SecretEntry(household, session_id, 0, voice.speaker_id, voice.embedding, scope, category,
                                utterance, time.time(), {"f0_hz": voice.f0_hz, "score": voice.score,
                                                           "enrolled_f0_hz": voice.enrolled_f0_hz})
            entry_id = self.store.add_secret(entry)
            entries.append(SecretEntry(**{**entry.__dict__, "entry_id": entry_id}))
            out.append(reported or pb.Recorded(speaker_label=track.label, speaker_id=voice.speaker_id,
                                               scope=scope, category=category))
        return out

    def instruction(self, clip: np.ndarray, utterance: str) -> tuple[str | None, str]:
        """(the privacy instruction, the words it was read in) for one voice's clip, first heard as
        `utterance`: the stricter of the readings of both recognisers' 1-best. Misheard words lose an
        instruction ("treat this as class of fight", "yours drully") more often than they make one, and a
        missed instruction is the unsafe error (decision 109)."""
        instruction = self.classifier.instruction(utterance)
        if self.second is None or instruction == NOBODY:   # nothing stricter to hear
            return instruction, utterance
        other = self.second(clip).best
        again = self.classifier.instruction(other) if other else None
        if stricter(instruction, again) != instruction:
            return again, other
        return instruction, utterance

    # deciding -----------------------------------------------------------------------------------
    def same_voice(self, entry: SecretEntry, voice: Voice, strict: bool = True) -> bool:
        """Is `voice` the owner of `entry`? Strict (for disclosure): a margin above the threshold and a
        matching pitch. Loose (for applying an owner's instruction): the plain threshold, no pitch check."""
        need = self.threshold + (self.settings.disclosure_margin if strict else -0.1)
        if entry.owner_speaker_id:
            if voice.speaker_id != entry.owner_speaker_id or voice.score < need:
                return False
        elif float(voice.embedding @ entry.owner_voice) < need:
            return False
        if not strict:
            return True
        refs = [float(entry.extra.get("f0_hz", 0.0))]
        if entry.owner_speaker_id and entry.extra.get("enrolled_f0_hz"):
            refs.append(float(entry.extra["enrolled_f0_hz"]))
        return float(np.mean([semitones(voice.f0_hz, r) for r in refs])) <= self.settings.max_f0_semitones

    def split(self, household: str, session_id: str, requester: Voice
              ) -> tuple[list[SecretEntry], list[SecretEntry]]:
        """(entries the requester may hear, entries protected from them)."""
        allowed, protected = [], []
        for e in self.store.secrets(household, session_id):
            ok = e.scope == PUBLIC or (e.scope in (OWNER_ONLY, INFERRED) and self.same_voice(e, requester))
            (allowed if ok else protected).append(e)
        return allowed, protected

    @staticmethod
    def leaks(answer: str, protected: list[SecretEntry], question: str) -> bool:
        """Does the answer carry a protected entry's content? Distinctive words or close meaning."""
        protected = [e for e in protected if e.content.strip()]   # an instruction alone holds no words
        if not protected or not answer.strip():
            return False
        said = text.content(answer) - text.content(question)
        for e in protected:
            if said & (text.content(e.content) - text.content(question)):
                return True
        sims = text.embed([answer]) @ text.embed([e.content for e in protected]).T
        return bool(sims.max() >= 0.7)
