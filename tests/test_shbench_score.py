"""guard bench score reproduces the published SH-Bench table from the official result files."""
import pytest

from guard.bench.shbench import official_letter, score_file, summarise
from tests.conftest import SHBENCH_OFFICIAL as DATA

TABLE = {  # ../shared/data/README.md
    "train_stepaudio2": (97.4, 94.3, 81.0, 96.1, 91.7),
    "train_qwen25omni": (93.3, 92.7, 82.0, 94.8, 90.4),
    "qwen25omni": (96.1, 95.6, 47.9, 49.4, 64.5),
    "stepaudio": (94.2, 93.7, 54.8, 31.5, 56.1),
}


@pytest.mark.skipif(not DATA.is_dir(), reason="../shared/data is not beside this checkout")
@pytest.mark.parametrize("model", sorted(TABLE))
def test_reproduces_published_table(model):
    g = score_file(DATA / f"{model}_basic_qa.json")
    s = score_file(DATA / f"{model}_selective_qa.json")
    assert g.mode == "general" and s.mode == "selective" and g.n == s.n == 2000
    m = summarise(g, s)
    got = tuple(round(v, 1) for v in (m.main_gen, m.main_sel, m.by_gen, m.by_sel, m.se))
    assert got == TABLE[model]


@pytest.mark.parametrize("pred, letter", [
    ("D. Ember & Oak.", "D"),
    ("The answer is B", "B"),
    ("The correct answer is: C", "C"),
    # the run-together prefixes are never stripped on their own: "The best option is" stays
    ("The best option is E", "E"),
    ("Answer: the main speaker said A", "A"),
    ("this is a long answer with more than ten words and no capital letter at all", ""),
    ("I am not sure", ""),
    ("Best answer: B", "B"),
])
def test_official_letter_rule(pred, letter):
    assert official_letter(pred) == letter
