"""Decode and validate request audio into float32 mono 16 kHz.

Everything the server accepts passes through `decode`; anything unusable raises BadAudio with a message
that says what was received. Resampling is polyphase (scipy), exact for the common rates.
"""
from __future__ import annotations

import io
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import soundfile as sf
from scipy.signal import resample_poly

from guard.errors import BadAudio, TooBig

SAMPLE_RATE = 16_000
MIN_RATE, MAX_RATE = 8_000, 48_000
MAX_CHANNELS = 2


@dataclass(frozen=True)
class Audio:
    """Mono float32 samples at 16 kHz."""

    samples: np.ndarray  # shape (n,), float32, in [-1, 1]
    source_rate: int

    @property
    def seconds(self) -> float:
        return len(self.samples) / SAMPLE_RATE


def decode(*, pcm16: bytes | None = None, float32: bytes | None = None, encoded: bytes | None = None,
           sample_rate: int = 0, channels: int = 0, max_seconds: float = math.inf) -> Audio:
    """Exactly one of pcm16 / float32 / encoded. Raises BadAudio or TooBig."""
    given = [name for name, v in (("pcm16", pcm16), ("float32", float32), ("encoded", encoded)) if v]
    if not given:
        raise BadAudio("audio is empty: send pcm16, float32 or encoded (WAV/FLAC) bytes")
    if len(given) > 1:
        raise BadAudio(f"audio has several payloads ({', '.join(given)}); send exactly one")
    if encoded:
        data, rate = _decode_file(encoded)
    else:
        channels = channels or 1
        if not MIN_RATE <= sample_rate <= MAX_RATE:
            raise BadAudio(f"sample_rate {sample_rate} Hz is unusable: raw {given[0]} audio needs a rate "
                           f"between {MIN_RATE} and {MAX_RATE} Hz")
        if channels > MAX_CHANNELS:
            raise BadAudio(f"{channels} channels received; send mono or stereo")
        width = 2 if pcm16 else 4
        raw = pcm16 or float32 or b""
        if len(raw) % (width * channels):
            raise BadAudio(f"{given[0]} payload of {len(raw)} bytes is not a whole number of "
                           f"{channels}-channel {width}-byte samples")
        if pcm16:
            data = np.frombuffer(raw, dtype="<i2").astype(np.float32) / 32768.0
        else:
            data = np.frombuffer(raw, dtype="<f4").astype(np.float32)
        data = data.reshape(-1, channels)
        rate = sample_rate
    return _finish(data, rate, max_seconds)


def _decode_file(blob: bytes) -> tuple[np.ndarray, int]:
    try:
        data, rate = sf.read(io.BytesIO(blob), dtype="float32", always_2d=True)
    except (RuntimeError, ValueError, TypeError) as e:  # LibsndfileError is a RuntimeError
        head = blob[:4]
        raise BadAudio(f"encoded audio ({len(blob)} bytes, starting {head!r}) is not a readable WAV or "
                       f"FLAC file: {e}") from None
    if not MIN_RATE <= rate <= MAX_RATE:
        raise BadAudio(f"encoded audio is {rate} Hz; guard needs {MIN_RATE}-{MAX_RATE} Hz")
    if data.shape[1] > MAX_CHANNELS:
        raise BadAudio(f"encoded audio has {data.shape[1]} channels; send mono or stereo")
    return data, rate


def _finish(data: np.ndarray, rate: int, max_seconds: float) -> Audio:
    if data.shape[0] == 0:
        raise BadAudio("audio holds no samples")
    seconds = data.shape[0] / rate
    if seconds > max_seconds:
        raise TooBig(f"audio is {seconds:.1f} s; the limit is {max_seconds:.0f} s")
    if not np.isfinite(data).all():
        bad = int((~np.isfinite(data)).sum())
        raise BadAudio(f"audio has {bad} NaN or infinite samples")
    mono = data.mean(axis=1, dtype=np.float32)
    peak = float(np.abs(mono).max())
    if peak > 1.0 + 1e-3:
        raise BadAudio(f"float audio must lie in [-1, 1]; its peak is {peak:.3g}")
    return Audio(samples=resample(mono, rate), source_rate=rate)


def resample(x: np.ndarray, rate: int, target: int = SAMPLE_RATE) -> np.ndarray:
    if rate == target:
        return np.ascontiguousarray(x, dtype=np.float32)
    frac = Fraction(target, rate).limit_denominator(1000)
    y = resample_poly(x, frac.numerator, frac.denominator)
    return np.clip(y, -1.0, 1.0).astype(np.float32)


def to_wav_bytes(samples: np.ndarray, rate: int = SAMPLE_RATE) -> bytes:
    buf = io.BytesIO()
    sf.write(buf, samples, rate, format="WAV", subtype="PCM_16")
    return buf.getvalue()


def to_pcm16(samples: np.ndarray) -> bytes:
    return (np.clip(samples, -1, 1) * 32767).astype("<i2").tobytes()


def frame_dbfs(samples: np.ndarray, n_frames: int, frame: int = 160, smooth: int = 3) -> np.ndarray:
    """(n_frames,) level in dBFS of each `frame`-sample frame, power-averaged over `smooth` frames;
    samples past the end count as silence (-120 floor)."""
    x = np.zeros(n_frames * frame)
    m = min(len(x), len(samples))
    x[:m] = samples[:m]
    power = np.convolve(np.mean(x.reshape(n_frames, frame) ** 2, axis=1), np.ones(smooth) / smooth, mode="same")
    return 10 * np.log10(np.maximum(power, 1e-12))


def dbfs(samples: np.ndarray) -> float:
    """RMS level in dB relative to full scale; -120 for silence."""
    if samples.size == 0:
        return -120.0
    rms = float(np.sqrt(np.mean(np.square(samples, dtype=np.float64))))
    return 20 * math.log10(rms) if rms > 1e-6 else -120.0
