"""Postgres store: voiceprints, sessions and the ledger shared by every sidecar replica.

The SQL is guard.store.sql's; this module is the dialect. One connection per store (autocommit; each
write in its own transaction), serialised by a lock, re-opened when the server drops it. Tables live in
their own schema (`store.postgres_schema`), created on first start. Payloads are sealed before they
reach Postgres, with a key Postgres never sees. Erasure deletes the rows and then VACUUMs the tables,
so the space is reused; unlike SQLite's secure_delete, Postgres does not zero freed tuples, and its WAL
and backups keep the ciphertext until they are recycled (decision 80): the key is what makes it
unreadable.
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager

import psycopg
from psycopg import sql

from guard.crypto import Sealer
from guard.errors import ConfigError, StoreUnavailable
from guard.store.base import DEFAULT_HOUSEHOLD
from guard.store.sql import SqlStore

SCHEMA = """
CREATE TABLE IF NOT EXISTS households (name TEXT PRIMARY KEY, created DOUBLE PRECISION NOT NULL);
CREATE TABLE IF NOT EXISTS voiceprints (
  household TEXT NOT NULL REFERENCES households(name) ON DELETE CASCADE,
  speaker_id TEXT NOT NULL, display_name TEXT NOT NULL, embedder TEXT NOT NULL,
  clips INTEGER NOT NULL, net_speech DOUBLE PRECISION NOT NULL, created DOUBLE PRECISION NOT NULL,
  sealed BYTEA NOT NULL, PRIMARY KEY (household, speaker_id));
CREATE TABLE IF NOT EXISTS sessions (
  household TEXT NOT NULL REFERENCES households(name) ON DELETE CASCADE,
  id TEXT NOT NULL, created DOUBLE PRECISION NOT NULL, last_seen DOUBLE PRECISION NOT NULL,
  idle INTEGER NOT NULL, turns INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (household, id));
CREATE TABLE IF NOT EXISTS secrets (
  id BIGSERIAL PRIMARY KEY,
  household TEXT NOT NULL REFERENCES households(name) ON DELETE CASCADE,
  session_id TEXT NOT NULL, owner TEXT NOT NULL, scope TEXT NOT NULL, created DOUBLE PRECISION NOT NULL,
  sealed BYTEA NOT NULL);
CREATE INDEX IF NOT EXISTS secrets_session ON secrets (household, session_id);
"""


class _Conn:
    """A psycopg connection that takes the shared SQL's `?` placeholders."""

    def __init__(self, conn: psycopg.Connection):
        self.conn = conn

    def execute(self, query: str, params: tuple = ()) -> psycopg.Cursor:
        return self.conn.execute(query.replace("?", "%s"), params)


class PostgresStore(SqlStore):
    INSERT_HOUSEHOLD = "INSERT INTO households VALUES (?, ?) ON CONFLICT (name) DO NOTHING"

    def __init__(self, dsn: str, sealer: Sealer, schema: str = "guard", clock=time.time,
                 retention_seconds: float = 7 * 86400):
        super().__init__(sealer, clock, retention_seconds)
        self._dsn, self.schema = dsn, schema
        self._lock = threading.Lock()
        self._conn: psycopg.Connection | None = None
        with self._tx() as db:   # replicas starting together: one creates, the others wait (IF NOT EXISTS races)
            db.execute("SELECT pg_advisory_xact_lock(hashtext(?))", (f"guard schema {schema}",))
            db.conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
            db.conn.execute(SCHEMA)
            db.execute(self.INSERT_HOUSEHOLD, (DEFAULT_HOUSEHOLD, clock()))

    def _connect(self) -> psycopg.Connection:
        if self._conn is not None and not self._conn.closed and not self._conn.broken:
            return self._conn
        try:
            conn = psycopg.connect(self._dsn, autocommit=True, connect_timeout=10)
        except psycopg.Error as e:
            if self._conn is None:   # at start: the setting is wrong or the server is not there
                raise ConfigError(f"store.postgres_dsn: cannot connect to Postgres: {str(e).strip()}") from None
            raise StoreUnavailable(f"Postgres store: cannot reach Postgres again: {str(e).strip()}") from None
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(self.schema)))
        self._conn = conn
        return conn

    @contextmanager
    def _tx(self):
        """One locked transaction; a server-side failure rolls it back and reads as StoreUnavailable."""
        with self._lock:
            conn = self._connect()
            try:
                with conn.transaction():
                    yield _Conn(conn)
            except psycopg.Error as e:
                raise StoreUnavailable(f"Postgres store: {type(e).__name__}: {str(e).strip()}") from None

    def _read(self, query: str, params: tuple = ()) -> list[tuple]:
        with self._tx() as db:
            return db.execute(query, params).fetchall()

    def _scrub(self) -> None:
        """After an erase: VACUUM, so the deleted rows' space is reclaimed (outside any transaction)."""
        with self._lock:
            try:
                self._connect().execute("VACUUM voiceprints, secrets, sessions")
            except psycopg.Error as e:
                raise StoreUnavailable(f"Postgres store: VACUUM after erasure failed: {e}") from None

    def _serialise(self, db: _Conn, key: str) -> None:
        """Replicas replacing one voiceprint at once: the second waits for the first (a transaction-level
        advisory lock), instead of both deleting nothing and one failing on the primary key."""
        db.execute("SELECT pg_advisory_xact_lock(hashtext(?))", (key,))

    def _insert_secret(self, db: _Conn, row: tuple) -> int:
        return int(db.execute("INSERT INTO secrets (household, session_id, owner, scope, created, sealed) "
                              "VALUES (?,?,?,?,?,?) RETURNING id", row).fetchall()[0][0])

    def drop(self) -> None:
        """Remove the schema and everything in it (tests; `guard` never calls this)."""
        with self._lock:
            self._connect().execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(
                sql.Identifier(self.schema)))

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
