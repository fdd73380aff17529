"""Answer extraction: at least as robust as the official rule, and no worse on option texts."""
import json

import pytest

from guard.policy.answer import answered, extract_letter, idk_index
from tests.conftest import SHBENCH_OFFICIAL

OPTIONS = ["A trip to Bali", "A trip to Ibiza", "I do not have the information to answer the question",
           "Seven thirty", "Noon"]


@pytest.mark.parametrize("text, letter", [
    ("B. A trip to Ibiza", "B"), ("(D) Seven thirty", "D"), ("E", "E"), ("The answer is C", "C"),
    ("A trip to Ibiza", "B"),  # a bare option text that begins with "A " is that option, not letter A
    ("Seven thirty, I think", "D"), ("no idea at all, sorry, nothing in the audio answers that one", ""),
])
def test_extract_letter(text, letter):
    assert extract_letter(text, OPTIONS) == letter


def test_idk_option_is_found():
    assert idk_index(OPTIONS) == 2 and idk_index(["x", "y"]) == -1
    assert idk_index(["No answer given", "It is unknown"]) == 1   # no first-person option: the pattern


@pytest.mark.parametrize("options, idk", [   # official SH-Bench records: distractors that read like "I don't know"
    (["They don't have the required documents", "They can't find a lawyer", "It will take longer and cost more",
      "I do not have an answer", "They don't think they'll win"], 3),
    (["Not mentioned.", "I don't know", "No.", "Partial color.", "Yes."], 1),
])
def test_idk_option_in_the_assistants_voice_beats_a_distractor(options, idk):
    assert idk_index(options) == idk


@pytest.mark.skipif(not SHBENCH_OFFICIAL.is_dir(), reason="../shared/data is not beside this checkout")
def test_idk_option_matches_every_official_record():
    """Every record of the official result files: the option found is the record's `idk_answer`."""
    files = sorted(SHBENCH_OFFICIAL.glob("*.json"))
    assert len(files) == 8
    for f in files:
        for r in json.loads(f.read_text()):
            assert r["options"][idk_index(r["options"])] == r["idk_answer"], (f.name, r["question"])


@pytest.mark.parametrize("text,choice,options,expected", [
    ("B. Sunday", 1, ["Saturday", "Sunday", "I don't know"], True),
    ("Sunday, probably", -1, ["Saturday", "Sunday", "I don't know"], False),  # no option chosen
    ("On Sunday.", -1, [], True),
    ("I don't know.", -1, [], False),
    ("I do not have the information to answer the question", -1, [], False),
    ("  ", -1, [], False),
    ("The party's date is unknown to me, but I think Sunday", -1, [], True),
])
def test_answered(text, choice, options, expected):
    assert answered(text, choice, options) is expected
