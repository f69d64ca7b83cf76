"""One compile across machines: its engine calls as tasks on Celery workers (Redis broker)."""

from .executor import CompileIdentity, Executor, distribute, executor_for

__all__ = ["CompileIdentity", "Executor", "distribute", "executor_for"]
