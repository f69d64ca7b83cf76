"""Compendium compiles a knowledge base into a cited wiki, an entity graph and topics."""

from . import blas  # noqa: F401  (first: before anything imports numpy)
from .compiler.report import CompileReport
from .errors import (
    BudgetExceeded,
    Cancelled,
    CompendiumError,
    ConfigError,
    EngineError,
    EngineUnavailable,
    InputError,
    NotFound,
    ReplyError,
    StoreError,
    TemplateError,
    WorkspaceError,
)
from .operations import compile_workspace, copy_between_stores, export_workspace, workspace_status
from .settings import Settings, load_settings
from .storage.factory import open_store
from .templates.registry import load_template
from .templates.schema import Template
from .workspace import add_documents, init_workspace

__version__ = "0.1.0"

__all__ = [
    "BudgetExceeded",
    "Cancelled",
    "CompendiumError",
    "CompileReport",
    "ConfigError",
    "EngineError",
    "EngineUnavailable",
    "InputError",
    "NotFound",
    "ReplyError",
    "Settings",
    "StoreError",
    "Template",
    "TemplateError",
    "WorkspaceError",
    "__version__",
    "add_documents",
    "compile_workspace",
    "copy_between_stores",
    "export_workspace",
    "init_workspace",
    "load_settings",
    "load_template",
    "open_store",
    "workspace_status",
]
