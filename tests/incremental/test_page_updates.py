"""The pure parts of cheap page updates: sticky evidence, citation moves, mechanical removal, additions."""

from __future__ import annotations

import numpy as np

from compendium.engines.offline_embedder import OfflineEmbedder
from compendium.engines.tasks import EvidenceItem
from compendium.phases.citations import clean_page, insert_additions, recite
from compendium.phases.evidence import choose_evidence, evidence_key
from compendium.phases.evidence_packs import pack_delta, pack_value
from compendium.phases.resolution import Evidence, Mention, embedding_text


def claim(text: str, chunk: str, support: int = 1) -> EvidenceItem:
    return EvidenceItem(ref=0, text=text, chunk_id=chunk, document="Doc", support=support)


def test_a_full_pack_does_not_take_in_a_new_fact_or_backfill_old_ones():
    old = [claim(f"Fact number {i} is about the pool.", f"k{i}") for i in range(6)]
    first = choose_evidence(old, budget=60, count_tokens=lambda t: 10)  # room for 3 items (10 + 8 each)
    assert [e.chunk_id for e in first] == ["k0", "k1", "k2"]
    keep = {evidence_key(e) for e in first}
    offered = {evidence_key(e) for e in old}
    fresh = claim("A brand new fact about the pool.", "k9", support=5)  # better ranked than all
    ranked = [fresh, *old]
    # Full: nothing new gets in, the page keeps its evidence.
    again = choose_evidence(ranked, 60, lambda t: 10, keep=keep, offered=offered)
    assert [e.chunk_id for e in again] == ["k0", "k1", "k2"]
    # One of its items removed: the room goes to the new fact, not to k3..k5 passed over before.
    shrunk = choose_evidence([fresh, old[0], old[2], *old[3:]], 60, lambda t: 10, keep=keep, offered=offered)
    assert [e.chunk_id for e in shrunk] == ["k9", "k0", "k2"]
    assert [e.ref for e in shrunk] == [1, 2, 3]
    # A new page (no previous evidence) takes the best ranked.
    assert [e.chunk_id for e in choose_evidence(ranked, 60, lambda t: 10)] == ["k9", "k0", "k1"]


def test_the_same_sentence_in_a_new_chunk_is_the_same_evidence():
    assert evidence_key(claim("The Pool  evicts pages.", "a")) == evidence_key(claim("the pool evicts pages.", "b"))
    assert evidence_key(claim("The Pool evicts pages.", "a")) != evidence_key(claim("The Pool pins pages.", "a"))


def test_evidence_keys_are_the_ones_packs_were_stored_with():
    # A page's pack stores these keys: a key worked out differently would make every page
    # look as if its evidence had changed (values from the keys as first defined).
    def excerpt(text: str) -> EvidenceItem:
        return EvidenceItem(kind="excerpt", ref=0, text=text, chunk_id="k1", document="Guide",
                            heading_path=["Buffers", "Eviction"])

    stored = {
        "The pool evicts pages when it is full and a new page must be read, oldest first, and it never"
        " evicts a pinned page …": "70be94265a72c15b",
        "  Leading  spaces\tand tabs\nand a line break": "9d1fff57e7dd5b95",
        "trailing space ": "3ef8f38e9ca5cfff",
        "Few words.": "053f0fc0117bc8c5",
        "": "29aa22d2c75ecaf1",
        "   ": "ebce4b3163ab5980",
        "one two three four five six seven eight nine ten eleven twelve": "9b888f719ca1787d",
        " one two three four five six seven eight nine ten eleven twelve thirteen": "f6be054fad2522f3",
    }
    assert {text: evidence_key(excerpt(text)) for text in stored} == stored
    assert evidence_key(claim("The Pool  evicts pages.", "k1")) == "577ee663d06ec1c3"


def test_pack_delta_moves_citations_and_names_what_is_gone():
    before = [claim("Alpha holds.", "c1"), claim("Beta holds.", "c2"), claim("Gamma holds.", "c3")]
    for n, e in enumerate(before, start=1):
        e.ref = n
    previous = pack_value(before, before)["chosen"]
    # c2 was edited into c2b (same sentence), c3's document was deleted, a new fact arrived.
    now = [claim("Alpha holds.", "c1"), claim("Beta holds.", "c2b"), claim("Delta holds.", "c4")]
    for n, e in enumerate(now, start=1):
        e.ref = n
    delta = pack_delta(previous, now, cited_chunks=["c1", "c2", "c3"])
    assert delta.ref_of == {"1": 1, "2": 2, "3": None}
    assert [e.text for e in delta.added] == ["Delta holds."]
    assert delta.removed_chunks == ["c3"]


def test_recite_drops_sentences_whose_only_evidence_is_gone():
    page = (
        "Alpha holds and stays. [^1] Beta holds too.[^2][^3]\n\n## Details\n\nOnly gamma says this. [^3]\n\n"
        "- a listed gamma fact [^3]\n- a listed alpha fact [^1]\n\n## Gamma\n\nGamma alone. [^3]\n\n"
        "[^1]: Doc — chunk c1\n[^2]: Doc — chunk c2\n[^3]: Doc — chunk c3\n"
    )
    body, removed = recite(page, {"1": 4, "2": 5, "3": None})
    assert removed == 3
    assert "gamma" not in body.lower()
    assert "Alpha holds and stays. [^4]" in body and "Beta holds too.[^5]" in body
    assert "- a listed alpha fact [^4]" in body
    assert "## Gamma" not in body and "## Details" in body
    assert "[^1]:" not in body  # footnotes are written again by clean_page
    evidence = [EvidenceItem(ref=4, text="Alpha holds.", chunk_id="c1", document="Doc"),
                EvidenceItem(ref=5, text="Beta holds.", chunk_id="c2b", document="Doc")]
    cleaned = clean_page(body, [], evidence)
    assert cleaned.cited_chunk_ids == ["c1", "c2b"] and cleaned.counters["removed_citations"] == 0


def test_sentences_a_gone_citation_answered_for_go_with_it():
    """A marker closing a run of sentences answers for them all (as the support check reads a
    page): when its evidence is gone, the run goes, in an update (recite) as after a deletion
    (without_removed); a run closed by a kept citation stays."""
    from compendium.compiler.forget import without_removed

    page = ("Gone one. Gone two, by the same passage.[^1] Kept one. Kept two.[^2]\n\n"
            "Uncited and alone.\n\n[^1]: Doc — chunk aaaaaaaaaaaaaaaa\n[^2]: Doc — chunk bbbbbbbbbbbbbbbb\n")
    body, removed = recite(page, {"1": None, "2": 7})
    assert "Gone" not in body and removed == 2
    assert "Kept one. Kept two.[^7]" in body and "Uncited and alone." in body
    stripped = without_removed(page, {"aaaaaaaaaaaaaaaa"})
    assert "Gone" not in stripped and "chunk aaaaaaaaaaaaaaaa" not in stripped
    assert "Kept one. Kept two.[^2]" in stripped and "chunk bbbbbbbbbbbbbbbb" in stripped


def test_additions_land_in_their_section_or_a_new_one():
    page = "Lead. [^1]\n\n## Tuning\n\nOld tuning. [^2]\n\n## History\n\nOld history. [^3]"
    merged = insert_additions(page, "## Tuning\nNew tuning. [^4]\n\n## Failures\n\nIt can fail. [^5]")
    blocks = merged.split("\n\n")
    assert blocks.index("New tuning. [^4]") == blocks.index("Old tuning. [^2]") + 1
    assert blocks[-2:] == ["## Failures", "It can fail. [^5]"]
    assert insert_additions(page, "Plain addition. [^6]").endswith("Old history. [^3]\n\nPlain addition. [^6]")


async def test_tier_two_embeds_names_so_shared_descriptions_do_not_merge_and_variants_meet():
    def group(name: str, description: str) -> Evidence:
        g = Evidence()
        g.add(Mention(name, "technology", "entity", description, [], "c", "d"))
        return g

    same_words = "A component of the write path that keeps every change durable before it is applied."
    texts = [embedding_text(group(n, d)) for n, d in (
        ("Hot Standby", same_words), ("B-tree", same_words), ("Postgres", "The database."), ("Postgress", "A typo'd name."))]
    assert texts == ["Hot Standby", "B-tree", "Postgres", "Postgress"]
    embedder = OfflineEmbedder()
    v = await embedder.embed(texts)
    assert float(np.dot(v[0], v[1])) < 0.85  # no longer joined by a shared description
    assert float(np.dot(v[2], v[3])) >= 0.85  # a spelling variant reaches the review band at least
