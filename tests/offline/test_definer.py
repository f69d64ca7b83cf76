"""Definer's quick refusals (first letter, then every name at once) answer as the full check does."""

from __future__ import annotations

import random

from compendium.engines.offline.definitions import _ARTICLE, STRONG, Definer


def _defines_in_full(names: list[str], text: str) -> bool:
    """Definer.defines as first written: every name tried in turn."""
    lower = text.lower()
    start = _ARTICLE.match(lower)
    at = start.end() if start else 0
    for n in (n for n in (name.strip().lower() for name in names) if n):
        if not lower.startswith(n, at):
            continue
        end = at + len(n)
        if lower[end : end + 1] in ("`", "*", '"', "'"):
            end += 1
        if STRONG.match(text[end:]):
            return True
    return False


def test_quick_refusals_agree_with_the_full_check_on_random_text():
    rng = random.Random(15)
    pieces = ["The ", "the ", "A ", "an ", "`", "*", '"', "'", "WAL", "wal", "İstanbul", "Σ", "is a ", "is the ",
              " refers to ", " — does ", ", short for x", " (x)", "Buffer", "buffer pool", " ", "\t", "x", ""]
    for _ in range(5000):
        names = [rng.choice(["WAL", "İstanbul", "buffer pool", " Buffer ", "", "Σ", "`json`", "a"])
                 for _ in range(rng.randint(0, 3))]
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 6)))
        assert Definer(names).defines(text) == _defines_in_full(names, text), (names, text)


def test_a_definition_is_still_found():
    assert Definer(["WAL", "write-ahead log"]).defines("The write-ahead log is a file of changes.")
    assert not Definer(["WAL"]).defines("Pages are written to the WAL.")
