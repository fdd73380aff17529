"""Copy a suite (SH-Bench or VoxPrivacy format) as if recorded by a far-field microphone in a plain room:
every audio file goes through guard.scenes.room (reverberation, then white noise); question files are
copied unchanged, so the copy replays with the same `guard bench` command.

    .venv/bin/python benchmarks/room_suite.py SRC DST [--rt60 0.3] [--drr 8] [--snr 20]
"""
from __future__ import annotations

import argparse
import hashlib
import shutil
from pathlib import Path

import numpy as np
import soundfile as sf

from guard import scenes
from guard.audio import decode

AUDIO = {".flac", ".wav"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--rt60", type=float, default=0.3)
    ap.add_argument("--drr", type=float, default=8.0, help="direct-to-reverberant ratio, dB")
    ap.add_argument("--snr", type=float, default=20.0, help="speech to white noise, dB")
    args = ap.parse_args()
    src, dst = Path(args.src), Path(args.dst)
    n = 0
    for f in sorted(src.rglob("*")):
        out = dst / f.relative_to(src)
        if f.is_dir():
            continue
        out.parent.mkdir(parents=True, exist_ok=True)
        if f.suffix.lower() not in AUDIO:
            shutil.copyfile(f, out)
            continue
        seed = int.from_bytes(hashlib.sha1(str(f.relative_to(src)).encode()).digest()[:4], "little")
        x = decode(encoded=f.read_bytes()).samples
        x = scenes.room(x, np.random.default_rng(seed), args.rt60, args.drr, args.snr)
        sf.write(out, np.clip(x, -1, 1), 16000, subtype="PCM_16", format=f.suffix[1:].upper())
        n += 1
    print(f"wrote {n} audio files under {dst} (RT60 {args.rt60} s, DRR {args.drr} dB, SNR {args.snr} dB)")


if __name__ == "__main__":
    main()
