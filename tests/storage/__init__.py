"""Unit tests of storage builders: SQL, DDL, Elasticsearch mappings and queries."""
