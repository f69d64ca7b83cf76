"""A term defined in one chunk is found in the claims of every other chunk that are about it: the
claims opening with it (after an article or determiner), as a whole word. A claim that only
mentions the term stays with its own subject."""

import re
from collections import Counter

from compendium.phases.common_words import word_counts
from compendium.phases.term_mentions import claim_words, is_term, lowercase_counts, term_claims
from compendium.storage.records import Claim


def test_claims_whose_subject_is_a_defined_term_belong_to_it():
    claims = [
        Claim(id="c1", text="A checkpoint is a point in the WAL sequence.", chunk_id="k1"),
        Claim(id="c2", text="Checkpoints are spaced by checkpoint_timeout.", chunk_id="k2"),
        Claim(id="c3", text="The checkpointer process writes dirty pages.", chunk_id="k3"),
        Claim(id="c4", text="After a checkpoint, old WAL segments are recycled.", chunk_id="k4"),
    ]
    found = term_claims({0: ["checkpoint"]}, claims)
    # c2 says "Checkpoints" (a plural); "checkpointer" is another name; c4 only mentions one
    assert [c.id for c in found[0]] == ["c1", "c2"]


def test_only_plain_lowercase_terms_are_looked_up():
    assert is_term("checkpoint") and is_term("logical replication")
    for name in ("WAL", "max_wal_size", "open()", "a", "the write ahead log sequence", "Checkpoint"):
        assert not is_term(name), name


def test_plurals_in_es_and_ies_are_mentions_of_the_term():
    claims = [
        Claim(id="c1", text="Indexes speed up lookups on large tables.", chunk_id="k1"),
        Claim(id="c2", text="Background processes share memory with the server.", chunk_id="k2"),
        Claim(id="c3", text="Dictionaries map keys to values.", chunk_id="k3"),
        Claim(id="c4", text="An indexer is another thing.", chunk_id="k4"),
    ]
    found = term_claims({0: ["index"], 1: ["background process"], 2: ["dictionary"]}, claims)
    assert [c.id for c in found[0]] == ["c1"]
    assert [c.id for c in found[1]] == ["c2"]
    assert [c.id for c in found[2]] == ["c3"]


def test_an_enum_value_written_as_code_gathers_only_the_claims_writing_it_as_code():
    claims = [
        Claim(id="c1", text="`current` recovers along the timeline that was current then.", chunk_id="k1"),
        Claim(id="c2", text="Current transactions end with `commit`.", chunk_id="k2"),
        Claim(id="c3", text="The current row starts the window frame.", chunk_id="k3"),
        Claim(id="c4", text="`current` stays on the timeline that was current.", chunk_id="k4"),
    ]
    assert [c.id for c in term_claims({0: ["current"]}, claims, code_only={0})[0]] == ["c1", "c4"]
    # a defined term (not code-only) opens its claims wherever written as a word
    assert [c.id for c in term_claims({0: ["current"]}, claims)[0]] == ["c1", "c2", "c3", "c4"]


def test_a_word_only_ever_written_as_code_keeps_its_plain_mentions():
    claims = [
        Claim(id="c1", text="The `asyncio` module runs coroutines.", chunk_id="k1"),
        Claim(id="c2", text="asyncio serves the network too.", chunk_id="k2"),
    ]
    assert [c.id for c in term_claims({0: ["asyncio"]}, claims, code_only={0})[0]] == ["c1", "c2"]



def test_lowercase_word_counts_from_the_words_as_written_are_those_of_the_lowered_text():
    texts = [
        "Checkpoints don't wait; a CHECKPOINT's cost is rock-'n'-roll -- write-ahead logs.",
        "Émigré naïve café: Straße, 3-d, x--y, -leading and trailing- hyphens, über",
        "The \u212aelvin sign and \u0130stanbul lower to ASCII letters.",  # the two characters that do
    ]
    for claims in (texts[:2], texts):
        text = "\n".join(claims)
        # every occurrence of each word claim_words finds in each claim
        expected = Counter(w for t in claims for w in re.findall(r"[a-z][a-z-]*", t.lower()))
        assert set(expected) == set().union(*map(claim_words, claims))
        assert lowercase_counts(text, word_counts(text)) == expected
    assert lowercase_counts(texts[2], word_counts(texts[2]))["kelvin"] == 1


def test_a_term_is_found_in_every_claim_opening_with_it_whatever_comes_after():
    texts = ["Checkpoint first.", "İİ no term here.", "A checkpoint, and another checkpoint.", "None.",
             "Ends with checkpoints", "Checkpoints"]
    claims = [Claim(id=f"c{i}", text=t, chunk_id=f"k{i}") for i, t in enumerate(texts)]
    found = term_claims({0: ["checkpoint"]}, claims)
    assert [c.id for c in found[0]] == ["c0", "c2", "c5"]


def test_a_terms_claims_do_not_depend_on_how_many_other_terms_are_looked_up():
    claims = [
        Claim(id="c1", text="Indexes speed up lookups; an indexer is another thing.", chunk_id="k1"),
        Claim(id="c2", text="A checkpoint-like marker is not a checkpoint2 either.", chunk_id="k2"),
        Claim(id="c3", text="A checkpoint rebuilds the index.", chunk_id="k3"),
        Claim(id="c4", text="Background processes write `index` pages.", chunk_id="k4"),
    ]
    alone = term_claims({0: ["index"], 1: ["checkpoint"], 2: ["background process"]}, claims)
    # forty more terms: past the point where every claim is split into words instead of searched
    others = {k: [f"term{chr(97 + k % 26)}{chr(97 + k // 26)}"] for k in range(3, 43)}
    together = term_claims({0: ["index"], 1: ["checkpoint"], 2: ["background process"], **others}, claims)
    assert {k: [c.id for c in v] for k, v in together.items()} == {k: [c.id for c in v] for k, v in alone.items()}
    assert [c.id for c in alone[0]] == ["c1"] and [c.id for c in alone[1]] == ["c3"]
    assert [c.id for c in alone[2]] == ["c4"]
