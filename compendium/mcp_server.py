"""`compendium mcp`: the workspace's knowledge base as MCP tools over stdio (official `mcp` SDK).

Tools: search (full text over pages, entities or passages), retrieve (typed evidence and a
context block), ask (a cited answer; each checked sentence is also sent as a progress
notification as soon as it is complete), get_page, get_entity. An MCP client (Claude Desktop,
an IDE) starts `compendium -w WORKSPACE mcp` and calls them; stdout carries only the protocol.

Every failure is a tool result with is_error true and a one-line message (a bad argument
names the argument, not the validator's report); a line on stdin that is not a JSON-RPC
message gets a JSON-RPC error reply (parse error or invalid request).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field, ValidationError

from .errors import CompendiumError
from .operations import opened_store
from .retrieval import Options, ask, retrieve
from .retrieval.workspace import Sources, sources_for
from .settings import Settings
from .storage.records import Chunk, Document, Entity, Page, Relation
from .storage.text import words

INSTRUCTIONS = (
    "A knowledge base compiled by Compendium: cited wiki pages, canonical entities with "
    "aliases and relations, topics, and the source passages. Use retrieve for evidence to "
    "answer from (its context block labels items [C1], [E1]...), ask for a cited answer, "
    "search to find pages, entities or passages by words, get_page and get_entity to read one "
    "by its exact name or alias."
)
MAX_LIMIT = 50
MODES = (
    "Passages are ranked alike in every mode (full text and meaning, one passage of a document "
    "in the first 5 while others match). 'hybrid' (default) adds the entities, relations, pages and topics of the "
    "subjects the question names; 'local' the subjects with their neighbours and relations, no "
    "topics; 'global' their pages and topics, fewer entities."
)
Mode = Annotated[Literal["local", "global", "hybrid"], Field(description=MODES)]
Question = Annotated[str, Field(description="the question, in the user's words (at most 2,000 characters)")]
TopK = Annotated[int, Field(ge=1, le=MAX_LIMIT, description=(
    "how many passages (and entities, relations, pages) to return, 1-50: a cut-off of one "
    "ranking, so the first 5 of top_k 10 are top_k 5"))]
Under = Annotated[str | None, Field(description=(
    "only documents whose path starts with this (e.g. 'reference/'); paths are relative to the "
    "workspace's documents folder, as the hits show them"))]
Node = Annotated[str | None, Field(description=(
    "only the documents of this outline topic and its subtopics, named by its title, id or "
    "overview page slug"))]
Rerank = Annotated[Literal["words", "llm", "none"], Field(description=(
    "what reorders the fused passages: 'words' (default: how closely their words meet the "
    "question's), 'llm' (then the configured model picks the best of the first 10 in one cached "
    "call; without a model, or when it fails, the order stays and `notes` says why), 'none'"))]


class ToolServer(MCPServer[Any]):
    """MCPServer whose argument errors are one line naming the argument."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                first = cause.errors()[0]
                where = ".".join(str(p) for p in first.get("loc", ()) if p != "arguments") or "arguments"
                raise ToolError(f"{name}: {where}: {first.get('msg', 'invalid')}") from None
            raise


def _error(exc: CompendiumError) -> ToolError:
    return ToolError(str(exc).splitlines()[0][:500])


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

    server = ToolServer("compendium", instructions=INSTRUCTIONS, lifespan=lifespan)

    def sources() -> Sources:
        return held["src"]

    @server.tool()
    async def search(
        query: Annotated[str, Field(description="words to look for (any may match; no operators)")],
        kind: Annotated[Literal["page", "entity", "chunk"], Field(description=(
            "what to search: 'page' wiki pages, 'entity' entities by name, alias and description, "
            "'chunk' source passages"))] = "page",
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="most hits to return, 1-50")] = 10,
        under: Under = None,
    ) -> dict[str, Any]:
        """Pages, entities or source passages whose words match the query, best first (BM25).
        Passage hits carry their document path, heading path and chunk id."""
        store = sources().store
        if not words(query):
            raise ToolError("the query has no words")
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
                where = None
                if under:
                    prefix = under.strip().lstrip("/")
                    where = {"document_id": [d.id async for d in store.scan(Document) if d.path.startswith(prefix)]}  # type: ignore[attr-defined]
                found = await store.search_text(Chunk, query, limit, where)
                paths = {d.id: d.path for d in await store.get(Document, list({c.document_id for c, _ in found}))}  # type: ignore[attr-defined]
                hits = [{"chunk_id": c.id, "document": paths.get(c.document_id, c.document_id),  # type: ignore[attr-defined]
                         "heading_path": c.heading_path, "text": c.text,  # type: ignore[attr-defined]
                         "score": round(s, 4)} for c, s in found]
        except CompendiumError as exc:
            raise _error(exc) from exc
        return {"query": query, "kind": kind, "hits": hits}

    @server.tool(name="retrieve", description=(
        "Evidence for a question, best first: source passages (document path, heading path, chunk "
        "id, text), and the entities, relations, pages and topics of the subjects it names, with a "
        "Markdown context block whose labels ([C1], [E1]...) an answer cites. " + MODES))
    async def retrieve_tool(question: Question, top_k: TopK = 8, mode: Mode = "hybrid",
                            under: Under = None, node: Node = None, rerank: Rerank = "words") -> dict[str, Any]:
        src = sources()
        options = Options(top_k=top_k, mode=mode, path_prefix=under, outline_node=node, rerank_by=rerank)
        try:
            result = await retrieve(question, src.store, embedder=src.embedder, passages=src.passages,
                                    llm=src.llm, options=options)
        except CompendiumError as exc:
            raise _error(exc) from exc
        return result.as_dict()

    @server.tool(name="ask", description=(
        "An answer from the knowledge base whose every sentence cites its evidence (labels resolved "
        "in `citations`). Each sentence that passes its citation check is also sent as a progress "
        "notification as soon as it is complete. Without a model configured, or when it cannot be "
        "reached, the answer is extractive (sentences quoted from the passages) and `notes` says so. "
        + MODES))
    async def ask_tool(ctx: Context[Any, Any], question: Question, top_k: TopK = 8, mode: Mode = "hybrid",
                       under: Under = None, node: Node = None, rerank: Rerank = "words") -> dict[str, Any]:
        src = sources()
        events = ask(question, src.store, embedder=src.embedder, passages=src.passages, llm=src.llm,
                     options=Options(top_k=top_k, mode=mode, path_prefix=under, outline_node=node,
                                     rerank_by=rerank))
        sent = 0
        async with contextlib.aclosing(events):
            async for event in events:
                if event["type"] == "error":
                    raise ToolError(event["message"].splitlines()[0][:500])
                if event["type"] == "sentence":
                    sent += 1
                    await ctx.report_progress(sent, message=event["text"])
                if event["type"] == "final":
                    return {"answer": event["answer"], "citations": event["citations"],
                            "engine": event["engine"], "notes": event["notes"]}
        raise ToolError("the answer stream ended without an answer")

    @server.tool()
    async def get_page(
        name: Annotated[str, Field(description=(
            "the page's slug, or its exact title or one of its aliases (case and punctuation aside), "
            "or the name of the entity it is about"))],
    ) -> dict[str, Any]:
        """A wiki page's Markdown (citations as footnotes naming their passages) and links,
        resolved by slug first, then by exact title or alias, then by its entity's name."""
        page = await _page_named(sources().store, name)
        if page is None:
            raise ToolError(f"no page {name!r}")
        return {"slug": page.slug, "title": page.title, "kind": page.kind, "summary": page.summary,
                "markdown": page.markdown, "outlinks": page.outlinks, "aliases": page.aliases}

    @server.tool()
    async def get_entity(
        id_or_name: Annotated[str, Field(description=(
            "the entity's id, or its exact name or one of its aliases (case and punctuation aside)"))],
    ) -> dict[str, Any]:
        """An entity by id, or by exact name or alias: description, page, source documents and
        its strongest relations."""
        store = sources().store
        entity = await _entity_named(store, id_or_name)
        if entity is None:
            raise ToolError(f"no entity {id_or_name!r}")
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


def _same(a: str, b: str) -> bool:
    return a.casefold() == b.casefold() or (bool(words(a)) and words(a) == words(b))


async def _entity_named(store: Any, name: str) -> Entity | None:
    """By id, then exact name, then a name or alias equal but for case and punctuation: the
    full-text candidates are only where to look, never the answer."""
    found = await store.get(Entity, [name])
    if found:
        return found[0]  # type: ignore[no-any-return]
    exact = [e async for e in store.scan(Entity, {"name": name})]
    if exact:
        return max(exact, key=lambda e: (e.degree, e.id))  # type: ignore[no-any-return]
    if not words(name):
        return None
    candidates = [e for e, _ in await store.search_text(Entity, name, 200, fields=["name", "aliases"])]
    for check in (lambda e: _same(e.name, name), lambda e: any(_same(a, name) for a in e.aliases)):
        matches = [e for e in candidates if check(e)]
        if matches:
            return max(matches, key=lambda e: (e.degree, e.id))  # type: ignore[no-any-return]
    return None


async def _page_named(store: Any, name: str) -> Page | None:
    found = await store.get(Page, [name])
    if found and found[0].status == "active":  # type: ignore[attr-defined]
        return found[0]  # type: ignore[no-any-return]
    if words(name):
        candidates = [p for p, _ in await store.search_text(Page, name, 100, {"status": "active"},
                                                             fields=["title", "aliases"])]
        for check in (lambda p: _same(p.title, name), lambda p: any(_same(a, name) for a in p.aliases)):
            matches = [p for p in candidates if check(p)]
            if matches:
                return matches[0]  # type: ignore[no-any-return]
    entity = await _entity_named(store, name)
    if entity is not None:
        async for page in store.scan(Page, {"subject_id": entity.id, "status": "active"}):
            return page  # type: ignore[no-any-return]
    return None


async def _serve(server: MCPServer[Any]) -> None:
    """The SDK's stdio transport, with a JSON-RPC error for each line that is not a message
    (the SDK drops such lines without a word)."""
    import anyio
    import mcp_types as types
    from mcp.server.stdio import stdio_server
    from mcp.shared._context_streams import create_context_streams
    from mcp.shared.message import SessionMessage

    async with stdio_server() as (read_stream, write_stream):
        messages, reader = create_context_streams[SessionMessage | Exception](0)

        async def screen() -> None:
            async with messages:
                async for item in read_stream:
                    if not isinstance(item, Exception):
                        await messages.send(item)
                        continue
                    unparsed = isinstance(item, ValidationError) and any(
                        e.get("type") == "json_invalid" for e in item.errors())
                    code = types.PARSE_ERROR if unparsed else types.INVALID_REQUEST
                    text = "Parse error: the line is not JSON" if unparsed else \
                        "Invalid Request: the line is not a JSON-RPC 2.0 request, notification or response"
                    reply = types.JSONRPCError(jsonrpc="2.0", id=None, error=types.ErrorData(code=code, message=text))
                    await write_stream.send(SessionMessage(reply))

        lowlevel = server._lowlevel_server
        async with anyio.create_task_group() as group:
            group.start_soon(screen)
            await lowlevel.run(reader, write_stream, lowlevel.create_initialization_options())
            group.cancel_scope.cancel()


def serve_stdio(settings: Settings) -> None:
    """Serve until the client closes stdin."""
    import anyio

    anyio.run(_serve, build_server(settings))
