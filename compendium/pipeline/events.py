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
