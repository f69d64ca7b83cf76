"""Open a Store from its URL: the one place that maps a scheme to a backend."""

from __future__ import annotations

from urllib.parse import urlsplit

from ..errors import StoreError
from .base import Store

SCHEMES = ("sqlite", "mysql", "tidb", "elasticsearch", "elasticsearch+https", "elasticsearch+http")


def sqlite_path(url: str) -> str:
    """The file a sqlite URL names.

    As in SQLAlchemy: `sqlite:///relative.db` is relative to the working directory,
    `sqlite:////abs/path.db` (that is, f"sqlite:///{absolute_path}") is absolute, and
    `sqlite://` or `sqlite:///:memory:` is an in-memory database. A bare path is a path.
    """
    if "://" not in url:
        return url
    rest = url[len("sqlite://") :]
    if rest in ("", "/:memory:", ":memory:"):
        return ":memory:"
    if not rest.startswith("/"):
        raise StoreError(
            f"bad SQLite URL {url!r}: write sqlite:///relative.db or sqlite:////abs.db"
        )
    path = rest[1:].split("?", 1)[0]
    if not path:
        raise StoreError(f"bad SQLite URL {url!r}: no file named")
    return path


async def open_store(url: str, kb: str = "default") -> Store:
    """The store `url` points at, scoped to knowledge base `kb`.

    sqlite:///file.db (or a bare path), mysql://user:pass@host:port/db, tidb://..., and
    elasticsearch://host:9200?prefix=name / elasticsearch+https://...
    """
    if not url or not url.strip():
        raise StoreError("no store URL given", hint=f"use one of: {', '.join(SCHEMES)}")
    url = url.strip()
    if not kb or not isinstance(kb, str):
        raise StoreError(f"bad knowledge base name {kb!r}")
    scheme = urlsplit(url).scheme.lower() if "://" in url else ""

    if scheme in ("", "sqlite", "file"):
        from .sqlite import SQLiteStore

        if scheme == "file":
            url = "sqlite://" + url[len("file://") :]
        path = sqlite_path(url)
        return SQLiteStore.open(path, kb, url=url if "://" in url else f"sqlite:///{path}")
    if scheme in ("mysql", "tidb", "mysql+pymysql"):
        from .mysql import MySQLStore

        return await MySQLStore.connect(url, kb)
    if scheme in ("elasticsearch", "elasticsearch+https", "elasticsearch+http", "es"):
        from .elasticsearch import ElasticsearchStore

        return await ElasticsearchStore.connect(url, kb)
    raise StoreError(
        f"unknown store URL scheme {scheme!r} in {url.split('@')[-1]!r}",
        hint=f"valid schemes: {', '.join(SCHEMES)}",
    )
