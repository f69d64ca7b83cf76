"""Compile progress on stderr: a bar per phase on a terminal, one line per event in logs and pipes."""

from __future__ import annotations

import sys
from typing import Any

from ..pipeline.events import (
    CompileFinished,
    Event,
    Message,
    PhaseFinished,
    PhaseProgress,
    PhaseStarted,
    phase_end,
)


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
            end = phase_end(r)
            settled = "".join(f"{part}, " for part in settled_parts(end))
            failed = end["stopped"] or f"{r.get('failed', 0)} failed"
            print(
                f"{event.phase}: {r.get('done', 0)} done, {r.get('skipped', 0)} unchanged, {settled}"
                f"{failed}, {f'{tokens} tokens, ' if tokens else ''}{r.get('seconds', 0):.2f}s",
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
    """A finished phase's bar: what was settled of the total (events.phase_end), then what was
    unchanged, withheld, refused and failed (or ✓) and the tokens spent, if any."""
    end = phase_end(result, ran)
    total, reached = end["total"], end["reached"]
    tokens = result.get("prompt_tokens", 0) + result.get("completion_tokens", 0)
    parts = [f"{end['skipped']} unchanged"] if end["skipped"] else []
    parts += settled_parts(end)
    parts.append(end["stopped"] or (f"{end['failed']} failed" if end["failed"] else "✓"))
    if tokens:
        parts.append(f"{tokens} tokens")
    return {"completed": reached if total else 1, "total": total or 1, "detail": ", ".join(parts)}


def settled_parts(end: dict[str, int]) -> list[str]:
    """What ended neither done nor unchanged: pages withheld (nothing cited, never shown) and
    rewrites refused (the page stands as it was)."""
    parts = [f"{end['withheld']} withheld"] if end["withheld"] else []
    if end["rejected"]:
        parts.append(f"{end['rejected']} rewrite{'s' if end['rejected'] != 1 else ''} refused")
    return parts
