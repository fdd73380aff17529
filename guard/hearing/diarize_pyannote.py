"""pyannote.audio's SpeakerDiarization pipeline, loaded from a local directory (production diarizer).

Resolution: `path` must be a local directory holding config.yaml (its `$model/...` entries resolve inside
it). A hub id is never accepted, and telemetry is switched off before pyannote is imported. Audio is
passed in memory (pyannote's file decoding needs a CUDA-linked torchcodec). Identities still come from
guard's configured embedder, computed over each speaker's own (non-overlapped) frames.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from guard.audio import dbfs
from guard.errors import ConfigError
from guard.hearing.diarize import Diarization, Track, mark_foreground
from guard.hearing.embed import Embedder, resolve_device
from guard.hearing.vad import FRAME, n_frames
from guard.store.base import Voiceprint


class PyannoteDiarizer:
    def __init__(self, path: str, embedder: Embedder, device: str = "cpu"):
        if not path:
            raise ConfigError("hearing.pyannote_path is empty: set it (GUARD_HEARING__PYANNOTE_PATH) to a local "
                              "pyannote pipeline directory holding config.yaml")
        root = Path(path)
        if not (root / "config.yaml").is_file():
            raise ConfigError(f"hearing.pyannote_path {root} has no config.yaml: point it at a local copy of a "
                              "pyannote speaker-diarization pipeline (config.yaml, segmentation/, embedding/, "
                              "plda/)")
        os.environ["PYANNOTE_METRICS_ENABLED"] = "0"
        import torch
        from pyannote.audio import Pipeline
        from pyannote.audio.telemetry import set_telemetry_metrics

        set_telemetry_metrics(False)
        self.pipeline = Pipeline.from_pretrained(root)
        self.pipeline.to(torch.device(resolve_device(device)))
        self.embedder = embedder

    def __call__(self, samples: np.ndarray, voiceprints: list[Voiceprint] = (),
                 speech: np.ndarray | None = None) -> Diarization:
        import torch

        nf = n_frames(len(samples))
        out = self.pipeline({"waveform": torch.from_numpy(samples)[None], "sample_rate": 16000})
        annotation = getattr(out, "speaker_diarization", out)
        masks: dict[str, np.ndarray] = {}
        for segment, _, label in annotation.itertracks(yield_label=True):
            m = masks.setdefault(label, np.zeros(nf, bool))
            m[int(segment.start * 100):int(np.ceil(segment.end * 100))] = True
        count = sum(masks.values()) if masks else np.zeros(nf, int)
        speech_mask = np.asarray(count) > 0
        overlap = np.asarray(count) > 1
        result = Diarization(nf, speech_mask, overlap)
        for label, frames in sorted(masks.items(), key=lambda kv: int(np.argmax(kv[1]))):
            own = frames & ~overlap
            sel = np.repeat(own if own.any() else frames, FRAME)[:len(samples)]
            clip = samples[sel[:len(samples)]] if len(sel) == len(samples) else samples[:0]
            emb = self.embedder.embed(clip) if len(clip) else np.zeros(self.embedder.dim, np.float32)
            result.tracks.append(Track(label="", frames=frames, embedding=emb,
                                       speech_seconds=float(frames.sum() * FRAME / 16000),
                                       loudness_dbfs=dbfs(clip)))
        for i, t in enumerate(result.tracks):
            t.label = f"S{i + 1}"
        mark_foreground(samples, result)
        return result
