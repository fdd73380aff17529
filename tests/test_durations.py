"""Lengths of time said in other units name the option that says them (guard.durations, decision 131)."""
from __future__ import annotations

import pytest

from guard.durations import length, said, with_equivalents

LEASE = ["Six months", "Two months", "One year", "Four months", "Three weeks",
         "I do not have the information to answer the question"]


@pytest.mark.parametrize("heard, out", [
    ("we only have half a year left", "we only have half a year six months left"),
    ("we have to be out in eight weeks", "we have to be out in eight weeks two months"),
    ("another twelve months here", "another twelve months one year here"),
    ("we must leave in about twenty days", "we must leave in about twenty days three weeks"),
])
def test_a_length_said_in_other_units_is_followed_by_the_option(heard, out):
    assert with_equivalents(heard, LEASE) == out


@pytest.mark.parametrize("heard", [
    "it runs out in four months",                # the option's own words: nothing to add
    "we must leave before the end of the month",  # no number: not a length
    "a couple of weeks",                          # 14 days: nearest "Three weeks" is 50 % longer
    "i practise once a week",                     # 7 days: no option near it
    "i water the plants every twenty days",       # how often, not how long (RATE)
])
def test_nothing_is_added_where_no_option_is_that_length(heard):
    assert with_equivalents(heard, LEASE) == heard


def test_how_often_is_not_a_length():
    assert with_equivalents("we meet twice a month", ["Four weeks", "One year"]) == "we meet twice a month"
    assert with_equivalents("we met for a month", ["Four weeks", "One year"]) == "we met for a month four weeks"


def test_options_that_are_not_lengths_leave_the_transcript_alone():
    assert with_equivalents("we have eight weeks", ["Monday", "Two months late", "Blue"]) == "we have eight weeks"


def test_lengths_parse_numbers_halves_and_units():
    assert length("Half a year") == pytest.approx(365.25 / 2)
    assert length("90 minutes") == pytest.approx(90 / 1440)
    assert length("Twenty one days") == 21
    assert length("Three weeks late") is None and length("Monday") is None
    heard = "two and a half years or a year and a half"
    assert [d for _, _, d in said(heard.split(" "))] == pytest.approx([2.5 * 365.25, 1.5 * 365.25])
