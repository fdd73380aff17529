"""Verification calibration: trials from a folder per speaker, DET metrics, a threshold for config.

Protocol: each speaker is enrolled from their first `n_enroll` clips (centroid of clip embeddings, as
`guard enroll` does); every other clip of every speaker is scored (cosine) against every enrollment:
same speaker = genuine trial, other speaker = impostor trial.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

from guard.audio import resample
from guard.hearing.embed import Embedder, unit
from guard.hearing.vad import FRAME, Vad

AUDIO_SUFFIXES = (".wav", ".flac")


@dataclass
class DetReport:
    n_genuine: int
    n_impostor: int
    eer: float                  # fraction
    eer_threshold: float
    min_dcf: float              # normalised, p_target=0.01, C_miss=C_fa=1
    frr_at_far_1pct: float      # false-reject rate at the threshold giving <= 1 % false accepts
    threshold_far_1pct: float
    frr_at_far_01pct: float     # ... <= 0.1 % false accepts (meaningful with >= 1000 impostor trials)
    threshold_far_01pct: float

    def as_dict(self) -> dict:
        return asdict(self)

    def lines(self) -> list[str]:
        return [f"trials: {self.n_genuine} genuine, {self.n_impostor} impostor",
                f"EER {100 * self.eer:.2f} % at threshold {self.eer_threshold:.3f}",
                f"minDCF(p=0.01) {self.min_dcf:.3f}",
                f"FRR at FAR <= 1 %: {100 * self.frr_at_far_1pct:.2f} % (threshold {self.threshold_far_1pct:.3f})",
                (f"FRR at FAR <= 0.1 %: {100 * self.frr_at_far_01pct:.2f} % (threshold "
                 f"{self.threshold_far_01pct:.3f})")]


def det(scores: np.ndarray, labels: np.ndarray, p_target: float = 0.01) -> DetReport:
    """scores: higher = more alike; labels: 1 genuine, 0 impostor. Accept when score >= threshold."""
    scores, labels = np.asarray(scores, float), np.asarray(labels, bool)
    gen, imp = np.sort(scores[labels]), np.sort(scores[~labels])
    if len(gen) == 0 or len(imp) == 0:
        raise ValueError("calibration needs both genuine and impostor trials (two speakers or more)")
    thresholds = np.unique(np.concatenate([scores, [scores.max() + 1e-6]]))
    frr = np.searchsorted(gen, thresholds, side="left") / len(gen)          # genuine below threshold
    far = 1 - np.searchsorted(imp, thresholds, side="left") / len(imp)      # impostor at/above threshold
    i = int(np.argmin(np.abs(frr - far)))
    dcf = (p_target * frr + (1 - p_target) * far) / min(p_target, 1 - p_target)

    def at_far(limit: float) -> tuple[float, float]:
        ok = np.flatnonzero(far <= limit)
        j = ok[0]  # lowest threshold meeting the limit: fewest false rejects
        return float(frr[j]), float(thresholds[j])

    f1, t1 = at_far(0.01)
    f01, t01 = at_far(0.001)
    return DetReport(len(gen), len(imp), float((frr[i] + far[i]) / 2), float(thresholds[i]), float(dcf.min()),
                     f1, t1, f01, t01)


def speech_only(samples: np.ndarray, vad: Vad) -> np.ndarray:
    mask = np.repeat(vad.speech_mask(samples), FRAME)[:len(samples)]
    return samples[mask] if mask.sum() > 8000 else samples


def embed_folder(root: Path, embedder: Embedder, vad: Vad) -> dict[str, np.ndarray]:
    """{speaker: (n_clips, d)} for every sub-folder of root holding audio clips (sorted by name)."""
    out = {}
    for spk in sorted(p for p in Path(root).iterdir() if p.is_dir()):
        clips = sorted(f for f in spk.iterdir() if f.suffix.lower() in AUDIO_SUFFIXES)
        embs = []
        for f in clips:
            x, rate = sf.read(f, dtype="float32", always_2d=True)
            embs.append(embedder.embed(speech_only(resample(x.mean(1), rate), vad)))
        if embs:
            out[spk.name] = np.stack(embs)
    return out


def trials(embs: dict[str, np.ndarray], n_enroll: int = 3, tested: list[str] | None = None
           ) -> tuple[np.ndarray, np.ndarray]:
    """Scores and labels. `tested` limits the enrolled side to some speakers (leave-one-voice-out)."""
    prints = {s: unit(e[:n_enroll].mean(0)) for s, e in embs.items() if len(e) > n_enroll}
    scores, labels = [], []
    for enrolled, c in prints.items():
        if tested is not None and enrolled not in tested:
            continue
        for spk, e in embs.items():
            probe = e[n_enroll:] if spk == enrolled else (e[n_enroll:] if spk in prints else e)
            scores.extend((probe @ c).tolist())
            labels.extend([spk == enrolled] * len(probe))
    return np.array(scores), np.array(labels, bool)


def calibrate(root: Path, embedder: Embedder, vad: Vad, far: float = 0.001, n_enroll: int = 3
              ) -> tuple[DetReport, float]:
    """DET report for a folder per speaker, and the threshold meeting the false-accept target."""
    embs = embed_folder(root, embedder, vad)
    if len(embs) < 2:
        raise ValueError(f"{root} needs two or more speaker folders with audio clips; found {len(embs)}")
    short = [s for s, e in embs.items() if len(e) <= n_enroll]
    if len(short) == len(embs):
        raise ValueError(f"every speaker needs more than {n_enroll} clips ({n_enroll} enroll, the rest test)")
    report = det(*trials(embs, n_enroll))
    threshold = report.threshold_far_01pct if far <= 0.001 else report.threshold_far_1pct
    return report, threshold


def write_threshold(config: Path, embedder: str, threshold: float) -> None:
    """Set hearing.verify_threshold.<embedder> in a YAML settings file (created when missing)."""
    import yaml

    data = yaml.safe_load(config.read_text()) if config.exists() else {}
    data = data or {}
    data.setdefault("hearing", {}).setdefault("verify_threshold", {})[embedder] = round(float(threshold), 4)
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(yaml.safe_dump(data, sort_keys=False))
