"""pocketsphinx's runner-up decodes in a worker process (decision 127): the same transcripts as in the
request's thread, and a worker that dies, cannot start or hangs fails the request (SELECTIVE refuses)
without breaking the next one."""
from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest

from guard.backends.cascade import CascadeBackend
from guard.config import load_settings
from guard.hearing.asr import Transcriber, trim_silence
from guard.hearing.decode_pool import DecodeError, DecodePool
from guard.hearing.whisper import BUNDLED, shared
from guard.metrics import Metrics
from guard.proto import guard_pb2 as pb
from guard.service import GuardService
from guard.store import open_store

OPTIONS = ["Seven thirty", "Eight", "I do not have the information to answer the question", "Noon", "Six"]


@pytest.fixture(scope="module")
def pool():
    p = DecodePool(1)
    yield p
    p.close()


def opening(scene, seconds: float = 8.0):
    """The scene's first seconds: both voices, and short enough to decode twice quickly."""
    return scene.samples[:int(seconds * 16000)]


def test_the_worker_decodes_as_the_request_thread_does(pool, scene):
    audio = trim_silence(opening(scene))
    here = Transcriber(cache_size=0)._decode(audio)
    there = pool.submit(audio)()
    assert there.best and there.nbest
    assert there == here   # 1-best, runner-ups and word times alike


def test_a_transcriber_with_a_pool_reads_every_stream_as_one_without(pool, scene):
    lead = shared(BUNDLED)
    audio = opening(scene)
    half = len(audio) // 2
    streams = [audio, audio[:half], np.zeros(800, np.float32), audio[half:], audio.copy()]

    class Counting:   # the lead, counting its reads
        reads = 0

        def read(self, a):
            Counting.reads += 1
            return lead.read(a)

    with_pool = Transcriber(lead=Counting(), pool=pool, cache_size=0).many(streams)
    assert Counting.reads == 3   # silence is not read, and the same audio twice is read once
    without = Transcriber(lead=lead, cache_size=0).many(streams)
    assert with_pool == without
    assert with_pool[2].best == "" and all(t.best and t.nbest for t in with_pool[:2] + with_pool[3:])
    assert with_pool[4] == with_pool[0]


def test_a_worker_that_dies_in_a_decode_fails_it_and_the_next_one_gets_a_fresh_worker(scene):
    p = DecodePool(1)
    try:
        p.warm()
        (dead,) = p.pids()
        noise = np.random.default_rng(0).normal(0, 0.1, 8 * 16000).astype(np.float32)   # seconds to decode
        wait = p.submit(noise)
        time.sleep(1.0)
        os.kill(dead, signal.SIGKILL)
        with pytest.raises(DecodeError, match="died"):
            wait()
        assert p.submit(trim_silence(opening(scene)))().best   # a fresh worker
        assert dead not in p.pids()
    finally:
        p.close()


def test_a_decode_that_overruns_fails_and_its_worker_is_stopped(scene):
    p = DecodePool(1)
    try:
        p.warm()
        (stuck,) = p.pids()
        p.timeout = 0.001
        with pytest.raises(DecodeError, match="longer than"):
            p.submit(trim_silence(opening(scene)))()
        p.timeout = 60.0
        assert p.submit(trim_silence(opening(scene)))().best
        assert stuck not in p.pids()
    finally:
        p.close()


def test_selective_mode_refuses_when_the_decode_worker_dies_and_answers_the_next_request(tmp_path, hearing,
                                                                                          scene):
    backend = CascadeBackend(reader="none", decode_processes=1)
    try:
        settings = load_settings(env={"GUARD_DATA_DIR": str(tmp_path)})
        service = GuardService(settings, open_store(settings), hearing, backend, Metrics())

        def ask():
            return service.ask(pb.AskRequest(audio=pb.Audio(float32=scene.samples.astype("<f4").tobytes(),
                                                            sample_rate=16000), mode=pb.SELECTIVE,
                                             question="When does the speaker's train leave?", options=OPTIONS))

        (worker,) = backend.pool.pids()
        os.kill(worker, signal.SIGKILL)
        backend.pool.nbest = "not a number"   # the fresh worker started for the request exits at once
        r = ask()
        assert r.refused and r.reason == pb.BACKEND_FAILED and r.answer == OPTIONS[2]
        backend.pool.nbest = 20
        r = ask()
        assert r.reason != pb.BACKEND_FAILED and worker not in backend.pool.pids()
    finally:
        backend.close()


def test_the_pool_runs_under_any_main_program():
    """The workers are plain subprocesses: a program run as `python -c` (or from stdin, or a notebook) has
    no main file a multiprocessing spawn could re-run, and the pool must not need one."""
    import subprocess
    import sys

    code = ("import numpy as np\nfrom guard.hearing.decode_pool import DecodePool\np = DecodePool(1)\n"
            "p.warm()\nprint('decoded', p.submit(np.zeros(1600, np.float32))().best == '')\np.close()\n")
    out = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "decoded True" in out.stdout


def test_the_worker_imports_only_the_recogniser():
    """A worker process imports `guard.hearing.asr`, not the rest of the hearing package (scipy, the
    diarizer, the settings, grpc): ~100 MB less resident per worker (decision 129)."""
    import subprocess
    import sys

    from guard.hearing.decode_pool import _worker_env

    heavy = ("scipy", "grpc", "pydantic", "guard.config", "guard.hearing.diarize", "guard.hearing.pipeline")
    probe = f"import sys, guard.hearing.decode_pool; print([m for m in {heavy!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", probe], env=_worker_env(), capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
    from guard.hearing import Diarization, Hearing, Track  # the package's names still load, on first use

    assert Hearing.__module__ == "guard.hearing.pipeline" and {Diarization.__module__, Track.__module__} == {
        "guard.hearing.diarize"}
