"""`compendium mcp` driven by the MCP SDK's own stdio client: tools listed, each one called."""

from __future__ import annotations

import sys

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

TOOLS = {"search", "retrieve", "ask", "get_page", "get_entity"}


async def test_the_tools_are_listed_and_answer(compiled_offline):
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "compendium.cli", "-w", str(compiled_offline.workspace), "mcp"],
    )
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
        assert {t.name for t in listed.tools} == TOOLS
        assert all(t.description for t in listed.tools)

        async def call(name, **arguments):
            result = await session.call_tool(name, arguments)
            assert not result.is_error, result.content
            return result.structured_content

        found = await call("search", query="visibility map", kind="page", limit=3)
        assert found["hits"][0]["slug"] == "visibility-map"
        passages = await call("search", query="toast compression", kind="chunk")
        assert passages["hits"] and "TOAST" in passages["hits"][0]["heading_path"][0]

        evidence = await call("retrieve", question="How does the buffer pool evict pages?", top_k=4)
        assert evidence["chunks"][0]["document"] == "corpus/storage/buffer-pool.md"
        assert "[C1]" in evidence["context"]

        answer = await call("ask", question="What does TOAST do with large values?")
        assert "[C1]" in answer["answer"] and answer["citations"][0]["ref"]

        page = await call("get_page", slug="visibility-map")
        assert page["title"] == "Visibility Map" and page["markdown"]
        entity = await call("get_entity", id_or_name="VM")  # an alias
        assert entity["name"] == "Visibility Map" and entity["page"] == "visibility-map"
        assert entity["relations"] and entity["documents"]
        missing = await call("get_page", slug="no-such-page")
        assert "no page" in missing["error"]
