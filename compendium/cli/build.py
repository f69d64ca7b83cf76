"""compile, status, changes and export: build the wiki, say how the last build went, write it out."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .workspace import workspace_settings

if TYPE_CHECKING:
    from .progress import BarProgress, PlainProgress

# A compile exits with its status's code (README, "Exit codes").
COMPILE_EXIT_CODES = {"succeeded": 0, "failed": 1, "budget_exceeded": 6, "cancelled": 7, "partial": 8}


def _workspace_flag(args: argparse.Namespace) -> str:
    return f" -w {args.workspace}" if args.workspace else ""


def cmd_compile(args: argparse.Namespace) -> int:
    from ..operations import compile_workspace
    from .progress import BarProgress, PlainProgress

    settings = workspace_settings(args)
    sink: PlainProgress | BarProgress = BarProgress() if sys.stderr.isatty() and not args.plain else PlainProgress()
    try:
        report = asyncio.run(compile_workspace(settings, template_name=args.template, events=sink, wait=args.wait,
                                               retry_failed=args.retry_failed))
    finally:
        sink.close()
    data = report.as_dict(settings.llm)
    if args.report:
        Path(args.report).write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    pages = data["pages"]
    counts = data["counts"]
    totals = data["totals"]
    print(
        f"Compiled with the {data['engine']} engine: {data['documents']} documents, {data['chunks']} chunks, "
        f"{counts.get('entities', 0)} entities, {counts.get('concepts', 0)} concepts, {counts.get('relations', 0)} relations, "
        f"{counts.get('topics', 0)} topics; pages {pages['created']} created, {pages['updated']} updated, "
        f"{pages['unchanged']} unchanged, {pages['deleted']} deleted; "
        f"{totals['llm_calls']} LLM calls, {totals['prompt_tokens'] + totals['completion_tokens']} tokens"
        + (f" ({totals['hedged_calls']} calls sent twice after stalling, counted twice)."
           if totals.get("hedged_calls") else ".")
    )
    code = COMPILE_EXIT_CODES[report.status]
    if code:
        print(f"Compile {report.status}: {report.error or 'run compile again to resume'}", file=sys.stderr)
        return code
    if data["documents"]:
        print("Export the wiki with: compendium export --format site OUT  (or vault, json, graphml, tables)")
    else:
        print(f"Nothing to compile: {settings.workspace / 'documents'} holds no documents; add some with "
              f"`compendium{_workspace_flag(args)} add PATH`", file=sys.stderr)
    return 0


def _local_time(seconds: float | None) -> str:
    if not seconds:
        return "—"
    return time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(seconds))


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _counted(counts: dict[str, int], *names: str) -> str:
    return ", ".join(f"{counts.get(n, 0):,} {n}" for n in names)


FAILED_LISTED = 10  # failed documents or pages `status` names, per kind


def _failed_rows(failed: dict[str, Any]) -> list[tuple[str, str]]:
    """A row per failed document and page with its reason (the first few), and the chunks' count."""
    rows: list[tuple[str, str]] = []
    for kind in ("documents", "pages"):
        items = sorted((failed.get(kind) or {}).items())
        rows += [("", f"{kind[:-1]} {name}: {reason}") for name, reason in items[:FAILED_LISTED]]
        if len(items) > FAILED_LISTED:
            rows.append(("", f"and {_plural(len(items) - FAILED_LISTED, kind[:-1])} more (status --json lists them)"))
    if failed.get("chunks"):
        rows.append(("", f"{_plural(failed['chunks'], 'chunk')} not extracted (the next compile asks again)"))
    return [("Failed", rows[0][1]), *rows[1:]] if rows else rows


def cmd_status(args: argparse.Namespace) -> int:
    from ..operations import workspace_status

    status = asyncio.run(workspace_status(workspace_settings(args)))
    if args.json:
        print(json.dumps(status, indent=2, default=str))
        return 0
    counts = status["counts"]
    store = status["store"]
    rows = [
        ("Workspace", status["workspace"]),
        ("Knowledge base", status["knowledge_base"]),
        ("Engine", status["engine"]),
        ("Store", f"{store.get('url') or store.get('backend')} (vector search: {store.get('vector_search', '?')}, full text: {store.get('full_text', 'none')})"),
        ("Documents", f"{counts.get('documents', 0):,} ({counts.get('chunks', 0):,} chunks)"),
        ("Compiled", _counted(counts, "pages", "entities", "concepts", "relations", "claims", "topics")),
    ]
    last = status["last_compile"]
    if last:
        pages = last.get("pages") or {}
        outcome = f"{last.get('status')} at {_local_time(last.get('finished_at'))}, template {last.get('template')}"
        rows.append(("Last compile", outcome))
        rows.append(("", "pages " + _counted(pages, "created", "updated", "unchanged", "deleted")))
        if last.get("error"):
            rows.append(("", last["error"]))
        rows += _failed_rows(status.get("failed") or {})
    else:
        rows.append(("Last compile", "never: run `compendium compile`"))
    for running in status["running_compiles"]:
        rows.append(("Compiling now", f"template {running['template']}, {running['holder']}"))
    width = max(len(label) for label, _ in rows) + 2
    for label, value in rows:
        print(f"{label + ':' if label else '':<{width}}{value}")
    return 0


def cmd_changes(args: argparse.Namespace) -> int:
    from ..operations import compile_changes

    last = asyncio.run(compile_changes(workspace_settings(args)))
    if last is None:
        print("No compile yet.")
        return 0
    print(f"Last compile ({last['template']}, {last['status']}): " + ", ".join(f"{v} {k}" for k, v in last["pages"].items()))
    for change in last.get("changes", []):
        if change["action"] == "unchanged" and not args.all:
            continue
        reason = f"  ({change['reason']})" if change.get("reason") else ""
        print(f"  {change['action']:<9} {change['slug']}{reason}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from ..operations import export_workspace

    result = asyncio.run(export_workspace(workspace_settings(args), args.format, Path(args.out)))
    print(f"Wrote {result.format} export to {result.path} ({_plural(result.pages, 'page')}, "
          f"{_plural(result.files, 'file')})")
    return 0


def add_commands(sub: Any) -> None:
    p = sub.add_parser("compile", help="build the wiki, entity graph and topics from the documents")
    p.add_argument("--template", help="template name or YAML file (default: from compendium.yaml)")
    p.add_argument("--report", help="write the JSON report to this file")
    p.add_argument("--plain", action="store_true", help="plain progress lines even on a terminal")
    p.add_argument("--retry-failed", action="store_true",
                   help="ask again for pages that failed twice on the same evidence (otherwise left until it changes)")
    p.add_argument("--wait", action="store_true",
                   help="if another compile of this knowledge base and template runs, wait for it (default: exit)")
    p.set_defaults(func=cmd_compile)

    p = sub.add_parser("status", help="what the workspace holds and how its last compile went")
    p.add_argument("--json", action="store_true", help="the same as JSON, times as Unix seconds (for scripts)")
    p.set_defaults(func=cmd_status)

    p = sub.add_parser("changes", help="pages the last compile created, updated and deleted")
    p.add_argument("--all", action="store_true", help="list unchanged pages too")
    p.set_defaults(func=cmd_changes)

    p = sub.add_parser("export", help="write the wiki as a vault, static site, JSON, GraphML or CSV tables")
    p.add_argument("--format", required=True, choices=["vault", "site", "json", "graphml", "tables"])
    p.add_argument("out")
    p.set_defaults(func=cmd_export)
