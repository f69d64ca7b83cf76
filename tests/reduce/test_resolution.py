"""Golden tests of REDUCE's pure logic on small hand-written extracts."""

from __future__ import annotations

import numpy as np
import pytest

from compendium.errors import InputError
from compendium.fingerprint import short_id
from compendium.identifiers import other_identifiers
from compendium.phases.reduce import reduce
from compendium.phases.resolution import (
    assign_ids,
    build_groups,
    canonical_key,
    collect_mentions,
    connected_labels,
    join_descriptions,
    merge_evidence,
    normalize_name,
    split_pairs,
    tier1_labels,
)
from compendium.storage.records import Extract


def ent(name, type_="technology", description="", aliases=()):
    return {"name": name, "type": type_, "description": description, "aliases": list(aliases)}


def extract(chunk, doc="d1", entities=(), concepts=(), claims=(), relations=()):
    return Extract(
        id=chunk, chunk_id=chunk, document_id=doc, entities=list(entities), concepts=list(concepts),
        claims=list(claims), relations=list(relations),
    )


def resolve(extracts, extra_pairs=()):
    """Tier 1 (+ given group merges standing in for tiers 2/3), then canonical records."""
    mentions = collect_mentions(extracts)
    labels, joins = tier1_labels(mentions)
    groups, mention_group = build_groups(mentions, labels)
    a = [p[0] for p in extra_pairs]
    b = [p[1] for p in extra_pairs]
    clusters, group_cluster = merge_evidence(groups, connected_labels(len(groups), a, b))
    ids = assign_ids(clusters)
    descriptions = [join_descriptions(c.ranked_descriptions(), 200) for c in clusters]
    out = reduce(extracts, mentions, group_cluster[mention_group].tolist(), clusters, ids, descriptions)
    return out, joins, groups


def by_name(out):
    return {e.name: e for e in out.entities}


def test_normalised_names_ignore_case_spacing_and_punctuation_but_keep_plurals():
    assert normalize_name("  Write-Ahead   Log ") == "write ahead log"
    assert normalize_name("WRITE_AHEAD.LOG") == "write ahead log"
    assert normalize_name("ｐｏｓｔｇｒｅｓ") == "postgres"  # NFKC folds full-width letters
    assert normalize_name("Straße") == normalize_name("STRASSE")
    assert normalize_name("C++") != normalize_name("C#") != normalize_name("C")
    assert normalize_name("Replicas") != normalize_name("Replica")
    # Underscores separate words inside a name, but an identifier's edge underscores make another one.
    assert normalize_name("max_wal_size") == normalize_name("max wal size")
    assert len({normalize_name(n) for n in ("__abs__()", "abs()", "_exit()", "exit()", "class_")}) == 5
    assert normalize_name("--version") != normalize_name("version()")  # an option is another name


def test_names_that_are_certainly_two_identifiers_are_told_apart_before_any_merge():
    # Tier 2 neither merges nor asks about these, however alike their letters.
    assert other_identifiers("__abs__()", "abs()") and other_identifiers("--version", "version()")
    assert other_identifiers("update_wrapper", "WRAPPER_UPDATES")  # an identifier's words in another order
    assert not other_identifiers("max_wal_size", "max wal size")
    assert not other_identifiers("standby servers", "Standby Server")
    assert not other_identifiers("Write-Ahead Log", "log write-ahead")  # plain words: the judge decides
    # one token naming another last part (a plural, a prefix), or one name under two owners
    assert other_identifiers("depot.crates.Crate", "Crates") and other_identifiers("c_line_length", "line_length")
    assert other_identifiers("forms.CharField", "models.CharField")
    # the same thing, qualified or not, called or not, in another spelling
    assert not other_identifiers("django.forms.CharField", "forms.CharField")
    assert not other_identifiers("Sphinx.confdir", "confdir") and not other_identifiers("shred()", "shred")
    assert not other_identifiers("core.fileMode", "core.filemode") and not other_identifiers("max_wal_size", "max-wal-size")


def test_tier1_joins_spelling_variants_and_aliases_of_one_type_only():
    out, _, _ = resolve([
        extract("c1", entities=[ent("Write-Ahead Log", aliases=["WAL"], description="Durability log.")]),
        extract("c2", entities=[ent("WAL", description="Log of changes.")]),
        extract("c3", entities=[ent("write ahead log"), ent("WAL", type_="person")]),
        extract("c4", entities=[ent("Replicas"), ent("Replica")]),
    ])
    names = by_name(out)
    wal = next(e for e in out.entities if e.type == "technology" and e.name == "WAL")  # written in c1 (as an alias) and c2: the best supported form
    assert wal.chunk_ids == ["c1", "c2", "c3"]
    assert wal.aliases == ["Write-Ahead Log", "write ahead log"]
    assert wal.description == "Durability log. Log of changes."
    person = [e for e in out.entities if e.type == "person"]
    assert [(e.name, e.chunk_ids) for e in person] == [("WAL", ["c3"])]
    assert "Replicas" in names and "Replica" in names  # plurals are tier 2's business


def test_canonical_name_is_most_supported_form_and_never_its_own_alias():
    out, _, _ = resolve([
        extract("c1", entities=[ent("postgres")]),
        extract("c2", entities=[ent("Postgres")]),
        extract("c3", entities=[ent("Postgres", aliases=["POSTGRES", "PostgreSQL"])]),
    ], extra_pairs=[])
    (pg,) = [e for e in out.entities if "Postgres" in (e.name, *e.aliases)]
    assert pg.name == "Postgres"
    assert pg.aliases == ["PostgreSQL"]  # "postgres"/"POSTGRES" differ only in case


def test_concept_with_an_entity_name_merges_into_the_entity():
    out, joins, _ = resolve([
        extract("c1", entities=[ent("MVCC", description="Concurrency scheme.")]),
        extract("c2", concepts=[{"term": "mvcc", "definition": "Multi-version concurrency control."}]),
        extract("c3", concepts=[{"term": "Vacuum", "definition": "Reclaims space."}, {"term": "vacuum", "definition": ""}]),
    ])
    names = by_name(out)
    assert joins == 1
    assert names["MVCC"].category == "entity" and names["MVCC"].type == "technology"
    assert names["MVCC"].chunk_ids == ["c1", "c2"]
    assert names["Vacuum"].category == "concept" and names["Vacuum"].type == "concept"
    assert len(out.entities) == 2


def test_relations_are_repointed_merged_and_weighed_by_distinct_chunks():
    rel = lambda s, t, d="": {"source": s, "target": t, "type": "uses", "description": d, "strength": 1.0}  # noqa: E731
    out, _, _ = resolve([
        extract("c1", entities=[ent("Postgres"), ent("WAL")], relations=[rel("Postgres", "WAL", "writes"), rel("postgres", "wal", "writes")]),
        extract("c2", entities=[ent("PostgreSQL"), ent("Write-Ahead Log", aliases=["WAL"])], relations=[rel("PostgreSQL", "Write-Ahead Log", "logs")]),
        extract("c3", entities=[ent("Postgres")], relations=[rel("Postgres", "WAL", "writes"), rel("Postgres", "Nowhere"), rel("Postgres", "postgres")]),
    ], extra_pairs=[])
    names = by_name(out)
    # PostgreSQL and Postgres are separate at tier 1; WAL joined Write-Ahead Log by alias.
    wal = names["WAL"] if "WAL" in names else names["Write-Ahead Log"]
    edges = {(r.source, r.target): r for r in out.relations}
    pg_wal = edges[(names["Postgres"].id, wal.id)]
    assert pg_wal.strength == 2 and pg_wal.chunk_ids == ["c1", "c3"]
    assert pg_wal.description == "writes"
    assert edges[(names["PostgreSQL"].id, wal.id)].strength == 1
    assert out.dropped_relations == 1 and out.self_loops == 1
    assert names["Postgres"].degree == 1 and wal.degree == 2
    assert wal.importance == 1.0 and 0 < names["PostgreSQL"].importance < 1


def test_merging_groups_repoints_relations_onto_one_entity_and_drops_new_self_loops():
    rel = {"source": "Postgres", "target": "PostgreSQL", "type": "same_as", "description": "", "strength": 1.0}
    exs = [
        extract("c1", entities=[ent("Postgres"), ent("PostgreSQL")], relations=[rel]),
        extract("c2", entities=[ent("Postgres")]),
    ]
    mentions = collect_mentions(exs)
    labels, _ = tier1_labels(mentions)
    groups, _ = build_groups(mentions, labels)
    pair = (0, 1)
    out, _, _ = resolve(exs, extra_pairs=[pair])
    assert [e.name for e in out.entities] == ["Postgres"] and len(groups) == 2
    assert out.entities[0].aliases == ["PostgreSQL"]
    assert out.relations == [] and out.self_loops == 1


def test_claims_attach_to_canonical_entities_resolved_in_their_chunk_first():
    out, _, _ = resolve([
        extract("c1", entities=[ent("Mercury", type_="planet")], claims=[{"text": "Mercury is hot.", "entities": ["mercury"]}]),
        extract("c2", entities=[ent("Mercury", type_="element")], claims=[
            {"text": "Mercury is liquid.", "entities": ["Mercury", "Unknown"]},
            {"text": "Mercury is liquid.", "entities": ["Mercury"]},
        ]),
    ])
    planet = next(e for e in out.entities if e.type == "planet")
    element = next(e for e in out.entities if e.type == "element")
    claims = {c.text: c for c in out.claims}
    assert len(out.claims) == 2
    assert claims["Mercury is hot."].entity_ids == [planet.id]
    assert claims["Mercury is liquid."].entity_ids == [element.id]
    assert claims["Mercury is liquid."].chunk_id == "c2" and claims["Mercury is liquid."].document_id == "d1"


def test_ids_are_the_clusters_own_whatever_came_before():
    """An id is its cluster's canonical key's: when the better supported form flips the name,
    the id follows it, as a compile from scratch of the same extracts names it."""
    first = [extract("c0", entities=[ent("Postgres")]), extract("c1", entities=[ent("Postgres", aliases=["PostgreSQL"])])]
    mentions = collect_mentions(first)
    groups, _ = build_groups(mentions, tier1_labels(mentions)[0])
    before = assign_ids(groups)
    later = [*first, *(extract(c, entities=[ent("PostgreSQL")]) for c in ("c2", "c3", "c4"))]
    mentions = collect_mentions(later)
    groups, _ = build_groups(mentions, tier1_labels(mentions)[0])
    assert groups[0].name == "PostgreSQL"
    ids = assign_ids(groups)
    assert ids != before and ids == [short_id("entity", canonical_key(groups[0]))]
    assert assign_ids(list(reversed(groups))) == list(reversed(ids))  # in any order


def test_union_find_matches_a_plain_python_union_find():
    rng = np.random.default_rng(3)
    n = 500
    a, b = rng.integers(n, size=300), rng.integers(n, size=300)
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            x = parent[x]
        return x

    for x, y in zip(a.tolist(), b.tolist(), strict=True):
        parent[find(x)] = find(y)
    labels = connected_labels(n, a, b)
    for i in range(n):
        for j in range(i + 1, min(n, i + 40)):
            assert (labels[i] == labels[j]) == (find(i) == find(j))
    assert all(labels[i] == min(k for k in range(n) if find(k) == find(i)) for i in range(0, n, 25))


def test_pairs_of_different_types_only_go_to_review():
    sims = np.array([0.99, 0.99, 0.90, 0.80, 0.93])
    same = np.array([True, False, True, True, False])
    merge, review = split_pairs(sims, same, 0.95, (0.85, 0.95))
    assert merge.tolist() == [True, False, False, False, False]
    assert review.tolist() == [False, True, True, False, True]


def test_descriptions_are_joined_within_the_limit_best_first():
    text = join_descriptions(["A storage engine.", "It logs writes", "x" * 300], 90)
    assert text == "A storage engine. It logs writes."
    assert len(join_descriptions(["word " * 100], 80)) <= 80


def test_malformed_extract_items_name_the_extract_and_field():
    with pytest.raises(InputError, match=r"extract c9: entities\[0\].aliases"):
        collect_mentions([extract("c9", entities=[{"name": "X", "type": "t", "aliases": "WAL"}])])
    with pytest.raises(InputError, match=r"extract c9: concepts\[1\] must be an object"):
        collect_mentions([extract("c9", concepts=[{"term": "a"}, "b"])])


def test_a_declared_alias_lends_its_type_to_generic_mentions_but_never_mixes_specific_types():
    out, _, _ = resolve([
        extract("c1", entities=[ent("Write-Ahead Log", type_="component", aliases=["WAL"])]),
        extract("c2", entities=[ent("WAL", type_="concept")]),
        extract("c3", entities=[ent("WAL", type_="concept"), ent("WAL", type_="person")]),
    ])
    wal = [e for e in out.entities if "WAL" in (e.name, *e.aliases)]
    joined = next(e for e in wal if e.type == "component")
    assert joined.chunk_ids == ["c1", "c2", "c3"]
    assert [(e.name, e.type, e.chunk_ids) for e in wal if e is not joined] == [("WAL", "person", ["c3"])]


def test_a_member_and_a_nested_type_of_the_same_letters_are_two_subjects():
    # `Connection.request` (a method) and `Connection.Request` (an interface): casefolding alone
    # would make them one name
    assert other_identifiers("Connection.request", "Connection.Request")
    assert other_identifiers("Document.outputSettings()", "Document.OutputSettings")
    assert not other_identifiers("Connection.request", "Connection.request()")
    out, _, _ = resolve([
        extract("c1", entities=[ent("Connection.request", description="Set the connection's request.")]),
        extract("c2", entities=[ent("Connection.Request", description="Represents a HTTP request.")]),
        extract("c3", entities=[ent("Connection.request()")]),
    ])
    assert sorted(e.chunk_ids for e in out.entities) == [["c1", "c3"], ["c2"]]
