"""JSON text through orjson reads and writes what the standard library did."""

from __future__ import annotations

import json
import math
import random

import pytest

from compendium import json_text


def _value(rng: random.Random, depth: int = 0):
    kind = rng.randrange(8 if depth < 3 else 5)
    if kind == 0:
        return rng.randrange(-(10**12), 10**12)
    if kind == 1:
        return rng.random() * 10 ** rng.randrange(-8, 20)
    if kind == 2:
        pool = [rng.randrange(32, 127), rng.randrange(0, 32), rng.randrange(128, 0x3000), 0x1F600]
        return "".join(chr(rng.choice(pool)) for _ in range(rng.randrange(6)))
    if kind == 3:
        return rng.choice([True, False, None])
    if kind == 4:
        return ""
    if kind == 5:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    if kind == 6:
        return {str(_value(rng, 5)): _value(rng, depth + 1) for _ in range(rng.randrange(4))}
    return (_value(rng, depth + 1),)


def test_text_it_writes_reads_back_equal_with_either_library():
    text = json_text.JsonText()
    rng = random.Random(7)
    for _ in range(3000):
        value = _value(rng)
        written = text.dumps(value)
        assert json.loads(written) == json_text.loads(written) == json.loads(json.dumps(value))


def test_text_the_standard_library_wrote_before_still_reads():
    old = json.dumps({"nan": math.nan, "inf": math.inf, "big": 2**80, "s": "\ud800"})
    back = json_text.loads(old)
    assert math.isnan(back["nan"]) and back["inf"] == math.inf and back["big"] == 2**80 and back["s"] == "\ud800"


def test_what_neither_library_can_write_is_a_type_error_naming_the_type():
    with pytest.raises(TypeError, match="object"):
        json_text.JsonText().dumps({"x": object()})


def test_not_json_is_a_value_error():
    with pytest.raises(ValueError):
        json_text.loads(b"<html>busy</html>")


def test_a_record_is_written_as_its_fields_whichever_library_writes_it():
    import numpy as np

    from compendium.errors import StoreError
    from compendium.storage import codec
    from compendium.storage.records import Claim, Extract

    plain = Extract(id="x", chunk_id="c", entities=[{"name": "WAL", "score": np.float32(0.5)}], claims=[])
    odd = Claim(id="y", text="lone \ud800 surrogate", chunk_id="c", entity_ids=[2**80])
    for record in (plain, odd):
        assert json.loads(codec.encode_data(record)) == json.loads(json.dumps(record.to_dict(), default=float))
        assert list(json.loads(codec.encode_data(record))) == list(record.to_dict())
    with pytest.raises(StoreError, match=r"claim 'z'.*object"):
        codec.encode_data(Claim(id="z", text="t", chunk_id="c", entity_ids=[object()]))
