"""Calibration: DET metrics on known scores, and `guard calibrate` on a folder of real synthetic speech."""
from __future__ import annotations

import numpy as np
import pytest
import yaml

from guard import scenes
from guard.cli import main
from guard.config import load_settings
from guard.hearing.calibrate import det


def test_det_on_separable_scores():
    r = det(np.array([0.9, 0.8, 0.85, 0.3, 0.2, 0.1]), np.array([1, 1, 1, 0, 0, 0]))
    assert r.eer == 0 and r.n_genuine == 3 and r.n_impostor == 3 and 0.3 < r.eer_threshold <= 0.8
    assert r.frr_at_far_1pct == 0


def test_det_on_overlapping_scores():
    rng = np.random.default_rng(0)
    gen, imp = rng.normal(1, 1, 20000), rng.normal(-1, 1, 20000)
    r = det(np.concatenate([gen, imp]), np.concatenate([np.ones(20000), np.zeros(20000)]))
    assert abs(r.eer - 0.1587) < 0.01  # two unit Gaussians 2 apart: EER = Phi(-1)
    assert abs(r.eer_threshold) < 0.05 and r.frr_at_far_01pct > r.frr_at_far_1pct > r.eer


def test_det_needs_both_kinds():
    with pytest.raises(ValueError, match="both genuine and impostor"):
        det(np.array([0.5, 0.6]), np.array([1, 1]))


def test_calibrate_command_reports_and_writes(tmp_path, capsys):
    for voice in ("awb", "slt", "kal"):
        d = tmp_path / "voices" / voice
        d.mkdir(parents=True)
        for i, line in enumerate(scenes.SENTENCES[:5]):
            scenes.Scene(scenes.level(scenes.tts(voice, line), -20)).write(d / f"{i}.wav")
    config = tmp_path / "guard.yaml"
    assert main(["calibrate", str(tmp_path / "voices"), "--config", str(config), "--write"]) == 0
    out = capsys.readouterr().out
    assert "trials: 6 genuine, 12 impostor" in out and "EER" in out and "minDCF" in out
    written = yaml.safe_load(config.read_text())["hearing"]["verify_threshold"]["resemblyzer"]
    assert 0.3 < written < 1.0
    assert load_settings(config, env={}).hearing.verify_threshold["resemblyzer"] == written
