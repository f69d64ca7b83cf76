"""The `compendium` command line: parses arguments, calls one library function, prints.

Each module of this package holds a group of commands: the functions they run and an
`add_commands(sub)` that adds their parsers. This one builds the parser from them and turns
what stops a command into a one-line message and an exit code.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import CompendiumError
from ..lazy_names import lazy_getattr
from . import build, questions, server, store, templates, workspace
from .build import COMPILE_EXIT_CODES

if TYPE_CHECKING:
    from .progress import bar_end

# bar_end is loaded when asked for: a question draws no bars (nor imports the compile's events)
__getattr__ = lazy_getattr(__name__, {"bar_end": ".progress"}, globals())

__all__ = ["CLOSED_PIPE", "COMPILE_EXIT_CODES", "INTERRUPTED", "bar_end", "build_parser", "main"]

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

# Exit codes (README, "Exit codes"). A compile exits with its status's code (COMPILE_EXIT_CODES);
# any command stopped by an error exits with that error's code (compendium.errors: 2 input,
# 3 store, 4 not found, 5 LLM endpoint, 6 budget, 7 cancelled, 9 busy).
INTERRUPTED = 130
CLOSED_PIPE = 141  # 128 + SIGPIPE, as a shell reports a command whose reader went away

COMMAND_GROUPS = (workspace, build, templates, store, server, questions)  # in the order --help lists them


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    parser = argparse.ArgumentParser(prog="compendium", description=HELP, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"compendium {__version__}")
    parser.add_argument("-w", "--workspace", metavar="DIR",
                        help="the workspace folder (default: the one holding the current folder)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", title="commands")
    for group in COMMAND_GROUPS:
        group.add_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
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

