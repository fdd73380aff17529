"""Server lifecycle: admission control, deadlines, and draining in-flight calls on SIGTERM."""
from __future__ import annotations

import threading
import time
import urllib.request

import grpc
import numpy as np
import pytest

from guard.local_server import ServerProcess
from guard.proto import guard_pb2 as pb
from tests.test_server import OPTIONS, status_of


def metric(server: ServerProcess, name: str) -> float:
    text = urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics", timeout=5).read().decode()
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split(" ")[1])
    return 0.0


@pytest.fixture()
def long_audio(scene) -> np.ndarray:
    return np.concatenate([scene.samples] * 2)  # ~23 s: the cascade needs several seconds for it


def test_deadline_is_honoured(server, long_audio):
    with server.client() as c:
        t = time.time()
        code, _ = status_of(lambda: c.stub.Ask(pb.AskRequest(audio=pb.Audio(
            pcm16=(long_audio * 32767).astype("<i2").tobytes(), sample_rate=16000), options=OPTIONS,
            question="What time?"), timeout=1.0))
        assert code == grpc.StatusCode.DEADLINE_EXCEEDED and time.time() - t < 3
    # the server saw the deadline end the call (not only the client), counted it, and keeps serving
    def ended() -> float:
        return sum(metric(server, f'guard_rejected_total{{reason="{r}"}}') for r in ("deadline", "cancelled"))
    deadline = time.time() + 30
    while ended() < 1 and time.time() < deadline:
        time.sleep(0.2)
    assert ended() >= 1
    with server.client() as c:
        c.speakers()  # answers (no exception) after the abandoned call


def test_overload_is_rejected_at_once_and_sigterm_drains(tmp_path, long_audio):
    srv = ServerProcess(tmp_path, {"GUARD_SERVER__MAX_CONCURRENCY": "1", "GUARD_SERVER__GRACE_SECONDS": "60"})
    result: dict = {}

    def slow_call():
        with srv.client() as c:
            try:
                result["response"] = c.ask(long_audio, question="What time is the reservation?",
                                           options=OPTIONS, mode="selective")
            except grpc.RpcError as e:
                result["error"] = e

    try:
        worker = threading.Thread(target=slow_call)
        worker.start()
        deadline = time.time() + 30
        while metric(srv, "guard_in_flight_requests") < 1 and time.time() < deadline:
            time.sleep(0.05)
        assert metric(srv, "guard_in_flight_requests") == 1
        with srv.client() as c:
            t = time.time()
            code, details = status_of(lambda: c.ask(long_audio, question="?", options=OPTIONS))
            assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "slots" in details
            assert time.time() - t < 2  # turned away at once, not queued
        srv.proc.send_signal(15)  # SIGTERM while the first call is still running
        worker.join(90)
        assert "error" not in result, result.get("error")
        assert result["response"].choice_letter == "A"
        assert srv.proc.wait(30) == 0
        with srv.client(timeout=3) as c:
            code, _ = status_of(lambda: c.speakers())
            assert code == grpc.StatusCode.UNAVAILABLE
        assert "draining in-flight calls" in srv.logs()
    finally:
        srv.stop()
