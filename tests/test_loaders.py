"""Production loaders load tiny local models of the real layouts, and never reach for a network."""
from __future__ import annotations

import socket

import numpy as np
import pytest

from guard.config import HearingSettings
from guard.errors import ConfigError
from guard.hearing import Hearing
from guard.hearing.embed import EcapaEmbedder, make_embedder
from guard.layouts import ecapa_dir, pyannote_pipeline


@pytest.fixture()
def no_network(monkeypatch):
    """Any attempt to open an internet socket fails the test."""
    real = socket.socket.connect

    def guarded(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6):
            raise AssertionError(f"network access attempted: {address}")
        return real(self, address)
    monkeypatch.setattr(socket.socket, "connect", guarded)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def ecapa(tmp_path_factory):
    return ecapa_dir(tmp_path_factory.mktemp("m") / "ecapa")


@pytest.fixture(scope="module")
def pyannote(tmp_path_factory):
    return pyannote_pipeline(tmp_path_factory.mktemp("m") / "pyannote")


def test_ecapa_loads_from_a_local_directory(ecapa, no_network, scene):
    e = make_embedder("ecapa", ecapa_path=str(ecapa))
    assert isinstance(e, EcapaEmbedder) and e.dim == 32
    v = e.embed(scene.samples[:48000])
    assert v.shape == (32,) and abs(np.linalg.norm(v) - 1) < 1e-5


@pytest.mark.parametrize("path, words", [("", "hearing.ecapa_path is empty"), ("/nonexistent", "lacks")])
def test_ecapa_missing_path_names_the_setting(path, words):
    with pytest.raises(ConfigError, match=words):
        make_embedder("ecapa", ecapa_path=path)


def test_ecapa_hearing_end_to_end(ecapa, no_network, scene):
    h = Hearing.from_settings(HearingSettings(embedder="ecapa", ecapa_path=str(ecapa)))
    d = h.hear(scene.samples, [])
    assert d.speech.any() and d.tracks


def test_pyannote_pipeline_loads_and_runs(pyannote, no_network, scene):
    h = Hearing.from_settings(HearingSettings(diarizer="pyannote", pyannote_path=str(pyannote)))
    d = h.hear(scene.samples, [])
    assert d.n_frames == -(-len(scene.samples) // 160)
    for t in d.tracks:  # random weights: whatever it finds must be well-formed
        assert t.frames.shape == (d.n_frames,) and t.embedding.shape == (256,)


@pytest.mark.parametrize("path, words", [("", "pyannote_path is empty"), ("/nonexistent", "no config.yaml")])
def test_pyannote_missing_path_names_the_setting(path, words):
    with pytest.raises(ConfigError, match=words):
        Hearing.from_settings(HearingSettings(diarizer="pyannote", pyannote_path=path))
