"""The BPFT data builder on SH-Bench-format files (the official training results carry the same fields)."""
import json
from pathlib import Path

import pytest

from guard.train.data import build, examples_for

SUITE = Path(__file__).resolve().parents[1] / "benchmarks/suites/shbench-mini/questions.json"
OFFICIAL = Path(__file__).resolve().parents[2] / "shared/data/shbench-official/train_qwen25omni_basic_qa.json"


def test_each_question_gives_general_and_two_selective_examples():
    recs = json.loads(SUITE.read_text())
    main = next(r for r in recs if r["speaker"] == "main")
    by = next(r for r in recs if r["speaker"] == "bystander")
    for rec in (main, by):
        general, with_desc, without = examples_for(rec)
        assert general.mode == "general" and "ONLY listen" not in general.prompt
        assert general.target.endswith(rec["answer"])
        assert with_desc.with_description and rec["main_speaker_desc"] in with_desc.prompt
        assert not without.with_description and rec["main_speaker_desc"] not in without.prompt
        expected = rec["answer"] if rec is main else rec["idk_answer"]
        assert with_desc.target == without.target and with_desc.target.endswith(expected)
        assert with_desc.target[0] == "ABCDE"[rec["options"].index(expected)]
        for e in (general, with_desc, without):  # content-bearing descriptions never leak into prompts
            assert rec["main_speaker_desc_w_content"] not in e.prompt


def test_build_writes_shuffled_jsonl_with_a_stable_hash(tmp_path):
    a = build([SUITE], tmp_path / "a.jsonl", seed=1)
    b = build([SUITE], tmp_path / "b.jsonl", seed=1)
    assert a == b and a["examples"] == 3 * 80 and len(a["sha256"]) == 64
    rows = [json.loads(x) for x in (tmp_path / "a.jsonl").read_text().splitlines()]
    assert rows[0]["messages"][-1]["role"] == "assistant"
    assert build([SUITE], tmp_path / "c.jsonl", seed=2)["sha256"] != a["sha256"]


def test_general_task_mixing(tmp_path):
    mix = tmp_path / "general.jsonl"
    mix.write_text("".join(json.dumps({"messages": [{"role": "user", "content": f"q{i}"},
                                                    {"role": "assistant", "content": f"a{i}"}]}) + "\n"
                           for i in range(100)))
    r = build([SUITE], tmp_path / "m.jsonl", general_mix=mix, mix_ratio=0.1)
    assert r["bpft_examples"] == 240 and r["general_mix"] == 24
    rows = [json.loads(line) for line in (tmp_path / "m.jsonl").read_text().splitlines()]
    mixed = [r for r in rows if "mode" not in r]   # chats were read into prompt/target
    assert len(mixed) == 24 and all(r["prompt"].startswith("q") and r["target"].startswith("a") for r in mixed)


@pytest.mark.skipif(not OFFICIAL.is_file(), reason="../shared/data is not beside this checkout")
def test_official_format_files_build(tmp_path):
    r = build([OFFICIAL], tmp_path / "o.jsonl")
    assert r["examples"] == 3 * len(json.loads(OFFICIAL.read_text()))
