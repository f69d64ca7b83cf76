"""serve, worker and keys: a server of the web UI and API, the workers of its compiles, keys to sign in."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Any

DEFAULT_TENANT = "local"  # the tenant of a key made inside a workspace, unless --tenant says


def _server_settings(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    """Without --data-dir, the server serves the workspace it is started in (or -w names):
    that workspace's settings, store and knowledge base. --data-dir is a server's own folder
    of tenants' knowledge bases (settings from -w, if given)."""
    from ..errors import WorkspaceError
    from ..settings import load_settings
    from ..workspace import find_workspace

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
    from ..storage.factory import sqlite_path
    from ..tenancy import WorkspaceLink

    if args.data_dir is not None or settings.workspace is None:
        return None
    folder = Path(settings.workspace).resolve()
    url = settings.store_url
    own = url.startswith("sqlite:///") and Path(sqlite_path(url)).resolve().is_relative_to(folder)
    return WorkspaceLink(folder=folder, knowledge_base=settings.knowledge_base,
                         default_template=settings.default_template, own_store=own)


def cmd_serve(args: argparse.Namespace) -> int:
    from ..api.app import serve

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
    from ..compiler.worker import WorkerOptions, work

    settings, data_dir = _server_settings(args)
    if args.tasks:
        from ..distributed.worker import run_task_worker
        from ..engines.openai_client import public_url

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
    from ..errors import InputError
    from ..tenancy import issue_key, server_store_url

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


def add_commands(sub: Any) -> None:
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
