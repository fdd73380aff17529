"""Answer extraction: at least as robust as the official rule, and no worse on option texts."""
import pytest

from guard.policy.answer import extract_letter, idk_index

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
