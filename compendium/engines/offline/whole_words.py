"""Whole words found by plain string search, where a regular expression per word cost more to
compile than all its searches (thousands of words, each searched in a few claims).

Each function finds what the regular expression in its docstring finds (tests/offline/
test_whole_words.py checks them against it on random text). A word character is what `\\w`
matches in a str pattern: a letter, digit or numeral, or "_".
"""

from __future__ import annotations

from collections.abc import Callable


def _free(text: str, at: int) -> bool:
    """No word character or hyphen at text[at] (or none at all: `at` is outside the text)."""
    if at < 0 or at >= len(text):
        return True
    c = text[at]
    return not (c.isalnum() or c == "_" or c == "-")


def _count(text: str, opening: str, end_of: Callable[[int], int]) -> int:
    """Non-overlapping matches starting with `opening`, as re.findall counts them: `end_of(at)`
    is where the match found at `at` ends, or -1 when none starts there."""
    count = 0
    at = text.find(opening)
    while at >= 0:
        end = end_of(at)
        if end < 0:
            at = text.find(opening, at + 1)
        else:
            count += 1
            at = text.find(opening, end)
    return count


def count_words(text: str, stem: str, endings: tuple[str, ...]) -> int:
    """len(re.findall(rf"(?<![\\w-]){stem}(?:{'|'.join(endings)})(?![\\w-])", text)) for a
    non-empty `stem` and endings in that order (stem and endings taken literally, "" for none)."""
    size = len(stem)

    def end_of(at: int) -> int:
        if _free(text, at - 1):
            after = at + size
            for ending in endings:
                if text.startswith(ending, after) and _free(text, after + len(ending)):
                    return after + len(ending)
        return -1

    return _count(text, stem, end_of)


def count_code(text: str, stem: str, endings: tuple[str, ...]) -> int:
    """len(re.findall(rf"`{stem}(?:{'|'.join(endings)})(?:\\(\\))?`", text)), stem and endings
    taken literally ("" for none), in that order."""
    opening = "`" + stem
    size = len(opening)

    def end_of(at: int) -> int:
        after = at + size
        for ending in endings:
            if text.startswith(ending, after):
                close = after + len(ending)
                if text.startswith("()`", close):
                    return close + 3
                if text.startswith("`", close):
                    return close + 1
        return -1

    return _count(text, opening, end_of)


def has_word(text: str, word: str) -> bool:
    """bool(re.search(rf"(?<![\\w-]){re.escape(word)}(?![\\w-])", text)) for a non-empty word."""
    size = len(word)
    at = text.find(word)
    while at >= 0:
        if _free(text, at - 1) and _free(text, at + size):
            return True
        at = text.find(word, at + 1)
    return False


def inside_sentence(text: str, word: str) -> bool:
    """bool(re.search(rf"(?<=[^\\s.!?:]\\s){w}\\b|(?<=[(\\"'“]){w}\\b", text)) with w =
    re.escape(word), for a word ending in a word character: the word written after a space
    that follows no sentence end, or after an opening bracket or quote."""
    size = len(word)
    at = text.find(word)
    while at >= 0:
        end = at + size
        if end >= len(text) or not (text[end].isalnum() or text[end] == "_"):
            if at >= 1 and text[at - 1] in "(\"'“":
                return True
            if at >= 2 and text[at - 1].isspace() and not (text[at - 2].isspace() or text[at - 2] in ".!?:"):
                return True
        at = text.find(word, at + 1)
    return False


# The only characters that an ASCII letter in a case-ignoring pattern matches besides its own
# two cases (capital I with dot, dotless i, long s, Kelvin sign); U+0130 is also the only one
# whose lowercase is longer than itself.
_FOLDING_TO_ASCII = ("\u0130", "\u0131", "\u017f", "\u212a")


def caseless(text: str) -> str | None:
    """The text lowercased, in which an ASCII word, lowercased, is found where re.IGNORECASE
    finds it in the text, at the same positions, with the same word characters around it; None
    when the text holds one of the characters for which that is not so."""
    if not text.isascii() and any(c in text for c in _FOLDING_TO_ASCII):
        return None
    return text.lower()
