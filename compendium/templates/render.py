"""Renders template prompts in a Jinja2 sandbox, since templates can be uploaded by users."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

from jinja2 import StrictUndefined
from jinja2 import TemplateError as JinjaError

from ..errors import TemplateError
from .sandbox import make_environment

_ENV = make_environment(StrictUndefined)


@lru_cache(maxsize=256)
def _compile(source: str):  # type: ignore[no-untyped-def]
    return _ENV.from_string(source)


def render(source: str, *, where: str = "prompt", **variables: Any) -> str:
    """Render `source` with `variables`; any Jinja or sandbox error names `where`."""
    try:
        return _compile(source).render(**variables)
    except JinjaError as exc:  # includes SecurityError and UndefinedError
        line = getattr(exc, "lineno", None)
        raise TemplateError(str(exc), file=where, line=line) from exc


@lru_cache(maxsize=64)
def default_prompt(name: str) -> str:
    """A built-in prompt shipped in templates/builtin/prompts/NAME.j2."""
    ref = resources.files("compendium.templates") / "builtin" / "prompts" / f"{name}.j2"
    return ref.read_text(encoding="utf-8")


def prompt_source(configured: str, default_name: str) -> str:
    """The template's own prompt if it sets one, else the built-in default."""
    return configured if configured.strip() else default_prompt(default_name)
