"""The workspace as commands see it: the settings -w names; init, add and remove."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any


def workspace_settings(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    """The settings of the workspace -w names, else of the one holding the current folder."""
    from ..settings import load_settings
    from ..workspace import find_workspace

    workspace = find_workspace(Path(args.workspace) if args.workspace else None)
    return load_settings(workspace)


def cmd_init(args: argparse.Namespace) -> int:
    from ..workspace import init_workspace

    if args.dir is not None and args.workspace and Path(args.dir) != Path(args.workspace):
        from ..errors import InputError

        raise InputError(f"two workspace folders given: {args.workspace} (by -w) and {args.dir}",
                         hint="give one of them")
    folder = args.dir if args.dir is not None else (args.workspace or ".")
    path = init_workspace(Path(folder))
    print(f"Workspace ready at {path}. Add documents with: compendium -w {folder} add PATH")
    return 0


def cmd_add(args: argparse.Namespace) -> int:
    from ..workspace import SUPPORTED_EXTENSIONS, Added, add_documents

    settings = workspace_settings(args)
    added = Added()
    add_documents(settings.workspace, [Path(p) for p in args.paths], added)
    for folder in added.empty:
        print(f"warning: {folder} holds no document to add (supported: "
              f"{', '.join(sorted(SUPPORTED_EXTENSIONS))}; hidden files are left out)", file=sys.stderr)
    for source, why in added.refused:
        print(f"refused {source}: {why}", file=sys.stderr)
    others = f"; {added.other_types} file(s) of other types left out" if added.other_types else ""
    others += f"; {added.links} symbolic link(s) left out" if added.links else ""
    others += (f"; {added.source_copies} source copies of a Sphinx build's pages (_sources/) left out, "
               "the pages are added as HTML") if added.source_copies else ""
    print(f"Added {len(added.copied)} document(s) to {settings.workspace / 'documents'}{others}")
    if added.refused:
        print(f"error: {len(added.refused)} file(s) refused; the others were added", file=sys.stderr)
        return 2
    return 0


def cmd_remove(args: argparse.Namespace) -> int:
    from ..operations import remove_documents

    settings = workspace_settings(args)
    removed = asyncio.run(remove_documents(settings, [Path(p) for p in args.paths]))
    for path in removed:
        print(f"Removed {path}; the next compile purges what came only from it")
    return 0


def add_commands(sub: Any) -> None:
    p = sub.add_parser("init", help="make a workspace: compendium.yaml and a documents/ folder")
    p.add_argument("dir", nargs="?", default=None, help="the folder (default: -w, else the current one)")
    p.set_defaults(func=cmd_init)

    p = sub.add_parser("add", help="copy documents or folders into the workspace (Markdown, reST, text, HTML, PDF, DOCX)")
    p.add_argument("paths", nargs="+")
    p.set_defaults(func=cmd_add)

    p = sub.add_parser("remove", help="remove documents; the next compile drops what came only from them")
    p.add_argument("paths", nargs="+")
    p.set_defaults(func=cmd_remove)
