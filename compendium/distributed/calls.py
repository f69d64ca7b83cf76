"""Engine calls as JSON a task carries: what the phases ask, what the engine answers, its errors."""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
from pydantic import TypeAdapter

from ..engines.tasks import (
    DescriptionRequest,
    ExtractionBatch,
    ExtractionReply,
    MatchQuestion,
    PageRequest,
    PairQuestion,
    TopicReply,
    TopicRequest,
)
from ..errors import (
    BudgetExceeded,
    CompendiumError,
    ConfigError,
    EngineError,
    EngineUnavailable,
    LabelError,
    ReplyError,
    StoreError,
)
from ..templates.schema import Template
from .base import CompileIdentity

EMBED = "embed"  # the embedder's one method; every other name is an Engine method


def encode_template(template: Template) -> dict[str, Any]:
    """A template as a task carries it: whole, since a worker on another machine has no copy of
    the workspace's templates; its fingerprint names it in the worker's own cache."""
    return {"fingerprint": template.fingerprint, "template": template.model_dump(mode="json")}


def task_payload(identity: CompileIdentity, method: str, request: Any, template: dict[str, Any]) -> dict[str, Any]:
    """What one task carries: who asks (the compile's identity), the call, and its template
    (as encode_template gave it)."""
    return {"identity": dataclasses.asdict(identity), "method": method,
            "request": encode_request(method, request), "template": template}


@dataclass(frozen=True, slots=True)
class Method:
    """How one engine method's argument and answer travel (pydantic adapters, JSON mode)."""

    request: Any  # the type of its one argument besides the template
    reply: Any


METHODS: dict[str, Method] = {
    "extract": Method(ExtractionBatch, ExtractionReply),  # a MAP batch
    "judge_pairs": Method(list[PairQuestion], dict[str, bool]),  # a REDUCE block of pairs
    "summarize": Method(DescriptionRequest, str),  # a REDUCE description
    "judge_matches": Method(list[MatchQuestion], dict[str, bool]),  # PLAN's MAYBE matches
    "name_topic": Method(TopicRequest, TopicReply),
    "write_page": Method(PageRequest, str),  # a REFINE page
    "update_pages": Method(list[PageRequest], dict[str, str]),  # REFINE: small updates grouped
}


@cache
def _adapter(kind: Any) -> TypeAdapter[Any]:
    return TypeAdapter(kind)


def encode_request(method: str, request: Any) -> Any:
    if method == EMBED:
        return [str(t) for t in request]
    return _adapter(METHODS[method].request).dump_python(request, mode="json")


def decode_request(method: str, data: Any) -> Any:
    if method == EMBED:
        return list(data)
    if method not in METHODS:
        raise ConfigError(f"unknown engine call {method!r} (known: {', '.join([*METHODS, EMBED])})")
    return _adapter(METHODS[method].request).validate_python(data)


def encode_reply(method: str, reply: Any) -> Any:
    if method == EMBED:
        vectors = np.ascontiguousarray(np.asarray(reply, dtype="<f4"))
        return {"shape": list(vectors.shape), "f4": base64.b64encode(vectors.tobytes()).decode("ascii")}
    return _adapter(METHODS[method].reply).dump_python(reply, mode="json")


def decode_reply(method: str, data: Any) -> Any:
    if method == EMBED:
        flat = np.frombuffer(base64.b64decode(data["f4"]), dtype="<f4")
        return flat.reshape(data["shape"]).astype(np.float32)
    return _adapter(METHODS[method].reply).validate_python(data)


def describe_call(method: str, request: Any) -> str:
    """What a call asks, in a few words, for an error that names a call nobody answered."""
    if method == EMBED:
        return f"embedding {len(request)} text(s)"
    if method == "extract":
        first = request.chunks[0] if request.chunks else None
        where = f" of {first.document_title!r}" if first is not None and first.document_title else ""
        return f"MAP extraction of {len(request.chunks)} chunk(s){where}"
    if method in ("write_page", "update_pages"):
        pages = request if isinstance(request, list) else [request]
        return f"REFINE page(s) {', '.join(repr(p.title) for p in pages[:3])}{' ...' if len(pages) > 3 else ''}"
    if method == "summarize":
        return f"REDUCE description of {request.name!r}"
    if method == "name_topic":
        return f"PLAN topic name for {', '.join(m.name for m in request.members[:3])}"
    return f"{method} of {len(request)} question(s)" if isinstance(request, list) else method


# ---- errors: a worker's CompendiumError is raised again, as itself, in the compile ---------

_ERRORS: dict[str, type[CompendiumError]] = {
    cls.__name__: cls
    for cls in (CompendiumError, ConfigError, StoreError, EngineError, EngineUnavailable, ReplyError, BudgetExceeded)
}


def encode_error(exc: CompendiumError) -> dict[str, Any]:
    kind = next((c.__name__ for c in type(exc).__mro__ if c.__name__ in _ERRORS or c is LabelError), "CompendiumError")
    data: dict[str, Any] = {"type": kind, "message": exc.message, "hint": exc.hint, "field": exc.field}
    if isinstance(exc, ReplyError):
        data["problem"] = exc.problem
    if isinstance(exc, LabelError):
        data |= {"items": exc.items, "unknown": exc.unknown}
    return data


def decode_error(data: dict[str, Any], where: str) -> CompendiumError:
    """The error a worker raised; `where` (the worker's name) is added to its message."""
    message = f"{data.get('message', '')} (on worker {where})"
    exc: CompendiumError
    if data.get("type") == "LabelError":
        exc = LabelError(message, items=int(data.get("items", 0)), unknown=int(data.get("unknown", 0)), hint=data.get("hint"))
    else:
        build: Callable[..., CompendiumError] = _ERRORS.get(str(data.get("type")), CompendiumError)
        exc = build(message, hint=data.get("hint"), field=data.get("field"))
    if isinstance(exc, ReplyError):
        exc.problem = str(data.get("problem") or "")
    return exc
