"""For the UI: what a knowledge base holds, how its last compile ended, what an upload may be."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from ..operations import knowledge_base_summary
from ..tenancy import kb_records
from ..workspace import SUPPORTED_EXTENSIONS
from .auth import KB, store_of
from .documents import MAX_FILES, max_file_bytes
from .errors import COMMON, errors

router = APIRouter(prefix="/knowledge-bases/{kb}", tags=["knowledge bases"], responses={**COMMON, **errors(404)})


class LastCompile(BaseModel):
    template: str | None = None
    status: str | None = Field(None, description="succeeded, partial, failed, cancelled or budget_exceeded")
    pages: dict[str, int] | None = Field(None, description="created, updated, unchanged, deleted")
    finished_at: float | None = None
    error: str | None = None


class KnowledgeBaseStatus(BaseModel):
    name: str
    workspace: str | None = None
    counts: dict[str, int] = Field(description="documents, chunks, entities, concepts, relations, claims, "
                                               "topics, pages")
    last_compile: LastCompile | None = None


class UploadLimits(BaseModel):
    max_file_bytes: int
    max_files: int
    extensions: list[str]


@router.get("/status", response_model=KnowledgeBaseStatus)
async def status(kb: KB, request: Request) -> dict[str, Any]:
    """Record counts (documents, chunks, pages, entities...) and the last compile (template,
    status, pages, finished_at, error), whoever ran it: a job, or `compendium compile` in the
    served workspace."""
    summary = await knowledge_base_summary(kb_records(store_of(request), kb))
    return {"name": kb.name, "workspace": kb.workspace or None, **summary}


@router.get("/upload-limits", response_model=UploadLimits)
async def upload_limits(kb: KB, request: Request) -> dict[str, Any]:
    """What POST /knowledge-bases/{kb}/documents accepts: bytes per file, files per upload and
    file name extensions (the UI checks them before sending)."""
    return {"max_file_bytes": max_file_bytes(request), "max_files": MAX_FILES,
            "extensions": sorted(SUPPORTED_EXTENSIONS)}
