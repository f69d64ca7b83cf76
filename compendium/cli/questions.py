"""retrieve, ask and mcp: questions over the compiled knowledge base."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
from typing import Any

from .workspace import workspace_settings


def cmd_retrieve(args: argparse.Namespace) -> int:
    from ..retrieval import Options
    from ..retrieval.workspace import retrieve_in_workspace

    options = Options(top_k=args.top, mode=args.mode, budget_tokens=args.budget, path_prefix=args.under,
                      outline_node=args.node, rerank_by=args.rerank)
    result = asyncio.run(retrieve_in_workspace(workspace_settings(args), args.question, options))
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    if args.json:
        print(json.dumps(result.as_dict(), indent=2, ensure_ascii=False))
    else:
        print(result.context, end="")
    return 0


def cmd_ask(args: argparse.Namespace) -> int:
    from ..retrieval import Options
    from ..retrieval.workspace import ask_in_workspace

    options = Options(top_k=args.top, mode=args.mode, path_prefix=args.under, outline_node=args.node,
                      rerank_by=args.rerank)

    async def run() -> int:
        # checked sentences as each completes (a model's sentence that fails its check is never
        # shown); notes (an extractive answer, an unreachable model) go to stderr
        events = ask_in_workspace(workspace_settings(args), args.question, options)
        async with contextlib.aclosing(events):
            return await _print_answer(events)

    return asyncio.run(run())


async def _print_answer(events: Any) -> int:
    async for event in events:
        if event["type"] == "sentence":
            print(("" if event["index"] == 0 else " ") + event["text"], end="", flush=True)
        elif event["type"] == "note":
            print(f"note: {event['message']}", file=sys.stderr)
        elif event["type"] == "error":
            print(f"error: {event['message']}", file=sys.stderr)
            return 1
        elif event["type"] == "final":
            print("" if event["answer"] else "No passage of the knowledge base answers this.")
            for c in event["citations"]:
                where = " › ".join([c.get("document", ""), *c.get("heading_path", [])]).strip(" ›")
                named = c.get("name") or c.get("title") or c["id"]
                print(f"  [{c['ref']}] {where or c['kind'] + ' ' + named}")
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    from ..mcp_server import serve_stdio

    serve_stdio(workspace_settings(args))
    return 0


MODES = ("passages are ranked alike in every mode; hybrid (default): with the entities, relations, "
         "pages and topics of the subjects the question names; local: the subjects, their neighbours "
         "and relations; global: their pages and topics")


RERANK = ("what reorders the fused passages: words (default: how closely their words meet the "
          "question's), llm (then the configured model reorders the first 10, one cached call; the "
          "fused order is kept, with a note, when it fails or none is configured), none")


def _scope_arguments(p: Any) -> None:
    """The mode and filters `retrieve` and `ask` share."""
    p.add_argument("--mode", choices=["local", "global", "hybrid"], default="hybrid", help=MODES)
    p.add_argument("--under", metavar="PATH", help="only documents whose path starts with PATH")
    p.add_argument("--node", metavar="TOPIC", help="only the documents of this outline topic (title or slug)")
    p.add_argument("--rerank", choices=["words", "llm", "none"], default="words", help=RERANK)


def add_commands(sub: Any) -> None:
    p = sub.add_parser("retrieve", help="evidence for a question: entities, pages, passages, context")
    p.add_argument("question")
    p.add_argument("--top", type=int, default=8, help="items per list (default 8); one ranking, cut")
    _scope_arguments(p)
    p.add_argument("--budget", type=int, default=2000, help="tokens of the context block")
    p.add_argument("--json", action="store_true", help="the evidence as JSON, not the context")
    p.set_defaults(func=cmd_retrieve)

    p = sub.add_parser("ask", help="an answer from the knowledge base, every sentence cited")
    p.add_argument("question")
    p.add_argument("--top", type=int, default=8, help="passages and items to answer from (default 8)")
    _scope_arguments(p)
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser("mcp", help="serve the knowledge base to MCP clients over stdio")
    p.set_defaults(func=cmd_mcp)
