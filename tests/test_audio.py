import io

import numpy as np
import pytest
import soundfile as sf

from guard import audio
from guard.errors import BadAudio, TooBig


def tone(rate: int, seconds: float = 1.0, freq: float = 440.0) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    return (0.5 * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def encode(x: np.ndarray, rate: int, fmt: str) -> bytes:
    buf = io.BytesIO()
    sf.write(buf, x, rate, format=fmt)
    return buf.getvalue()


@pytest.mark.parametrize("rate", [8000, 11025, 22050, 44100, 48000])
def test_resamples_to_16k_and_keeps_the_pitch(rate):
    a = audio.decode(pcm16=(tone(rate) * 32767).astype("<i2").tobytes(), sample_rate=rate)
    assert a.source_rate == rate and abs(a.seconds - 1.0) < 0.01
    spectrum = np.abs(np.fft.rfft(a.samples))
    assert abs(np.argmax(spectrum) * 16000 / len(a.samples) - 440) < 3


def test_stereo_is_downmixed():
    left, right = tone(16000), np.zeros(16000, np.float32)
    inter = np.stack([left, right], 1).reshape(-1).astype("<f4").tobytes()
    a = audio.decode(float32=inter, sample_rate=16000, channels=2)
    assert np.allclose(a.samples, left / 2, atol=1e-6)


@pytest.mark.parametrize("fmt", ["WAV", "FLAC"])
def test_encoded_files(fmt):
    a = audio.decode(encoded=encode(tone(22050), 22050, fmt))
    assert a.source_rate == 22050 and len(a.samples) == 16000


@pytest.mark.parametrize("kwargs, words", [
    ({}, "empty"),
    ({"encoded": b"RIFF\x00\x00not really"}, "not a readable WAV or FLAC"),
    ({"pcm16": b"\x00\x00" * 100, "sample_rate": 3000}, "3000 Hz"),
    ({"pcm16": b"\x00\x00" * 100, "sample_rate": 96000}, "96000 Hz"),
    ({"pcm16": b"\x00\x00" * 100, "sample_rate": 16000, "channels": 6}, "6 channels"),
    ({"float32": np.array([np.nan] * 10, "<f4").tobytes(), "sample_rate": 16000}, "NaN"),
    ({"float32": np.array([3.0] * 10, "<f4").tobytes(), "sample_rate": 16000}, "[-1, 1]"),
    ({"pcm16": b"\x00\x00", "float32": b"\x00\x00\x00\x00", "sample_rate": 16000}, "several payloads"),
])
def test_bad_audio_says_what_was_received(kwargs, words):
    with pytest.raises(BadAudio, match=None) as e:
        audio.decode(**kwargs)
    assert words in str(e.value)


def test_encoded_rate_outside_range():
    with pytest.raises(BadAudio, match="4000 Hz"):
        audio.decode(encoded=encode(tone(4000), 4000, "WAV"))


def test_duration_limit():
    with pytest.raises(TooBig, match="limit is 1 s"):
        audio.decode(pcm16=np.zeros(32000, "<i2").tobytes(), sample_rate=16000, max_seconds=1)


def test_dbfs():
    assert abs(audio.dbfs(np.full(100, 0.1, np.float32)) + 20) < 1e-3
    assert audio.dbfs(np.zeros(10, np.float32)) == -120
