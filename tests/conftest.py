"""Shared fixtures: real audio from the scene generator, and one real server per test session."""
from __future__ import annotations

import os
import uuid
from pathlib import Path

import numpy as np
import pytest

from guard import scenes
from guard.local_server import ServerProcess, free_port  # noqa: F401 - tests import them from here

MAIN_LINES = ["Hi there, I want to book a table for two at the Italian place tonight.",
              "Please make it around seven thirty if you can."]
BYSTANDER_LINES = ["Did you remember to call your sister about the birthday party on Sunday?"]
ENROLL_LINES = ["The weather is going to be cold and rainy all weekend long.",
                "I usually take the early train to work on Monday mornings.",
                "My favourite dinner is roasted vegetables with a little rice."]


# The official SH-Bench result files (../shared/data, read-only), beside the checkout.
SHBENCH_OFFICIAL = Path(__file__).resolve().parents[2] / "shared/data/shbench-official"
PG_DSN = os.environ.get("GUARD_TEST_POSTGRES_DSN", "host=127.0.0.1 dbname=test user=postgres")


def postgres_env(tmp_path) -> dict:
    """Settings for a Postgres store in a schema of its own, or a skip when no server answers."""
    psycopg = pytest.importorskip("psycopg")
    try:
        psycopg.connect(PG_DSN, connect_timeout=3).close()
    except psycopg.Error as e:
        pytest.skip(f"no Postgres at {PG_DSN!r}: {e}")
    return {"GUARD_DATA_DIR": str(tmp_path), "GUARD_STORE__KIND": "postgres",
            "GUARD_STORE__POSTGRES_DSN": PG_DSN, "GUARD_STORE__POSTGRES_SCHEMA": f"t_{uuid.uuid4().hex[:12]}"}


@pytest.fixture(scope="session")
def hearing():
    """The embedded hearing stack on its defaults, loaded once."""
    from guard.config import HearingSettings
    from guard.hearing import Hearing

    return Hearing.from_settings(HearingSettings())


@pytest.fixture(scope="session")
def classifier():
    """The ledger's privacy text classifiers (MiniLM, shipped in a package)."""
    from guard.policy.privacy_text import PrivacyText

    return PrivacyText()


@pytest.fixture()
def store(tmp_path):
    """A fresh embedded (SQLite) store; test_store.py has its own, over every backend."""
    from guard.config import load_settings
    from guard.store import open_store

    s = open_store(load_settings(env={"GUARD_DATA_DIR": str(tmp_path)}))
    yield s
    s.close()


@pytest.fixture(scope="session")
def scene() -> scenes.Scene:
    """awb in front, slt behind at -10 dB, partly overlapping."""
    return scenes.conversation("awb", MAIN_LINES, [("slt", BYSTANDER_LINES)], seed=1)


@pytest.fixture(scope="session")
def scene_wav(tmp_path_factory, scene) -> Path:
    p = tmp_path_factory.mktemp("audio") / "scene.wav"
    scene.write(p)
    return p


@pytest.fixture(scope="session")
def enroll_clips(tmp_path_factory) -> dict[str, list[Path]]:
    """Three single-speaker enrollment clips per voice, as WAV files."""
    d = tmp_path_factory.mktemp("enroll")
    out = {}
    for voice in ("awb", "slt", "rms"):
        out[voice] = []
        for i, line in enumerate(ENROLL_LINES):
            p = d / f"{voice}{i}.wav"
            scenes.Scene(scenes.level(scenes.tts(voice, line), -20)).write(p)
            out[voice].append(p)
    return out


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    s = ServerProcess(tmp_path_factory.mktemp("server"), {"GUARD_SERVER__MAX_AUDIO_SECONDS": "60",
                                                          "GUARD_SERVER__MAX_MESSAGE_MB": "4"})
    yield s
    s.stop()


@pytest.fixture()
def client(server):
    with server.client() as c:
        yield c


def silence(seconds: float, rate: int = 16000) -> np.ndarray:
    return np.zeros(int(seconds * rate), np.float32)
