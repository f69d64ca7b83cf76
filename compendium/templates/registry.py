"""Finds templates by name (workspace templates first, then built-ins) or by path."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from ..errors import TemplateError
from ..workspace import TEMPLATES_DIR
from .loader import parse_template
from .schema import Template
from .untrusted import load_template_file

_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class TemplateInfo:
    name: str
    version: int
    description: str
    source: str  # "builtin" or the file's path
    error: str | None = None  # set when the file does not validate (version is then 0)


def builtin_names() -> list[str]:
    """Names of the templates that ship with Compendium."""
    folder = resources.files("compendium.templates") / "builtin"
    return sorted(
        entry.name.rsplit(".", 1)[0]
        for entry in folder.iterdir()
        if entry.is_file() and entry.name.endswith(".yaml")
    )


def _builtin_text(name: str) -> str:
    ref = resources.files("compendium.templates") / "builtin" / f"{name}.yaml"
    return ref.read_text(encoding="utf-8")


@lru_cache(maxsize=16)
def _builtin(name: str) -> Template:
    # Built-ins never change while running; Template is frozen, so sharing one is safe.
    return parse_template(_builtin_text(name), source=f"builtin:{name}.yaml", default_name=name)


def _workspace_file(name: str, workspace: Path | None) -> Path | None:
    if workspace is None:
        return None
    for suffix in _SUFFIXES:
        candidate = Path(workspace) / TEMPLATES_DIR / f"{name}{suffix}"
        if candidate.is_file():
            return candidate
    return None


def _looks_like_path(text: str) -> bool:
    return "/" in text or "\\" in text or text.endswith(_SUFFIXES)


def load_template(
    name_or_path: str, *, workspace: Path | None = None, allow_paths: bool = True
) -> Template:
    """A template by file path, or by name: WORKSPACE/templates/NAME.yaml first, then the
    built-ins. Pass allow_paths=False for names that come from untrusted callers (the API)."""
    if _looks_like_path(name_or_path):
        if not allow_paths:
            raise TemplateError(
                "template names may not contain '/', '\\' or a .yaml suffix",
                key="template",
                file=name_or_path,
            )
        return load_template_file(Path(name_or_path))
    name = name_or_path
    found = _workspace_file(name, workspace)
    if found is not None:
        template = load_template_file(found)
        if template.name != name:
            raise TemplateError(
                f"the file is {found.name} but declares name {template.name!r}; "
                "the file name and `name:` must agree",
                file=str(found),
                key="name",
            )
        return template
    if name in builtin_names():
        return _builtin(name)
    raise TemplateError(
        f"unknown template {name!r}; available: {', '.join(_available(workspace))}",
        file=name,
        hint=(
            "add one as WORKSPACE/templates/NAME.yaml (start from "
            "`compendium templates show wiki`), or pass a path to a YAML file"
        ),
    )


def _available(workspace: Path | None) -> list[str]:
    return sorted({*builtin_names(), *_workspace_files(workspace)})


def _workspace_files(workspace: Path | None) -> dict[str, Path]:
    """name -> file of the workspace's own templates (.yaml preferred over .yml)."""
    if workspace is None:
        return {}
    folder = Path(workspace) / TEMPLATES_DIR
    if not folder.is_dir():
        return {}
    found: dict[str, Path] = {}
    for path in sorted(
        folder.iterdir(),
        key=lambda p: (p.stem, _SUFFIXES.index(p.suffix) if p.suffix in _SUFFIXES else 9),
    ):
        if path.is_file() and path.suffix in _SUFFIXES and not path.name.startswith("."):
            found.setdefault(path.stem, path)
    return found


def template_names(workspace: Path | None) -> list[str]:
    """Every name load_template() accepts in this workspace."""
    return _available(workspace)


def list_templates(workspace: Path | None) -> list[TemplateInfo]:
    """Workspace templates and built-ins (a workspace template hides a built-in of its name);
    a workspace file that does not validate is listed with its error rather than hidden."""
    infos: dict[str, TemplateInfo] = {}
    for name in builtin_names():
        t = _builtin(name)
        infos[name] = TemplateInfo(t.name, t.version, t.description, "builtin")
    for name, path in _workspace_files(workspace).items():
        try:
            t = load_template_file(path)
        except TemplateError as exc:
            infos[name] = TemplateInfo(name, 0, "", str(path), error=str(exc))
            continue
        infos[name] = TemplateInfo(t.name, t.version, t.description, str(path))
    return [infos[name] for name in sorted(infos)]


def show_template(name: str, workspace: Path | None = None) -> str:
    """The template's YAML text as written (comments included)."""
    if _looks_like_path(name):
        path = Path(name)
    else:
        path = _workspace_file(name, workspace)
    if path is not None:
        try:
            return path.read_text(encoding="utf-8")
        except OSError as exc:
            raise TemplateError(f"cannot read: {exc.strerror}", file=str(path)) from exc
    if name not in builtin_names():
        load_template(name, workspace=workspace)  # raises the unknown-template error
    return _builtin_text(name)


def validate_template_file(path: Path) -> Template:
    """Validate a template file (the CLI's `templates validate`); raises TemplateError."""
    return load_template_file(Path(path))
