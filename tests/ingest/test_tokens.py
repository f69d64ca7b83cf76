"""Token estimates: close to a real BPE count, and truncation that respects the budget. (Their speed
is part of benchmarks/offline_speed.py's chunks per CPU second: a wall-clock bound in a test fails on a
busy machine.)"""

from compendium.tokens import count_tokens, truncate_to_tokens

# Counts of cl100k_base for these texts, measured once with a real tokenizer.
PROSE = (
    "The Compendium compiler reads a folder of documents and writes a wiki. Every sentence "
    "of every page cites the passage it came from, so a reader can check it."
)
CODE = "def read(path):\n    with open(path) as handle:\n        return handle.read()\n"


def test_empty_text_has_no_tokens():
    assert count_tokens("") == 0
    assert truncate_to_tokens("", 10) == ""


def test_estimate_is_near_a_bpe_count():
    # cl100k_base: 34 tokens for PROSE, 17 for CODE.
    assert abs(count_tokens(PROSE) - 34) <= 4
    assert abs(count_tokens(CODE) - 17) <= 4


def test_more_text_means_more_tokens():
    assert count_tokens(PROSE * 10) > 9 * count_tokens(PROSE)
    assert count_tokens("internationalisation") > count_tokens("nation")


def test_non_ascii_text_costs_tokens():
    assert count_tokens("知识库编译器将文档转换为维基页面") >= 12


def test_truncate_respects_budget_and_cuts_at_a_space():
    text = PROSE * 20
    for budget in (1, 5, 17, 100, 333):
        out = truncate_to_tokens(text, budget)
        assert count_tokens(out) <= budget
        assert text.startswith(out)
        assert not out or text[len(out)] in " \n." or out[-1] in "."
    assert truncate_to_tokens(PROSE, 1000) == PROSE
    assert truncate_to_tokens(PROSE, 0) == ""


def test_truncate_of_text_without_spaces_still_fills_the_budget():
    text = "x" * 10000
    out = truncate_to_tokens(text, 50)
    assert 0 < count_tokens(out) <= 50
    assert len(out) > 100


def _count_with_padding(text: str) -> int:
    """count_tokens as first written: the translated texts copied behind a space."""
    from compendium import tokens as t

    if not text:
        return 0
    raw = text.encode("utf-8", "surrogatepass")
    words, numbers = b" " + raw.translate(t._AS_WORDS), b" " + raw.translate(t._AS_NUMBERS)
    estimate = (
        t._PER_WORD * words.count(b" a") + t._PER_LONG_WORD_PART[0] * words.count(b"a" * 10)
        + t._PER_LONG_WORD_PART[1] * words.count(b"a" * 14) + t._PER_NUMBER * numbers.count(b" 0")
        + t._PER_MARK * len(raw.translate(None, t._NOT_PUNCTUATION)) + t._PER_LINE * raw.count(b"\n")
        + t._PER_INDENT * raw.count(b"\n  ")
    )
    if not raw.isascii():
        estimate += len(raw.translate(None, t._NOT_UTF8_LEAD))
    return max(1, round(estimate))


def test_count_matches_the_padded_count_on_random_text():
    import random

    rng = random.Random(15)
    alphabet = "ab Z09 \n\t.,-_é知\U0001f600"
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert count_tokens(text) == _count_with_padding(text), repr(text)
    for text in (PROSE, CODE, "a" * 30, "1" * 30, "x1y2"):
        assert count_tokens(text) == _count_with_padding(text)
