"""templates: list the templates a workspace can compile with, show one, validate a file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def cmd_templates(args: argparse.Namespace) -> int:
    from ..templates import registry

    if args.action != "list" and not args.name:
        print("compendium templates show|validate needs a NAME or FILE", file=sys.stderr)
        return 2
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


def add_commands(sub: Any) -> None:
    p = sub.add_parser("templates", help="list, show or validate templates")
    p.add_argument("action", choices=["list", "show", "validate"])
    p.add_argument("name", nargs="?", help="template name (show) or YAML file (validate)")
    p.set_defaults(func=cmd_templates)
