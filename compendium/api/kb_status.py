"""A knowledge base's status for the UI: what it holds and how its last compile ended."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from ..operations import knowledge_base_summary
from ..tenancy import kb_records
from .auth import KB, store_of

router = APIRouter(prefix="/knowledge-bases/{kb}", tags=["knowledge bases"])


@router.get("/status")
async def status(kb: KB, request: Request) -> dict[str, Any]:
    """Record counts (documents, chunks, pages, entities...) and the last compile (template,
    status, pages, finished_at, error), whoever ran it: a job, or `compendium compile` in the
    served workspace."""
    summary = await knowledge_base_summary(kb_records(store_of(request), kb))
    return {"name": kb.name, "workspace": kb.workspace or None, **summary}
