"""Elasticsearch store (8.x/9.x): an index per kind, dense_vector kNN, search_after scans over a PIT."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import StoreError
from . import codec, text
from .base import Filter
from .elasticsearch_queries import (
    MAPPING_VERSION,
    Target,
    cosine_from_score,
    doc_id,
    filter_query,
    from_source,
    index_action,
    index_mappings,
    index_name,
    knn_section,
    parse_url,
    text_mappings,
    text_query,
    to_source,
    vector_mapping,
)
from .records import RECORD_TYPES, Record, Vector
from .transaction_owner import TransactionOwner

_UNINDEXED_VECTORS = ("cache",)  # several embedding models' vectors: kNN by numpy instead


@contextmanager
def _errors(doing: str, where: str):
    from elastic_transport import TransportError
    from elasticsearch import ApiError
    from elasticsearch.helpers import BulkIndexError

    try:
        yield
    except BulkIndexError as exc:
        first = exc.errors[0] if exc.errors else {}
        raise StoreError(f"Elasticsearch {where}: cannot {doing}: {exc} first: {first}") from exc
    except (ApiError, TransportError) as exc:
        raise StoreError(f"Elasticsearch {where}: cannot {doing}: {exc}") from exc


@dataclass
class _Undo:
    """A transaction's undo log: each touched document's state before the transaction."""

    before: dict[tuple[str, str], dict[str, Any] | None] = field(default_factory=dict)


class _Cluster:
    def __init__(self, target: Target, client: Any):
        self.target, self.client = target, client
        self.dims: dict[str, int] = {}
        self.dirty: set[str] = set()  # indices written since their last refresh
        self.tx_lock = asyncio.Lock()
        self.transactions = TransactionOwner("compendium_es_tx")
        self.undo: _Undo | None = None
        self.version = ""


class ElasticsearchStore(codec.GetOne):
    """Store on Elasticsearch; see storage/base.py for the contract.

    Elasticsearch has no transactions: `transaction()` serialises writers in this process and
    keeps an undo log, so an error inside restores every document it touched.
    """

    def __init__(self, cluster: _Cluster, kb: str):
        self._c = cluster
        self.kb = kb
        self.url = cluster.target.safe_url

    @classmethod
    async def connect(cls, url: str, kb: str = "default") -> ElasticsearchStore:
        from elasticsearch import AsyncElasticsearch

        target = parse_url(url)
        client = AsyncElasticsearch(
            hosts=[target.node],
            basic_auth=target.basic_auth,
            api_key=target.api_key,
            verify_certs=target.verify_certs,
            ca_certs=target.ca_certs,
            node_class="httpxasync",  # httpx is already a dependency; aiohttp is not
            retry_on_status=(429, 502, 503, 504),
            retry_on_timeout=True,
            max_retries=5,
            request_timeout=60,
        )
        cluster = _Cluster(target, client)
        try:
            with _errors("connect", target.safe_url):
                info = await client.info()
                cluster.version = info["version"]["number"]
                for kind in RECORD_TYPES.values():
                    await cls._ensure_index(cluster, kind)
        except BaseException:
            await client.close()
            raise
        return cls(cluster, kb)

    @staticmethod
    async def _ensure_index(cluster: _Cluster, kind: type[Record]) -> None:
        from elasticsearch import BadRequestError

        name = index_name(cluster.target.prefix, kind)
        if not await cluster.client.indices.exists(index=name):
            try:
                await cluster.client.indices.create(index=name, mappings=index_mappings(kind))
            except BadRequestError as exc:  # another worker created it first
                if "resource_already_exists" not in str(exc):
                    raise
        mapping = await cluster.client.indices.get_mapping(index=name)
        properties = mapping[name]["mappings"].get("properties", {})
        missing = {k: v for k, v in text_mappings(kind).items() if k not in properties}
        if missing:  # an index made before full-text search: documents written from now on have it
            await cluster.client.indices.put_mapping(index=name, properties=missing)
        if kind.VECTOR:
            vector = properties.get("vector")
            if vector:
                cluster.dims[kind.KIND] = int(vector["dims"])

    def for_kb(self, kb: str) -> ElasticsearchStore:
        return ElasticsearchStore(self._c, kb)

    def _index(self, kind: type[Record]) -> str:
        return index_name(self._c.target.prefix, kind)

    def _in_tx(self) -> bool:
        return self._c.transactions.inside()

    async def _fresh(self, kind: type[Record]) -> None:
        """Refresh an index this process wrote to, so searches see those writes."""
        index = self._index(kind)
        if index in self._c.dirty:
            self._c.dirty.discard(index)
            await self._c.client.indices.refresh(index=index)

    @asynccontextmanager
    async def _writing(self) -> AsyncIterator[None]:
        if self._in_tx():
            yield
            return
        async with self._c.tx_lock:
            yield

    @asynccontextmanager
    async def transaction(self, *, serialized: bool = False) -> AsyncIterator[None]:
        # No lock spans processes here: info() says so, and leases settle instead.
        if self._in_tx():
            yield
            return
        cluster = self._c
        async with cluster.tx_lock:
            cluster.undo = _Undo()
            try:
                with cluster.transactions.held():
                    yield
            except BaseException:
                undo, cluster.undo = cluster.undo, None
                await self._roll_back(undo)
                raise
            finally:
                cluster.undo = None

    async def _remember(self, index: str, ids: list[str], sources: dict[str, Any] | None) -> None:
        """Note the pre-transaction state of documents about to change."""
        undo = self._c.undo
        if undo is None or not self._in_tx():
            return
        new = [i for i in dict.fromkeys(ids) if (index, i) not in undo.before]
        if sources is None and new:
            reply = await self._c.client.mget(index=index, ids=new)
            sources = {d["_id"]: d["_source"] for d in reply["docs"] if d.get("found")}
        for i in new:
            undo.before[(index, i)] = (sources or {}).get(i)

    async def _roll_back(self, undo: _Undo | None) -> None:
        from elasticsearch.helpers import async_bulk

        if not undo or not undo.before:
            return
        actions = []
        for (index, _id), source in undo.before.items():
            if source is None:
                actions.append({"_op_type": "delete", "_index": index, "_id": _id})
            else:
                restored = dict(source)
                kind_dims = "vector_bytes" in restored and self._dense_for_index(index)
                if kind_dims:
                    blob = base64.b64decode(restored["vector_bytes"])
                    restored["vector"] = np.frombuffer(blob, dtype=np.float32).tolist()
                actions.append(
                    {"_op_type": "index", "_index": index, "_id": _id, "_source": restored}
                )
        with _errors("roll back a transaction", self.url):
            await async_bulk(
                self._c.client, actions, raise_on_error=False, refresh=True, max_retries=3
            )

    def _dense_for_index(self, index: str) -> bool:
        return any(
            self._index(kind) == index and kind.KIND in self._c.dims
            for kind in RECORD_TYPES.values()
        )

    async def upsert(self, records: Iterable[Record]) -> int:
        from elasticsearch.helpers import async_bulk

        groups = codec.group_by_kind(records)
        total = 0
        async with self._writing():
            with _errors("upsert records", self.url):
                for kind, items in groups.items():
                    index = self._index(kind)
                    await self._fix_dims(kind, items)
                    dense = kind.KIND in self._c.dims
                    docs = {doc_id(self.kb, r.id): to_source(r, self.kb, dense) for r in items}
                    await self._remember(index, list(docs), None)
                    actions = [index_action(index, _id, source) for _id, source in docs.items()]
                    await async_bulk(
                        self._c.client,
                        actions,
                        chunk_size=500,
                        max_retries=5,
                        refresh="wait_for" if self._c.target.wait_for_refresh else False,
                    )
                    if not self._c.target.wait_for_refresh:
                        self._c.dirty.add(index)
                    total += len(items)
        return total

    async def _fix_dims(self, kind: type[Record], items: list[Record]) -> None:
        """Map the dense_vector on the first write that carries a vector."""
        if not kind.VECTOR or kind.KIND in self._c.dims or kind.KIND in _UNINDEXED_VECTORS:
            return
        first = next((v for r in items if (v := codec.vector_of(r)) is not None), None)
        if first is None:
            return
        await self._c.client.indices.put_mapping(
            index=self._index(kind), properties=vector_mapping(first.shape[0])
        )
        self._c.dims[kind.KIND] = first.shape[0]

    async def delete(self, kind: type[Record], where: Filter) -> int:
        kind = codec.record_kind(kind)
        query = filter_query(kind, self.kb, where)
        if query is None:
            return 0
        index = self._index(kind)
        async with self._writing():
            with _errors(f"delete {kind.KIND} records", self.url):
                await self._fresh(kind)
                if self._in_tx():
                    sources = {}
                    async for hit in self._hits(index, query):
                        sources[hit["_id"]] = hit["_source"]
                    await self._remember(index, list(sources), sources)
                reply = await self._c.client.delete_by_query(
                    index=index, query=query, refresh=True, conflicts="proceed"
                )
        return int(reply["deleted"])

    async def get(self, kind: type[Record], ids: Sequence[str]) -> list[Record]:
        kind = codec.record_kind(kind)
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return []
        found: dict[str, Record] = {}
        with _errors(f"get {kind.KIND} records", self.url):
            for start in range(0, len(wanted), 1000):
                part = wanted[start : start + 1000]
                reply = await self._c.client.mget(
                    index=self._index(kind), ids=[doc_id(self.kb, i) for i in part]
                )
                for doc in reply["docs"]:
                    if doc.get("found"):
                        record = from_source(kind, doc["_source"])
                        found[record.id] = record
        return [found[i] for i in ids if i in found]

    async def _hits(
        self, index: str, query: dict[str, Any], batch_size: int = 1000
    ) -> AsyncIterator[dict[str, Any]]:
        """Every hit in id order: search_after over a point in time, so there is no 10k window."""
        client = self._c.client
        pit = (await client.open_point_in_time(index=index, keep_alive="2m"))["id"]
        try:
            after = None
            while True:
                reply = await client.search(
                    pit={"id": pit, "keep_alive": "2m"},
                    query=query,
                    sort=[{"id": "asc"}],
                    size=batch_size,
                    search_after=after,
                    track_total_hits=False,
                )
                pit = reply.get("pit_id", pit)
                hits = reply["hits"]["hits"]
                for hit in hits:
                    yield hit
                if len(hits) < batch_size:
                    return
                after = hits[-1]["sort"]
        finally:
            await client.close_point_in_time(id=pit)

    async def scan(
        self, kind: type[Record], where: Filter | None = None, *, batch_size: int = 1000
    ) -> AsyncIterator[Record]:
        kind = codec.record_kind(kind)
        query = filter_query(kind, self.kb, where)
        if query is None:
            return
        with _errors(f"scan {kind.KIND} records", self.url):
            await self._fresh(kind)
            async for hit in self._hits(
                self._index(kind), query, max(1, min(int(batch_size), 10_000))
            ):
                yield from_source(kind, hit["_source"])

    async def count(self, kind: type[Record], where: Filter | None = None) -> int:
        kind = codec.record_kind(kind)
        query = filter_query(kind, self.kb, where)
        if query is None:
            return 0
        with _errors(f"count {kind.KIND} records", self.url):
            await self._fresh(kind)
            reply = await self._c.client.count(index=self._index(kind), query=query)
        return int(reply["count"])

    async def knn(
        self, kind: type[Record], vector: Vector, k: int, where: Filter | None = None
    ) -> list[tuple[Record, float]]:
        kind = codec.record_kind(kind)
        query = codec.unit_query(kind, vector)
        condition = filter_query(kind, self.kb, where)
        if condition is None or k <= 0:
            return []
        with _errors(f"search {kind.KIND} vectors", self.url):
            await self._fresh(kind)
            if kind.KIND not in self._c.dims:
                return await self._knn_by_numpy(kind, query, k, condition)
            if self._c.dims[kind.KIND] != query.shape[0]:
                raise StoreError(
                    f"knn on {kind.KIND}: query has {query.shape[0]} dimensions, "
                    f"the index has {self._c.dims[kind.KIND]}"
                )
            reply = await self._c.client.search(
                index=self._index(kind), knn=knn_section(query, k, condition), size=k
            )
        return [
            (from_source(kind, hit["_source"]), cosine_from_score(hit["_score"]))
            for hit in reply["hits"]["hits"]
        ]

    async def _knn_by_numpy(
        self, kind: type[Record], query: Vector, k: int, condition: dict[str, Any]
    ) -> list[tuple[Record, float]]:
        condition["bool"]["filter"].append({"exists": {"field": "vector_bytes"}})
        records = [
            from_source(kind, h["_source"]) async for h in self._hits(self._index(kind), condition)
        ]
        vectors = [getattr(r, kind.VECTOR or "") for r in records]
        same = [(r, v) for r, v in zip(records, vectors, strict=True) if v.shape == query.shape]
        if not same:
            return []
        rows, scores = codec.top_k(np.stack([v for _, v in same]), query, k)
        return [(same[i][0], float(s)) for i, s in zip(rows, scores, strict=True)]

    async def search_text(
        self,
        kind: type[Record],
        query: str,
        k: int,
        where: Filter | None = None,
        *,
        fields: Sequence[str] | None = None,
    ) -> list[tuple[Record, float]]:
        kind, chosen, terms, k = text.prepare_search(kind, query, k, fields)
        body = text_query(kind, self.kb, where, text.natural_query(terms), chosen)
        if body is None or not terms or k == 0:
            return []
        with _errors(f"search {kind.KIND} text", self.url):
            await self._fresh(kind)
            reply = await self._c.client.search(
                index=self._index(kind), query=body, size=k, track_total_hits=False
            )
        return [
            (from_source(kind, hit["_source"]), float(hit["_score"]))
            for hit in reply["hits"]["hits"]
        ]

    async def knowledge_bases(self) -> list[str]:
        with _errors("list knowledge bases", self.url):
            for kind in RECORD_TYPES.values():
                await self._fresh(kind)
            reply = await self._c.client.search(
                index=f"{self._c.target.prefix}-*-v{MAPPING_VERSION}",
                size=0,
                aggs={"kbs": {"terms": {"field": "kb", "size": 10_000}}},
            )
        return sorted(b["key"] for b in reply["aggregations"]["kbs"]["buckets"])

    async def info(self) -> dict[str, Any]:
        return {
            "backend": "elasticsearch",
            "serialized_transactions": False,
            "url": self.url,
            "kb": self.kb,
            "server_version": self._c.version,
            "vector_search": "dense_vector hnsw",
            "full_text": "match / multi_match bm25",
            "vector_dims": dict(self._c.dims),
            "transactions": "undo log within this process",
        }

    async def close(self) -> None:
        with _errors("close", self.url):
            await self._c.client.close()
