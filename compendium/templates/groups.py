"""Template groups: which template compiles which documents, chosen by glob patterns.

Paths are relative to the documents folder and '/'-separated. In a glob, `*` and `?` stay
inside one folder, `**` spans folders, and a pattern without '/' matches a file name at any
depth (`*.pdf` matches `specs/a.pdf`), as in .gitignore.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

from pydantic import Field, field_validator

from ..errors import CompendiumError, ConfigError
from .loader import KeyPath, YamlDocument, located, validate_model
from .schema import Strict


class TemplateGroup(Strict):
    """Documents matching any `include` glob and no `exclude` glob use `template`."""

    template: str = Field(min_length=1)
    include: list[str] = Field(default_factory=lambda: ["**"], min_length=1)
    exclude: list[str] = Field(default_factory=list)

    @field_validator("include", "exclude")
    @classmethod
    def _globs(cls, globs: list[str]) -> list[str]:
        for glob in globs:
            if not glob.strip():
                raise ValueError("a glob may not be empty")
            _glob_regex(glob)
        return globs

    def matches(self, path: str) -> bool:
        path = _normal(path)
        return any(_glob_regex(g).match(path) for g in self.include) and not any(
            _glob_regex(g).match(path) for g in self.exclude
        )


def parse_groups(
    data: Any,
    doc: YamlDocument,
    *,
    at: KeyPath = ("groups",),
    error: type[CompendiumError] = ConfigError,
) -> list[TemplateGroup]:
    """Validate the `groups:` list of compendium.yaml (`data`, found at `at` in `doc`)."""
    if data is None:
        return []
    if not isinstance(data, list):
        raise located(
            error,
            "must be a list of {template, include, exclude} entries",
            file=doc.source,
            line=doc.line_of(at),
            key=".".join(str(p) for p in at),
        )
    groups = []
    for index, entry in enumerate(data):
        groups.append(validate_model(TemplateGroup, entry, doc, at=(*at, index), error=error))
    return groups


def template_for(path: str, groups: Sequence[TemplateGroup], default: str) -> str:
    """The template that compiles document `path`: the first matching group's, else default."""
    for group in groups:
        if group.matches(path):
            return group.template
    return default


def documents_for(
    template_name: str, paths: Iterable[str], groups: Sequence[TemplateGroup], default: str
) -> list[str]:
    """The documents among `paths` that `template_name` compiles, in the given order."""
    return [p for p in paths if template_for(p, groups, default) == template_name]


def _normal(path: str) -> str:
    path = path.replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path.lstrip("/")


@lru_cache(maxsize=512)
def _glob_regex(glob: str) -> re.Pattern[str]:
    glob = _normal(glob.strip())
    if "/" not in glob.rstrip("/"):
        glob = "**/" + glob
    if glob.endswith("/"):  # a folder: everything inside it
        glob += "**"
    out, i = [], 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = glob.find("]", i + 2)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = glob[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end + 1
                continue
        else:
            out.append(re.escape(c))
        i += 1
    try:
        return re.compile("".join(out) + r"\Z")
    except re.error as exc:  # e.g. a reversed range [z-a]
        raise ValueError(f"bad glob {glob!r}: {exc}") from exc
