"""PLAN's claim index: kept up to date in the store from changes, it answers what one built from
every claim answers (real SQLite; enough claims that sets split into parts)."""

import random

from compendium.phases.claim_index import REPEATED_IN, ClaimIndex, built_index
from compendium.phases.claim_index_keys import PART_LIMIT, entity_set
from compendium.phases.claim_index_store import load_parts, open_index, regroup
from compendium.phases.claim_kinds import words_of
from compendium.phases.planning import MAX_ENTITY_CLAIMS, MAX_TOPIC_CLAIMS
from compendium.storage.records import CacheEntry, Claim, Entity

ENTITIES = [Entity(id="e-lock", name="Lock"), Entity(id="e-py", name="Python"), Entity(id="e-db", name="Database"),
            Entity(id="e-pool", name="Buffer Pool")]
SENTENCES = ["Lock waits for the holder.", "The Lock is held by Python.", "A lock guards the Database.",
             "Database pages sit in the Buffer Pool.", "Python reads the database."]


# Written word for word in a few documents each: across rounds some reach REPEATED_IN documents
# (furniture) and some fall back under it.
BOILERPLATE = ["Mandatory arguments to long options are mandatory for short options too.",
               "The Lock is released at the end of the transaction.", "See the Database chapter."]


def _claims(rng: random.Random, n: int, start: int = 0) -> list[Claim]:
    out = []
    for i in range(start, start + n):
        text = f"{rng.choice(SENTENCES)} ({i})"
        if rng.random() < 0.004:
            text = rng.choice(BOILERPLATE)
        ents = rng.sample([e.id for e in ENTITIES], rng.randint(1, 3))
        out.append(Claim(id=f"{rng.getrandbits(64):016x}", text=text, entity_ids=ents,
                         document_id=f"d{rng.randint(1, 2 * REPEATED_IN)}"))
    return out


async def _store_index(store, index: ClaimIndex) -> None:
    write, gone = index.entries(0.0)
    async with store.transaction():
        for start in range(0, len(gone), 500):
            await store.delete(CacheEntry, {"id": gone[start:start + 500]})
        await store.upsert(write)


async def _answers(store, index: ClaimIndex, topics: dict[str, list[str]]) -> dict:
    keys = [k for e in ENTITIES for k in index.head_parts(entity_set(e.id), MAX_ENTITY_CLAIMS)]
    await load_parts(store, index, keys)
    await load_parts(store, index, index.text_buckets(Claim(id="", text=t) for t in BOILERPLATE))
    return {
        "facts": {e.id: index.facts(e.id) for e in ENTITIES},
        "heads": {e.id: index.head(entity_set(e.id), MAX_ENTITY_CLAIMS) for e in ENTITIES},
        "topics": {t: await regroup(store, index, t, members, MAX_TOPIC_CLAIMS) for t, members in topics.items()},
        "common": index.common_words(),
        "lowercase": {e.id for e in ENTITIES if index.written_lowercase(e.id)},
        "furniture": {t for t in BOILERPLATE if index.furniture(t)},
        "repeated": index.repeated,
    }


async def test_an_index_kept_from_changes_answers_as_one_built_from_every_claim(store):
    rng = random.Random(3)
    claims = {c.id: c for c in _claims(rng, 3 * PART_LIMIT)}
    topics = {"t-a": ["e-lock", "e-py"], "t-b": ["e-db", "e-pool", "e-py"]}
    words = words_of(ENTITIES)

    first = built_index(claims.values(), ENTITIES)
    for tid, members in topics.items():
        await regroup(store, first, tid, members, MAX_TOPIC_CLAIMS)
    for set_id in first.oversized():
        first.split(set_id)
    await _store_index(store, first)

    followed = 0
    furniture = [{t for t in BOILERPLATE if first.furniture(t)}]
    for round_ in range(3):
        index = await open_index(store)
        assert not index.parts  # nothing read yet but the directory
        removed = rng.sample(sorted(claims), 200)
        old = [claims.pop(i) for i in removed]
        changed = rng.sample(sorted(claims), 100)
        for i in changed:  # same id, other entities
            old.append(claims[i])
            claims[i] = Claim(id=i, text=claims[i].text, entity_ids=rng.sample([e.id for e in ENTITIES], 2))
        added = _claims(rng, 2 * PART_LIMIT, start=10_000 * (round_ + 1))
        claims.update({c.id: c for c in added})
        new = [claims[i] for i in changed] + added

        await load_parts(store, index, index.text_buckets([*old, *new]))
        await load_parts(store, index, index.claim_parts([*old, *new]))
        assert index.apply(old, new, words) == set()
        furniture.append({t for t in BOILERPLATE if index.furniture(t)})
        topics["t-a"] = ["e-lock", "e-db"] if round_ == 1 else topics["t-a"]  # a member comes, one goes
        for tid, members in topics.items():
            if index.members(tid) == sorted(members):  # same members: the changes alone kept it exact
                followed += index.ranking(tid, MAX_TOPIC_CLAIMS) is not None
            await regroup(store, index, tid, members, MAX_TOPIC_CLAIMS)
        for set_id in index.oversized():
            await load_parts(store, index, index.all_parts(set_id))
            index.split(set_id)
        await _store_index(store, index)

        scratch = built_index(claims.values(), ENTITIES)
        assert await _answers(store, await open_index(store), topics) == await _answers(store, scratch, topics)

    assert followed >= 4
    assert len({frozenset(f) for f in furniture}) > 1  # some sentence became furniture or stopped being it
    stored = await open_index(store)
    assert stored.layout[entity_set("e-py")]["d"] >= 1  # the big sets were split into parts
    assert all(n <= PART_LIMIT for found in stored.layout.values() for n in found["n"].values())


def test_word_counts_follow_a_renamed_entity():
    claims = [Claim(id="c1", text="Lock waits.", entity_ids=["e1"]), Claim(id="c2", text="It takes the Lock.", entity_ids=["e1"])]
    index = built_index(claims, [Entity(id="e1", name="Lock")])
    assert index.common_words() == set()  # capitalised inside a sentence: a name
    renamed = [Entity(id="e1", name="Waits")]
    stale = index.apply([], [], words_of(renamed))
    assert stale == {"e1"}
    index.recount("e1", words_of(renamed)["e1"], (c.text for c in claims))
    assert index.common_words() == {"e1"}


def test_a_sentence_written_in_many_documents_is_no_subjects_fact():
    """The manual's furniture ("Mandatory arguments ...", written under every command) counts
    for no entity; a definition or an entry of a definition list, however often written, stays
    its subject's."""
    furniture = "Mandatory arguments to long options are mandatory for short options too."
    definition = "`msgfmt`: Generate binary message catalog from textual translation description."
    claims = [Claim(id=f"f{i}", text=furniture, entity_ids=[f"e{i}"], document_id=f"d{i}") for i in range(REPEATED_IN)]
    claims += [Claim(id=f"g{i}", text=definition, entity_ids=["e0"], document_id=f"d{i}") for i in range(REPEATED_IN)]
    option = "`-h, --help`: display this help and exit"  # every program's own option
    claims += [Claim(id=f"h{i}", text=option, entity_ids=["e0"], document_id=f"d{i}") for i in range(REPEATED_IN)]
    claims.append(Claim(id="own", text="Lock waits.", entity_ids=["e0"], document_id="d0"))
    index = built_index(claims, [])
    footer = "This document was generated by the depot's build."  # under every page: furniture
    index = built_index([*claims, *(Claim(id=f"z{i}", text=footer, entity_ids=[f"e{i}"], document_id=f"d{i}")
                                     for i in range(REPEATED_IN))], [])
    assert index.furniture(footer) and index.facts("e2") == 0  # e2 is named by furniture only
    assert index.furniture(furniture) and not index.furniture(option)
    assert index.ids(entity_set("e0")) == sorted(["own", *(f"{k}{i}" for k in "gh" for i in range(REPEATED_IN))])
    assert index.facts("e1") == 0

    # One document fewer writes it: the sentence is each command's fact again.
    index.apply([claims[REPEATED_IN - 1]], [], {})
    assert not index.furniture(furniture)
    assert index.facts("e1") == 1 and "f0" in index.ids(entity_set("e0"))
