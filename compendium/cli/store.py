"""store copy: copy a store's records to another store."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from .workspace import workspace_settings


def cmd_store_copy(args: argparse.Namespace) -> int:
    from ..operations import copy_between_stores, store_url

    source = args.source
    if source is None:
        source = store_url(workspace_settings(args))
    counts = asyncio.run(copy_between_stores(source, args.target, kb=args.kb))
    print("Copied " + ", ".join(f"{n} {kind}" for kind, n in counts.items() if n) + f" to {args.target}")
    return 0


def add_commands(sub: Any) -> None:
    p = sub.add_parser("store", help="copy a store's records to another store (e.g. SQLite to MariaDB)")
    store_sub = p.add_subparsers(dest="store_command", required=True)
    c = store_sub.add_parser("copy", help="copy every record from one store URL to another")
    c.add_argument("source", nargs="?", help="source store URL (default: the workspace's store)")
    c.add_argument("target", help="target store URL")
    c.add_argument("--kb", help="copy only this knowledge base")
    c.set_defaults(func=cmd_store_copy)
