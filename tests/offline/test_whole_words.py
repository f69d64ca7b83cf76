"""Whole-word search by str.find finds exactly what the regular expressions it replaces find."""

from __future__ import annotations

import random
import re
import string
import sys

import pytest

from compendium.engines.offline.whole_words import (
    caseless,
    count_code,
    count_words,
    has_word,
    inside_sentence,
)

# Characters around and inside the searched words that the boundaries care about: word
# characters of every kind (non-ASCII letters, digits, numerals), hyphens, spaces of every kind,
# sentence ends, brackets, quotes and backticks.
_ALPHABET = [*"abeisyxIYS-_ `()\t\n.!?:\"'“,0", "é", "É", "Σ", "\u00a0", "\u2028", "²", "Ⅳ", "٣", "ſ", "K", "ı", "İ"]
_WORDS = ["index", "class", "entry", "key", "a-b", "open()", "logical replication", "Lock", "Es"]


def _texts(rng: random.Random, word: str, count: int = 3000):
    pieces = [word, word + "s", word + "es", word[:-1] + "ies", word.upper(), word[:-1]]
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(0, 8)):
            if rng.random() < 0.5:
                parts.append(rng.choice(pieces))
            else:
                parts.append("".join(rng.choices(_ALPHABET, k=rng.randint(0, 3))))
        yield "".join(parts)


def test_word_characters_and_spaces_are_what_the_regex_engine_takes_them_for():
    word, space = re.compile(r"\w"), re.compile(r"\s")
    for code in range(sys.maxunicode + 1):
        c = chr(code)
        assert bool(word.match(c)) == (c.isalnum() or c == "_"), hex(code)
        assert bool(space.match(c)) == c.isspace(), hex(code)


def test_caseless_text_keeps_positions_word_characters_and_caseless_matches():
    word = re.compile(r"[\w-]")
    others = []
    for code in range(sys.maxunicode + 1):
        c = chr(code)
        lowered = caseless(c)
        if lowered is None:
            continue
        assert len(lowered) == 1 and bool(word.match(lowered)) == bool(word.match(c)), hex(code)
        assert code < 128 or not lowered.isascii(), hex(code)
        if code >= 128 and not 0xD800 <= code < 0xE000:
            others.append(c)
    others = "".join(others)
    for letter in string.ascii_letters:
        assert not re.findall(letter, others, re.IGNORECASE), letter


@pytest.mark.parametrize(
    ("count", "shape", "seed", "shown"),
    [
        (count_words, r"(?<![\w-]){}(?![\w-])", 1, "{}"),  # whole words
        (count_code, r"`{}(?:\(\))?`", 2, "`{}()`"),  # inline code
    ],
)
def test_counts_match_findall(count, shape, seed, shown):
    rng = random.Random(seed)
    for word in _WORDS:
        for stem, endings in ((word, ("s", "es", "")), (word[:-1], ("y", "ies"))):
            pattern = re.compile(shape.format(f"{re.escape(stem)}(?:{'|'.join(map(re.escape, endings))})"))
            caseless_pattern = re.compile(pattern.pattern, re.IGNORECASE)
            for text in _texts(rng, shown.format(word)):
                assert count(text, stem, endings) == len(pattern.findall(text)), (text, stem)
                lowered = caseless(text)
                if lowered is not None:
                    found = count(lowered, stem.lower(), endings)
                    assert found == len(caseless_pattern.findall(text)), (text, stem)


def test_has_word_matches_search():
    rng = random.Random(3)
    for word in _WORDS:
        pattern = re.compile(rf"(?<![\w-]){re.escape(word)}(?![\w-])")
        for text in _texts(rng, word):
            assert has_word(text, word) == bool(pattern.search(text)), (text, word)


def test_inside_sentence_matches_search():
    rng = random.Random(4)
    for word in [w for w in _WORDS if re.match(r".*\w$", w)]:
        w = re.escape(word)
        pattern = re.compile(rf"(?<=[^\s.!?:]\s){w}\b|(?<=[(\"'“]){w}\b")
        for text in _texts(rng, word):
            assert inside_sentence(text, word) == bool(pattern.search(text)), (text, word)
