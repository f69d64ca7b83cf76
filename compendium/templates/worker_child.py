"""The jobs a template worker child runs (worker.py starts this module as `python -m` would):
check a template, render a prompt, both in-process under the sandbox's limits."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import TemplateError
from .loader import parse_template
from .render import render_here
from .sandbox import RenderLimit
from .worker import MEMORY_LIMIT, serve


def _parse(args: dict[str, Any]) -> Any:
    return parse_template(**args).model_dump(mode="json")


def _render(args: dict[str, Any]) -> Any:
    return render_here(args["source"], where=args["where"], **args["variables"])


def _guarded(job: Callable[[dict[str, Any]], Any], where: str) -> Callable[[dict[str, Any]], Any]:
    """`job`, whose errors say whether a sandbox limit stopped it (the parent then refuses the
    prompt at once next time) and whose running out of memory is the template's error."""

    def run(args: dict[str, Any]) -> Any:
        try:
            return job(args)
        except TemplateError as exc:
            exc.slow = isinstance(exc.__cause__, RenderLimit)  # type: ignore[attr-defined]
            raise
        except MemoryError:
            raise TemplateError(
                f"the template needs more memory than a template may use ({MEMORY_LIMIT >> 20} MB)",
                file=args.get(where),
            ) from None

    return run


# The job table: the names callers send (untrusted.py, render.py), and which argument names
# the file or prompt a failure is about.
JOBS = {"parse": _guarded(_parse, "source"), "render": _guarded(_render, "where")}

if __name__ == "__main__":
    serve(JOBS)
