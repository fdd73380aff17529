"""Two `guard serve` replicas on loopback sharing one Postgres store: the scale-out shape."""
from __future__ import annotations

import base64
import os

from guard.crypto import Sealer
from guard.local_server import ServerProcess
from guard.proto import guard_pb2 as pb
from guard.store.postgres import PostgresStore
from tests.conftest import PG_DSN, postgres_env

OPTIONS = ["Seven thirty", "Eight o'clock", "I do not have the information to answer the question", "Noon",
           "Six in the morning"]


def test_what_one_replica_enrolls_the_other_identifies_and_erases(tmp_path, enroll_clips, scene_wav):
    key = os.urandom(32)
    env = {**postgres_env(tmp_path), "GUARD_STORE__KEY": base64.b64encode(key).decode()}
    servers = []
    try:
        for name in ("a", "b"):
            (tmp_path / name).mkdir()
            servers.append(ServerProcess(tmp_path / name, {**env, "GUARD_DATA_DIR": str(tmp_path / name)}))
        a, b = servers
        with a.client() as ca, b.client() as cb:
            ca.enroll("anna", enroll_clips["awb"], display_name="Anna")
            assert [s.speaker_id for s in cb.speakers()] == ["anna"]
            r = cb.ask(scene_wav, question="What time is the reservation?", options=OPTIONS)
            assert r.main_rule == pb.ENROLLED and next(s for s in r.speakers if s.is_main).speaker_id == "anna"
            assert cb.forget("anna").speakers_erased == 1
            assert ca.speakers() == []
            r = ca.ask(scene_wav, question="What time is the reservation?", options=OPTIONS)
            assert r.main_rule != pb.ENROLLED
        for s in servers:
            assert PG_DSN not in s.logs() and "dbname" not in s.logs()   # the DSN is a secret
    finally:
        for s in servers:
            s.stop()
        PostgresStore(PG_DSN, Sealer(key), env["GUARD_STORE__POSTGRES_SCHEMA"]).drop()
