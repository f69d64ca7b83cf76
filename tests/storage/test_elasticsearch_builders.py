"""Elasticsearch mappings, queries and URL parsing, checked without a server."""

from __future__ import annotations

import numpy as np
import pytest

from compendium.errors import StoreError
from compendium.storage import elasticsearch_queries as es
from compendium.storage.records import CacheEntry, Chunk, Entity, Page


def test_url_gives_node_prefix_and_credentials_kept_out_of_the_safe_url():
    target = es.parse_url("elasticsearch+https://elastic:s3cret@search.local:9243?prefix=team-a")
    assert target.node == "https://search.local:9243"
    assert target.prefix == "team-a"
    assert target.basic_auth == ("elastic", "s3cret")
    assert "s3cret" not in target.safe_url and "s3cret" not in repr(target)
    plain = es.parse_url("elasticsearch://localhost")
    assert (plain.node, plain.prefix, plain.basic_auth) == (
        "http://localhost:9200",
        "compendium",
        None,
    )
    assert es.parse_url("elasticsearch://h:9200?refresh=wait_for").wait_for_refresh


@pytest.mark.parametrize("url", ["elasticsearch://", "elasticsearch://h:9200?prefix=Bad*Name"])
def test_bad_urls_are_store_errors(url):
    with pytest.raises(StoreError):
        es.parse_url(url)


def test_one_versioned_index_per_kind():
    assert es.index_name("compendium", Chunk) == "compendium-chunk-v1"
    assert es.index_name("x", CacheEntry) == "x-cache-v1"


def test_mapping_indexes_filters_as_keywords_and_keeps_data_unindexed():
    mapping = es.index_mappings(Entity)
    props = mapping["properties"]
    assert mapping["dynamic"] == "strict"
    for name in ("kb", "id", "category", "type", "name"):
        assert props[name] == {"type": "keyword"}
    assert props["data"] == {"type": "object", "enabled": False}
    assert props["vector_bytes"] == {"type": "binary"}
    assert "vector_bytes" not in es.index_mappings(Chunk)["properties"]
    vector = es.vector_mapping(256)["vector"]
    assert vector["type"] == "dense_vector" and vector["dims"] == 256
    assert vector["similarity"] == "cosine" and vector["index_options"] == {"type": "hnsw"}


def test_filter_grammar_becomes_a_bool_filter():
    query = es.filter_query(Page, "kb1", {"status": "active", "kind": ["entity", "topic"]})
    assert query == {
        "bool": {
            "filter": [
                {"term": {"kb": "kb1"}},
                {"term": {"status": "active"}},
                {"terms": {"kind": ["entity", "topic"]}},
            ]
        }
    }
    assert es.filter_query(Page, "kb1", {"kind": []}) is None
    assert es.filter_query(Page, "kb1", None) == {"bool": {"filter": [{"term": {"kb": "kb1"}}]}}
    with pytest.raises(StoreError, match="markdown"):
        es.filter_query(Page, "kb1", {"markdown": "x"})


def test_documents_round_trip_with_exact_vectors():
    vector = np.random.default_rng(0).standard_normal(8).astype(np.float32)
    entity = Entity(id="e1", name="Ada", type="person", aliases=["A"], embedding=vector)
    source = es.to_source(entity, "kb1", dense=True)
    assert (source["kb"], source["id"], source["name"]) == ("kb1", "e1", "Ada")
    assert "embedding" not in source["data"]
    assert source["vector"] == pytest.approx(vector.tolist())
    back = es.from_source(Entity, source)
    np.testing.assert_array_equal(back.embedding, vector)
    assert back.aliases == ["A"] and back.name == "Ada"
    assert "vector" not in es.to_source(entity, "kb1", dense=False)


def test_doc_ids_do_not_collide_across_kbs_and_stay_short():
    assert es.doc_id("a:b", "c") != es.doc_id("a", "b:c")
    assert len(es.doc_id("kb", "x" * 2000)) <= 512


def test_knn_section_and_score_conversion():
    section = es.knn_section(np.ones(4, dtype=np.float32) / 2, 10, {"term": {"kb": "k"}})
    assert section["field"] == "vector" and section["k"] == 10
    assert section["num_candidates"] >= 100 and section["filter"] == {"term": {"kb": "k"}}
    assert es.cosine_from_score(1.0) == 1.0 and es.cosine_from_score(0.5) == 0.0


def test_bulk_actions_keep_every_field_as_document_data():
    from elasticsearch.helpers import expand_action

    source = es.to_source(Chunk(id="c1", document_id="d"), "kb1", dense=False)
    source["version"] = 3  # a name the bulk helper treats as metadata when it is top-level
    meta, body = expand_action(es.index_action("i", "1:k:c1", source))
    assert meta == {"index": {"_index": "i", "_id": "1:k:c1"}}
    assert body == source
