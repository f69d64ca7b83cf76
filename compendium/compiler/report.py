"""The compile report: what platforms parse after a compile (`compile --report FILE`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..engines.usage import UsageMeter
from ..pipeline.context import PhaseResult
from ..settings import LLMSettings

PHASE_USAGE_KEYS = ("llm_calls", "prompt_tokens", "completion_tokens", "embedding_calls", "hedged_calls")

# How a compile ended: the one vocabulary of the report, `status`, API jobs, the UI and exit codes.
SUCCEEDED = "succeeded"  # every item was compiled
PARTIAL = "partial"  # finished, but some items failed for good (a rerun retries them)
FAILED = "failed"  # stopped by an error
CANCELLED = "cancelled"
BUDGET_EXCEEDED = "budget_exceeded"  # stopped before a call that could pass the token budget
STATUSES = (SUCCEEDED, PARTIAL, FAILED, CANCELLED, BUDGET_EXCEEDED)


@dataclass
class CompileReport:
    engine: str
    template: str
    documents: int = 0
    chunks: int = 0
    phases: dict[str, dict[str, Any]] = field(default_factory=dict)
    pages: dict[str, int] = field(
        default_factory=lambda: {"created": 0, "updated": 0, "unchanged": 0, "deleted": 0}
    )
    counts: dict[str, int] = field(default_factory=dict)
    changes: list[dict[str, str]] = field(default_factory=list)
    status: str = SUCCEEDED  # one of STATUSES
    error: str = ""
    started_at: float = 0.0
    finished_at: float = 0.0

    @property
    def failed(self) -> bool:
        """Anything short of success, a partial compile included."""
        return self.status != SUCCEEDED

    def failed_items(self) -> dict[str, int]:
        """Items each phase gave up on (unreadable files, failed MAP batches, failed pages)."""
        return {name: p["failed"] for name, p in self.phases.items() if p.get("failed")}

    def settle_status(self) -> None:
        """A compile that ran to its end with items that failed for good is partial, and says
        which; a stopped compile keeps the status it stopped with."""
        failed = self.failed_items()
        if self.status == SUCCEEDED and failed:
            self.status = PARTIAL
            counts = ", ".join(f"{phase}: {n}" for phase, n in failed.items())
            self.error = (
                f"{sum(failed.values())} item(s) failed ({counts}); run compile again to retry them"
            )

    def add_phase(self, name: str, result: PhaseResult, usage: UsageMeter) -> None:
        used = usage.get(name).as_dict()
        entry = result.as_dict()
        entry.update({key: used[key] for key in PHASE_USAGE_KEYS})
        entry["cached_calls"] = used["cached_calls"]
        self.phases[name] = entry

    def totals(self, llm: LLMSettings | None = None) -> dict[str, Any]:
        sums = {key: sum(p.get(key, 0) for p in self.phases.values()) for key in PHASE_USAGE_KEYS}
        sums["seconds"] = round(sum(p.get("seconds", 0.0) for p in self.phases.values()), 3)
        cost = 0.0
        if llm is not None:
            cost = (
                sums["prompt_tokens"] / 1000 * llm.price_per_1k_prompt
                + sums["completion_tokens"] / 1000 * llm.price_per_1k_completion
            )
        sums["estimated_cost"] = round(cost, 6)
        return sums

    def as_dict(self, llm: LLMSettings | None = None) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "template": self.template,
            "status": self.status,
            "error": self.error,
            "documents": self.documents,
            "chunks": self.chunks,
            "phases": self.phases,
            "pages": self.pages,
            "counts": self.counts,
            "changes": self.changes,
            "totals": self.totals(llm),
            "started_at": self.started_at,
            "finished_at": self.finished_at,
        }
