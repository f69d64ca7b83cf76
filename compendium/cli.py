"""The `compendium` command line: parses arguments, calls one library function, prints."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .errors import CompendiumError
from .pipeline.events import (
    CompileFinished,
    Event,
    Message,
    PhaseFinished,
    PhaseProgress,
    PhaseStarted,
)

HELP = """\
Compile a folder of documents into a wiki whose every sentence cites its source, with an
entity graph and topic pages. Runs offline by default; name an OpenAI-compatible endpoint
in compendium.yaml for LLM-written pages.

Start here:
  compendium init kb                 make a workspace in ./kb
  compendium -w kb add ~/notes       copy documents into kb/documents/
  compendium -w kb compile           build the wiki (only what changed is rebuilt)
  compendium -w kb status            what it holds and how the last compile went
  compendium -w kb export --format site out/
  cd kb && compendium keys create && compendium serve
                                     browse it at http://127.0.0.1:8321/ with that key
"""
EPILOG = "Run `compendium COMMAND --help` for a command's options. Exit codes: see the README."

# Exit codes (README, "Exit codes"). A compile exits with its status's code; any command stopped
# by an error exits with that error's code (compendium.errors: 2 input, 3 store, 4 not found,
# 5 LLM endpoint, 6 budget, 7 cancelled, 9 busy).
COMPILE_EXIT_CODES = {"succeeded": 0, "failed": 1, "budget_exceeded": 6, "cancelled": 7, "partial": 8}
INTERRUPTED = 130
CLOSED_PIPE = 141  # 128 + SIGPIPE, as a shell reports a command whose reader went away
DEFAULT_TENANT = "local"  # the tenant of a key made inside a workspace, unless --tenant says


class PlainProgress:
    """One line per phase start/finish and per message: for logs and pipes."""

    def __init__(self, out: Any = None):
        self._out = out

    @property
    def out(self) -> Any:
        return self._out or sys.stderr

    def emit(self, event: Event) -> None:
        if isinstance(event, PhaseStarted):
            print(f"{event.phase}: started", file=self.out)
        elif isinstance(event, PhaseFinished):
            r = event.result
            tokens = r.get("prompt_tokens", 0) + r.get("completion_tokens", 0)
            print(
                f"{event.phase}: {r.get('done', 0)} done, {r.get('skipped', 0)} unchanged, "
                f"{r.get('failed', 0)} failed, {f'{tokens} tokens, ' if tokens else ''}{r.get('seconds', 0):.2f}s",
                file=self.out,
            )
        elif isinstance(event, Message):
            print(f"{event.level}: {event.text}", file=self.out)

    def close(self) -> None:
        pass


class BarProgress:
    """A progress bar per phase on a terminal: items done of a total known before it is drawn
    (a phase is shown from its first progress with a total), tokens once there are any, and an
    end that says what was unchanged and what failed."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.console = Console(stderr=True)
        self.progress = Progress(
            TextColumn("{task.description:<8}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[detail]}"),
            TimeElapsedColumn(),
            console=self.console,
        )
        self.tasks: dict[str, Any] = {}
        self.progress.start()

    def emit(self, event: Event) -> None:
        if isinstance(event, PhaseStarted):
            self.tasks[event.phase] = self.progress.add_task(event.phase, total=None, detail="", visible=False)
        elif isinstance(event, PhaseProgress) and event.phase in self.tasks and event.total > 0:
            self.progress.update(self.tasks[event.phase], completed=event.done, total=event.total,
                                 detail=f"{event.tokens} tokens" if event.tokens else "", visible=True)
        elif isinstance(event, PhaseFinished) and event.phase in self.tasks:
            task = self.progress.tasks[self.tasks[event.phase]]
            ran = (int(task.completed), int(task.total)) if task.total else None
            self.progress.update(self.tasks[event.phase], visible=True, **bar_end(event.result, ran))
        elif isinstance(event, Message):
            self.progress.console.print(f"[{'red' if event.level == 'error' else 'yellow'}]{event.level}[/]: {event.text}")
        elif isinstance(event, CompileFinished):
            pass

    def close(self) -> None:
        self.progress.stop()


def bar_end(result: dict[str, Any], ran: tuple[int, int] | None = None) -> dict[str, Any]:
    """A finished phase's bar: done and unchanged items of the total, then what failed (or ✓)
    and the tokens spent, if any. A bar that ran on a total of its own (`ran`: done, total;
    REDUCE counts chunks, its result entities) ends on that total, never redrawn in other units."""
    total = result.get("items", 0)
    reached = min(result.get("done", 0) + result.get("skipped", 0), total)
    if ran is not None and ran[1] > 0 and ran[1] != total:
        total, reached = ran[1], ran[1] if not result.get("failed") else min(ran[0], ran[1])
    tokens = result.get("prompt_tokens", 0) + result.get("completion_tokens", 0)
    parts = [f"{result['skipped']} unchanged"] if result.get("skipped") else []
    parts.append(f"{result['failed']} failed" if result.get("failed") else "✓")
    if tokens:
        parts.append(f"{tokens} tokens")
    return {"completed": reached if total else 1, "total": total or 1, "detail": ", ".join(parts)}


def _settings(args: argparse.Namespace, *, need_workspace: bool = True):  # type: ignore[no-untyped-def]
    from .settings import load_settings
    from .workspace import find_workspace

    workspace = find_workspace(Path(args.workspace) if args.workspace else None) if need_workspace else None
    return load_settings(workspace)


def _workspace_flag(args: argparse.Namespace) -> str:
    return f" -w {args.workspace}" if args.workspace else ""


def cmd_init(args: argparse.Namespace) -> int:
    from .workspace import init_workspace

    if args.dir is not None and args.workspace and Path(args.dir) != Path(args.workspace):
        from .errors import InputError

        raise InputError(f"two workspace folders given: {args.workspace} (by -w) and {args.dir}",
                         hint="give one of them")
    folder = args.dir if args.dir is not None else (args.workspace or ".")
    path = init_workspace(Path(folder))
    print(f"Workspace ready at {path}. Add documents with: compendium -w {folder} add PATH")
    return 0


def cmd_add(args: argparse.Namespace) -> int:
    from .workspace import SUPPORTED_EXTENSIONS, Added, add_documents

    settings = _settings(args)
    added = Added()
    add_documents(settings.workspace, [Path(p) for p in args.paths], added)
    for folder in added.empty:
        print(f"warning: {folder} holds no document to add (supported: "
              f"{', '.join(sorted(SUPPORTED_EXTENSIONS))}; hidden files are left out)", file=sys.stderr)
    for source, why in added.refused:
        print(f"refused {source}: {why}", file=sys.stderr)
    others = f"; {added.other_types} file(s) of other types left out" if added.other_types else ""
    print(f"Added {len(added.copied)} document(s) to {settings.workspace / 'documents'}{others}")
    if added.refused:
        print(f"error: {len(added.refused)} file(s) refused; the others were added", file=sys.stderr)
        return 2
    return 0


def cmd_remove(args: argparse.Namespace) -> int:
    from .operations import remove_documents

    settings = _settings(args)
    removed = asyncio.run(remove_documents(settings, [Path(p) for p in args.paths]))
    for path in removed:
        print(f"Removed {path}; the next compile purges what came only from it")
    return 0


def cmd_compile(args: argparse.Namespace) -> int:
    from .operations import compile_workspace

    settings = _settings(args)
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
        f"{totals['llm_calls']} LLM calls, {totals['prompt_tokens'] + totals['completion_tokens']} tokens."
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
    from .operations import workspace_status

    status = asyncio.run(workspace_status(_settings(args)))
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
    from .operations import compile_changes

    last = asyncio.run(compile_changes(_settings(args)))
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
    from .operations import export_workspace

    result = asyncio.run(export_workspace(_settings(args), args.format, Path(args.out)))
    print(f"Wrote {result.format} export to {result.path} ({_plural(result.pages, 'page')}, "
          f"{_plural(result.files, 'file')})")
    return 0


def cmd_templates(args: argparse.Namespace) -> int:
    from .templates import registry

    workspace = None
    if args.workspace:
        workspace = Path(args.workspace)
    if args.action == "list":
        for info in registry.list_templates(workspace):
            print(f"{info.name:<16} v{info.version:<4} {info.source:<10} {info.description}")
    elif args.action == "show":
        print(registry.show_template(args.name, workspace))
    else:
        path = Path(args.name)
        template = (
            registry.validate_template_file(path)
            if path.suffix in (".yaml", ".yml") or path.exists()
            else registry.load_template(args.name, workspace=workspace)
        )
        print(f"{args.name}: valid template '{template.name}' version {template.version}")
    return 0


def cmd_store_copy(args: argparse.Namespace) -> int:
    from .operations import copy_between_stores, store_url

    source = args.source
    if source is None:
        source = store_url(_settings(args))
    counts = asyncio.run(copy_between_stores(source, args.target, kb=args.kb))
    print("Copied " + ", ".join(f"{n} {kind}" for kind, n in counts.items() if n) + f" to {args.target}")
    return 0


def _server_settings(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    """Without --data-dir, the server serves the workspace it is started in (or -w names):
    that workspace's settings, store and knowledge base. --data-dir is a server's own folder
    of tenants' knowledge bases (settings from -w, if given)."""
    from .errors import WorkspaceError
    from .settings import load_settings
    from .workspace import find_workspace

    workspace = Path(args.workspace) if args.workspace else None
    if args.data_dir is None:
        try:
            workspace = find_workspace(workspace)
        except WorkspaceError:
            if workspace is not None:
                raise
    settings = load_settings(workspace)
    data_dir = (Path(args.data_dir) if args.data_dir else (settings.workspace or Path.cwd())).resolve()
    return settings, data_dir


def _served_workspace(args: argparse.Namespace, settings):  # type: ignore[no-untyped-def]
    """The workspace a server started this way serves (None with --data-dir or outside one)."""
    from .storage.factory import sqlite_path
    from .tenancy import WorkspaceLink

    if args.data_dir is not None or settings.workspace is None:
        return None
    folder = Path(settings.workspace).resolve()
    url = settings.store_url
    own = url.startswith("sqlite:///") and Path(sqlite_path(url)).resolve().is_relative_to(folder)
    return WorkspaceLink(folder=folder, knowledge_base=settings.knowledge_base,
                         default_template=settings.default_template, own_store=own)


def cmd_serve(args: argparse.Namespace) -> int:
    from .api.app import serve

    settings, data_dir = _server_settings(args)
    # The edge: the admin key comes from the environment, never from a file.
    admin_key = os.environ.get("COMPENDIUM_ADMIN_KEY") or None
    link = _served_workspace(args, settings)
    if link is not None:
        print(f"Serving the workspace {link.folder} (knowledge base {link.knowledge_base!r}) at "
              f"http://{args.host}:{args.port}/ : sign in with a key from `compendium keys create` run there",
              file=sys.stderr)
    serve(settings, data_dir=data_dir, host=args.host, port=args.port, admin_key=admin_key,
          run_worker=not args.no_worker, workspace=link)
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    from .compiler.worker import WorkerOptions, work

    settings, data_dir = _server_settings(args)
    if args.tasks:
        from .distributed.worker import run_task_worker
        from .engines.openai_client import public_url

        if settings.distributed.broker:  # without one, run_task_worker says what to set
            print(f"worker: answering compile tasks from {public_url(settings.distributed.broker)}, "
                  f"{args.concurrency} at a time (Ctrl-C stops; its unfinished tasks go to another worker)",
                  file=sys.stderr)
        run_task_worker(settings, concurrency=args.concurrency, name=args.name)
        return 0
    options = WorkerOptions(lease_seconds=args.lease, poll_seconds=args.poll)
    print(f"worker: running jobs of {data_dir} (Ctrl-C stops; a running job is resumed by the next worker)",
          file=sys.stderr)
    asyncio.run(work(settings, data_dir, options=options))
    return 0


def cmd_keys(args: argparse.Namespace) -> int:
    from .errors import InputError
    from .tenancy import issue_key, server_store_url

    settings, data_dir = _server_settings(args)
    link = _served_workspace(args, settings)
    tenant = args.tenant or (DEFAULT_TENANT if link is not None else None)
    if tenant is None:
        raise InputError("name the key's tenant with --tenant NAME",
                         hint=f"inside a workspace the tenant defaults to {DEFAULT_TENANT!r}")
    key = asyncio.run(issue_key(server_store_url(settings.store_url, data_dir), tenant, name=args.name,
                                workspace=link))
    print(key)
    print(f"(an API key of tenant {tenant!r}; it is shown only this once)", file=sys.stderr)
    if link is not None:
        print(f"It opens the knowledge base {link.knowledge_base!r} of {link.folder}: run `compendium serve` "
              "there and sign in with it.", file=sys.stderr)
    return 0


def cmd_retrieve(args: argparse.Namespace) -> int:
    from .retrieval import Options
    from .retrieval.workspace import retrieve_in_workspace

    options = Options(top_k=args.top, mode=args.mode, budget_tokens=args.budget, path_prefix=args.under,
                      outline_node=args.node)
    result = asyncio.run(retrieve_in_workspace(_settings(args), args.question, options))
    if args.json:
        print(json.dumps(result.as_dict(), indent=2, ensure_ascii=False))
    else:
        print(result.context, end="")
    return 0


def cmd_ask(args: argparse.Namespace) -> int:
    from .retrieval import Options
    from .retrieval.workspace import ask_in_workspace

    options = Options(top_k=args.top, mode=args.mode, path_prefix=args.under, outline_node=args.node)

    async def run() -> int:
        # checked sentences as each completes (a model's sentence that fails its check is never
        # shown); notes (an extractive answer, an unreachable model) go to stderr
        events = ask_in_workspace(_settings(args), args.question, options)
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
    from .mcp_server import serve_stdio

    serve_stdio(_settings(args))
    return 0


def add_retrieval_commands(sub: Any) -> None:
    """retrieve, ask and mcp: questions over the compiled knowledge base."""

    modes = ("passages are ranked alike in every mode; hybrid (default): with the entities, relations, "
             "pages and topics of the subjects the question names; local: the subjects, their neighbours "
             "and relations; global: their pages and topics")
    p = sub.add_parser("retrieve", help="evidence for a question: entities, pages, passages, context")
    p.add_argument("question")
    p.add_argument("--top", type=int, default=8, help="items per list (default 8); one ranking, cut")
    p.add_argument("--mode", choices=["local", "global", "hybrid"], default="hybrid", help=modes)
    p.add_argument("--under", metavar="PATH", help="only documents whose path starts with PATH")
    p.add_argument("--node", metavar="TOPIC", help="only the documents of this outline topic (title or slug)")
    p.add_argument("--budget", type=int, default=2000, help="tokens of the context block")
    p.add_argument("--json", action="store_true", help="the evidence as JSON, not the context")
    p.set_defaults(func=cmd_retrieve)

    p = sub.add_parser("ask", help="an answer from the knowledge base, every sentence cited")
    p.add_argument("question")
    p.add_argument("--top", type=int, default=8, help="passages and items to answer from (default 8)")
    p.add_argument("--mode", choices=["local", "global", "hybrid"], default="hybrid", help=modes)
    p.add_argument("--under", metavar="PATH", help="only documents whose path starts with PATH")
    p.add_argument("--node", metavar="TOPIC", help="only the documents of this outline topic (title or slug)")
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser("mcp", help="serve the knowledge base to MCP clients over stdio")
    p.set_defaults(func=cmd_mcp)


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(prog="compendium", description=HELP, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"compendium {__version__}")
    parser.add_argument("-w", "--workspace", metavar="DIR",
                        help="the workspace folder (default: the one holding the current folder)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", title="commands")

    p = sub.add_parser("init", help="make a workspace: compendium.yaml and a documents/ folder")
    p.add_argument("dir", nargs="?", default=None, help="the folder (default: -w, else the current one)")
    p.set_defaults(func=cmd_init)

    p = sub.add_parser("add", help="copy documents or folders into the workspace (Markdown, reST, text, HTML, PDF, DOCX)")
    p.add_argument("paths", nargs="+")
    p.set_defaults(func=cmd_add)

    p = sub.add_parser("remove", help="remove documents; the next compile drops what came only from them")
    p.add_argument("paths", nargs="+")
    p.set_defaults(func=cmd_remove)

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

    p = sub.add_parser("templates", help="list, show or validate templates")
    p.add_argument("action", choices=["list", "show", "validate"])
    p.add_argument("name", nargs="?", help="template name (show) or YAML file (validate)")
    p.set_defaults(func=cmd_templates)
    p = sub.add_parser("store", help="copy a store's records to another store (e.g. SQLite to MariaDB)")
    store_sub = p.add_subparsers(dest="store_command", required=True)
    c = store_sub.add_parser("copy", help="copy every record from one store URL to another")
    c.add_argument("source", nargs="?", help="source store URL (default: the workspace's store)")
    c.add_argument("target", help="target store URL")
    c.add_argument("--kb", help="copy only this knowledge base")
    c.set_defaults(func=cmd_store_copy)

    p = sub.add_parser("serve", help="browse and compile in a web UI and HTTP API (default: this workspace)",
                       description="Serve the web UI (/ui/) and the HTTP API (/docs). Inside a workspace it "
                       "serves that workspace: sign in with a key from `compendium keys create` made there. "
                       "With --data-dir it is a server of many tenants' knowledge bases.")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8321)
    p.add_argument("--data-dir", metavar="DIR",
                   help="serve tenants' knowledge bases kept in DIR instead of this workspace")
    p.add_argument("--no-worker", action="store_true", help="do not run compile jobs in this process")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("worker", help="run the queued and scheduled compiles of a server's store")
    p.add_argument("--data-dir", metavar="DIR", help="the data folder of a `serve --data-dir DIR` server")
    p.add_argument("--lease", type=float, default=60.0, help="seconds a job is held between heartbeats")
    p.add_argument("--poll", type=float, default=1.0, help="seconds between looks for work")
    p.add_argument("--tasks", action="store_true",
                   help="run tasks of compiles (MAP batches, REDUCE blocks, REFINE pages) from the broker "
                        "COMPENDIUM_BROKER names, against the store COMPENDIUM_STORE names")
    p.add_argument("--concurrency", type=int, default=4, metavar="N",
                   help="with --tasks: tasks (model calls) one worker runs at once (default 4)")
    p.add_argument("--name", help="with --tasks: the worker's name in logs and errors (default compendium-PID@host)")
    p.set_defaults(func=cmd_worker)

    p = sub.add_parser("keys", help="make an API key to sign in to `compendium serve` with",
                       description="Print a new API key. Made inside a workspace, it opens that "
                       "workspace's knowledge base in `compendium serve`.")
    p.add_argument("action", choices=["create"])
    p.add_argument("--tenant", help=f"tenant name, created if new (default inside a workspace: {DEFAULT_TENANT})")
    p.add_argument("--name", default="", help="a label for the key")
    p.add_argument("--data-dir", metavar="DIR", help="the data folder of a `serve --data-dir DIR` server")
    p.set_defaults(func=cmd_keys)
    add_retrieval_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "templates" and args.action != "list" and not args.name:
        print("compendium templates show|validate needs a NAME or FILE", file=sys.stderr)
        return 2
    try:
        code = int(args.func(args))
        sys.stdout.flush()  # here, not at exit, so a closed pipe is met where it is handled
        return code
    except BrokenPipeError:
        # The reader went away (`compendium status | head -1`): stop quietly, as cat does.
        # Further writes go nowhere so Python's own flush at exit does not complain.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return CLOSED_PIPE
    except CompendiumError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except OSError as exc:  # a file or folder the command could not use: name it
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: what was stored is kept; run the command again to resume", file=sys.stderr)
        return INTERRUPTED


if __name__ == "__main__":
    raise SystemExit(main())
