"""A package's public names loaded on first use (PEP 562), from a table of names and their modules."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_getattr(package: str, names: Mapping[str, str], namespace: dict[str, Any]) -> Callable[[str], object]:
    """The `__getattr__` of `package`: a name in `names` is imported from its module (relative to
    the package) when first asked for and kept in `namespace`, the package's globals, so later
    lookups are plain attribute reads; any other name is an AttributeError."""

    def __getattr__(name: str) -> object:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module, package), name)
        namespace[name] = value
        return value

    return __getattr__
