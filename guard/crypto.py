"""Encryption at rest for voiceprints and secrets: AES-256-GCM, the key never in the database.

Key resolution order: an explicit base64 key (store.key / GUARD_STORE__KEY), else the key file
(store.key_file, default DATA_DIR/guard.key). A missing key file is created once, owner-only (0600).
Each ciphertext is bound to its row by associated data, so a blob copied to another row fails to open.
"""
from __future__ import annotations

import base64
import logging
import os
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from guard.errors import ConfigError

log = logging.getLogger(__name__)
NONCE_BYTES = 12


class Sealer:
    """Seals and opens small blobs with one AES-256-GCM key."""

    def __init__(self, key: bytes):
        if len(key) != 32:
            raise ConfigError(f"encryption key must be 32 bytes (AES-256), got {len(key)}")
        self._aead = AESGCM(key)

    def seal(self, plaintext: bytes, context: str) -> bytes:
        nonce = os.urandom(NONCE_BYTES)
        return nonce + self._aead.encrypt(nonce, plaintext, context.encode())

    def open(self, blob: bytes, context: str) -> bytes:
        try:
            return self._aead.decrypt(blob[:NONCE_BYTES], blob[NONCE_BYTES:], context.encode())
        except InvalidTag:
            raise ConfigError("a stored record does not open with this key: was the key changed or the "
                              "record copied between rows?") from None


def load_key(key_b64: str, key_file: Path) -> bytes:
    """The key from base64 text if given, else from key_file (created 0600 when missing)."""
    if key_b64:
        try:
            key = base64.b64decode(key_b64, validate=True)
        except ValueError:
            raise ConfigError("store.key (GUARD_STORE__KEY) is not valid base64") from None
        return key
    if key_file.exists():
        mode = key_file.stat().st_mode & 0o777
        if mode & 0o077:
            raise ConfigError(f"key file {key_file} is readable by others (mode {mode:o}); chmod 600 it")
        return base64.b64decode(key_file.read_bytes().strip())
    key_file.parent.mkdir(parents=True, exist_ok=True)
    key = AESGCM.generate_key(bit_length=256)
    fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(base64.b64encode(key) + b"\n")
    log.warning("created a new encryption key at %s (owner-only); back it up: without it, stored "
                "voiceprints and secrets cannot be read", key_file)
    return key
