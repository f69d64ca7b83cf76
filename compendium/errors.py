"""Compendium's exception hierarchy; driver errors are translated into these at the boundary.

    CompendiumError                 base of everything we raise on purpose
    ├── ConfigError                 settings or environment are wrong (names the variable/key)
    ├── TemplateError               a template is invalid (names file, line and key)
    ├── WorkspaceError              no workspace, or a workspace in a bad state
    ├── InputError                  a document or request cannot be used (names the file/field)
    ├── StoreError                  the store failed or is unreachable
    │   └── NotFound                a record that was asked for does not exist
    ├── EngineError                 an LLM or embedding endpoint failed
    │   ├── EngineUnavailable       unreachable, or wrong credentials (retries will not help)
    │   └── ReplyError              the model's reply could not be parsed or validated
    │       └── LabelError          a MAP reply whose items name no chunk of their batch
    ├── BudgetExceeded              the next LLM call would pass the compile's token budget
    ├── Cancelled                   a job was cancelled
    └── Busy                        another compile of the knowledge base and template runs
"""

from __future__ import annotations


class CompendiumError(Exception):
    """Base class. `hint` tells the user what to do; `field` names the offending input."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None, field: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.field = field

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class ConfigError(CompendiumError):
    exit_code = 2


class TemplateError(CompendiumError):
    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        key: str | None = None,
        hint: str | None = None,
    ):
        where = file or "<template>"
        if line is not None:
            where += f":{line}"
        if key:
            where += f": {key}"
        super().__init__(f"{where}: {message}", hint=hint, field=key)
        self.file, self.line, self.key = file, line, key


class WorkspaceError(CompendiumError):
    exit_code = 2


class InputError(CompendiumError):
    exit_code = 2


class StoreError(CompendiumError):
    exit_code = 3


class NotFound(StoreError):
    exit_code = 4


class EngineError(CompendiumError):
    exit_code = 5


class EngineUnavailable(EngineError):
    pass


class ReplyError(EngineError):
    problem: str = ""  # what was wrong with the last reply, as its check said


class LabelError(ReplyError):
    """`unknown` of the reply's `items` named no chunk of the batch, even after a repair."""

    def __init__(self, message: str, *, items: int, unknown: int, hint: str | None = None):
        super().__init__(message, hint=hint, field="chunk")
        self.items, self.unknown = items, unknown


class BudgetExceeded(CompendiumError):
    exit_code = 6


class Cancelled(CompendiumError):
    exit_code = 7


class Busy(CompendiumError):
    exit_code = 9
