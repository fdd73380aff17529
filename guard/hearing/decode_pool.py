"""pocketsphinx decodes in worker processes, beside Whisper.

pocketsphinx holds the GIL through a decode: in the request's thread its runner-up decode (0.44 s a second
of audio on these 2 cores) ran after Whisper's, never beside it, and a thread beside Whisper saved nothing
(decision 125). A worker process runs it while Whisper reads the same audio here (decision 127). Decodes
do not depend on the decodes before them (`Transcriber._decode` starts each afresh), so a worker's
transcript is the one the request's thread would have made.

Each worker is `python -m guard.hearing.decode_pool`, fed through its pipes: the audio as float32 bytes
behind an 8-byte length, the transcript back as JSON. A plain subprocess, not multiprocessing: nothing of
the parent's main module is re-run in it (an embedding program's `__main__`, a notebook, `python -c`), and
no shared-memory semaphores are needed. Nothing is written to disk.

A worker that dies or takes longer than `timeout` fails the decode (the cascade's caller refuses in
SELECTIVE mode: fail closed) and a fresh worker takes the next one.
"""
from __future__ import annotations

import json
import logging
import os
import queue
import struct
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path

import numpy as np

from guard.hearing.asr import Transcriber, Transcript

log = logging.getLogger(__name__)
HEADER = struct.Struct("<Q")


class DecodeError(RuntimeError):
    """A decode in the pool failed: its worker died or overran."""


def _send(stream, payload: bytes) -> None:
    stream.write(HEADER.pack(len(payload)) + payload)
    stream.flush()


def _receive(stream) -> bytes | None:
    head = stream.read(HEADER.size)
    if len(head) < HEADER.size:
        return None
    (n,) = HEADER.unpack(head)
    body = stream.read(n)
    return body if len(body) == n else None


def _worker_env() -> dict[str, str]:
    """This process's environment, with the folder holding this `guard` package first on the path."""
    root = str(Path(__file__).resolve().parents[2])
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}


class _Worker:
    """One worker process and the thread that feeds it jobs from the pool's queue, one at a time."""

    def __init__(self, pool: DecodePool):
        self.pool = pool
        self.proc: subprocess.Popen | None = None
        self.busy: Future | None = None   # the job being decoded
        self.lock = threading.Lock()
        threading.Thread(target=self._serve, name="decode-pool", daemon=True).start()

    def start(self) -> subprocess.Popen:
        with self.lock:
            if self.proc is not None and self.proc.poll() is not None:
                log.warning("a pocketsphinx worker had exited (code %s); a fresh one starts", self.proc.returncode)
            if self.proc is None or self.proc.poll() is not None:
                self.proc = subprocess.Popen([sys.executable, "-m", "guard.hearing.decode_pool",
                                              str(self.pool.nbest)], env=_worker_env(),
                                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            return self.proc

    def stop(self, proc: subprocess.Popen) -> None:
        """Stop `proc` (dead, hung or closing); the next job starts a fresh one."""
        with self.lock:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            if self.proc is proc:
                self.proc = None

    def _serve(self) -> None:
        while True:
            job = self.pool.jobs.get()
            if job is None:
                return
            audio, future = job
            if not future.set_running_or_notify_cancel():
                continue
            self.busy = future
            proc = self.start()
            try:
                _send(proc.stdin, audio.tobytes())
                reply = _receive(proc.stdout)
            except OSError:
                reply = None
            finally:
                self.busy = None
            if reply is None:
                self.stop(proc)
                future.set_exception(DecodeError("the pocketsphinx worker process died during a decode; a "
                                                 "fresh one starts for the next request"))
                continue
            r = json.loads(reply)
            future.set_result(Transcript(r["best"], r["nbest"], [tuple(w) for w in r["words"]]))


class DecodePool:
    """`processes` worker processes running `Transcriber._decode`. `submit` returns a function that waits
    for the transcript, at most `timeout` seconds."""

    def __init__(self, processes: int = 1, nbest: int = 20, timeout: float = 60.0):
        if processes < 1:
            raise ValueError("a decode pool needs at least one process")
        self.nbest, self.timeout = nbest, timeout
        self.jobs: queue.Queue = queue.Queue()
        self.workers = [_Worker(self) for _ in range(processes)]

    def warm(self) -> None:
        """Start the workers and load their decoders now, not on the first request."""
        for w in self.workers:
            w.start()
        waits = [self.submit(np.zeros(1600, np.float32)) for _ in self.workers]
        for wait in waits:
            wait()

    def submit(self, audio: np.ndarray) -> Callable[[], object]:
        future: Future = Future()
        self.jobs.put((np.ascontiguousarray(audio, np.float32), future))

        def result():
            try:
                return future.result(timeout=self.timeout)
            except FutureTimeout as e:
                if not future.cancel():   # a worker is decoding it: stop that worker
                    for w in self.workers:
                        proc = w.proc
                        if w.busy is future and proc is not None:
                            w.stop(proc)
                log.warning("a pocketsphinx decode overran %g s; its worker was stopped", self.timeout)
                raise DecodeError(f"a pocketsphinx decode took longer than {self.timeout:g} s; its worker "
                                  "was stopped") from e
        return result

    def pids(self) -> list[int]:
        """The running worker processes' ids (tests stop one to see the pool recover)."""
        return [w.proc.pid for w in self.workers if w.proc is not None and w.proc.poll() is None]

    def close(self) -> None:
        for _ in self.workers:
            self.jobs.put(None)
        for w in self.workers:
            proc = w.proc
            if proc is not None:
                w.stop(proc)


def _main() -> None:
    """The worker: decode each audio read from stdin until it closes."""
    # the replies own the real stdout; anything else printed goes to stderr
    stdout = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    asr = Transcriber(cache_size=0, nbest=int(sys.argv[1]))
    stdin = sys.stdin.buffer
    while (body := _receive(stdin)) is not None:
        t = asr._decode(np.frombuffer(body, np.float32))
        _send(stdout, json.dumps({"best": t.best, "nbest": t.nbest, "words": t.words}).encode())


if __name__ == "__main__":
    _main()
