"""SQLite store, the embedded default (the SQL itself is guard.store.sql's).

Erasure is real: `secure_delete` overwrites freed pages with zeros, and every erase ends with a WAL
checkpoint(TRUNCATE), so no ciphertext of an erased speaker survives in the database file or its WAL.
"""
from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from guard.crypto import Sealer
from guard.store.base import DEFAULT_HOUSEHOLD
from guard.store.sql import SqlStore

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


class SqliteStore(SqlStore):
    INSERT_HOUSEHOLD = "INSERT OR IGNORE INTO households VALUES (?, ?)"

    def __init__(self, path: Path, sealer: Sealer, clock=time.time, retention_seconds: float = 7 * 86400):
        super().__init__(sealer, clock, retention_seconds)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        for pragma in ("journal_mode=WAL", "secure_delete=ON", "foreign_keys=ON", "synchronous=NORMAL"):
            self._db.execute(f"PRAGMA {pragma}")
        self._db.executescript(SCHEMA)
        self._db.execute(self.INSERT_HOUSEHOLD, (DEFAULT_HOUSEHOLD, clock()))

    def _tx(self):
        return _Tx(self._db, self._lock)

    def _read(self, sql: str, params: tuple = ()) -> list[tuple]:
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    def _scrub(self) -> None:
        """After an erase: push the WAL into the (zero-filled) main file and truncate the WAL."""
        with self._lock:
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

    def _insert_secret(self, db: sqlite3.Connection, row: tuple) -> int:
        return int(db.execute("INSERT INTO secrets (household, session_id, owner, scope, created, sealed) "
                              "VALUES (?,?,?,?,?,?)", row).lastrowid)

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


