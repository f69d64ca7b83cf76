"""Full-text pieces checked without a server: ES and MySQL/TiDB query builders, query words, the BM25 scan."""

from __future__ import annotations

import pytest

from compendium.errors import StoreError
from compendium.storage import elasticsearch_queries as es
from compendium.storage import mysql_sql, text
from compendium.storage.records import Chunk, Document, Entity


def test_query_words_drop_question_words_and_punctuation_and_are_bounded():
    assert text.query_words("How does the WAL's checkpointer flush pg_dump?") == [
        "wal", "s", "checkpointer", "flush", "pg", "dump"
    ]
    assert text.query_words("what is it") == ["what", "is", "it"]  # stopwords only: kept
    assert len(text.query_words(" ".join(f"w{i}" for i in range(100)))) == text.MAX_QUERY_WORDS


def test_fts5_query_quotes_every_word_so_none_is_an_operator():
    assert text.fts5_query(["near", 'a"b']) == '"near" OR "a""b"'
    assert text.fts5_query(["x"], ["name", "aliases"]) == '{name aliases} : ("x")'


def test_chosen_fields_name_the_valid_ones():
    assert text.chosen_fields(Entity, ["aliases"]) == {"aliases": 2.0}
    with pytest.raises(StoreError, match="name, aliases, description"):
        text.chosen_fields(Entity, ["type"])
    with pytest.raises(StoreError, match="no text fields"):
        text.chosen_fields(Document, None)


def test_es_mapping_and_source_carry_analysed_text_fields():
    props = es.index_mappings(Entity)["properties"]
    assert props["text_name"] == {"type": "text", "analyzer": "english"}
    assert "text_name" not in es.index_mappings(Document)["properties"]
    source = es.to_source(Chunk(id="c", text="Vacuum", heading_path=["A", "B"]), "kb", False)
    assert source["text_text"] == "Vacuum" and source["text_heading_path"] == "A\nB"


def test_es_text_query_is_multi_match_inside_the_filter():
    query = es.text_query(Entity, "kb1", {"type": "place"}, "vacuum freeze",
                          text.chosen_fields(Entity, None))
    assert query["bool"]["filter"] == [{"term": {"kb": "kb1"}}, {"term": {"type": "place"}}]
    assert query["bool"]["must"] == [
        {
            "multi_match": {
                "query": "vacuum freeze",
                "type": "most_fields",
                "fields": ["text_name^3", "text_aliases^2", "text_description^1"],
            }
        }
    ]
    one = es.text_query(Entity, "kb1", None, "x", {"name": 3.0})
    assert one["bool"]["must"] == [{"match": {"text_name": {"query": "x", "boost": 3.0}}}]
    assert es.text_query(Entity, "kb1", {"type": []}, "x", {"name": 3.0}) is None


def test_mysql_word_index_rows_and_lookup():
    entity = Entity(id="e1", name="max_wal_size", aliases=["WAL size", "wal"])
    rows = mysql_sql.postings_of("kb1", Entity, entity)
    by_field = {(field, term): (tf, length) for _, _, term, field, _, tf, length in rows}
    assert by_field[("name", "max")] == (1, 3) and by_field[("aliases", "wal")] == (2, 3)
    assert all(r[:2] == ("kb1", "entity") and r[4] == "e1" for r in rows)
    sql = mysql_sql.postings_sql(Entity, "p_", "kb = %s AND `type` = %s", 2, 1, 100)
    assert "FROM `p_postings` WHERE kb = %s AND kind = %s AND term IN (%s, %s)" in sql
    assert "id IN (SELECT id FROM `p_entity` WHERE kb = %s AND `type` = %s)" in sql
    assert sql.endswith("LIMIT 100")
    assert "SELECT id FROM" not in mysql_sql.postings_sql(Entity, "p_", None, 1, 1, 5)
    ddl = mysql_sql.table_ddl(Entity, "p_")
    assert "FULLTEXT" not in ddl and "utf8mb4_unicode_ci" in ddl


def test_ranking_from_the_word_index_weights_fields_and_counts_the_collection():
    entities = [
        Entity(id="in-name", name="Vacuum"),
        Entity(id="in-text", name="Autovacuum", description="runs vacuum often"),
        Entity(id="none", name="Planner"),
    ]
    postings = [
        (r[4], r[3], r[2], r[5], r[6])
        for e in entities
        for r in mysql_sql.postings_of("kb", Entity, e)
        if r[2] == "vacuum"
    ]
    ranked = text.rank_postings(postings, {"name": 3.0, "description": 1.0}, 5, collection=3)
    assert [key for key, _ in ranked] == ["in-name", "in-text"]
    rare = text.rank_postings(postings, {"name": 3.0, "description": 1.0}, 5, collection=1000)
    assert rare[0][1] > ranked[0][1]  # a word in 2 of 1000 records weighs more than in 2 of 3
    assert [key for key, _ in text.rank_postings(postings, {"name": 1.0}, 5, 3)] == ["in-name"]


def test_scan_scorer_is_bm25_with_field_weights():
    scorer = text.ScanScorer({"name": 3.0, "description": 1.0}, ["vacuum"], 2)
    scorer.add([
        Entity(id="in-name", name="Vacuum"),
        Entity(id="in-text", name="Autovacuum", description="runs vacuum often"),
        Entity(id="none", name="Planner"),
        Entity(id="long", name="x", description="vacuum " + "word " * 50),
    ])
    best = scorer.best()
    assert [r.id for r, _ in best] == ["in-name", "in-text"]
    assert best[0][1] > best[1][1] > 0
