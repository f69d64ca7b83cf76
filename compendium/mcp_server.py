"""`compendium mcp`: the workspace's knowledge base as MCP tools over stdio (official `mcp` SDK).

Tools: search (full text over pages, entities or passages), retrieve (typed evidence and a
context block), ask (a cited answer), get_page, get_entity. An MCP client (Claude Desktop,
an IDE) starts `compendium -w WORKSPACE mcp` and calls them; stdout carries only the protocol.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any, Literal

from mcp.server.mcpserver import MCPServer

from .errors import CompendiumError, NotFound
from .operations import opened_store
from .retrieval import Options, ask, retrieve
from .retrieval.workspace import Sources, sources_for
from .settings import Settings
from .storage.records import Chunk, Document, Entity, Page, Relation

INSTRUCTIONS = (
    "A knowledge base compiled by Compendium: cited wiki pages, canonical entities with "
    "aliases and relations, topics, and the source passages. Use retrieve for evidence to "
    "answer from (its context block labels items [C1], [E1]...), ask for a cited answer, "
    "search to find pages, entities or passages by words, get_page and get_entity to read one."
)
MAX_LIMIT = 50


def build_server(settings: Settings) -> MCPServer[Any]:
    """The MCP server over the knowledge base `settings` name; the store opens with the session."""
    held: dict[str, Sources] = {}

    @contextlib.asynccontextmanager
    async def lifespan(server: MCPServer[Any]) -> AsyncIterator[None]:
        async with opened_store(settings) as store, sources_for(store, settings) as src:
            held["src"] = src
            try:
                yield None
            finally:
                held.clear()

    server: MCPServer[Any] = MCPServer("compendium", instructions=INSTRUCTIONS, lifespan=lifespan)

    def sources() -> Sources:
        return held["src"]

    def failed(exc: CompendiumError) -> dict[str, Any]:
        return {"error": str(exc), "field": exc.field}

    @server.tool()
    async def search(
        query: str, kind: Literal["page", "entity", "chunk"] = "page", limit: int = 10
    ) -> dict[str, Any]:
        """Pages, entities or source passages whose words match the query, best first (BM25)."""
        store = sources().store
        limit = max(1, min(limit, MAX_LIMIT))
        try:
            if kind == "page":
                found = await store.search_text(Page, query, limit, {"status": "active"})
                hits = [{"slug": p.slug, "title": p.title, "summary": p.summary, "score": round(s, 4)}  # type: ignore[attr-defined]
                        for p, s in found]
            elif kind == "entity":
                found = await store.search_text(Entity, query, limit)
                hits = [{"id": e.id, "name": e.name, "type": e.type, "aliases": e.aliases,  # type: ignore[attr-defined]
                         "score": round(s, 4)} for e, s in found]
            else:
                found = await store.search_text(Chunk, query, limit)
                hits = [{"chunk_id": c.id, "heading_path": c.heading_path, "text": c.text,  # type: ignore[attr-defined]
                         "score": round(s, 4)} for c, s in found]
        except CompendiumError as exc:
            return failed(exc)
        return {"query": query, "kind": kind, "hits": hits}

    @server.tool(name="retrieve")
    async def retrieve_tool(
        question: str, top_k: int = 8, mode: Literal["local", "global", "hybrid"] = "hybrid"
    ) -> dict[str, Any]:
        """Evidence for a question: entities, relations, pages, topics and source passages,
        best first, with a Markdown context block to answer from (cite its labels)."""
        src = sources()
        try:
            result = await retrieve(question, src.store, embedder=src.embedder, passages=src.passages, llm=src.llm,
                                    options=Options(top_k=top_k, mode=mode))
        except CompendiumError as exc:
            return failed(exc)
        return result.as_dict()

    @server.tool(name="ask")
    async def ask_tool(question: str, mode: Literal["local", "global", "hybrid"] = "hybrid") -> dict[str, Any]:
        """An answer from the knowledge base whose every sentence cites its evidence."""
        src = sources()
        async for event in ask(question, src.store, embedder=src.embedder, passages=src.passages, llm=src.llm,
                               options=Options(mode=mode)):
            if event["type"] == "error":
                return {"error": event["message"]}
            if event["type"] == "final":
                return {"answer": event["answer"], "citations": event["citations"]}
        return {"error": "the answer stream ended without an answer"}

    @server.tool()
    async def get_page(slug: str) -> dict[str, Any]:
        """A wiki page's Markdown (citations as footnotes naming their passages) and links."""
        try:
            page: Page = await sources().store.get_one(Page, slug)  # type: ignore[assignment]
        except NotFound as exc:
            return failed(exc)
        return {"slug": page.slug, "title": page.title, "kind": page.kind, "summary": page.summary,
                "markdown": page.markdown, "outlinks": page.outlinks, "aliases": page.aliases}

    @server.tool()
    async def get_entity(id_or_name: str) -> dict[str, Any]:
        """An entity by id, or by name or alias: description, page, and its strongest relations."""
        store = sources().store
        found = await store.get(Entity, [id_or_name])
        if not found:
            by_name = await store.search_text(Entity, id_or_name, 5, fields=["name", "aliases"])
            wanted = id_or_name.casefold()
            found = [e for e, _ in by_name
                     if wanted in (e.name.casefold(), *(a.casefold() for a in e.aliases))]  # type: ignore[attr-defined]
        if not found:
            return {"error": f"no entity {id_or_name!r}", "field": "id_or_name"}
        entity: Entity = found[0]  # type: ignore[assignment]
        relations = [r for side in ("source", "target")
                     async for r in store.scan(Relation, {side: entity.id})]
        relations.sort(key=lambda r: (-r.strength, r.id))  # type: ignore[attr-defined]
        pages = [p.slug async for p in store.scan(Page, {"subject_id": entity.id, "status": "active"})]  # type: ignore[attr-defined]
        documents = await store.get(Document, entity.document_ids[:20])
        return {
            "id": entity.id, "name": entity.name, "type": entity.type, "aliases": entity.aliases,
            "description": entity.description, "page": pages[0] if pages else None,
            "documents": [d.path for d in documents],  # type: ignore[attr-defined]
            "relations": [{"source": r.source, "target": r.target, "type": r.type,  # type: ignore[attr-defined]
                           "strength": r.strength, "description": r.description}  # type: ignore[attr-defined]
                          for r in relations[:20]],
        }

    return server


def serve_stdio(settings: Settings) -> None:
    """Serve until the client closes stdin."""
    build_server(settings).run("stdio")
