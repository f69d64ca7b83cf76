"""Progress events the orchestrator emits; the CLI draws them, the API streams them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class PhaseStarted:
    phase: str
    total: int


@dataclass(frozen=True, slots=True)
class PhaseProgress:
    phase: str
    done: int
    total: int
    tokens: int = 0


@dataclass(frozen=True, slots=True)
class PhaseFinished:
    phase: str
    result: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Message:
    level: str  # info | warning | error
    text: str


@dataclass(frozen=True, slots=True)
class CompileFinished:
    report: dict[str, Any] = field(default_factory=dict)


Event = PhaseStarted | PhaseProgress | PhaseFinished | Message | CompileFinished


STOPPED = {"failed": "failed", "budget_exceeded": "stopped: budget exceeded", "cancelled": "cancelled"}


def phase_end(result: dict[str, Any], ran: tuple[int, int] | None = None) -> dict[str, Any]:
    """How a finished phase's count ends, the same on a terminal and on the job page: the items
    settled (done, unchanged, withheld, a rewrite refused) of the total, and those counts. A phase
    whose progress ran on a total of its own (`ran`: done, total; REDUCE counts chunks, its result
    entities) ends on that total, never redrawn in other units; full unless something failed.
    A phase that stopped (it failed as a whole, ran out of budget, was cancelled) ends where its
    progress was, saying how it stopped in `stopped`."""
    counts = {k: int(result.get(k) or 0) for k in ("done", "skipped", "withheld", "rejected", "failed")}
    stopped = STOPPED.get(str(result.get("stopped") or ""), "")
    total = int(result.get("items") or 0)
    reached = min(counts["done"] + counts["skipped"] + counts["withheld"] + counts["rejected"], total)
    if ran is not None and ran[1] > 0 and ran[1] != total:
        full = not counts["failed"] and not stopped
        total, reached = ran[1], ran[1] if full else min(ran[0], ran[1])
    return {"reached": reached, "total": total, **counts, "stopped": stopped}


def event_to_dict(event: Event) -> dict[str, Any]:
    return {"event": type(event).__name__, **asdict(event)}


class EventSink(Protocol):
    def emit(self, event: Event) -> None: ...


class NullSink:
    def emit(self, event: Event) -> None:
        pass


class ListSink:
    """Keeps every event; used by tests and by the job runner to persist progress."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)
