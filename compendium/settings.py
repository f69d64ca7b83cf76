"""Settings: loaded once at the edge (workspace compendium.yaml + environment), then passed down.

Loading imports yaml, not the templates' schema, and pydantic only where a value must be
converted or judged (settings_file.py): a question pays for neither.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import ConfigError, WorkspaceError
from .settings_file import GROUPS, KEYS, SECTIONS, checked, file_model
from .templates.yaml_document import (
    YamlDocument,
    located,
    read_yaml,
    require_mapping,
    validate_model,
)
from .workspace import CONFIG_FILE, STATE_DIR, STORE_FILE

if TYPE_CHECKING:
    from .templates.groups import TemplateGroup


@dataclass(frozen=True)
class LLMSettings:
    base_url: str | None = None  # None: the offline engine is used
    # The value from the environment, never written to a file.
    api_key: str | None = field(default=None, repr=False)
    model: str = "gpt-4o-mini"
    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None
    timeout: float = 120.0
    max_retries: int = 5
    retry_wait: float = 1.0  # first backoff ceiling in seconds; doubles per retry, jittered
    max_concurrency: int = 8
    # The reply bound (max_tokens) of calls that set none of their own: the token budget
    # reserves it before each call, so the budget is a ceiling.
    max_reply_tokens: int = 8192
    # The endpoint's profile: what it supports (auto | json_schema | json_object | plain) and
    # its model's context window in tokens (None: as /v1/models states it, else unknown).
    response_format: str = "auto"
    context_tokens: int | None = None
    # A call unanswered well past its path's usual time is asked once more beside it (never
    # with max_concurrency 1): false on an endpoint where a second request is paid twice.
    hedge: bool = True
    price_per_1k_prompt: float = 0.0  # for cost estimates in reports
    price_per_1k_completion: float = 0.0


@dataclass(frozen=True)
class EmbeddingSettings:
    base_url: str | None = None  # None: the offline embedder
    api_key: str | None = field(default=None, repr=False)
    model: str | None = None
    batch_size: int = 128
    timeout: float = 60.0
    max_retries: int = 5
    retry_wait: float = 1.0


@dataclass(frozen=True)
class DistributedSettings:
    """Where a compile's tasks go. No broker: the compile runs in this process (the default)."""

    broker: str = ""  # e.g. redis://127.0.0.1:6379/0; the result backend is the same Redis
    # Seconds a task a worker took may go unacknowledged before another worker gets it: the
    # time a killed worker's tasks wait. Longer than any one task (a model call and its retries).
    visibility_timeout: float = 300.0
    # Seconds a task may go unanswered before the compile sends it again (a worker that took
    # it died and the broker did not give it to another). None: 4x the visibility timeout,
    # at least 30 s, so a slow call is not asked twice.
    resend_after: float | None = None


@dataclass(frozen=True)
class Settings:
    llm: LLMSettings = LLMSettings()
    embedding: EmbeddingSettings = EmbeddingSettings()
    distributed: DistributedSettings = DistributedSettings()
    store_url: str = ""  # "" : sqlite file inside the workspace
    workspace: Path | None = None
    knowledge_base: str = "default"
    default_template: str = "wiki"
    token_budget: int | None = None  # per compile; None: unlimited
    title: str = ""  # shown on exports; "" : see site_title

    @property
    def site_title(self) -> str:
        """The exported site's title: `title`, else the knowledge base's name unless it is the
        default one, else the workspace folder's name."""
        if self.title:
            return self.title
        if self.knowledge_base != "default" or self.workspace is None:
            return self.knowledge_base
        return self.workspace.name.replace("-", " ").replace("_", " ").strip().capitalize() or "Compendium"

    @property
    def offline(self) -> bool:
        return self.llm.base_url is None


# ---- the loader --------------------------------------------------------------------------
# Precedence, lowest first: defaults < compendium.yaml < COMPENDIUM_* environment < overrides.

# Environment variables that override a setting (key in compendium.yaml terms).
ENV_OVERRIDES: Mapping[str, str] = {
    "COMPENDIUM_LLM_BASE_URL": "llm.base_url",
    "COMPENDIUM_LLM_API_KEY": "llm.api_key",
    "COMPENDIUM_LLM_MODEL": "llm.model",
    "COMPENDIUM_LLM_RESPONSE_FORMAT": "llm.response_format",
    "COMPENDIUM_LLM_CONTEXT_TOKENS": "llm.context_tokens",
    "COMPENDIUM_LLM_HEDGE": "llm.hedge",
    "COMPENDIUM_EMBED_BASE_URL": "embedding.base_url",
    "COMPENDIUM_EMBED_API_KEY": "embedding.api_key",
    "COMPENDIUM_EMBED_MODEL": "embedding.model",
    "COMPENDIUM_STORE": "store",
    "COMPENDIUM_BROKER": "distributed.broker",
    "COMPENDIUM_TASK_VISIBILITY_TIMEOUT": "distributed.visibility_timeout",
    "COMPENDIUM_TASK_RESEND_AFTER": "distributed.resend_after",
}

_SECRET_KEYS = ("llm.api_key", "embedding.api_key")  # values, never read from the file
_VAR = re.compile(r"\$(\$)?\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def load_settings(
    workspace: Path | None,
    *,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Settings:
    """Settings from WORKSPACE/compendium.yaml, then COMPENDIUM_* variables, then `overrides`
    (keys as in the file, dotted or nested: {"llm.model": "x"}; None values are ignored).
    `env` defaults to os.environ: this is the one place that reads the environment."""
    env = os.environ if env is None else env
    root = Path(workspace).expanduser().absolute() if workspace is not None else None
    values: dict[str, Any] = {}
    origin: dict[str, str] = {}
    if root is not None:
        file_values, file_origin = _read_file(root, env)
        values.update(file_values)
        origin.update(file_origin)
    for var, key in ENV_OVERRIDES.items():
        if env.get(var):
            values[key] = env[var]
            origin[key] = f"environment variable {var}"
    for key, value in _flatten(overrides or {}).items():
        key = "store" if key == "store_url" else key
        if key not in _known_keys():
            raise ConfigError(
                f"unknown setting {key!r} in overrides (valid: {', '.join(sorted(_known_keys()))})",
                field=key,
            )
        if value is not None:
            values[key] = value
            origin[key] = f"override {key}"
    return _build(values, origin, root, env)


def load_groups(workspace: Path) -> list[TemplateGroup]:
    """The `groups:` of WORKSPACE/compendium.yaml; a group naming a template that does not
    exist is an error with its line."""
    root = Path(workspace).expanduser().absolute()
    from .templates.registry import template_names

    doc, data = _parse_file(root, os.environ)
    parsed: Any = validate_model(file_model(data), data, doc, error=ConfigError)
    groups: list[TemplateGroup] = parsed.groups or []
    known = template_names(root)
    for index, group in enumerate(groups):
        if group.template not in known:
            raise located(
                ConfigError,
                f"unknown template {group.template!r} (available: {', '.join(known)})",
                file=doc.source,
                line=doc.line_of(("groups", index, "template")),
                key=f"groups[{index}].template",
            )
    return groups


def _known_keys() -> set[str]:
    keys = {f"{section}.{k}" if section else k for section, names in KEYS.items() for k in names}
    return keys | set(_SECRET_KEYS)


def _parse_file(root: Path, env: Mapping[str, str]) -> tuple[YamlDocument, dict[str, Any]]:
    path = root / CONFIG_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise WorkspaceError(
            f"no {CONFIG_FILE} in {root}", hint="run `compendium init DIR` or pass --workspace"
        ) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from exc
    doc = read_yaml(text, source=str(path), error=ConfigError)
    if doc.data is None:  # a file of comments only: all defaults
        return doc, {}
    data = require_mapping(doc, what="settings file", error=ConfigError)
    for section in ("llm", "embedding"):
        if isinstance(data.get(section), dict) and "api_key" in data[section]:
            raise located(
                ConfigError,
                "a key may not be written in the settings file",
                file=doc.source,
                line=doc.line_of((section, "api_key")),
                key=f"{section}.api_key",
                hint=f"name the variable that holds it instead: {section}: {{api_key_env: MY_KEY}}",
            )
    return doc, _substitute(data, (), doc, env)


def _read_file(root: Path, env: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    doc, data = _parse_file(root, env)
    given = checked(data)
    if given is None:
        given = validate_model(file_model(data), data, doc, error=ConfigError).model_dump(exclude_none=True)
    values = _flatten({k: v for k, v in given.items() if k != GROUPS})
    origin = {key: f"{doc.source}:{doc.line_of(tuple(key.split('.')))}" for key in values}
    return values, origin


def _substitute(
    value: Any, path: tuple[Any, ...], doc: YamlDocument, env: Mapping[str, str]
) -> Any:
    if isinstance(value, dict):
        return {k: _substitute(v, (*path, k), doc, env) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, (*path, i), doc, env) for i, v in enumerate(value)]
    if not isinstance(value, str) or "${" not in value:
        return value

    def replace(match: re.Match[str]) -> str:
        escaped, name, default = match.groups()
        if escaped:  # $${X} stays literally ${X}
            return match.group(0)[1:]
        if env.get(name):
            return env[name]
        if default is not None:
            return default
        raise located(
            ConfigError,
            f"${{{name}}} is not set in the environment",
            file=doc.source,
            line=doc.line_of(path),
            key=".".join(str(p) for p in path),
            hint=f"set {name}, or give a default: ${{{name}:-value}}",
        )

    return _VAR.sub(replace, value)


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        dotted_key = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(_flatten(value, dotted_key + "."))
        else:
            flat[dotted_key] = value
    return flat


def _build(
    values: dict[str, Any], origin: dict[str, str], root: Path | None, env: Mapping[str, str]
) -> Settings:
    nested: dict[str, Any] = {}
    for key, value in values.items():
        if key in _SECRET_KEYS:
            continue
        head, _, tail = key.partition(".")
        if tail:
            nested.setdefault(head, {})[tail] = value
        else:
            nested[head] = value
    given = checked(nested)
    if given is None:
        given = _converted(nested, origin)
    llm, emb = given.get("llm", {}), given.get("embedding", {})
    llm_key = _secret(values, "llm", llm.get("api_key_env"), llm.get("base_url"), env, origin)
    emb_key = _secret(values, "embedding", emb.get("api_key_env"), emb.get("base_url"), env, origin)
    return Settings(
        llm=LLMSettings(**_given(llm), base_url=llm.get("base_url") or None, api_key=llm_key),
        embedding=EmbeddingSettings(**_given(emb), base_url=emb.get("base_url") or None, api_key=emb_key),
        distributed=DistributedSettings(**given.get("distributed", {})),
        store_url=_store_url(given.get("store"), root),
        workspace=root,
        **{k: v for k, v in given.items() if k not in (*SECTIONS, "store", GROUPS)},
    )


def _converted(nested: dict[str, Any], origin: Mapping[str, str]) -> dict[str, Any]:
    """`nested` converted by pydantic (numbers and flags given as strings), or the first thing
    wrong with it as a ConfigError naming where it came from."""
    from pydantic import ValidationError

    try:
        return file_model(nested).model_validate(nested).model_dump(exclude_none=True)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        key = ".".join(str(p) for p in first["loc"])
        raise ConfigError(
            f"{key}: {first['msg']} (got {first.get('input')!r}, from {origin.get(key, key)})",
            field=key,
        ) from exc


def _given(section: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in section.items() if k not in ("api_key_env", "base_url")}


def _secret(
    values: Mapping[str, Any],
    section: str,
    variable: str | None,
    base_url: str | None,
    env: Mapping[str, str],
    origin: Mapping[str, str],
) -> str | None:
    direct = values.get(f"{section}.api_key")
    if direct:
        return str(direct)
    if variable is None:
        return None
    if env.get(variable):
        return env[variable]
    if base_url:  # online and the named key is missing: say so now, not at the first call
        raise ConfigError(
            f"{section}.api_key_env names {variable}, which is not set in the environment "
            f"(from {origin.get(f'{section}.api_key_env', 'settings')})",
            field=f"{section}.api_key_env",
            hint=f"export {variable}=... before running",
        )
    return None


def _store_url(store: str | None, root: Path | None) -> str:
    if not store:
        return f"sqlite:///{root / STATE_DIR / STORE_FILE}" if root is not None else ""
    if store.startswith("sqlite:///") and root is not None:
        rest = store[len("sqlite:///") :]
        if rest and not rest.startswith("/") and rest != ":memory:":
            return f"sqlite:///{root / rest}"  # relative to the workspace, not the cwd
    return store
