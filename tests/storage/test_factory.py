"""open_store: which URL opens which backend, and the errors for bad ones."""

from __future__ import annotations

import pytest

from compendium.errors import StoreError
from compendium.storage.base import Store
from compendium.storage.factory import open_store, sqlite_path


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("sqlite:///relative.db", "relative.db"),
        ("sqlite:////abs/path.db", "/abs/path.db"),
        ("sqlite:///sub/dir/x.db?mode=rw", "sub/dir/x.db"),
        ("sqlite://", ":memory:"),
        ("sqlite:///:memory:", ":memory:"),
        ("/plain/path.db", "/plain/path.db"),
        ("plain.db", "plain.db"),
    ],
)
def test_sqlite_urls_name_their_file(url, path):
    assert sqlite_path(url) == path


async def test_sqlite_url_opens_a_store_scoped_to_the_kb(tmp_path):
    store = await open_store(f"sqlite:///{tmp_path}/a.db", kb="docs")
    assert isinstance(store, Store)
    assert store.kb == "docs"
    info = await store.info()
    assert info["backend"] == "sqlite" and info["vector_search"] == "numpy"
    assert (tmp_path / "a.db").exists()
    await store.close()


async def test_unknown_scheme_lists_the_valid_ones():
    with pytest.raises(StoreError) as caught:
        await open_store("postgres://u:secret@h/db")
    text = str(caught.value)
    assert "postgres" in text and "sqlite" in text and "elasticsearch" in text and "mysql" in text
    assert "secret" not in text


@pytest.mark.parametrize("url", ["", "   "])
async def test_empty_url_is_an_error(url):
    with pytest.raises(StoreError):
        await open_store(url)


async def test_unreachable_mysql_is_one_clear_store_error():
    # port 9 on localhost: nothing listens, so the connection is refused at once
    with pytest.raises(StoreError) as caught:
        await open_store("mysql://u:secret@127.0.0.1:9/db")
    assert "127.0.0.1:9" in str(caught.value) and "secret" not in str(caught.value)
