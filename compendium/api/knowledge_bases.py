"""Knowledge bases: create with their compile settings, list, read, change, delete; groups."""

from __future__ import annotations

import re
import time
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request

from ..compiler.jobs import ACTIVE, request_cancel
from ..errors import InputError, NotFound
from ..storage.records import Job, KnowledgeBase, Schedule
from ..templates.groups import TemplateGroup
from ..tenancy import create_kb, delete_kb, kb_template_exists, system_store, template_exists
from .auth import KB, Tenant_, service, store_of
from .errors import COMMON, errors
from .pagination import Paged, PageParams, page_of_scan
from .schemas import GroupIn, KnowledgeBaseIn, KnowledgeBaseOut, KnowledgeBasePatch

router = APIRouter(prefix="/knowledge-bases", tags=["knowledge bases"], responses=COMMON)


def kb_out(kb: KnowledgeBase) -> dict[str, Any]:
    data = kb.to_dict()
    data.pop("id")
    data.pop("scope", None)
    data["token_budget"] = kb.token_budget or None
    data["workspace"] = kb.workspace or None
    return data


async def _check_templates(request: Request, tenant: str, default: str | None,
                           groups: list[GroupIn] | None, kb: KnowledgeBase | None = None,
                           ) -> list[dict[str, Any]] | None:
    store = store_of(request)
    known = (lambda name: kb_template_exists(store, kb, name)) if kb else (
        lambda name: template_exists(store, tenant, name))
    if default is not None and not await known(default):
        raise NotFound(f"no template {default!r} (GET /templates lists them)", field="default_template")
    if groups is None:
        return None
    checked = []
    for index, group in enumerate(groups):
        if not await known(group.template):
            raise NotFound(f"no template {group.template!r} (GET /templates lists them)", field=f"groups[{index}].template")
        try:
            checked.append(TemplateGroup(**group.model_dump()).model_dump())
        except (ValueError, re.error) as exc:  # a glob that compiles to no pattern
            raise InputError(f"groups[{index}]: {exc}", field=f"groups[{index}]") from exc
    return checked


def _refuse_workspace_settings(kb: KnowledgeBase, changes: dict[str, Any]) -> None:
    for name in changes:
        raise InputError(
            f"{name} of the workspace's knowledge base is set in {kb.workspace}/compendium.yaml, "
            "where `compendium compile` reads it too; change it there and restart `compendium serve`",
            field=name,
        )


@router.post("", status_code=201, response_model=KnowledgeBaseOut, responses=errors(404, 409))
async def create(body: KnowledgeBaseIn, request: Request, who: Tenant_) -> dict:
    groups = await _check_templates(request, who, body.default_template, body.groups)
    kb = KnowledgeBase(
        id="", tenant=who, name=body.name, description=body.description,
        default_template=body.default_template, engine=body.engine, llm_model=body.llm_model,
        token_budget=body.token_budget or 0, groups=groups or [],
    )
    svc = service(request)
    return kb_out(await create_kb(store_of(request), svc.data_dir, kb))


@router.get("", response_model=Paged[KnowledgeBaseOut])
async def list_kbs(request: Request, who: Tenant_, page: Annotated[PageParams, Depends()]) -> dict:
    scan = system_store(store_of(request)).scan(KnowledgeBase, {"tenant": who})
    return await page_of_scan(scan, page, render=kb_out)


@router.get("/{kb}", response_model=KnowledgeBaseOut, responses=errors(404))
async def read(kb: KB) -> dict:
    return kb_out(kb)


@router.patch("/{kb}", response_model=KnowledgeBaseOut, responses=errors(404))
async def change(kb: KB, body: KnowledgeBasePatch, request: Request) -> dict:
    """A served workspace's knowledge base takes its settings from its compendium.yaml (as the
    CLI does); only its description changes here."""
    if kb.workspace:
        _refuse_workspace_settings(kb, body.model_dump(exclude_unset=True, exclude={"description"}))
    groups = await _check_templates(request, kb.tenant, body.default_template, body.groups, kb)
    for name, value in body.model_dump(exclude_unset=True, exclude={"groups"}).items():
        if name == "token_budget":
            kb.token_budget = value or 0  # null removes the budget
        elif value is not None:
            setattr(kb, name, value)
    if groups is not None:
        kb.groups = groups
    kb.updated_at = time.time()
    await system_store(store_of(request)).upsert([kb])
    return kb_out(kb)


@router.delete("/{kb}", status_code=204, responses=errors(404))
async def delete(kb: KB, request: Request) -> None:
    """Delete the knowledge base, its documents, compiled records, schedules and jobs.
    Running compiles are cancelled first."""
    store = store_of(request)
    system = system_store(store)
    where = {"tenant": kb.tenant, "knowledge_base": kb.name}
    await system.delete(Schedule, where)
    active = [job.id async for job in system.scan(Job, {**where, "status": list(ACTIVE)})]
    for job_id in active:
        await request_cancel(store, job_id)
    await delete_kb(store, service(request).data_dir, kb.tenant, kb.name)


@router.get("/{kb}/groups", response_model=list[GroupIn], responses=errors(404))
async def read_groups(kb: KB) -> list[dict]:
    """Which template compiles which documents (first matching group wins)."""
    return kb.groups


@router.put("/{kb}/groups", response_model=list[GroupIn], responses=errors(404))
async def write_groups(kb: KB, body: list[GroupIn], request: Request) -> list[dict]:
    if kb.workspace:
        _refuse_workspace_settings(kb, {"groups": body})
    kb.groups = await _check_templates(request, kb.tenant, None, body) or []
    kb.updated_at = time.time()
    await system_store(store_of(request)).upsert([kb])
    return kb.groups
