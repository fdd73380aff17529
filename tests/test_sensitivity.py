"""Tier 3: what is private without an instruction (sensitivity), and a suite told the user's own
statements. Everyday talk must stay sayable to the household; a statement that says it is kept from
someone is private whatever its topic."""
from __future__ import annotations

import pytest

from guard.policy.instructions import normalise
from guard.policy.privacy_text import SECRECY


@pytest.mark.parametrize("said, private", [
    # everyday talk that is personal but harmless (toilet roll, swimming, gym read private before decision 97)
    ("I'm heating up some soup for lunch", False),
    ("we need to buy toilet roll", False),
    ("my son has swimming lessons on Wednesdays", False),
    ("I put a wash on this morning", False),
    ("I'm off to the gym after work", False),
    ("the plumber is coming at nine", False),
    ("the car needs an MOT next month", False),            # these three read private before decision 98
    ("the new cafe on the corner does good cake", False),
    ("I need to pick up a prescription for the dog's flea treatment", False),
    # private, by topic
    ("I've been diagnosed with breast cancer", True),
    ("I owe my brother ten thousand pounds", True),
    ("I'm going to leave my wife", True),
    ("I'm being sacked at the end of the month", True),
    # private because it says so: kept from someone (harmless topic otherwise)
    ("I bought a dog and my husband doesn't know yet", True),
    ("I've been learning the piano behind my mum's back", True),
])
def test_everyday_talk_is_public_and_secrets_are_private(classifier, said, private):
    assert classifier.sensitivity(said).private is private


@pytest.mark.parametrize("said, cue", [
    ("my sister has no idea", True),
    ("nobody knows about it", True),
    ("I haven't told my parents", True),
    ("don't let on, but we got a puppy", True),
    ("I don't know what to cook tonight", False),      # the speaker's own not-knowing
    ("I have no idea where my keys are", False),
    ("nobody knows when the bus comes", False),        # a clause follows: not "nobody knows (it)"
    ("the kids don't know how to swim", False),
])
def test_secrecy_cues(said, cue):
    assert bool(SECRECY.search(normalise(said))) is cue


def test_a_suite_can_tell_the_user_s_own_statements(tmp_path):
    """`guard bench generate voxprivacy --secrets FILE`: categories and controls are read."""
    from guard.bench.gen_voxprivacy import statements

    good = tmp_path / "mine.yaml"
    good.write_text("health:\n  - [my knee needs surgery, surgery, my knee]\n"
                    "control:\n  - [the shop opens at ten, shop, the shop]\n")
    assert statements(good) == ({"health": [("my knee needs surgery", "surgery", "my knee")]},
                                [("the shop opens at ten", "shop", "the shop")])


@pytest.mark.parametrize("content, reason", [
    ("health:\n  - [my knee needs surgery, surgery, my knee]\n", "control"),
    ("health:\n  - [my knee needs surgery, operation, my knee]\ncontrol:\n  - [the shop opens, shop, it]\n",
     "key in the statement"),      # the judge looks for the key in answers
    ("health: [unclosed\n", "not YAML"),
])
def test_a_statements_file_that_cannot_be_told_is_refused_with_the_reason(tmp_path, content, reason):
    from guard.bench.gen_voxprivacy import statements

    mine = tmp_path / "mine.yaml"
    mine.write_text(content)
    with pytest.raises(ValueError, match=reason):
        statements(mine)
