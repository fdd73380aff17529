"""Persistence for voiceprints, sessions and the secret ledger. `open_store(settings)` picks one."""
from __future__ import annotations

from pathlib import Path

from guard.config import Settings
from guard.crypto import Sealer, load_key
from guard.errors import ConfigError
from guard.store.base import DEFAULT_HOUSEHOLD, SecretEntry, Session, SpeakerInfo, Store, Voiceprint

__all__ = ["DEFAULT_HOUSEHOLD", "SecretEntry", "Session", "SpeakerInfo", "Store", "Voiceprint", "open_store"]


def open_store(settings: Settings) -> Store:
    key_file = Path(settings.store.key_file) if settings.store.key_file else settings.data_path / "guard.key"
    sealer = Sealer(load_key(settings.store.key.get_secret_value(), key_file))
    if settings.store.kind == "sqlite":
        from guard.store.sqlite import SqliteStore

        path = Path(settings.store.sqlite_path) if settings.store.sqlite_path else settings.data_path / "guard.db"
        return SqliteStore(path, sealer, retention_seconds=settings.policy.secret_retention_seconds)
    if settings.store.kind == "postgres":
        from guard.store.postgres import PostgresStore

        dsn = settings.store.postgres_dsn.get_secret_value()
        if not dsn:
            raise ConfigError("store.kind postgres needs store.postgres_dsn (GUARD_STORE__POSTGRES_DSN)")
        return PostgresStore(dsn, sealer, settings.store.postgres_schema,
                             retention_seconds=settings.policy.secret_retention_seconds)
    raise ConfigError(f"store.kind {settings.store.kind!r} is not implemented; use sqlite or postgres")
