"""The cascade's transcription with pocketsphinx's runner-up decodes in a worker process (decision 127)
against in the request's thread, side by side on the same audio in one run.

Each scene is read as GENERAL mode's three streams are shaped (here: the whole scene and its two halves;
the service sends each diarized voice alone and the mixture), with the cascade's recognisers: Whisper
base leads, tiny.en second, pocketsphinx's 1-best and N-best as runner-ups. The two ways take turns on
each scene (which goes first alternates) and Whisper's read cache is emptied before each, so both decode
everything. Prints seconds each way, the ratio, whether every transcript came out the same, and each
worker's resident memory after the run.

    .venv/bin/python benchmarks/decode_pool_bench.py [--questions benchmarks/suites/shbench-mini/questions.json]
        [--scenes 8] [--processes 1]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from guard.audio import decode
from guard.hearing.asr import Transcriber
from guard.hearing.decode_pool import DecodePool
from guard.hearing.whisper import BUNDLED, BUNDLED_BASE, shared

sys.path.insert(0, str(Path(__file__).parent))
from general_encoder_bench import resident_mb


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", default="benchmarks/suites/shbench-mini/questions.json")
    ap.add_argument("--scenes", type=int, default=8)
    ap.add_argument("--processes", type=int, default=1)
    a = ap.parse_args()
    root = Path(a.questions).parent
    files = list(dict.fromkeys(r["audio"] for r in json.loads(Path(a.questions).read_text())))[:a.scenes]
    audios = [decode(encoded=(root / f).read_bytes()).samples for f in files]
    lead, second = shared(BUNDLED_BASE), shared(BUNDLED, "second")
    pool = DecodePool(a.processes)
    pool.warm()
    ways = {"in the request's thread": Transcriber(lead=lead, second=second, cache_size=0),
            f"pool of {a.processes}": Transcriber(lead=lead, second=second, cache_size=0, pool=pool)}
    ways[next(iter(ways))].many([audios[0][:16000]])   # load every model before timing
    seconds = dict.fromkeys(ways, 0.0)
    same = 0
    for k, audio in enumerate(audios):
        half = len(audio) // 2
        streams = [audio[:half], audio[half:], audio]
        order = list(ways) if k % 2 == 0 else list(reversed(ways))
        got = {}
        for name in order:
            lead._read.clear()
            second._read.clear()
            t = time.perf_counter()
            got[name] = ways[name].many(streams)
            seconds[name] += time.perf_counter() - t
        same += len({repr(v) for v in got.values()}) == 1
    worker_mb = [resident_mb(pid) for pid in pool.pids()]
    pool.close()
    heard = sum(len(x) for x in audios) / 16000
    print(f"{len(audios)} scenes, {heard:.1f} s of audio read as 3 streams each, {os.cpu_count()} cores")
    for name, s in seconds.items():
        print(f"  {name:<26} {s:7.2f} s  ({s / len(audios):.2f} s a scene)")
    base, pooled = seconds.values()
    print(f"  pool / in-thread: {pooled / base:.2f}; transcripts alike in {same} of {len(audios)} scenes")
    print(f"  worker resident memory: {', '.join(f'{m:.0f} MB' for m in worker_mb)}")


if __name__ == "__main__":
    main()
