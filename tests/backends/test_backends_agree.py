"""The same compile gives identical pages on SQLite and MariaDB, and `store copy` moves a
compiled workspace between them with nothing lost."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from compendium.cli import main
from compendium.fingerprint import fingerprint
from compendium.operations import compile_workspace, copy_between_stores
from compendium.settings import load_settings
from compendium.storage.factory import open_store
from compendium.storage.records import RECORD_TYPES, Page

MYSQL_URL = os.environ.get("COMPENDIUM_TEST_MYSQL_URL", "").strip()
needs_mysql = pytest.mark.skipif(
    not MYSQL_URL, reason="COMPENDIUM_TEST_MYSQL_URL is not set: no MariaDB/MySQL server to compare with"
)


async def _pages(store) -> dict[str, str]:
    return {p.slug: p.markdown async for p in store.scan(Page, {"status": "active"})}


async def _kind_fingerprints(store) -> dict[str, tuple[int, str]]:
    out = {}
    for name, kind in RECORD_TYPES.items():
        rows = []
        async for record in store.scan(kind):
            data = record.to_dict()
            vector_field = kind.VECTOR
            if vector_field and data.get(vector_field) is not None:
                data[vector_field] = [round(float(x), 5) for x in data[vector_field]]
            rows.append(data)
        out[name] = (len(rows), fingerprint(rows))
    return out


async def _drop(store) -> None:
    for kind in RECORD_TYPES.values():
        await store.delete(kind, {})


@needs_mysql
async def test_same_compile_gives_identical_pages_on_sqlite_and_mariadb(sample_workspace: Path):
    settings = load_settings(sample_workspace, env={})
    sqlite_report = await compile_workspace(settings)
    assert not sqlite_report.failed

    kb = f"agree{uuid.uuid4().hex[:10]}"
    mysql = await open_store(MYSQL_URL, kb)
    try:
        mysql_report = await compile_workspace(settings, store=mysql)
        assert not mysql_report.failed
        sqlite = await open_store(f"sqlite:///{sample_workspace / '.compendium' / 'store.db'}")
        try:
            expected = await _pages(sqlite)
        finally:
            await sqlite.close()
        got = await _pages(mysql)
        assert len(expected) > 20
        assert got == expected
        assert mysql_report.counts == sqlite_report.counts
    finally:
        await _drop(mysql)
        await mysql.close()


@needs_mysql
async def test_store_copy_round_trips_a_workspace_between_sqlite_and_mariadb(sample_workspace: Path, tmp_path: Path):
    kb = f"copy{uuid.uuid4().hex[:10]}"  # a fresh knowledge base name on the shared server
    settings = load_settings(sample_workspace, env={}, overrides={"knowledge_base": kb})
    assert not (await compile_workspace(settings)).failed
    source_url = f"sqlite:///{sample_workspace / '.compendium' / 'store.db'}"
    back_url = f"sqlite:///{tmp_path / 'back.db'}"

    # SQLite -> MariaDB -> a new SQLite file: counts and every record's content survive.
    counts = await copy_between_stores(source_url, MYSQL_URL, kb=kb)
    back_counts = await copy_between_stores(MYSQL_URL, back_url, kb=kb)
    source, middle, back = [await open_store(url, kb) for url in (source_url, MYSQL_URL, back_url)]
    try:
        original = await _kind_fingerprints(source)
        assert {k: n for k, (n, _) in original.items()} == counts == back_counts
        assert counts["page"] > 20 and counts["entity"] > 50
        assert await _kind_fingerprints(middle) == original
        assert await _kind_fingerprints(back) == original
    finally:
        await _drop(middle)
        for store in (source, middle, back):
            await store.close()


def test_store_copy_command_copies_the_workspace_store(sample_workspace: Path, tmp_path: Path, capsys):
    assert main(["-w", str(sample_workspace), "compile", "--plain"]) == 0
    target = tmp_path / "copy.db"
    assert main(["-w", str(sample_workspace), "store", "copy", f"sqlite:///{target}"]) == 0
    assert "Copied" in capsys.readouterr().out

    import asyncio

    async def pages(url: str) -> dict[str, str]:
        store = await open_store(url)
        try:
            return await _pages(store)
        finally:
            await store.close()

    source = asyncio.run(pages(f"sqlite:///{sample_workspace / '.compendium' / 'store.db'}"))
    copied = asyncio.run(pages(f"sqlite:///{target}"))
    assert copied == source and len(source) > 20
