"""`guard serve` as a child process on loopback ports: used by the BPFT evaluation hook and the tests."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import grpc

from guard.client import GuardClient


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
