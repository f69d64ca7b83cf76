"""A term defined in one chunk is found in the claims of every other chunk, as a whole word."""

from compendium.phases.term_mentions import is_term, term_claims
from compendium.storage.records import Claim


def test_claims_naming_a_defined_term_anywhere_belong_to_it():
    claims = [
        Claim(id="c1", text="A checkpoint is a point in the WAL sequence.", chunk_id="k1"),
        Claim(id="c2", text="Checkpoints are spaced by checkpoint_timeout.", chunk_id="k2"),
        Claim(id="c3", text="The checkpointer process writes dirty pages.", chunk_id="k3"),
        Claim(id="c4", text="After a checkpoint, old WAL segments are recycled.", chunk_id="k4"),
    ]
    found = term_claims({0: ["checkpoint"]}, claims)
    # c2 says "Checkpoints" (a plural); "checkpoint_timeout" and "checkpointer" are other names
    assert [c.id for c in found[0]] == ["c1", "c2", "c4"]


def test_only_plain_lowercase_terms_are_looked_up():
    assert is_term("checkpoint") and is_term("logical replication")
    for name in ("WAL", "max_wal_size", "open()", "a", "the write ahead log sequence", "Checkpoint"):
        assert not is_term(name), name
