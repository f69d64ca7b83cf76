"""Fingerprints hash the canonical JSON text, however it is produced: a stored key never moves."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
import xxhash
from pydantic import BaseModel

from compendium.fingerprint import canonical_json, fingerprint, short_id

from .test_json_text import _value


def _reference(*parts):
    return xxhash.xxh3_128_hexdigest(canonical_json(parts).encode("utf-8"))


class _Reply(BaseModel):
    name: str
    score: float


def test_fingerprints_equal_the_hash_of_the_canonical_text():
    rng = random.Random(11)
    values = [_value(rng) for _ in range(5000)]
    for exponent in range(-320, 308, 3):  # floats Python writes with and without an exponent
        values.append([1.5 * 10.0**exponent, -(10.0**exponent)])
    values += [{2: "int key", 1: "first"}, 2**70, {"s": {3, 1, 2}}, np.arange(3, dtype=np.float32) / 7,
               _Reply(name="x", score=1e-7), "string 1e5 and 0.00001 that looks numeric", math.pi,
               [math.nan, None], {"x": math.inf}, -math.inf, ["9e6f0a", 2.5, "null"], ["0e12", 1e-9],
               np.float64(0.25), [-0.0, 0.0, 1e-4, 9999999999999998.0, 1e16],
               {"text": "long " * 200, "f": 1e-9}, ["words " * 300, math.nan], ["a 1e5 text " * 100, 0.5]]
    for value in values:
        assert fingerprint(value, "k") == _reference(value, "k")


def test_nan_is_not_fingerprinted_as_null():
    assert fingerprint(math.nan) != fingerprint(None)
    assert fingerprint([math.inf]) != fingerprint([None])


def test_known_fingerprints_do_not_change():
    # Written by the release before orjson: every cache key in a stored knowledge base depends on these.
    assert fingerprint("map", ["chunk text"], {"b": 1, "a": 0.5}) == "a6ded4c9b04ecb437726ddfbed4e3498"
    assert short_id("doc", "path/a.md") == "3142b10f9401a333"


def test_what_cannot_be_fingerprinted_names_its_type():
    with pytest.raises(TypeError, match="object"):
        fingerprint(object())
