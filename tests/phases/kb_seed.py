"""A small canonical knowledge base (what REDUCE would have written) for the PLAN/REFINE tests."""

from __future__ import annotations

from itertools import combinations

from compendium.storage.records import Chunk, Claim, Document, Entity, Relation

PEOPLE = ["Ada Lovelace", "Charles Babbage", "Alan Turing", "Grace Hopper"]
PLANETS = ["Mercury", "Venus", "Mars", "Jupiter"]


def entity_id(name: str) -> str:
    return "e-" + name.lower().replace(" ", "-")


def knowledge_base(*, people=PEOPLE, planets=PLANETS, extra_claims=()):
    """Records of two clusters: computing pioneers and planets, each fully related inside."""
    records: list = [Document(id="d1", title="Pioneers", path="pioneers.md"),
                     Document(id="d2", title="Planets", path="planets.md")]
    for group, doc in ((people, "d1"), (planets, "d2")):
        for i, name in enumerate(group):
            chunks = [f"{doc}-k{i}", f"{doc}-k{i + 1}"]
            records.append(Entity(
                id=entity_id(name), name=name, type="person" if doc == "d1" else "planet",
                description=f"{name} is described in the {doc} notes.",
                chunk_ids=chunks, document_ids=[doc], importance=float(10 - i),
            ))
            records.append(Claim(id=f"c-{entity_id(name)}", text=f"{name} is notable.",
                                 chunk_id=chunks[0], document_id=doc, entity_ids=[entity_id(name)]))
        for i in range(len(group) + 1):
            members = [n for n in group[max(0, i - 1):i + 1]]
            text = " ".join(f"{n} appears here with more detail about its work and history." for n in members)
            records.append(Chunk(id=f"{doc}-k{i}", document_id=doc, ordinal=i, text=text or "Nothing.",
                                 heading_path=["Overview"], tokens=30))
        for a, b in combinations(group, 2):
            records.append(Relation(id=f"r-{entity_id(a)}-{entity_id(b)}", source=entity_id(a), target=entity_id(b),
                                    type="related_to", description=f"{a} and {b} are linked.", strength=2,
                                    chunk_ids=[f"{doc}-k1"]))
    for claim in extra_claims:
        records.append(claim)
    return records
