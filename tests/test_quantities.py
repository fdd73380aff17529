"""Quantities said in other units name the option that says them (guard.quantities, decision 131)."""
from __future__ import annotations

import pytest

from guard.quantities import quantity, said, with_equivalents

LEASE = ["Six months", "Two months", "One year", "Four months", "Three weeks",
         "I do not have the information to answer the question"]
MONEY = ["Nineteen pounds", "Fifty pounds", "Nothing at all", "A hundred pounds", "Five pounds"]


@pytest.mark.parametrize("heard, options, out", [
    ("we only have half a year left", LEASE, "we only have half a year six months left"),
    ("we have to be out in eight weeks", LEASE, "we have to be out in eight weeks two months"),
    ("another twelve months here", LEASE, "another twelve months one year here"),
    ("we must leave in about twenty days", LEASE, "we must leave in about twenty days three weeks"),
    ("all i had was a fiver", MONEY, "all i had was a fiver five pounds"),
    ("there was just nineteen quid left", MONEY, "there was just nineteen quid nineteen pounds left"),
])
def test_a_quantity_said_in_other_units_is_followed_by_the_option(heard, options, out):
    assert with_equivalents(heard, options) == out


@pytest.mark.parametrize("heard", [
    "it runs out in four months",                # the option's own words: nothing to add
    "we must leave before the end of the month",  # no number: not a length
    "a couple of weeks",                          # 14 days: nearest "Three weeks" is 50 % longer
    "i practise once a week",                     # 7 days: no option near it
    "i water the plants every twenty days",       # how often, not how long (RATE)
    "it cost five dollars",                       # another measure
])
def test_nothing_is_added_where_no_option_is_that_quantity(heard):
    assert with_equivalents(heard, LEASE) == heard


def test_a_sum_in_another_currency_is_not_the_option():
    assert with_equivalents("it was nineteen dollars", MONEY) == "it was nineteen dollars"
    assert with_equivalents("it was nineteen bucks", ["Nineteen dollars", "Five dollars"]) == \
        "it was nineteen bucks nineteen dollars"


def test_how_often_is_not_a_length():
    assert with_equivalents("we meet twice a month", ["Four weeks", "One year"]) == "we meet twice a month"
    assert with_equivalents("we met for a month", ["Four weeks", "One year"]) == "we met for a month four weeks"


def test_options_that_are_not_quantities_leave_the_transcript_alone():
    assert with_equivalents("we have eight weeks", ["Monday", "Two months late", "Blue"]) == "we have eight weeks"


def test_quantities_parse_numbers_halves_and_units():
    assert quantity("Half a year") == ("time", pytest.approx(365.25 / 2))
    assert quantity("90 minutes") == ("time", pytest.approx(90 / 1440))
    assert quantity("Twenty one days") == ("time", 21)
    assert quantity("Two hundred and fifty pounds") == ("pound", 250)
    assert quantity("Two hundred fifty dollars") == ("dollar", 250)
    assert quantity("Two grand") == ("money", 2000)
    assert quantity("Three weeks late") is None and quantity("Monday") is None
    heard = "two and a half years or a year and a half"
    assert [d for _, _, _, d in said(heard.split(" "))] == pytest.approx([2.5 * 365.25, 1.5 * 365.25])
