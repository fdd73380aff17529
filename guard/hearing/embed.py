"""Speaker embedders behind one interface, chosen by name from config through EMBEDDERS.

- resemblyzer: GE2E encoder (256-d) whose weights ship inside the resemblyzer package: the default.
- ecapa: SpeechBrain ECAPA-TDNN loaded from a local directory (production); never from a hub.

Shapes: `embed_windows(samples, starts, length)` takes 16 kHz float32 samples and window start offsets
in samples, all windows `length` samples long, and returns (n_windows, dim) unit vectors, batched.
"""
from __future__ import annotations

import abc
import os
from pathlib import Path

import numpy as np

from guard.errors import ConfigError

WINDOW_DBFS = -25.0  # the level every GE2E window is brought to (decision 41)


def unit(x: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(x, axis=-1, keepdims=True)
    return (x / np.maximum(n, 1e-9)).astype(np.float32)


def resolve_device(device: str) -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ConfigError("hearing.device is cuda but no CUDA device is visible; use cpu or auto")
    return device


class Embedder(abc.ABC):
    name: str
    dim: int
    window_samples: int  # the natural window length

    @abc.abstractmethod
    def embed_windows(self, samples: np.ndarray, starts: np.ndarray, length: int, level: bool = False
                      ) -> np.ndarray:
        """`level=True` brings every window to one level first, where the embedder needs it."""

    def embed(self, samples: np.ndarray) -> np.ndarray:
        """One unit vector for a whole utterance: the mean of its overlapping, level-normalised windows.
        Enrollment, calibration and identification all embed voices this way."""
        w = self.window_samples
        if len(samples) < w:
            samples = np.pad(samples, (0, w - len(samples)))
        starts = np.arange(0, len(samples) - w + 1, w // 2)
        return unit(self.embed_windows(samples, starts, w, level=True).mean(axis=0))


def level_gain(samples: np.ndarray, starts: np.ndarray, length: int, dbfs: float = WINDOW_DBFS) -> np.ndarray:
    """Per window, the power gain that brings its RMS level to `dbfs` (float32, one per start).

    GE2E reads a power mel spectrogram, not a log one, so its embedding moves with the input level;
    resemblyzer's own preprocessing normalises the volume for that reason. Scaling each window's mel power
    is the same as scaling its samples. Digital silence keeps a floor instead of an infinite gain."""
    x = np.asarray(samples, np.float64)
    cs = np.concatenate([[0.0], np.cumsum(x * x)])
    end = np.minimum(starts + length, len(x))
    power = (cs[end] - cs[np.minimum(starts, len(x))]) / length
    return (10 ** (dbfs / 10) / np.maximum(power, 1e-10)).astype(np.float32)


class ResemblyzerEmbedder(Embedder):
    """GE2E speaker encoder from the resemblyzer package (pretrained.pt, 17 MB, inside the wheel).

    The 40-band mel power spectrogram (25 ms window, 10 ms hop) is computed with torch.stft to match
    resemblyzer's librosa features without librosa's JIT start-up cost.
    """

    name = "resemblyzer"
    dim = 256
    window_samples = 160 * 160  # 160 frames of 10 ms = 1.6 s, the encoder's partial utterance

    def __init__(self, device: str = "cpu"):
        import librosa
        import torch
        from resemblyzer import VoiceEncoder

        self.device = resolve_device(device)
        self._encoder = VoiceEncoder(device=self.device, verbose=False)
        self._encoder.eval()
        fb = librosa.filters.mel(sr=16000, n_fft=400, n_mels=40)
        self._fb = torch.from_numpy(fb).to(self.device)
        self._window = torch.hann_window(400, device=self.device)

    def mel(self, samples: np.ndarray):
        """(n,) -> (frames, 40) torch tensor; frame i is centred on sample 160 * i."""
        import torch

        x = torch.from_numpy(np.ascontiguousarray(samples, dtype=np.float32)).to(self.device)
        spec = torch.stft(x, n_fft=400, hop_length=160, window=self._window, center=True,
                          pad_mode="constant", return_complex=True).abs() ** 2
        return (self._fb @ spec).T

    def embed_windows(self, samples: np.ndarray, starts: np.ndarray, length: int, level: bool = False
                      ) -> np.ndarray:
        import torch

        if len(starts) == 0:
            return np.zeros((0, self.dim), np.float32)
        frames = length // 160
        mel = self.mel(samples)
        need = int(starts.max()) // 160 + frames
        if mel.shape[0] < need:
            mel = torch.nn.functional.pad(mel, (0, 0, 0, need - mel.shape[0]))
        idx = (torch.as_tensor(starts // 160, device=self.device)[:, None]
               + torch.arange(frames, device=self.device)[None, :])
        windows = mel[idx]
        if level:
            gain = torch.as_tensor(level_gain(samples, starts, length), device=self.device)
            windows = windows * gain[:, None, None]
        with torch.inference_mode():
            out = self._encoder(windows)
        return unit(out.float().cpu().numpy())


ECAPA_FILES = ("hyperparams.yaml", "embedding_model.ckpt", "mean_var_norm_emb.ckpt", "classifier.ckpt",
               "label_encoder.txt")


class EcapaEmbedder(Embedder):
    """SpeechBrain ECAPA-TDNN from a local directory: hyperparams.yaml, embedding_model.ckpt,
    mean_var_norm_emb.ckpt, classifier.ckpt, label_encoder.txt (the spkrec-ecapa-voxceleb layout)."""

    name = "ecapa"
    window_samples = 16000 * 3 // 2

    def __init__(self, path: str, device: str = "cpu", savedir: str | None = None):
        if not path:
            raise ConfigError("hearing.ecapa_path is empty: set it (GUARD_HEARING__ECAPA_PATH) to a local "
                              "SpeechBrain ECAPA directory")
        src = Path(path)
        missing = [f for f in ECAPA_FILES if not (src / f).is_file()]
        if missing:
            raise ConfigError(f"hearing.ecapa_path {src} lacks {', '.join(missing)}: point it at a local "
                              f"SpeechBrain ECAPA directory ({', '.join(ECAPA_FILES)})")
        from speechbrain.inference.speaker import EncoderClassifier
        from speechbrain.utils.fetching import LocalStrategy

        self.device = resolve_device(device)
        self._model = EncoderClassifier.from_hparams(
            source=str(src), savedir=savedir or str(src), run_opts={"device": self.device},
            overrides={"pretrained_path": str(src)}, local_strategy=LocalStrategy.NO_LINK)
        self._model.eval()
        import torch

        probe = self._model.encode_batch(torch.zeros(1, 16000, device=self.device))
        self.dim = int(probe.shape[-1])

    def embed_windows(self, samples: np.ndarray, starts: np.ndarray, length: int, level: bool = False
                      ) -> np.ndarray:
        # `level` is not needed: ECAPA reads log-mel features with mean normalisation.
        import torch

        if len(starts) == 0:
            return np.zeros((0, self.dim), np.float32)
        padded = np.pad(samples, (0, max(0, int(starts.max()) + length - len(samples))))
        batch = np.stack([padded[s:s + length] for s in starts.astype(int)])
        with torch.inference_mode():
            out = self._model.encode_batch(torch.from_numpy(batch).to(self.device))
        return unit(out.squeeze(1).float().cpu().numpy())


def make_embedder(name: str, *, device: str = "cpu", ecapa_path: str = "") -> Embedder:
    """The embedder registry: a known name or a clear error."""
    if name == ResemblyzerEmbedder.name:
        return ResemblyzerEmbedder(device)
    if name == EcapaEmbedder.name:
        return EcapaEmbedder(ecapa_path, device)
    raise ConfigError(f"hearing.embedder {name!r} is unknown; choose one of {EMBEDDERS}")


EMBEDDERS = (ResemblyzerEmbedder.name, EcapaEmbedder.name)
os.environ.setdefault("PYANNOTE_METRICS_ENABLED", "0")
