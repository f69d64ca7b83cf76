"""One compile across machines: its engine calls as tasks on Celery workers (Redis broker)."""

from .base import CompileIdentity, Executor, Outcome
from .executor import distribute, executor_for

__all__ = ["CompileIdentity", "Executor", "Outcome", "distribute", "executor_for"]
