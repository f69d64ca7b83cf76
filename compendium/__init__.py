"""Compendium compiles a knowledge base into a cited wiki, an entity graph and topics.

The public names are loaded on first use (PEP 562): `import compendium` costs the errors
module alone, so a CLI command or a script that needs one function does not import the
compiler, the templates and their models. `from compendium import X` works as before.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from . import blas  # noqa: F401  (first: before anything imports numpy)
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
from .lazy_names import lazy_getattr as _lazy_getattr

if _TYPE_CHECKING:
    from .compiler.report import CompileReport
    from .operations import (
        compile_workspace,
        copy_between_stores,
        export_workspace,
        workspace_status,
    )
    from .settings import Settings, load_settings
    from .storage.factory import open_store
    from .templates.registry import load_template
    from .templates.schema import Template
    from .workspace import add_documents, init_workspace

__version__ = "0.1.0"

_LAZY = {
    "CompileReport": ".compiler.report",
    "Settings": ".settings",
    "Template": ".templates.schema",
    "add_documents": ".workspace",
    "compile_workspace": ".operations",
    "copy_between_stores": ".operations",
    "export_workspace": ".operations",
    "init_workspace": ".workspace",
    "load_settings": ".settings",
    "load_template": ".templates.registry",
    "open_store": ".storage.factory",
    "workspace_status": ".operations",
}

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

__getattr__ = _lazy_getattr(__name__, _LAZY, globals())


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
