"""copy_store: every record of every knowledge base arrives unchanged, SQLite to SQLite and to MariaDB."""

from __future__ import annotations

import os

import pytest

from compendium.fingerprint import fingerprint
from compendium.storage.copy import copy_store
from compendium.storage.factory import open_store
from compendium.storage.records import RECORD_TYPES, Chunk, Entity

from .conftest import drop_kbs, fresh_kb
from .store_contract import sample, unit_vectors


async def kind_fingerprints(store) -> dict[str, str]:
    return {
        name: fingerprint([r.to_dict() async for r in store.scan(kind)])
        for name, kind in RECORD_TYPES.items()
    }


async def fill(store) -> None:
    vectors = unit_vectors(40, seed=2)
    await store.upsert(sample(kind, id=f"s-{kind.KIND}") for kind in RECORD_TYPES.values())
    await store.upsert(Chunk(id=f"c{i:04}", document_id=f"d{i % 7}") for i in range(2500))
    await store.upsert(Entity(id=f"e{i}", name=f"n{i}", embedding=v) for i, v in enumerate(vectors))


async def check_copy(source, target, kbs: list[str]) -> None:
    for kb in kbs:
        await fill(source.for_kb(kb))
    await source.for_kb(kbs[1]).delete(Chunk, {"document_id": "d0"})
    counts = await copy_store(source, target, batch_size=300)
    expected = {name: 0 for name in RECORD_TYPES}
    for kb in kbs:
        for name, kind in RECORD_TYPES.items():
            expected[name] += await source.for_kb(kb).count(kind)
    assert counts == expected and counts["chunk"] > 4000
    for kb in kbs:
        assert await kind_fingerprints(target.for_kb(kb)) == await kind_fingerprints(
            source.for_kb(kb)
        )
    again = await copy_store(source, target, kb=kbs[0])
    assert again["entity"] == 41  # a second run is an idempotent upsert of the same records
    assert await target.for_kb(kbs[0]).count(Entity) == 41


async def test_sqlite_to_sqlite(tmp_path):
    source = await open_store(str(tmp_path / "a.db"), kb="one")
    target = await open_store(str(tmp_path / "b.db"))
    await check_copy(source, target, ["one", "two"])
    assert await target.knowledge_bases() == ["one", "two"]
    await source.close()
    await target.close()


async def test_sqlite_to_mariadb(tmp_path):
    url = os.environ.get("COMPENDIUM_TEST_MYSQL_URL", "")
    if not url:
        pytest.skip("COMPENDIUM_TEST_MYSQL_URL is not set: no MySQL server to copy into")
    source = await open_store(str(tmp_path / "a.db"))
    target = await open_store(url)
    kbs = [fresh_kb(), fresh_kb()]
    try:
        await check_copy(source, target, kbs)
    finally:
        await drop_kbs(target, kbs)
        await target.close()
        await source.close()
