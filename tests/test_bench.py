"""guard bench: replay through the live server, official result format, reports, and the gate."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from guard.bench.report import gate
from guard.bench.shbench import official_letter
from guard.cli import main

SUITE = Path(__file__).resolve().parents[1] / "benchmarks/suites/shbench-mini/questions.json"
FACTS_2 = Path(__file__).resolve().parents[1] / "benchmarks/shbench_facts/facts_2.yaml"


def test_shbench_replay_writes_official_format_and_reports(server, tmp_path):
    out = tmp_path / "run"
    assert main(["bench", "shbench", "--questions", str(SUITE), "--target", server.target, "--limit", "8",
                 "--out", str(out)]) == 0
    for mode in ("general", "selective"):
        rows = json.loads((out / f"{mode}.json").read_text())
        assert len(rows) == 8
        for r in rows:
            assert {"question", "options", "answer", "idk_answer", "speaker", "type", "audio", "pred"} <= set(r)
            assert official_letter(r["pred"]) in "ABCDE" and "error" not in r
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["cells"]) == {"main_gen", "main_sel", "by_gen", "by_sel", "se"}
    assert summary["modes"]["selective"]["latency"]["p50"] > 0
    assert "<img" in (out / "report.html").read_text() and "SE" in (out / "summary.md").read_text()
    # the gate passes a run against itself
    assert main(["bench", "shbench", "--questions", str(SUITE), "--target", server.target, "--limit", "8",
                 "--out", str(tmp_path / "again"), "--baseline", str(out / "summary.json")]) == 0


def test_generated_suite_is_balanced_and_official():
    rows = json.loads(SUITE.read_text())
    assert len(rows) == 80 and sum(r["speaker"] == "main" for r in rows) == 40
    for r in rows:
        assert len(r["options"]) == 5 and r["answer"] in r["options"] and r["idk_answer"] in r["options"]
        assert (SUITE.parent / r["audio"]).is_file()


def test_background_layout_puts_the_bystander_under_the_main_speaker(tmp_path):
    from guard import scenes
    from guard.bench.gen_shbench import generate

    rows = json.loads(generate(tmp_path, n_scenes=2, seed=4, layout="background").read_text())
    assert len(rows) == 8 and sum(r["speaker"] == "main" for r in rows) == 4
    assert all((tmp_path / r["audio"]).is_file() for r in rows)
    sc = scenes.background("awb", ["The weather is going to be cold and rainy all weekend long.",
                                   "Please add a dentist appointment for next Thursday afternoon."],
                           "slt", ["Our neighbours are going on holiday to Portugal next month."])
    ref = sc.reference(len(sc.samples) // 160)
    assert (ref["slt"] & ref["awb"]).sum() > 0.6 * ref["slt"].sum()   # mostly under the main speaker


def test_a_facts_file_of_your_own_topics_makes_the_suite(tmp_path):
    from guard.bench.facts import load_facts

    facts = load_facts(FACTS_2)
    assert len(facts) >= 12 and all("{x}" in s for f in facts for s in f.says)
    for shipped in sorted(FACTS_2.parent.glob("facts_*.yaml")):   # every committed held-out set loads
        assert len(load_facts(shipped)) >= 12, shipped.name
    out = tmp_path / "suite"
    assert main(["bench", "generate", "shbench", "--out", str(out), "--scenes", "2", "--seed", "5",
                 "--facts", str(FACTS_2)]) == 0
    rows = json.loads((out / "questions.json").read_text())
    asks = {q: f for f in facts for q in f.asks}
    assert len(rows) == 8 and all(r["question"] in asks and r["answer"] in asks[r["question"]].pool
                                  for r in rows)
    bad = tmp_path / "bad.yaml"
    for text, says in (("a: {says: [x], asks: [q], pool: [1, 2, 3, 4]}", "at least 4 topics"),
                       ("\n".join(f"t{i}: {{says: [no slot], asks: [q], pool: [a, b, c, d]}}" for i in range(4)),
                        "slot"),
                       ("\n".join(f"t{i}: {{says: ['{{x}} at {{y}}'], asks: [q], pool: [a, b, c, d]}}"
                                  for i in range(4)), "no other"),
                       ("\n".join(f"t{i}: {{says: ['{{x}}'], asks: [q], pool: [a, a, b, c]}}" for i in range(4)),
                        "4 or more distinct")):
        bad.write_text(text)
        with pytest.raises(ValueError, match=says):
            load_facts(bad)
    assert main(["bench", "generate", "shbench", "--out", str(tmp_path / "no"), "--facts", str(bad)]) == 2


def test_an_option_can_be_said_in_other_words(tmp_path, monkeypatch):
    """facts_6: the question lists a summary ("Exhausted"), the speaker says something else ("completely
    worn out ..."): the record's answer is the option, the scene speaks the other words."""
    from guard import scenes
    from guard.bench import gen_shbench
    from guard.bench.facts import load_facts

    facts = load_facts(FACTS_2.parent / "facts_6.yaml")
    assert all(len(f.spoken) == len(f.pool) for f in facts)
    mood = next(f for f in facts if f.key == "mood")
    assert "Exhausted" in mood.pool and mood.said("Exhausted") == "completely worn out and ready for bed"
    spoken = []
    real = scenes.conversation

    def conversation(main, main_lines, bystanders, **kw):
        spoken.extend(main_lines + [line for _, lines in bystanders for line in lines])
        return real(main, main_lines, bystanders, **kw)

    monkeypatch.setattr(scenes, "conversation", conversation)
    rows = json.loads(gen_shbench.generate(tmp_path / "suite", n_scenes=1, seed=3, facts=facts).read_text())
    by_ask = {q: f for f in facts for q in f.asks}
    for r in rows:
        f = by_ask[r["question"]]
        assert r["answer"] in f.pool and r["answer"] in r["options"]
        assert any(f.said(r["answer"]) in line and r["answer"] not in line for line in spoken)
    bad = tmp_path / "bad.yaml"
    bad.write_text("\n".join(f"t{i}: {{says: ['{{x}}'], asks: [q], pool: [a, b, c, {{option: d}}]}}"
                             for i in range(4)))
    with pytest.raises(ValueError, match="option, said"):
        load_facts(bad)


def test_the_held_out_voice_is_cast_on_request_and_heard(tmp_path, monkeypatch):
    from guard import scenes
    from guard.bench.facts import DESCRIPTIONS
    from guard.hearing.asr import Transcriber

    monkeypatch.setenv("HIBARI_HOME", str(tmp_path / "empty"))   # the bundled voice needs no download
    monkeypatch.setenv("GUARD_TTS_CACHE", str(tmp_path / "tts"))
    x = scenes.tts("heart", "We still need to buy coffee for the office on Thursday.")
    assert 2.0 < len(x) / 16000 < 5.0
    assert {"coffee", "office", "thursday"} <= set(Transcriber()(x).best.split())
    out = tmp_path / "suite"
    assert main(["bench", "generate", "shbench", "--out", str(out), "--scenes", "3", "--seed", "3",
                 "--voices", "heart,awb,rms"]) == 0
    mains = {r["main_speaker_desc"] for r in json.loads((out / "questions.json").read_text())}
    assert mains == {DESCRIPTIONS[v] for v in ("heart", "awb", "rms")}
    vp = tmp_path / "vp"
    assert main(["bench", "generate", "voxprivacy", "--out", str(vp), "--voices", "heart,awb,rms"]) == 0
    household = json.loads((vp / "suite.json").read_text())
    assert {v for r in household for v in r["enroll"]} == {"heart", "awb", "rms"}
    assert any(r["turns"][0]["speaker"] == "heart" for r in household)
    with pytest.raises(SystemExit):   # argparse refuses a voice with no description
        main(["bench", "generate", "shbench", "--out", str(out), "--voices", "heart,awb,nobody"])


def test_gate_fails_on_a_drop_and_passes_within_the_allowance():
    base = {"cells": {"main_gen": 80, "main_sel": 80, "by_gen": 30, "by_sel": 100, "se": 58},
            "tiers": {"tier1_accuracy": 100.0}}
    worse = {"cells": {**base["cells"], "by_sel": 65, "se": 54}, "tiers": {"tier1_accuracy": 90.0}}
    failures = gate(base, worse, 2.0)
    assert any("By-Sel" in f for f in failures) and any("SE" in f for f in failures)
    assert any("tier1_accuracy" in f for f in failures)
    assert gate(base, {**base, "cells": {**base["cells"], "se": 56.5}}, 2.0) == []


def test_compare_prints_the_runs_side_by_side_with_the_lift(tmp_path, capsys):
    guard = {"suite": "mini", "cells": {"main_gen": 100.0, "main_sel": 97.5, "by_gen": 100.0, "by_sel": 100.0,
                                        "se": 99.4}}
    off = {"suite": "mini", "cells": {"main_gen": 100.0, "main_sel": 100.0, "by_gen": 100.0, "by_sel": 40.0,
                                      "se": 72.7}}
    files = []
    for name, summary in (("on", guard), ("off", off)):
        (tmp_path / name).mkdir()
        files.append(tmp_path / name / "summary.json")
        files[-1].write_text(json.dumps(summary))
    out = tmp_path / "compare.md"
    assert main(["bench", "compare", *map(str, files), "--names", "guard,gating off", "--out", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "| guard minus gating off | +0.0 | -2.5 | +0.0 | +60.0 | +26.7 |" in lines
    assert out.read_text().splitlines() == lines
    assert main(["bench", "compare", str(files[0]), str(files[1])]) == 0   # rows named by folder
    assert "| on minus off |" in capsys.readouterr().out
    files[1].write_text(json.dumps({**off, "suite": "another"}))
    assert main(["bench", "compare", str(files[0]), str(files[1])]) == 0
    assert "different suites" in capsys.readouterr().out
    (tmp_path / "vox.json").write_text(json.dumps({"suite": "vox", "tiers": {"tier1_accuracy": 100.0}}))
    assert main(["bench", "compare", str(files[0]), str(tmp_path / "vox.json")]) == 2
    assert "no SH-Bench cells" in capsys.readouterr().err
    assert main(["bench", "compare", str(files[0]), str(tmp_path / "absent.json")]) == 2
    assert main(["bench", "compare", str(files[0]), str(files[1]), "--names", "just one"]) == 2
    assert "one name for each" in capsys.readouterr().err


VOX = Path(__file__).resolve().parents[1] / "benchmarks/suites/voxprivacy-mini/suite.json"


def test_voxprivacy_replay_through_the_live_server(server, tmp_path):
    out = tmp_path / "vox"
    assert main(["bench", "voxprivacy", "--suite", str(VOX), "--target", server.target, "--limit", "9",
                 "--out", str(out)]) == 0
    rows = json.loads((out / "results.json").read_text())
    assert len(rows) == 9 and all("error" not in r for r in rows)
    assert {r["verdict"] for r in rows} <= {"leak", "withhold", "invalid"}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["tier1_accuracy"] == 100.0  # Tier 1: withheld from owner and other alike
    for kind, d in summary["impostor_leaks"].items():
        assert d["leaks"] == 0, kind
    assert set(summary["tiers"]) == {"tier1_accuracy", "tier2_f1", "tier3_f1"}
    assert "Tier 1 accuracy" in (out / "summary.md").read_text()
