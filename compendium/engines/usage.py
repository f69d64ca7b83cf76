"""Token and call accounting per phase, and the per-compile token budget."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import asdict, dataclass

from ..errors import BudgetExceeded

_current_phase: contextvars.ContextVar[str] = contextvars.ContextVar("phase", default="other")


@dataclass(slots=True)
class PhaseUsage:
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    embedding_calls: int = 0
    embedding_tokens: int = 0
    cached_calls: int = 0  # answered from the response cache, no tokens spent
    hedged_calls: int = 0  # second requests sent beside a stalled call (their tokens are counted)

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


class UsageMeter:
    """Shared by the engine and the embedder of one compile; phases are set by the orchestrator.

    The token budget is a ceiling: before a call, its prompt and the bound of its reply
    (max_tokens) are reserved; after it, the reservation is released and the tokens the server
    reports are recorded. A call whose reservation does not fit beside what is spent and what
    calls in flight hold does not start. So what is spent never passes the budget, as long as
    servers keep replies within max_tokens.

    A hedge (the same request sent again beside a stalled one, see transport.py) is billed
    too: it is sent only when the budget holds a second reservation of the call, and it is
    counted as its twin's tokens (the dropped reply's own count is never seen).
    """

    def __init__(self, budget_tokens: int | None = None):
        self.by_phase: dict[str, PhaseUsage] = {}
        self.budget_tokens = budget_tokens
        self.in_flight = 0  # tokens reserved by calls sent but not yet settled

    @staticmethod
    @contextlib.contextmanager
    def phase(name: str) -> Iterator[None]:
        token = _current_phase.set(name)
        try:
            yield
        finally:
            _current_phase.reset(token)

    def _usage(self) -> PhaseUsage:
        return self.by_phase.setdefault(_current_phase.get(), PhaseUsage())

    @property
    def total_tokens(self) -> int:
        return sum(u.prompt_tokens + u.completion_tokens + u.embedding_tokens for u in self.by_phase.values())

    def check_budget(self, upcoming_tokens: int = 0) -> None:
        """Raise before a call that could take the compile past its budget, counting what the
        calls in flight reserved (concurrent calls must not all pass on an empty meter)."""
        committed = self.total_tokens + self.in_flight
        if self.budget_tokens is not None and committed + upcoming_tokens > self.budget_tokens:
            raise BudgetExceeded(
                f"token budget of {self.budget_tokens} reached ({self.total_tokens} spent, "
                f"{self.in_flight} reserved by calls in flight, the next call needs up to "
                f"{upcoming_tokens})",
                hint="raise the budget, lower llm.max_reply_tokens, or compile fewer documents",
            )

    def fits(self, tokens: int) -> bool:
        return self.budget_tokens is None or self.total_tokens + self.in_flight + tokens <= self.budget_tokens

    @contextlib.contextmanager
    def reserve(self, prompt_tokens: int, reply_tokens: int = 0) -> Iterator[Hedges]:
        """Check the budget and hold the prompt and the reply's bound against it until the call
        is settled; record its actual usage (record_llm) before leaving the block or right after.
        What it yields is the call's `may_hedge`: each hedge it allows holds as much again."""
        tokens = prompt_tokens + reply_tokens
        self.check_budget(tokens)
        self.in_flight += tokens
        hedges = Hedges(self, tokens)
        try:
            yield hedges
        finally:
            self.in_flight -= tokens * (1 + hedges.sent)

    def record_llm(self, prompt_tokens: int, completion_tokens: int, hedged: int = 0) -> None:
        u = self._usage()
        u.llm_calls += 1
        u.hedged_calls += hedged
        u.prompt_tokens += prompt_tokens * (1 + hedged)
        u.completion_tokens += completion_tokens * (1 + hedged)

    def add(self, other: PhaseUsage) -> None:
        """Count what a call made elsewhere (a task on a worker) spent, in the current phase."""
        u = self._usage()
        for name in other.__slots__:  # type: ignore[attr-defined]
            setattr(u, name, getattr(u, name) + getattr(other, name))

    def record_cached(self) -> None:
        self._usage().cached_calls += 1

    def record_embedding(self, tokens: int, hedged: int = 0) -> None:
        u = self._usage()
        u.embedding_calls += 1
        u.hedged_calls += hedged
        u.embedding_tokens += tokens * (1 + hedged)

    def get(self, phase: str) -> PhaseUsage:
        return self.by_phase.get(phase, PhaseUsage())


class Hedges:
    """A call's answer to the transport's "may I send this call again?": yes while the budget
    holds another reservation of the call's size, which is then held until the call settles."""

    def __init__(self, meter: UsageMeter, tokens: int):
        self.meter, self.tokens, self.sent = meter, tokens, 0

    def __call__(self) -> bool:
        if not self.meter.fits(self.tokens):
            return False
        self.meter.in_flight += self.tokens
        self.sent += 1
        return True
