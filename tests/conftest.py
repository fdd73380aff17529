"""Shared fixtures: real audio from the scene generator, and one real server per test session."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import grpc
import numpy as np
import pytest

from guard import scenes
from guard.client import GuardClient

MAIN_LINES = ["Hi there, I want to book a table for two at the Italian place tonight.",
              "Please make it around seven thirty if you can."]
BYSTANDER_LINES = ["Did you remember to call your sister about the birthday party on Sunday?"]
ENROLL_LINES = ["The weather is going to be cold and rainy all weekend long.",
                "I usually take the early train to work on Monday mornings.",
                "My favourite dinner is roasted vegetables with a little rice."]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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


class ServerProcess:
    """`guard serve` in a child process on loopback ports."""

    def __init__(self, tmp: Path, env: dict[str, str] | None = None):
        self.port, self.metrics_port = free_port(), free_port()
        self.data_dir = tmp
        self.env = {**os.environ, "GUARD_DATA_DIR": str(tmp), "GUARD_SERVER__PORT": str(self.port),
                    "GUARD_SERVER__METRICS_PORT": str(self.metrics_port), **(env or {})}
        self.log = open(tmp / "server.log", "w")  # noqa: SIM115 - lives as long as the process
        self.proc = subprocess.Popen([sys.executable, "-m", "guard.cli", "serve"], env=self.env,
                                     stdout=self.log, stderr=subprocess.STDOUT)
        self.target = f"127.0.0.1:{self.port}"
        self._wait_ready()

    def _wait_ready(self, timeout: float = 180) -> None:
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited early:\n{self.logs()}")
            try:
                grpc.channel_ready_future(grpc.insecure_channel(self.target)).result(timeout=1)
                return
            except grpc.FutureTimeoutError:
                time.sleep(0.5)
        raise RuntimeError(f"server not ready after {timeout} s:\n{self.logs()}")

    def logs(self) -> str:
        self.log.flush()
        return (self.data_dir / "server.log").read_text()

    def client(self, timeout: float = 120) -> GuardClient:
        return GuardClient(self.target, timeout=timeout)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.log.close()
        return self.proc.returncode


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
