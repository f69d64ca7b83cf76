"""MySQL/TiDB DDL, SQL and URL parsing, checked without a server."""

from __future__ import annotations

import pytest

from compendium.errors import StoreError
from compendium.storage import mysql_sql as mysql
from compendium.storage.records import Chunk, Entity, Page


def test_url_parts_and_safe_url():
    target = mysql.parse_url("mysql://bob:p%40ss@db.local:3307/kb?prefix=x_")
    assert (target.host, target.port, target.user, target.password) == (
        "db.local",
        3307,
        "bob",
        "p@ss",
    )
    assert (target.database, target.prefix, target.tidb) == ("kb", "x_", False)
    assert "p@ss" not in target.safe_url and "p%40ss" not in target.safe_url
    tidb = mysql.parse_url("tidb://root@tidb.local/kb?ssl=true")
    assert tidb.port == 4000 and tidb.tidb and tidb.ssl == {"check_hostname": True}


@pytest.mark.parametrize(
    "url", ["mysql://host", "mysql:///db", "mysql://h:99999/db", "mysql://h/db?prefix=a;b"]
)
def test_bad_urls_are_store_errors(url):
    with pytest.raises(StoreError):
        mysql.parse_url(url)


def test_ddl_has_kb_id_key_indexed_filters_and_a_vector_column():
    ddl = mysql.table_ddl(Entity, "c_", "VECTOR")
    assert "CREATE TABLE IF NOT EXISTS `c_entity`" in ddl
    assert "PRIMARY KEY (kb, id)" in ddl
    for name in Entity.FILTERS:
        assert f"KEY `ix_{name}` (kb, `{name}`(191), id)" in ddl
    assert "vector VECTOR NULL" in ddl and "utf8mb4_bin" in ddl
    assert "vector" not in mysql.table_ddl(Chunk, "c_")


def test_upsert_replaces_every_column_but_the_key():
    sql = mysql.upsert_sql(Page, "c_")
    assert sql.startswith("INSERT INTO `c_page`")
    assert "ON DUPLICATE KEY UPDATE" in sql and "`kb` = VALUES" not in sql
    assert "`data` = VALUES(`data`)" in sql and "`vector` = VALUES(`vector`)" in sql
    assert sql.count("%s") == len(mysql.columns_of(Page))


def test_where_sql_follows_the_filter_grammar():
    sql, params = mysql.where_sql(Chunk, "kb1", {"document_id": ["a", "b"], "id": "c1"})
    assert sql == "kb = %s AND `document_id` IN (%s, %s) AND `id` = %s"
    assert params == ["kb1", "a", "b", "c1"]
    assert mysql.where_sql(Chunk, "kb1", {"document_id": []}) is None
    with pytest.raises(StoreError, match="document_id"):
        mysql.where_sql(Chunk, "kb1", {"text": "x"})


def test_tidb_knn_orders_by_cosine_distance():
    sql = mysql.knn_sql(Entity, "c_", "kb = %s", 5)
    assert "VEC_COSINE_DISTANCE(vector, %s)" in sql and sql.endswith("ORDER BY distance LIMIT 5")
