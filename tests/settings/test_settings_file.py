"""The settings file's own check (no pydantic) accepts only what pydantic's models, made from the
same table, accept, and gives the same values."""

from __future__ import annotations

import itertools

import pytest
from pydantic import ValidationError

from compendium.settings_file import KEYS, checked, file_model

SAMPLES = [None, "", "x", "  ", "x" * 201, "gpt-4o", "OPENAI_KEY", "1BAD", "KEY\n", "redis://h:6379/0",
           "http://h", "json_schema", "chat", "5", "0.5", "true", 0, 1, 15, 16, 512, 2.5, -1, 0.0,
           float("inf"), float("nan"), True, False, [], {}, ["x"]]


def pydantic_says(data):
    try:
        return file_model(data).model_validate(data).model_dump(exclude_none=True)
    except ValidationError:
        return "rejected"


@pytest.mark.parametrize("section", list(KEYS))
def test_every_value_the_check_accepts_pydantic_accepts_alike(section):
    for key, value in itertools.product(KEYS[section], SAMPLES):
        data = {section: {key: value}} if section else {key: value}
        ours = checked(data)
        if ours is not None:  # None: pydantic converts or judges it
            theirs = pydantic_says(data)
            assert ours == theirs and [type(v) for v in _leaves(ours)] == [type(v) for v in _leaves(theirs)], (data, ours, theirs)


def test_what_pydantic_must_convert_or_judge_is_left_to_it():
    assert checked({"llm": {"timeout": "30"}}) is None  # from the environment: a string
    assert checked({"token_budget": 0}) is None  # out of bounds: pydantic's words say so
    assert checked({"llm": {"modle": "x"}}) is None  # an unknown key
    assert checked({"groups": [{"template": "wiki"}]}) is None
    assert checked({"llm": "gpt-4o"}) is None
    assert checked({"knowledge_base": "default", "default_template": "wiki"}) == {
        "knowledge_base": "default", "default_template": "wiki"}
    assert checked({"llm": {"timeout": 30, "hedge": False, "model": None}}) == {"llm": {"timeout": 30.0, "hedge": False}}


def _leaves(data):
    for value in data.values():
        yield from (_leaves(value) if isinstance(value, dict) else [value])
