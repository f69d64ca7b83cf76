"""Schedules of a knowledge base: cron expressions that enqueue compiles."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request

from ..compiler.schedules import (
    create_schedule,
    delete_schedule,
    get_schedule,
    list_schedules,
    update_schedule,
)
from ..errors import NotFound
from ..storage.records import Schedule
from ..tenancy import kb_template_exists
from .auth import KB, store_of
from .errors import COMMON, errors
from .pagination import Paged, PageParams, page_of
from .schemas import ScheduleIn, ScheduleOut, SchedulePatch

router = APIRouter(prefix="/knowledge-bases/{kb}/schedules", tags=["schedules"],
                   responses={**COMMON, **errors(404)})


def _out(s: Schedule) -> dict[str, Any]:
    return s.to_dict()


async def _template(request: Request, kb: Any, name: str | None) -> str:
    name = name or kb.default_template
    if not await kb_template_exists(store_of(request), kb, name):
        raise NotFound(f"no template {name!r} (GET /templates lists them)", field="template")
    return name


@router.post("", status_code=201, response_model=ScheduleOut)
async def create(kb: KB, body: ScheduleIn, request: Request) -> dict:
    template = await _template(request, kb, body.template)
    schedule = await create_schedule(store_of(request), tenant=kb.tenant, knowledge_base=kb.name,
                                     template=template, cron=body.cron, enabled=body.enabled)
    return _out(schedule)


@router.get("", response_model=Paged[ScheduleOut])
async def list_all(kb: KB, request: Request, page: Annotated[PageParams, Depends()]) -> dict:
    items = await list_schedules(store_of(request), kb.tenant, kb.name)
    return page_of([_out(s) for s in items], lambda s: s["id"], page)


@router.get("/{schedule_id}", response_model=ScheduleOut)
async def read(kb: KB, schedule_id: str, request: Request) -> dict:
    return _out(await get_schedule(store_of(request), kb.tenant, kb.name, schedule_id))


@router.patch("/{schedule_id}", response_model=ScheduleOut)
async def change(kb: KB, schedule_id: str, body: SchedulePatch, request: Request) -> dict:
    store = store_of(request)
    schedule = await get_schedule(store, kb.tenant, kb.name, schedule_id)
    changes = body.model_dump(exclude_unset=True)
    if changes.get("template"):
        changes["template"] = await _template(request, kb, changes["template"])
    return _out(await update_schedule(store, schedule, changes))


@router.delete("/{schedule_id}", status_code=204)
async def remove(kb: KB, schedule_id: str, request: Request) -> None:
    store = store_of(request)
    await delete_schedule(store, await get_schedule(store, kb.tenant, kb.name, schedule_id))
