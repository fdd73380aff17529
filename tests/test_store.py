"""The stores: encryption at rest, erasure, household and session scoping. Tests taking `store` run on
SQLite and on Postgres (the server on loopback, GUARD_TEST_POSTGRES_DSN; skipped where none answers);
the ones on files run on SQLite, whose erasure also leaves no bytes behind."""
from __future__ import annotations

import os
import time

import numpy as np
import pytest

from guard.config import load_settings
from guard.crypto import Sealer, load_key
from guard.errors import ConfigError, SessionNotFound, SpeakerNotFound
from guard.store import SecretEntry, Voiceprint, open_store
from guard.store.sqlite import SqliteStore
from tests.conftest import PG_DSN, postgres_env


def vp(household: str, speaker: str, seed: int) -> Voiceprint:
    rng = np.random.default_rng(seed)
    clips = rng.normal(size=(3, 256)).astype(np.float32)
    clips /= np.linalg.norm(clips, axis=1, keepdims=True)
    c = clips.mean(0)
    return Voiceprint(household, speaker, speaker.title(), "resemblyzer", c / np.linalg.norm(c), clips, 9.0,
                      time.time())


@pytest.fixture(params=["sqlite", "postgres"])
def store(request, tmp_path):
    env = postgres_env(tmp_path) if request.param == "postgres" else {"GUARD_DATA_DIR": str(tmp_path)}
    s = open_store(load_settings(env=env))
    yield s
    if request.param == "postgres":
        s.drop()
    s.close()


@pytest.fixture()
def sqlite_store(tmp_path):
    s = open_store(load_settings(env={"GUARD_DATA_DIR": str(tmp_path)}))
    yield s
    s.close()


def files_bytes(tmp_path) -> bytes:
    return b"".join(p.read_bytes() for p in tmp_path.glob("guard.db*"))


def at_rest(store, tmp_path) -> bytes:
    """What an attacker with the database gets: SQLite's files, or every Postgres row as stored."""
    if isinstance(store, SqliteStore):
        return files_bytes(tmp_path)
    # the plain columns as text (a sealed column's hex could spell "4711" by chance), the sealed as bytes
    rows = store._read("SELECT (to_jsonb(t) - 'sealed')::text FROM voiceprints t "
                       "UNION ALL SELECT (to_jsonb(t) - 'sealed')::text FROM secrets t")
    raw = store._read("SELECT sealed FROM voiceprints UNION ALL SELECT sealed FROM secrets")
    return b"".join(r[0].encode() for r in rows) + b"".join(bytes(r[0]) for r in raw)


def test_key_file_is_created_owner_only(tmp_path, sqlite_store):
    key = tmp_path / "guard.key"
    assert key.exists() and (key.stat().st_mode & 0o777) == 0o600


def test_loose_key_file_permissions_are_refused(tmp_path):
    key = tmp_path / "k"
    load_key("", key)
    os.chmod(key, 0o644)
    with pytest.raises(ConfigError, match="chmod 600"):
        load_key("", key)


def test_voiceprints_are_encrypted_at_rest(tmp_path, store):
    v = vp("h1", "anna", 1)
    store.put_voiceprint(v)
    raw = at_rest(store, tmp_path)
    assert len(raw) > 256 * 4
    assert v.centroid.astype("<f4").tobytes()[:64] not in raw
    assert v.clips.astype("<f4").tobytes()[:64] not in raw
    (back,) = store.voiceprints("h1", "resemblyzer")
    assert np.allclose(back.centroid, v.centroid) and np.allclose(back.clips, v.clips)


def test_a_wrong_key_cannot_open_records(tmp_path):
    s1 = SqliteStore(tmp_path / "g.db", Sealer(b"k" * 32))
    s1.put_voiceprint(vp("h", "anna", 1))
    s1.close()
    s2 = SqliteStore(tmp_path / "g.db", Sealer(b"j" * 32))
    with pytest.raises(ConfigError, match="does not open"):
        s2.voiceprints("h", "resemblyzer")


def test_forget_leaves_no_ciphertext_in_db_wal_or_journal(tmp_path, sqlite_store):
    store = sqlite_store
    store.put_voiceprint(vp("h1", "anna", 1))
    store.put_voiceprint(vp("h1", "ben", 2))
    row = store._db.execute("SELECT sealed FROM voiceprints WHERE speaker_id='anna'").fetchone()[0]
    keep = store._db.execute("SELECT sealed FROM voiceprints WHERE speaker_id='ben'").fetchone()[0]
    assert row[:48] in files_bytes(tmp_path)
    assert store.forget_speaker("h1", "anna") == (1, 0)
    raw = files_bytes(tmp_path)
    assert row[:48] not in raw and row[-48:] not in raw
    assert keep[:48] in raw  # the other speaker survives
    assert [v.speaker_id for v in store.voiceprints("h1", "resemblyzer")] == ["ben"]
    with pytest.raises(SpeakerNotFound):
        store.forget_speaker("h1", "anna")


def test_forget_household_erases_voiceprints_and_secrets(tmp_path, store):
    store.put_voiceprint(vp("h2", "anna", 1))
    sess = store.open_session("h2", 60)
    store.add_secret(SecretEntry("h2", sess.session_id, 0, "anna", np.ones(4, np.float32), "owner_only",
                                 "health", "my blood test is on friday", time.time()))
    assert b"blood test" not in at_rest(store, tmp_path)
    assert store.forget_household("h2") == (1, 1)
    assert not store.household_exists("h2") and store.voiceprints("h2", "resemblyzer") == []
    assert store.secrets("h2", sess.session_id) == [] and store.count_speakers() == 0
    assert b"blood test" not in at_rest(store, tmp_path)


def test_households_are_isolated(store):
    store.put_voiceprint(vp("a", "anna", 1))
    store.put_voiceprint(vp("b", "anna", 2))
    (a,) = store.voiceprints("a", "resemblyzer")
    (b,) = store.voiceprints("b", "resemblyzer")
    assert not np.allclose(a.centroid, b.centroid)
    store.forget_speaker("a", "anna")
    assert store.voiceprints("a", "resemblyzer") == [] and len(store.voiceprints("b", "resemblyzer")) == 1
    assert store.household_exists("default")


def test_secrets_are_sealed_and_scoped_to_session(tmp_path, store):
    s1 = store.open_session("default", 60)
    s2 = store.open_session("default", 60)
    store.add_secret(SecretEntry("default", s1.session_id, 0, "", np.ones(4, np.float32), "nobody", "finances",
                                 "the safe code is 4711", time.time()))
    assert b"4711" not in at_rest(store, tmp_path)
    (e,) = store.secrets("default", s1.session_id)
    assert e.content == "the safe code is 4711" and e.scope == "nobody"
    assert store.secrets("default", s2.session_id) == []
    assert store.close_session("default", s1.session_id) == 0
    assert store.secrets("default", s1.session_id) == []


def test_sessions_expire_when_idle(tmp_path):
    now = [1000.0]
    s = SqliteStore(tmp_path / "g.db", Sealer(b"k" * 32), clock=lambda: now[0])
    sess = s.open_session("default", 10)
    now[0] += 5
    assert s.touch_session("default", sess.session_id).turns == 1
    now[0] += 11
    with pytest.raises(SessionNotFound, match="expired"):
        s.touch_session("default", sess.session_id)


def test_concurrent_use_keeps_the_store_working(store):
    """Many threads at once: sessions, secrets, voiceprints, erasure (one connection, one lock)."""
    from concurrent.futures import ThreadPoolExecutor

    def work(i: int) -> int:
        sess = store.open_session("default", 60)
        store.add_secret(SecretEntry("default", sess.session_id, 0, "", np.ones(4, np.float32), "public", "x",
                                     f"fact {i}", time.time()))
        store.put_voiceprint(vp("default", f"s{i}", i))
        store.touch_session("default", sess.session_id)
        assert store.household_exists("default")
        store.forget_speaker("default", f"s{i}")
        return len(store.secrets("default", sess.session_id))

    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(work, range(40))) == [1] * 40
    assert store.count_speakers() == 0


@pytest.fixture()
def pg(tmp_path):
    """(dsn, schema) of a fresh Postgres schema, dropped afterwards."""
    env = postgres_env(tmp_path)
    schema = env["GUARD_STORE__POSTGRES_SCHEMA"]
    yield PG_DSN, schema
    from guard.store.postgres import PostgresStore
    PostgresStore(PG_DSN, Sealer(b"k" * 32), schema).drop()


def test_postgres_replicas_share_voiceprints_sessions_and_secrets(pg):
    """Two sidecars on one database: what one enrolls, opens or records, the other sees; an erase on one
    is gone for both."""
    from guard.store.postgres import PostgresStore
    a, b = (PostgresStore(pg[0], Sealer(b"k" * 32), pg[1]) for _ in range(2))
    a.put_voiceprint(vp("h", "anna", 1))
    assert [v.speaker_id for v in b.voiceprints("h", "resemblyzer")] == ["anna"]
    sess = a.open_session("h", 60)
    assert b.touch_session("h", sess.session_id).turns == 1
    e1 = b.add_secret(SecretEntry("h", sess.session_id, 0, "anna", np.ones(4, np.float32), "owner_only",
                                  "health", "the x-ray is on monday", time.time()))
    e2 = a.add_secret(SecretEntry("h", sess.session_id, 0, "", np.ones(4, np.float32), "public", "x", "hi",
                                  time.time()))
    assert e2 > e1   # one id sequence across replicas
    assert [s.content for s in a.secrets("h", sess.session_id)] == ["the x-ray is on monday", "hi"]
    assert b.forget_speaker("h", "anna") == (1, 1)
    assert a.voiceprints("h", "resemblyzer") == [] and len(a.secrets("h", sess.session_id)) == 1
    for s in (a, b):
        s.close()


def test_postgres_replicas_starting_together_create_the_schema_once(pg):
    from concurrent.futures import ThreadPoolExecutor

    from guard.store.postgres import PostgresStore
    with ThreadPoolExecutor(6) as pool:
        stores = list(pool.map(lambda _: PostgresStore(pg[0], Sealer(b"k" * 32), pg[1]), range(6)))
    assert all(s.household_exists("default") for s in stores)
    for s in stores:
        s.close()


def test_postgres_replicas_enrolling_one_speaker_at_once_all_succeed(pg):
    from concurrent.futures import ThreadPoolExecutor

    from guard.store.postgres import PostgresStore
    stores = [PostgresStore(pg[0], Sealer(b"k" * 32), pg[1]) for _ in range(4)]
    with ThreadPoolExecutor(4) as pool:
        replaced = list(pool.map(lambda i: stores[i % 4].put_voiceprint(vp("h", "anna", i)), range(40)))
    assert replaced.count(False) == 1 and len(stores[0].voiceprints("h", "resemblyzer")) == 1
    for s in stores:
        s.close()


def test_postgres_wrong_key_and_idle_expiry(pg):
    from guard.store.postgres import PostgresStore
    now = [1000.0]
    s1 = PostgresStore(pg[0], Sealer(b"k" * 32), pg[1], clock=lambda: now[0])
    s1.put_voiceprint(vp("h", "anna", 1))
    with pytest.raises(ConfigError, match="does not open"):
        PostgresStore(pg[0], Sealer(b"j" * 32), pg[1]).voiceprints("h", "resemblyzer")
    sess = s1.open_session("default", 10)
    now[0] += 11
    with pytest.raises(SessionNotFound, match="expired"):
        s1.touch_session("default", sess.session_id)


def test_postgres_unreachable_or_failing_is_a_clear_error_and_changes_nothing(pg, tmp_path):
    from guard.errors import StoreUnavailable
    from guard.store.postgres import PostgresStore
    with pytest.raises(ConfigError, match="cannot connect to Postgres"):
        PostgresStore("host=127.0.0.1 port=1 dbname=test user=postgres connect_timeout=2", Sealer(b"k" * 32))
    with pytest.raises(ConfigError, match="needs store.postgres_dsn"):
        open_store(load_settings(env={"GUARD_DATA_DIR": str(tmp_path), "GUARD_STORE__KIND": "postgres"}))
    s = PostgresStore(pg[0], Sealer(b"k" * 32), pg[1])
    s.put_voiceprint(vp("h", "anna", 1))
    with s._tx() as db:    # a row the next insert collides with, committed by another writer
        db.execute("INSERT INTO sessions VALUES (?,?,?,?,?,0)", ("h", "fixed", 0.0, 0.0, 60))
    with pytest.raises(StoreUnavailable, match="UniqueViolation"), s._tx() as db:
        db.execute("DELETE FROM voiceprints WHERE household=?", ("h",))
        db.execute("INSERT INTO sessions VALUES (?,?,?,?,?,0)", ("h", "fixed", 0.0, 0.0, 60))
    assert [v.speaker_id for v in s.voiceprints("h", "resemblyzer")] == ["anna"]   # rolled back
    s._conn.close()   # the server drops the connection: the next call reconnects
    assert s.household_exists("h")
    s._conn.close()
    s._dsn = "host=127.0.0.1 port=1 dbname=test user=postgres connect_timeout=2"   # and now it is gone
    with pytest.raises(StoreUnavailable, match="cannot reach Postgres"):
        s.household_exists("h")
