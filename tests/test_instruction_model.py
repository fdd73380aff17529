"""The learned instruction reader behind the grammar (decision 107): its weights are what
scripts/fit_instructions.py makes from the labelled lines now, and the ledger's classifier reads with it
where the grammar finds nothing."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from guard import text
from guard.policy import instructions
from guard.policy.instruction_model import CLASSES, InstructionModel, fit, labelled
from guard.policy.privacy_text import NOBODY, OWNER_ONLY

ROOT = Path(__file__).resolve().parents[1]


def test_the_shipped_weights_are_what_the_labelled_lines_fit(tmp_path):
    out = tmp_path / "model.npz"
    subprocess.run([sys.executable, str(ROOT / "scripts/fit_instructions.py"), "--out", str(out)], check=True,
                   capture_output=True)
    fresh, shipped = np.load(out), np.load(ROOT / "guard/data/instruction_model.npz")
    assert list(fresh["classes"]) == list(shipped["classes"]) == list(CLASSES)
    # stale weights: run scripts/fit_instructions.py (a labelled line added or changed moves them)
    np.testing.assert_allclose(fresh["w"], shipped["w"], atol=2e-3)
    np.testing.assert_allclose(fresh["b"], shipped["b"], atol=2e-3)


def test_a_changed_label_moves_the_weights():
    """The drift check above can fail: the same fit with one set's labels swapped gives other weights."""
    sets = labelled(ROOT / "benchmarks/privacy_eval")
    rows = [r for v in sets.values() for r in v]
    x = text.embed([s for s, _ in rows])
    swap = {NOBODY: OWNER_ONLY, OWNER_ONLY: NOBODY}
    moved = {s for s, _ in sets["instructions_12"]}
    changed = [swap.get(k, k) if s in moved else k for s, k in rows]
    w, _ = fit(x, changed, steps=300)
    w0, _ = fit(x, [k for _, k in rows], steps=300)
    assert np.abs(w - w0).max() > 0.05


def test_fit_learns_the_classes_and_needs_each_of_them():
    rng = np.random.default_rng(0)
    centres = np.eye(3, 8) * 3
    y = [CLASSES[i % 3] for i in range(60)]
    x = np.array([centres[CLASSES.index(k)] for k in y]) + rng.normal(0, 0.3, (60, 8))
    model = InstructionModel(*fit(x, y, steps=500, rate=1.0))
    assert [model.read(e)[0] for e in x] == y
    with pytest.raises(ValueError, match="every class"):
        fit(x[:2], ["nobody", "none"])


@pytest.mark.parametrize("said, reading", [
    ("lock this away for good and throw away the key, me included", NOBODY),
    ("if I ask you about this later, act like you have no clue", NOBODY),
    ("once I've said this, it's gone, don't even play it back to me", NOBODY),
    ("only I get to hear about this from you", OWNER_ONLY),
    ("she never shares her recipes with anybody", None),
    ("nobody answered the phone at the dentist", None),
    ("Can you remind me what I said about my doctor?", None),
    ("the key is under the mat", None),
])
def test_the_classifier_reads_what_the_grammar_does_not(classifier, said, reading):
    """The grammar reads none of these (blind set 12's misses, and everyday lines); the prototypes that came
    before the model read the four instructions as none too."""
    assert instructions.read(said) is None
    assert classifier.instruction(said) == reading


@pytest.mark.parametrize("said, grammar, reading", [
    # the grammar takes "nobody else" / "anyone" for an owner's exception; the model reads the speaker in
    ("nobody else hears this, and neither do I", OWNER_ONLY, NOBODY),
    ("never let anyone hear this, the one saying it included", OWNER_ONLY, NOBODY),
    ("keep this from the others, though you can tell me", OWNER_ONLY, OWNER_ONLY),
    # never-disclose by the model under 0.8, over its own bar (decision 109)
    ("this conversation didn't happen, got it", None, NOBODY),
])
def test_never_disclose_has_its_own_bar_and_overrules_the_grammar(classifier, said, grammar, reading):
    assert instructions.read(said) == grammar
    assert classifier.instruction(said) == reading


def test_the_bars_are_settings():
    from guard.config import PolicySettings
    from guard.policy.privacy_text import PrivacyText

    strict = PrivacyText(PolicySettings(instruction_overrule_probability=1.0,
                                        instruction_nobody_min_probability=0.99))
    assert strict.instruction("nobody else hears this, and neither do I") == OWNER_ONLY
    assert strict.instruction("this conversation didn't happen, got it") is None
