"""The hearing pipeline: `Hearing.from_settings(settings)` loads the configured models once; `hear(samples,
voiceprints)` runs per request and calls `hook(stage, seconds)` after each stage (timings and metrics are hooks).
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from guard.config import HearingSettings
from guard.errors import ConfigError, EnrollmentRejected
from guard.hearing.diarize import Diarization, EmbeddedDiarizer
from guard.hearing.embed import Embedder, make_embedder, unit
from guard.hearing.pitch import median_f0
from guard.hearing.vad import FRAME, VADS, Vad
from guard.hearing.verify import identify
from guard.store.base import Voiceprint

Hook = Callable[[str, float], None]


@dataclass(frozen=True)
class EnrollmentPrint:
    centroid: np.ndarray
    clips: np.ndarray
    net_speech_seconds: float
    self_consistency: float
    f0_hz: float


class Hearing:
    def __init__(self, vad: Vad, embedder: Embedder, settings: HearingSettings):
        self.vad, self.embedder, self.settings = vad, embedder, settings
        self.threshold = settings.verify_threshold.get(embedder.name)
        if self.threshold is None:
            raise ConfigError(f"hearing.verify_threshold has no entry for embedder {embedder.name!r}")
        # Enrollment always uses the embedded diarizer (one voice per clip is what it must confirm).
        self.embedded = EmbeddedDiarizer(vad, embedder, window_seconds=settings.window_seconds,
                                         hop_seconds=settings.hop_seconds,
                                         cluster_threshold=settings.cluster_threshold,
                                         verify_threshold=self.threshold,
                                         overlap_margin=settings.overlap_margin,
                                         refine_seconds=settings.refine_seconds,
                                         refine_margin=settings.refine_margin,
                                         transition_windows=settings.transition_windows,
                                         reseg_window_seconds=settings.reseg_window_seconds,
                                         reseg_hop_seconds=settings.reseg_hop_seconds,
                                         level_split_db=settings.level_split_db,
                                         level_split_windows=settings.level_split_windows)
        self.diarizer = self.embedded
        if settings.diarizer == "pyannote":
            from guard.hearing.diarize_pyannote import PyannoteDiarizer

            self.diarizer = PyannoteDiarizer(settings.pyannote_path, embedder, settings.device)

    @classmethod
    def from_settings(cls, settings: HearingSettings) -> Hearing:
        vad_cls = VADS[settings.vad]
        vad = vad_cls(settings.vad_aggressiveness) if settings.vad == "webrtcvad" else vad_cls()
        embedder = make_embedder(settings.embedder, device=settings.device, ecapa_path=settings.ecapa_path)
        hearing = cls(vad, embedder, settings)
        hearing.diarizer(np.random.default_rng(0).normal(0, 0.1, 32000).astype(np.float32))  # warm-up
        return hearing

    def hear(self, samples: np.ndarray, voiceprints: list[Voiceprint], hook: Hook | None = None
             ) -> Diarization:
        hook = hook or (lambda stage, seconds: None)
        t0 = time.perf_counter()
        speech = self.vad.speech_mask(samples) if self.diarizer is self.embedded else None
        t1 = time.perf_counter()
        if speech is not None:
            hook("vad", t1 - t0)
        result = self.diarizer(samples, voiceprints, speech=speech)
        t2 = time.perf_counter()
        hook("diarize", t2 - t1)
        for track in result.tracks:
            vp, track.score = identify(track.embedding, voiceprints, self.threshold)
            if vp is not None:
                track.speaker_id, track.display_name = vp.speaker_id, vp.display_name
                track.enrolled_f0_hz = vp.f0_hz
        hook("verify", time.perf_counter() - t2)
        return result

    def enrollment_print(self, clips: list[np.ndarray]) -> EnrollmentPrint:
        """Quality gates, then the voiceprint: clip embeddings and their centroid."""
        s = self.settings
        embs, speech_total, voiced = [], 0.0, []
        for i, clip in enumerate(clips, 1):
            d = self.embedded(clip)
            secs = float(d.speech.sum() * FRAME / 16000)
            if len(d.tracks) > 1:
                raise EnrollmentRejected(f"clip {i} holds {len(d.tracks)} voices (or one voice at levels far "
                                         "apart); enroll one speaker alone, at a steady distance")
            if secs < 0.5:
                raise EnrollmentRejected(f"clip {i} holds {secs:.1f} s of speech; each clip needs at least "
                                         "0.5 s")
            speech_total += secs
            speech = clip[np.repeat(d.speech, FRAME)[:len(clip)]]
            embs.append(self.embedder.embed(speech))
            voiced.append(speech)
        if speech_total < s.min_enroll_speech_seconds:
            raise EnrollmentRejected(f"enrollment holds {speech_total:.1f} s of net speech; at least "
                                     f"{s.min_enroll_speech_seconds:.1f} s is needed (send more or longer "
                                     "clips)")
        e = np.stack(embs)
        consistency = 1.0
        if len(e) > 1:
            loo = [float(e[i] @ unit(np.delete(e, i, 0).mean(0))) for i in range(len(e))]
            consistency = min(loo)
            if consistency < s.min_enroll_consistency:
                worst = int(np.argmin(loo)) + 1
                raise EnrollmentRejected(f"the clips disagree: clip {worst} scores {consistency:.2f} against "
                                         f"the others (at least {s.min_enroll_consistency:.2f} needed); are "
                                         "they all the same person?")
        return EnrollmentPrint(unit(e.mean(0)), e, speech_total, consistency, median_f0(np.concatenate(voiced)))
