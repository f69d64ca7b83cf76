"""The Store protocol: what every backend (sqlite, mysql/tidb, elasticsearch) must do."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol, runtime_checkable

from .records import Record, Vector

Filter = dict[str, Any]
"""Filter grammar, shared by scan/count/delete/knn.

`{field: value}` keeps records whose field equals value; `{field: [v1, v2]}` keeps records
whose field is one of the values (an empty list matches nothing). Several fields are ANDed.
Only `id` and the kind's FILTERS may be named; any other field raises StoreError.
"""


@runtime_checkable
class Store(Protocol):
    """A knowledge base's records. One instance is scoped to one knowledge base (`kb`).

    Records are upserted by (kind, id): writing an existing id replaces the record whole.
    Vectors are float32, L2-normalised by the caller; KNN scores are cosine similarity.
    Every backend translates its driver's errors into StoreError (NotFound for `get_one`).
    """

    kb: str
    url: str

    def for_kb(self, kb: str) -> Store:
        """The same backend and connection, scoped to another knowledge base."""
        ...

    async def upsert(self, records: Iterable[Record]) -> int:
        """Insert or replace records (any mix of kinds). Idempotent. Returns how many."""
        ...

    async def get(self, kind: type[Record], ids: Sequence[str]) -> list[Record]:
        """The records with these ids that exist, in the order asked (missing ids are skipped)."""
        ...

    async def get_one(self, kind: type[Record], id: str) -> Record:
        """One record; raises NotFound if absent."""
        ...

    def scan(
        self, kind: type[Record], where: Filter | None = None, *, batch_size: int = 1000
    ) -> AsyncIterator[Record]:
        """Every matching record, ordered by id, streamed in pages (no 10k window limit)."""
        ...

    async def count(self, kind: type[Record], where: Filter | None = None) -> int: ...

    async def delete(self, kind: type[Record], where: Filter) -> int:
        """Delete matching records; returns how many. `where={}` deletes the kind in this kb."""
        ...

    async def knn(
        self, kind: type[Record], vector: Vector, k: int, where: Filter | None = None
    ) -> list[tuple[Record, float]]:
        """The k records nearest to `vector` by cosine similarity, best first, with scores."""
        ...

    async def search_text(
        self,
        kind: type[Record],
        query: str,
        k: int,
        where: Filter | None = None,
        *,
        fields: Sequence[str] | None = None,
    ) -> list[tuple[Record, float]]:
        """At most k records whose TEXT fields (or `fields`, a subset) hold words of `query`.

        Any word may match (a natural-language query, never an operator syntax); records are
        ranked best first by BM25 (or the server's relevance), each field weighted as its kind's
        TEXT says; scores are positive and comparable only within one answer. A query with no
        words, or a filter that matches nothing, returns []. A kind without TEXT fields, or a
        field outside them, raises StoreError. The index follows every upsert and delete in the
        same transaction; on MySQL a search inside an open transaction may miss its own writes.
        A backend may leave out a query's commonest words on a large table (SQLite does above
        20,000 records), since they add little to BM25 and cost the most to rank.
        """
        ...

    def transaction(self, *, serialized: bool = False) -> AbstractAsyncContextManager[None]:
        """Writes inside are applied all together or not at all. Nesting joins the outer one.

        `serialized` (on the outermost one): no two such transactions on the backend's database
        overlap, in any process, so a read inside sees every earlier one's writes (leases are
        taken this way) — where `info()["serialized_transactions"]` says the backend can."""
        ...

    async def knowledge_bases(self) -> list[str]:
        """Names of knowledge bases that hold any record."""
        ...

    async def info(self) -> dict[str, Any]:
        """Backend name, url without secrets, capabilities (e.g. native vector search)."""
        ...

    async def close(self) -> None: ...
