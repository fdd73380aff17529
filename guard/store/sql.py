"""What the SQL stores share: every Store method, written once in portable SQL.

A dialect (sqlite.SqliteStore, postgres.PostgresStore) supplies the connection and what differs:
`_tx()` (one locked transaction, a connection whose `execute(sql, params)` takes `?` placeholders),
`_read(sql, params)` (rows, outside a write transaction), `_scrub()` (what erasure does after the rows
are deleted), `_insert_secret(db, row)` (the new id), `INSERT_HOUSEHOLD` (insert unless present), and
`_serialise(db, key)` where other processes share the database.
Every sensitive payload is sealed with the row's household, kind and key as associated data, so a sealed
blob copied to another row does not open.
"""
from __future__ import annotations

import abc
import time
import uuid
from contextlib import AbstractContextManager
from typing import Any

from guard.crypto import Sealer
from guard.errors import SessionNotFound, SpeakerNotFound
from guard.store.base import DEFAULT_HOUSEHOLD, SecretEntry, Session, SpeakerInfo, Store, Voiceprint
from guard.store.codec import pack_arrays, unpack_arrays


class SqlStore(Store):
    INSERT_HOUSEHOLD = ""   # SQL inserting (name, created) unless the household exists

    def __init__(self, sealer: Sealer, clock=time.time, retention_seconds: float = 7 * 86400):
        self._sealer = sealer
        self._clock = clock
        self.retention_seconds = retention_seconds

    # the dialect --------------------------------------------------------------------------------
    @abc.abstractmethod
    def _tx(self) -> AbstractContextManager[Any]: ...

    @abc.abstractmethod
    def _read(self, sql: str, params: tuple = ()) -> list[tuple]: ...

    @abc.abstractmethod
    def _scrub(self) -> None: ...

    @abc.abstractmethod
    def _insert_secret(self, db: Any, row: tuple) -> int: ...

    def _serialise(self, db: Any, key: str) -> None:
        """Inside a transaction: wait for any other writer of `key` (other processes sharing the database)
        to finish. One process's writes are already serialised by its lock."""

    @staticmethod
    def _ctx(household: str, kind: str, key: str) -> str:
        return f"{household}/{kind}/{key}"

    # households ---------------------------------------------------------------------------------
    def household_exists(self, household: str) -> bool:
        return bool(self._read("SELECT 1 FROM households WHERE name=?", (household,)))

    # voiceprints --------------------------------------------------------------------------------
    def put_voiceprint(self, vp: Voiceprint) -> bool:
        ctx = self._ctx(vp.household, "voiceprint", vp.speaker_id)
        blob = self._sealer.seal(pack_arrays(meta={"f0_hz": vp.f0_hz}, centroid=vp.centroid, clips=vp.clips), ctx)
        with self._tx() as db:
            self._serialise(db, ctx)
            db.execute(self.INSERT_HOUSEHOLD, (vp.household, self._clock()))
            replaced = db.execute("DELETE FROM voiceprints WHERE household=? AND speaker_id=?",
                                  (vp.household, vp.speaker_id)).rowcount > 0
            db.execute("INSERT INTO voiceprints VALUES (?,?,?,?,?,?,?,?)",
                       (vp.household, vp.speaker_id, vp.display_name, vp.embedder, len(vp.clips),
                        vp.net_speech_seconds, vp.created_unix, blob))
        if replaced:
            self._scrub()
        return replaced

    def voiceprints(self, household: str, embedder: str) -> list[Voiceprint]:
        rows = self._read("SELECT speaker_id, display_name, net_speech, created, sealed FROM voiceprints "
                          "WHERE household=? AND embedder=? ORDER BY speaker_id", (household, embedder))
        out = []
        for sid, name, speech, created, blob in rows:
            arrays = unpack_arrays(self._sealer.open(bytes(blob), self._ctx(household, "voiceprint", sid)))
            out.append(Voiceprint(household, sid, name, embedder, arrays["centroid"], arrays["clips"],
                                  speech, created, float(arrays["meta"].get("f0_hz", 0.0))))
        return out

    def list_speakers(self, household: str) -> list[SpeakerInfo]:
        rows = self._read("SELECT speaker_id, display_name, embedder, clips, net_speech, created FROM "
                          "voiceprints WHERE household=? ORDER BY speaker_id", (household,))
        return [SpeakerInfo(household, *r) for r in rows]

    def count_speakers(self) -> int:
        return int(self._read("SELECT COUNT(*) FROM voiceprints")[0][0])

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

    def _expire(self, db: Any, now: float) -> None:
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
            if not row:
                raise SessionNotFound(f"session {session_id!r} is not open in household {household!r} "
                                      "(never opened, closed, or expired after its idle timeout)")
            db.execute("UPDATE sessions SET last_seen=?, turns=turns+1 WHERE household=? AND id=?",
                       (now, household, session_id))
        created, idle, turns = row[0]
        return Session(household, session_id, created, now, idle, turns + 1)

    def close_session(self, household: str, session_id: str) -> int:
        with self._tx() as db:
            row = db.execute("SELECT turns FROM sessions WHERE household=? AND id=?",
                             (household, session_id)).fetchall()
            if not row:
                raise SessionNotFound(f"session {session_id!r} is not open in household {household!r}")
            db.execute("DELETE FROM secrets WHERE household=? AND session_id=?", (household, session_id))
            db.execute("DELETE FROM sessions WHERE household=? AND id=?", (household, session_id))
        self._scrub()
        return int(row[0][0])

    # secrets ------------------------------------------------------------------------------------
    def add_secret(self, entry: SecretEntry) -> int:
        payload = pack_arrays(owner_voice=entry.owner_voice,
                              meta={"category": entry.category, "content": entry.content, **entry.extra})
        with self._tx() as db:
            entry_id = self._insert_secret(db, (entry.household, entry.session_id, entry.owner_speaker_id,
                                                entry.scope, entry.created_unix, b""))
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
        rows = self._read("SELECT id, owner, scope, created, sealed FROM secrets "
                          "WHERE household=? AND session_id=? ORDER BY id", (household, session_id))
        out = []
        for entry_id, owner, scope, created, blob in rows:
            data = unpack_arrays(self._sealer.open(bytes(blob), self._ctx(household, "secret", str(entry_id))))
            meta = dict(data["meta"])
            out.append(SecretEntry(household, session_id, entry_id, owner, data["owner_voice"], scope,
                                   meta.pop("category"), meta.pop("content"), created, meta))
        return out
