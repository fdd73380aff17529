"""The store interface: voiceprints, sessions and the secret ledger, scoped by household.

Implementations (SQL shared in sql.SqlStore): sqlite.SqliteStore (embedded default) and
postgres.PostgresStore (replicas sharing state). Every sensitive payload (voiceprint vectors,
secret content) is sealed by crypto.Sealer before it reaches the database; rows hold only ciphertext,
ids and timestamps.
"""
from __future__ import annotations

import abc
from dataclasses import dataclass, field

import numpy as np

DEFAULT_HOUSEHOLD = "default"


@dataclass(frozen=True)
class Voiceprint:
    household: str
    speaker_id: str
    display_name: str
    embedder: str
    centroid: np.ndarray        # (d,), unit norm
    clips: np.ndarray           # (k, d), unit norm: each enrollment clip's embedding, for re-scoring
    net_speech_seconds: float
    created_unix: float
    f0_hz: float = 0.0          # median fundamental frequency of the enrollment speech (0: unknown)


@dataclass(frozen=True)
class SpeakerInfo:
    household: str
    speaker_id: str
    display_name: str
    embedder: str
    clips: int
    net_speech_seconds: float
    created_unix: float


@dataclass
class Session:
    household: str
    session_id: str
    created_unix: float
    last_seen_unix: float
    idle_seconds: int
    turns: int = 0


@dataclass(frozen=True)
class SecretEntry:
    """One disclosure in the ledger. `content` and `keys` are plaintext only in memory."""

    household: str
    session_id: str
    entry_id: int
    owner_speaker_id: str       # enrolled id, or "" for a session-local voice
    owner_voice: np.ndarray     # embedding of the turn's speaker, for session-local matching
    scope: str                  # nobody | owner_only | inferred_private | public
    category: str
    content: str
    created_unix: float
    extra: dict = field(default_factory=dict)


class Store(abc.ABC):
    """What the server needs from persistence. All methods are thread-safe."""

    # households ---------------------------------------------------------------------------------
    @abc.abstractmethod
    def household_exists(self, household: str) -> bool: ...

    # voiceprints --------------------------------------------------------------------------------
    @abc.abstractmethod
    def put_voiceprint(self, vp: Voiceprint) -> bool:
        """Insert or replace; creates the household. Returns True when one was replaced."""

    @abc.abstractmethod
    def voiceprints(self, household: str, embedder: str) -> list[Voiceprint]: ...

    @abc.abstractmethod
    def list_speakers(self, household: str) -> list[SpeakerInfo]: ...

    @abc.abstractmethod
    def count_speakers(self) -> int:
        """Enrolled speakers across all households (for the metrics gauge)."""

    @abc.abstractmethod
    def forget_speaker(self, household: str, speaker_id: str) -> tuple[int, int]:
        """Erase a speaker and the secrets they own. (speakers, secrets) erased; SpeakerNotFound if none."""

    @abc.abstractmethod
    def forget_household(self, household: str) -> tuple[int, int]: ...

    # sessions -----------------------------------------------------------------------------------
    @abc.abstractmethod
    def open_session(self, household: str, idle_seconds: int) -> Session: ...

    @abc.abstractmethod
    def touch_session(self, household: str, session_id: str) -> Session:
        """Count a turn and refresh the idle clock; SessionNotFound if missing, closed or expired."""

    @abc.abstractmethod
    def close_session(self, household: str, session_id: str) -> int:
        """Close and erase the session's secrets; returns its turn count."""

    # secrets ------------------------------------------------------------------------------------
    @abc.abstractmethod
    def add_secret(self, entry: SecretEntry) -> int: ...

    @abc.abstractmethod
    def secrets(self, household: str, session_id: str) -> list[SecretEntry]: ...

    @abc.abstractmethod
    def set_scope(self, household: str, session_id: str, entry_id: int, scope: str) -> None: ...

    @abc.abstractmethod
    def close(self) -> None: ...
