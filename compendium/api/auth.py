"""Who is calling: API keys (tenant keys and the admin key), and the admin's tenant/key routes."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from ..settings import Settings
from ..storage.base import Store
from ..storage.records import ApiKey, KnowledgeBase, Tenant
from ..tenancy import (
    Caller,
    authenticate,
    create_key,
    create_tenant,
    get_kb,
    get_tenant,
    system_store,
)
from .errors import COMMON, ApiError, errors
from .limits import CREDENTIAL_PARAMETERS, FailedLogins
from .pagination import Paged, PageParams, page_of_scan
from .schemas import KeyIn, KeyOut, MeOut, TenantIn, TenantOut


@dataclass
class Service:
    """What every route shares: settings, the data folder, the one store, the worker's bell."""

    settings: Settings
    data_dir: Path
    admin_key: str | None
    store: Store | None = None
    wake: asyncio.Event = field(default_factory=asyncio.Event)


def service(request: Request) -> Service:
    svc: Service = request.app.state.service
    if svc.store is None:
        raise ApiError(503, "not_ready", "the server is starting or stopping")
    return svc


def store_of(request: Request) -> Store:
    return service(request).store  # type: ignore[return-value]


_bearer = HTTPBearer(auto_error=False, description="Authorization: Bearer <API key>")


async def caller(
    request: Request,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Caller:
    """The caller the request's key belongs to. A key is taken from the Authorization header
    only: one in the URL is refused (URLs are logged and kept in histories). An address whose
    keys failed too often is answered 429 until it has waited (limits.FailedLogins)."""
    in_url = sorted(CREDENTIAL_PARAMETERS & {k.lower() for k in request.query_params})
    key = bearer.credentials if bearer else None
    if not key and not in_url:  # no guess: nothing to count
        raise ApiError(401, "unauthorized", "an API key is required (Authorization: Bearer KEY)")
    address = request.client.host if request.client else ""
    failures: FailedLogins = request.app.state.failed_logins
    wait = failures.retry_after(address)
    if wait:
        raise ApiError(429, "too_many_requests", f"too many failed sign-ins from {address or 'this address'}; "
                       f"try again in {wait} s", headers={"Retry-After": str(wait)})
    if in_url:
        failures.failed(address)
        raise ApiError(401, "unauthorized", f"a key in the URL ({in_url[0]}=) is never accepted: URLs are "
                       "logged; send it as Authorization: Bearer KEY", in_url[0])
    svc = service(request)
    found = await authenticate(svc.store, key, admin_key=svc.admin_key)  # type: ignore[arg-type]
    if found is None:
        failures.failed(address)
        raise ApiError(401, "unauthorized", "unknown or revoked API key")
    return found


async def tenant(who: Annotated[Caller, Depends(caller)]) -> str:
    """The calling tenant; the admin key owns no knowledge bases."""
    if who.tenant is None:
        raise ApiError(403, "forbidden", "the admin key manages tenants and keys; use a tenant's key")
    return who.tenant


async def admin(who: Annotated[Caller, Depends(caller)]) -> Caller:
    if not who.admin:
        raise ApiError(403, "forbidden", "only the admin key may do this")
    return who


Tenant_ = Annotated[str, Depends(tenant)]


async def knowledge_base(request: Request, kb: str, who: Tenant_) -> KnowledgeBase:
    """The path's knowledge base if the caller's tenant owns it; otherwise 404."""
    return await get_kb(store_of(request), who, kb)


KB = Annotated[KnowledgeBase, Depends(knowledge_base)]

router = APIRouter(tags=["tenants and keys"], responses=COMMON)


def _tenant_out(t: Tenant) -> dict:
    return {"name": t.name, "created_at": t.created_at}


@router.post("/tenants", status_code=201, response_model=TenantOut, dependencies=[Depends(admin)],
             responses=errors(409))
async def post_tenant(body: TenantIn, request: Request) -> dict:
    return _tenant_out(await create_tenant(store_of(request), body.name))


@router.get("/tenants", response_model=Paged[TenantOut], dependencies=[Depends(admin)])
async def list_tenants(request: Request, page: Annotated[PageParams, Depends()]) -> dict:
    return await page_of_scan(system_store(store_of(request)).scan(Tenant), page, render=_tenant_out)


def _key_out(record: ApiKey, key: str | None = None) -> dict:
    return {"id": record.id, "tenant": record.tenant, "name": record.name,
            "created_at": record.created_at, "key": key}


@router.post("/tenants/{name}/keys", status_code=201, response_model=KeyOut, dependencies=[Depends(admin)],
             responses=errors(404))
async def post_key(name: str, body: KeyIn, request: Request) -> dict:
    record, key = await create_key(store_of(request), name, name=body.name)
    return _key_out(record, key)


@router.get("/tenants/{name}/keys", response_model=Paged[KeyOut], dependencies=[Depends(admin)],
            responses=errors(404))
async def list_keys(name: str, request: Request, page: Annotated[PageParams, Depends()]) -> dict:
    await get_tenant(store_of(request), name)
    scan = system_store(store_of(request)).scan(ApiKey, {"tenant": name})
    return await page_of_scan(scan, page, keep=lambda k: not k.revoked, render=_key_out)


@router.delete("/tenants/{name}/keys/{key_id}", status_code=204, dependencies=[Depends(admin)],
               responses=errors(404))
async def revoke_key(name: str, key_id: str, request: Request) -> None:
    system = system_store(store_of(request))
    found = await system.get(ApiKey, [key_id])
    if not found or found[0].tenant != name:  # type: ignore[attr-defined]
        raise ApiError(404, "not_found", f"no key {key_id!r} for tenant {name!r}", "key_id")
    record: ApiKey = found[0]  # type: ignore[assignment]
    record.revoked = True
    await system.upsert([record])


@router.get("/me", response_model=MeOut)
async def me(who: Annotated[Caller, Depends(caller)]) -> dict:
    """Who this key belongs to."""
    return {"tenant": who.tenant, "admin": who.admin, "key_id": who.key_id}
