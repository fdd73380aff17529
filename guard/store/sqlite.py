"""SQLite store, the embedded default.

Erasure is real: `secure_delete` overwrites freed pages with zeros, and every erase ends with a WAL
checkpoint(TRUNCATE), so no ciphertext of an erased speaker survives in the database file or its WAL.
"""
from __future__ import annotations

import sqlite3
import threading
import time
import uuid
from pathlib import Path

from guard.crypto import Sealer
from guard.errors import SessionNotFound, SpeakerNotFound
from guard.store.base import DEFAULT_HOUSEHOLD, SecretEntry, Session, SpeakerInfo, Store, Voiceprint
from guard.store.codec import pack_arrays, unpack_arrays

SCHEMA = """
CREATE TABLE IF NOT EXISTS households (name TEXT PRIMARY KEY, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS voiceprints (
  household TEXT NOT NULL REFERENCES households(name) ON DELETE CASCADE,
  speaker_id TEXT NOT NULL, display_name TEXT NOT NULL, embedder TEXT NOT NULL,
  clips INTEGER NOT NULL, net_speech REAL NOT NULL, created REAL NOT NULL,
  sealed BLOB NOT NULL, PRIMARY KEY (household, speaker_id));
CREATE TABLE IF NOT EXISTS sessions (
  household TEXT NOT NULL REFERENCES households(name) ON DELETE CASCADE,
  id TEXT NOT NULL, created REAL NOT NULL, last_seen REAL NOT NULL, idle INTEGER NOT NULL,
  turns INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (household, id));
CREATE TABLE IF NOT EXISTS secrets (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  household TEXT NOT NULL REFERENCES households(name) ON DELETE CASCADE,
  session_id TEXT NOT NULL, owner TEXT NOT NULL, scope TEXT NOT NULL, created REAL NOT NULL,
  sealed BLOB NOT NULL);
"""


class SqliteStore(Store):
    def __init__(self, path: Path, sealer: Sealer, clock=time.time, retention_seconds: float = 7 * 86400):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._sealer = sealer
        self._clock = clock
        self.retention_seconds = retention_seconds
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        for pragma in ("journal_mode=WAL", "secure_delete=ON", "foreign_keys=ON", "synchronous=NORMAL"):
            self._db.execute(f"PRAGMA {pragma}")
        self._db.executescript(SCHEMA)
        self._db.execute("INSERT OR IGNORE INTO households VALUES (?, ?)", (DEFAULT_HOUSEHOLD, clock()))

    # helpers ------------------------------------------------------------------------------------
    def _tx(self):
        return _Tx(self._db, self._lock)

    def _scrub(self) -> None:
        """After an erase: push the WAL into the (zero-filled) main file and truncate the WAL."""
        with self._lock:
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

    @staticmethod
    def _ctx(household: str, kind: str, key: str) -> str:
        return f"{household}/{kind}/{key}"

    # households ---------------------------------------------------------------------------------
    def household_exists(self, household: str) -> bool:
        with self._lock:
            rows = self._db.execute("SELECT 1 FROM households WHERE name=?", (household,)).fetchall()
        return bool(rows)

    # voiceprints --------------------------------------------------------------------------------
    def put_voiceprint(self, vp: Voiceprint) -> bool:
        blob = self._sealer.seal(pack_arrays(meta={"f0_hz": vp.f0_hz}, centroid=vp.centroid, clips=vp.clips),
                                 self._ctx(vp.household, "voiceprint", vp.speaker_id))
        with self._tx() as db:
            db.execute("INSERT OR IGNORE INTO households VALUES (?, ?)", (vp.household, self._clock()))
            replaced = db.execute("DELETE FROM voiceprints WHERE household=? AND speaker_id=?",
                                  (vp.household, vp.speaker_id)).rowcount > 0
            db.execute("INSERT INTO voiceprints VALUES (?,?,?,?,?,?,?,?)",
                       (vp.household, vp.speaker_id, vp.display_name, vp.embedder, len(vp.clips),
                        vp.net_speech_seconds, vp.created_unix, blob))
        if replaced:
            self._scrub()
        return replaced

    def voiceprints(self, household: str, embedder: str) -> list[Voiceprint]:
        with self._lock:
            rows = self._db.execute(
                "SELECT speaker_id, display_name, net_speech, created, sealed FROM voiceprints "
                "WHERE household=? AND embedder=? ORDER BY speaker_id", (household, embedder)).fetchall()
        out = []
        for sid, name, speech, created, blob in rows:
            arrays = unpack_arrays(self._sealer.open(blob, self._ctx(household, "voiceprint", sid)))
            out.append(Voiceprint(household, sid, name, embedder, arrays["centroid"], arrays["clips"],
                                  speech, created, float(arrays["meta"].get("f0_hz", 0.0))))
        return out

    def list_speakers(self, household: str) -> list[SpeakerInfo]:
        with self._lock:
            rows = self._db.execute(
                "SELECT speaker_id, display_name, embedder, clips, net_speech, created FROM voiceprints "
                "WHERE household=? ORDER BY speaker_id", (household,)).fetchall()
        return [SpeakerInfo(household, *r) for r in rows]

    def count_speakers(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM voiceprints").fetchall()[0][0])

    def forget_speaker(self, household: str, speaker_id: str) -> tuple[int, int]:
        with self._tx() as db:
            n = db.execute("DELETE FROM voiceprints WHERE household=? AND speaker_id=?",
                           (household, speaker_id)).rowcount
            if n == 0:
                raise SpeakerNotFound(f"speaker {speaker_id!r} is not enrolled in household {household!r}")
            m = db.execute("DELETE FROM secrets WHERE household=? AND owner=?",
                           (household, speaker_id)).rowcount
        self._scrub()
        return n, m

    def forget_household(self, household: str) -> tuple[int, int]:
        with self._tx() as db:
            if not db.execute("SELECT 1 FROM households WHERE name=?", (household,)).fetchall():
                raise SpeakerNotFound(f"household {household!r} does not exist")
            n = db.execute("DELETE FROM voiceprints WHERE household=?", (household,)).rowcount
            m = db.execute("DELETE FROM secrets WHERE household=?", (household,)).rowcount
            db.execute("DELETE FROM sessions WHERE household=?", (household,))
            if household != DEFAULT_HOUSEHOLD:
                db.execute("DELETE FROM households WHERE name=?", (household,))
        self._scrub()
        return n, m

    # sessions -----------------------------------------------------------------------------------
    def open_session(self, household: str, idle_seconds: int) -> Session:
        now = self._clock()
        s = Session(household, uuid.uuid4().hex, now, now, idle_seconds)
        with self._tx() as db:
            self._expire(db, now)
            db.execute("INSERT INTO sessions VALUES (?,?,?,?,?,0)", (household, s.session_id, now, now,
                                                                      idle_seconds))
        return s

    def _expire(self, db: sqlite3.Connection, now: float) -> None:
        db.execute("DELETE FROM secrets WHERE created < ?", (now - self.retention_seconds,))
        gone = db.execute("SELECT household, id FROM sessions WHERE last_seen + idle < ?", (now,)).fetchall()
        for h, sid in gone:
            db.execute("DELETE FROM secrets WHERE household=? AND session_id=?", (h, sid))
            db.execute("DELETE FROM sessions WHERE household=? AND id=?", (h, sid))

    def touch_session(self, household: str, session_id: str) -> Session:
        now = self._clock()
        with self._tx() as db:
            self._expire(db, now)
            row = db.execute("SELECT created, idle, turns FROM sessions WHERE household=? AND id=?",
                             (household, session_id)).fetchall()
            row = row[0] if row else None
            if row is None:
                raise SessionNotFound(f"session {session_id!r} is not open in household {household!r} "
                                      "(never opened, closed, or expired after its idle timeout)")
            db.execute("UPDATE sessions SET last_seen=?, turns=turns+1 WHERE household=? AND id=?",
                       (now, household, session_id))
        return Session(household, session_id, row[0], now, row[1], row[2] + 1)

    def close_session(self, household: str, session_id: str) -> int:
        with self._tx() as db:
            row = db.execute("SELECT turns FROM sessions WHERE household=? AND id=?",
                             (household, session_id)).fetchall()
            row = row[0] if row else None
            if row is None:
                raise SessionNotFound(f"session {session_id!r} is not open in household {household!r}")
            db.execute("DELETE FROM secrets WHERE household=? AND session_id=?", (household, session_id))
            db.execute("DELETE FROM sessions WHERE household=? AND id=?", (household, session_id))
        self._scrub()
        return int(row[0])

    # secrets ------------------------------------------------------------------------------------
    def add_secret(self, entry: SecretEntry) -> int:
        payload = pack_arrays(owner_voice=entry.owner_voice,
                              meta={"category": entry.category, "content": entry.content, **entry.extra})
        with self._tx() as db:
            cur = db.execute("INSERT INTO secrets (household, session_id, owner, scope, created, sealed) "
                             "VALUES (?,?,?,?,?,?)", (entry.household, entry.session_id,
                                                      entry.owner_speaker_id, entry.scope,
                                                      entry.created_unix, b""))
            entry_id = int(cur.lastrowid)
            blob = self._sealer.seal(payload, self._ctx(entry.household, "secret", str(entry_id)))
            db.execute("UPDATE secrets SET sealed=? WHERE id=?", (blob, entry_id))
        return entry_id

    def set_scope(self, household: str, session_id: str, entry_id: int, scope: str) -> None:
        with self._tx() as db:
            db.execute("UPDATE secrets SET scope=? WHERE household=? AND session_id=? AND id=?",
                       (scope, household, session_id, entry_id))

    def secrets(self, household: str, session_id: str) -> list[SecretEntry]:
        with self._tx() as db:
            self._expire(db, self._clock())
        with self._lock:
            rows = self._db.execute("SELECT id, owner, scope, created, sealed FROM secrets "
                                    "WHERE household=? AND session_id=? ORDER BY id",
                                    (household, session_id)).fetchall()
        out = []
        for entry_id, owner, scope, created, blob in rows:
            data = unpack_arrays(self._sealer.open(blob, self._ctx(household, "secret", str(entry_id))))
            meta = dict(data["meta"])
            out.append(SecretEntry(household, session_id, entry_id, owner, data["owner_voice"], scope,
                                   meta.pop("category"), meta.pop("content"), created, meta))
        return out

    def close(self) -> None:
        with self._lock:
            self._db.close()


class _Tx:
    """`with store._tx() as db:` one locked transaction, rolled back on error."""

    def __init__(self, db: sqlite3.Connection, lock: threading.Lock):
        self._db, self._lock = db, lock

    def __enter__(self) -> sqlite3.Connection:
        self._lock.acquire()
        self._db.execute("BEGIN IMMEDIATE")
        return self._db

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if exc_type:
                self._db.execute("ROLLBACK")
            else:
                try:
                    self._db.execute("COMMIT")
                except sqlite3.Error:
                    self._db.execute("ROLLBACK")  # never leave the connection inside a transaction
                    raise
        finally:
            self._lock.release()


