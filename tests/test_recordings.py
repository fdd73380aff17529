"""The real recorded call (pyannote.audio's shipped sample) as scenes and as an SH-Bench-format suite."""
from __future__ import annotations

import json

import numpy as np
import pytest

from guard import recordings
from guard.audio import SAMPLE_RATE
from guard.bench.facts import IDK
from guard.bench.gen_call import QUESTIONS, generate


def test_the_call_loads_with_its_references():
    rec = recordings.call()
    assert rec.samples.dtype == np.float32 and len(rec.samples) == 30 * SAMPLE_RATE
    assert {t.speaker for t in rec.activity} == set(recordings.CALL_SPEAKERS)
    # the transcript's names are mapped to the RTTM's labels: each line lies inside a turn of its speaker
    for w in rec.words:
        mid = (w.start + w.end) / 2
        mine = [t for t in rec.activity if t.start - 0.1 <= mid <= t.end + 0.1]
        assert any(t.speaker == w.speaker for t in mine), w
    said = {s: " ".join(w.text for w in rec.words if w.speaker == s) for s in recordings.CALL_SPEAKERS}
    for who, _, answer, _ in QUESTIONS:   # every suite answer is in its speaker's own words
        assert answer.split()[-1].lower() in said[who].lower()


def frames_of(scene, who: str) -> np.ndarray:
    ref = scene.reference(len(scene.samples) // 160)
    other = next(s for s in ref if s != who)
    return np.repeat(ref[who] & ~ref[other], 160)


def test_a_call_scene_puts_one_voice_behind_and_keeps_the_other():
    rec = recordings.call()
    sc = recordings.call_scene("speaker90", -10.0)
    main_only, by_only = frames_of(sc, "speaker90"), frames_of(sc, "speaker91")
    assert np.array_equal(sc.samples[main_only], rec.samples[main_only])
    ratio = np.sqrt(np.mean(sc.samples[by_only] ** 2) / np.mean(rec.samples[by_only] ** 2))
    assert 20 * np.log10(ratio) == pytest.approx(-10.0, abs=0.01)
    assert np.array_equal(recordings.call_scene("speaker91", 0.0).samples, rec.samples)
    with pytest.raises(ValueError, match="main must be one of"):
        recordings.call_scene("diane", -10.0)


def test_the_call_suite_is_official_and_balanced(tmp_path):
    rows = json.loads(generate(tmp_path).read_text())
    assert len(rows) == 24 and sum(r["speaker"] == "main" for r in rows) == 12
    for r in rows:
        assert len(r["options"]) == 5 and r["answer"] in r["options"] and r["idk_answer"] == IDK
        assert r["type"] == "real" and (tmp_path / r["audio"]).is_file()
