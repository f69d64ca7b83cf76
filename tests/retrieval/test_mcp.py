"""`compendium mcp` driven by the MCP SDK's own stdio client: tools listed, each one called,
every error flagged; and a raw stdio session for lines that are not JSON-RPC."""

from __future__ import annotations

import json
import subprocess
import sys

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from compendium.operations import opened_store
from compendium.storage.records import Entity, Page

TOOLS = {"search", "retrieve", "ask", "get_page", "get_entity"}


def server_for(settings) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "compendium.cli", "-w", str(settings.workspace), "mcp"])


async def known_names(settings, n: int = 7) -> tuple[list[Entity], list[Page]]:
    """Entities with an alias, and live pages, as the compiled knowledge base holds them."""
    async with opened_store(settings) as store:
        entities = [e async for e in store.scan(Entity)]
        pages = [p async for p in store.scan(Page, {"status": "active"})]
    with_alias = [e for e in entities if e.aliases][:n]
    rest = [e for e in entities if not e.aliases][: max(0, n - len(with_alias))]
    return with_alias + rest, pages[:n]


async def test_the_tools_are_listed_described_and_answer(compiled_offline):
    entities, pages = await known_names(compiled_offline)
    async with stdio_client(server_for(compiled_offline)) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
        assert {t.name for t in listed.tools} == TOOLS
        for tool in listed.tools:  # every tool and every parameter says what it is
            assert tool.description
            for name, schema in tool.input_schema["properties"].items():
                assert schema.get("description"), (tool.name, name)
        modes = next(t for t in listed.tools if t.name == "retrieve").input_schema["properties"]["mode"]
        assert "local" in modes["description"] and "global" in modes["description"]
        assert "top_k" in next(t for t in listed.tools if t.name == "ask").input_schema["properties"]

        async def call(tool, progress=None, **arguments):
            result = await session.call_tool(tool, arguments, progress_callback=progress)
            assert not result.is_error, result.content
            return result.structured_content

        passages = await call("search", query="toast compression", kind="chunk")
        hit = passages["hits"][0]
        assert hit["document"].startswith("corpus/") and hit["heading_path"] and hit["chunk_id"]
        under = await call("search", query="pages", kind="chunk", under="corpus/storage/", limit=20)
        assert under["hits"] and all(h["document"].startswith("corpus/storage/") for h in under["hits"])

        evidence = await call("retrieve", question="How does the buffer pool evict pages?", top_k=4)
        assert evidence["chunks"][0]["document"] == "corpus/storage/buffer-pool.md"
        assert all(c["chunk_id"] and c["heading_path"] for c in evidence["chunks"])
        assert "[C1]" in evidence["context"] and len(evidence["chunks"]) == 4
        picked = await call("retrieve", question="How does the buffer pool evict pages?", top_k=4, rerank="llm")
        assert picked["chunks"] == evidence["chunks"] and "no model is configured" in picked["notes"][0]

        sentences: list[str] = []

        async def progress(done, total, message):
            sentences.append(message)

        answer = await call("ask", progress, question="What does TOAST do with large values?", top_k=3)
        assert "[C1]" in answer["answer"] and answer["citations"][0]["ref"]
        assert sentences and " ".join(sentences) == answer["answer"]
        assert answer["engine"] == "offline" and "extractive" in answer["notes"][0]

        for entity in entities:  # every name and alias that exists resolves to its entity
            for name in [entity.name, *entity.aliases[:1], entity.name.upper()]:
                found = await call("get_entity", id_or_name=name)
                assert found["id"] == entity.id or found["name"].casefold() == entity.name.casefold(), name
        for page in pages:
            assert (await call("get_page", name=page.slug))["slug"] == page.slug
            assert (await call("get_page", name=page.title))["title"] == page.title


async def test_every_error_is_flagged_with_a_short_message(compiled_offline):
    async with stdio_client(server_for(compiled_offline)) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for name, arguments, wanted in (
            ("get_page", {"name": "no-such-page"}, "no page"),
            ("get_entity", {"id_or_name": "No Such Thing"}, "no entity"),
            ("search", {"query": " ?! "}, "no words"),
            ("retrieve", {"question": " ?! "}, "no words"),
            ("ask", {"question": " ?! "}, "no words"),
            ("retrieve", {"question": "vacuum", "top_k": "many"}, "top_k"),
            ("retrieve", {"question": "vacuum", "mode": "everything"}, "mode"),
            ("retrieve", {"question": "vacuum", "rerank": "cosine"}, "rerank"),
            ("search", {"query": "vacuum", "limit": 500}, "limit"),
        ):
            result = await session.call_tool(name, arguments)
            text = " ".join(c.text for c in result.content)
            assert result.is_error, (name, arguments, text)
            assert wanted in text and len(text) < 300 and "validation error" not in text, text


def test_a_line_that_is_not_json_rpc_gets_a_json_rpc_error(compiled_offline):
    lines = [
        "{not json",
        "[1, 2]",
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
    ]
    done = subprocess.run([sys.executable, "-m", "compendium.cli", "-w", str(compiled_offline.workspace), "mcp"],
                          input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=120)
    replies = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert [r.get("error", {}).get("code") for r in replies[:2]] == [-32700, -32600]
    assert all(r["jsonrpc"] == "2.0" and r["id"] is None for r in replies[:2])
    assert replies[2]["id"] == 1 and "result" in replies[2]  # the session goes on
